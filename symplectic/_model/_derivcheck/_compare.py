"""How the derivative check compares a supplied derivative with finite
differences at one point -- the machinery behind symplectic._model._derivcheck, whose
docstring gives the method and the tolerances.

- :class:`Evaluator`: M, A(q, g), H(q, g), V, grad V, hess V at a batch of
  points, through the System's own evaluation (what the core uses), and the
  full tensors behind A and H;
- the difference plan (directions, steps), the stencil, the Richardson values
  with their error estimates and the comparison of two arrays;
- :func:`check_point`: every supplied derivative compared at q;
  :func:`diagnose`: the comparison to report (full tensors where they can be
  rebuilt).
"""
import functools

import numpy as np

from ... import _engine

_M, _A, _H, _V, _DV, _D2V = (_engine.NEED_M, _engine.NEED_A, _engine.NEED_H, _engine.NEED_V,
                             _engine.NEED_DV, _engine.NEED_D2V)

EPS = np.finfo(float).eps
STEP = 1e-4                    # difference steps h_c = STEP sqrt(max(1, |q_c|)) and h_c / 2
SAFETY = 10.0                  # tolerance floor = SAFETY x the finite-difference error estimate
ULPS = 4.0                     # relative accuracy of a user callable, in units of eps
FD_ACC = np.cbrt(EPS) ** 2     # relative accuracy of the package's own central differences
NFULL = 16                     # up to this n, every partial derivative is compared
NDIR = 4                       # beyond it, this many pseudo-random directions
MAX_FULL = 2 ** 20             # largest mass Hessian (n^4 entries) rebuilt for a message
_PHI = (np.sqrt(5.0) - 1.0) / 2.0

QUANTITIES = ("mass_grad", "potential_grad", "mass_hess", "potential_hess")


