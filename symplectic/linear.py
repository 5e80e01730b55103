"""Quadratic Lagrangians in closed form (AXIOMS paper).

For L = 1/2 qdot^T M qdot - 1/2 q^T K q with constant symmetric M (positive
definite) and K, every scheme of this library is a *linear* map of the state

    eta = (p, q)  in R^{2n}        (momenta first, as in the paper),
    eta_{j+1} = Phi eta_j.

This module builds those maps and the objects the AXIOMS paper proves things
about (Rojas-Quintero, Dubois, Cabrera-Diaz, Axioms 13 (2024) 255; equation
numbers below refer to it, with the corrections of ``docs/errata.md#axioms-linear-simpson``):

``propagator(M, K, h, method)``
    Phi_s = A_s^{-1} B_s (Simpson, second variant, eqs. (30)-(32)),
    Phi_n = A_n^{-1} B_n (Newmark / variational midpoint, eqs. (10)-(12)),
    the RK4 matrix polynomial, on eta = (p, q).
``simpson_first_variant(M, K, h)``
    A_sigma^{-1} B_sigma (eqs. (27)-(29)): eta_j -> (q_{j+1/2}, p_{j+1}, q_{j+1}).
``conserved_form(M, K, h)``, ``quadratic_form(...)``
    xi, zeta of phi = 1/2 p^T xi p + 1/2 q^T zeta q conserved by Simpson
    (Proposition 7), and phi evaluated along a trajectory.
``stability_limit(M, K)``
    h_max = 2 sqrt(2) / omega_max (eq. (40)), omega_max^2 the largest
    eigenvalue of M^{-1} K.  Linear Simpson is stable for |h| < h_max and
    unstable just above; it is spuriously stable again for
    2 sqrt(3) < omega h < 2 sqrt(6) (scalar case, docs/errata.md#axioms-linear-simpson), which is no
    reason to step there.  RK4 has the same bound (|R(iy)| <= 1 iff
    |y| <= 2 sqrt(2)); Newmark is unconditionally stable.
``exact(M, K, q0, p0, t)``
    the exact solution by the generalised eigenproblem K v = omega^2 M v
    (modal superposition); also ``symplectic.exact.linear``.
``double_pendulum_frequencies(m1, m2, l, g)``
    the linearised double pendulum's omega_{1,2} (eq. (49)).

``symplectic.step``, ``integrate``, ``integrate_many`` and
``symplectic.Integrator`` use these propagators (:func:`step_matrices`, applied
by the C core's driver) for ``systems.linear`` with ``method="simpson"`` or
``"midpoint"`` (one matrix-vector product per step, see their
``closed_form`` option), and warn with :class:`symplectic.StabilityWarning` when
``|h| >= h_max`` for ``"simpson"`` or ``"rk4"``.

Units: M in kg m^2 (or kg), K in N m/rad (or N/m), h and t in s, p = M qdot.
"""
import math
import warnings

import numpy as np

from ._model import _errors, _matrices, _validate

__all__ = ["propagator", "simpson_first_variant", "conserved_form",
           "quadratic_form", "energy", "frequencies", "stability_limit", "spectral_radius",
           "symplectic_defect", "propagate", "stepper", "step_matrices", "exact",
           "double_pendulum_frequencies", "METHODS"]

#: Methods with a closed-form propagator.  ``"midpoint"`` is the name of
#: Newmark's scheme in :func:`symplectic.methods` (they coincide on quadratic
#: Lagrangians: eq. (9) is the implicit midpoint rule on Hamilton's equations).
METHODS = ("simpson", "newmark", "midpoint", "rk4")


#: The warning at or beyond a method's stability limit: the same class as
#: :class:`symplectic.StabilityWarning`, documented there (kept here, where it
#: was defined first).
StabilityWarning = _errors.StabilityWarning


def _sym(A):
    return 0.5 * (A + A.T)


#: Extended precision for building the one-step matrices (x87 80-bit on
#: x86-64 Linux; equal to float64 on platforms without it).  A one-step
#: matrix correctly rounded to float64 keeps the invariants of Propositions 6
#: and 7 to a few rounding units over 10^4 steps; one assembled in float64
#: carries a systematic O(eps) defect per step that makes them drift ~100x
#: faster (measured on the AXIOMS double pendulum at h = 0.1 t_bar).
_XP = np.longdouble


