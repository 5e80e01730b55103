"""The Trajectory that :func:`symplectic.integrate` returns."""
import collections
import warnings

import numpy as np

from . import _dense, _io

#: The work of a run (C counters; all zero for the linear closed form but
#: ``steps``): accepted steps, requests to the system (each at one point, for
#: one or more of M, A, H, V, grad V, hess V), Newton iterations, LU
#: factorisations of the Newton matrix, and the implicit schemes' branch
#: checks: roots checked by continuation in h (``branch_checks``) and those
#: found on a wrong branch, whose step was redone from the continued root
#: (``branch_fixes``; the checks' evaluations and factorisations are counted
#: in the first four).
Counts = collections.namedtuple(
    "Counts", "steps evaluations newton_iterations factorizations branch_checks branch_fixes",
    defaults=(0, 0))

#: What :meth:`Trajectory.dense_state` returns.
DenseState = collections.namedtuple("DenseState", "q p qdot")


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
    newton_iterations : ndarray (N,) of int, or None
        Newton iterations of each step (0 for rk4); with ``store_every=k``
        the iterations of the steps between consecutive rows (rows - 1
        values); None with ``t_eval``.
    multipliers : ndarray (N, s, m) or None
        For a system with m holonomic constraints g(q) = 0: the Lagrange
        multipliers lambda_a of each step at its s nodes t_k + c_a h (c_a as
        for ``q_mid``, ends included: a = 0 at t_k, a = s - 1 at t_{k+1}).
        The constraint force at a node is -G(q)^T lambda (G = dg/dq), e.g. the
        rod tension lambda l of ``systems.pendulum_cartesian``.  Both
        neighbouring steps give a value at t_k (lambda_{s-1} of step k - 1
        and lambda_0 of step k): two approximations of lambda(t_k) of the
        scheme's order or lower (docs/guide/constraints.md).  With
        ``store_every=k``: those of the step that ends at each stored row
        after the first (rows - 1 of them).  None without constraints, and
        with ``t_eval``.
    tangent : ndarray (N+1, 2n, 2n) or None
        With ``tangent=True``: the state-transition matrix
        Phi_k = d(q_k, p_k)/d(q_0, p_0) at each stored row (rows and columns
        ordered (q, p); row 0 the identity; an Integrator's pieces: from its
        origin), propagated with the exact derivative of each step -- the
        derivative of the discrete map, exact to Newton's tolerance, which
        approximates the flow's at the method's order.  Thinned with
        ``store_every`` like the states.  None otherwise.
    param_tangent : ndarray (N+1, 2n, n_par) or None
        With ``tangent=True, wrt=[names]`` (a SymPy system): the exact
        derivatives S_k = d(q_k, p_k)/dtheta of the discrete run with respect
        to the parameters named in ``param_names`` (column j: parameter j),
        at fixed (q0, p0) (row 0 is zero); units of q or p per unit of the
        parameter.  None otherwise.
    param_names : tuple of str or None
        The parameters of ``param_tangent``'s columns.
    energy : ndarray (N+1,)
        H(q_k, p_k) = 1/2 p^T M^-1 p + V (computed on first access).  On a
        partial trajectory (``status`` -1) it has a value for every row: a
        row whose state overflowed -- a non-finite q or p, or a finite
        state at which the evaluation gives a non-finite value (a callback
        returned inf or nan, or raised OverflowError or
        FloatingPointError) -- gets nan, with a RuntimeWarning that names
        those rows and the first reason; any other error of a callback
        still propagates.  Built-in and compiled systems give +inf where a
        finite state's energy overflows the double range (the core's rule),
        Python callables nan.  On a completed run (status 0 or 1) any error
        propagates, as before.  ``qdot`` follows the same rule.
    work : ndarray (N+1,)
        The work done by the non-conservative forces from t_0 to t_k, summed
        step by step with the scheme's own quadrature,
        W_{k+1} = W_k + h sum_i b_i F_i . qdot_i (RK4: its stages), so that
        ``energy - work`` is what a forced run conserves, to the order of the
        method (:func:`symplectic.analysis.energy_balance`); zeros without a
        force.
    impulse : ndarray (N+1, n)
        The generalized impulse of the forces from t_0 to t_k with the same
        quadrature, h sum_i b_i F_i per step: along a cyclic coordinate c,
        p_c(t_k) - p_c(t_0) = impulse[k, c] to rounding
        (:func:`symplectic.analysis.momentum_balance`); zeros without a force.
    force : symplectic.forces.Force or None
        The force of the run (the system's own included), None without one.
    y : ndarray (N+1, 2n)
        The stacked state [q, p] of each row (scipy's ``sol.y`` is its
        transpose).
    status : int
        0: the run reached its end; 1: a terminal event stopped it; -1: the
        steps before a failure (the trajectory of a ConvergenceError or an
        interrupted run).
    message : str
        What ``status`` means for this run (the event, the time it stopped,
        an adjusted step size).
    t_events, q_events, p_events : list of ndarray, or None
        With ``events=``: for each event function, the times (k,) and the
        states (k, n) where it crossed zero (None without events).
    counts : Counts
        The work of the run: ``steps``, ``evaluations`` (requests to the
        system, each at one point), ``newton_iterations``,
        ``factorizations`` (LU of the Newton matrix); ``nfev`` and ``nlu``
        are scipy's names for the second and the fourth.
    store_every : int or None
        1: every step is a row; k: every k-th step and the last; None: the
        rows are the ``t_eval`` times.
    method, h, system
        What produced it (h: the step used, after a ``t_span`` adjustment).
        ``system`` is None on a trajectory loaded from a file whose system
        could not be rebuilt (:func:`symplectic.load`); what needs it
        (``energy``, ``qdot`` when not stored, ``dense_state``, the Hermite
        ``dense``) then raises a ValueError that says so, and
        ``load(path, system=S)`` or ``traj.system = S`` attaches one.
    t0 : float or None
        The initial time of the run: ``t[0]`` when the rows are steps, the
        saved value for a loaded trajectory, None for ``t_eval`` rows (whose
        first time need not be t0).
    saved : dict or None
        For a trajectory from :func:`symplectic.load`: what the file says
        about the run -- ``format_version``, ``symplectic_version``,
        ``system`` (its description: ``kind``, ``name``, ``n``, ``repr``,
        ``params``, ``text``) and ``force`` (its description, or None).
        None otherwise.

    Notes
    -----
    Pickling: a Trajectory pickles with its system and its force, so that it
    can come back from a process pool, when both do: built-in systems, SymPy
    systems and their forces (compiled again from their expressions in the
    unpickling process, from the on-disk cache), systems and forces of
    module-level Python functions.  Not: a lambda or a closure (pickle's
    own limitation), :meth:`System.from_cfunc` and
    :func:`symplectic.forces.from_cfunc` (a code address is process-local).
    :meth:`save` keeps the arrays of any trajectory in a plain ``.npz`` file.
    """

    def __init__(self, system, method, h, t, q, p, q_mid, newton_iterations, *, status=0,
                 message="completed", counts=None, store_every=1, events=None, qdot=None,
                 work=None, impulse=None, force=None, multipliers=None, t0=None,
                 tangent=None, param_tangent=None, param_names=None):
        self.system = system
        self.method = method
        self.h = h
        self.t = t
        self.q = q
        self.p = p
        self.q_mid = q_mid
        self.newton_iterations = newton_iterations
        self.status = status
        self.message = message
        self.counts = counts
        self.store_every = store_every
        self.t_events, self.q_events, self.p_events = events if events else (None, None, None)
        self.multipliers = multipliers
        self.tangent = tangent
        self.param_tangent = param_tangent
        self.param_names = param_names
        self._energy = None
        self._qdot = qdot
        self._work = work
        self._impulse = impulse
        self.force = force
        self._t0 = t0
        self.saved = None

    @property
    def work(self):
        if self._work is None:
            self._work = np.zeros(len(self.t))
        return self._work

    @property
    def impulse(self):
        if self._impulse is None:
            self._impulse = np.zeros(self.q.shape)
        return self._impulse

    @property
    def y(self):
        """The stacked state [q, p], (N+1, 2n)."""
        return np.hstack([self.q, self.p])

    @property
    def nfev(self):
        """Requests to the system (``counts.evaluations``)."""
        return None if self.counts is None else self.counts.evaluations

    @property
    def nlu(self):
        """LU factorisations of the Newton matrix (``counts.factorizations``)."""
        return None if self.counts is None else self.counts.factorizations

    @property
    def energy(self):
        if self._energy is None:
            self._energy = self._by_rows(self._need_system("energy").energy, "energy", ())
        return self._energy

    @property
    def qdot(self):
        """Velocities qdot = M(q)^-1 p at the nodes, (N+1, n) (computed on first access;
        on a partial trajectory nan where the state overflowed, as for ``energy``)."""
        if self._qdot is None:
            self._qdot = self._by_rows(self._need_system("qdot").velocity, "qdot",
                                       self.q.shape[1:])
        return self._qdot

    @property
    def t0(self):
        """The run's initial time (None for ``t_eval`` rows of a run, see the class)."""
        if self._t0 is not None:
            return self._t0
        return float(self.t[0]) if self.store_every is not None and len(self.t) else None

    def save(self, path, *, derived=True):
        """Write this trajectory to ``path`` as a ``.npz`` file of plain NumPy
        arrays (no pickled objects: ``np.load(path)`` reads it without
        symplectic, ``allow_pickle=False``): every array of the trajectory,
        the run's settings and a description of its system and force.  The
        layout (keys, shapes, dtypes, the ``format_version``) is that of
        :func:`symplectic.load`, which reads it back.

        ``derived=True`` (default) also stores ``energy`` and ``qdot``,
        computing them now when they have not been (needs the system; a
        partial trajectory's overflowed rows are nan, see ``energy``), so
        that a reader without symplectic has them; ``derived=False`` stores
        them only when already computed.  ``path`` is a file name (``.npz``
        is appended when missing, as ``np.savez`` does) or an open binary
        file.  Returns None.
        """
        _io.save(self, path, derived)

    def _need_system(self, what):
        """The system, or a ValueError naming what needs it."""
        if self.system is not None:
            return self.system
        if self.saved is None:
            raise ValueError(f"{what} needs the system, and this trajectory has none attached: "
                             f"set traj.system = S")
        was = self.saved["system"]["repr"] or "none"
        raise ValueError(f"{what} needs the system, and this trajectory has none attached (it "
                         f"was loaded from a file, and the run's system, {was}, was not "
                         f"rebuilt: see symplectic.load): attach it with "
                         f"symplectic.load(path, system=S) or traj.system = S")

    def _by_rows(self, evaluate, what, row_shape):
        """``evaluate(q, p)`` over all rows; on a partial trajectory, with the
        guard for overflowed states of :func:`_guarded_rows`."""
        if self.status != -1:
            return evaluate(self.q, self.p)
        return _guarded_rows(evaluate, self.q, self.p, what, row_shape)

    @property
    def n_steps(self):
        """Steps between the first and the last row (all stored: len(t) - 1)."""
        if self.store_every == 1 or self.counts is None:
            return len(self.t) - 1
        return self.counts.steps

    def dense(self, t, kind="lagrange"):
        """q at arbitrary times t within the integrated interval (dense output).

        Evaluates the scheme's own interpolating polynomial of each step
        (``kind="lagrange"``: degree s - 1 through the s nodes of the step,
        order s, e.g. the parabola through q_j, q_{j+1/2}, q_{j+1} for
        Simpson), or a Hermite variant that also matches the end velocities
        M(q)^-1 p (``kind="hermite"``, degree s + 1, order min(s + 1, 2s - 2)).
        The steps themselves are unchanged.  Returns an array (len(t), n), or
        (n,) for a scalar t.  Needs every step (``store_every=1``, no
        ``t_eval``).  :meth:`dense_state` gives p and qdot as well.
        """
        self._need_every_step("dense")
        return _dense.dense(self, t, kind)

    def dense_state(self, t):
        """The state (q, p, qdot) at arbitrary times t within the integrated
        interval, from the Hermite dense polynomial of each step.

        q is the polynomial of ``dense(t, kind="hermite")`` (order
        min(s + 1, 2s - 2); 4 for rk4), qdot its time derivative and p =
        M(q) qdot, so that qdot = M(q)^-1 p between the nodes as at them;
        qdot and p have one order less, min(s, 2s - 2) (3 for rk4).  At a
        node the state is the step's own (q_j, p_j).  The same state as
        ``integrate(..., t_eval=t)`` and as the event locations.  Returns a
        DenseState (q, p, qdot), each (len(t), n), or (n,) for a scalar t.
        """
        self._need_every_step("dense_state")
        self._need_system("dense_state")
        return DenseState(*_dense.dense_state(self, t))

    def _need_every_step(self, what):
        if self.store_every != 1:
            kept = ("the t_eval times only" if self.store_every is None
                    else f"every {self.store_every}-th step (store_every={self.store_every})")
            raise ValueError(f"{what}() needs every step of the run, but this trajectory keeps "
                             f"{kept}; integrate with t_eval= for states between the steps")

    def __len__(self):
        return len(self.t)

    def __repr__(self):
        span = f"t in [{self.t[0]:g}, {self.t[-1]:g}]" if len(self.t) else "no rows"
        return (f"<Trajectory {self.method}, {self.n_steps} steps of h={self.h:g}, {span}, "
                f"n={self.q.shape[1]}>")


#: Rows evaluated per call by _guarded_rows before it goes row by row.
_CHUNK = 1024


def _overflowed(exc):
    """True for the errors of an evaluation at an overflowed state: the
    binding's non-finite results ("... returned a non-finite value (nan or
    inf) ...", "a non-finite value (nan or inf) appeared"), OverflowError
    and FloatingPointError."""
    if isinstance(exc, (OverflowError, FloatingPointError)):
        return True
    return isinstance(exc, (ValueError, RuntimeError)) and "non-finite value" in str(exc)


def _guarded_rows(evaluate, q, p, what, row_shape):
    """``evaluate(q, p)`` row-wise over the rows of a partial trajectory,
    nan in the rows whose state overflowed (see Trajectory.energy).

    Every row is evaluated by the same call as on the whole array (the
    system's row-wise energy and velocity are row by row), so the rows that
    evaluate are bitwise those of ``evaluate(q, p)``.  Whole chunks first; a
    chunk that fails goes row by row.  A row with a non-finite q or p is not
    evaluated (its error could be anything: cos(inf) makes M nan, so "not
    positive definite"); an error of a finite row that is not an overflow
    (:func:`_overflowed`) propagates, with a note naming the row."""
    finite = np.isfinite(q).all(axis=1) & np.isfinite(p).all(axis=1)
    try:
        return evaluate(q, p)
    except Exception as exc:         # noqa: BLE001 (sorted out by _overflowed)
        if finite.all() and not _overflowed(exc):
            raise                    # a genuine error, as on a completed run
    out = np.empty((len(q),) + tuple(row_shape))
    skipped, first = [], None
    for start in range(0, len(q), _CHUNK):
        stop = min(start + _CHUNK, len(q))
        try:
            out[start:stop] = evaluate(q[start:stop], p[start:stop])
            continue
        except Exception:            # noqa: BLE001 (row by row below)
            pass
        for r in range(start, stop):
            reason = None if finite[r] else "the state itself is not finite"
            if reason is None:
                try:
                    out[r] = evaluate(q[r:r + 1], p[r:r + 1])[0]
                except Exception as exc:     # noqa: BLE001
                    if not _overflowed(exc):
                        if hasattr(exc, "add_note"):
                            exc.add_note(f"(Trajectory.{what}: at row {r} of the trajectory, "
                                         f"evaluated on its own)")
                        raise
                    reason = str(exc)
            if reason is not None:
                out[r] = np.nan
                skipped.append(r)
                first = first or (r, reason)
    if skipped:
        rows = (f"row {skipped[0]}" if len(skipped) == 1
                else f"{len(skipped)} rows, {skipped[0]} to {skipped[-1]}")
        warnings.warn(f"Trajectory.{what}: {rows} of this partial trajectory (of "
                      f"{len(q)}) overflowed, nan there; at row {first[0]}: {first[1]}",
                      RuntimeWarning, stacklevel=4)
    return out


def load(path, system=None, *, rebuild=True):
    """A :class:`Trajectory` from a file written by :meth:`Trajectory.save`.

    Every array is the saved one, bitwise (and of the saved dtype).  The
    system is reattached when it can be: ``system=S`` attaches ``S`` (a
    :class:`System` with the saved n; nothing else is checked); otherwise,
    with ``rebuild=True``, a built-in system is made again from its name and
    parameters by its factory (checked to give the saved C parameter
    vector bitwise), and a SymPy system is derived again from the text of
    its expressions, which is read without evaluating it (a restricted
    parser: see :mod:`symplectic.symbolic._spectext`; needs SymPy, compiles
    with ``compile="auto"``, from the on-disk cache when it holds the
    module).  Python-callable and compiled-callback systems cannot be
    rebuilt from a file: ``system`` is then None (the file's
    ``system_text`` names their callables), and what needs it --
    ``energy`` and ``qdot`` when the file does not hold them,
    ``dense_state``, the Hermite ``dense`` -- raises a ValueError saying
    so.  A system that cannot be rebuilt for another reason (no SymPy, a
    text the parser refuses, a built-in this version does not have) gives
    a RuntimeWarning and ``system`` None.  ``rebuild=False`` never rebuilds
    (no SymPy, no compiler: the file alone).

    ``force`` is the saved force when it can be had again: the system's
    own (``force_own``) when a system is attached, or one made of linear
    damping, a held array and the C core's built-in terms; else None
    (``saved["force"]`` describes it; ``work`` and ``impulse`` are kept
    either way).  ``saved`` holds the file's settings (see
    :class:`Trajectory`).

    The layout (``format_version`` 1; every value a NumPy array, shapes for
    N steps kept, n coordinates)::

        key                  shape           dtype    meaning
        format               ()              str      "symplectic.Trajectory"
        format_version       ()              int64    1
        symplectic_version   ()              str      the writer's version
        method               ()              str      the method's name
        h                    ()              float64  the step used
        t0                   ()              float64  initial time of the run (nan: unknown)
        status               ()              int64    0 completed, 1 event, -1 partial
        message              ()              str      what status means for the run
        store_every          ()              int64    k; 0 for t_eval rows (None)
        counts               (6,)            int64    steps, evaluations,
                                                      newton_iterations, factorizations,
                                                      branch_checks, branch_fixes
                                                      (files of format 1 may hold
                                                      the first 4)
        t                    (N+1,)          float64  the rows' times
        q, p                 (N+1, n)        float64  coordinates, canonical momenta
        qdot                 (N+1, n)        float64  velocities        [when stored]
        energy               (N+1,)          float64  H(q, p)           [when stored]
        q_mid                (N, n) or (N, s-2, n)  float64  internal nodes [if any]
        newton_iterations    (N,)            int32    per step (C int)  [if any]
        multipliers          (N, s, m)       float64  constraints' lambda [if any]
        tangent              (N+1, 2n, k)    float64  d(q, p)/d(q0, p0) [tangent=True]
        work                 (N+1,)          float64  work of the force [with a force]
        impulse              (N+1, n)        float64  its impulse       [with a force]
        n_events             ()              int64    event functions   [with events]
        t_events_<i>         (k_i,)          float64  crossings of event i
        q_events_<i>, p_events_<i>  (k_i, n) float64  the states there
        system_kind          ()              str      builtin, sympy, callables,
                                                      combined, vectorized, cfunc, none
        system_n             ()              int64    n
        system_name          ()              str      its label ("" for none)
        system_repr          ()              str      repr(system)
        system_builtin       ()              str      C built-in's name [builtin]
        system_flat          (k,)            float64  its C parameters [builtin]
        system_param_<name>  any             any      a parameter [builtin, sympy]
        system_text          ()              str      sympy: JSON of the expressions
                                                      (srepr); callables: JSON
                                                      {slot: "module.qualname"}
        force_repr           ()              str      repr(force)   [with a force]
        force_own            ()              bool     it is the system's own force
        force_terms          ()              str      JSON list of its terms
        force_damping        (n, n)          float64  its -D qdot part [if any]
        force_hold           (N, n) or (N, P, n)  float64  its held array
                                                      (P values a step at the
                                                      force points) [if any]

    Raises ValueError for a file that is not a trajectory file ("... is not
    a symplectic trajectory file: <why>": empty, an ``.npy``, text, a pickle,
    a damaged or truncated zip, an ``.npz`` without the ``format`` key, a
    field of pickled objects -- ``allow_pickle`` is never needed) or is of a
    newer ``format_version``; ValueError for a trajectory file that breaks
    the layout above ("... is not a valid symplectic trajectory file: field
    'q' has 50 rows, but 't' has 101 (one row per stored time)"): every
    field is checked -- required keys, 0-d scalars, dtype kinds (real
    floats, integers, ``str``), shapes, rows consistent with ``t``,
    ``counts`` and ``store_every``, the method's nodes, the events -- before
    anything is made (the rules: docs/saving.md, "What load refuses");
    FileNotFoundError for a file that does not exist;
    TypeError/ValueError for a ``system`` that is not a System of the
    saved n.
    """
    args, attrs = _io.read(path, system, rebuild=rebuild)
    if args["counts"] is not None:
        args["counts"] = Counts(*args["counts"])
    traj = Trajectory(**args)
    for k, v in attrs.items():
        setattr(traj, k, v)
    return traj
