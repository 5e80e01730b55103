"""Exact solutions used as references.

- nonlinear pendulum (FVCA): :func:`pendulum` (q(t), p(t)), :func:`pendulum_period`;
- Lagrange top (TOP, Section 4): :class:`LagrangeTop` (theta, phi, psi, momenta,
  the symmetry axis in space, nutation period, conserved p_phi, p_psi and H,
  from any initial state),
  :func:`lagrange_top`, :func:`lagrange_top_theta`, :func:`lagrange_top_period`.

The nonlinear ones need SciPy (``pip install symplectic-vi[exact]``); without it
they raise ImportError with that instruction.
``linear`` (modal superposition for M qdd + K q = 0,
:func:`symplectic.linear.exact`) needs only NumPy.
"""
import math

import numpy as np

from . import _optional
from .linear import exact as linear  # noqa: F401  (re-exported: sp.exact.linear)


def _special():
    return _optional.load("scipy.special", "symplectic.exact needs SciPy for elliptic functions",
                          "exact", "scipy")


def _pendulum_modulus(q0, p0, m, omega):
    """Energy-based modulus k and phase u0 of a librating pendulum."""
    E = 0.5 * p0 * p0 / m + m * omega * omega * (1.0 - math.cos(q0))
    k2 = E / (2.0 * m * omega * omega)       # = sin^2(amplitude / 2)
    if not k2 < 1.0:
        raise ValueError("only librating motions (energy below the separatrix, "
                         f"H < 2 m omega^2) are supported; got H = {E:g}")
    return k2


def pendulum_period(q0=math.pi / 2, p0=0.0, m=1.0, omega=2 * math.pi):
    """Period T = 4 K(k^2) / omega of the pendulum L = 1/2 m qdot^2 - m omega^2 (1 - cos q).

    k = sin(a/2) with a the amplitude, from the energy of (q0, p0) (FVCA eq. (25)).
    For q0 = pi/2, p0 = 0, omega = 2 pi: T = 1.1803405990... s.
    """
    sp = _special()
    k2 = _pendulum_modulus(float(q0), float(p0), float(m), float(omega))
    return 4.0 * sp.ellipk(k2) / omega


def pendulum(t, q0=math.pi / 2, p0=0.0, m=1.0, omega=2 * math.pi):
    """Exact motion of the pendulum L = 1/2 m qdot^2 - m omega^2 (1 - cos q) (FVCA Annex).

    With k^2 = H / (2 m omega^2) (k = sin of half the amplitude) and
    u = omega t + u0,

        q(t) = 2 arcsin(k sn(u | k^2)),     p(t) = 2 m k omega cn(u | k^2),

    where u0 is fixed by (q0, p0) (u0 = K(k^2) for p0 = 0, q0 > 0).  Librating
    motions only (|q| < pi).

    Returns (q, p) as arrays shaped like t.
    """
    sp = _special()
    q0, p0, m, omega = float(q0), float(p0), float(m), float(omega)
    k2 = _pendulum_modulus(q0, p0, m, omega)
    t = np.asarray(t, dtype=float)
    if k2 == 0.0:
        z = np.zeros_like(t)
        return z, z.copy()
    k = math.sqrt(k2)
    # amplitude phi0 of u0: sn(u0) = sin(q0/2)/k, cn(u0) = p0 / (2 m k omega)
    s0 = max(-1.0, min(1.0, math.sin(q0 / 2.0) / k))
    c0 = p0 / (2.0 * m * k * omega)
    phi0 = math.atan2(s0, c0)
    u0 = float(sp.ellipkinc(phi0, k2)) if phi0 >= 0 else -float(sp.ellipkinc(-phi0, k2))
    sn, cn, _dn, _ph = sp.ellipj(omega * t + u0, k2)
    return 2.0 * np.arcsin(k * sn), 2.0 * m * k * omega * cn


