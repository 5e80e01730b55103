"""Every C built-in system written again, independently, as Python callables
(test helper): the models come from the papers' formulas (here and in
conftest.py), never from the C code.  ``builtin_twins`` is keyed by the
built-in's registry name; tests/test_registry.py requires a twin for every
built-in the C core registers."""
import collections
import math

import numpy as np

from conftest import TOP, dp_callables, top_callables

#: factory keyword arguments, n, the twin's callables (System keywords), a random-state generator
Twin = collections.namedtuple("Twin", "kwargs n callables draw")


def pendulum_callables(m=1.3, omega=2.0):
    """FVCA pendulum, V = m omega^2 (1 - cos q), with a callable (constant) M."""
    k = m * omega ** 2
    return dict(mass=lambda q: np.array([[m]]), mass_grad=lambda q: np.zeros((1, 1, 1)),
                mass_hess=lambda q: np.zeros((1, 1, 1, 1)),
                potential=lambda q: k * (1.0 - math.cos(q[0])),
                potential_grad=lambda q: np.array([k * math.sin(q[0])]),
                potential_hess=lambda q: np.array([[k * math.cos(q[0])]]))


def linear_matrices(n=4, seed=7):
    """A constant SPD M and a symmetric (indefinite) K of L = 1/2 qdot^T M qdot - 1/2 q^T K q."""
    rng = np.random.default_rng(seed)
    A, B = rng.standard_normal((n, n)), rng.standard_normal((n, n))
    return A @ A.T + n * np.eye(n), B + B.T


def linear_callables(M, K):
    """The quadratic Lagrangian with M given as a constant array."""
    return dict(mass=np.array(M), potential=lambda q: 0.5 * q @ K @ q,
                potential_grad=lambda q: K @ q, potential_hess=lambda q: K)


def chain_callables(n, m, l, g=9.81):
    """Planar n-link chain from the positions x_k = sum_{i<=k} l_i sin q_i,
    y_k = -sum l_i cos q_i: M_ij = l_i l_j mu_max(i,j) cos(q_i - q_j) (mu_i the
    mass hanging from link i), V = -g sum_i mu_i l_i cos q_i."""
    m, l = np.asarray(m, float), np.asarray(l, float)
    mu = np.cumsum(m[::-1])[::-1]
    C = np.outer(l, l) * mu[np.maximum.outer(np.arange(n), np.arange(n))]
    E = np.eye(n)
    d = E[:, :, None] - E[:, None, :]                 # d[k, i, j] = delta_ik - delta_jk

    def mass(q):
        return C * np.cos(q[:, None] - q[None, :])

    def mass_grad(q):
        return -(C * np.sin(q[:, None] - q[None, :]))[None] * d

    def mass_hess(q):
        return -(C * np.cos(q[:, None] - q[None, :]))[None, None] * d[:, None] * d[None, :]

    return dict(mass=mass, mass_grad=mass_grad, mass_hess=mass_hess,
                potential=lambda q: -g * np.sum(mu * l * np.cos(q)),
                potential_grad=lambda q: g * mu * l * np.sin(q),
                potential_hess=lambda q: np.diag(g * mu * l * np.cos(q)))


def quaternion_top_callables(m, I, I3, l, g):
    """The heavy top in a quaternion Q (scalar first, Hamilton product) from the
    rigid-body kinematics: w = 2 vec(Q* Qdot) (body angular velocity), so
    w = 2 E(Q) Qdot with E(Q)'s columns vec(Q* e_k), linear in Q;
    T = 1/2 w^T J w + (c/2) (Q.Qdot)^2 with c = 4 I (the documented choice),
    i.e. M = 4 E^T J E + c Q Q^T; V = m g l z(Q), z(Q) the third component of
    Q e3 Q* (a quadratic form z = Q^T B Q, B by polarisation).  Derivatives
    from the linearity of E: dE/dQ_k = E(e_k)."""
    from rigid_body_ref import qconj, qmul, rotate   # the quaternion product, written there
    J, c, Id = np.diag([I, I, I3]), 4.0 * I, np.eye(4)

    def E(Q):
        return np.stack([qmul(qconj(Q), Id[k])[1:] for k in range(4)], axis=1)

    Ek = [E(Id[k]) for k in range(4)]
    def z(Q):                                         # (Q e3 Q*)_z, quadratic in Q
        return rotate(Q, [0.0, 0.0, 1.0])[2]

    B = np.array([[0.5 * (z(Id[k] + Id[j]) - z(Id[k]) - z(Id[j])) for j in range(4)]
                  for k in range(4)])

    def mass(Q):
        e = E(Q)
        return 4.0 * e.T @ J @ e + c * np.outer(Q, Q)

    def mass_grad(Q):
        e = E(Q)
        return np.array([4.0 * (Ek[k].T @ J @ e + e.T @ J @ Ek[k])
                         + c * (np.outer(Id[k], Q) + np.outer(Q, Id[k])) for k in range(4)])

    def mass_hess(Q):
        return np.array([[4.0 * (Ek[k].T @ J @ Ek[j] + Ek[j].T @ J @ Ek[k])
                          + c * (np.outer(Id[k], Id[j]) + np.outer(Id[j], Id[k]))
                          for j in range(4)] for k in range(4)])

    mgl = m * g * l
    return dict(mass=mass, mass_grad=mass_grad, mass_hess=mass_hess,
                potential=lambda Q: mgl * Q @ B @ Q, potential_grad=lambda Q: 2 * mgl * B @ Q,
                potential_hess=lambda Q: 2 * mgl * B)


def builtin_twins(rng):
    """{built-in name: Twin}: the factory's arguments and the same system as callables."""
    M_lin, K_lin = linear_matrices()
    m5, l5 = [1.0, 0.5, 2.0, 1.5, 0.7], [0.3, 1.0, 0.6, 0.9, 1.2]
    dp = (1.0, 2.0, 0.7, 1.3, 9.81)
    return {
        "pendulum": Twin(dict(m=1.3, omega=2.0), 1, pendulum_callables(1.3, 2.0),
                         lambda: rng.uniform(-3, 3, 1)),
        "linear": Twin(dict(M=M_lin, K=K_lin), 4, linear_callables(M_lin, K_lin),
                       lambda: rng.uniform(-2, 2, 4)),
        "double_pendulum": Twin(dict(zip(("m1", "m2", "l1", "l2", "g"), dp)), 2,
                                dp_callables(*dp), lambda: rng.uniform(-3, 3, 2)),
        "lagrange_top": Twin(dict(TOP), 3, top_callables(),
                             lambda: np.array([rng.uniform(-3, 3), rng.uniform(0.2, 2.9),
                                               rng.uniform(-3, 3)])),
        "lagrange_top_quaternion": Twin(dict(TOP), 4, quaternion_top_callables(**TOP),
                                        lambda: rng.standard_normal(4)),
        "pendulum_chain": Twin(dict(n=5, m=m5, l=l5), 5, chain_callables(5, m5, l5),
                               lambda: rng.uniform(-2, 2, 5)),
    }
