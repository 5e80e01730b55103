"""The public run functions :func:`step`, :func:`integrate` and
:func:`step_tangent`: each checks its arguments into a run spec
(:func:`symplectic._model._runspec.run_spec`), prepares the run by the one
prologue (:func:`symplectic._run._prepare.prepare`) and runs it through the
one driver (:mod:`symplectic._run._driver`) on a kept workspace."""
from .._model import _runspec, _validate
from .. import _engine
from . import _docs, _driver, _prepare
from ._failures import convergence_error

__all__ = ["step", "integrate", "step_tangent"]


@_docs.fill
def step(system, q, p=None, h=None, method="simpson", *, qdot=None, rtol=None, max_iter=None,
         closed_form=True, check=True, force=None, force_jac=None, t=0.0, t_span=None,
         branch_check="auto", newton="auto", linear_solver="auto"):
    """Advance one step: ``(q, p)`` at time t -> ``(q1, p1)`` at t + h.

    The states are bitwise those of row 1 of :func:`integrate` run for one
    step from ``(q, p)`` at ``t0 = t`` with the same options.

    Parameters
    ----------
    system : symplectic.System
    q, p : array_like (n,)
        Coordinates and canonical momenta p = M(q) qdot.
    qdot : array_like (n,), optional
        Velocities instead of ``p`` (exactly one of the two): p = M(q) qdot.
    {{h}}
    {{method}}
    {{newton_tolerances}}
    {{newton}}
    {{branch_check}}
    {{linear_solver}}
    {{closed_form}}
    {{check}}
    {{force}}
        An array is one row (n,) or (1, n) here: the force held over this
        step (a sampled controller calls ``step`` in a loop).
    t : float
        The time of ``(q, p)`` (default 0), for a time-dependent force.
    t_span : tuple of two floats, optional
        The step as a time span ``(t, t1)`` instead of ``h`` and ``t``: h = t1 - t (a
        given h must agree to 1e-9 relative, a nonzero ``t`` must equal
        t_span[0]).  The other words of :func:`integrate` (``t_eval``,
        ``store_every``, ``events``, ``progress``) describe runs of many
        steps; one step has its state at t + h only.

    Returns
    -------
    q1, p1 : ndarray (n,)

    Raises
    ------
    ConvergenceError
        Newton failed, a value became non-finite, or M stopped being positive
        definite within the step.
    ValueError
        M(q) is not symmetric positive definite at the given q (before the
        step; the message names q, the eigenvalues and the callback or the
        system's parameters).
    DerivativeError
        A supplied derivative disagrees with finite differences (first use only).
    """
    system = _validate.system(system)
    spec = _runspec.run_spec(method, h, 1, t, t_span, one_step=True, closed_form=closed_form,
                              check=check, options=dict(rtol=rtol, max_iter=max_iter,
                                                        branch_check=branch_check, newton=newton,
                                                        linear_solver=linear_solver))
    # a step in a sampled loop would warn at every call: only a linear system's, whose
    # stability is that of every state (integrate warns, once per run)
    prep = _prepare.prepare(system, spec, q, p, qdot=qdot, names=("q", "p", "qdot"),
                            force=force, force_jac=force_jac, warn="linear", what="step")
    q1, p1, failure = _driver.run_step(prep)
    if failure is not None:
        raise convergence_error(spec.method, spec.h, failure, system=prep.system)
    return q1, p1


