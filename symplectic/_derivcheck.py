"""Derivatives checked before they are trusted.

One implementation serves :meth:`System.check_derivatives` and the check that
:func:`step`, :func:`integrate`, :func:`integrate_many` (and the exact
:func:`analysis.tangent_map`) run the first time a system with user-supplied
derivatives is used.  A derivative laid out in the wrong order (``mass_grad``
as ``[i, j, k]`` instead of ``[k, i, j]``) still gives a symplectic map that
conserves energy, so no later check sees it; this one compares every supplied
derivative, *as the core uses it* (through the System's own evaluation), with
central finite differences.

What is compared at a point q (g a fixed generic vector):

- ``mass_grad``: the tensor T[k, i, j] = dM_ij/dq_k rebuilt from the core's
  contraction A(q, e_j)[i, k] = sum_j' T[k, i, j'] (e_j)_j', against
  differences of M;
- ``potential_grad``: grad V against differences of V;
- ``mass_hess``: H(q, g), the Hessian of 1/2 g^T M(q) g, against differences
  of 1/2 A(q, g)^T g (its gradient, from the mass_grad just checked); for the
  message the full tensor -- its part symmetric in (i, j), all the core uses
  -- is rebuilt from H(q, e_i + e_j);
- ``potential_hess``: against differences of grad V.

Up to n = NFULL every partial derivative is compared (differences along each
axis); beyond, NDIR fixed generic directions d_r (and contraction vectors
g_s for A) keep the cost at a fixed number of evaluations however large n
is -- a wrong layout shows in a generic projection -- and the full tensors
are rebuilt only for the message.

Finite differences and their error estimate: central differences D(h) and
D(h/2) along each direction, h = 1e-4 sqrt(max(1, |q_c|)) (rounded so that
q_c +- h is exact), the Richardson value F = (4 D(h/2) - D(h)) / 3 (error
O(h^4)) and the error estimate

    e = max |D(h) - D(h/2)| + 3 u m / h.

The first term is h^2 |f'''| / 8 in the asymptotic range -- far above the
truncation error of F -- and grows with the error of F where the differences
are not in that range (a kink, a steep function, a step across a
singularity).  The second bounds the rounding error of F: u is the relative
accuracy of f (4 ulp for a user callable, eps^(2/3) for a first derivative
the package forms by differences itself) and m the size of the terms f is
computed from, max |f| + max |L f'| + max |f''| (L = max(1, |q_c|)):
k (1 - cos q) near q = 0 is tiny but rounds like k, and sin(q) at
q = 1000 pi carries the rounding of q.  A supplied derivative U fails when

    max |U - F| > max(rtol * max(|F|, |U|), 10 e)

(rtol = 1e-6): relative to the largest entry of the quantity, with an
absolute floor ten times the estimated finite-difference error.  At a
near-singular point (the Lagrange top at theta ~ 0, where every entry of dM
is O(theta)) the floor, not rtol, decides, so correct derivatives pass.  On
the test systems correct derivatives stay more than 20 times below the
tolerance (36 in the last run), at random, near-singular and large-|q|
states (tests/test_derivcheck.py).

The first-use check runs at the initial q and at a perturbed q + dq
(|dq_c| between 0.05 and 0.1 max(1, |q_c|), fixed mixed signs; dq/10 and
dq/100 if the callbacks cannot be evaluated there), away from the special
points where a wrong derivative can look right (grad V = 0 at an
equilibrium).  First derivatives are judged at both points before any
Hessian, whose reference they are.
"""
import functools
import itertools
import sys

import numpy as np

from . import _core
from ._errors import DerivativeError

_M, _A, _H, _V, _DV, _D2V = (_core.NEED_M, _core.NEED_A, _core.NEED_H, _core.NEED_V,
                             _core.NEED_DV, _core.NEED_D2V)

EPS = np.finfo(float).eps
STEP = 1e-4                    # difference steps h_c = STEP sqrt(max(1, |q_c|)) and h_c / 2
SAFETY = 10.0                  # tolerance floor = SAFETY x the finite-difference error estimate
ULPS = 4.0                     # relative accuracy of a user callable, in units of eps
FD_ACC = np.cbrt(EPS) ** 2     # relative accuracy of the package's own central differences
RTOL = 1e-6
NFULL = 16                     # up to this n, every partial derivative is compared
NDIR = 4                       # beyond it, this many pseudo-random directions
PERTURB = 0.1                  # size of the perturbation dq relative to max(1, |q|)
MAX_FULL = 2 ** 20             # largest mass Hessian (n^4 entries) rebuilt for a message
_PHI = (np.sqrt(5.0) - 1.0) / 2.0

