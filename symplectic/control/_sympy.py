"""Costs and path constraints given as SymPy expressions: the expression and
its exact derivatives in each group of symbols, as NumPy functions (SymPy
lambdify), in the callables' forms that running, terminal and path take."""
import numpy as np


def is_expression(x):
    """True for a SymPy expression, matrix or a list of expressions (SymPy
    imported only when it is already loaded: a plain callable never needs
    it)."""
    import sys
    sy = sys.modules.get("sympy")
    if sy is None:
        return False
    if isinstance(x, (list, tuple)):
        return bool(x) and all(isinstance(e, sy.Basic) for e in x)
    return isinstance(x, (sy.Basic, sy.MatrixBase))


def at_points(f, t, Q, V, U):
    """f(t, q, qdot, u) at each of K points (t (K,), Q, V, U (K, .)), a list."""
    return [f(float(t[j]), Q[j], V[j], U[j]) for j in range(len(t))]


def functions(expr, symbols, groups, params, what):
    """(value, derivatives) of ``expr`` (a scalar or a list/matrix of r
    expressions) in the argument groups ``groups`` (names: "t", "q", ...;
    ``symbols`` maps each name to a Symbol or a list of them, "t" may be
    missing), with ``params`` ({Symbol or name: value}) substituted:
    value(*args) -> float or (r,), derivatives(*args) -> one array per
    group but "t", (len(group),) or (r, len(group))."""
    import sympy as sy
    if not isinstance(symbols, dict):
        raise TypeError(f"{what}: symbols must be a dict {{{', '.join(repr(g) for g in groups)}"
                        f": SymPy symbols}} naming the expression's arguments")
    missing = [g for g in groups if g != "t" and g not in symbols]
    unknown = set(symbols) - set(groups)
    if missing or unknown:
        raise ValueError(f"{what}: symbols needs the keys {[g for g in groups if g != 't']} "
                         f"(and may have 't'); missing {missing}, unknown {sorted(unknown)}")
    args = []
    for g in groups:
        s = symbols.get(g, sy.Dummy("t") if g == "t" else None)
        args.append(s if g == "t" else list(s if isinstance(s, (list, tuple, sy.MatrixBase))
                                                else [s]))
    vector = not isinstance(expr, sy.Basic) or isinstance(expr, sy.MatrixBase)
    exprs = list(expr) if vector else [expr]
    by_name = {}
    for k, v in (params or {}).items():
        by_name[k if isinstance(k, sy.Symbol) else sy.Symbol(k)] = float(v)
    names = {s.name: s for e in exprs for s in e.free_symbols}
    subs = {names.get(k.name, k): v for k, v in by_name.items()}
    exprs = [sy.sympify(e).xreplace(subs) for e in exprs]
    known = {args[0]} if "t" in groups else set()
    for a, g in zip(args, groups):
        if g != "t":
            known |= set(a)
    free = set().union(*(e.free_symbols for e in exprs)) - known
    if free:
        raise ValueError(f"{what}: the expression has symbols without a value: "
                         f"{sorted(s.name for s in free)} (give them in params=)")
    f = sy.lambdify(args, exprs, "numpy")
    ders = [[[sy.diff(e, s) for s in a] for e in exprs] for a, g in zip(args, groups) if g != "t"]
    d = sy.lambdify(args, ders, "numpy")

    def value(*xs):
        v = np.array(f(*xs), dtype=float)
        return v if vector else float(v[0])

    def derivatives(*xs):
        out = [np.array(x, dtype=float) for x in d(*xs)]
        return tuple(x if vector else x[0] for x in out)

    flat = [s for a, g in zip(args, groups) for s in ([a] if g == "t" else a)]
    second = []

    def second_derivatives(*xs):
        """(gradient (r, k), Hessian (r, k, k)) of the r expressions in all
        the arguments, flattened in the groups' order (t first, when it is
        one): for the control problem's exact Hessian (derived on first use)."""
        if not second:
            second.append(sy.lambdify(args, [[sy.diff(e, x) for x in flat]
                                             + [sy.diff(e, x, y) for x in flat for y in flat]
                                             for e in exprs], "numpy"))
        k = len(flat)
        out = np.array(second[0](*xs), dtype=float).reshape(len(exprs), k + k * k)
        return out[:, :k], out[:, k:].reshape(-1, k, k)
    derivatives.second = second_derivatives
    if "t" in groups:
        ft = sy.lambdify(args, [sy.diff(e, args[groups.index("t")]) for e in exprs], "numpy")

        def dt(*xs):
            """d/dt of the expressions, exact: a float or (r,)."""
            v = np.array(ft(*xs), dtype=float)
            return v if vector else float(v[0])
        derivatives.dt = dt
    return value, derivatives
