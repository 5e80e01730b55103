"""The engine: the one door of the package to the C core (``symplectic._core``).

No other module of the package imports ``_core``; they import this module,
which hands on exactly the names of the binding that the package uses
(tests/layout/test_layering.py checks both: no other importer, and no name here that
the package does not use, none it uses that is not here).  What the binding
has beyond these (``newton_system``, ``strerror``, the ``Work`` type) serves
its tests and benchmarks, which import ``symplectic._core`` directly.

By purpose:

The system type
    ``System`` -- the core's system (a built-in, callbacks or a compiled
    form, with its constraints); ``symplectic.System`` subclasses it.

Runs
    ``work`` -- a run prepared once, its workspace kept across calls: every
    run goes through one (``_run._driver``: its ``integrate``, ``step``;
    ``control.Problem``'s intervals: its ``shoot``, with the held force
    pointed at each evaluation's values by ``set_hold``; ``sp.Integrator``'s
    inputs step by step: ``set_force``, ``set_hold``); ``step_tangent`` --
    one step and its tangent map (``analysis.tangent_map``);
    ``adjoint_sweep`` -- the backward sweep over a run's step derivatives
    (``sensitivity.gradient``).

Sizes and times of a run
    ``stored_rows`` -- the rows a thinned run stores; ``output_bytes`` --
    the memory its outputs take; ``node_time`` -- t0 + k h as the driver
    forms it.

Registries
    ``methods`` -- the schemes (``csrc/core/sym_methods.c``); ``builtins`` -- the
    built-in systems (``csrc/core/sym_systems.c``); ``force_builtins`` -- the
    built-in forces.

Checks
    ``asymmetry`` -- how far a matrix is from symmetric; ``SYMMETRY_RTOL``
    -- the tolerance the core accepts.

What an evaluation asks for (flags of ``System._eval``)
    ``NEED_M``, ``NEED_A``, ``NEED_H``, ``NEED_V``, ``NEED_DV``, ``NEED_D2V``.

Failures of a step (``SYM_E*`` of csrc/core/symplectic.h)
    ``ENOCONV``, ``ESINGULAR``, ``ENONFINITE``, ``ECHART``, ``EBRANCH``,
    ``EUNSTABLE``; ``ECHART_REASON`` -- the text of a coordinate singularity.

Constants of the built-ins
    ``TOP_MIN_SIN`` -- the Lagrange top's |sin theta| bound (SYM_TOP_MIN_SIN).

Facts of the core's options (read from its own tables, never typed in Python)
    ``NEWTON_MODES`` -- Newton's modes, name -> the value of ``chord=``;
    ``BRANCH_MODES`` -- the branch check's modes, name -> the value of ``branch=``;
    ``SOLVER_MODES`` -- the Newton matrix's linear algebra, name -> the value of ``solver=``;
    ``FORCE_MAX_TERMS`` -- the callback terms a force holds at most.
"""
from ._core import (BRANCH_MODES, FORCE_MAX_TERMS, NEWTON_MODES, SOLVER_MODES, EBRANCH, ECHART, ECHART_REASON, ENOCONV, ENONFINITE, ESINGULAR, EUNSTABLE,
                    NEED_A, NEED_D2V, NEED_DV, NEED_H, NEED_M, NEED_V, SYMMETRY_RTOL,
                    TOP_MIN_SIN, System, asymmetry, builtins, force_builtins, methods,
                    node_time, output_bytes, step_tangent, stored_rows, work, adjoint_sweep)

__all__ = [
    # the system type
    "System",
    # runs
    "work", "step_tangent", "adjoint_sweep",
    # sizes and times of a run
    "stored_rows", "output_bytes", "node_time",
    # registries
    "methods", "builtins", "force_builtins",
    # checks
    "asymmetry", "SYMMETRY_RTOL",
    # what an evaluation asks for
    "NEED_M", "NEED_A", "NEED_H", "NEED_V", "NEED_DV", "NEED_D2V",
    # failures of a step
    "ENOCONV", "ESINGULAR", "ENONFINITE", "ECHART", "EBRANCH", "EUNSTABLE", "ECHART_REASON",
    # constants of the built-ins
    "TOP_MIN_SIN",
    # facts of the core's options
    "NEWTON_MODES", "BRANCH_MODES", "SOLVER_MODES", "FORCE_MAX_TERMS",
]
