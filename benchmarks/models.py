"""The benchmark problems, written for each competitor.

- built-in C systems of ``symplectic`` (the subject of the benchmark);
- Hamilton's equations  qdot = M(q)^-1 p,  pdot = -grad V + 1/2 qdot^T dM/dq qdot
  in closed form with scalar ``math`` arithmetic, for SciPy's ``solve_ivp`` and
  SUNDIALS CVODE (the fastest honest Python right-hand sides: no linear solve,
  no NumPy temporaries except the returned array);
- the double pendulum in every Python form ``symplectic`` accepts (plain
  callables, vectorized, combined, compiled C callback);
- energies H(q, p) vectorised over a trajectory, the same function for every
  method so that e_H is measured identically.
"""
import ctypes
import math
import os
import shutil
import subprocess
import sysconfig
import tempfile

import numpy as np

import symplectic as sp

HERE = os.path.dirname(os.path.abspath(__file__))

# ------------------------------------------------------------------ problems
G = 9.81
OMEGA0 = 2 * math.pi
L_DP = G / OMEGA0 ** 2                  # TOP paper: l1 = l2 = g / omega0^2
DP = dict(m1=1.0, m2=1.0, l1=L_DP, l2=L_DP, g=G)
DP_Q0 = np.array([math.pi / 4, math.pi / 3])       # TOP Table 1
DP_P0 = np.zeros(2)

PEND = dict(m=1.0, omega=2 * math.pi)               # FVCA Table 1
PEND_Q0 = np.array([math.pi / 2])
PEND_P0 = np.zeros(1)

TOP = dict(m=0.1, I=0.002329969592394382, I3=0.000125, l=0.15, g=G)   # TOP Table 3
TOP_Q0 = np.array([0.0, math.pi / 3, 0.0])
TOP_QDOT0 = np.array([9.2, 0.0, 252.0])
TOP_PERIOD = 1.8472390                                # nutation period (docs/errata.md)


def dp_system():
    return sp.systems.double_pendulum(**DP)


def pendulum_system():
    return sp.systems.pendulum(**PEND)


def top_system():
    return sp.systems.lagrange_top(**TOP)


def top_p0():
    return top_system().mass(TOP_Q0) @ TOP_QDOT0


# ------------------------------------------------------------------ double pendulum
_A = (DP["m1"] + DP["m2"]) * DP["l1"] ** 2            # M11
_B = DP["m2"] * DP["l1"] * DP["l2"]                   # M12 = _B cos(q1 - q2)
_D = DP["m2"] * DP["l2"] ** 2                         # M22
_V1 = (DP["m1"] + DP["m2"]) * DP["g"] * DP["l1"]      # V = -_V1 cos q1 - _V2 cos q2
_V2 = DP["m2"] * DP["g"] * DP["l2"]


def _dp_vdot(y):
    """(v1, v2, pdot1, pdot2) of Hamilton's equations of the double pendulum at y = (q1, q2, p1, p2)."""
    q1, q2, p1, p2 = y
    d = q1 - q2
    s, c = math.sin(d), math.cos(d)
    m12 = _B * c
    det = _A * _D - m12 * m12
    v1 = (_D * p1 - m12 * p2) / det
    v2 = (_A * p2 - m12 * p1) / det
    w = _B * s * v1 * v2            # 1/2 qdot^T dM/dq1 qdot = -w, and +w for q2
    return v1, v2, -_V1 * math.sin(q1) - w, -_V2 * math.sin(q2) + w


def dp_rhs(t, y):
    """Hamilton's equations of the double pendulum, y = (q1, q2, p1, p2)."""
    return np.array(_dp_vdot(y))


def dp_rhs_inplace(t, y, yp):
    """The same, filling yp (the SUNDIALS calling convention)."""
    yp[0], yp[1], yp[2], yp[3] = _dp_vdot(y)


