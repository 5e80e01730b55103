"""The ZXZ Lagrange top's closest approach to its coordinate singularity,
from the constants of motion (the pre-run check of ``systems.lagrange_top``).

The built-in's C evaluation refuses |sin theta| < ``MIN_SIN`` (= 0.01, the
core's ``SYM_TOP_MIN_SIN``, read from ``_engine.TOP_MIN_SIN``) with SYM_ECHART,
but only at the points it evaluates: a step whose nodes straddle the 10 mrad
disc round the vertical passes unrefused, and the run returns the axis wrong
by about half a radian (tests/model/test_quaternion_top.py).  The exact motion is
known in advance, though.  The heavy symmetric top with no other force
conserves the energy E, p_phi and p_psi, and u = cos theta obeys

    udot^2 = f(u) = (1 - u^2)(alpha - beta u) - (b - a u)^2,
    a = p_psi / I,  b = p_phi / I,  beta = 2 m g l / I,
    alpha - beta u0 = gamma = thetadot0^2 + ((b - a u0) / sin theta0)^2

(TOP eq. (18aa); the cubic of :class:`symplectic.exact.LagrangeTop`).  Since
f(+-1) = -(b -+ a)^2 <= 0 and f(u0) = (sin theta0 thetadot0)^2 >= 0, f has
exactly one root in [u0, 1] and one in [-1, u0] (whatever the sign of m g l;
a double root at u0 for steady precession), and the motion fills the
interval between them: f > 0 inside, f < 0 between each root and +-1.  So
the motion comes within |sin theta| < s of the vertical iff f(u_s) > 0 at
u_s = sqrt(1 - s^2), and of theta = pi iff f(-u_s) > 0: :func:`refusal`
decides with two evaluations of the cubic (about 2 us; a step costs some
7 us of Python), and computes the turning points only to word its message.

Rounding.  f is evaluated in the local variable of the nearest of three
points, each form's constant term exact or nearly so: w = u - u0 near u0
(constant term (sin theta0 thetadot0)^2, exact.LagrangeTop's form), and
v = 1 -+ u near the poles (constant term -(p_phi -+ p_psi)^2 / I^2, computed
from the difference of the two momenta), so that a turning point near a pole
has the relative accuracy of its distance v from it (the brackets never
leave [-1, 1]: a root "at 1 + 1e-16" cannot make sin theta a nan).  The
turning points are found by bisection in v (geometric while the bracket
spans orders of magnitude) to a relative 4e-16 of v; a motion through the
pole (p_phi = +-p_psi, the "sleeping" branch) comes out at v < 1e-30 V,
reported as 0.  A state at a turning point (thetadot0 = 0) is handled by
the sign of the first nonzero derivative of f there (steady precession:
both sides negative, the range is the point itself).

Scope.  The check holds for the built-in's own Lagrangian: no other force
acts on it (this package adds none to the built-ins).  A state whose cubic
overflows (momenta beyond ~1e150) is not pre-checked; the pointwise check
in C still applies to it, and to what does not go through ``step``,
``integrate`` or ``integrate_many`` (``analysis.tangent_map``, ``_core``).
"""
import math

from .. import _engine

#: The threshold on |sin theta| of the C evaluation (SYM_TOP_MIN_SIN).
MIN_SIN = _engine.TOP_MIN_SIN

#: The core's text of SYM_ECHART, the reason of the C refusal.
REASON = _engine.ECHART_REASON


def _poly(c, x):
    return ((c[3] * x + c[2]) * x + c[1]) * x + c[0]


def _pole(sign, gam, beta, a, V, d):
    """The coefficients of f in v = 1 - sign u (the distance from the pole
    u = sign), V = 1 - sign u0, d = b - sign a = (p_phi - sign p_psi) / I:

        f = -d^2 + (2 g - 2 sign a d) v + (2 sign beta - g - a^2) v^2 - sign beta v^3,
        g = gamma - sign beta V = alpha - sign beta

    (from 1 - u^2 = v (2 - v), alpha - beta u = g + sign beta v and
    b - a u = d + sign a v)."""
    g = gam - sign * beta * V
    return (-d * d, 2.0 * g - 2.0 * sign * a * d, 2.0 * sign * beta - g - a * a, -sign * beta)


