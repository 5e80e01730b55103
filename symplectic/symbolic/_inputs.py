"""The user's symbols and parameter values, normalised.

Coordinates and velocities become plain, distinct SymPy Symbols (functions of
time q(t) with qdot = q'(t) are replaced by Symbols named after them); every
other free symbol must get a finite real value from ``params``.
"""
import math

import sympy as _sy


def as_list(seq, what):
    """A list of SymPy expressions from a sequence, a Matrix or a single expression."""
    if isinstance(seq, _sy.MatrixBase):
        return list(seq)
    if isinstance(seq, _sy.Basic):
        return [seq]
    try:
        return [_sy.sympify(s) for s in seq]
    except TypeError:
        raise TypeError(f"{what} must be a sequence of SymPy symbols") from None


def coordinates(q, qdot, has_velocities):
    """Plain Symbols for q (and qdot); SymPy functions of time q(t) with
    qdot = q'(t) are accepted and replaced.  Returns (qs, qds, replacements)."""
    q = as_list(q, "q")
    if not q:
        raise ValueError("q must hold at least one coordinate")
    applied = [isinstance(x, _sy.core.function.AppliedUndef) for x in q]
    if any(applied) and not all(applied):
        raise TypeError("q must be all Symbols or all functions of time, not a mixture")
    if all(applied):
        qs, qds, repl = _functions_of_time(q, qdot, has_velocities)
    else:
        qs, qds, repl = _symbols(q, qdot, has_velocities), [], {}
        if has_velocities:
            qds = _velocity_symbols(qdot)
    if has_velocities and len(qds) != len(qs):
        raise ValueError(f"q and qdot must have the same length, got {len(qs)} and {len(qds)}")
    allsyms = list(qs) + list(qds)
    if len(set(allsyms)) != len(allsyms):
        raise ValueError("the coordinates and velocities must be distinct symbols")
    return qs, qds, repl


def _functions_of_time(q, qdot, has_velocities):
    """q_i(t) -> Symbol q_i and (with velocities) q_i'(t) -> Symbol q_i_dot."""
    ts = {x.args for x in q}
    if len(ts) != 1 or len(next(iter(ts))) != 1:
        raise ValueError("functions of time in q must all depend on the same single variable")
    t = next(iter(ts))[0]
    if qdot is None and has_velocities:
        qdot = [x.diff(t) for x in q]
    qs = [_sy.Symbol(f"{x.func.__name__}") for x in q]
    repl = {}
    if has_velocities:
        qdot = as_list(qdot, "qdot")
        qds = [_sy.Symbol(f"{x.func.__name__}_dot") for x in q]
        for d, s in zip(qdot, qds):
            repl[d] = s
    else:
        qds = []
    for x, s in zip(q, qs):
        repl[x] = s
    return qs, qds, repl


def _symbols(q, qdot, has_velocities):
    for x in q:
        if not isinstance(x, _sy.Symbol):
            raise TypeError(f"coordinates must be SymPy Symbols (or functions of time), got {x!r}")
    if has_velocities and qdot is None:
        raise ValueError("qdot (the velocity symbols) is required with a Lagrangian")
    return q


def _velocity_symbols(qdot):
    qds = as_list(qdot, "qdot")
    for x in qds:
        if not isinstance(x, _sy.Symbol):
            raise TypeError(f"velocities must be SymPy Symbols, got {x!r}")
    return qds


def replace(expr, repl):
    """Replace derivatives before the functions they differentiate (functions
    of time q(t) -> plain symbols)."""
    if not repl:
        return expr
    taken = {s.name for s in expr.free_symbols} & {s.name for s in repl.values()}
    if taken:
        raise ValueError(f"the names {sorted(taken)} stand for the coordinates/velocities q(t), "
                         f"q'(t) and are already used by other symbols: rename those")
    ders = {k: v for k, v in repl.items() if isinstance(k, _sy.Derivative)}
    funcs = {k: v for k, v in repl.items() if not isinstance(k, _sy.Derivative)}
    out = expr.xreplace(ders).xreplace(funcs) if ders else expr.xreplace(funcs)
    t = next(iter(funcs)).args[0]
    if t in out.free_symbols or out.atoms(_sy.Derivative):
        raise ValueError(f"after replacing q(t) and q'(t), the expression still depends on {t} "
                         f"(explicitly time-dependent or higher derivatives): only autonomous "
                         f"Lagrangians L(q, qdot) are supported")
    return out


def finite_value(s, v):
    """float(v) for the parameter ``s``; TypeError/ValueError naming it otherwise."""
    try:
        val = float(v)
    except (TypeError, ValueError):
        raise TypeError(f"parameter {s} must have a real numeric value, got {v!r}") from None
    if not math.isfinite(val):
        raise ValueError(f"parameter {s} must be finite, got {v!r}")
    return val


def parameters(params, exprs, known):
    """{Symbol: float} for the parameters that appear in ``exprs``; every other
    free symbol must be a coordinate or velocity."""
    free = set()
    for e in exprs:
        free |= e.free_symbols
    free -= set(known)
    by_name = {}
    for s in free:
        by_name.setdefault(s.name, []).append(s)
    values = {}
    for k, v in (params or {}).items():
        s = _parameter_symbol(k, by_name, free)
        if s is not None:
            values[s] = finite_value(s, v)
    missing = sorted((s for s in free if s not in values), key=lambda s: s.name)
    if missing:
        names = ", ".join(s.name for s in missing)
        raise ValueError(f"the expressions contain symbols that are neither coordinates, velocities "
                         f"nor parameters with values: {names} (give their values in params=)")
    order = sorted(values, key=lambda s: (s.name, _sy.srepr(s)))
    return {s: values[s] for s in order}


def _parameter_symbol(k, by_name, free):
    """The free symbol a ``params`` key names, or None when it names none."""
    if isinstance(k, str):
        syms = by_name.get(k, [])
        if len(syms) > 1:
            raise ValueError(f"parameter name {k!r} is ambiguous (symbols with different "
                             f"assumptions); pass the Symbol itself")
        return syms[0] if syms else None
    if isinstance(k, _sy.Symbol):
        return k if k in free else None
    raise TypeError(f"parameter keys must be SymPy Symbols or their names, got {k!r}")