def _inv(A):
    """Inverse by Gauss-Jordan elimination with partial pivoting, in A's dtype
    (numpy.linalg has no extended-precision routines).  A pivot below 1e-13
    max|A| counts as singular."""
    n = A.shape[0]
    tiny = 1e-13 * float(np.max(np.abs(A)))   # numerically singular for float64 results
    T = np.concatenate([A, np.eye(n, dtype=A.dtype)], axis=1)
    for k in range(n):
        piv = k + int(np.argmax(np.abs(T[k:, k])))
        if not abs(T[piv, k]) > tiny:
            raise np.linalg.LinAlgError("singular matrix")
        if piv != k:
            T[[k, piv]] = T[[piv, k]]
        T[k] /= T[k, k]
        col = T[:, k].copy()
        col[k] = 0
        T -= np.outer(col, T[k])
    return T[:, n:]


def _simpson_blocks(M, K, h):
    """X_s, Y_s of eq. (31): X_s = 2M/h - hK/6, Y_s = h/3 (K L^{-1} + K/2),
    L = I - h^2/8 M^{-1} K.  K L^{-1} = K (M - h^2 K/8)^{-1} M is symmetric
    (Proposition 3); it is symmetrised against rounding.  Returned in the
    dtype of M (extended precision when called from :func:`_increment`)."""
    X = 2 / h * M - h / 6 * K
    S = M - h * h / 8 * K                       # = M L
    try:
        W = K @ _inv(S) @ M                     # K L^{-1}
    except np.linalg.LinAlgError:
        raise ValueError(f"h = {float(h):g} makes L = I - h^2/8 M^-1 K singular (omega h = "
                         "2 sqrt 2 for an eigenfrequency omega): the Simpson scheme is "
                         "undefined there") from None
    Y = h / 3 * (_sym(W) + K / 2)
    return _sym(X), Y


def _newmark_blocks(M, K, h):
    """X_n = 2M/h, Y_n = hK/2 (eq. (11))."""
    return 2 / h * M, h / 2 * K


def _blocks(M, K, h, method):
    if method == "simpson":
        return _simpson_blocks(M, K, h)
    if method in ("newmark", "midpoint"):
        return _newmark_blocks(M, K, h)
    raise ValueError(f"no (X, Y) block form for method {method!r}; "
                     "use 'simpson' or 'newmark'")


def _increment_from_blocks(X, Y):
    """D = Phi - I for Phi = A^{-1} B, A = [[I, -X], [I, Y]], B = [[-I, -X], [I, -Y]] (eq. (34)).

    From p1 - X q1 = -p0 - X q0 and p1 + Y q1 = p0 - Y q0 (Proposition 7's
    expansion), with Z = X + Y:

        q1 - q0 = 2 Z^{-1} (p0 - Y q0),
        p1 - p0 = -2 Y Z^{-1} p0 - 2 X Z^{-1} Y q0.

    The increment is formed directly (not Phi - I) because for small h the
    map is close to the identity in q: stepping eta += D eta keeps the
    rounding per step at the level of the increment, as the Newton path does.
    """
    Z = X + Y
    try:
        Zi = _sym(_inv(Z))
    except np.linalg.LinAlgError:
        raise ValueError("the one-step matrix is undefined at this step size: X + Y (eq. (36)) "
                         "is singular -- h is far beyond the stability limit, or K is not "
                         "positive definite; see symplectic.linear.stability_limit") from None
    ZiY = Zi @ Y
    n = X.shape[0]
    D = np.empty((2 * n, 2 * n), dtype=X.dtype)
    D[n:, :n] = 2.0 * Zi
    D[n:, n:] = -2.0 * ZiY
    D[:n, :n] = -2.0 * ZiY.T                   # Y Z^{-1} = (Z^{-1} Y)^T
    D[:n, n:] = -2.0 * _sym(X @ ZiY)           # X Z^{-1} Y = zeta, symmetric
    return D


