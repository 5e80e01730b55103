"""A SymPy system as text, and back without running code from the text.

What :meth:`symplectic.Trajectory.save` writes for a system of
:func:`symplectic.symbolic.system` and what :func:`symplectic.load` rebuilds
it from.  The text is JSON::

    {"spec": ..., "parameters": [[symbol, value], ...], "name": str or null,
     "backend": "c" or "numpy"}

``spec`` is the system's specification (the dict that pickling rebuilds a
SymbolicSystem from: M, V, coordinates, velocities, parameter order,
constraints, the generalized forces, ...) with tuples, lists and dicts
tagged (``{"tuple": [...]}``, ``{"list": [...]}``, ``{"dict": [[key,
value], ...]}``) and every SymPy object as its ``sympy.srepr`` text
(``{"sympy": "Mul(Rational(1, 2), Symbol('k'))"}``); parameter values are
JSON numbers (Python's float repr: the exact double).

Reading it back never evaluates the text (``sympify`` and ``parse_expr``
would run it as Python).  The srepr strings are parsed with :mod:`ast` and
only these calls are made: SymPy's own classes and constants named in the
``sympy`` namespace (and ``ExprCondPair`` of ``Piecewise``), undefined
functions excepted; strings only as the names of ``Symbol`` and ``Dummy``
and the digits of ``Float``; other arguments only numbers, booleans, None,
lists, tuples and such calls.  The generated C carries names in its
comments, so every string (symbol names, the coordinate names, the title)
must be printable without ``*`` or ``/``; and every free symbol of M, V,
the constraints and the forces must be a coordinate, a velocity, the time
or a parameter with a value, so that no name of the file reaches the
generated code.  A text that breaks a rule raises :class:`UnsafeText`.
What remains possible is work: a crafted file can ask SymPy for large
expressions (load with ``rebuild=False`` a file you do not trust).
"""
import ast
import json
import re

import numpy as np
import sympy as _sy

#: Bump when the layout of the text changes.
TEXT_VERSION = 1

_FLOAT = re.compile(r"^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$|^[-+]?(inf|nan)$")


class UnsafeText(ValueError):
    """A system text that breaks a rule of the reader (see the module)."""


# ---------------------------------------------------------------- writing
def dumps(system):
    """The text of a SymbolicSystem (see the module docstring)."""
    doc = {"version": TEXT_VERSION, "spec": _enc(system._spec),
           "parameters": [[_enc(s), float(v)] for s, v in system.parameters.items()],
           "name": system.name, "backend": system.backend}
    return json.dumps(doc)


def _enc(o):
    if o is None or isinstance(o, (bool, str)):
        return o
    if isinstance(o, (int, np.integer)):
        return int(o)
    if isinstance(o, (float, np.floating)):
        return float(o)
    if isinstance(o, tuple):
        return {"tuple": [_enc(x) for x in o]}
    if isinstance(o, list):
        return {"list": [_enc(x) for x in o]}
    if isinstance(o, dict):
        return {"dict": [[_enc(k), _enc(v)] for k, v in o.items()]}
    if isinstance(o, (_sy.Basic, _sy.MatrixBase)):
        return {"sympy": _sy.srepr(o)}
    raise TypeError(f"cannot write {type(o).__name__} as text")


# ---------------------------------------------------------------- reading
def loads(text):
    """(spec, parameters {Symbol: value}, name) of a system text, checked
    (UnsafeText when it breaks a rule of the module docstring)."""
    try:
        doc = json.loads(text)
    except ValueError as exc:
        raise UnsafeText(f"the system text is not JSON: {exc}") from None
    if not isinstance(doc, dict) or doc.get("version") != TEXT_VERSION:
        raise UnsafeText(f"the system text is not of version {TEXT_VERSION}")
    spec = _dec(doc.get("spec"))
    params = {}
    for pair in doc.get("parameters") or []:
        sym, value = _dec(pair[0]), pair[1]
        if not isinstance(sym, _sy.Symbol) or not isinstance(value, (int, float)):
            raise UnsafeText("a parameter must be a Symbol with a number")
        params[sym] = float(value)
    name = doc.get("name")
    if name is not None:
        _check_text(name)
    _check_spec(spec)
    return spec, params, name


def _dec(o):
    if o is None or isinstance(o, (bool, int, float)):
        return o
    if isinstance(o, str):
        return _check_text(o)
    if isinstance(o, list):
        raise UnsafeText("an untagged list in the system text")
    if not isinstance(o, dict) or len(o) != 1:
        raise UnsafeText("an unknown object in the system text")
    (tag, value), = o.items()
    if tag == "tuple":
        return tuple(_dec(x) for x in value)
    if tag == "list":
        return [_dec(x) for x in value]
    if tag == "dict":
        return {_dec(k): _dec(v) for k, v in value}
    if tag == "sympy" and isinstance(value, str):
        return parse_srepr(value)
    raise UnsafeText(f"an unknown tag {tag!r} in the system text")


def _check_text(s):
    """A string that may stand in a C comment of the generated code."""
    if not isinstance(s, str) or not s.isprintable() or "*" in s or "/" in s:
        raise UnsafeText(f"the string {s!r} of the system text is not allowed (printable, "
                         f"without * or /)")
    return s


