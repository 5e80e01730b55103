"""The optimal control problem, the public face of the control module: it
reads the user's arguments, builds the transcription (:mod:`._transcription`:
the grid, the layout of the unknowns, the intervals' steps) and the NLP over
it (:mod:`._nlp`: bounds, objective, constraints, their derivatives), and
solves it (:meth:`Problem.solve`: IPOPT or SciPy's solvers, then the Newton
polish of :mod:`._polish`); the result is a :class:`~._solution.Solution`."""
import time

import numpy as np

from .._model import _runspec, _validate
from . import _curvature, _ends, _guess, _inputs, _ipopt, _polish, _scipy
from ._costs import Cost, effort
from ._nlp import NLP
from ._path import Path
from ._solution import Solution
from ._transcription import Transcription

def _bounds_pair(name, b, size):
    """(lo, hi), each (size,) with +-inf for none, from None, a pair of scalars or arrays."""
    if b is None:
        return np.full(size, -np.inf), np.full(size, np.inf)
    try:
        lo, hi = b
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a pair (lower, upper), got {b!r}") from None
    lo = np.broadcast_to(np.asarray(-np.inf if lo is None else lo, dtype=float), (size,))
    hi = np.broadcast_to(np.asarray(np.inf if hi is None else hi, dtype=float), (size,))
    if np.isnan(lo).any() or np.isnan(hi).any() or (lo > hi).any():
        raise ValueError(f"{name}: need lower <= upper (use +-inf for no bound), got {b!r}")
    return lo.copy(), hi.copy()