def dp_energy(q, p):
    """H(q, p) for arrays q, p of shape (N, 2)."""
    q = np.asarray(q, float)
    p = np.asarray(p, float)
    m12 = _B * np.cos(q[:, 0] - q[:, 1])
    det = _A * _D - m12 * m12
    v1 = (_D * p[:, 0] - m12 * p[:, 1]) / det
    v2 = (_A * p[:, 1] - m12 * p[:, 0]) / det
    return 0.5 * (p[:, 0] * v1 + p[:, 1] * v2) - _V1 * np.cos(q[:, 0]) - _V2 * np.cos(q[:, 1])


# ------------------------------------------------------------------ pendulum
_PM = PEND["m"]
_PK = PEND["m"] * PEND["omega"] ** 2


def pendulum_rhs(t, y):
    return np.array([y[1] / _PM, -_PK * math.sin(y[0])])


def pendulum_rhs_inplace(t, y, yp):
    yp[0] = y[1] / _PM
    yp[1] = -_PK * math.sin(y[0])


def pendulum_energy(q, p):
    q = np.asarray(q, float)[:, 0]
    p = np.asarray(p, float)[:, 0]
    return 0.5 * p * p / _PM + _PK * (1.0 - np.cos(q))


# ------------------------------------------------------------------ Lagrange top
_TI, _TI3 = TOP["I"], TOP["I3"]
_MGL = TOP["m"] * TOP["g"] * TOP["l"]


def top_rhs(t, y):
    """Hamilton's equations of the Lagrange top in ZXZ Euler angles (phi, theta, psi).

    H = p_th^2/(2I) + (p_phi - cos(th) p_psi)^2 / (2 I sin^2 th) + p_psi^2/(2 I3) + mgl cos th.
    """
    _, th, _, pph, pth, pps = y
    s, c = math.sin(th), math.cos(th)
    u = pph - c * pps
    phid = u / (_TI * s * s)
    psid = pps / _TI3 - c * phid
    pthd = -u * pps / (_TI * s) + u * u * c / (_TI * s * s * s) + _MGL * s
    return np.array([phid, pth / _TI, psid, 0.0, pthd, 0.0])


def top_rhs_inplace(t, y, yp):
    yp[:] = top_rhs(t, y)


def top_energy(q, p):
    q = np.asarray(q, float)
    p = np.asarray(p, float)
    s, c = np.sin(q[:, 1]), np.cos(q[:, 1])
    u = p[:, 0] - c * p[:, 2]
    return (p[:, 1] ** 2 / (2 * _TI) + u * u / (2 * _TI * s * s) + p[:, 2] ** 2 / (2 * _TI3)
            + _MGL * c)


# ------------------------------------------------------------------ n-link chains (section 10)
def chain_params(n, kind="chain"):
    """Masses and lengths of the n-link chain: "chain" unit masses and lengths (as
    ``pendulum_chain(n)``); "arm" an arm-like chain with linear tapers from the base to the tip,
    m from 2 to 0.5 kg and l from 0.5 to 0.2 m (heavy, long links at the base)."""
    if kind == "chain":
        return np.ones(n), np.ones(n)
    x = np.arange(n) / max(n - 1, 1)
    return 2.0 - 1.5 * x, 0.5 - 0.3 * x


def chain_q0(n):
    """q_i(0) = 0.5 sin(1.3 i), i = 1..n."""
    return 0.5 * np.sin(1.3 * np.arange(1, n + 1))


def chain_system(n, kind="chain"):
    m, l = chain_params(n, kind)
    return sp.systems.pendulum_chain(n, m=m, l=l, g=G)


def chain_energy_qv(q, v, m, l, g=G):
    """H = T + V of chain states (rows of q, qdot) from the Cartesian velocities of the masses:
    xdot_k = sum_{i<=k} l_i cos q_i qdot_i, ydot_k = sum_{i<=k} l_i sin q_i qdot_i."""
    q, v = np.atleast_2d(q), np.atleast_2d(v)
    xd = np.cumsum(l * np.cos(q) * v, axis=1)
    yd = np.cumsum(l * np.sin(q) * v, axis=1)
    y = -np.cumsum(l * np.cos(q), axis=1)
    return 0.5 * np.sum(m * (xd * xd + yd * yd), axis=1) + g * np.sum(m * y, axis=1)


