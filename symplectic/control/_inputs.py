"""The inputs of a control problem: the generalized force B u of m inputs u,
with B a constant (n, m) matrix (:class:`ConstantInputs`) or a
configuration-dependent one B(q) (:class:`StateInputs`: a thruster fixed to
a moving body, a cable whose direction turns).  With B(q) the transcription
keeps the force values F_ki at the step's force points as unknowns, which
the step takes as it takes any per-point force, and adds the equations
F_ki = B(q_ki) u_ki on the step's own states q_ki there (sym_run.deriv.points),
so that the scheme's order and the exact derivatives carry over.

:func:`bind` turns ``Problem(..., inputs=, inputs_jac=)`` into one of them:
the inputs must be named (a matrix, a vector, a callable B(q), ``"all"`` for
every coordinate actuated, or the system's own from ``from_sympy(...,
inputs=[u...])``): an omitted ``inputs=`` would actuate every coordinate,
which for an underactuated system (a cart-pole) solves another problem."""
import numpy as np

from ._costs import derivative_parts, fd_columns


def bind(system, inputs, inputs_jac, q_probe):
    """The inputs of a problem on ``system`` (n coordinates): a
    :class:`ConstantInputs` or a :class:`StateInputs` (q_probe: a
    configuration at which B(q) is first evaluated, for its shape)."""
    n = system.n
    own = getattr(system, "input_matrix", None)
    if inputs is None and own is not None:
        inputs, inputs_jac = own, system.input_matrix_jac
    if inputs is None:
        first = str([1] + [0] * (n - 1)) if n <= 6 else "[1, 0, ..., 0]"
        raise ValueError(f"control.Problem: say which coordinates the inputs actuate: inputs=B, "
                         f"an (n, m) = ({n}, m) matrix (the force is B u; a vector (n,) is one "
                         f"input, e.g. {first} for a force on the first coordinate only), a "
                         f"callable B(q), or inputs='all' for a force on every coordinate (full "
                         f"actuation: an underactuated system such as a cart-pole would then get "
                         f"a torque it does not have)")
    if isinstance(inputs, str):
        if inputs != "all":
            raise ValueError(f"inputs: the one name is 'all' (every coordinate actuated), got "
                             f"{inputs!r}")
        inputs = np.eye(n)
    if callable(inputs):
        return StateInputs(inputs, inputs_jac, n, q_probe, own=inputs is own)
    if inputs_jac is not None:
        raise ValueError("inputs_jac goes with a callable inputs=B(q)")
    return ConstantInputs(inputs, n)


class ConstantInputs:
    """A constant B (n, m): the force B u."""

    state_dependent = False

    def __init__(self, B, n):
        B = np.array(B, dtype=float)
        if B.ndim == 1:
            B = B[:, None]
        if B.ndim != 2 or B.shape[0] != n or B.shape[1] < 1 or not np.isfinite(B).all():
            raise ValueError(f"inputs must be a finite (n, m) = ({n}, m) matrix B (the force "
                             f"B u), a callable B(q) or 'all', got shape {np.shape(B)}")
        self.matrix_constant, self.n, self.m = B, n, B.shape[1]
        self.given = B
        self.own = False

    def matrix(self, q):
        """B (the same at every q)."""
        return self.matrix_constant


class StateInputs:
    """B(q) (n, m) and its derivative dB/dq (n, m, n), [c, j, l] =
    dB_cj/dq_l: ``jac(q)`` when given, else central differences of B.
    ``own``: the system's own B(q) (``from_sympy(..., inputs=)``), whose
    second derivatives SymPy knows."""

    state_dependent = True
    matrix_constant = None

    def __init__(self, B, jac, n, q_probe, own=False):
        if jac is not None and not callable(jac):
            raise TypeError(f"inputs_jac must be a callable dB/dq(q) -> (n, m, n), got "
                            f"{type(jac).__name__}")
        self.B, self.jac, self.n, self.own = B, jac, n, own
        self.given = B
        B0 = np.asarray(B(np.array(q_probe, dtype=float)), dtype=float)
        if B0.ndim == 1:
            B0 = B0[:, None]
        if B0.ndim != 2 or B0.shape[0] != n or B0.shape[1] < 1:
            raise ValueError(f"inputs: B(q) must return an (n, m) = ({n}, m) matrix, got shape "
                             f"{B0.shape}")
        self.m = B0.shape[1]

    def matrix(self, q):
        """B(q), (n, m), checked."""
        B = np.asarray(self.B(q.copy()), dtype=float)
        if B.ndim == 1:
            B = B[:, None]
        if B.shape != (self.n, self.m) or not np.isfinite(B).all():
            raise ValueError(f"inputs: B(q) must return a finite ({self.n}, {self.m}) matrix, "
                             f"got {B!r} at q = {q}")
        return B

    def derivative(self, q):
        """dB/dq (n, m, n) at q."""
        n, m = self.n, self.m
        if self.jac is None:
            return fd_columns(self.matrix, q, 6e-6 * np.maximum(1.0, np.abs(q)))
        what = (f"inputs_jac: dB/dq(q) must return an (n, m, n) = ({n}, {m}, {n}) array, "
                f"[c, j, l] = dB_cj/dq_l")
        return derivative_parts((self.jac(q.copy()),), ((n, m, n),), what, f"q = {q}")[0]

    def rows(self, Q, U, F):
        """The equations F_i - B(q_i) u_i at K points and their derivatives in
        q_i, u_i: values (K, n), d/dq (K, n, n), d/du (K, n, m)."""
        K = len(Q)
        g, gq, gu = np.empty((K, self.n)), np.empty((K, self.n, self.n)), np.empty(
            (K, self.n, self.m))
        for j in range(K):
            B = self.matrix(Q[j])
            g[j] = F[j] - B @ U[j]
            gq[j] = -np.einsum("cjl,j->cl", self.derivative(Q[j]), U[j])
            gu[j] = -B
        return g, gq, gu

    def force(self, u_of_t):
        """The force B(q) u(t) for a replay by another scheme (a Python force
        with its exact q-Jacobian)."""
        from .. import forces

        def f(t, q, v):
            return self.matrix(np.asarray(q, dtype=float)) @ u_of_t(t)

        def jac(t, q, v):
            dB = self.derivative(np.asarray(q, dtype=float))
            return np.einsum("cjl,j->cl", dB, u_of_t(t)), np.zeros((self.n, self.n))
        return forces.from_callable(f, jac, depends_on="q")