QUANTITIES = ("mass_grad", "potential_grad", "mass_hess", "potential_hess")
_LABELS = {"mass_grad": ("k", "i", "j"), "mass_hess": ("k", "l", "i", "j")}
_REF = {"mass_grad": "M(q)", "potential_grad": "V(q)", "potential_hess": "grad V(q)"}
_FORM_NAMES = {
    "combined": dict(mass_grad="the combined callable's dM", mass_hess="the combined callable's d2M",
                     potential_grad="the combined callable's dV",
                     potential_hess="the combined callable's d2V"),
    "vectorized": dict(mass_grad="vectorized 'mass_grad'", mass_hess="vectorized 'mass_hess'",
                       potential_grad="vectorized 'potential_grad'",
                       potential_hess="vectorized 'potential_hess'"),
    "cfunc": dict(mass_grad="the compiled callback's A (need bit 2)",
                  mass_hess="the compiled callback's H (need bit 4)",
                  potential_grad="the compiled callback's dV (need bit 16)",
                  potential_hess="the compiled callback's d2V (need bit 32)"),
    "builtin": dict(mass_grad="mass_dir", mass_hess="mass_hess_dir",
                    potential_grad="potential_grad", potential_hess="potential_hess"),
}


# ---------------------------------------------------------------- public entry points
def ensure(system, q, check=True):
    """The first-use check: run it unless disabled, skipped or already passed.

    Called by step/integrate/integrate_many with the initial q (validated).
    Raises DerivativeError; caches a pass on the system object.
    """
    if not check or not isinstance(system, _core.System):
        return                                      # (a non-System is the caller's TypeError)
    if system.__dict__.get("_derivcheck_verdict") is not None:
        return
    if not getattr(system, "derivative_check", True) or not _user_supplied(system):
        return
    q = np.array(q, dtype=float)
    try:
        # V at the initial state, once: the integration itself may never call the
        # potential (only its gradient), so a malformed one would otherwise surface only
        # at Trajectory.energy; the binding's message names the callback
        system._eval(q, None, _V)
        _first_use(system, q)
    except DerivativeError:
        raise
    except Exception as exc:       # a callback failed while being checked: say so
        if hasattr(exc, "add_note"):
            exc.add_note(f"(raised while symplectic checked the supplied derivatives against "
                         f"finite differences around q = {_fmt_q(q)}, before the first step; "
                         f"check=False skips the check)")
        raise


def ensure_many(systems, Q0, check=True):
    """ensure() for each distinct system of an ensemble, at its first member's q0."""
    if not check:
        return
    seen = set()
    for k, s in enumerate(systems):
        if id(s) not in seen:
            seen.add(id(s))
            ensure(s, Q0[k if len(Q0) > 1 else 0], check)


def check(system, q, g=None, rtol=RTOL, raise_on_failure=True):
    """System.check_derivatives: compare at q; return {quantity: relative error}."""
    n = system.n
    q = np.array(q, dtype=float)
    if q.shape != (n,):
        raise ValueError(f"q must have shape ({n},), got {q.shape}")
    g = _default_g(n) if g is None else np.array(g, dtype=float)
    if g.shape != (n,):
        raise ValueError(f"g must have shape ({n},), got {g.shape}")
    rtol = float(rtol)
    if not rtol > 0:
        raise ValueError(f"rtol must be > 0, got {rtol}")
    ev = _Evaluator(system)
    sup = _supplied(system, ev, q)
    res = _check_point(ev, q, g, sup, rtol, mode="explicit")
    report = _report(system, sup, res)
    if raise_on_failure:
        bad = [r for r in res.values() if not r["ok"]]
        if bad:
            raise _error(ev, q, g, sup, res, bad[0], rtol, "the q given to check_derivatives",
                         report)
    return report