# ---------------------------------------------------------------- Lagrange top
def _gauss_legendre(m):
    x, w = np.polynomial.legendre.leggauss(m)
    return 0.5 * (x + 1.0), 0.5 * w          # nodes and weights on [0, 1]


class LagrangeTop:
    """Exact motion of the heavy symmetric (Lagrange) top, any initial state.

    L = 1/2 I (phidot^2 sin^2 theta + thetadot^2) + 1/2 I3 (psidot + phidot cos theta)^2
        - m g l cos theta,

    in ZXZ Euler angles q = (phi, theta, psi) with canonical momenta p = M(q) qdot,
    exactly as :func:`symplectic.systems.lagrange_top` (TOP paper, Section 4).

    Nutation (TOP eq. (18aa), in the Jacobi form of docs/errata.md#exact-lagrange-top).  With
    u = cos theta, energy and the conserved momenta p_phi, p_psi give
    udot^2 = f(u) = (1 - u^2)(alpha - beta u) - (b - a u)^2, beta = 2 m g l / I,
    a = p_psi / I, b = p_phi / I, a cubic with roots u1 <= u2 <= u3 (u3 > 1 for
    m g l > 0); the motion fills [u1, u2] and

        u(t) = u1 + (u2 - u1) sn^2(lambda (t - t_turn) | k^2),
        k^2 = (u2 - u1) / (u3 - u1),   lambda = sqrt(m g l (u3 - u1) / (2 I)),

    where t_turn is a time with u = u1 (theta at its maximum).  For m g l < 0
    (centre of mass below the support) the same holds for -u (the cubic is
    mirrored, see ``u_range``).  The nutation
    period is 2 K(k^2) / lambda.  The cubic is written in w = u - cos theta0 so
    that its constant term is the exact sin^2(theta0) thetadot0^2: when
    thetadot0 = 0 the root w = 0 is deflated analytically (a numerical root
    finder costs ~1e-8 in phase, docs/errata.md#exact-lagrange-top); otherwise the roots are polished
    by Newton's method.  The initial state may be at any phase: t_turn follows
    from F(arcsin sqrt(-w1/(w2 - w1)) | k^2) with the sign of udot0.

    Precession and spin are the quadratures
    phidot = (p_phi - p_psi u) / (I (1 - u^2)), psidot = p_psi / I3 - phidot u,
    computed with composite Gauss-Legendre rules over a fixed partition of one
    nutation period (``panels`` panels of ``nodes`` nodes; the integrands are
    periodic in t, so the integral over k whole periods is k times the one
    over a period).

    Parameters
    ----------
    q0, p0 : array_like (3,)
        Initial (phi, theta, psi) and canonical momenta; 0 < theta0 < pi.
    m, I, I3, l, g : float
        As in :func:`symplectic.systems.lagrange_top`; defaults are TOP Table 3.
        m g l must be nonzero.

    Attributes
    ----------
    p_phi, p_psi : float
        The conserved momenta of the cyclic coordinates.
    energy : float
        H = 1/2 p^T M^-1 p + m g l cos theta.
    roots : (u1, u2, u3)
        Roots of the cubic in u = cos theta, sorted.
    u_range : (u_min, u_max)
        The two roots between which cos theta moves ((u1, u2) for m g l > 0;
        (u2, u3) for m g l < 0, where the cubic is mirrored u -> -u).
    k2, lam, t_turn : float
        Modulus, time scale and turning time of u(t) above.
    period : float
        Nutation period 2 K(k^2) / lambda (s).

    Examples
    --------
    ``LagrangeTop.from_velocities([0, pi/3, 0], [9.2, 0, 252]).period``
    is 1.8472390... s for the Table 3 parameters.
    """

    def __init__(self, q0, p0, m=0.1, I=0.002329969592394382, I3=0.000125, l=0.15, g=9.81,
                 *, panels=64, nodes=16):
        sp = _special()
        q0 = np.asarray(q0, dtype=float).reshape(3)
        p0 = np.asarray(p0, dtype=float).reshape(3)
        m, I, I3, l, g = (float(x) for x in (m, I, I3, l, g))
        if not (I > 0 and I3 > 0):
            raise ValueError("I and I3 must be > 0")
        mgl = m * g * l
        if mgl == 0.0:
            raise ValueError("m g l must be nonzero (the torque-free top is not covered)")
        th0 = float(q0[1])
        s0, c0 = math.sin(th0), math.cos(th0)
        if not s0 > 0.0:
            raise ValueError("theta0 must lie in (0, pi)")
        self.params = dict(m=m, I=I, I3=I3, l=l, g=g)
        self.q0, self.p0 = q0.copy(), p0.copy()
        self.I, self.I3, self.mgl = I, I3, mgl
        self.p_phi, self.p_psi = float(p0[0]), float(p0[2])
        self.energy = float(0.5 * p0[1] ** 2 / I + (self.p_phi - self.p_psi * c0) ** 2 / (2 * I * s0 * s0)
                            + self.p_psi ** 2 / (2 * I3) + mgl * c0)
        # Cubic f(u0 + w) = C0 + C1 w + C2 w^2 + C3 w^3 (see the class docstring).
        # If m g l < 0, mirror u -> -u (a -> -a, beta -> -beta) so that the
        # leading coefficient is positive; sgn maps back.
        sgn = 1.0 if mgl > 0 else -1.0
        u0 = sgn * c0
        beta = 2.0 * abs(mgl) / I
        a, b = sgn * self.p_psi / I, self.p_phi / I
        thdot0 = p0[1] / I
        d = b - a * u0
        gam = thdot0 ** 2 + (d / s0) ** 2            # alpha - beta u0 >= 0
        C0 = (s0 * thdot0) ** 2                         # = udot0^2, exact
        C1 = 2.0 * a * d - s0 * s0 * beta - 2.0 * u0 * gam
        C2 = 2.0 * u0 * beta - gam - a * a
        C3 = beta
        if C0 == 0.0:
            disc = C2 * C2 - 4.0 * C3 * C1
            sq = math.sqrt(max(disc, 0.0))
            qq = -0.5 * (C2 + math.copysign(sq, C2))
            others = sorted([qq / C3, C1 / qq if qq != 0.0 else 0.0])
            w = sorted([0.0] + others)
        else:
            w = np.roots([C3, C2, C1, C0])
            w = np.sort(w[np.abs(w.imag) <= 1e-7 * (1.0 + np.abs(w.real))].real)
            if len(w) != 3:
                raise ValueError("no bounded nutation found for this state")
            w = list(w)
            for i in range(3):                          # Newton polish
                for _ in range(4):
                    fv = ((C3 * w[i] + C2) * w[i] + C1) * w[i] + C0
                    dv = (3 * C3 * w[i] + 2 * C2) * w[i] + C1
                    if dv == 0.0:
                        break
                    w[i] -= fv / dv
            w.sort()
        # The motion fills [w1, w2], the interval of f >= 0 containing w = 0.
        w1, w2, w3 = (float(x) for x in w)
        w1, w2 = min(w1, 0.0), max(w2, 0.0)
        self._u0, self._sgn, self._w = u0, sgn, (w1, w2, w3)
        self.roots = tuple(sorted(float(sgn * (u0 + x)) for x in (w1, w2, w3)))
        self.u_range = tuple(sorted(float(sgn * (u0 + x)) for x in (w1, w2)))
        span = w2 - w1
        self.k2 = span / (w3 - w1)
        self.lam = 0.5 * math.sqrt(beta * (w3 - w1))
        self.period = 2.0 * float(sp.ellipk(self.k2)) / self.lam
        # Phase: sn^2(lam (0 - t_turn)) = -w1 / span, sign of sn cn = sign of udot0.
        udot0 = -s0 * thdot0 * sgn
        if span > 0.0:
            amp = math.atan2(math.sqrt(max(-w1, 0.0)), math.sqrt(max(w2, 0.0)))
            F = float(sp.ellipkinc(amp, self.k2))
            self.t_turn = -math.copysign(F, udot0) / self.lam if udot0 != 0.0 else -F / self.lam
        else:
            self.t_turn = 0.0
        self._panels, self._nodes = int(panels), int(nodes)
        if self._panels < 1 or self._nodes < 1:
            raise ValueError("panels and nodes must be >= 1")
        self._tables = None

    def _quadrature(self):
        """Gauss-Legendre tables over one period from t_turn (built on first use)."""
        if self._tables is None:
            x, wts = _gauss_legendre(self._nodes)
            hpan = self.period / self._panels
            tq = (np.arange(self._panels)[:, None] * hpan + hpan * x[None, :]).ravel() + self.t_turn
            fphi, fpsi = self._rates(tq)
            cum_phi = np.concatenate([[0.0], np.cumsum(hpan * (fphi.reshape(self._panels, -1) @ wts))])
            cum_psi = np.concatenate([[0.0], np.cumsum(hpan * (fpsi.reshape(self._panels, -1) @ wts))])
            self._tables = (x, wts, cum_phi, cum_psi)
            F0 = self._primitives(0.0)
            self._F0 = (float(F0[0]), float(F0[1]))
        return self._tables

    @classmethod
    def from_velocities(cls, q0, qdot0, m=0.1, I=0.002329969592394382, I3=0.000125, l=0.15,
                        g=9.81, **kw):
        """Same, from the initial Euler angle rates qdot0 (p0 = M(q0) qdot0)."""
        q0 = np.asarray(q0, dtype=float).reshape(3)
        qd = np.asarray(qdot0, dtype=float).reshape(3)
        s, c = math.sin(q0[1]), math.cos(q0[1])
        M = np.array([[I * s * s + I3 * c * c, 0.0, I3 * c], [0.0, I, 0.0], [I3 * c, 0.0, I3]])
        return cls(q0, M @ qd, m, I, I3, l, g, **kw)

    @classmethod
    def from_system(cls, system, q0, p0, **kw):
        """From a :func:`symplectic.systems.lagrange_top` system's parameters."""
        prm = system.params
        if prm is None or set(prm) != {"m", "I", "I3", "l", "g"}:
            raise ValueError("system must be symplectic.systems.lagrange_top(...)")
        return cls(q0, p0, **prm, **kw)

    # -- nutation ------------------------------------------------------
    def _jacobi(self, t):
        sp = _special()
        t = np.asarray(t, dtype=float)
        return sp.ellipj(self.lam * (t - self.t_turn), self.k2)

    def cos_theta(self, t):
        """u(t) = cos theta(t)."""
        sn, _, _, _ = self._jacobi(t)
        w1, w2, _ = self._w
        return self._sgn * (self._u0 + (w1 + (w2 - w1) * sn * sn))

    def theta(self, t):
        """Nutation angle theta(t) (rad), array shaped like t."""
        return np.arccos(np.clip(self.cos_theta(t), -1.0, 1.0))

    def theta_dot(self, t):
        """thetadot(t) = -udot / sin theta."""
        sn, cn, dn, _ = self._jacobi(t)
        w1, w2, _ = self._w
        u = self._sgn * (self._u0 + (w1 + (w2 - w1) * sn * sn))
        udot = self._sgn * 2.0 * (w2 - w1) * self.lam * sn * cn * dn
        return -udot / np.sqrt(np.maximum(1.0 - u * u, 0.0))

    # -- precession and spin -------------------------------------------
    def _rates(self, t):
        u = self.cos_theta(t)
        phidot = (self.p_phi - self.p_psi * u) / (self.I * (1.0 - u * u))
        return phidot, self.p_psi / self.I3 - phidot * u

    def _primitives(self, t):
        """Integrals of phidot and psidot from t_turn to t."""
        t = np.asarray(t, dtype=float)
        shape = t.shape
        s = t.ravel() - self.t_turn
        npd = np.floor(s / self.period)
        r = s - npd * self.period                      # in [0, period) up to rounding
        x, wts, cum_phi, cum_psi = self._quadrature()
        hpan = self.period / self._panels
        # r may round to just below 0 at s = k period (s / period rounding up to k):
        # panel 0 then, not -1 (cum_phi[-1], the whole period's increment)
        j = np.clip(np.floor(r / hpan).astype(int), 0, self._panels - 1)
        left = j * hpan
        width = r - left
        tq = self.t_turn + left[:, None] + width[:, None] * x[None, :]
        fphi, fpsi = self._rates(tq)
        Pphi = npd * cum_phi[-1] + cum_phi[j] + width * (fphi @ wts)
        Ppsi = npd * cum_psi[-1] + cum_psi[j] + width * (fpsi @ wts)
        return Pphi.reshape(shape), Ppsi.reshape(shape)

    def phi(self, t):
        """Precession angle phi(t)."""
        P = self._primitives(t)[0]
        return self.q0[0] + P - self._F0[0]

    def psi(self, t):
        """Spin angle psi(t)."""
        P = self._primitives(t)[1]
        return self.q0[2] + P - self._F0[1]

    def axis(self, t):
        """The symmetry axis in space at times t, shape t.shape + (3,):

            (sin theta sin phi, -sin theta cos phi, cos theta),

        the body axis e3 under R = Rz(phi) Rx(theta) Rz(psi) (ZXZ), as
        :meth:`symplectic.systems.QuaternionTop.axis` gives it from Q -- so
        the Euler-angle and quaternion forms of the top can be compared.
        """
        t = np.asarray(t, dtype=float)
        phi = self.phi(t)
        u = self.cos_theta(t)
        s = np.sqrt(np.maximum(1.0 - u * u, 0.0))
        return np.stack([s * np.sin(phi), -s * np.cos(phi), u], axis=-1)

    def state(self, t):
        """(q, p) at times t: arrays (len(t), 3) (or (3,) for scalar t)."""
        t = np.asarray(t, dtype=float)
        Pphi, Ppsi = self._primitives(t)
        q = np.stack([self.q0[0] + Pphi - self._F0[0], self.theta(t),
                      self.q0[2] + Ppsi - self._F0[1]], axis=-1)
        p = np.stack([np.full(t.shape, self.p_phi), self.I * self.theta_dot(t),
                      np.full(t.shape, self.p_psi)], axis=-1)
        return q, p

    __call__ = state

    def __repr__(self):
        return (f"<LagrangeTop p_phi={self.p_phi:.6g} p_psi={self.p_psi:.6g} H={self.energy:.6g} "
                f"period={self.period:.10g}>")