class Cubic:
    """f(u) of one state of the ZXZ top (module docstring) in its three local
    forms: ``at(side, v)`` is f at u = side (1 - v), side +1 (vertical) or -1
    (theta = pi), v in [0, V[side]] (V = 1 -+ cos theta0: v = V is u0)."""

    def __init__(self, q0, p0, I, I3, mgl):
        del I3                                   # the nutation does not depend on it
        th = float(q0[1])
        p_phi, p_th, p_psi = (float(x) for x in p0)
        s0, u0 = math.sin(th), math.cos(th)
        self.sin0 = abs(s0)
        a, b, beta = p_psi / I, p_phi / I, 2.0 * mgl / I
        thdot = p_th / I
        d0 = b - a * u0
        r = d0 / s0 if s0 != 0.0 else math.inf     # (products: ** raises OverflowError)
        gam = thdot * thdot + r * r
        # w = u - u0: f = C0 + C1 w + C2 w^2 + C3 w^3, C0 = udot0^2 exactly
        self.C = ((s0 * thdot) * (s0 * thdot), 2.0 * a * d0 - s0 * s0 * beta - 2.0 * u0 * gam,
                  2.0 * u0 * beta - gam - a * a, beta)
        # V = 1 - u0 = 2 sin^2(theta0/2), 1 + u0 = 2 cos^2(theta0/2) (no cancellation)
        self.V = {1: 2.0 * math.sin(0.5 * th) ** 2, -1: 2.0 * math.cos(0.5 * th) ** 2}
        self.D = {1: _pole(1, gam, beta, a, self.V[1], (p_phi - p_psi) / I),
                  -1: _pole(-1, gam, beta, a, self.V[-1], (p_phi + p_psi) / I)}
        self.finite = all(math.isfinite(x) for x in self.C + self.D[1] + self.D[-1])

    def at(self, side, v):
        """f at u = side (1 - v), in the form of the nearer point (pole or u0)."""
        V = self.V[side]
        if v <= 0.5 * V:
            return _poly(self.D[side], v)
        return _poly(self.C, side * (V - v))          # w = u - u0 = side (V - v)

    def _leaves(self, side):
        """From a turning point u0 (f(u0) = 0): does the motion move toward
        this pole, i.e. is f > 0 just beside u0 on this side?  The sign of the
        first nonzero term of C1 w + C2 w^2 + C3 w^3 with sign(w) = side."""
        for k in (1, 2, 3):
            c = self.C[k] * side ** k
            if c != 0.0:
                return c > 0.0
        return False                                    # f = 0: the top rests in u

    def turning(self, side):
        """v* in [0, V]: the turning point on this side, at u = side (1 - v*)
        (f <= 0 on [0, v*], f > 0 on (v*, V) unless v* = V)."""
        V = self.V[side]
        if self.C[0] == 0.0 and not self._leaves(side):
            return V                                    # u0 is this side's turning point
        lo, hi = 0.0, V                                 # f(lo) <= 0 < f(hi)
        for _ in range(400):
            if lo == 0.0:
                if hi <= 1e-30 * V:
                    return 0.0                          # through the pole (sleeping branch)
                mid = hi * 2.0 ** -10
            elif hi > 4.0 * lo:
                mid = math.sqrt(lo * hi)
            else:
                mid = 0.5 * (lo + hi)
            if not lo < mid < hi:
                break
            if self.at(side, mid) > 0.0:
                hi = mid
            else:
                lo = mid
            if hi - lo <= 4e-16 * hi:
                break
        return 0.5 * (lo + hi)


def _angle(v):
    """The angle from a pole of the point at distance v = 1 -+ cos: 2 asin(sqrt(v/2))."""
    return 2.0 * math.asin(math.sqrt(min(max(v, 0.0), 2.0) / 2.0))


