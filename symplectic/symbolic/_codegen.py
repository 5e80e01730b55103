"""Code from the derived expressions: C for the compiled path, NumPy for the other.

Both read a model (see ``_model.Model``): its size ``n``, its internal
symbols ``qi`` (coordinates), ``gi`` (the vector g of A(q, g) and H(q, g))
and ``pi`` (parameters), and ``hoisted()``: the outputs M, A, H, V, dV, d2V
(and dM, d2M for NumPy) with every parameter-only subexpression replaced by
a constant c_j, plus the constants' definitions.

* :func:`c_source`: the flat eval callback ``sym_flat_eval_fn`` of
  symplectic.h as C99 source, common subexpressions shared, each temporary
  computed only under the ``need`` bits of the outputs that use it; the
  source carries its own SHA-256 as module id.  :func:`load_library`
  compiles it through the on-disk cache and checks that id.
* :func:`numpy_function`: one vectorised function for ``System.vectorized``.
"""
import ctypes
import hashlib
import threading

import numpy as np
import sympy as _sy
from sympy.printing.c import C99CodePrinter
from sympy.printing.numpy import NumPyPrinter
from sympy.printing.pycode import PythonCodePrinter

from . import _ccache

#: Version of the code generator; part of every generated source (and so of
#: the cache key).
CODEGEN_VERSION = 1


# ---------------------------------------------------------------------- printers
class _DoubleFloats:
    """Floats of at most double precision printed as exact double literals."""

    def _print_Float(self, expr):
        if expr._prec <= 53:
            return repr(float(expr))
        return super()._print_Float(expr)


class _CPrinter(_DoubleFloats, C99CodePrinter):
    """C99 with exact double literals (also for pi, e, sqrt(2), ...: the M_PI
    family of macros is not part of strict C99) and products for small
    integer powers."""

    def __init__(self, settings=None):
        super().__init__(dict(settings or {}, math_macros={}))

    def _print_NumberSymbol(self, expr):
        return repr(float(expr))

    _print_Pi = _print_Exp1 = _print_GoldenRatio = _print_EulerGamma = _print_Catalan = \
        _print_NumberSymbol

    def _print_Pow(self, expr):
        b, e = expr.args
        if e.is_Integer and 2 <= abs(int(e)) <= 4:
            base = self.parenthesize(b, 100)          # always parenthesise non-atoms
            prod = "*".join([base] * abs(int(e)))
            return f"({prod})" if int(e) > 0 else f"(1.0/({prod}))"
        return super()._print_Pow(expr)


class MathPrinter(_DoubleFloats, PythonCodePrinter):
    """Python ``math`` code (the constants c_j from the parameter values)."""


class _NumPyPrinter(_DoubleFloats, NumPyPrinter):
    pass


# ---------------------------------------------------------------------- C
_BITS = {"M": 1, "A": 2, "H": 4, "V": 8, "dV": 16, "d2V": 32}

_C_EXPORTS = """\
#include <math.h>

#if defined(_WIN32)
#define SYMPLECTIC_EXPORT __declspec(dllexport)
#else
#define SYMPLECTIC_EXPORT __attribute__((visibility("default")))
#endif

SYMPLECTIC_EXPORT const char *symplectic_module_id(void) { return "@ID@"; }"""

_C_SIGNATURE = """\
SYMPLECTIC_EXPORT int symplectic_eval(const double *q, const double *g, unsigned need,
                                      double *M, double *A, double *H, double *V,
                                      double *dV, double *d2V, void *user_data)
{
    const double *data = (const double *)user_data;
    (void)data; (void)g; (void)M; (void)A; (void)H; (void)V; (void)dV; (void)d2V;"""

_ID_MARK = 'symplectic_module_id(void) { return "'


def _pair_targets(name, a, b, n):
    """C targets of the symmetric pair (a, b) of an n x n output: both, or one on the diagonal."""
    return [f"{name}[{a * n + b}]"] + ([f"{name}[{b * n + a}]"] if a != b else [])


def _c_outputs(out, n):
    """[(bit, C target(s), expression)]; symmetric matrices once per pair."""
    items = []
    for i in range(n):
        for j in range(i, n):
            items.append(("M", _pair_targets("M", i, j, n), out["M"][i][j]))
    for i in range(n):
        for c in range(n):
            items.append(("A", [f"A[{i * n + c}]"], out["A"][i][c]))
    for (a, b), e in sorted(out["H"].items()):
        items.append(("H", _pair_targets("H", a, b, n), e))
    items.append(("V", ["V[0]"], out["V"]))
    for k in range(n):
        items.append(("dV", [f"dV[{k}]"], out["dV"][k]))
    for (a, b), e in sorted(out["d2V"].items()):
        items.append(("d2V", _pair_targets("d2V", a, b, n), e))
    return items