@_docs.fill
def integrate(system, q0, p0=None, h=None, n_steps=None, method="simpson", *, qdot0=None,
              t0=0.0, t_span=None, t_eval=None, store_every=None, events=None, progress=False,
              rtol=None, max_iter=None, predictor=True, newton="auto", closed_form=True,
              check=True, force=None, force_jac=None, branch_check="auto", tangent=False,
              wrt=None, linear_solver="auto"):
    """Integrate ``n_steps`` steps of size ``h`` from ``(q0, p0)`` at ``t0``,
    or over ``t_span``.

    The steps are fixed (a variational integrator keeps its long-time
    behaviour only at a constant step: docs/theory.md, *Why fixed steps*);
    ``t_span``, ``t_eval``, ``store_every``, ``events`` and ``progress``
    work around the fixed step, never change it.

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
    {{h}}
        With ``t_span``: the largest step, adjusted down so that a whole
        number of steps spans it (the step used is ``traj.h``).
    n_steps : int
        Number of steps (>= 0); the trajectory has n_steps + 1 points.
        With ``t_span`` instead of h: h = (tf - t0) / n_steps.
    {{method}}
    qdot0 : array_like (n,), optional
        Initial velocities instead of ``p0`` (exactly one of the two):
        p0 = M(q0) qdot0.
    t0 : float
        Initial time (default 0; with ``t_span``, ``t_span[0]``: a nonzero
        t0 must then equal it).
    t_span : (t0, tf), optional
        The interval to integrate, instead of ``n_steps``: n = ceil(|tf -
        t0| / |h|) steps of h = (tf - t0) / n, so that the last time is tf
        exactly.  Given with both h and n_steps, they must agree with it
        (ValueError otherwise).  tf < t0 integrates backward (h < 0).
    t_eval : array_like, optional
        Return the states at these times instead of the step nodes: sorted
        in the direction of integration, inside the interval.  q, qdot and
        p come from each step's Hermite dense polynomial (p = M(q) qdot;
        see :meth:`Trajectory.dense_state` for the orders); only these
        states are kept.
    store_every : int, optional
        Keep every k-th step and the last one (memory for those rows only:
        the C loop keeps nothing else); ``traj.newton_iterations`` then
        sums the steps between rows.  Not with ``t_eval``.
    events : callable or list of callables, optional
        Functions g(t, q, p) -> float whose zeros are located (as in
        scipy.integrate.solve_ivp): attribute ``terminal`` (True, or the
        number of occurrences that stop the run) and ``direction`` (> 0:
        only upward crossings, < 0: downward, 0: both).  Each is evaluated
        once per step at the step's end; a sign change is located on the
        step's dense polynomial by Brent's method to 1e-12 in t (4 ulp of t
        beyond |t| = 1e3).  Results in ``traj.t_events``, ``q_events``,
        ``p_events``; a terminal event ends the trajectory at the end of
        the step that contains it (``status`` 1, the event state in the
        ``*_events`` lists; ``t_eval`` times after it are dropped).
    progress : bool
        Show a progress bar with the rate and the time left (tqdm when
        installed, else one line on stderr).  Off by default; it costs
        nothing when off and under 2 % when on (+0.2 % by median on a
        quiet machine, on the cheapest step there is:
        benchmarks/RESULTS.md section 15).
    {{newton_tolerances}}
    predictor : bool
        Start Newton from the extrapolated interpolating polynomial of the
        previous step (default); False starts every step from a Taylor
        predictor (slower, same result to the Newton tolerance).
    {{newton}}
    {{branch_check}}
    {{linear_solver}}
    {{closed_form}}
    {{check}}
    {{force}}
    tangent : bool
        Also propagate the state-transition matrix d(q_k, p_k)/d(q_0, p_0)
        (``traj.tangent``, (rows, 2n, 2n), rows and columns ordered (q, p)):
        each step's exact derivative (implicit function theorem on the step
        equations at the converged root, the Newton matrix refactorised
        there; rk4: its linearised stages) times the last.  About one more
        Newton iteration and 2n linear solves per step.  The states are the
        same with and without it.  Every method and system form, with or
        without a force (its Jacobians enter as in Newton); a system of
        Python callables gets the second derivatives it needs from the
        core's finite differences when it does not give them (about 1e-10
        relative over 1000 steps with M, dM/dq and grad V given, 1e-6 with
        M and V alone: tests/run/test_tangent.py); not with
        ``t_eval``.  A constrained system's: the exact derivative of the
        constrained step map (the projection onto G M^-1 p = 0 included),
        whose columns lie in the tangent space of the manifold {g(q) = 0,
        G(q) M(q)^-1 p = 0} at each row; on a variation in that tangent
        space at (q0, p0) it is the derivative along the manifold (and
        preserves the symplectic form restricted to it); a variation off
        the manifold is carried onto it by the first step.
    wrt : sequence of str, optional
        With ``tangent=True``: also the derivatives of the run with respect
        to parameters, in ``traj.param_tangent`` ((rows, 2n, n_par):
        d(q_k, p_k)/dtheta at fixed (q0, p0) -- not at fixed qdot0 --, exact
        for the discrete run) and ``traj.param_names``: of a SymPy system's
        M, V and constraints, named as in ``system.parameters`` (symbol
        names, e.g. ``["m2", "l1"]``), or of any built-in (its ``params``
        names, ``"m[i]"`` for a chain's lists; ``"mass[j]"``,
        ``"com[j][k]"``, ``"inertia[j][xx]"`` of a multibody tree's body j;
        ``"damping"``, ``"damping[i]"`` for the joint damping; ``"M[i,j]"``, ``"K[i,j]"``
        with i <= j for ``linear``, M_ij and M_ji moving together, the run
        then taking the Newton step, not the closed form).  A parameter of
        the constraints moves the constraint manifold: S_k is still at
        fixed (q0, p0), the first step carrying the start onto the moved
        manifold; for a start that moves with theta (e.g. from
        ``System.project``) add ``traj.tangent @ dx0/dtheta``.  A SymPy
        system's forces may depend on the parameters too (their dF/dtheta
        is derived with them).  Variational methods only
        (NotImplementedError otherwise); for systems of Python callables
        ``sensitivity.param_tangent_fd`` differentiates whole runs.

    Returns
    -------
    Trajectory
        with ``t``, ``q``, ``p``, ``qdot``, ``y``, ``q_mid`` (None, (N, n)
        or (N, s - 2, n): see :class:`Trajectory`), ``newton_iterations``,
        ``energy``, ``status``, ``message``, ``counts``, the ``work`` and
        ``impulse`` of the forces, with events ``t_events``, ``q_events``,
        ``p_events``, for a constrained system ``multipliers``, and with
        ``tangent=True`` the ``tangent``.

    Raises
    ------
    ConvergenceError
        If a step fails; ``err.trajectory`` holds the states computed so far
        and the message names the step, the time and the residual.
    ValueError
        M(q0) is not symmetric positive definite (before the first step; the
        message names q0, the eigenvalues and the callback or the system's
        parameters).
    DerivativeError
        A supplied derivative disagrees with finite differences (first use
        only; the message names the callback, the entry, both values and the
        layout it looks like).
    Exception from a callback or an event function, KeyboardInterrupt
        Propagate unchanged, with a note naming the step and time, and the
        steps completed before it in ``exc.trajectory``.
    MemoryError
        Before allocating, if the output arrays cannot fit in the available
        memory.
    """
    system = _validate.system(system)
    spec = _runspec.run_spec(method, h, n_steps, t0, t_span, t_eval=t_eval,
                              store_every=store_every, events=events, progress=progress,
                              options=dict(rtol=rtol, max_iter=max_iter, newton=newton,
                                           predictor=predictor, branch_check=branch_check,
                                           linear_solver=linear_solver),
                              closed_form=closed_form, check=check, tangent=tangent)
    if wrt is not None and not tangent:
        raise ValueError("integrate: wrt= needs tangent=True")
    prep = _prepare.prepare(system, spec, q0, p0, qdot=qdot0, force=force, force_jac=force_jac,
                            force_rows=spec.n_steps, wrt=wrt, warn="steps")
    return _driver.run_trajectory(prep, f"integrate ({spec.method.name})")


