"""symplectic: structure-preserving integrators for L = 1/2 qdot^T M(q) qdot - V(q).

The Simpson variational integrator (order 4, symplectic), the implicit
midpoint / Newmark variational integrator (order 2) and RK4, over a C core.

>>> import symplectic as sp
>>> sys = sp.systems.double_pendulum()
>>> traj = sp.integrate(sys, [0.785, 1.047], [0.0, 0.0], h=0.01, n_steps=1000)
>>> traj.q.shape
(1001, 2)
"""
from . import analysis, control, exact, forces, linear, multibody, papers, sensitivity, systems
from ._model._errors import ConvergenceError, DerivativeError, StabilityWarning
from ._run._ensemble import Ensemble, integrate_many
from ._run._integrate import integrate, step
from ._run._integrator import Integrator, State
from ._model._registry import methods
from ._model._system import System
from ._run._trajectory import Trajectory, load
from ._version import __version__



def __getattr__(name):
    # symplectic.symbolic imports SymPy (slow, optional): load it on first use
    if name == "symbolic":
        import importlib
        return importlib.import_module(".symbolic", __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

__all__ = ["System", "Trajectory", "Ensemble", "Integrator", "State", "ConvergenceError", "DerivativeError", "StabilityWarning", "integrate", "integrate_many",
           "step", "load", "methods", "systems", "forces", "exact", "linear", "analysis", "papers", "sensitivity",
           "control", "multibody", "__version__"]