class Problem:
    """Steer ``system`` from ``start`` to ``end`` in ``duration`` seconds at least cost.

    Parameters
    ----------
    system : symplectic.System
        Any form (built-in, callables, compiled, SymPy), with its own force
        (dissipation) if it has one.  With holonomic constraints the scheme
        solves them as ``integrate`` does, the start must be given whole
        (on the constraint manifold); give the end
        conditions that the constraints leave free (a redundant one makes
        the problem degenerate).
    duration : float
        T (s): fixed, or with ``free_duration`` the first guess of it.
    intervals : int
        N: the steps of the transcription, h = T / N.
    method : str
        The scheme, ``symplectic.methods()``; the transcription has its
        order (midpoint 2, simpson 4, lobatto4 6, lobatto5 8, gauss2 4,
        gauss3 6).
    inputs : array_like (n, m), callable or "all"
        B: the generalized force of the inputs is B u, m inputs.  Required
        (a ValueError says so), unless the system has its own
        (``from_sympy(..., inputs=[u...])``): which coordinates are
        actuated is the problem's, and every coordinate actuated by default
        would solve another problem for an underactuated system (a
        cart-pole with a torque on its pole).  A vector (n,) is one input
        (``[1, 0]``: a force on the first coordinate); ``"all"`` the
        identity, every coordinate actuated.  A callable ``B(q)`` returning
        (n, m): inputs that act through the configuration (the force values
        at the force points become unknowns too, tied to B(q_i) u_i on the
        step's own states there: the variational schemes).
    inputs_jac : callable, optional
        With a callable B: ``dB/dq(q)`` -> (n, m, n), [c, j, l] =
        dB_cj/dq_l (exact derivatives); else central differences of B.
    start, end : dict, optional
        Conditions at t = 0 and t = T on any components of ``"q"``,
        ``"qdot"`` or ``"p"`` (p = M(q) qdot, the Legendre transform, as
        ``integrate(qdot0=...)`` takes it): arrays (n,) whose NaN entries
        are free; a missing key or end is free; a component may be given in
        ``"qdot"`` or in ``"p"``, not both.
    cost : Cost, optional
        ``effort(R)`` (default ``effort()``: 1/2 int |u|^2 dt), ``duration()``
        (T: minimum time), ``terminal(phi, grad)`` (a cost of the end state),
        ``running(l, grad)`` (int l(t, q, qdot, u) dt, at the scheme's force
        points: the variational schemes) or a
        weighted sum (``duration() + 0.01 * effort()``).
    input_bounds : (lower, upper), optional
        Bounds on every input value (scalars or (m,) arrays; None or +-inf:
        none).
    state_bounds : (lower, upper), optional
        Bounds on q at every node ((n,) arrays or scalars).
    path : Path or list of Path, optional
        Path constraints ``control.path(c, jac, lower, upper)``: lower <=
        c(t, q, qdot, u) <= upper at every force point of every step, on
        the step's own states there (the variational schemes).
    free_duration : (T_min, T_max), optional
        Let the duration vary between these bounds (s, 0 < T_min <= T_max,
        T_max may be inf): T is then an unknown (h = T / N), whose
        derivative of every step comes from the core
        (``sym_run.deriv.h_jacobians``: the variational schemes, not rk4).
    **method_options
        Newton's options of the steps (``rtol``, ``max_iter``, ``newton``;
        ``branch_check`` is ``"off"`` unless given: the dynamics constraints
        are the step's equations, which any of their roots satisfies, and a
        trial input -- at one force point, say -- changes the energy as no
        smooth force does).

    Attributes
    ----------
    transcription : the grid, the layout of the unknowns z and the
        intervals' steps (:class:`symplectic.control._transcription.Transcription`).
    nlp : the nonlinear program over it: bounds, objective, constraints and
        their derivatives (:class:`symplectic.control._nlp.NLP`), which
        :meth:`solve` hands to the solver.

    Notes
    -----
    The unknowns are the states (q_k, p_k), k = 0..N, and the inputs
    u_ki at the method's force points t_k + x_i h (``u`` of shape
    (N, P, m)); the dynamics constraints are (q_{k+1}, p_{k+1}) =
    Phi_h(q_k, p_k; B u_k), the forced step of ``integrate`` itself.
    """

    def __init__(self, system, duration, intervals, *, method="simpson", inputs=None, start=None,
                 end=None, cost=None, input_bounds=None, state_bounds=None, free_duration=None,
                 path=None, inputs_jac=None, **method_options):
        self.system = _validate.system(system)
        n = self.system.n
        self.duration = _validate.positive("duration", duration)
        self.intervals = _validate.integer("intervals", intervals, 1)
        self.h = self.duration / self.intervals
        m = _validate.method(method)
        if m.implicit:
            # the constraints are the step's equations: any root of them is a discrete
            # trajectory, and the energy of a trial input is no sign of a wrong one
            method_options.setdefault("branch_check", "off")
        spec = _runspec.run_spec(method, self.h, 1, 0.0, options=method_options)
        #: integrate's keywords of the steps (Newton's options), for a replay
        self.method_options = dict(method_options)
        self.method = m.name
        self.free = free_duration is not None
        T_bounds = None
        if self.free:
            if not m.symplectic:
                raise NotImplementedError(f"control.Problem: a free duration needs the step's "
                                          f"derivative in h, which {self.method} does not give; "
                                          f"use a variational scheme")
            T_bounds = _bounds_pair("free_duration", free_duration, 1)
            if not T_bounds[0][0] > 0:
                raise ValueError(f"free_duration: the lower bound must be > 0, got "
                                 f"{free_duration!r}")
        self.start = _ends.conditions("start", start, n)
        self.end = _ends.conditions("end", end, n)
        inp = _inputs.bind(self.system, inputs, inputs_jac,
                           _ends.given("q", self.start, np.zeros(n)))
        self.inputs, self.n_inputs = inp.given, inp.m
        if self.system.n_constraints:
            self._constrained_start(m, spec.options)
        cost = effort() if cost is None else cost
        if not isinstance(cost, Cost):
            raise TypeError(f"cost must be control.effort(R), control.duration(), "
                            f"control.terminal(phi, grad), control.running(l, grad) or a "
                            f"weighted sum of them, got "
                            f"{type(cost).__name__}")
        self.cost = cost
        bound = cost.bind(self.n_inputs)
        paths = self._bind_paths(path)
        points = bool(bound.running) or bool(paths) or inp.state_dependent
        if points and not m.symplectic:
            what = "a running cost" if bound.running else "a path constraint" if paths \
                else "inputs B(q)"
            raise NotImplementedError(f"control.Problem: {what} needs the step's states "
                                      f"at its force points (sym_run.deriv.points), which "
                                      f"{self.method} does not give; use a variational scheme")
        if bound.timed and not self.free:
            raise ValueError("control.Problem: the cost duration() needs free_duration=(T_min, "
                             "T_max): with a fixed duration it is a constant")
        self.transcription = tr = Transcription(self.system, spec, self.intervals,
                                                self.h, inp, free=self.free, points=points)
        self.P = tr.P
        self.n_variables = tr.n_variables
        lo, hi = self._variable_bounds(input_bounds, state_bounds, T_bounds)
        self.nlp = NLP(tr, bound, paths, self.start, self.end, lo, hi)
        self._exact = None              # built once: the Curvature, or why there is none

    # ------------------------------------------------------------ construction
    def _bind_paths(self, path):
        """The path constraints, bound (sizes, bounds) and checked."""
        if path is None:
            return []
        items = [path] if isinstance(path, Path) else list(path)
        for pc in items:
            if not isinstance(pc, Path):
                raise TypeError(f"path must be a control.path(c, jac, lower, upper) or a list of "
                                f"them, got {type(pc).__name__}")
        n, m = self.system.n, self.n_inputs
        q = _ends.given("q", self.start, np.zeros(n))
        return [pc.bind(n, m, (0.0, q, np.zeros(n), np.zeros(m))) for pc in items]

    def _variable_bounds(self, input_bounds, state_bounds, T_bounds):
        """(lower, upper) of every unknown: q at the nodes, the inputs, (the
        forces F: none), the duration T."""
        tr = self.transcription
        n, N, m = self.system.n, self.intervals, self.n_inputs
        ulo, uhi = _bounds_pair("input_bounds", input_bounds, m)
        qlo, qhi = _bounds_pair("state_bounds", state_bounds, n)
        lo = np.concatenate([np.tile(np.concatenate([qlo, np.full(n, -np.inf)]), N + 1),
                             np.tile(ulo, N * tr.P), np.full(tr.n_f, -np.inf)])
        hi = np.concatenate([np.tile(np.concatenate([qhi, np.full(n, np.inf)]), N + 1),
                             np.tile(uhi, N * tr.P), np.full(tr.n_f, np.inf)])
        if T_bounds is not None:                    # the duration T itself
            lo = np.append(lo, T_bounds[0])
            hi = np.append(hi, T_bounds[1])
        return lo, hi

    def _constrained_start(self, m, options):
        """A system with holonomic constraints: the scheme solves them and
        the whole start is given, on the constraint manifold (every later
        node is on it by the step itself)."""
        if not m.constrained:
            raise ValueError(f"control.Problem: {self.method} does not solve systems with "
                             f"holonomic constraints; use a variational scheme")
        full = _ends.full_start(self.system, self.start)
        if full is None:
            raise NotImplementedError("control.Problem: a system with holonomic constraints needs "
                                      "the whole start (q and qdot or p): it is fixed on the "
                                      "constraint manifold")
        _validate.constrained_state(self.system, m, full[0], full[1], "start['q']",
                                    "start's momentum", True, options)

    def use_hessian(self, hessian):
        """Sets the dynamics' curvature of the Hessian (:meth:`hess_values`,
        the polish) for ``hessian`` (as :meth:`solve`'s: "auto", "exact",
        "differences", or "limited-memory", whose polish takes "auto");
        "exact" raises ValueError naming what the exact Hessian does not
        cover.  Returns the curvature used: "exact" or "differences"."""
        if hessian not in ("auto", "exact", "differences", "limited-memory"):
            raise ValueError(f"hessian must be 'auto', 'exact', 'differences' or "
                             f"'limited-memory', got {hessian!r}")
        nlp = self.nlp
        nlp.curvature = None
        if hessian != "differences":
            if self._exact is None:
                try:
                    self._exact = _curvature.Curvature.for_nlp(nlp)
                except _curvature.Unsupported as e:
                    self._exact = str(e)
            if isinstance(self._exact, str):
                if hessian == "exact":
                    raise ValueError(f"hessian='exact': {self._exact}; use "
                                     f"hessian='differences'")
            else:
                nlp.curvature = self._exact
        # the exact curvature takes the steps' interior nodes from the points' states
        self.transcription.keep_points = nlp.curvature is not None
        return "exact" if nlp.curvature is not None else "differences"

    # ------------------------------------------------------------ the NLP, for the user
    def guess(self, guess=None):
        """The unknowns z of a guess (as :meth:`solve`'s ``guess=``: None, a
        dict of arrays or a :class:`Solution`), before the bounds clip them."""
        return _guess.initial(self, guess)

    def point_times(self, h=None):
        """(N, P): the times of the inputs u_ki, t_k + x_i h."""
        return self.transcription.point_times(h)

    def objective(self, z):
        """The discrete cost J(z) (see :mod:`symplectic.control._costs`)."""
        return self.nlp.objective(z)

    def objective_grad(self, z):
        """Its exact gradient (n_variables,)."""
        return self.nlp.objective_grad(z)

    def constraints(self, z):
        """The constraints at z: Phi_h(q_k, p_k; B u_k) - (q_{k+1}, p_{k+1}),
        k = 0..N-1 (N 2n values), then the end conditions, with inputs B(q)
        F_ki - B(q_ki) u_ki (interval by interval, point by point; these = 0),
        then the path constraints c(t_ki, q_ki, qdot_ki, u_ki), interval by
        interval and point by point (between their bounds:
        :meth:`constraint_bounds`)."""
        return self.nlp.constraints(z)

    def constraint_bounds(self):
        """(lower, upper) of every constraint row."""
        return self.nlp.constraint_bounds()

    def constraints_jac(self, z):
        """Their exact Jacobian (dense, rows x n_variables)."""
        return self.nlp.constraints_jac(z)

    def jac_structure(self):
        """(rows, cols) of the constraint Jacobian's nonzeros."""
        return self.nlp.jac_structure()

    def jac_values(self, z):
        """The Jacobian's values in the order of :meth:`jac_structure`."""
        return self.nlp.jac_values(z)

    def hess_structure(self):
        """(rows, cols) of the lower triangle of the Lagrangian's Hessian."""
        return self.nlp.hess_structure()

    def hess_values(self, z, obj_factor, nu):
        """obj_factor Hess J + Hess (nu . c) in the order of
        :meth:`hess_structure`, the dynamics' curvature that of the last
        :meth:`solve`'s ``hessian`` (before one: central differences)."""
        return self.nlp.hess_values(z, obj_factor, nu)

    def kkt_residual(self, z, nu):
        """The first-order conditions' residual at (z, nu) (:meth:`NLP.kkt_residual`)."""
        return self.nlp.kkt_residual(z, nu)

    # ------------------------------------------------------------ solve
    def solve(self, solver="auto", *, tol=1e-10, guess=None, max_iter=500, polish=None,
              polish_tol=1e-12, hessian="auto", verbose=False):
        """Solve the transcribed problem; returns a :class:`Solution`.

        ``solver``: ``"ipopt"`` (IPOPT through ``ipyopt``, the extra
        ``symplectic-vi[control]``: sparse exact Jacobian, bounds by its
        interior point method; ``tol`` its ``tol``), ``"trust-constr"`` or
        its alias ``"scipy"`` (SciPy's: the sparse exact Jacobian and the
        same Hessian, bounds and path constraints by its interior point
        method, else its SQP; ``tol`` its ``gtol``, the largest entry of
        the Lagrangian's gradient and of the constraints' violation),
        ``"slsqp"`` (SciPy's SLSQP: dense, a quasi-Newton Hessian, for up
        to a few hundred unknowns; ``tol`` its ``ftol``; only when asked:
        on a cart-pole of 20 intervals it took 19.5 s against trust-constr's
        0.53 s, for the same optimum), or ``"auto"``: IPOPT when ``ipyopt``
        imports (the ``control`` extra, Linux x86_64 wheels), else SciPy's
        trust-constr, the fastest of the installed ones with the sparse exact
        derivatives.  ``Solution.solver`` names the one that ran.
        ``hessian`` (IPOPT, trust-constr; the polish's too): ``"exact"`` --
        the dynamics' curvature by the second-order adjoint of the step,
        with the third derivatives of L (and of the forces and holonomic
        constraints) that SymPy derives: for a system from SymPy, a
        variational scheme, inputs constant or the system's own B(q), and
        running costs and path constraints, if any, from SymPy (else a
        ValueError names what is not covered) --, ``"differences"`` --
        central differences of the exact gradients, block by block,
        accurate to about 1e-8 --, ``"auto"`` (the default: exact where
        covered, else differences) or
        ``"limited-memory"`` (IPOPT's quasi-Newton; SciPy's BFGS for the
        cost and SR1 for the constraints; the polish as ``"auto"``).  The
        cost's own Hessian is exact in each.  ``Solution.hessian`` names
        the one used.  ``guess``: None (the straight
        line between the end positions at rest, zero inputs), a
        :class:`Solution` (a warm start,
        resampled to this problem's nodes and points), or a dict with
        ``"q"``, ``"p"`` ((N+1, n)) and/or ``"u"`` ((N, P, m)); ``"u"``
        alone with a fully given start is simulated from it (with holonomic
        constraints the default guess is that simulation with no input).

        ``polish`` (default: on after a successful solve): Newton's
        iteration on the first-order conditions -- the
        exact gradient and constraint Jacobian, the constraints' curvature
        as for ``hessian`` (``"exact"`` or ``"differences"``) -- with the
        variables at a bound held there, until their residual
        (``Solution.kkt_residual``) is below ``polish_tol`` or stops
        falling (at most 8 iterations; the sparse Newton matrix factorised
        by SuperLU: an iteration costs about an evaluation of the Hessian;
        nothing but the residual when the solver's point already meets
        ``polish_tol``).  SLSQP stops on the change of the cost, which
        leaves the inputs only about sqrt(tol) accurate, IPOPT on its
        scaled residuals and trust-constr also on its trust radius.
        """
        if solver == "auto":
            solver = "ipopt" if _ipopt.available() else "trust-constr"
        solver = "trust-constr" if solver == "scipy" else solver
        if solver not in ("ipopt", "trust-constr", "slsqp"):
            raise ValueError(f"solver must be 'auto', 'ipopt', 'trust-constr', 'slsqp' or "
                             f"'scipy', got {solver!r}")
        used = self.use_hessian(hessian)
        nlp = self.nlp
        z0 = np.clip(self.guess(guess), nlp.lower, nlp.upper)
        self._check_callbacks(z0)
        t_start = time.perf_counter()
        if solver == "ipopt":
            z, nu, active, report = _ipopt.solve(nlp, z0, tol=tol, max_iter=max_iter,
                                                 hessian=hessian, verbose=verbose)
        elif solver == "trust-constr":
            z, nu, active, report = _scipy.trust_constr(nlp, z0, tol, max_iter, hessian,
                                                        verbose=verbose)
        else:
            z, nu, report = _scipy.slsqp(nlp, z0, tol, max_iter)
            active = None
        kkt = None
        if polish or (polish is None and report.success):
            z, nu, kkt = _polish.polish(nlp, z, nu, polish_tol, active)
        elapsed = time.perf_counter() - t_start
        sol = Solution(self, z, report, elapsed, nu, kkt)
        sol.hessian = "limited-memory" if hessian == "limited-memory" else used
        return sol

    def _check_callbacks(self, z):
        """The user's derivatives of terminal and running costs and of path
        constraints against central differences of their values, at the first
        guess (once per term object; ``control.terminal/running/path(...,
        check=False)`` skips one)."""
        tr, nlp = self.transcription, self.nlp
        Y, U = tr.split(z)
        nlp.cost.check(y_end=Y[-1])
        if nlp.terms.running or nlp.paths:
            st = tr.steps(z, points=True)
            _, t, Q, V, Uf, _ = nlp.terms.args(np.arange(self.intervals), st.points, U,
                                               tr.step_of(z))
            point = (t[0], Q[0], V[0], Uf[0])
            nlp.cost.check(point=point)
            for pc in nlp.paths:
                pc.check(*point)