def _number_text(s):
    if not isinstance(s, str) or not _FLOAT.match(s):
        raise UnsafeText(f"Float of {s!r}: not a number")
    return s


#: The string-taking constructors and the check of their string.
_STRING_ARG = {"Symbol": _check_text, "Dummy": _check_text, "Float": _number_text}

_NAMES = None


def _names():
    """{name: SymPy class or constant} that a srepr text may call or name."""
    global _NAMES
    if _NAMES is None:
        from sympy.functions.elementary.piecewise import ExprCondPair
        table = {"ExprCondPair": ExprCondPair}
        for k in dir(_sy):
            obj = getattr(_sy, k)
            if isinstance(obj, type) and issubclass(obj, (_sy.Basic, _sy.MatrixBase)):
                table[k] = obj
            elif isinstance(obj, _sy.Basic) and not isinstance(obj, type):
                table[k] = obj
        for k in ("Function", "WildFunction", "Lambda"):     # would make new callables
            table.pop(k, None)
        _NAMES = table
    return _NAMES


def parse_srepr(text):
    """The SymPy object of a ``srepr`` text, built by the calls the module
    docstring allows (UnsafeText otherwise); no Python of the text runs."""
    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError as exc:
        raise UnsafeText(f"not a srepr text: {exc}") from None
    return _build(tree.body, None)


def _build(node, string_check):
    if isinstance(node, ast.Constant):
        v = node.value
        if v is None or isinstance(v, (bool, int, float)):
            return v
        if isinstance(v, str) and string_check is not None:
            return string_check(v)
        raise UnsafeText(f"the constant {v!r} is not allowed here")
    if (isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub)
            and isinstance(node.operand, ast.Constant)
            and type(node.operand.value) in (int, float)):
        return -node.operand.value
    if isinstance(node, (ast.List, ast.Tuple)):
        items = [_build(e, None) for e in node.elts]
        return items if isinstance(node, ast.List) else tuple(items)
    if isinstance(node, ast.Name):
        obj = _names().get(node.id)
        if obj is None or isinstance(obj, type):
            raise UnsafeText(f"the name {node.id!r} is not a SymPy constant")
        return obj
    if isinstance(node, ast.Call):
        cls = _names().get(node.func.id) if isinstance(node.func, ast.Name) else None
        if not isinstance(cls, type):
            raise UnsafeText(f"{ast.unparse(node.func)}(...) is not a call of a SymPy class")
        check = _STRING_ARG.get(node.func.id)
        args = [_build(a, check if i == 0 else None) for i, a in enumerate(node.args)]
        kwargs = {}
        for kw in node.keywords:
            value = _build(kw.value, None)
            if kw.arg is None or not (value is None or isinstance(value, (bool, int))):
                raise UnsafeText(f"{node.func.id}(...): keyword arguments must be numbers or "
                                 f"booleans")
            kwargs[kw.arg] = value
        return cls(*args, **kwargs)
    raise UnsafeText(f"{type(node).__name__} is not allowed in a srepr text")


def _check_spec(spec):
    """Every free symbol of the expressions has its place (see the module)."""
    if not isinstance(spec, dict):
        raise UnsafeText("the specification must be a dict")
    q = tuple(spec.get("q") or ())
    if not q or not all(isinstance(s, _sy.Symbol) for s in q):
        raise UnsafeText("the coordinates must be Symbols")
    known = set(q) | set(spec.get("param_order") or ())
    _free_within("the mass matrix and the potential", [spec.get("M"), spec.get("V")], known)
    if spec.get("constraints"):
        _free_within("the constraints", spec["constraints"],
                     set(q) | set(spec.get("cparam_order") or ()))
    fs = spec.get("forces")
    if fs is not None:
        fknown = (set(fs.get("q") or ()) | set(fs.get("qdot") or ()) | {fs.get("time")}
                  | set(fs.get("param_order") or ()))
        _free_within("the forces", fs.get("F") or (), fknown)


def _free_within(what, exprs, known):
    from sympy.core.function import AppliedUndef
    for e in exprs:
        if not isinstance(e, (_sy.Basic, _sy.MatrixBase)):
            raise UnsafeText(f"{what}: {type(e).__name__} is not a SymPy expression")
        if e.atoms(AppliedUndef):
            raise UnsafeText(f"{what}: undefined functions are not allowed")
        extra = e.free_symbols - known
        if extra:
            raise UnsafeText(f"{what}: the symbols {sorted(map(str, extra))} are neither "
                             f"coordinates, velocities, the time nor parameters")


def rebuild(text):
    """The SymbolicSystem of a system text, derived again (and compiled with
    ``compile="auto"``, from the on-disk cache when it holds the module: the
    same source, the same code; NumPy with a CompileWarning without a
    compiler) -- the way pickling rebuilds one."""
    from ._frontend import _rebuild_symbolic
    spec, params, name = loads(text)
    return _rebuild_symbolic(spec, params, dict(compile="auto", name=name, cache_dir=None))
