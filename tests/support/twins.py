"""Every C built-in system written again, independently, as Python callables
(test helper): the models come from the papers' formulas and from the bodies'
positions (here and in support/models.py), never from the C code.  ``builtin_twins`` is keyed by the
built-in's registry name; tests/model/test_registry.py requires a twin for every
built-in the C core registers."""
import collections
import math

import numpy as np

from support.models import TOP, dp_callables, top_callables

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
    from support.rigid_body_ref import qconj, qmul, rotate   # the quaternion product, written there
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
                potential_hess=lambda Q: 2 * mgl * B,
                # the unit quaternion: g = |Q|^2 - 1, G = 2 Q^T, d2g = 2 Id
                constraint=lambda Q: np.array([Q @ Q - 1.0]),
                constraint_jac=lambda Q: 2.0 * Q[None, :],
                constraint_hess=lambda Q: 2.0 * Id[None])


def cartesian_pendulum_callables(n, m, l, g=9.81):
    """A point mass m on a rod of length l about the origin, in Cartesian
    coordinates with the last axis up: M = m I, V = m g q_up, and the holonomic
    constraint g(q) = (|q|^2 - l^2)/2 with its Jacobian q^T and Hessian I."""
    up = np.zeros(n)
    up[-1] = 1.0
    return dict(mass=m * np.eye(n), potential=lambda q: m * g * q[-1],
                potential_grad=lambda q: m * g * up, potential_hess=lambda q: np.zeros((n, n)),
                constraint=lambda q: np.array([0.5 * (q @ q - l * l)]),
                constraint_jac=lambda q: q[None, :].copy(),
                constraint_hess=lambda q: np.eye(n)[None])


def four_bar_callables(m, l, d, g=9.81):
    """The four-bar linkage from its bodies: rods i = crank, coupler, rocker of
    mass m_i, length l_i, angle q_i; centres of mass r_1 = l1/2 e(q1),
    r_2 = l1 e(q1) + l2/2 e(q2), r_3 = (d, 0) + l3/2 e(q3) with e(a) =
    (cos a, sin a); T = sum_i 1/2 m_i |r_i'|^2 + 1/2 (m_i l_i^2/12) q_i'^2,
    V = g sum_i m_i y(r_i); the loop closure g(q) = l1 e(q1) + l2 e(q2) -
    (d, 0) - l3 e(q3).  Every derivative comes from those of e."""
    m, l = np.asarray(m, float), np.asarray(l, float)
    # r_i = sum_a C[i, a] e(q_a): the coefficient of e(q_a) in the centre of mass of rod i
    C = np.array([[l[0] / 2, 0, 0], [l[0], l[1] / 2, 0], [0, 0, l[2] / 2]])
    inertia = np.diag(m * l * l / 12)
    W = np.array([l[0], l[1], -l[2]])                 # g(q) = sum_a W_a e(q_a) - (d, 0)

    def e(q, k=0):
        """k-th derivative of (cos, sin) at each angle: (2, 3)."""
        c, s = np.cos(q), np.sin(q)
        return [np.array([c, s]), np.array([-s, c]), np.array([-c, -s]), np.array([s, -c])][k]

    def jacs(q):
        """J[i] = d r_i/dq (2, 3), and dJ[i][k] = d J[i]/dq_k."""
        E1, E2 = e(q, 1), e(q, 2)
        J = np.einsum("ia,xa->ixa", C, E1)
        dJ = np.zeros((3, 3, 2, 3))
        for k in range(3):
            dJ[:, k, :, k] = np.einsum("i,x->ix", C[:, k], E2[:, k])
        return J, dJ

    def mass(q):
        J, _ = jacs(q)
        return np.einsum("i,ixa,ixb->ab", m, J, J) + inertia

    def mass_grad(q):
        J, dJ = jacs(q)
        T = np.einsum("i,ikxa,ixb->kab", m, dJ, J)
        return T + T.transpose(0, 2, 1)

    def mass_hess(q):
        J, dJ = jacs(q)
        E3 = e(q, 3)
        d2J = np.zeros((3, 3, 3, 2, 3))
        for k in range(3):
            d2J[:, k, k, :, k] = np.einsum("i,x->ix", C[:, k], E3[:, k])
        T = np.einsum("i,iklxa,ixb->klab", m, d2J, J) + np.einsum("i,ikxa,ilxb->klab", m, dJ, dJ)
        return T + T.transpose(0, 1, 3, 2)

    def potential(q):
        return g * float(m @ (C @ np.sin(q)))

    def potential_grad(q):
        return g * (m @ C) * np.cos(q)

    def potential_hess(q):
        return np.diag(-g * (m @ C) * np.sin(q))

    def constraint(q):
        return e(q) @ W - np.array([d, 0.0])

    def constraint_jac(q):
        return e(q, 1) * W

    def constraint_hess(q):
        H = np.zeros((2, 3, 3))
        for a in range(3):
            H[:, a, a] = W[a] * e(q, 2)[:, a]
        return H

    return dict(mass=mass, mass_grad=mass_grad, mass_hess=mass_hess, potential=potential,
                potential_grad=potential_grad, potential_hess=potential_hess,
                constraint=constraint, constraint_jac=constraint_jac,
                constraint_hess=constraint_hess)


