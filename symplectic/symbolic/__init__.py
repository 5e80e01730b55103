"""Systems from SymPy: a Lagrangian (or M and V) in, a fast System out.

Write the Lagrangian L(q, qdot) = 1/2 qdot^T M(q) qdot - V(q) with SymPy;
:func:`system` (also :meth:`symplectic.System.from_sympy`) reads off M and V,
differentiates them symbolically -- M, A(q, g) = d(M g)/dq,
H(q, g) = d^2(1/2 g^T M g)/dq^2, V, grad V, hess V, exactly the quantities the
C core asks for -- removes common subexpressions, and returns a
:class:`SymbolicSystem` that evaluates them either

* as compiled C (``compile=True``, or ``"auto"`` when a C compiler exists):
  the generated source is compiled once into a shared library cached on disk
  (``$SYMPLECTIC_CACHE``, default ``~/.cache/symplectic``) and called from the
  core with no Python in the loop (the GIL is released); or
* with NumPy (``compile=False``, or ``"auto"`` without a compiler): one
  vectorised call per Newton iteration.

Parameters stay symbols in the generated code and their values are passed at
run time, so systems that differ only in parameter values share one compiled
module (:meth:`SymbolicSystem.with_params`).

Helpers build the energies from positions: :func:`kinetic_from_positions`
(point masses and rigid bodies), :func:`gravity_potential`,
:func:`angular_velocity`, :func:`rotation`.

Non-conservative forces ride along (``forces=``, ``dissipation=`` a Rayleigh
function, ``applied=`` :class:`PointForce` / :class:`Torque`): derived and
compiled the same way, they become the system's ``force``.

Example (a pendulum on a cart)::

    import sympy as sy
    import symplectic as sp
    from symplectic import symbolic

    x, th, xd, thd = sy.symbols("x theta xdot thetadot")
    M, m, l, g = sy.symbols("M m l g", positive=True)
    cart, bob = (M, [x, 0]), (m, [x + l * sy.sin(th), -l * sy.cos(th)])
    T = symbolic.kinetic_from_positions([x, th], [xd, thd], [cart, bob])
    V = symbolic.gravity_potential([cart, bob], g)
    sys = sp.System.from_sympy(T - V, [x, th], [xd, thd],
                               params={M: 1.0, m: 0.3, l: 0.5, g: 9.81})

The modules behind this face, one job each (every arrow points down)::

    _frontend    system(), SymbolicSystem, the compile-or-NumPy choice
    _lagrangian  L or (M, V) -> checked M and V
    _inputs      coordinates, functions of time, parameter values
    _mechanics   energies from positions (the helpers above)
    _model       derivatives of M and V, constants, the generated code kept
    _codegen     C and NumPy code from the derived expressions
    _forces      forces, dissipation, applied loads -> F and its Jacobians, compiled
    _ccache      the on-disk cache of compiled modules
"""
try:
    import sympy as _sy  # noqa: F401
except ImportError as _exc:                       # pragma: no cover - exercised in a subprocess
    raise ImportError(
        "symplectic.symbolic needs SymPy, which is not installed; install it with\n"
        "    pip install sympy\n"
        "or together with symplectic:  pip install 'symplectic-vi[sympy]'") from _exc

from ._ccache import CompilerError
from ._codegen import CODEGEN_VERSION  # noqa: F401  (public: the generated code's version)
from ._forces import PointForce, Torque, generalized_forces
from ._frontend import CompileWarning, SymbolicSystem, system
from ._frontend import _rebuild_symbolic  # noqa: F401  (pickles made before the split name it here)
from ._mechanics import RigidBody, angular_velocity, gravity_potential, kinetic_from_positions, rotation

__all__ = ["system", "SymbolicSystem", "kinetic_from_positions", "gravity_potential",
           "angular_velocity", "rotation", "RigidBody", "CompileWarning", "CompilerError",
           "PointForce", "Torque", "generalized_forces"]