def step_tangent(system, q, p, h, method="simpson", check=True, *, force=None, force_jac=None,
                 t=0.0):
    """One step and its exact tangent map: (q1, p1, D), D = d(q1, p1)/d(q, p)
    (2n, 2n) in (q, p) ordering (the implicit function theorem on the
    discrete Euler-Lagrange equations, with the force's terms dF/dq, dF/dqdot
    when there is one; the linearised stages for RK4; constrained: the
    derivative of the constrained step map, columns in the tangent space of
    the manifold {g = 0, G M^-1 p = 0} at (q1, p1), see :func:`integrate`).  ``force``,
    ``force_jac`` and ``t`` as for :func:`step`; the system's own force
    (``System.force``) is included.  Inputs are checked as :func:`step`
    checks them, but for a constrained system's start, which may lie off
    the manifold; a failed step raises the binding's RuntimeError
    ("step_tangent failed: <reason> (residual r)")."""
    system = _validate.system(system)
    spec = _runspec.run_spec(method, h, 1, t, one_step=True, check=check)
    # the derivative of the step map on all of R^2n: (q, p) may be off a constraint manifold
    prep = _prepare.prepare(system, spec, q, p, names=("q", "p", "qdot"), force=force,
                            force_jac=force_jac, warn="never", what="step_tangent",
                            manifold=False)
    m, f = spec.method, prep.force
    if f is None:
        return _engine.step_tangent(prep.system, prep.q0, prep.p0, spec.h, m.name)
    return _engine.step_tangent(prep.system, prep.q0, prep.p0, spec.h, m.name,
                                force=f.spec(system.n), t=spec.t0)
