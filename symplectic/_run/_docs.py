"""The descriptions of the parameters that step, integrate and integrate_many
share, written once, and the method list written from the registry.

A docstring names a shared description by a line holding only ``{{name}}``;
:func:`fill` replaces that line by the description, indented as the line was.
"""
from .._model import _registry


def _method_list():
    lines = []
    for m in _registry.METHODS.values():
        kind = "symplectic" if m.symplectic else "not symplectic"
        lines.append(f'- ``"{m.name}"``: order {m.order}, {kind}')
    return ("method : str\n"
            "    ``\"simpson\"`` by default; one of the C core's registered schemes\n"
            "    (:func:`symplectic.methods` describes them):\n\n    "
            + "\n    ".join(lines))


SHARED = {
    "h": """\
h : float
    Step size (nonzero; negative steps go backward in time).""",
    "method": _method_list(),
    "newton_tolerances": """\
rtol, max_iter :
    Newton tolerance relative to the step's increments (default 1e-13)
    and iteration limit per step (default 25).  A solve ends when an exact
    update is below ``rtol``, when the error predicted after the last
    update is below ``1e-3 * rtol`` (the increments' rounding; ``rtol`` with
    constraints, whose rounding floor is higher), or when the
    residual is at rounding level (then with one more update from that
    residual: a solve, no evaluation).  The error a stop leaves has the
    same sign from step to step, so a looser ``rtol`` saves iterations at
    the price of a linear drift of the energy.  These and
    ``newton``, ``predictor``, ``branch_check``, ``linear_solver`` are the implicit
    methods' options: given to ``"rk4"`` with a value other than the default they
    raise TypeError.""",
    "newton": """\
newton : {"auto", "full", "chord", "step", "decoupled"}
    ``"full"``: a fresh Jacobian and LU factorisation every Newton
    iteration.  ``"step"``: one Jacobian and LU per step, formed at
    the step's predicted start and reused by its iterations (refreshed
    when the contraction rate exceeds 0.01, or right after the first update
    when the rate observed on recent steps predicts that it will), started
    from a polynomial
    through the last two steps' nodes (``"full"`` extrapolates the last
    step's).  Fewer factorisations for the same solution to the Newton
    tolerance: faster on small systems at small steps, and for
    ``lobatto4``/``lobatto5``.  ``"chord"``: keep the factorised matrix across
    iterations and steps while it contracts well (refreshed when the
    contraction rate exceeds 0.25, after a step needing more than 6
    iterations, or when h changes).  More iterations, far fewer
    factorisations: pays off for large n (the LU is O(n^3)); same
    solution to the Newton tolerance.  ``"decoupled"``: per step, a Newton
    matrix with M(q) and the stiffness frozen at their means over the step,
    which the method's constant tables turn into s - 1 independent n x n
    systems (2n x 2n for a complex pair of eigenvalues) instead of one of
    (s - 1) n (the transformed simplified Newton iteration of Hairer &
    Wanner, Solving ODEs II, IV.8): 4x (simpson) to 6.4x (lobatto5) fewer
    flops per factorisation, and linear convergence at a rate set by how
    much M(q) and the stiffness change over a step.  Where a step's
    updates shrink at a rate above 0.1, it goes on with the exact matrix;
    after two steps in a row that did so or needed more than 5 updates,
    the next 32 take the ``"step"`` policy.  Pays off where M varies
    slowly over a step: constant M with stiff or nonlinear springs (FPU
    chains, molecules in Cartesian coordinates: the iterations of
    ``"step"``, one factorisation a step), not where M(q) changes fast
    over a step and an evaluation is costly: its extra updates each
    evaluate the system at every point (robots read from URDF: 1.09-1.19x
    the time of ``"step"`` for the test arms, 0.94-1.33x on random trees of
    8-32 joints; systems evaluated in Python: 1.6-2.1x);
    benchmarks/NOTES.md section 8 has the measurements.  A force's dF/dq
    joins the frozen stiffness, its dF/dqdot is left out; constrained
    systems refuse it (ValueError).  ``"auto"`` (default): ``"step"`` on
    the O(n) paths (``linear_solver``); else from (s - 1) n >= 16
    unknowns on, for unconstrained systems and methods with at least 3
    nodes, ``"step"`` for systems evaluated in Python whose mass matrix is
    a callable and for robots read from URDF (the built-in tree),
    ``"decoupled"`` for the others; ``"full"`` below 16 (the papers'
    systems).  Every mode returns the same solution to the Newton
    tolerance.""",
    "branch_check": """\
branch_check : {"auto", "always", "never", "off"}
    The step equations of an implicit scheme have, at large h, roots other
    than the one that continues the motion (the root continued from
    h -> 0); Newton may converge to one.  ``"auto"`` (default): a root that
    looks suspicious -- its energy balance is off by more than 1 % (0.1 %
    for the two-node schemes), the predictor missed it by over 10 times
    what it missed the last steps' roots, or it came from the second start
    -- is checked by continuation in h (the step's equations solved from
    h/8 up to h): the continued root replaces a false one (counted in
    ``traj.counts.branch_fixes``); a step whose continuation fails and
    whose energy jumped raises ConvergenceError ("wrong branch"); one
    whose continued root itself gains energy as only an unstable step can,
    "unstable step size".  Costs nothing measurable at ordinary step sizes
    (benchmarks/RESULTS.md section 21).  ``"always"``: check every root (about
    6 times the cost of a step; a guarantee where ``"auto"``'s tests can
    miss: roots that conserve the energy, such as a pendulum's step rotated
    by nearly a full turn at omega h >= 2.5).  ``"never"``: no check (the
    behaviour before this option: Newton's root is returned), but a root
    that creates ten times the kinetic energy its start and the work can
    supply, or an energy that grows as only an unstable step's does, still
    fails.  ``"off"``: no check of the root at all, those two included --
    any root of the step equations is the step, as in a transcription
    (:mod:`symplectic.control`), whose trial inputs need not be smooth
    (an input at one force point only moves the energy as the scheme's
    balance of a smooth force does not expect).  A Newton failure is
    retried from the continued root in ``"auto"`` and ``"always"``.""",
    "linear_solver": """\
linear_solver : {"auto", "dense", "tree"}
    How Newton's linear systems are solved.  ``"dense"``: assemble the
    (s - 1) n x (s - 1) n Newton matrix and factorise it by LU, O(n^3) a
    factorisation.  ``"tree"``: for the built-in
    :func:`~symplectic.systems.pendulum_chain` with any implicit method
    (the Lobatto and Gauss rows, the midpoint rule), the residual in O(n)
    by two passes along the chain and the exact Newton direction by
    eliminating the joints from the tip to the root, O(n) a factorisation
    (csrc/core/sym_galerkin_tree.c): the same root to rounding, with every
    Newton mode and safeguard.  A force stays on it when it is made of
    held values (an input array) and a damping whose matrix is tridiagonal
    (the chain's own ``damping``); a force with callbacks takes the dense
    path.  Also for the rigid-body trees of :mod:`symplectic.multibody`
    (URDF robots, branched or not, revolute and prismatic joints) without
    constraints: the same elimination over the tree, leaf to root, with
    12 + 9 quantities a quadrature point at each joint's interface
    (csrc/core/sym_galerkin_stree.c); held values and the joints' own
    damping (``joint_damping=True``, diagonal) stay on it.  Its constant is
    larger: it is the faster from about 32 (chains) to 48 (branched trees)
    joints on, 3-4x slower than the dense path for a 7-joint arm
    (benchmarks/results/spatial_tree_solver.md).  ``"tree"`` where it does
    not apply is a ValueError; ``"auto"`` (default) takes it where it
    applies from 6 links on for ``pendulum_chain`` and from 48 joints on
    for a multibody tree, ``"dense"`` otherwise.
    The tangent maps (``tangent=True``) solve their columns with the same
    factorisation at the root (O(n^2) for the 2n columns); the derivatives
    of the step equations in q and p, and the parameter sensitivities
    (``wrt=``), are still formed densely.""",
    "closed_form": """\
closed_form : bool
    For :func:`symplectic.systems.linear` systems with ``"simpson"`` or
    ``"midpoint"`` (Newmark), step with the precomputed one-step matrix
    of :mod:`symplectic.linear` (one matrix-vector product per step, no
    Newton; ``newton_iterations`` are 0) -- the same states as the Newton
    path to rounding.  Default True; False forces Newton, as parameter
    sensitivities (``wrt=``) do: the closed form has none.  ``step``,
    ``integrate`` and ``integrate_many`` decide this in one place, so they
    give bitwise the same states for the same choice.  Every system and
    method warns with :class:`symplectic.StabilityWarning` when ``|h|``
    reaches the method's stability limit for the fastest mode at the
    initial state (2 sqrt(2)/omega_max for Simpson and rk4).""",
    "check": """\
check : bool
    The first time a system with user-supplied derivatives (Python
    callables in any form, compiled callbacks) is stepped or integrated,
    compare every supplied derivative with finite differences at the
    initial q and at a perturbed q, and raise
    :class:`symplectic.DerivativeError` if one disagrees (a pass is
    remembered on the System).  Default True; False skips it, as does
    ``System(..., derivative_check=False)``.  Built-in and SymPy-generated
    systems are never checked.""",
    "force": """\
force, force_jac :
    A non-conservative generalized force F(t, q, qdot) (n components),
    added to the system's own (``System.force``, e.g. a built-in's
    ``damping=``): a callable ``force(t, q, qdot) -> (n,)`` with an optional
    ``force_jac(t, q, qdot) -> (dF/dq, dF/dqdot)`` (each (n, n); without it
    Newton uses central differences of ``force``), an array of shape
    (n_steps, n) held constant over each step (zero-order hold), or a
    :class:`symplectic.forces.Force` (linear damping and compiled callbacks
    run without Python in the loop).  The variational schemes evaluate it at
    their quadrature points (discrete Lagrange-d'Alembert principle), RK4 at
    its stages.  With a force, linear systems take the Newton path (no
    closed form).  Its work and impulse (``traj.work``, ``traj.impulse``)
    are kept at the stored rows: with ``store_every`` summed over the steps
    between them in the C loop (the rows' values are bitwise those of the
    run that keeps every step), with ``t_eval`` interpolated inside the step
    from the step's own quadrature of the work (the order of the dense
    qdot and p, :meth:`Trajectory.dense_state`); ``t_span`` and ``events``
    work too.  None (default): the
    unforced run, unchanged.""",
}


def fill(func):
    """Decorator: put the shared descriptions into ``func.__doc__``."""
    if not func.__doc__:            # (None under python -OO)
        return func
    out = []
    for line in func.__doc__.splitlines():
        key = line.strip()
        if key.startswith("{{") and key.endswith("}}"):
            indent = line[:len(line) - len(line.lstrip())]
            out.extend((indent + x) if x else x for x in SHARED[key[2:-2]].splitlines())
        else:
            out.append(line)
    func.__doc__ = "\n".join(out)
    return func