def _rk4_increment(M, K, h):
    """R - I for classical RK4 on pdot = -K q, qdot = M^{-1} p: R is the
    degree-4 Taylor polynomial of exp(hF), F = [[0, -K], [M^{-1}, 0]] on (p, q)."""
    n = M.shape[0]
    F = np.zeros((2 * n, 2 * n), dtype=M.dtype)
    F[:n, n:] = -K
    F[n:, :n] = _inv(M)
    A = h * F
    D = np.zeros((2 * n, 2 * n), dtype=M.dtype)
    term = np.eye(2 * n, dtype=M.dtype)
    for k in range(1, 5):
        term = term @ A / k
        D = D + term
    return D


def _increment(M, K, h, method):
    """Phi - I in float64, assembled in extended precision."""
    if method not in METHODS:
        raise ValueError(f"unknown method {method!r}; available: {list(METHODS)}")
    M, K, h = M.astype(_XP), K.astype(_XP), _XP(h)
    if method == "rk4":
        D = _rk4_increment(M, K, h)
    else:
        D = _increment_from_blocks(*_blocks(M, K, h, method))
    return D.astype(float)


def propagator(M, K, h, method="simpson"):
    """One-step matrix Phi with (p_{j+1}, q_{j+1}) = Phi (p_j, q_j).

    Parameters
    ----------
    M, K : array_like (n, n)
        Constant symmetric mass (positive definite) and stiffness matrices.
    h : float
        Step size (s); negative steps go backward.
    method : {"simpson", "newmark" (= "midpoint"), "rk4"}
        ``"simpson"``: the second variant Phi_s = A_s^{-1} B_s (eq. (32)),
        order 4; ``"newmark"``: Phi_n = A_n^{-1} B_n (eq. (12)), order 2;
        ``"rk4"``: classical Runge-Kutta (not symplectic).

    Returns
    -------
    ndarray (2n, 2n) acting on eta = (p, q) (momenta first).

    No stability check is made here (see :func:`stability_limit`), so that the
    unstable regime can be studied; at omega h = 2 sqrt 2 exactly the Simpson
    scheme is undefined and ValueError is raised.
    """
    M, K = _matrices.stiffness_pair(M, K)
    h = _validate.step_size(h)
    D = _increment(M, K, h, method)
    return D + np.eye(D.shape[0])


def simpson_first_variant(M, K, h):
    """First variant of linear Simpson (eqs. (26)-(29)), with the midpoint.

    Solves A_sigma (q_{j+1/2}, p_{j+1}, q_{j+1}) = B_sigma (p_j, q_j) with

        A_sigma = [[L, 0, -I/2], [0, I, -(2M/h - hK/6)], [2hK/3, I, hK/6]],
        B_sigma = [[0, I/2], [-I, -(2M/h - hK/6)], [I, -hK/6]],

    L = I - h^2/8 M^{-1} K (docs/errata.md#axioms-linear-simpson: B_sigma acts on eta_j).  Returns the
    (3n, 2n) matrix A_sigma^{-1} B_sigma; its last 2n rows equal
    :func:`propagator` ``(M, K, h, "simpson")``, and its first n rows give
    q_{j+1/2} = 1/2 L^{-1} (q_j + q_{j+1}) -- the internal node of the
    nonlinear scheme.
    """
    M, K = _matrices.stiffness_pair(M, K)
    h = _validate.step_size(h)
    n = M.shape[0]
    I = np.eye(n)
    L = I - h * h / 8.0 * np.linalg.solve(M, K)
    X = 2.0 / h * M - h / 6.0 * K
    A = np.zeros((3 * n, 3 * n))
    B = np.zeros((3 * n, 2 * n))
    A[:n, :n], A[:n, 2 * n:] = L, -0.5 * I
    A[n:2 * n, n:2 * n], A[n:2 * n, 2 * n:] = I, -X
    A[2 * n:, :n], A[2 * n:, n:2 * n], A[2 * n:, 2 * n:] = 2.0 * h / 3.0 * K, I, h / 6.0 * K
    B[:n, n:] = 0.5 * I
    B[n:2 * n, :n], B[n:2 * n, n:] = -I, -X
    B[2 * n:, :n], B[2 * n:, n:] = I, -h / 6.0 * K
    try:
        return np.linalg.solve(A, B)
    except np.linalg.LinAlgError:
        raise ValueError(f"A_sigma is singular at h = {h:g} (omega h = 2 sqrt 2 for an "
                         "eigenfrequency omega)") from None