def _temporary_masks(items, temps, reduced):
    """The need bits of every temporary (the outputs that use it, directly or
    through later temporaries), and an order that computes each after its
    dependencies."""
    tnames = {s: k for k, (s, _) in enumerate(temps)}
    masks = [0] * len(temps)
    for (bit, _, _), e in zip(items, reduced):
        for s in e.free_symbols:
            if s in tnames:
                masks[tnames[s]] |= _BITS[bit]
    for k in range(len(temps) - 1, -1, -1):          # walked backwards
        for s in temps[k][1].free_symbols:
            if s in tnames:
                masks[tnames[s]] |= masks[k]
    # a dependency's mask contains its user's mask, so sorting by decreasing
    # popcount (stable) keeps every temporary after its dependencies
    order = sorted(range(len(temps)), key=lambda k: (-bin(masks[k]).count("1"), masks[k], k))
    return masks, order


def _c_inputs(model, consts, used):
    """Locals for the coordinates, parameters, constants and g that the code uses."""
    n, np_ = model.n, len(model.pi)
    lines = [f"    const double q_{i} = q[{i}];" for i in range(n) if model.qi[i] in used]
    lines += [f"    const double p_{k} = data[{k}];" for k in range(np_) if model.pi[k] in used]
    lines += [f"    const double c_{j} = data[{np_ + j}];"
              for j, (c, _) in enumerate(consts) if c in used]
    # g is NULL unless A or H is asked for
    lines += [f"    const double g_{i} = (need & 6u) ? g[{i}] : 0.0;"
              for i in range(n) if model.gi[i] in used]
    return lines


def _c_body(items, temps, reduced, pr):
    """The temporaries under their need masks, then the outputs bit by bit."""
    lines = []
    w = lines.append
    if temps:
        # initialised so that no path reads an indeterminate value (the masks
        # guarantee it; this keeps compilers' flow analysis quiet too)
        w("    double " + ", ".join(f"{s} = 0.0" for s, _ in temps) + ";")
    masks, order = _temporary_masks(items, temps, reduced)
    cur = None
    for k in order:
        if masks[k] != cur:
            if cur is not None:
                w("    }")
            cur = masks[k]
            w(f"    if (need & {cur}u) {{")
        s, e = temps[k]
        w(f"        {s} = {pr.doprint(e)};")
    if cur is not None:
        w("    }")
    blocks = {}
    for (bit, tg, _), e in zip(items, reduced):
        blocks.setdefault(bit, []).append((tg, e))
    for bit in ("M", "A", "H", "V", "dV", "d2V"):
        w(f"    if (need & {_BITS[bit]}u) {{")
        for tg, e in blocks[bit]:
            w(f"        {' = '.join(tg)} = {pr.doprint(e)};")
        w("    }")
    return lines


def c_source(model):
    """The flat eval callback (sym_flat_eval_fn of symplectic.h) as C source."""
    n = model.n
    out, consts = model.hoisted()
    items = _c_outputs(out, n)
    temps, reduced = _sy.cse([e for _, _, e in items], symbols=_sy.numbered_symbols("t_"),
                             order="canonical")
    np_ = len(model.pi)
    params = ", ".join(s.name for s in model.param_symbols) or "none"
    lines = [f"/* Generated by symplectic.symbolic (code generator version {CODEGEN_VERSION}); "
             f"do not edit.",
             f" * {model.title}",
             f" * n = {n}; coordinates: {', '.join(model.names)}",
             f" * run-time data (user_data): {np_} parameters ({params}), then {len(consts)} "
             f"constants",
             " * Contract: sym_flat_eval_fn of symplectic.h. */",
             _C_EXPORTS,
             f"SYMPLECTIC_EXPORT int symplectic_module_n(void) {{ return {n}; }}",
             f"SYMPLECTIC_EXPORT int symplectic_module_ndata(void) {{ return {np_ + len(consts)}; }}",
             "",
             _C_SIGNATURE]
    used = set()
    for e in list(reduced) + [e for _, e in temps]:
        used |= e.free_symbols
    lines += _c_inputs(model, consts, used)
    lines += _c_body(items, temps, reduced, _CPrinter())
    lines += ["    return 0;", "}"]
    src = "\n".join(lines) + "\n"
    digest = hashlib.sha256(src.encode("utf-8")).hexdigest()
    return src.replace("@ID@", digest)