def theta_range(q0, p0, m, I, I3, l, g):
    """(theta_min, theta_max) in [0, pi] of the exact motion of the ZXZ top
    ``systems.lagrange_top(m, I, I3, l, g)`` from (q0, p0): the nutation
    angle of the axis (arccos u) between its turning points.  NumPy/SciPy not
    needed.  ValueError when sin(theta0) = 0 (the state is not defined)."""
    cub = Cubic(q0, p0, I, I3, m * g * l)
    if cub.sin0 == 0.0:
        raise ValueError("sin(theta0) = 0: the ZXZ state is not defined at the pole")
    if not cub.finite:
        raise ValueError("the state's cubic overflows (momenta too large)")
    return _angle(cub.turning(1)), math.pi - _angle(cub.turning(-1))


def refusal(params, q, p):
    """None when the exact motion of the ZXZ top ``params`` from (q, p) keeps
    |sin theta| >= MIN_SIN; otherwise the reason to refuse it before the
    first step (the core's SYM_ECHART text and the closest approach)."""
    I, mgl = params["I"], params["m"] * params["g"] * params["l"]
    th = float(q[1])
    s0 = math.sin(th)
    if abs(s0) >= MIN_SIN:
        # the fast path: the signs of f at |sin theta| = MIN_SIN, in the poles' forms
        # (v_s = 1 - sqrt(1 - s^2) <= V on both sides since |sin theta0| >= s)
        p_phi, p_th, p_psi = float(p[0]), float(p[1]), float(p[2])
        u0 = math.cos(th)
        a, beta, thdot = p_psi / I, 2.0 * mgl / I, p_th / I
        d0 = (p_phi - p_psi * u0) / I
        r = d0 / s0
        gam = thdot * thdot + r * r
        V1, V2 = 2.0 * math.sin(0.5 * th) ** 2, 2.0 * math.cos(0.5 * th) ** 2
        if _VS <= 0.5 * min(V1, V2):               # (else Cubic.at takes the w form)
            f1 = _poly(_pole(1, gam, beta, a, V1, (p_phi - p_psi) / I), _VS)
            f2 = _poly(_pole(-1, gam, beta, a, V2, (p_phi + p_psi) / I), _VS)
            if not (math.isfinite(f1) and math.isfinite(f2)):
                return None                         # beyond this check: C's pointwise one
            if not (f1 > 0.0 or f2 > 0.0):
                return None
    cub = Cubic(q, p, I, params["I3"], mgl)
    if cub.sin0 >= MIN_SIN:
        if not cub.finite:
            return None
        if not (cub.at(1, _VS) > 0.0 or cub.at(-1, _VS) > 0.0):
            return None
    if cub.sin0 == 0.0 or not cub.finite:
        where = f"it starts at |sin(theta)| = {cub.sin0:.3g}"
    else:
        v_top, v_bot = cub.turning(1), cub.turning(-1)
        side, v = (1, v_top) if v_top <= v_bot else (-1, v_bot)
        pole = "the vertical" if side == 1 else "theta = pi"
        where = (f"it starts at |sin(theta)| = {cub.sin0:.3g}, and its"
                 if cub.sin0 < MIN_SIN else "its")
        where += (f" exact motion (E, p_phi and p_psi conserved) comes within "
                  f"{1e3 * _angle(v):.4g} mrad of {pole}, |sin(theta)| = "
                  f"{math.sqrt(v * (2.0 - v)):.3g}")
    return (f"{REASON} [refused before the first step: {where} < {MIN_SIN:g}; steps can "
            f"jump over that disc unrefused by the pointwise check, with an O(1) error]")


#: v at |sin theta| = MIN_SIN: 1 - sqrt(1 - s^2), written without cancellation.
_VS = MIN_SIN * MIN_SIN / (1.0 + math.sqrt(1.0 - MIN_SIN * MIN_SIN))
