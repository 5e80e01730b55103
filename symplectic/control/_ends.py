"""The conditions at the ends of a control problem (``Problem(start=...,
end=...)``): on any components of q, qdot or p, NaN leaving one free."""
import numpy as np

_END_KEYS = ("q", "qdot", "p")


def conditions(name, d, n):
    """{"q"/"qdot"/"p": (indices, values)} of one end's conditions (NaN: free)."""
    if d is None:
        return {}
    if not isinstance(d, dict):
        raise TypeError(f"{name} must be a dict such as {{'q': [...], 'qdot': [...]}}, got "
                        f"{type(d).__name__}")
    bad = set(d) - set(_END_KEYS)
    if bad:
        raise ValueError(f"{name}: unknown keys {sorted(bad)}; conditions are on 'q', 'qdot' "
                         f"or 'p'")
    out = {}
    for key, v in d.items():
        a = np.array(v, dtype=float).reshape(-1) if v is not None else np.full(n, np.nan)
        if a.shape != (n,):
            raise ValueError(f"{name}[{key!r}] must have n = {n} values (NaN: free), got "
                             f"shape {np.shape(v)}")
        if np.isinf(a).any():
            raise ValueError(f"{name}[{key!r}] has an infinite value; NaN leaves a component "
                             f"free")
        idx = np.flatnonzero(~np.isnan(a))
        if idx.size:
            out[key] = (idx, a[idx])
    if "qdot" in out and "p" in out and np.intersect1d(out["qdot"][0], out["p"][0]).size:
        raise ValueError(f"{name}: component(s) "
                         f"{np.intersect1d(out['qdot'][0], out['p'][0]).tolist()} given in both "
                         f"'qdot' and 'p' (p = M(q) qdot): give each in one of them")
    return out



def given(key, conds, default):
    """The values of the end conditions ``conds`` on ``key`` ("q", "qdot" or
    "p") over ``default`` (n,)."""
    out = np.array(default, dtype=float)
    if key in conds:
        idx, v = conds[key]
        out[idx] = v
    return out


def full_start(system, start):
    """(q0, p0) when the start conditions fix every component, else None."""
    n = system.n
    if "q" not in start or len(start["q"][0]) != n:
        return None
    q0 = start["q"][1]
    for key in ("p", "qdot"):
        if key in start and len(start[key][0]) == n:
            v = start[key][1]
            return q0, (v if key == "p" else system.momentum(q0, v))
    return None