def conserved_form(M, K, h, method="simpson"):
    """Matrices (xi, zeta) of the quadratic form conserved by the scheme.

    Proposition 7: for A = [[I, -X], [I, Y]], B = [[-I, -X], [I, -Y]] with
    X, Y symmetric positive definite,

        phi(p, q) = 1/2 p^T xi p + 1/2 q^T zeta q,
        xi = (X + Y)^{-1},   zeta = (X^{-1} + Y^{-1})^{-1},

    is invariant: phi(eta_{j+1}) = phi(eta_j).  For Simpson (X_s, Y_s of
    eq. (31)) this holds for |h| < h_max; for Newmark the scheme also
    conserves the energy H itself.
    """
    M, K = _matrices.stiffness_pair(M, K)
    h = _validate.step_size(h)
    X, Y = _blocks(M.astype(_XP), K.astype(_XP), _XP(h), method)
    xi = _sym(_inv(X + Y))
    zeta = _sym(_inv(_inv(X) + _inv(Y)))
    return xi.astype(float), zeta.astype(float)


def quadratic_form(xi, zeta, p, q):
    """phi = 1/2 p^T xi p + 1/2 q^T zeta q for p, q of shape (n,) or (N, n)."""
    p = np.asarray(p, dtype=float)
    q = np.asarray(q, dtype=float)
    return 0.5 * np.einsum("...i,ij,...j->...", p, xi, p) + \
        0.5 * np.einsum("...i,ij,...j->...", q, zeta, q)


def energy(M, K, p, q):
    """H = 1/2 p^T M^{-1} p + 1/2 q^T K q for p, q of shape (n,) or (N, n)."""
    M, K = _matrices.stiffness_pair(M, K)
    return quadratic_form(np.linalg.inv(M), K, p, q)


def frequencies(M, K):
    """Eigenfrequencies omega_i (rad/s, ascending) of M qdd + K q = 0.

    omega_i^2 are the eigenvalues of M^{-1} K (generalised eigenproblem
    K v = omega^2 M v, solved symmetrically through the Cholesky factor of
    M).  Negative eigenvalues (K indefinite: unstable modes) are returned as
    nan.
    """
    w2 = _modes(*_matrices.stiffness_pair(M, K))[0]
    with np.errstate(invalid="ignore"):
        return np.where(w2 >= 0, np.sqrt(np.abs(w2)), np.nan)


def stability_limit(M, K):
    """h_max = 2 sqrt(2) / omega_max (s): linear Simpson is stable for |h| < h_max.

    omega_max^2 is the largest eigenvalue of M^{-1} K (eq. (40) with the
    sharp constant; docs/errata.md#axioms-linear-simpson).  Returns inf when K has no positive
    eigenvalue (no oscillation to resolve).
    """
    w2max = float(np.max(_modes(*_matrices.stiffness_pair(M, K))[0]))
    if w2max <= 0.0:
        return math.inf
    return 2.0 * math.sqrt(2.0) / math.sqrt(w2max)


def spectral_radius(Phi):
    """max |lambda| over the eigenvalues of a one-step matrix Phi."""
    return float(np.max(np.abs(np.linalg.eigvals(np.asarray(Phi, dtype=float)))))


def symplectic_defect(Phi):
    """max |Phi^T J Phi - J| with J = [[0, -I], [I, 0]] (eq. (33)) on eta = (p, q)."""
    Phi = np.asarray(Phi, dtype=float)
    n = Phi.shape[0] // 2
    J = np.zeros((2 * n, 2 * n))
    J[:n, n:] = -np.eye(n)
    J[n:, :n] = np.eye(n)
    return float(np.max(np.abs(Phi.T @ J @ Phi - J)))


