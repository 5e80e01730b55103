"""The built-in systems' sines and cosines (csrc/core/sym_sincos.h): at most 1 ulp
from the correctly rounded values, which mpmath gives here at 200 bits.

They are read through the systems' own evaluation, scaled by powers of two
(exact, subnormals included): the double pendulum with m1 = m2 = 1/2,
l1 = g = 1, l2 = 2 has grad V = (sin q1, sin q2) and hess V =
diag(cos q1, cos q2); the 3-link chain with masses (2, 1, 1), l = g = 1 has
mu = (4, 2, 1), grad V_i = mu_i sin q_i, hess V_ii = mu_i cos q_i (two angles
in the vector lanes, the third in the scalar tail)."""
import math

import numpy as np
import pytest

mpmath = pytest.importorskip("mpmath")   # with sympy, in the test extra

import symplectic as sp

FAST_MAX = 8.0e5   # SYM_SINCOS_FAST_MAX: beyond it the C library's sin and cos
NEED_DV, NEED_D2V = 16, 32


def ulps(value, exact):
    """|value - exact| in units of the last place of the double nearest exact."""
    e = float(exact)
    if e == 0.0:
        return 0.0 if value == 0.0 else math.inf
    return float(abs(mpmath.mpf(value) - exact) / mpmath.mpf(math.ulp(abs(e))))


def reference(x):
    with mpmath.workprec(200):
        return mpmath.sin(mpmath.mpf(x)), mpmath.cos(mpmath.mpf(x))


def dp_sincos(dp, x1, x2):
    _, _, _, _, dV, d2V = dp._eval(np.array([x1, x2]), np.zeros(2), NEED_DV | NEED_D2V)
    return (dV[0], d2V[0, 0]), (dV[1], d2V[1, 1])


CHAIN_MU = np.array([4.0, 2.0, 1.0])


def chain():
    return sp.systems.pendulum_chain(3, m=[2.0, 1.0, 1.0], l=1.0, g=1.0)


def chain_sincos(ch, q):
    """(sin q, cos q) of the chain's three angles."""
    _, _, _, _, dV, d2V = ch._eval(np.asarray(q, float), np.zeros(3), NEED_DV | NEED_D2V)
    return dV / CHAIN_MU, np.diag(d2V) / CHAIN_MU


def samples():
    rng = np.random.default_rng(20261124)
    xs = list(rng.uniform(-2 * math.pi, 2 * math.pi, 3000))
    # magnitudes 1e-300 ... FAST_MAX, both signs
    xs += list(np.where(rng.uniform(size=3000) < 0.5, -1.0, 1.0) *
               10.0 ** rng.uniform(-300, math.log10(FAST_MAX), 3000))
    with mpmath.workprec(200):
        # next to multiples of pi/2 (r near 0: the reduction's cancellation) ...
        for k in rng.integers(1, 500000, 400):
            b = float(mpmath.pi * int(k) / 2)
            xs += [b, math.nextafter(b, math.inf), math.nextafter(b, -math.inf)]
        # ... and to odd multiples of pi/4 (|r| near pi/4: the quadrant switches)
        for k in rng.integers(-200000, 200000, 400):
            b = float(mpmath.pi * (2 * int(k) + 1) / 4)
            xs += [b, math.nextafter(b, math.inf), math.nextafter(b, -math.inf)]
    xs += [0.0, -0.0, 5e-324, 1e-310, FAST_MAX * (1 - 2 ** -52), FAST_MAX, 1e6, -3e9, 1e300]
    return np.array(xs)


def test_double_pendulum_sin_cos_within_one_ulp():
    dp = sp.systems.double_pendulum(m1=0.5, m2=0.5, l1=1.0, l2=2.0, g=1.0)
    xs = samples()
    ys = xs[::-1].copy()   # the second lane sees other arguments than the first
    worst = 0.0
    for x1, x2 in zip(xs, ys):
        for x, (s, c) in zip((x1, x2), dp_sincos(dp, x1, x2)):
            es, ec = reference(x)
            worst = max(worst, ulps(s, es), ulps(c, ec))
    assert worst <= 1.0, worst


def test_chain_odd_lane_and_zero():
    ch = chain()
    xs = samples()
    worst = 0.0
    for i in range(0, len(xs) - 2, 3):
        q = xs[i:i + 3]
        for x, s, c in zip(q, *chain_sincos(ch, q)):
            es, ec = reference(x)
            worst = max(worst, ulps(s, es), ulps(c, ec))
    assert worst <= 1.0, worst
    # sin(+-0) = 0 and cos(+-0) = 1 exactly, in the vector lanes and in the tail
    # (the sign of sin(-0) is not kept: +0, where libm gives -0)
    s, c = chain_sincos(ch, [-0.0, 0.0, -0.0])
    assert np.all(s == 0.0)
    assert np.all(c == 1.0)


@pytest.mark.parametrize("big", [FAST_MAX, 1e6, 1e17])
def test_beyond_the_fast_range_is_libm(big):
    """An argument at or beyond SYM_SINCOS_FAST_MAX sends the call to the C
    library: its lanes then equal Python's math (libm) bitwise."""
    dp = sp.systems.double_pendulum(m1=0.5, m2=0.5, l1=1.0, l2=2.0, g=1.0)
    (s1, c1), (s2, c2) = dp_sincos(dp, 0.7, big)
    assert (s1, c1) == (math.sin(0.7), math.cos(0.7))
    assert (s2, c2) == (math.sin(big), math.cos(big))


def test_vector_lanes_equal_the_scalar_tail_bitwise():
    """The 3-link chain computes its first two angles in a vector and the third
    in the scalar loop: the same operations, so the same bits for the same
    argument."""
    ch = chain()
    for x in samples()[::7]:
        for lane, q in ((0, [x, 0.5, x]), (1, [0.5, x, x])):
            s, c = chain_sincos(ch, q)
            assert s[lane] == s[2] and c[lane] == c[2], x