# ---------------------------------------------------------------- evaluation as the core sees it
class Evaluator:
    """M, A(q, g), H(q, g), V, grad V, hess V at a batch of points through the
    System's own evaluation (so: exactly what the core uses), and the full
    tensors behind A and H.  A vectorized system is called on the whole batch
    at once and its tensors are contracted here with the core's formulas
    (A[i, c] = sum_j T[c, i, j] g_j, H = 1/2 sum_ij T2[:, :, i, j] g_i g_j);
    anything malformed falls back to the core's evaluation, which raises its
    own message."""

    _KEYS = (("M", 0, _M, "mass", 2), ("A", 1, _A, "mass_grad", 3), ("H", 2, _H, "mass_hess", 4),
             ("V", 3, _V, "potential", 0), ("dV", 4, _DV, "potential_grad", 1),
             ("d2V", 5, _D2V, "potential_hess", 2))

    def __init__(self, system):
        self.system = system
        self.n = system.n
        c = system._callables or {}
        self.vec = c.get("vectorized")
        self.raw = self.vec is not None

    # -- vectorized systems: one call per batch
    def vectorized_hessians(self, q):
        d = self.vec(np.array(q, dtype=float)[None, :])
        if not isinstance(d, dict):
            return set()
        return {k for k in ("mass_hess", "potential_hess") if d.get(k) is not None}

    def _raw(self, Q, keys):
        try:
            d = self.vec(np.array(Q, dtype=float))
            if not isinstance(d, dict):
                return None
            out = {}
            for key, nd in keys:
                a = np.asarray(d[key], dtype=float)
                if a.shape != (len(Q),) + (self.n,) * nd or not np.all(np.isfinite(a)):
                    return None
                out[key] = a
            return out
        except (KeyError, TypeError, ValueError):
            return None

    # -- values
    def values(self, Q, g, need):
        if self.raw:
            keys = [(raw, nd) for _, _, bit, raw, nd in self._KEYS if need & bit]
            d = self._raw(Q, keys)
            if d is not None:
                out = {}
                for name, _, bit, raw, _ in self._KEYS:
                    if need & bit:
                        out[name] = d[raw]
                if need & _A:
                    out["A"] = np.einsum("pcij,j->pic", d["mass_grad"], g)
                if need & _H:
                    out["H"] = 0.5 * np.einsum("pklij,i,j->pkl", d["mass_hess"], g, g)
                return out
        gg = g if need & (_A | _H) else None
        rows = [self.system._eval(q, gg, need) for q in Q]
        out = {}
        for name, idx, bit, _, _ in self._KEYS:
            if need & bit:
                out[name] = np.array([r[idx] for r in rows], dtype=float)
        return out

    def contract_A(self, q, G):
        """(s, n, n): A(q, G_s)[i, k] = sum_j T[k, i, j] G_sj, as the core forms it."""
        if self.raw:
            d = self._raw(np.asarray(q, float)[None, :], [("mass_grad", 3)])
            if d is not None:
                return np.einsum("kij,sj->sik", d["mass_grad"][0], G)
        return np.array([self.system._eval(q, gs, _A)[1] for gs in G], dtype=float)

    def grad_tensor(self, Q):
        """(k, n, n, n): T[p, c, i, j] with A(q_p, g)[i, c] = sum_j T[p, c, i, j] g_j."""
        if self.raw:
            d = self._raw(Q, [("mass_grad", 3)])
            if d is not None:
                return d["mass_grad"]
        E = np.eye(self.n)
        return np.array([self.contract_A(q, E).transpose(2, 1, 0) for q in Q])   # [j, i, c] -> [c, i, j]

    def hess_tensor(self, q):
        """(n, n, n, n): S[k, l, i, j], the part of the mass Hessian symmetric in
        (i, j) -- all that H(q, g) = 1/2 sum_ij S[k, l, i, j] g_i g_j uses --
        from H(q, e_i) and H(q, e_i + e_j) (polarisation)."""
        n = self.n
        if self.raw:
            d = self._raw(np.asarray(q, float)[None, :], [("mass_hess", 4)])
            if d is not None:
                T2 = d["mass_hess"][0]
                return 0.5 * (T2 + T2.transpose(0, 1, 3, 2))
        E = np.eye(n)
        Hd = [self.system._eval(q, E[i], _H)[2] for i in range(n)]
        S = np.empty((n, n, n, n))
        for i in range(n):
            S[:, :, i, i] = 2.0 * Hd[i]
            for j in range(i + 1, n):
                S[:, :, i, j] = S[:, :, j, i] = self.system._eval(q, E[i] + E[j], _H)[2] - Hd[i] - Hd[j]
        return S


# ---------------------------------------------------------------- finite differences
@functools.lru_cache(maxsize=64)
def generic(n, stream):
    """n fixed, generic numbers of magnitude in [0.5, 1] with mixed signs:
    a golden-ratio (Weyl) sequence, different for each stream.  Deterministic
    (the same check at the same q gives the same answer) and without the
    cost of a random generator; components are never small, so no direction
    or velocity is degenerate."""
    k = np.arange(1, n + 1, dtype=float)
    u = (k * _PHI + stream * np.sqrt(2.0)) % 1.0                 # equidistributed in [0, 1)
    v = (k * _PHI ** 2 + stream * np.sqrt(3.0)) % 1.0
    out = np.where(v < 0.5, -1.0, 1.0) * (0.5 + 0.5 * u)
    out.flags.writeable = False
    return out


def default_g(n):
    """The vector g that contracts A(q, g) and H(q, g) when none is given."""
    return generic(n, 0).copy()


@functools.lru_cache(maxsize=64)
def _eye(n):
    e = np.eye(n)
    e.flags.writeable = False
    return e


