"""sp.Integrator: a run kept as an object.

An :class:`Integrator` owns the C workspace of one run (``_engine.work``: the
system, the method, its options, the force, the predictor history and the
counts) and the current state.  Its :meth:`~Integrator.step` and
:meth:`~Integrator.propagate` continue that one run: step k of it goes from
t0 + k h, so that a run taken in pieces of any size gives bitwise the states
of one :func:`symplectic.integrate` call from the same start (the predictor
history carries over, a force sees the same times and step indices, and its
accumulated work and impulse continue).  The pieces run through the same
function as :func:`symplectic.integrate` (:func:`symplectic._run._driver.run`),
prepared by the same prologue (:func:`symplectic._run._prepare.prepare`).
"""
import collections
import dataclasses

import numpy as np

from .._model import _runspec, _validate
from .. import _engine, forces
from . import _driver, _prepare
from ._failures import Failure, convergence_error
from ._trajectory import Counts

__all__ = ["Integrator", "State"]

State = collections.namedtuple("State", "t q p")
State.__doc__ = ("The state of an :class:`Integrator`: time t (s), coordinates q and canonical "
                 "momenta p = M(q) qdot (copies).")

def _held_rows(force):
    """Rows of an array force (n_steps, n) given to an Integrator, else None
    (a callable, a Force or None)."""
    if force is None or callable(force) or isinstance(force, (forces.Force, str, bytes, dict)):
        return None
    return len(force) if np.ndim(force) in (2, 3) else None


