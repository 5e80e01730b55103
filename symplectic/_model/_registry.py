"""The method list and the system list: read from the C core once, owned here.

Methods.  Every scheme the C core registers (``_engine.methods()``, one row of
``csrc/core/sym_methods.c`` each) becomes a :class:`Method`: its name, description,
order, whether it is symplectic, the number of internal nodes a step reports
and the node positions c in [0, 1].  Nothing in the package or its tests lists
the methods by hand; a scheme added to the C registry is offered by
:func:`symplectic.methods`, accepted by every entry point, and picked up by
the registry-driven tests (its fitted order against :attr:`Method.order`).

Systems.  Every C built-in (``_engine.builtins()``, one row of
``csrc/core/sym_systems.c`` each) has a Python factory in :mod:`symplectic.systems`,
registered with :func:`builtin` (the factory bears the built-in's name); a
factory of a named configuration of a built-in (``linear_double_pendulum``)
is registered with :func:`preset`.  :func:`missing_factories` names the C
built-ins that no factory builds -- the test suite requires it to be empty.
"""
import dataclasses

from .. import _engine


@dataclasses.dataclass(frozen=True)
class Method:
    """One row of the C core's scheme registry."""
    name: str
    doc: str
    order: int
    symplectic: bool
    n_mid: int           # internal nodes a step reports (Trajectory.q_mid)
    nodes: tuple         # positions c_a in [0, 1] of the nodes of one step, ends included
    constrained: bool = True   # solves systems with holonomic constraints (rk4: no)
    force_points: int = 1      # points of a step's quadrature of a force's work
    force_x: tuple = (0.5,)    # their positions in [0, 1] within a step ...
    force_b: tuple = (1.0,)    # ... and weights (sum 1): where a force is evaluated
    stability: float = float("inf")   # omega h below which the harmonic oscillator is stable
    #                                  (0: not determined)
    implicit: bool = True      # a step solves equations by Newton (rk4: no; it takes no
    #                            Newton options)
    newton_blocks: tuple = ()  # the eigenvalues of newton="decoupled"'s table W (complex;
    #                            one block of size n per real one, of 2n per pair; ():
    #                            no decoupled form, that mode takes the exact matrix)

    def details(self):
        """The row as :func:`methods` ``(details=True)`` gives it."""
        return dict(doc=self.doc, order=self.order, symplectic=self.symplectic,
                    n_mid=self.n_mid, nodes=self.nodes, constrained=self.constrained,
                    stability=self.stability, newton_blocks=self.newton_blocks,
                    force_points=self.force_x, force_weights=self.force_b)


@dataclasses.dataclass(frozen=True)
class Builtin:
    """One row of the C core's system registry."""
    name: str
    doc: str
    params_doc: str


def _read_methods():
    return {name: Method(name, doc, int(order), bool(sym), int(n_mid), tuple(nodes), bool(con),
                         len(fq), tuple(float(x) for x, _ in fq), tuple(float(b) for _, b in fq),
                         float(stab), bool(implicit), tuple(eig))
            for name, doc, order, sym, n_mid, nodes, con, fq, stab, implicit, eig
            in _engine.methods()}


def _read_builtins():
    return {name: Builtin(name, doc, params_doc) for name, doc, params_doc in _engine.builtins()}


#: {name: Method}, in the C registry's order.
METHODS = _read_methods()

#: {name: Builtin}, the C built-in systems in the C registry's order.
BUILTINS = _read_builtins()

#: {factory name: (factory, name of the C built-in it builds, primary?)}, in
#: registration order (the order of symplectic.systems).
_FACTORIES = {}


def methods(details=False):
    """The available methods.

    Returns ``{name: description}``; with ``details=True``,
    ``{name: {"doc", "order", "symplectic", "n_mid", "nodes", "constrained",
    "stability", "newton_blocks", "force_points", "force_weights"}}`` where ``n_mid`` is the number of internal nodes a step
    reports in ``Trajectory.q_mid``, ``nodes`` their positions c in [0, 1]
    within a step (with the ends), ``constrained`` whether the method solves
    systems with holonomic constraints (the variational schemes; not
    ``rk4``) and ``stability`` the method's stability limit on the harmonic
    oscillator: the one-step map is stable for omega |h| below it (inf: for
    every h; omega_max h of a system's fastest linearised mode, see
    :func:`symplectic.analysis.stability_estimate`); ``newton_blocks`` the
    eigenvalues (complex) of the table that ``newton="decoupled"`` splits the
    Newton system with: one n x n system per real one, one 2n x 2n per
    complex pair (``()``: none; that mode then takes the exact matrix);
    ``force_points`` and ``force_weights`` the positions x_i in [0, 1] within
    a step and the weights b_i (sum 1) of the quadrature at which the method
    evaluates a force (t_k + x_i h; a held force of shape (n_steps, P, n)
    gives a value at each: :func:`symplectic.forces.at_points`).  The
    list is the C core's scheme registry:
    """
    if details:
        return {k: m.details() for k, m in METHODS.items()}
    return {k: m.doc for k, m in METHODS.items()}


if methods.__doc__:                 # (None under python -OO)
    methods.__doc__ += "".join(f"\n    - ``{m.name!r}``: {m.doc}" for m in METHODS.values()) + "\n"


def builtin(factory):
    """Register ``factory`` (a function of symplectic.systems) as the factory of
    the C built-in system of the same name; ValueError at import if the C core
    has no such built-in."""
    name = factory.__name__
    if name not in BUILTINS:
        raise ValueError(f"symplectic.systems.{name} is registered as the factory of the C "
                         f"built-in {name!r}, which the C core does not have; built-ins: "
                         f"{sorted(BUILTINS)}")
    _FACTORIES[name] = (factory, name, True)
    return factory


def preset(of):
    """Register the decorated function as a factory of a named configuration of
    the C built-in ``of`` (e.g. ``linear_double_pendulum`` of ``linear``)."""
    if of not in BUILTINS:
        raise ValueError(f"a preset of {of!r}, which is not a C built-in; built-ins: "
                         f"{sorted(BUILTINS)}")

    def register(factory):
        _FACTORIES[factory.__name__] = (factory, of, False)
        return factory

    return register


def factories():
    """{name: factory} of every registered factory (built-ins, then presets, in
    the order symplectic.systems defines them)."""
    return {name: f for name, (f, _, _) in _FACTORIES.items()}


def builtin_factory(name):
    """The factory of the C built-in ``name`` (KeyError if it has none)."""
    factory, _, primary = _FACTORIES[name]
    if not primary:
        raise KeyError(name)
    return factory


#: {name of a C built-in: check(params, q, p) -> None, or the reason to refuse
#: a run from (q, p) before its first step}: a built-in's knowledge of its own
#: motion (lagrange_top: symplectic._model._topchart.refusal), registered by its
#: factory's module with :func:`state_check` and applied by
#: symplectic._model._validate.chart.
STATE_CHECKS = {}


def state_check(name, check):
    """Register ``check`` as the pre-run state check of the C built-in ``name``."""
    if name not in BUILTINS:
        raise ValueError(f"a state check of {name!r}, which is not a C built-in")
    STATE_CHECKS[name] = check


def missing_factories():
    """Sorted names of the C built-ins that no registered factory builds."""
    built = {name for name, (_, _, primary) in _FACTORIES.items() if primary}
    return sorted(set(BUILTINS) - built)