def chain_mass(q, m, l):
    """M(q) of chain states (rows of q): M_ij = l_i l_j mu_max(i,j) cos(q_i - q_j), mu_i = sum_{k>=i} m_k."""
    n = len(m)
    mu = np.cumsum(m[::-1])[::-1]
    i = np.arange(n)
    a = np.outer(l, l) * mu[np.maximum.outer(i, i)]
    return a * np.cos(q[:, :, None] - q[:, None, :])


def chain_energy_qp(q, p, m, l, g=G, block=2048):
    """H of chain states (rows of q, p): qdot = M(q)^-1 p (batched solves), then chain_energy_qv."""
    q, p = np.atleast_2d(q), np.atleast_2d(p)
    out = np.empty(len(q))
    for a in range(0, len(q), block):
        qs, ps = q[a:a + block], p[a:a + block]
        v = np.linalg.solve(chain_mass(qs, m, l), ps[:, :, None])[:, :, 0]
        out[a:a + block] = chain_energy_qv(qs, v, m, l, g)
    return out


PROBLEMS = {
    "double_pendulum": dict(system=dp_system, q0=lambda: DP_Q0, p0=lambda: DP_P0, rhs=dp_rhs,
                            rhs_inplace=dp_rhs_inplace, energy=dp_energy),
    "pendulum": dict(system=pendulum_system, q0=lambda: PEND_Q0, p0=lambda: PEND_P0,
                     rhs=pendulum_rhs, rhs_inplace=pendulum_rhs_inplace, energy=pendulum_energy),
    "lagrange_top": dict(system=top_system, q0=lambda: TOP_Q0, p0=top_p0, rhs=top_rhs,
                         rhs_inplace=top_rhs_inplace, energy=top_energy),
}


# ------------------------------------------------------------------ Python forms of the dp
def dp_callables(hessians=True):
    """Plain callables (NumPy arrays built from math scalars), as a user would write them."""
    def mass(q):
        m12 = _B * math.cos(q[0] - q[1])
        return np.array([[_A, m12], [m12, _D]])

    def mass_grad(q):
        s = _B * math.sin(q[0] - q[1])
        T = np.zeros((2, 2, 2))
        T[0, 0, 1] = T[0, 1, 0] = -s
        T[1, 0, 1] = T[1, 1, 0] = s
        return T

    def mass_hess(q):
        c = _B * math.cos(q[0] - q[1])
        T = np.zeros((2, 2, 2, 2))
        T[0, 0, 0, 1] = T[0, 0, 1, 0] = T[1, 1, 0, 1] = T[1, 1, 1, 0] = -c
        T[0, 1, 0, 1] = T[0, 1, 1, 0] = T[1, 0, 0, 1] = T[1, 0, 1, 0] = c
        return T

    def potential(q):
        return -_V1 * math.cos(q[0]) - _V2 * math.cos(q[1])

    def potential_grad(q):
        return np.array([_V1 * math.sin(q[0]), _V2 * math.sin(q[1])])

    def potential_hess(q):
        return np.array([[_V1 * math.cos(q[0]), 0.0], [0.0, _V2 * math.cos(q[1])]])

    kw = dict(mass_grad=mass_grad, potential_grad=potential_grad)
    if hessians:
        kw.update(mass_hess=mass_hess, potential_hess=potential_hess)
    return sp.System(2, mass, potential, name="dp callables", **kw)


