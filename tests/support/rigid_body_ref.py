"""An independent reference for the heavy symmetric top as a rigid body (test helper).

Written from the physics of a rigid body with one fixed point, not from the
package's code (neither its Euler-angle nor its quaternion Lagrangian):

- attitude: a unit quaternion Q = (w, x, y, z) (Hamilton product, scalar
  first) that maps body vectors to space vectors, v_space = Q v_body Q*;
- kinematics: dQ/dt = 1/2 Q (0, Omega), Omega the angular velocity in the
  body frame;
- dynamics: Euler's equations with the gravity torque about the fixed point,
  J dOmega/dt = (J Omega) x Omega + tau, J = diag(I, I, I3) (moments about the
  fixed point), tau = (l e3) x (-m g gamma) with gamma = Q* e_z Q the upward
  vertical seen in the body frame and l e3 the centre of mass in the body;
- integration: SciPy's DOP853 on the seven unknowns (Q, Omega) at
  rtol = atol = 1e-13 (the quaternion is not renormalised during the
  integration: |Q| = 1 is an invariant of the exact flow, so its drift
  measures the reference's own error; the attitude is normalised only when
  it is read out).

Initial states come from ZXZ Euler angles (phi, theta, psi) and their rates
by composing the three elementary rotations R = Rz(phi) Rx(theta) Rz(psi),
both as quaternions and as the sum of the three rotation rates carried to
the body frame -- no closed-form Euler-angle formula of the package is used.
"""
import math

import numpy as np


def qmul(a, b):
    """Hamilton product of quaternions (..., 4), scalar first."""
    a0, a1, a2, a3 = np.moveaxis(np.asarray(a, float), -1, 0)
    b0, b1, b2, b3 = np.moveaxis(np.asarray(b, float), -1, 0)
    return np.stack([a0 * b0 - a1 * b1 - a2 * b2 - a3 * b3,
                     a0 * b1 + a1 * b0 + a2 * b3 - a3 * b2,
                     a0 * b2 - a1 * b3 + a2 * b0 + a3 * b1,
                     a0 * b3 + a1 * b2 - a2 * b1 + a3 * b0], axis=-1)


def qconj(a):
    a = np.asarray(a, float)
    return a * np.array([1.0, -1.0, -1.0, -1.0])


def rotate(Q, v):
    """Q v Q* for a unit quaternion Q and a vector v (both may be batched)."""
    v = np.asarray(v, float)
    pure = np.concatenate([np.zeros(v.shape[:-1] + (1,)), v], axis=-1)
    return qmul(qmul(Q, pure), qconj(Q))[..., 1:]


def about(axis, angle):
    """The unit quaternion of a rotation by ``angle`` about the unit ``axis``."""
    return np.concatenate([[math.cos(angle / 2)], math.sin(angle / 2) * np.asarray(axis, float)])


EX, EZ = np.array([1.0, 0.0, 0.0]), np.array([0.0, 0.0, 1.0])


def euler_zxz(angles, rates):
    """(Q, Omega) of ZXZ angles (phi, theta, psi) and their rates: R = Rz(phi) Rx(theta) Rz(psi).

    The angular velocity is the sum of the three rotation rates, each about
    its own axis: phidot about the space z axis, thetadot about the line of
    nodes Rz(phi) e_x, psidot about the body axis e3; carried into the body
    frame with the rotations that follow each one."""
    phi, theta, psi = (float(a) for a in angles)
    phid, thd, psid = (float(a) for a in rates)
    qz1, qx, qz2 = about(EZ, phi), about(EX, theta), about(EZ, psi)
    Q = qmul(qmul(qz1, qx), qz2)
    # space-frame angular velocity, then into the body frame
    w_space = phid * EZ + thd * rotate(qz1, EX) + psid * rotate(Q, EZ)
    return Q, rotate(qconj(Q), w_space)