def _plan(q, full=False):
    """Directions D (r, n) of the differences, contraction vectors G (s, n)
    for A(q, G_s), steps h (r,) and argument scales L (r,).

    n <= NFULL (or full=True): D = G = identity -- every partial derivative,
    every entry of every tensor.  Larger n: NDIR fixed pseudo-random unit
    vectors each, so that the check costs a fixed number of evaluations
    (about 4 NDIR + NDIR + 1 per point) however large n is; a wrong layout
    still shows in a random projection (it is missed only for a measure-zero
    set of directions), and the full tensors are rebuilt for the message."""
    n = len(q)
    if full or n <= NFULL:
        h = STEP * np.sqrt(np.maximum(1.0, np.abs(q)))
        h = (q + h) - q                  # q_c +- h_c exact (h_c/2 too, to within the ulp of q_c)
        return _eye(n), _eye(n), h, np.maximum(1.0, np.abs(q)), True
    D = np.array([generic(n, 10 + r) for r in range(NDIR)])
    G = np.array([generic(n, 20 + r) for r in range(NDIR)])
    D /= np.linalg.norm(D, axis=1, keepdims=True)
    G /= np.linalg.norm(G, axis=1, keepdims=True)
    scale = max(1.0, float(np.max(np.abs(q))))
    return D, G, np.full(NDIR, STEP * np.sqrt(scale)), np.full(NDIR, scale), False


_OFFSETS = np.array([1.0, -1.0, 0.5, -0.5])


def _stencil(q, D, h):
    """4r points: q + h_r d_r, q - h_r d_r, q + h_r/2 d_r, q - h_r/2 d_r for each direction."""
    steps = (_OFFSETS[None, :, None] * h[:, None, None]) * D[:, None, :]      # (r, 4, n)
    return (q + steps).reshape(-1, len(q))


def _differences(blocks, L, h):
    """Richardson values and error-estimate ingredients of the directional
    derivatives of several functions f from their values on the stencil,
    each block (4r, ...), all in one pass: for each block, F[r, ...] =
    df/dd_r = (4 D(h/2) - D(h)) / 3, the truncation estimate
    max |D(h) - D(h/2)|, and the magnitude m = max |f| + max |L f'| +
    max |f''| (L = max(1, |q_c|)) that :func:`_estimate` turns into a
    rounding estimate."""
    r = len(h)
    flat = [np.asarray(b, dtype=float).reshape(4 * r, -1) for b in blocks]
    widths = [f.shape[1] for f in flat]
    v = np.concatenate(flat, axis=1).reshape(r, 4, -1)
    hb = h[:, None]
    D1 = (v[:, 0] - v[:, 1]) / (2.0 * hb)
    D2 = (v[:, 2] - v[:, 3]) / hb
    F = (4.0 * D2 - D1) / 3.0
    f2 = (v[:, 0] + v[:, 1] - v[:, 2] - v[:, 3]) * (4.0 / 3.0) / (hb * hb)     # f'' + O(h^2)
    cols = np.stack([np.abs(v).max(axis=(0, 1)) + np.abs(L[:, None] * F).max(axis=0)
                     + np.abs(f2).max(axis=0), np.abs(D1 - D2).max(axis=0)])
    starts = np.cumsum([0] + widths[:-1])
    seg = np.maximum.reduceat(cols, starts, axis=1)
    return [(F[:, a:a + w].reshape((r,) + np.shape(b)[1:]), float(seg[1, k]), float(seg[0, k]))
            for k, (b, a, w) in enumerate(zip(blocks, starts, widths))]


def _estimate(trunc, mag, h, u, size=0.0):
    """The finite-difference error estimate of F (module docstring):
    max |D(h) - D(h/2)| + 3 u m / min h, where u is f's relative accuracy and
    m the size of the terms f is computed from -- the larger of ``size`` and
    the magnitude max |f| + max |L f'| + max |f''|.  Rounding is relative to
    those terms, not to f itself: k (1 - cos q) near q = 0 is tiny but rounds
    like k; and the argument q_c is itself rounded to a relative eps
    (sin(q) at q = 1000 pi), hence L f'."""
    return trunc + 3.0 * u * max(size, mag) / float(h.min())


def amax(a):
    return float(np.abs(a).max()) if np.size(a) else 0.0