def four_bar_closure(theta1, l, d):
    """The configuration (theta1, theta2, theta3) of the four-bar with crank
    angle theta1: B is the intersection of the circles of radius l2 about
    A = l1 e(theta1) and l3 about D = (d, 0) on the left of A -> D (the
    assembly with the coupler above the line from A to D)."""
    l1, l2, l3 = l
    A = l1 * np.array([math.cos(theta1), math.sin(theta1)])
    u = np.array([d, 0.0]) - A
    r = math.hypot(*u)
    a = (l2 * l2 - l3 * l3 + r * r) / (2 * r)            # along A -> D
    b = math.sqrt(l2 * l2 - a * a)                      # to the left of it
    u /= r
    B = A + a * u + b * np.array([-u[1], u[0]])
    return np.array([theta1, math.atan2(*(B - A)[::-1]), math.atan2(B[1], B[0] - d)])


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
                                        lambda: unit(rng.standard_normal(4))),
        "pendulum_chain": Twin(dict(n=5, m=m5, l=l5), 5, chain_callables(5, m5, l5),
                               lambda: rng.uniform(-2, 2, 5)),
        # constrained systems: states drawn on the constraint manifold
        "pendulum_cartesian": Twin(dict(m=1.3, l=0.7, g=9.81), 2,
                                   cartesian_pendulum_callables(2, 1.3, 0.7),
                                   lambda: 0.7 * unit(rng.normal(size=2))),
        "spherical_pendulum_cartesian": Twin(dict(m=0.8, l=1.2, g=9.81), 3,
                                             cartesian_pendulum_callables(3, 0.8, 1.2),
                                             lambda: 1.2 * unit(rng.normal(size=3))),
        "four_bar": Twin(dict(m1=0.4, m2=1.1, m3=0.7, l1=0.35, l2=1.05, l3=0.75, d=0.95),
                         3, four_bar_callables([0.4, 1.1, 0.7], [0.35, 1.05, 0.75], 0.95),
                         lambda: four_bar_closure(rng.uniform(-3, 3), (0.35, 1.05, 0.75), 0.95)),
        "tree": Twin(dict(n=3, par=planar_chain_tree(m5[:3], l5[:3])), 3,
                     relative_chain_callables(3, m5[:3], l5[:3]), lambda: rng.uniform(-3, 3, 3)),
    }


def planar_chain_tree(m, l, g=9.81):
    """The flat parameters of the C built-in "tree" (symplectic.multibody.Tree.flat_parameters)
    written by hand for a planar chain of point masses m_j at the ends of massless rods l_j:
    joint j about the y axis at the end of rod j - 1, its body's mass at (0, 0, -l_j) in its
    frame, gravity -g z.  Rotating (0, 0, -l) about y by q gives (-l sin q, 0, -l cos q): the
    chain of pendulum_chain mirrored in x, in relative angles."""
    n = len(m)
    par = np.zeros(4 + 27 * n)
    par[0:3] = (0.0, 0.0, -g)
    for j in range(n):
        k = 3 + 27 * j
        par[k] = j - 1
        par[k + 2:k + 5] = (0.0, 1.0, 0.0)
        par[k + 5:k + 14] = np.eye(3).ravel()
        par[k + 14:k + 17] = (0.0, 0.0, -l[j - 1] if j else 0.0)
        par[k + 17] = m[j]
        par[k + 18:k + 21] = (0.0, 0.0, -l[j])
    return par


def relative_chain_callables(n, m, l, g=9.81):
    """chain_callables in relative angles q (absolute angles a = S q, S the lower
    triangle of ones): M_rel(q) = S^T M(S q) S, V_rel(q) = V(S q), their derivatives by the
    chain rule."""
    S = np.tril(np.ones((n, n)))
    c = chain_callables(n, m, l, g)
    return dict(mass=lambda q: S.T @ c["mass"](S @ q) @ S,
                mass_grad=lambda q: np.einsum("ai,kab,bj,kc->cij", S, c["mass_grad"](S @ q), S, S),
                mass_hess=lambda q: np.einsum("ai,klab,bj,kc,ld->cdij", S,
                                              c["mass_hess"](S @ q), S, S, S),
                potential=lambda q: c["potential"](S @ q),
                potential_grad=lambda q: S.T @ c["potential_grad"](S @ q),
                potential_hess=lambda q: S.T @ c["potential_hess"](S @ q) @ S)


def unit(v):
    return v / np.linalg.norm(v)