class RigidBodyTop:
    """Heavy symmetric top: J = diag(I, I, I3) about the fixed point, centre of
    mass at distance l on the body axis e3, gravity g along -z, mass m."""

    def __init__(self, m, I, I3, l, g):
        self.m, self.I, self.I3, self.l, self.g = (float(x) for x in (m, I, I3, l, g))
        self.J = np.array([self.I, self.I, self.I3])

    def rhs(self, t, y):
        """d(Q, Omega)/dt (scalar arithmetic: DOP853 calls it some 10^5 times)."""
        w, x, y_, z, p, q, r = (float(v) for v in y)
        # dQ/dt = 1/2 Q (0, Omega)
        dw = 0.5 * (-x * p - y_ * q - z * r)
        dx = 0.5 * (w * p + y_ * r - z * q)
        dy = 0.5 * (w * q - x * r + z * p)
        dz = 0.5 * (w * r + x * q - y_ * p)
        # gamma = Q* e_z Q (Q is not renormalised: the exact flow keeps |Q| = 1)
        g1 = 2.0 * (x * z - w * y_)
        g2 = 2.0 * (y_ * z + w * x)
        # tau = (l e3) x (-m g gamma) = m g l (gamma_2, -gamma_1, 0)
        mgl = self.m * self.g * self.l
        I, I3 = self.I, self.I3
        # J dOmega/dt = (J Omega) x Omega + tau
        dp = ((I * q * r - I3 * r * q) + mgl * g2) / I
        dq = ((I3 * r * p - I * p * r) - mgl * g1) / I
        dr = (I * p * q - I * q * p) / I3
        return np.array([dw, dx, dy, dz, dp, dq, dr])

    def solve(self, Q0, W0, t_eval, rtol=1e-13, atol=1e-13):
        """(Q(t), Omega(t)) at t_eval (arrays (len(t), 4) and (len(t), 3)); Q unnormalised."""
        from scipy.integrate import solve_ivp
        t_eval = np.asarray(t_eval, float)
        sol = solve_ivp(self.rhs, (0.0, float(t_eval[-1])), np.concatenate([Q0, W0]),
                        method="DOP853", t_eval=t_eval, rtol=rtol, atol=atol)
        assert sol.success, sol.message
        return sol.y[:4].T, sol.y[4:].T

    def from_euler(self, angles, rates):
        return euler_zxz(angles, rates)

    @staticmethod
    def axis(Q):
        """The body axis e3 in space, (..., 3), from Q (normalised here)."""
        Q = np.asarray(Q, float)
        Q = Q / np.linalg.norm(Q, axis=-1, keepdims=True)
        return rotate(Q, EZ)

    def energy(self, Q, W):
        """1/2 Omega^T J Omega + m g l (height of the axis tip), per row."""
        W = np.asarray(W, float)
        return 0.5 * np.sum(self.J * W * W, axis=-1) + self.m * self.g * self.l * self.axis(Q)[..., 2]

    def momenta(self, Q, W):
        """Angular momentum about the space z axis and about the body axis e3
        (the conserved p_phi and p_psi of the Euler-angle form), per row."""
        L_body = self.J * np.asarray(W, float)
        Qn = np.asarray(Q, float) / np.linalg.norm(Q, axis=-1, keepdims=True)
        return rotate(Qn, L_body)[..., 2], L_body[..., 2]


class SpinFrameTop(RigidBodyTop):
    """The same rigid body integrated in the frame that turns with its spin,
    for fast tops whose body rotation at Omega3 costs DOP853 its accuracy.

    For a symmetric body Omega3 is constant (Euler's third equation: I1 = I2
    and the gravity torque has no e3 component).  Write the attitude
    Q(t) = R(t) z(t), z(t) = (cos(Omega3 t/2), 0, 0, sin(Omega3 t/2)), and
    u = rot_z(Omega3 t) (Omega1, Omega2) (the body rates seen from R's
    frame).  Then with Jr(x, y) = (-y, x) and gamma_R = R* e_z R:

        dR/dt = 1/2 R (0, u1, u2, 0),
        du/dt = (I3/I) Omega3 Jr u - (m g l / I) Jr (gamma_R1, gamma_R2),

    (from dOmega/dt = -((I - I3)/I) Omega3 Jr Omega + tau/I, tau = m g l
    (gamma2, -gamma1)): the remaining rotation rate is (I3/I) Omega3 instead of
    Omega3.  R has the body's symmetry axis (z turns about e3), so axis(R)
    is the top's axis; Q = R z recovers the attitude."""

    def solve_spin(self, Q0, W0, t_eval, rtol=1e-13, atol=1e-13):
        """(Q(t), Omega(t)) as solve(), integrated in the spin frame."""
        from scipy.integrate import solve_ivp
        W0 = np.asarray(W0, float)
        w3, mgl_I, rate = W0[2], self.m * self.g * self.l / self.I, self.I3 / self.I * W0[2]

        def rhs(t, y):
            w, x, y_, z, u1, u2 = (float(v) for v in y)
            # 1/2 R (0, u1, u2, 0)
            dw = 0.5 * (-x * u1 - y_ * u2)
            dx = 0.5 * (w * u1 - z * u2)
            dy = 0.5 * (w * u2 + z * u1)
            dz = 0.5 * (x * u2 - y_ * u1)
            g1 = 2.0 * (x * z - w * y_)          # (R* e_z R)_x, _y
            g2 = 2.0 * (y_ * z + w * x)
            return np.array([dw, dx, dy, dz, -rate * u2 + mgl_I * g2, rate * u1 - mgl_I * g1])

        t_eval = np.asarray(t_eval, float)
        sol = solve_ivp(rhs, (0.0, float(t_eval[-1])), np.concatenate([Q0, W0[:2]]),
                        method="DOP853", t_eval=t_eval, rtol=rtol, atol=atol)
        assert sol.success, sol.message
        R, u = sol.y[:4].T, sol.y[4:].T
        a = w3 * t_eval
        z = np.stack([np.cos(a / 2), 0 * a, 0 * a, np.sin(a / 2)], axis=-1)
        c, s = np.cos(a), np.sin(a)
        W = np.stack([c * u[:, 0] + s * u[:, 1], -s * u[:, 0] + c * u[:, 1], np.full_like(a, w3)], -1)
        return qmul(R, z), W