def _compare(quantity, U, F, fd_err, rtol, **extra):
    U = np.asarray(U, dtype=float)
    F = np.asarray(F, dtype=float)
    if not U.size:
        return dict(quantity=quantity, U=U, F=F, fd_err=fd_err, scale=0.0, tol=0.0, index=(),
                    error=0.0, rel=0.0, ok=True, **extra)
    err = np.abs(U - F)
    scale = max(float(np.abs(F).max()), float(np.abs(U).max()))
    tol = max(rtol * scale, SAFETY * fd_err)
    idx = np.unravel_index(int(err.argmax()), err.shape)
    worst = float(err[idx])
    rel = worst / scale if scale > 0 else 0.0
    return dict(quantity=quantity, U=U, F=F, fd_err=fd_err, scale=scale, tol=tol,
                index=tuple(int(i) for i in idx), error=worst, rel=rel, ok=worst <= tol, **extra)


def _finite(*arrays):
    return all(np.isfinite(a).all() for a in arrays if a is not None)


# exceptions that mean "f cannot be evaluated there" (a domain error, a non-finite
# value, a matrix that is not symmetric): at the difference points and at the
# perturbed point they make the point uncheckable instead of propagating
UNDEFINED = (ValueError, ArithmeticError)


def check_point(ev, q, g, sup, rtol, mode, full=False):
    """Compare every supplied derivative at q: {quantity: comparison}, or None
    when the values around q cannot be evaluated.

    mode "explicit": every exception propagates.  "initial": exceptions at q
    itself propagate (the integration would raise them); at the difference
    points a ValueError or ArithmeticError means "not checkable here".
    "perturbed": those mean "not checkable" at q too.  Other exceptions
    always propagate (a callback that fails on purpose, Ctrl-C)."""
    mg, pg, mh, ph = (k in sup for k in QUANTITIES)
    if not (mg or pg or mh or ph):
        return {}
    D, G, h, L, is_full = _plan(q, full)
    need_c = (_H if mh else 0) | (_DV if pg else 0) | (_D2V if ph else 0)
    need_s = (_M if mg or mh else 0) | (_A if mh else 0) | (_V if pg or ph else 0) | (_DV if ph else 0)
    try:
        C = ev.values(q[None, :], g, need_c) if need_c else {}
        As = ev.contract_A(q, G) if mg else None                    # (s, n, n): A(q, G_s)
    except UNDEFINED:
        if mode == "perturbed":
            return None
        raise
    try:
        S = ev.values(_stencil(q, D, h), g, need_s)
    except UNDEFINED:
        if mode == "explicit":
            raise
        return None
    res = {}
    how = dict(full=is_full, D=D, G=G)
    fd = _stencil_differences(S, g, mg, pg, mh, ph, L, h)
    u = ULPS * EPS
    if mg:
        # X[r, i, s] = sum_kj T[k, i, j] D[r, k] G[s, j]; identity D, G: X = T[k, i, j]
        F, trunc, mag = fd["M"]                                    # F[r, i, j] = dM/dd_r
        e = _estimate(trunc, mag, h, u)
        if is_full:
            X, Y = As.transpose(2, 1, 0), F                         # A(q, e_j)[i, k] = T[k, i, j]
        else:
            X, Y = np.einsum("sik,rk->ris", As, D), np.einsum("rij,sj->ris", F, G)
            e *= float(np.abs(G).sum(axis=1).max())
        res["mass_grad"] = _compare("mass_grad", X, Y, e, rtol, **how)
    if pg:
        F, trunc, mag = fd["V"]
        res["potential_grad"] = _compare("potential_grad", C["dV"][0] if is_full else D @ C["dV"][0],
                                         F, _estimate(trunc, mag, h, u), rtol, **how)
    if mh:
        if mg and not res["mass_grad"]["ok"]:
            res["mass_hess"] = dict(quantity="mass_hess", ok=True, skipped="mass_grad")
        else:
            F, trunc, mag = fd["G"]                                # F[r, k]
            g2 = 0.5 * float(np.abs(g).sum()) ** 2                 # G is a sum over i, j
            e = (_estimate(trunc, mag, h, u, amax(res["mass_grad"]["U"]) * g2) if mg
                 else _estimate(trunc, mag, h, ULPS * FD_ACC, fd["M"][2] * g2))
            res["mass_hess"] = _compare("mass_hess", C["H"][0] if is_full else C["H"][0] @ D.T,
                                        F.T, e, rtol, **how)
    if ph:
        if pg and not res["potential_grad"]["ok"]:
            res["potential_hess"] = dict(quantity="potential_hess", ok=True, skipped="potential_grad")
        else:
            F, trunc, mag = fd["dV"]
            e = (_estimate(trunc, mag, h, u) if pg
                 else _estimate(trunc, mag, h, ULPS * FD_ACC, amax(S["V"])))
            res["potential_hess"] = _compare("potential_hess",
                                             C["d2V"][0] if is_full else C["d2V"][0] @ D.T,
                                             F.T, e, rtol, **how)
    if not all(np.isfinite(r["error"]) and np.isfinite(r["tol"]) for r in res.values() if "error" in r):
        # a compiled callback (the only kind the core does not screen) gave inf or nan
        if mode == "explicit":
            raise ValueError(f"non-finite values at or near q = {q.tolist()}: the derivatives "
                             f"cannot be checked there")
        return None
    return res