def load_library(source, cache_dir, symbol="symplectic_module_id", mark=None):
    """(ctypes library, path) of the module compiled from ``source`` (from the
    on-disk cache when it holds it), checked to carry the source's module id
    (the 64 hex digits after ``mark`` in the source, returned by the
    function ``symbol``).  Raises CompilerError."""
    expected = source.split(_ID_MARK if mark is None else mark, 1)[1][:64]

    def check(lib):
        f = getattr(lib, symbol)
        f.restype = ctypes.c_char_p
        f.argtypes = []
        got = f().decode("ascii")
        if got != expected:
            raise ValueError(f"module id {got} != {expected}")

    return _ccache.load(source, cache_dir, check)


class ModelCache:
    """The models built from symbolic specifications, one per key and shared
    (their generated code is compiled once): at most ``limit`` kept, the oldest
    dropped first; thread-safe.  The models of L, of forces and of constraints
    each keep one."""

    def __init__(self, limit=64):
        self._models, self._lock, self._limit = {}, threading.Lock(), limit

    def get(self, key, make):
        """The model under ``key``, built by ``make()`` when there is none."""
        with self._lock:
            m = self._models.get(key)
            if m is None:
                if len(self._models) >= self._limit:
                    self._models.pop(next(iter(self._models)))
                m = self._models[key] = make()
            return m

    def clear(self):
        with self._lock:
            self._models.clear()


def library_once(owner, cache_dir, symbol="symplectic_module_id", mark=None):
    """:func:`load_library` of ``owner.source()``, once per (cache directory,
    compiler): kept in ``owner._libs`` under ``owner._lock`` (the generated
    models of L, of forces and of constraints share this)."""
    src = owner.source()
    cmd = tuple(_ccache.compiler_command())          # CompilerError when there is none
    with owner._lock:
        key = (str(_ccache.cache_dir(cache_dir)), cmd)
        hit = owner._libs.get(key)
        if hit is None:
            hit = owner._libs[key] = load_library(src, cache_dir, symbol, mark)
        return hit


# ---------------------------------------------------------------------- NumPy
def _numpy_layout(out, n, offs):
    """Nonzero outputs as (expressions, src, dst): flat slot dst[m] receives
    expression src[m] (every symmetric copy of an entry from one expression)."""
    exprs, src, dst = [], [], []

    def add(e, key, flats):
        if e == 0:
            return
        exprs.append(e)
        for f in flats:
            src.append(len(exprs) - 1)
            dst.append(offs[key] + f)

    for i in range(n):
        for j in range(i, n):
            add(out["M"][i][j], "mass", {i * n + j, j * n + i})
    for k in range(n):
        for i in range(n):
            for j in range(i, n):
                add(out["dM"][k][i][j], "mass_grad", {(k * n + i) * n + j, (k * n + j) * n + i})
    for (k, l), T in sorted(out["d2M"].items()):
        for i in range(n):
            for j in range(i, n):
                flats = {((a * n + b) * n + c) * n + d for a, b in ((k, l), (l, k))
                         for c, d in ((i, j), (j, i))}
                add(T[i][j], "mass_hess", flats)
    add(out["V"], "potential", {0})
    for k in range(n):
        add(out["dV"][k], "potential_grad", {k})
    for (k, l), e in sorted(out["d2V"].items()):
        add(e, "potential_hess", {k * n + l, l * n + k})
    return exprs, np.array(src, dtype=np.intp), np.array(dst, dtype=np.intp)


def numpy_function(model):
    """``make(data)`` -> a vectorised func(Q) -> dict for System.vectorized."""
    n = model.n
    out, consts = model.hoisted()
    shapes = {"mass": (n, n), "mass_grad": (n,) * 3, "mass_hess": (n,) * 4, "potential": (),
              "potential_grad": (n,), "potential_hess": (n, n)}
    sizes = {key: n ** len(shape) for key, shape in shapes.items()}
    offs, o = {}, 0
    for key in sizes:
        offs[key] = o
        o += sizes[key]
    total = o
    exprs, src, dst = _numpy_layout(out, n, offs)
    args = list(model.qi) + list(model.pi) + [s for s, _ in consts]
    f = _sy.lambdify(args, exprs, modules="numpy", cse=True, printer=_NumPyPrinter) if exprs else None
    nexpr = len(exprs)

    def make(data):
        data = [float(x) for x in data]

        def func(Q):
            Q = np.asarray(Q, dtype=float)
            k = Q.shape[0]
            flat = np.zeros((k, total))
            if f is not None:
                vals = f(*[Q[:, i] for i in range(n)], *data)
                buf = np.empty((nexpr, k))
                for i, v in enumerate(vals):
                    buf[i] = v
                flat[:, dst] = buf[src].T
            return {key: flat[:, offs[key]:offs[key] + sizes[key]].reshape((k,) + shapes[key])
                    for key in sizes}

        return func

    return make
