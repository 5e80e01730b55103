"""Inputs that act through a configuration-dependent matrix: the generalized
force B(q) u of m inputs u (a thruster fixed to a moving body, a cable whose
direction turns).  The transcription keeps the force values F_ki at the
step's force points as unknowns, which the step takes as it takes any
per-point force, and adds the equations F_ki = B(q_ki) u_ki on the step's
own states q_ki there (sym_run.points), so that the scheme's order and the
exact derivatives carry over."""
import numpy as np

from ._costs import derivative_parts, fd_columns


class StateInputs:
    """B(q) (n, m) and its derivative dB/dq (n, m, n), [c, j, l] =
    dB_cj/dq_l: ``jac(q)`` when given, else central differences of B."""

    def __init__(self, B, jac, n, q_probe):
        if jac is not None and not callable(jac):
            raise TypeError(f"inputs_jac must be a callable dB/dq(q) -> (n, m, n), got "
                            f"{type(jac).__name__}")
        self.B, self.jac, self.n = B, jac, n
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