# ---------------------------------------------------------------- which derivatives are the user's
def _form(system):
    c = system._callables
    if c is None:
        return "builtin"
    for k in ("combined", "vectorized", "cfunc"):
        if k in c:
            return k
    return "callables"


def _user_supplied(system):
    """True for systems whose derivatives come from the user: Python callables
    (plain, combined, vectorized) and compiled callbacks; not the built-in C
    systems nor the SymPy-generated ones (their derivatives are derived)."""
    if system.builtin is not None or system._callables is None:
        return False
    symbolic = sys.modules.get("symplectic.symbolic")
    return not (symbolic is not None and isinstance(system, symbolic.SymbolicSystem))


def _supplied(system, ev, q):
    """{quantity: (callback name, contracted?)} for every derivative the user supplied."""
    form = _form(system)
    cm = system.constant_mass
    out = {}
    if form == "callables":
        c = system._callables
        fd = set(system._fd_used)
        if not cm and "mass_grad" not in fd:
            out["mass_grad"] = ("mass_dir", True) if c["mass_dir"] is not None else ("mass_grad", False)
        if "potential_grad" not in fd:
            out["potential_grad"] = ("potential_grad", False)
        if not cm and c["mass_hess_dir"] is not None:
            out["mass_hess"] = ("mass_hess_dir", True)
        elif not cm and c["mass_hess"] is not None:
            out["mass_hess"] = ("mass_hess", False)
        if c["potential_hess"] is not None:
            out["potential_hess"] = ("potential_hess", False)
        return {k: out[k] for k in QUANTITIES if k in out}
    names = _FORM_NAMES[form]
    contracted = form in ("cfunc", "builtin")
    hess = ev.vectorized_hessians(q) if form == "vectorized" else None
    for k in QUANTITIES:
        if k.startswith("mass") and cm:
            continue
        if hess is not None and k.endswith("hess") and k not in hess:
            continue
        out[k] = (names[k], contracted and k.startswith("mass"))
    return out


# ---------------------------------------------------------------- evaluation as the core sees it
class _Evaluator:
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
def _generic(n, stream):
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


def _default_g(n):
    """The vector g that contracts A(q, g) and H(q, g) when none is given."""
    return _generic(n, 0).copy()


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
    D = np.array([_generic(n, 10 + r) for r in range(NDIR)])
    G = np.array([_generic(n, 20 + r) for r in range(NDIR)])
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


def _amax(a):
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
_UNDEFINED = (ValueError, ArithmeticError)


def _check_point(ev, q, g, sup, rtol, mode, full=False):
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
    except _UNDEFINED:
        if mode == "perturbed":
            return None
        raise
    try:
        S = ev.values(_stencil(q, D, h), g, need_s)
    except _UNDEFINED:
        if mode == "explicit":
            raise
        return None
    res = {}
    how = dict(full=is_full, D=D, G=G)
    blocks = {}
    if mg or mh:
        blocks["M"] = S["M"]
    if pg:
        blocks["V"] = S["V"]
    if mh:
        blocks["G"] = 0.5 * (g @ S["A"])                            # grad of 1/2 g^T M g: (p, c)
    if ph:
        blocks["dV"] = S["dV"]
    fd = dict(zip(blocks, _differences(list(blocks.values()), L, h)))
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
            e = (_estimate(trunc, mag, h, u, _amax(res["mass_grad"]["U"]) * g2) if mg
                 else _estimate(trunc, mag, h, ULPS * FD_ACC, fd["M"][2] * g2))
            res["mass_hess"] = _compare("mass_hess", C["H"][0] if is_full else C["H"][0] @ D.T,
                                        F.T, e, rtol, **how)
    if ph:
        if pg and not res["potential_grad"]["ok"]:
            res["potential_hess"] = dict(quantity="potential_hess", ok=True, skipped="potential_grad")
        else:
            F, trunc, mag = fd["dV"]
            e = (_estimate(trunc, mag, h, u) if pg
                 else _estimate(trunc, mag, h, ULPS * FD_ACC, _amax(S["V"])))
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
    except _UNDEFINED:
        return None
    if not _finite(Su, T, Ms):
        return None
    (F, trunc, mag), = _differences([T], L, h)                    # F[l, k, i, j]
    e = (_estimate(trunc, mag, h, ULPS * EPS) if Ms is None
         else _estimate(trunc, mag, h, ULPS * FD_ACC, _amax(Ms)))
    return _compare("mass_hess", Su, F.transpose(1, 0, 2, 3), e, rtol, full=True)


