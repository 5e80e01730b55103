"""step, integrate and the Trajectory they return."""
import math
import numbers
import operator
import os

import numpy as np

from . import _core, _derivcheck
from ._errors import ConvergenceError
from ._system import System

_METHODS = {name: dict(doc=doc, order=order, symplectic=bool(sym), n_mid=n_mid, nodes=nodes)
            for name, doc, order, sym, n_mid, nodes in _core.methods()}


def methods(details=False):
    """The available methods.

    Returns ``{name: description}``; with ``details=True``,
    ``{name: {"doc", "order", "symplectic", "n_mid", "nodes"}}`` where
    ``n_mid`` is the number of internal nodes a step reports in
    ``Trajectory.q_mid`` and ``nodes`` their positions c in [0, 1] within a step
    (with the ends).

    - ``"simpson"``: Simpson variational integrator, order 4, symplectic.
    - ``"midpoint"``: implicit-midpoint variational integrator (Newmark on
      quadratic Lagrangians), order 2, symplectic.
    - ``"rk4"``: classical Runge-Kutta 4 on Hamilton's equations, order 4,
      not symplectic.
    - ``"lobatto2"``, ``"lobatto4"``, ``"lobatto5"``: the Lobatto family of
      Galerkin variational integrators with s = 2, 4, 5 nodes, orders 2, 6, 8
      (``"lobatto3"`` is Simpson through the generic kernels).
    """
    if details:
        return {k: dict(v) for k, v in _METHODS.items()}
    return {k: v["doc"] for k, v in _METHODS.items()}


class Trajectory:
    """A discrete trajectory returned by :func:`integrate`.

    Attributes
    ----------
    t : ndarray (N+1,)
        Times t_k = t0 + k h.
    q, p : ndarray (N+1, n)
        Coordinates and canonical momenta p = M(q) qdot at t_k.
    qdot : ndarray (N+1, n)
        Velocities M(q)^-1 p at t_k (computed on first access).
    q_mid : ndarray (N, n), (N, s - 2, n) or None
        The internal nodes of each step: for ``simpson``/``lobatto3`` (one
        internal node) an (N, n) array, Simpson's q_{k+1/2} (the interpolating
        parabola's value at t_k + h/2); for ``lobatto4``/``lobatto5`` an
        (N, s - 2, n) array (2 or 3 nodes at t_k + c_a h, with the c_a of
        ``methods(details=True)[method]["nodes"]``); None for ``midpoint``,
        ``lobatto2`` and ``rk4``, which have no internal nodes.
    newton_iterations : ndarray (N,) of int
        Newton iterations of each step (0 for rk4).
    energy : ndarray (N+1,)
        H(q_k, p_k) = 1/2 p^T M^-1 p + V (computed on first access).
    method, h, system
        What produced it.
    """

    def __init__(self, system, method, h, t, q, p, q_mid, newton_iterations):
        self.system = system
        self.method = method
        self.h = h
        self.t = t
        self.q = q
        self.p = p
        self.q_mid = q_mid
        self.newton_iterations = newton_iterations
        self._energy = None
        self._qdot = None

    @property
    def energy(self):
        if self._energy is None:
            self._energy = self.system.energy(self.q, self.p)
        return self._energy

    @property
    def qdot(self):
        """Velocities qdot = M(q)^-1 p at the nodes, (N+1, n) (computed on first access)."""
        if self._qdot is None:
            self._qdot = self.system.velocity(self.q, self.p)
        return self._qdot

    @property
    def n_steps(self):
        return len(self.t) - 1

    def dense(self, t, kind="lagrange"):
        """q at arbitrary times t within the integrated interval (dense output).

        Evaluates the scheme's own interpolating polynomial of each step
        (``kind="lagrange"``: degree s - 1 through the s nodes of the step,
        order s, e.g. the parabola through q_j, q_{j+1/2}, q_{j+1} for
        Simpson), or a Hermite variant that also matches the end velocities
        M(q)^-1 p (``kind="hermite"``, degree s + 1, order min(s + 1, 2s - 2)).
        The steps themselves are unchanged.  Returns an array (len(t), n), or
        (n,) for a scalar t.
        """
        from ._dense import dense
        return dense(self, t, kind)

    def __len__(self):
        return len(self.t)

    def __repr__(self):
        return (f"<Trajectory {self.method}, {self.n_steps} steps of h={self.h:g}, "
                f"t in [{self.t[0]:g}, {self.t[-1]:g}], n={self.q.shape[1]}>")


def _check_system(system):
    if not isinstance(system, System):
        raise TypeError(f"system must be a symplectic.System (see symplectic.systems), "
                        f"got {type(system).__name__}")