def check_stability(M, K, h, method, stacklevel=3):
    """Warn (StabilityWarning) when |h| >= h_max for "simpson" or "rk4"."""
    if method not in ("simpson", "rk4"):
        return
    hmax = stability_limit(M, K)
    if abs(h) >= hmax:
        wmax = 2.0 * math.sqrt(2.0) / hmax if hmax > 0 else math.inf
        warnings.warn(
            f"{method} on a linear system with |h| = {abs(h):g} s at or beyond its stability "
            f"limit h_max = 2 sqrt(2)/omega_max = {hmax:g} s (omega_max = {wmax:g} rad/s, "
            f"omega_max h = {wmax * abs(h):.4g} >= 2.828): the numerical solution grows "
            f"exponentially; use |h| < {hmax:g}",
            StabilityWarning, stacklevel=stacklevel)


def propagate(M, K, q0, p0, h, n_steps, method="simpson", with_midpoint=False):
    """Iterate eta_{j+1} = Phi eta_j: returns (q, p) of shape (n_steps + 1, n).

    With ``with_midpoint=True`` and ``method="simpson"`` also returns the
    internal nodes q_{j+1/2}, shape (n_steps, n) (first variant, eq. (29)).
    Warns with :class:`symplectic.StabilityWarning` at or beyond the stability limit.
    """
    M, K = _matrices.stiffness_pair(M, K)
    h = _validate.step_size(h)
    n_steps = _validate.step_count(n_steps)
    n = M.shape[0]
    q0 = _validate.state("q0", q0, n)
    p0 = _validate.state("p0", p0, n)
    check_stability(M, K, h, method)
    return stepper(M, K, h, method)(q0, p0, n_steps, with_midpoint)


def step_matrices(M, K, h, method="simpson"):
    """The closed form of one step on z = (q, p) (positions first, the order of
    the C core and of :func:`symplectic.analysis.tangent_map`): ``(D, A)`` with

        z_{j+1} = z_j + D z_j,     q_{j+1/2} = A (q_j + q_{j+1}),

    D = Phi - I of :func:`propagator` with its blocks reordered, and for
    ``"simpson"`` A = 1/2 (M - h^2 K/8)^{-1} M (eq. (26): q_{j+1/2} = 1/2
    L^{-1} (q_j + q_{j+1})); A is None for ``"newmark"``/``"midpoint"``.  Both
    assembled in extended precision and rounded once.  ``symplectic.step``,
    ``integrate``, ``integrate_many`` and :class:`symplectic.Integrator` step
    ``systems.linear`` with them in the C core (``closed_form=True``)."""
    if method not in ("simpson", "newmark", "midpoint"):
        raise ValueError(f"no closed-form step for method {method!r}; "
                         "use 'simpson', 'newmark' or 'midpoint'")
    n = M.shape[0]
    D = _increment(M, K, h, method)
    perm = np.r_[n:2 * n, 0:n]                  # (p, q) -> (q, p)
    D = np.ascontiguousarray(D[np.ix_(perm, perm)])
    if method != "simpson":
        return D, None
    Mx, Kx, hx = M.astype(_XP), K.astype(_XP), _XP(h)
    try:
        A = 0.5 * (_inv(Mx - hx * hx / 8 * Kx) @ Mx)
    except np.linalg.LinAlgError:
        raise ValueError(f"h = {float(h):g} makes L = I - h^2/8 M^-1 K singular (omega h = "
                         "2 sqrt 2 for an eigenfrequency omega): the Simpson scheme is "
                         "undefined there") from None
    return D, np.ascontiguousarray(A.astype(float))


def stepper(M, K, h, method="simpson"):
    """The iteration of :func:`propagate` for one (M, K, h, method), its matrix
    formed once: a function ``(q0, p0, n_steps, with_midpoint=False)`` that
    returns what :func:`propagate` returns, in NumPy.  No checks (M and K
    symmetric, M positive definite, as :func:`symplectic.systems.linear`
    leaves them; q0, p0 of shape (n,)); no stability warning.  (The
    integrators' closed form is :func:`step_matrices`, stepped in C.)"""
    n = M.shape[0]
    # eta_{j+1} = eta_j + D eta_j (row-vector products on the C-order array)
    DT = _increment(M, K, h, method).T.copy()

    def run(q0, p0, n_steps, with_midpoint=False):
        eta = np.empty((n_steps + 1, 2 * n))
        eta[0, :n], eta[0, n:] = p0, q0
        inc = np.empty(2 * n)
        with np.errstate(over="ignore", invalid="ignore"):      # callers check for non-finite
            for j in range(n_steps):
                np.dot(eta[j], DT, out=inc)
                np.add(eta[j], inc, out=eta[j + 1])
        q, p = eta[:, n:].copy(), eta[:, :n].copy()
        if not (with_midpoint and method == "simpson"):
            return q, p
        # q_{j+1/2} = 1/2 L^{-1} (q_j + q_{j+1}), L = I - h^2/8 M^{-1} K  (eq. (26)),
        # i.e. (M - h^2 K/8) q_m = M (q_j + q_{j+1})/2
        S = M - h * h / 8.0 * K
        with np.errstate(over="ignore", invalid="ignore"):
            q_mid = np.linalg.solve(S, M @ (0.5 * (q[:-1] + q[1:])).T).T
        return q, p, q_mid

    return run