def _diagnose(ev, q, g, sup, cmp, rtol):
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
            res = _check_point(ev, q, g, {quantity: sup[quantity]}, rtol, "perturbed", full=True)
        except Exception:
            res = None
        if res and not res[quantity]["ok"]:
            return res[quantity]
    return cmp


# ---------------------------------------------------------------- layouts
def _as_used(quantity, T):
    if quantity == "mass_hess":
        return 0.5 * (T + T.transpose(0, 1, 3, 2))
    return T


@functools.lru_cache(maxsize=None)
def _classes(quantity, dim):
    """The permutations of the axes that the core can tell apart, as
    (representative, members): those giving different tensors as used, for a
    generic tensor with the true symmetries (M symmetric: dM symmetric in
    (i, j); d2M symmetric in (i, j) and in (k, l))."""
    if quantity == "mass_grad":
        R = _generic(dim ** 3, 30).reshape((dim,) * 3)
        R = R + R.transpose(0, 2, 1)
    else:
        R = _generic(dim ** 4, 31).reshape((dim,) * 4)
        R = R + R.transpose(1, 0, 2, 3)
        R = R + R.transpose(0, 1, 3, 2)
    classes = []
    for P in itertools.permutations(range(R.ndim)):
        X = _as_used(quantity, R.transpose(P))
        for rep, members, Xr in classes:
            if np.allclose(X, Xr, rtol=1e-12, atol=1e-12):
                members.append(P)
                break
        else:
            classes.append((P, [P], X))
    return tuple((rep, tuple(members)) for rep, members, _ in classes)


def _layout_name(quantity, P):
    return "[" + ", ".join(_LABELS[quantity][p] for p in P) + "]"


def _formula(quantity, P):
    """What a contracted callback computes if its tensor is laid out P."""
    labels = _LABELS[quantity]
    v = {labels[P[m]]: labels[m] for m in range(len(P))}
    if quantity == "mass_grad":
        return f"A[i, k] = sum_j dM_{v['i']}{v['j']}/dq_{v['k']} g_j"
    return f"H[k, l] = 1/2 sum_ij d2M_{v['i']}{v['j']}/dq_{v['k']} dq_{v['l']} g_i g_j"


_EXPECTED = {"mass_grad": "[k, i, j] = dM_ij/dq_k", "mass_hess": "[k, l, i, j] = d2M_ij/dq_k dq_l"}
_WHAT = {"mass_grad": "dM_ij/dq_k", "mass_hess": "d2M_ij/dq_k dq_l", "potential_grad": "dV/dq_k",
         "potential_hess": "d2V/dq_k dq_l"}


def _layout_hint(cmp, callback, contracted, n):
    """A sentence naming the layout (axis permutation, sign) the supplied
    tensor matches, or None."""
    quantity, U, F, tol = cmp["quantity"], cmp["U"], cmp["F"], cmp["tol"]
    if quantity not in _LABELS or n < 2 or U.ndim != len(_LABELS[quantity]):
        if np.max(np.abs(U + F)) <= tol and _amax(F) > tol:
            return _sign_hint(quantity, callback)
        return _zero_hint(U, F, tol, callback)
    classes = _classes(quantity, min(n, 3))
    ident = tuple(range(U.ndim))
    matches = []
    for rep, _members in classes:
        C = _as_used(quantity, F.transpose(rep))
        for s in (1.0, -1.0):
            if (rep == ident and s > 0) or _amax(C) <= tol:
                continue
            if np.max(np.abs(U - s * C)) <= tol:
                matches.append((rep, s))
    if not matches:
        return _zero_hint(U, F, tol, callback)
    rep, s = matches[0]
    neg = "minus " if s < 0 else ""
    if rep == ident:
        text = _sign_hint(quantity, callback)
    elif contracted:
        text = (f"{callback} looks like it computes {neg}{_formula(quantity, rep)} (the tensor laid "
                f"out {_layout_name(quantity, rep)}) instead of {_formula(quantity, ident)}.")
    else:
        text = (f"{callback} looks like it is laid out {neg}{_layout_name(quantity, rep)}; "
                f"expected {_EXPECTED[quantity]}.")
    if len(matches) > 1:
        alt = ", ".join(("minus " if t < 0 else "") + _layout_name(quantity, r) for r, t in matches[1:])
        text += f" (At this q it also matches {alt}.)"
    if quantity == "mass_grad" and rep != ident:
        text += (" M is symmetric, so only the position of the derivative index k can be told "
                 "apart: [k, i, j] = [k, j, i], [i, k, j] = [j, k, i], [i, j, k] = [j, i, k].")
    elif quantity == "mass_hess" and rep != ident:
        reps = ", ".join(_layout_name(quantity, r) for r, _ in classes)
        text += (" The core uses d2M only through 1/2 g^T d2M g and d2M is symmetric in (k, l), "
                 f"so only these layouts can be told apart: {reps} (each up to swapping i with j "
                 f"and k with l).")
    return text