def lagrange_top(t, q0, p0, m=0.1, I=0.002329969592394382, I3=0.000125, l=0.15, g=9.81):
    """Exact (q(t), p(t)) of the Lagrange top from (q0, p0); see :class:`LagrangeTop`.

    Returns arrays (len(t), 3).  Defaults are TOP Table 3's parameters (g = 9.81).
    """
    return LagrangeTop(q0, p0, m, I, I3, l, g).state(t)


def lagrange_top_theta(t, q0, p0, m=0.1, I=0.002329969592394382, I3=0.000125, l=0.15, g=9.81):
    """Exact nutation theta(t) of the Lagrange top (TOP eq. (18aa)); see :class:`LagrangeTop`."""
    return LagrangeTop(q0, p0, m, I, I3, l, g).theta(t)


def lagrange_top_period(q0, p0, m=0.1, I=0.002329969592394382, I3=0.000125, l=0.15, g=9.81):
    """Nutation period 2 K(k^2) / lambda of the Lagrange top (s); see :class:`LagrangeTop`.

    For TOP Table 3 (q0 = (0, pi/3, 0), qdot0 = (9.2, 0, 252)): 1.8472390 s
    (the printed 1.84671 s corresponds to I rounded to 0.00233, docs/errata.md#flagged-published-values).
    """
    return LagrangeTop(q0, p0, m, I, I3, l, g).period