def _stencil_differences(S, g, mg, pg, mh, ph, L, h):
    """{name: (F, trunc, mag)} of the functions the supplied derivatives are
    compared with: M, V, the gradient G of 1/2 g^T M g, grad V."""
    blocks = {}
    if mg or mh:
        blocks["M"] = S["M"]
    if pg:
        blocks["V"] = S["V"]
    if mh:
        blocks["G"] = 0.5 * (g @ S["A"])                            # grad of 1/2 g^T M g: (p, c)
    if ph:
        blocks["dV"] = S["dV"]
    return dict(zip(blocks, _differences(list(blocks.values()), L, h)))


def _full_mass_hess(ev, q, sup, rtol):
    """The full mass Hessian comparison (for the message), or None if too large
    or not evaluable: S_used (polarisation) against differences of the
    mass_grad tensor."""
    n = ev.n
    if n ** 4 > MAX_FULL:
        return None
    try:
        Su = ev.hess_tensor(q)
        D, _, h, L, _ = _plan(q, full=True)
        Q = _stencil(q, D, h)
        T = ev.grad_tensor(Q)                                       # (4n, n, n, n)
        Ms = ev.values(Q, None, _M)["M"] if "mass_grad" not in sup else None
    except UNDEFINED:
        return None
    if not _finite(Su, T, Ms):
        return None
    (F, trunc, mag), = _differences([T], L, h)                    # F[l, k, i, j]
    e = (_estimate(trunc, mag, h, ULPS * EPS) if Ms is None
         else _estimate(trunc, mag, h, ULPS * FD_ACC, amax(Ms)))
    return _compare("mass_hess", Su, F.transpose(1, 0, 2, 3), e, rtol, full=True)


def diagnose(ev, q, g, sup, cmp, rtol):
    """The comparison to report: the full tensor when it can be rebuilt (the
    check itself may have used projections), else the projected one."""
    quantity, n = cmp["quantity"], ev.n
    if quantity == "mass_hess":
        f = _full_mass_hess(ev, q, sup, rtol)
        if f is not None and not f["ok"]:
            return f
    if cmp.get("full") and quantity != "mass_hess":
        return cmp
    limit = {"mass_grad": n ** 3, "potential_grad": n, "potential_hess": n * n,
             "mass_hess": n * n}[quantity]
    if limit <= MAX_FULL and not cmp.get("full"):
        try:
            res = check_point(ev, q, g, {quantity: sup[quantity]}, rtol, "perturbed", full=True)
        except Exception:
            res = None
        if res and not res[quantity]["ok"]:
            return res[quantity]
    return cmp