def _sign_hint(quantity, callback):
    if quantity == "potential_hess":
        return (f"{callback} looks like the negative of the derivative of grad V (a sign error "
                f"in it, or in potential_grad where grad V vanishes).")
    if quantity == "mass_hess":
        return (f"{callback} looks like the negative of the derivative of dM (a sign error in "
                f"it, or in mass_grad where dM vanishes).")
    return f"{callback} looks like the negative of {_WHAT[quantity]} (a sign error)."


def _zero_hint(U, F, tol, callback):
    """Zeros where differences are not (entries not filled), or a constant factor."""
    if _amax(U) == 0.0 and _amax(F) > tol:
        return f"{callback} gives zeros here (entries not filled in?)."
    ff = float(np.vdot(F, F))
    if ff > 0.0 and _amax(F) > tol:
        a = float(np.vdot(U, F)) / ff
        if abs(a - 1.0) > 1e-3 and np.max(np.abs(U - a * F)) <= tol:
            return (f"{callback} looks like {a:.6g} times the finite-difference value "
                    f"(a wrong factor).")
    return None


# ---------------------------------------------------------------- messages
def _fmt_q(q):
    return "[" + ", ".join(f"{x:.10g}" for x in q) + "]"


def _index_text(cmp, n):
    quantity, idx, ix = cmp["quantity"], cmp["index"], ", ".join(str(i) for i in cmp["index"])
    big = f"(n = {n} is too large to compare every entry; d_r, g_s fixed pseudo-random unit vectors)"
    if quantity == "mass_grad":
        if cmp.get("full"):
            return f"[k, i, j] = [{ix}] (dM[{idx[1]},{idx[2]}]/dq[{idx[0]}])"
        return f"[r, i, s] = [{ix}] of sum_kj dM_ij/dq_k d_rk g_sj {big}"
    if quantity == "potential_grad":
        return f"[k] = [{ix}] (dV/dq[{idx[0]}])" if cmp.get("full") else \
            f"[r] = [{ix}] of sum_k dV/dq_k d_rk {big}"
    if quantity == "potential_hess":
        return f"[k, l] = [{ix}] (d2V/dq[{idx[0]}]dq[{idx[1]}])" if cmp.get("full") else \
            f"[k, r] = [{ix}] of sum_l d2V/dq_k dq_l d_rl {big}"
    if len(idx) == 4:
        return (f"[k, l, i, j] = [{ix}] (d2M[{idx[2]},{idx[3]}]/dq[{idx[0]}]dq[{idx[1]}], "
                f"symmetrised in i, j as the core uses it)")
    gtext = "H(q, g) = the Hessian of 1/2 g^T M(q) g, g a fixed pseudo-random vector"
    if cmp.get("full"):
        return f"[k, l] = [{ix}] of {gtext} (n = {n} is too large to rebuild the full mass Hessian)"
    return f"[k, r] = [{ix}] of sum_l H_kl d_rl, {gtext} {big}"


def _report(system, sup, res):
    """{quantity: relative error | "finite differences" | "not checked: ..."}."""
    report = {}
    for k in QUANTITIES:
        if k.startswith("mass") and system.constant_mass:
            continue
        r = (res or {}).get(k)
        if k not in sup:
            report[k] = "finite differences"
        elif r is None:
            report[k] = "not checked"
        elif "skipped" in r:
            report[k] = f"not checked: {r['skipped']} is wrong"
        else:
            report[k] = r["rel"]
    return report


