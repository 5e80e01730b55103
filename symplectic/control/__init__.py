"""Optimal control with the integrator's own schemes (discrete mechanics and
optimal control, DMOC).

A :class:`Problem` asks for the inputs u(t) that steer a mechanical system
from a start to an end in a given time at least cost.  It is transcribed
with the scheme itself: the unknowns are the states (q_k, p_k) at the
nodes t_k = k h of ``intervals`` steps and the inputs at the points where
the scheme evaluates a force in each step (``symplectic.methods(details=True)
[m]["force_points"]``: three for Simpson, s for the Lobatto schemes), and
the dynamics are the scheme's forced step, (q_{k+1}, p_{k+1}) = Phi_h(q_k,
p_k; B u_k) -- the discrete forced Euler-Lagrange equations (the discrete
Lagrange-d'Alembert principle) with the internal nodes solved by the step
itself, so that a solution is a trajectory the integrator reproduces
exactly (:meth:`Solution.replay`).  With the inputs at the force points the
transcription keeps the scheme's order (Ober-Bloebaum, Junge & Marsden,
ESAIM:COCV 17, 2011), the multipliers of the dynamics approximate the
costates at the same order (Sanz-Serna, SIAM Review 58, 2016), and every
derivative is exact: each step's derivative with respect to its start and
to each input value comes from the C core (the implicit function theorem
on the converged step).

Built so far: a fixed or free duration (minimum time: the step's
derivative in h from the core too), the costs :func:`effort` (int 1/2 u^T
R u dt, by the scheme's own quadrature), :func:`duration`, :func:`terminal`
(a cost of the end state), :func:`running` (int l(t, q, qdot, u) dt at
the force points, on the step's own states there) and weighted sums of
them, conditions on any components of q, qdot or p at either end, box
bounds on the inputs and on q, path constraints :func:`path` at the force
points, systems with their own dissipation, and
three solvers: IPOPT through ``ipyopt`` (``pip install
'symplectic-vi[control]'``, Linux x86_64 wheels: the sparse exact Jacobian,
the Hessian exact for a system from SymPy -- the second-order adjoint of
the step, constrained or not, _curvature.py -- else by differences of the
exact first derivatives), SciPy's trust-constr (the
same derivatives; ``solver="scipy"``) and SciPy's SLSQP (``"slsqp"``:
dense; what ``"auto"`` takes without ipyopt), each followed by a Newton
polish of the first-order conditions; and
:func:`identify`, parameters (and the initial state) fitted to sampled
positions with the run's exact derivatives.  Systems with holonomic
constraints: the scheme solves them as integrate does (a whole start on
the manifold).  Inputs that act through the
configuration, B(q) u: a
callable ``inputs=B`` (``inputs_jac=dB/dq``), or a SymPy system's own
(``from_sympy(..., inputs=[u...])``).
"""
from ._costs import Cost, Duration, Effort, Running, Terminal, duration, effort, running, terminal
from ._identify import Identification, identify
from ._path import Path, path
from ._problem import Problem
from ._solution import Solution

__all__ = ["Problem", "Solution", "Cost", "Effort", "Duration", "Terminal", "Running", "effort",
           "duration", "terminal", "running", "Path", "path", "identify", "Identification"]