def dp_vectorized():
    """One NumPy call per Newton iteration for all evaluation points."""
    def f(Q):
        q1, q2 = Q[:, 0], Q[:, 1]
        k = Q.shape[0]
        s, c = _B * np.sin(q1 - q2), _B * np.cos(q1 - q2)
        c1, c2 = np.cos(q1), np.cos(q2)
        M = np.empty((k, 2, 2))
        M[:, 0, 0] = _A
        M[:, 1, 1] = _D
        M[:, 0, 1] = M[:, 1, 0] = c
        T = np.zeros((k, 2, 2, 2))
        T[:, 0, 0, 1] = T[:, 0, 1, 0] = -s
        T[:, 1, 0, 1] = T[:, 1, 1, 0] = s
        T2 = np.zeros((k, 2, 2, 2, 2))
        T2[:, 0, 0, 0, 1] = T2[:, 0, 0, 1, 0] = T2[:, 1, 1, 0, 1] = T2[:, 1, 1, 1, 0] = -c
        T2[:, 0, 1, 0, 1] = T2[:, 0, 1, 1, 0] = T2[:, 1, 0, 0, 1] = T2[:, 1, 0, 1, 0] = c
        K = np.zeros((k, 2, 2))
        K[:, 0, 0] = _V1 * c1
        K[:, 1, 1] = _V2 * c2
        dV = np.empty((k, 2))
        dV[:, 0] = _V1 * np.sin(q1)
        dV[:, 1] = _V2 * np.sin(q2)
        return {"mass": M, "mass_grad": T, "potential": -_V1 * c1 - _V2 * c2,
                "potential_grad": dV, "mass_hess": T2, "potential_hess": K}

    return sp.System.vectorized(2, f, name="dp vectorized")


def dp_combined():
    """One in-place call per evaluation point, plain math arithmetic."""
    sin, cos = math.sin, math.cos

    def fill(q, M, dM, dV, d2M, d2V):
        q1, q2 = q[0], q[1]
        d = q1 - q2
        s, c = _B * sin(d), _B * cos(d)
        c1, c2 = cos(q1), cos(q2)
        M[0, 0] = _A
        M[1, 1] = _D
        M[0, 1] = M[1, 0] = c
        dM[0, 0, 1] = dM[0, 1, 0] = -s
        dM[1, 0, 1] = dM[1, 1, 0] = s
        d2M[0, 0, 0, 1] = d2M[0, 0, 1, 0] = d2M[1, 1, 0, 1] = d2M[1, 1, 1, 0] = -c
        d2M[0, 1, 0, 1] = d2M[0, 1, 1, 0] = d2M[1, 0, 0, 1] = d2M[1, 0, 1, 0] = c
        dV[0] = _V1 * sin(q1)
        dV[1] = _V2 * sin(q2)
        d2V[0, 0] = _V1 * c1
        d2V[1, 1] = _V2 * c2
        return -_V1 * c1 - _V2 * c2

    return sp.System.combined(2, fill, name="dp combined")


class _DPParams(ctypes.Structure):
    _fields_ = [(k, ctypes.c_double) for k in ("a", "b", "d", "v1", "v2")]


def compiler():
    cc = os.environ.get("CC") or sysconfig.get_config_var("CC") or "cc"
    cc = cc.split()[0]
    return shutil.which(cc) or shutil.which("cc") or shutil.which("gcc")


def dp_cfunc(workdir=None):
    """Compile benchmarks/cfunc_dp.c and wrap it with System.from_cfunc (None without a compiler)."""
    cc = compiler()
    if cc is None:
        return None
    workdir = workdir or tempfile.mkdtemp(prefix="symplectic-bench-")
    lib = os.path.join(workdir, "libcfunc_dp.so")
    subprocess.run([cc, "-std=c99", "-O2", "-shared", "-fPIC", os.path.join(HERE, "cfunc_dp.c"),
                    "-o", lib, "-lm"], check=True, capture_output=True)
    dll = ctypes.CDLL(lib)
    par = _DPParams(_A, _B, _D, _V1, _V2)
    return sp.System.from_cfunc(2, dll.dp_eval, ctypes.addressof(par), keepalive=(dll, par),
                                name="dp cfunc")
