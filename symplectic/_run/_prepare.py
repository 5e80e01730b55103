"""The one prologue of every run: what is checked and decided before the
first step, in this order, for every entry point -- ``step``,
``integrate``, each system of ``integrate_many``, ``sp.Integrator``,
``step_tangent``, ``sensitivity.gradient`` and the tools built on them:

1. the initial state: q, and p or the velocities (p = M(q) qdot) once M(q)
   has passed its check (symmetric positive definite, named where it fails);
2. a constrained system's start: on the manifold, the method able to solve
   the constraints (:func:`symplectic._model._validate.constrained_state`);
3. the force: the call's ``force=`` turned into a :class:`symplectic.forces.Force`,
   the system's own added (:func:`symplectic.forces._resolve`);
4. the memory of the outputs, refused before allocating;
5. the first-use check of the system's derivatives (:mod:`symplectic._model._derivcheck`);
6. the stability warning of the step (:func:`symplectic._run._stability.warn`);
7. the parameter derivatives asked for (``wrt=``), and the closed form of a
   linear system (:func:`linear_stepper`).

:func:`prepare` does all of them for one run and returns a :class:`Prepared`;
an ensemble (``integrate_many``) takes steps 1 and 2 for each member
(:func:`start`), 5 and 6 once for each of its systems (:func:`checks`), and
3 and 7 with its members' forces.  A new pre-run rule goes here, once.
"""
import dataclasses

from .. import _engine, forces, linear
from .._model import _derivcheck, _matrices, _runspec, _validate
from . import _params, _stability

__all__ = ["Prepared", "prepare", "start", "checks", "linear_stepper"]


@dataclasses.dataclass(frozen=True)
class Prepared:
    """A run prepared once (:func:`prepare`): the validated system, run spec
    (:class:`symplectic._model._runspec.RunSpec`), initial state, force
    (None: no force at all), the closed form's one-step matrices (None: the
    method's own step) and the parameter derivatives' spec (None)."""
    system: object
    spec: object
    q0: object
    p0: object
    force: object = None
    closed: object = None
    params: object = None

    @property
    def method(self):
        return self.spec.method

    def workspace(self):
        """A C workspace for this run, kept across calls (``_engine.work``):
        the closed form's, or the method's with Newton's options and the
        force."""
        if self.closed is not None:
            return _engine.work(self.system, self.q0, self.p0, self.method.name,
                                linear=self.closed)
        fspec = None if self.force is None else self.force.spec(self.system.n)
        return _engine.work(self.system, self.q0, self.p0, self.method.name, force=fspec,
                            **self.spec.options)


def start(system, spec, q, p=None, qdot=None, names=("q0", "p0", "qdot0"), member=None,
          manifold=True):
    """Steps 1 and 2 of the prologue (the module's): the initial state (q, p)
    of ``system`` for ``spec``, checked -- q, then p or the velocities
    ``qdot`` (exactly one), M(q) (:func:`symplectic._model._matrices.start_mass`:
    symmetric positive definite, p = M(q) qdot), the constrained start
    (``manifold`` False: not checked -- a tangent map, the derivative of the
    step map on all of R^2n, takes states off the manifold);
    ``names`` (q, p, velocities) name the arguments in the messages;
    ``member``: an ensemble's member index, for them too."""
    qname, pname, vname = names
    q = _validate.state(qname, q, system.n)
    value, name, velocities = _validate.momentum_or_velocity(p, qdot, pname, vname)
    value = _validate.state(name, value, system.n)
    M = _matrices.start_mass(system, q, qname, member)
    p = (system.mass(q) if M is None else M) @ value if velocities else value
    if manifold:
        _validate.constrained_state(system, spec.method, q, p, qname, pname, spec.check,
                                    spec.options)
    return q, p


def prepare(system, spec, q, p=None, *, qdot=None, names=("q0", "p0", "qdot0"), force=None,
            force_jac=None, force_rows=None, wrt=None, warn="always", extra_bytes=0.0,
            what="integrate", manifold=True):
    """The prologue (the module's steps 1 to 7) of one run of ``system`` by
    ``spec`` from (q, p) (or the velocities ``qdot``); returns the
    :class:`Prepared` run.

    ``force``, ``force_jac``: the call's; ``force_rows``: the steps a held
    force array must cover (None: one step, whose array may be one row
    (n,)).  ``wrt``: the parameters to differentiate (needs
    ``spec.tangent``, or ``what`` a gradient).  ``warn``: when the stability
    warning is given -- "always", "steps" (only a run of at least one step),
    "linear" (only a linear system: a step in a sampled loop, whose every
    call would warn) or "never".  ``extra_bytes``: memory the caller allocates besides
    the outputs (a gradient's step derivatives), or a function of the
    resolved force giving it.  ``what`` names the entry
    point in messages; ``manifold`` as for :func:`start`."""
    system = _validate.system(system)
    m = spec.method
    q, p = start(system, spec, q, p, qdot, names, manifold=manifold)
    f = forces._resolve(system, force, force_jac, force_rows, m)
    extra = extra_bytes(f) if callable(extra_bytes) else extra_bytes
    _runspec.memory(spec.output_bytes(system.n, f is not None, system.n_constraints) + extra,
                     f"{what}(n_steps={spec.n_steps}) with n = {system.n}")
    checks(system, spec, q, p, warn, stacklevel=4)
    params = None
    if wrt is not None:
        params = _params.prepare(system, wrt, m, what)
    # the closed form has neither a force nor a parameter derivative: those take the step
    closed = linear_stepper(system, m, spec.h, spec.closed_form and f is None and params is None)
    return Prepared(system, spec, q, p, f, closed, params)


def checks(system, spec, q, p, warn="always", stacklevel=3):
    """Steps 5 and 6 of the prologue (the module's) for ``system`` at (q, p):
    the first-use check of its derivatives, and the stability warning of
    ``spec``'s step -- ``warn`` "always", "steps" (a run of at least one
    step), "linear" (a linear system only) or "never"; ``stacklevel`` counts
    from here to the user's line."""
    _derivcheck.ensure(system, q, spec.check)
    if warn == "always" or (warn == "steps" and spec.n_steps > 0) or \
            (warn == "linear" and system.builtin == "linear"):
        _stability.warn(system, q, p, spec.h, spec.method, stacklevel=stacklevel)


def linear_stepper(system, method, h, closed_form):
    """The one decision about the closed form: for a ``systems.linear`` system,
    when ``closed_form`` is true and the method has one (``"simpson"``,
    ``"midpoint"``), the closed form's one-step matrices ``(h, D, A)``
    (:func:`symplectic.linear.step_matrices`), which ``_engine.work(...,
    linear=...)`` steps in the C driver; None for every other system, method
    or choice."""
    if system.builtin != "linear":
        return None
    M, K = system.params["M"], system.params["K"]
    if not closed_form or method.name not in ("simpson", "midpoint"):
        return None
    return (h, *linear.step_matrices(M, K, h, method.name))
