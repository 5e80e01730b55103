"""Exact solutions used as references.

The nonlinear ones need SciPy's elliptic functions
(``pip install symplectic-vi[exact]``); without it they raise ImportError
with that instruction.  ``linear`` (modal superposition for
M qdd + K q = 0, :func:`symplectic.linear.exact`) needs only NumPy.
"""
import math

import numpy as np

from .linear import exact as linear  # noqa: F401  (re-exported: sp.exact.linear)


def _special():
    try:
        from scipy import special
    except ImportError:  # pragma: no cover - exercised without scipy
        raise ImportError("symplectic.exact needs SciPy for elliptic functions: "
                          "pip install 'symplectic-vi[exact]' (or pip install scipy)") from None
    return special


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