def _check_method(method):
    if not isinstance(method, str):
        raise TypeError(f"method must be a string, got {type(method).__name__}")
    if method not in _METHODS:
        raise ValueError(f"unknown method {method!r}; available: {sorted(_METHODS)}")


def _state(name, x, n):
    if isinstance(x, np.ndarray) and x.dtype == object:
        raise TypeError(f"{name} must be a float array, got an object array")
    try:
        a = np.array(x, dtype=float)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{name} must be a sequence of {n} real numbers ({exc})") from None
    if np.iscomplexobj(x):
        raise TypeError(f"{name} must be real, got complex values")
    if n == 1 and a.ndim == 0:
        a = a.reshape(1)
    if a.shape != (n,):
        raise ValueError(f"{name} must have shape ({n},) for this system, got {a.shape}")
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{name} contains non-finite values: {a.tolist()}")
    return a


def _real(name, x):
    if isinstance(x, bool) or not isinstance(x, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {x!r}")
    v = float(x)
    if not math.isfinite(v):
        raise ValueError(f"{name} must be finite, got {x!r}")
    return v


def _newton_opts(rtol, max_iter):
    opts = {}
    if rtol is not None:
        rtol = _real("rtol", rtol)
        if not rtol > 0:
            raise ValueError(f"rtol must be > 0, got {rtol}")
        opts["rtol"] = rtol
    if max_iter is not None:
        max_iter = operator.index(max_iter)
        if max_iter < 1:
            raise ValueError(f"max_iter must be >= 1, got {max_iter}")
        opts["max_iter"] = max_iter
    return opts


def _available_memory():
    """Bytes of memory available to a new allocation (Linux: MemAvailable), or None."""
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_AVPHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return None


def _check_memory(nbytes, what, hint="integrate in chunks (start each from the last "
                                     "state of the previous one)"):
    """MemoryError before allocating ``nbytes`` if they cannot fit (not after a
    half-finished run, and not through the kernel's overcommit and OOM killer)."""
    avail = _available_memory()
    if avail is not None and nbytes > avail:
        raise MemoryError(
            f"{what} needs {nbytes / 2**30:.3g} GiB for its arrays but only "
            f"{avail / 2**30:.3g} GiB of memory is available; {hint}")


def _output_bytes(n_steps, n, method):
    """Bytes of the arrays integrate() returns: t, q, p (n_steps + 1 rows), the
    internal nodes and the Newton counts (n_steps rows)."""
    n_mid = max(_METHODS[method]["n_mid"], 0) if method in _METHODS else 0
    rows = n_steps + 1
    return 8 * rows * (1 + 2 * n) + 8 * n_steps * n_mid * n + 4 * n_steps


def _momentum(system, q, p, qdot, pname, vname):
    """The canonical momentum of the initial state: ``p`` as given, or
    p = M(q) qdot from the velocities (exactly one of the two)."""
    if p is None and qdot is None:
        raise TypeError(f"give the initial momenta {pname}= (p = M(q) qdot) or the initial "
                        f"velocities {vname}=")
    if p is not None and qdot is not None:
        raise TypeError(f"give either {pname}= (momenta) or {vname}= (velocities), not both")
    if p is not None:
        return _state(pname, p, system.n)
    qdot = _state(vname, qdot, system.n)
    return system.mass(q) @ qdot


def _required(name, value):
    if value is None:
        raise TypeError(f"{name} is required")
    return value


def _q_mid(qm):
    if qm is None:
        return None
    return qm[:, 0, :] if qm.shape[1] == 1 else qm


def step(system, q, p=None, h=None, method="simpson", *, qdot=None, rtol=None, max_iter=None,
         check=True):
    """Advance one step: ``(q, p)`` at time t -> ``(q1, p1)`` at t + h.

    Parameters
    ----------
    system : symplectic.System
    q, p : array_like (n,)
        Coordinates and canonical momenta p = M(q) qdot.
    qdot : array_like (n,), optional
        Velocities instead of ``p`` (exactly one of the two): p = M(q) qdot.
    h : float
        Step size (nonzero; negative steps go backward in time).
    method : str
        ``"simpson"`` (default, order 4), ``"midpoint"`` (2), ``"lobatto2"``
        (2), ``"lobatto3"`` (= Simpson, generic kernels), ``"lobatto4"`` (6),
        ``"lobatto5"`` (8) or ``"rk4"`` (4, not symplectic); see :func:`methods`.
    rtol : float, optional
        Newton tolerance on the update relative to the step's increment
        (default 1e-13).
    max_iter : int, optional
        Newton iterations allowed (default 25).
    check : bool
        On the first use of a system with user-supplied derivatives, check
        them against finite differences (default True; see
        :class:`symplectic.System`).  False skips the check.

    Returns
    -------
    q1, p1 : ndarray (n,)

    Raises
    ------
    ConvergenceError
        Newton failed, a value became non-finite, or M(q) is not positive definite.
    DerivativeError
        A supplied derivative disagrees with finite differences (first use only).
    """
    _check_system(system)
    _check_method(method)
    h = _real("h", _required("h", h))
    if h == 0.0:
        raise ValueError("h must be nonzero")
    q = _state("q", q, system.n)
    p = _momentum(system, q, p, qdot, "p", "qdot")
    _derivcheck.ensure(system, q, check)
    q1, p1, _, status, iters, res, res_rel, _upd, reason = _core.step(
        system, q, p, h, method, **_newton_opts(rtol, max_iter))
    if status != 0:
        # the reason is the C core's sym_strerror text, passed through by the binding
        raise ConvergenceError(
            f"{method} step from t = 0 with h = {h:g} failed: {reason} "
            f"after {iters} Newton iterations (residual {res:.3g}, relative {res_rel:.3g})",
            step=0, t=0.0, residual=res, iterations=iters, reason=reason)
    return q1, p1


def integrate(system, q0, p0=None, h=None, n_steps=None, method="simpson", *, qdot0=None,
              t0=0.0, rtol=None, max_iter=None, predictor=True, newton="full",
              closed_form=True, check=True):
    """Integrate ``n_steps`` steps of size ``h`` from ``(q0, p0)`` at ``t0``.

    Parameters
    ----------
    system : symplectic.System
        A built-in system (:mod:`symplectic.systems`), a compiled C callback
        (:meth:`System.from_cfunc`) or a SymPy Lagrangian compiled to C
        (:meth:`System.from_sympy`) -- these run in C without the GIL -- or
        one made of Python callables (:class:`System`,
        :meth:`System.combined`, :meth:`System.vectorized`).
    q0, p0 : array_like (n,)
        Initial coordinates and canonical momenta p = M(q) qdot.
    h : float
        Step size (nonzero; negative integrates backward in time).
    n_steps : int
        Number of steps (>= 0); the trajectory has n_steps + 1 points.
    qdot0 : array_like (n,), optional
        Initial velocities instead of ``p0`` (exactly one of the two):
        p0 = M(q0) qdot0.
    method : str
        ``"simpson"`` (order 4, default), ``"midpoint"`` (implicit midpoint /
        Newmark, order 2), ``"lobatto2"`` (order 2), ``"lobatto3"`` (Simpson
        through the generic Lobatto kernels), ``"lobatto4"`` (order 6),
        ``"lobatto5"`` (order 8) -- all symplectic -- or ``"rk4"`` (order 4,
        not symplectic); :func:`methods` lists them.
    t0 : float
        Initial time (default 0).
    rtol, max_iter :
        Newton tolerance (default 1e-13, relative to the step's increment)
        and iteration limit per step (default 25).
    predictor : bool
        Start Newton from the extrapolated interpolating polynomial of the
        previous step (default); False starts every step from a Taylor
        predictor (slower, same result to the Newton tolerance).
    newton : {"full", "chord"}
        ``"full"`` (default): a fresh Jacobian and LU factorisation every
        Newton iteration.  ``"chord"``: keep the factorised matrix across
        iterations and steps while it contracts well (refreshed when the
        contraction rate exceeds 0.25, after a step needing more than 6
        iterations, or when h changes).  More iterations, far fewer
        factorisations: pays off for large n (the LU is O(n^3)); same
        solution to the Newton tolerance.
    closed_form : bool
        For :func:`symplectic.systems.linear` systems with ``"simpson"`` or
        ``"midpoint"`` (Newmark), step with the precomputed one-step matrix
        of :mod:`symplectic.linear` (one matrix-vector product per step, no
        Newton; ``newton_iterations`` are 0) -- the same trajectory as the
        Newton path to rounding.  Default True; False forces Newton.
        On linear systems ``"simpson"`` and ``"rk4"`` warn with
        :class:`symplectic.linear.StabilityWarning` when ``|h|`` reaches
        the stability limit 2 sqrt(2)/omega_max.
    check : bool
        The first time a system with user-supplied derivatives (Python
        callables in any form, compiled callbacks) is stepped or integrated,
        compare every supplied derivative with finite differences at q0 and
        at a perturbed q, and raise :class:`symplectic.DerivativeError` if one
        disagrees (a pass is remembered on the System).  Default True;
        False skips it, as does ``System(..., derivative_check=False)``.
        Built-in and SymPy-generated systems are never checked.

    Returns
    -------
    Trajectory
        with ``t``, ``q``, ``p``, ``qdot``, ``q_mid`` (None, (N, n) or
        (N, s - 2, n): see :class:`Trajectory`), ``newton_iterations``,
        ``energy``.

    Raises
    ------
    ConvergenceError
        If a step fails; ``err.trajectory`` holds the states computed so far
        and the message names the step, the time and the residual.
    DerivativeError
        A supplied derivative disagrees with finite differences (first use
        only; the message names the callback, the entry, both values and the
        layout it looks like).
    Exception from a callback, KeyboardInterrupt
        Propagate unchanged, with a note naming the step and time, and the
        steps completed before it in ``exc.trajectory``.
    MemoryError
        Before allocating, if the output arrays cannot fit in the available
        memory.
    """
    _check_system(system)
    _check_method(method)
    h = _real("h", _required("h", h))
    if h == 0.0:
        raise ValueError("h must be nonzero")
    t0 = _real("t0", t0)
    _required("n_steps", n_steps)
    if isinstance(n_steps, bool):
        raise TypeError("n_steps must be an int")
    try:
        n_steps = operator.index(n_steps)
    except TypeError:
        raise TypeError(f"n_steps must be an int, got {n_steps!r}") from None
    if n_steps < 0:
        raise ValueError(f"n_steps must be >= 0, got {n_steps}")
    q0 = _state("q0", q0, system.n)
    p0 = _momentum(system, q0, p0, qdot0, "p0", "qdot0")
    if newton not in ("full", "chord"):
        raise ValueError(f"newton must be 'full' or 'chord', got {newton!r}")
    _check_memory(_output_bytes(n_steps, system.n, method),
                  f"integrate(n_steps={n_steps}) with n = {system.n}")
    _derivcheck.ensure(system, q0, check)
    if system.builtin == "linear":
        from . import linear
        M, K = system._params["M"], system._params["K"]
        linear.check_stability(M, K, h, method, stacklevel=3)
        if closed_form and method in ("simpson", "midpoint"):
            return _linear_closed_form(system, M, K, q0, p0, h, n_steps, method, t0)
    try:
        t, q, p, qm, iters, done, fail = _core.integrate(
            system, q0, p0, h, n_steps, method, t0=t0, predictor=bool(predictor),
            chord=newton == "chord", **_newton_opts(rtol, max_iter))
    except BaseException as exc:
        # a callback raised, or Ctrl-C: keep the steps completed before it
        part = getattr(exc, "__dict__", {}).pop("_symplectic_partial", None)
        if part is not None:
            t, q, p, qm, iters, done = part
            exc.trajectory = Trajectory(system, method, h, t[:done + 1].copy(),
                                        q[:done + 1].copy(), p[:done + 1].copy(),
                                        None if qm is None else _q_mid(qm[:done].copy()),
                                        iters[:done].copy())
        raise
    if fail is None:
        return Trajectory(system, method, h, t, q, p, _q_mid(qm), iters)
    status, reason, k, tk, kit, res, res_rel = fail
    partial = Trajectory(system, method, h, t[:done + 1].copy(), q[:done + 1].copy(),
                         p[:done + 1].copy(), None if qm is None else _q_mid(qm[:done].copy()),
                         iters[:done].copy())
    raise ConvergenceError(
        f"{method} failed at step {k} (t = {tk:.17g}, h = {h:g}): {reason}; "
        f"{kit} Newton iterations, residual {res:.3g} (relative {res_rel:.3g}); "
        f"the trajectory up to t = {tk:.17g} is in .trajectory",
        step=k, t=tk, residual=res, iterations=kit, reason=reason, trajectory=partial)


def _linear_closed_form(system, M, K, q0, p0, h, n_steps, method, t0):
    """integrate() on systems.linear through the closed-form propagator."""
    import warnings
    from . import linear
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", linear.StabilityWarning)   # already warned
        out = linear.propagate(M, K, q0, p0, h, n_steps, method="simpson" if method == "simpson"
                               else "newmark", with_midpoint=method == "simpson")
    q, p = out[0], out[1]
    q_mid = out[2] if method == "simpson" else None
    t = t0 + h * np.arange(n_steps + 1, dtype=float)
    k = int(np.argmax(~np.isfinite(q).all(axis=1) | ~np.isfinite(p).all(axis=1)))
    if not (np.isfinite(q).all() and np.isfinite(p).all()):
        done = k - 1
        partial = Trajectory(system, method, h, t[:done + 1].copy(), q[:done + 1].copy(),
                             p[:done + 1].copy(), None if q_mid is None else q_mid[:done].copy(),
                             np.zeros(done, dtype=np.int32))
        tk = float(t[done])
        raise ConvergenceError(
            f"{method} failed at step {done} (t = {tk:.17g}, h = {h:g}): a non-finite value "
            f"(nan or inf) appeared; the trajectory up to t = {tk:.17g} is in .trajectory",
            step=done, t=tk, residual=float("nan"), iterations=0,
            reason="a non-finite value (nan or inf) appeared", trajectory=partial)
    return Trajectory(system, method, h, t, q, p, q_mid, np.zeros(n_steps, dtype=np.int32))