class Integrator:
    """One run of fixed step ``h`` kept as an object: step it, propagate it in
    pieces, reset its state.

    Parameters
    ----------
    system : symplectic.System
    h : float
        The step (nonzero; negative integrates backward).
    q0, p0 : array_like (n,)
        The initial state (coordinates, canonical momenta p = M(q) qdot).
    method : str
        A name of :func:`symplectic.methods` (default ``"simpson"``).
    t0 : float
        The time of ``(q0, p0)``, the run's origin: step k goes from
        t0 + k h to t0 + (k+1) h.
    qdot0 : array_like (n,), optional
        Initial velocities instead of ``p0``.
    force, force_jac :
        As for :func:`symplectic.integrate`; an array force (rows, n) holds
        row k over step k, so the run has at most ``rows`` steps.  An array
        is copied here: changing it afterwards does not change the run (a
        sampled-data loop gives each step's input to :meth:`step` instead,
        ``step(force=u)``).
    check : bool
        Check the system's derivatives once (as :func:`symplectic.integrate`).
    closed_form : bool
        A ``systems.linear`` system with simpson or midpoint takes its
        closed form (as :func:`symplectic.integrate`).
    tangent : bool
        Carry the state-transition matrix d(q, p)/d(q0, p0) from the origin
        with the steps (as ``integrate(..., tangent=True)``):
        :attr:`~symplectic.Integrator.tangent` now, ``traj.tangent`` of
        each piece (from the origin, not from the piece's start); a
        :meth:`reset` starts it again at the identity.
    wrt : sequence of str, optional
        With ``tangent=True``: also carry d(q, p)/dtheta for these
        parameters from the origin (as ``integrate(..., wrt=...)``):
        :attr:`~symplectic.Integrator.param_tangent` now, ``traj.param_tangent``
        of each piece; a :meth:`reset` starts it again at 0.
    **method_options :
        Newton's options of an implicit method (``rtol``, ``max_iter``,
        ``predictor``, ``newton``, ``branch_check``, ``linear_solver``, as for
        :func:`symplectic.integrate`); an explicit method (rk4) takes none,
        and an unknown name is a TypeError.

    Notes
    -----
    The state (:attr:`~symplectic.Integrator.state`,
    :attr:`~symplectic.Integrator.t`, :attr:`~symplectic.Integrator.q`,
    :attr:`~symplectic.Integrator.p`), the steps taken
    (:attr:`~symplectic.Integrator.steps`) and the work so far
    (:attr:`~symplectic.Integrator.counts`) are properties.

    Examples
    --------
    >>> import symplectic as sp
    >>> sys = sp.systems.double_pendulum()
    >>> it = sp.Integrator(sys, 0.01, [1.0, 0.5], [0.0, 0.0])
    >>> a = it.propagate(n_steps=300)          # 0 .. 3 s
    >>> b = it.propagate(t_end=5.0)            # 3 .. 5 s, continuing the same run
    >>> q1, p1 = it.step()                     # one more step
    >>> full = sp.integrate(sys, [1.0, 0.5], [0.0, 0.0], 0.01, 501)
    >>> bool((full.q[-1] == q1).all())
    True
    """

    def __init__(self, system, h, q0=None, p0=None, *, method="simpson", t0=0.0, qdot0=None,
                 force=None, force_jac=None, check=True, closed_form=True, tangent=False,
                 wrt=None, **method_options):
        system = _validate.system(system)
        # the run's spec (its pieces' copies carry their own n_steps and output)
        spec = _runspec.run_spec(method, h, 0, t0, options=method_options,
                                  closed_form=closed_form, check=check, tangent=tangent)
        if wrt is not None and not spec.tangent:
            raise ValueError("Integrator: wrt= needs tangent=True")
        prep = _prepare.prepare(system, spec, _validate.required("q0", q0), p0, qdot=qdot0,
                                force=force, force_jac=force_jac, force_rows=_held_rows(force),
                                wrt=wrt, what="Integrator")
        q0, p0, f = prep.q0, prep.p0, prep.force
        m, self._h, self._t0 = spec.method, spec.h, spec.t0
        self.system, self.method, self.force = system, m.name, f
        self._m, self._check, self._spec = m, check, spec
        self._prep, self._pspec, self._closed = prep, prep.params, prep.closed
        self._hold_rows = None if f is None or f.hold is None else f.hold.shape[0]
        # the held inputs given step by step (step(force=u), propagate(force=U)): attached
        # to the kept run on first use, with a value at each of the method's force points
        self._live = False
        self._step_hold = np.zeros((1, self._m.force_points, system.n))
        self._kept = prep.workspace()
        self._set(q0, p0)

    # ------------------------------------------------------------ state
    def _set(self, q, p):
        """A run's start: (q, p) at its origin, no step taken, no work done."""
        self._q, self._p, self._k = q, p, 0
        self._start = (q, p)             # for the stability estimate of a failed step
        self._phi = np.eye(2 * self.system.n) if self._spec.tangent else None
        self._S = (None if self._pspec is None
                   else np.zeros((2 * self.system.n, len(self._pspec.names))))
        self._work0 = 0.0
        forced = self.force is not None or getattr(self, "_live", False)
        self._impulse0 = np.zeros(self.system.n) if forced else None

    def _time(self, k):
        # the C driver's node time t0 + k h (sym_node_time), the same rounding
        return _engine.node_time(self._t0, k, self._h)

    @property
    def h(self):
        """The step."""
        return self._h

    @property
    def t(self):
        """The time now: t0 + steps * h."""
        return self._time(self._k)

    @property
    def q(self):
        """The coordinates now (a copy)."""
        return self._q.copy()

    @property
    def p(self):
        """The canonical momenta now, p = M(q) qdot (a copy)."""
        return self._p.copy()

    @property
    def state(self):
        """(t, q, p) now, as a :class:`State` of copies."""
        return State(self.t, self._q.copy(), self._p.copy())

    @property
    def tangent(self):
        """d(q, p)/d(q0, p0) now, from the origin (2n, 2n; rows and columns
        ordered (q, p)), a copy; None unless made with ``tangent=True``.

        Settable (with ``tangent=True``) to any k >= 1 columns (2n, k): the
        steps then carry those variations of the state -- the derivative of
        the state now along them -- and the pieces' ``traj.tangent`` has k
        columns (a Lyapunov basis re-orthonormalised between pieces, or a
        few directions for less work: one linear solve per column and
        step)."""
        return None if self._phi is None else self._phi.copy()

    @property
    def param_tangent(self):
        """d(q, p)/dtheta now, from the origin, for the parameters ``wrt``
        named ((2n, n_par), a copy); None unless made with ``wrt=``."""
        return None if self._S is None else self._S.copy()

    @tangent.setter
    def tangent(self, value):
        if self._phi is None:
            raise ValueError("this Integrator carries no tangent: make it with tangent=True")
        m2 = 2 * self.system.n
        a = np.array(value, dtype=float)
        if a.ndim == 1:
            a = a[:, None]
        if a.ndim != 2 or a.shape[0] != m2 or a.shape[1] < 1:
            raise ValueError(f"tangent must have shape (2n, k) = ({m2}, k), k >= 1, got "
                             f"{np.shape(value)}")
        if not np.all(np.isfinite(a)):
            raise ValueError("tangent must be finite")
        self._phi = np.ascontiguousarray(a)

    @property
    def steps(self):
        """Steps taken since the origin or the last :meth:`reset`."""
        return self._k

    @property
    def counts(self):
        """The work of all steps so far (:class:`symplectic.Trajectory` ``counts``)."""
        return Counts(*self._kept.counts())

    def reset(self, q, p=None, t=None, *, qdot=None):
        """Start again from ``(q, p)`` (or ``qdot``) at time ``t`` (default: the
        time now), a new origin: the predictor history is forgotten and the
        step count starts at 0; a force's accumulated work and impulse start
        at 0; an array force starts again at its row 0.  The counts go on."""
        system = self.system
        q, p = _prepare.start(system, self._spec, q, p, qdot, names=("q", "p", "qdot"))
        t0 = self.t if t is None else _validate.real("t", t)
        self._kept.reset()
        self._t0 = t0
        self._set(q, p)

    # ------------------------------------------------------------ running
    def _need_rows(self, n_steps):
        if self._hold_rows is not None and self._k + n_steps > self._hold_rows:
            raise ValueError(f"force: the held force array has {self._hold_rows} rows (one per "
                             f"step), but steps {self._k} .. {self._k + n_steps - 1} were asked "
                             f"for")

    def _advance(self, r):
        """Move the state to the last row of the Run r (r.done steps later)."""
        rows = r.rows if r.rows is not None else len(r.t)
        if r.done == 0:
            return
        work = r.work[rows - 1] if r.work is not None else 0.0
        impulse = r.impulse[rows - 1].copy() if r.impulse is not None else None
        self._q, self._p = r.q[rows - 1].copy(), r.p[rows - 1].copy()
        if r.tangent is not None:
            self._phi = r.tangent[rows - 1].copy()
        if r.param_tangent is not None:
            self._S = r.param_tangent[rows - 1].copy()
        self._k += r.done
        self._work0, self._impulse0 = work, impulse

    def step(self, force=None):
        """Take one step: returns ``(q1, p1)`` (copies) and moves the state there.

        ``force`` (optional): a generalized force held over this one step, (n,),
        or a value at each of the method's P force points, (P, n)
        (:func:`symplectic.forces.point_times`) -- the input of a sampled-data
        controller computed from the state now.  It is added to the run's own
        force (the system's, and a callable or damping given at construction),
        read when called (a copy), and the run's work and impulse include it.
        A loop of ``step(force=u_k)`` gives bitwise the states of one
        :func:`symplectic.integrate` with ``force=`` the rows u_k.  Not with an
        array force given at construction (it already holds each step's value),
        nor with a linear system's closed form (make it with ``closed_form=False``).

        Raises ConvergenceError (the state stays) as :func:`symplectic.step`."""
        if force is not None or self._live:
            return self._held_step(None if force is None else self._held(force, 1))
        self._need_rows(1)
        if self.force is None and self._k > 0 and self._phi is None:
            # the lean path of an unforced run after its start (the pre-run check is the
            # start's): the same driver for one step, no Run, no Trajectory
            _, q, p, _, _, _, fail, _ = self._kept.integrate(
                self._q, self._p, self._h, 1, t0=self._t0, k0=self._k)
            if fail is None:
                self._q, self._p, self._k = q[1], p[1], self._k + 1
                return q[1].copy(), p[1].copy()
            raise convergence_error(self._m, self._h, Failure(*fail), system=self.system,
                                    state=(self._q, self._p), start=self._start)
        return self._general_step(self.force)

    def _general_step(self, force):
        """One step through the run function (tangents, parameters, the pre-run
        check, the force's work): returns (q1, p1) and moves the state."""
        spec = dataclasses.replace(self._spec, n_steps=1, k0=self._k)
        r = _driver.run(dataclasses.replace(self._prep, force=force), self._q, self._p, spec,
                        kept=self._kept, start=(self._work0, self._impulse0),
                        outputs=_driver.Outputs(tangent0=self._phi, param0=self._S))
        if r.failure is not None:
            raise convergence_error(self._m, self._h, r.failure, system=self.system,
                                    state=(self._q, self._p), start=self._start)
        self._advance(r)
        return self._q.copy(), self._p.copy()

    # ------------------------------------------------------------ held inputs, step by step
    def _held(self, force, rows):
        """``force`` of step or propagate as the held values of ``rows`` steps,
        (rows, P, n) float64 (a value held over a step repeated at its P
        force points: the same force at each, hence the same numbers).  One
        step's values go to a buffer kept for them (the run reads them in
        place; their finiteness is the binding's check, set_hold)."""
        n, P = self.system.n, self._m.force_points
        if rows == 1:
            a = force if isinstance(force, np.ndarray) and force.dtype == np.float64 else \
                _validate.as_floats("force", force, f"an array of shape (n,) = ({n},) or "
                                     f"(P, n) = ({P}, {n})")
            if a.shape not in ((n,), (P, n)):
                raise ValueError(f"force: one step's input must have shape (n,) = ({n},), held "
                                 f"over the step, or (P, n) = ({P}, {n}), a value at each of "
                                 f"{self.method}'s force points; got shape {a.shape}")
            buf = self._step_hold
            buf[0] = a
            return buf
        a = _validate.force_array("force", force, rows, n, points=True)
        if a.ndim == 2:
            return np.repeat(a[:, None, :], P, axis=1)
        if a.shape[1] != P:
            raise ValueError(f"force: {a.shape[1]} values a step (shape {np.shape(force)}), but "
                             f"{self.method} evaluates a force at {P} points a step "
                             f"(symplectic.forces.point_times)")
        return a

    def _set_hold(self, held):
        """Point the kept run's held part at ``held`` (rows, P, n) from step k now."""
        try:
            self._kept.set_hold(None if held is None else held.reshape(len(held), -1), self._k)
        except ValueError:
            if held is None or np.isfinite(held).all():
                raise
            j = int(np.argmax(~np.isfinite(held.reshape(len(held), -1)).all(axis=1)))
            raise ValueError(f"force: a non-finite value in the input of step {self._k + j}: "
                             f"{held[j, 0].tolist()}") from None

    def _go_live(self):
        """Attach the held inputs to the kept run (once): the run's own force
        plus a held part of P values a step; work and impulse from here on."""
        if self._live:
            return
        if self._closed is not None:
            raise ValueError("force=: this Integrator steps the closed form of a linear "
                             "system, which takes no force; make it with closed_form=False")
        if self._hold_rows is not None:
            raise ValueError("force=: this Integrator holds the force array given at its "
                             "construction (one row per step); give the inputs either there "
                             "or step by step, not both")
        n, P = self.system.n, self._m.force_points
        own = self.force if self.force is not None else forces.Force()
        self._kept.set_force((own + forces.Force(hold=np.zeros((1, P, n)))).spec(n))
        if self.force is None:              # work and impulse start with the inputs
            self._work0, self._impulse0 = 0.0, np.zeros(n)
        self._step_out = (np.empty(2), np.empty((2, n)))     # a step's work and impulse
        self._live = True

    def _piece_force(self, held):
        """The force of a piece with these held values (None: no held part)."""
        own = self.force if self.force is not None else forces.Force()
        return own if held is None else own + forces.Force(hold=held)

    def _held_step(self, held):
        """:meth:`step` with the held values ``held`` (1, P, n), or none."""
        self._go_live()
        self._set_hold(held)
        if self._phi is not None or self._pspec is not None:
            return self._general_step(self._piece_force(None if held is None else held.copy()))
        work, impulse = self._step_out
        _, q, p, _, _, _, fail, _ = self._kept.integrate(
            self._q, self._p, self._h, 1, t0=self._t0, k0=self._k, work=work, impulse=impulse,
            work0=self._work0, impulse0=self._impulse0)
        if fail is not None:
            raise convergence_error(self._m, self._h, Failure(*fail), system=self.system,
                                    state=(self._q, self._p), start=self._start)
        self._q, self._p, self._k = q[1], p[1], self._k + 1
        self._work0, self._impulse0 = float(work[1]), impulse[1].copy()
        return q[1].copy(), p[1].copy()

    def propagate(self, n_steps=None, *, t_end=None, force=None, t_eval=None,
                  store_every=None, events=None, progress=False):
        """Continue the run: ``n_steps`` steps, or the fewest whole steps that
        reach ``t_end``; returns the :class:`symplectic.Trajectory` of this
        piece (its first row the state before it) and moves the state to its
        end.

        ``force`` (optional): the inputs of this piece's steps, held as
        :meth:`step`'s ``force=`` is: an array (n_steps, n), row j held over
        the piece's step j, or (n_steps, P, n) with a value at each force
        point (read when called; added to the run's own force).

        ``t_eval``, ``store_every``, ``events`` and ``progress`` as for
        :func:`symplectic.integrate`, on this piece.  The step never changes:
        with ``t_end`` off the grid t0 + k h the piece ends up to one step
        beyond it (``t_eval=[t_end]`` gives the state at t_end itself).

        Raises ConvergenceError with the piece up to the failing step in
        ``.trajectory``; the state moves to the last completed step.
        """
        if (n_steps is None) == (t_end is None):
            raise TypeError("give n_steps or t_end (exactly one)")
        t_start = self.t
        if n_steps is not None:
            n_steps = _validate.step_count(n_steps)
        else:
            t_end = _validate.real("t_end", t_end)
            span = (t_end - t_start) / self._h
            if span < -1e-9:
                raise ValueError(f"t_end = {t_end!r} is behind the state (t = {t_start!r}, "
                                 f"h = {self._h!r})")
            n_steps = max(0, int(np.ceil(span - 1e-9 * max(1.0, abs(span)))))
        self._need_rows(n_steps)
        system, m, h, f = self.system, self._m, self._h, self.force
        if force is not None or self._live:
            held = None if force is None else self._held(force, n_steps)
            self._go_live()
            held = None if held is None else held.copy()       # (the trajectory's force)
            self._set_hold(held)
            f = self._piece_force(held)
        # this piece's output, checked as integrate checks it, on the run's origin
        piece = _runspec.run_spec(m.name, h, n_steps, t_start, t_eval=t_eval,
                                   store_every=store_every, events=events, progress=progress,
                                   tangent=self._spec.tangent)
        spec = dataclasses.replace(piece, t0=self._t0, k0=self._k, options=self._spec.options,
                                   closed_form=self._spec.closed_form)
        _runspec.memory(spec.output_bytes(system.n, f is not None, system.n_constraints),
                         f"propagate(n_steps={n_steps}) with n = {system.n}")
        return _driver.run_trajectory(dataclasses.replace(self._prep, force=f),
                                      f"propagate ({m.name})", spec=spec, q0=self._q, p0=self._p,
                                      kept=self._kept, start=(self._work0, self._impulse0),
                                      t_start=t_start, advance=self._advance,
                                      tangent0=self._phi, param0=self._S)

    def __repr__(self):
        return (f"<symplectic.Integrator {self.method} h={self._h!r} t={self.t!r} "
                f"steps={self._k} n={self.system.n}>")