def _modes(M, K):
    """omega^2 (ascending) and M-orthonormal modes V (V^T M V = I, V^T K V = diag)."""
    C = np.linalg.cholesky(M)                  # M = C C^T
    Ci = np.linalg.inv(C)
    w2, U = np.linalg.eigh(_sym(Ci @ K @ Ci.T))
    return w2, Ci.T @ U


def exact(M, K, q0, p0, t):
    """Exact solution of M qdd + K q = 0 by modal superposition.

    With K v_i = omega_i^2 M v_i, V^T M V = I, modal coordinates
    eta = V^T M q obey eta_i'' = -omega_i^2 eta_i, so

        eta_i(t) = eta_i(0) cos(omega_i t) + eta_i'(0) sin(omega_i t)/omega_i,

    eta(0) = V^T M q0, eta'(0) = V^T p0; q = V eta and p = M V eta'.
    Zero frequencies give free drift; negative omega^2 (K indefinite) give
    cosh/sinh growth.

    Parameters
    ----------
    M, K : array_like (n, n)
    q0, p0 : array_like (n,)
        Initial coordinates and momenta p = M qdot.
    t : array_like
        Times (s) measured from the initial state.

    Returns
    -------
    q, p : ndarrays of shape t.shape + (n,)
    """
    M, K = _matrices.stiffness_pair(M, K)
    n = M.shape[0]
    q0 = np.asarray(q0, dtype=float).reshape(n)
    p0 = np.asarray(p0, dtype=float).reshape(n)
    t = np.asarray(t, dtype=float)
    w2, V = _modes(M, K)
    a = V.T @ M @ q0
    b = V.T @ p0
    tt = t[..., None]
    w = np.sqrt(np.abs(w2))
    wt = w * tt
    pos, neg = w2 > 0, w2 < 0
    ws = np.where(w > 0, w, 1.0)
    wp = np.where(pos, wt, 0.0)                # each branch sees only its own modes
    wn = np.where(neg, wt, 0.0)
    c = np.where(pos, np.cos(wp), np.where(neg, np.cosh(wn), 1.0))
    s_over_w = np.where(pos, np.sin(wp) / ws, np.where(neg, np.sinh(wn) / ws, tt))
    # d/dt c = -w2 * (s/w) in all three cases; d/dt (s/w) = c
    eta = a * c + b * s_over_w
    deta = -w2 * a * s_over_w + b * c
    q = eta @ V.T
    p = deta @ (M @ V).T
    return q, p


def double_pendulum_frequencies(m1=1.0, m2=1.0, l=9.81 / (2 * math.pi) ** 2, g=9.81):
    """omega_1 < omega_2 (rad/s) of the linearised double pendulum with equal rods (eq. (49)).

    omega_{1,2}^2 = omega_0^2 (1 + mu -/+ sqrt(mu (1 + mu))), mu = m2/m1,
    omega_0^2 = g/l.  Modes x = (1, +/- sqrt((1 + mu)/mu)) (eq. (50), the
    slow one in phase).  Defaults: AXIOMS Table 1 (omega_0 = 2 pi, mu = 1).
    """
    mu = m2 / m1
    w0 = math.sqrt(g / l)
    r = math.sqrt(mu * (1.0 + mu))
    return w0 * math.sqrt(1.0 + mu - r), w0 * math.sqrt(1.0 + mu + r)