def _error(ev, q, g, sup, res, cmp, rtol, where, report):
    quantity = cmp["quantity"]
    callback, contracted = sup[quantity]
    full = _diagnose(ev, q, g, sup, cmp, rtol)
    tensor = full.get("full") and full["U"].ndim == len(_LABELS.get(quantity, ())) or \
        (quantity.startswith("potential") and full.get("full"))
    hint = _layout_hint(full, callback, contracted, ev.n) if tensor else None
    idx = full["index"]
    others = [r["quantity"] for r in res.values() if r is not cmp and not r["ok"]]
    ref = _REF.get(quantity)
    if quantity == "potential_hess" and "potential_grad" not in sup:
        ref = "grad V(q) (itself by differences of V)"
    if quantity == "mass_hess":
        own = "" if "mass_grad" in sup else ", itself by differences of M"
        ref = (f"the tensor dM_ij/dq_k (the checked mass_grad{own})" if full["U"].ndim == 4
               else f"1/2 A(q, g)^T g (A from the checked mass_grad{own})")
    rebuilt = ""
    if contracted and tensor:
        rebuilt = (" of the tensor rebuilt from A(q, e_j)" if quantity == "mass_grad"
                   else " of the tensor rebuilt from H(q, e_i + e_j)")
    msg = (f"{callback} disagrees with finite differences at q = {_fmt_q(q)} ({where}): "
           f"at entry{rebuilt} {_index_text(full, ev.n)} it gives {full['U'][idx]:.12g}, "
           f"central differences of {ref} give {full['F'][idx]:.12g} (difference "
           f"{full['error']:.3g} > tolerance {full['tol']:.3g} = max(rtol {rtol:g} x largest "
           f"entry {full['scale']:.3g}, {SAFETY:g} x the finite-difference error estimate "
           f"{full['fd_err']:.3g})).")
    if hint:
        msg += " " + hint
    if others:
        msg += f" Also wrong at this q: {', '.join(sup[o][0] for o in others)}."
    msg += (" Fix the callback (layouts: System docstring), or skip this check with check=False "
            "(step/integrate/integrate_many) or derivative_check=False (System).")
    return DerivativeError(msg, callback=callback, quantity=quantity, index=idx,
                           supplied=float(full["U"][idx]), finite_difference=float(full["F"][idx]),
                           q=q.copy(), error=full["error"], tolerance=full["tol"], layout=hint,
                           report=report)


# ---------------------------------------------------------------- the first-use check
def _perturbation(q):
    """dq with |dq_c| in [0.5, 1] x PERTURB max(1, |q_c|), fixed mixed signs."""
    return PERTURB * np.maximum(1.0, np.abs(q)) * _generic(len(q), 1)


def _first_use(system, q):
    n = system.n
    ev = _Evaluator(system)
    sup = _supplied(system, ev, q)
    if not sup:
        system._derivcheck_verdict = "nothing supplied"
        return
    g = _default_g(n)
    dq = _perturbation(q)
    around = ("a perturbed state: the initial q plus a fixed pseudo-random offset, away from "
              "special points")
    # the initial state, then the first of q + dq, q + dq/10, q + dq/100 where the
    # callbacks can be evaluated (a model may be defined only near q)
    points = [(q, "the initial state", "initial")] + [(q + s * dq, around, "perturbed")
                                                      for s in (1.0, 0.1, 0.01)]
    checked = []                                       # (q, where, results) at <= 2 points
    for x, where, mode in points:
        if mode == "perturbed" and any(w == around for _, w, _ in checked):
            break
        res = _check_point(ev, x, g, sup, RTOL, mode)
        if res is not None:
            checked.append((x, where, res))
    # a Hessian is compared with differences of the first derivative, so a wrong first
    # derivative (which may look right at one point: grad V = 0 at an equilibrium) is
    # reported before any Hessian, at whichever point shows it
    for quantity in QUANTITIES:
        for x, where, res in checked:
            r = res.get(quantity)
            if r is not None and not r["ok"]:
                raise _error(ev, x, g, sup, res, r, RTOL, where, _report(system, sup, res))
    if checked:
        system._derivcheck_verdict = "passed"
