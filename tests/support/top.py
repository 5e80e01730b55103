"""Near-vertical states of the heavy symmetric top (test_quaternion_top.py, test_topchart.py):
initial momenta whose nutation reaches a given angle from the vertical, from the turning
points of the exact solution's cubic, on TOP Table 3's top and on a slowly spinning one."""
import math

import numpy as np

import symplectic as sp
from support.models import TOP, TOP_Q0, TOP_QDOT0

# The body: a disc of mass m = 0.1 kg and radius r = 5 cm on a short stem, its
# centre l = 2 cm above the fixed tip: I3 = m r^2 / 2 = 1.25e-4 (Table 3's I3),
# I = m (r^2 / 4 + l^2) = 1.025e-4 kg m^2 (parallel axes), g = 9.81.  The motion:
# theta0 = pi/3, thetadot0 = 0, Omega3 = 20 rad/s (p_psi = 2.5e-3; a top needs
# p_psi^2 / I^2 >= (2 m g l / I)(1 + cos theta0) = 574 to rise from 60 degrees to
# the vertical, here 595), p_phi from near_vertical_momenta so that the axis
# turns back 2 mrad from the vertical; (p_psi - p_phi) / p_psi = 2.1e-4, the
# nutation period T = 0.669 s.  h Omega3 = 0.2 at h = 0.01; the papers' N = 40
# ... 320 steps per period are h = 16.7 ... 2.1 ms, h Omega3 = 0.33 ... 0.042,
# the body's whole rate |Omega| <= 24.4 rad/s.
SLOW = dict(m=0.1, I=0.1 * (0.05 ** 2 / 4 + 0.02 ** 2), I3=0.1 * 0.05 ** 2 / 2, l=0.02, g=9.81)
SLOW_OMEGA3 = 20.0


def turning_point_roots(theta_min, params, p_psi):
    """The candidates b = p_phi / I (real parts) for which, at q0 = (0, pi/3, 0) with
    thetadot0 = 0, cos(theta_min) is a turning point of the nutation: the roots of the
    quadratic of near_vertical_momenta; and a = p_psi / I."""
    Ip, mgl = params["I"], params["m"] * params["g"] * params["l"]
    a, beta = p_psi / Ip, 2 * mgl / Ip
    u0, u2 = 0.5, math.cos(theta_min)
    k = (1 - u2 * u2) / (1 - u0 * u0)
    C = (1 - u2 * u2) * beta * (u0 - u2)
    roots = np.roots([k - 1, -2 * a * (k * u0 - u2), k * a * a * u0 * u0 - a * a * u2 * u2 + C])
    return roots.real, a


def near_vertical_momenta(theta_min, side=-1, params=None, p_psi=None):
    """p at q0 = (0, pi/3, 0) with thetadot0 = 0 and p_psi (default TOP Table 3's)
    for the top ``params`` (default TOP Table 3), whose nutation reaches
    theta_min: the turning points u0 = cos(pi/3) and u2 = cos(theta_min) are
    roots of f(u) = (1 - u^2)(alpha - beta u) - (b - a u)^2 (b = p_phi / I,
    a = p_psi / I, alpha - beta u0 = (b - a u0)^2 / (1 - u0^2)), a quadratic in
    b; side -1 (+1) takes the root with p_phi < p_psi (>)."""
    params = TOP if params is None else params
    if p_psi is None:
        p_psi = sp.systems.lagrange_top(**TOP).momentum(TOP_Q0, TOP_QDOT0)[2]
    roots, a = turning_point_roots(theta_min, params, p_psi)
    b = [r for r in roots if np.sign(r - a) == side and abs(r - a) < 1e-3 * a]
    assert len(b) == 1, (roots, a)
    return np.array([b[0] * params["I"], 0.0, p_psi])


def slow_momenta(theta_min=0.002, side=-1):
    return near_vertical_momenta(theta_min, side, SLOW, SLOW["I3"] * SLOW_OMEGA3)
