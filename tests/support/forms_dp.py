"""The double pendulum of the TOP paper (Section 3) in the fast system forms
(test helper): one vectorised callable, one combined in-place callable and a
compiled C callback, each written out here independently of the built-in C
system.  Parameters m1 = m2 = 1 kg, l1 = l2 = g/omega0^2, g = 9.81."""
import ctypes
import math
import textwrap

import numpy as np

from support import cbuild
from support.models import L_DP

M1 = M2 = 1.0
L1 = L2 = L_DP
G = 9.81


def dp_vectorized(with_hessians=True):
    k = M2 * L1 * L2

    def f(Q):
        q1, q2 = Q[:, 0], Q[:, 1]
        s, c = np.sin(q1 - q2), np.cos(q1 - q2)
        npts = Q.shape[0]
        M = np.empty((npts, 2, 2))
        M[:, 0, 0] = (M1 + M2) * L1 ** 2
        M[:, 1, 1] = M2 * L2 ** 2
        M[:, 0, 1] = M[:, 1, 0] = k * c
        T = np.zeros((npts, 2, 2, 2))
        T[:, 0, 0, 1] = T[:, 0, 1, 0] = -k * s
        T[:, 1, 0, 1] = T[:, 1, 1, 0] = k * s
        out = {
            "mass": M, "mass_grad": T,
            "potential": -(M1 + M2) * G * L1 * np.cos(q1) - M2 * G * L2 * np.cos(q2),
            "potential_grad": np.stack([(M1 + M2) * G * L1 * np.sin(q1),
                                        M2 * G * L2 * np.sin(q2)], axis=1),
        }
        if with_hessians:
            T2 = np.zeros((npts, 2, 2, 2, 2))
            for a, b, sgn in ((0, 0, -1), (0, 1, 1), (1, 0, 1), (1, 1, -1)):
                T2[:, a, b, 0, 1] = T2[:, a, b, 1, 0] = sgn * k * c
            K = np.zeros((npts, 2, 2))
            K[:, 0, 0] = (M1 + M2) * G * L1 * np.cos(q1)
            K[:, 1, 1] = M2 * G * L2 * np.cos(q2)
            out["mass_hess"] = T2
            out["potential_hess"] = K
        return out

    return f


def dp_combined():
    k = M2 * L1 * L2
    m11, m22 = (M1 + M2) * L1 ** 2, M2 * L2 ** 2
    v1, v2 = (M1 + M2) * G * L1, M2 * G * L2
    sin, cos = math.sin, math.cos

    def fill(q, M, dM, dV, d2M, d2V):
        q1, q2 = q[0], q[1]
        s, c = sin(q1 - q2), cos(q1 - q2)
        c1, c2 = cos(q1), cos(q2)
        M[0, 0] = m11
        M[1, 1] = m22
        M[0, 1] = M[1, 0] = k * c
        dM[0, 0, 1] = dM[0, 1, 0] = -k * s
        dM[1, 0, 1] = dM[1, 1, 0] = k * s
        d2M[0, 0, 0, 1] = d2M[0, 0, 1, 0] = d2M[1, 1, 0, 1] = d2M[1, 1, 1, 0] = -k * c
        d2M[0, 1, 0, 1] = d2M[0, 1, 1, 0] = d2M[1, 0, 0, 1] = d2M[1, 0, 1, 0] = k * c
        dV[0] = v1 * sin(q1)
        dV[1] = v2 * sin(q2)
        d2V[0, 0] = v1 * c1
        d2V[1, 1] = v2 * c2
        return -v1 * c1 - v2 * c2

    return fill


C_SOURCE = textwrap.dedent(r"""
    #include <math.h>
    #include <string.h>
    typedef struct { double m1, m2, l1, l2, g; } par;
    /* double pendulum, flat callback signature of symplectic.h */
    int dp_eval(const double *q, const double *g, unsigned need, double *M, double *A,
                double *H, double *V, double *dV, double *d2V, void *ud)
    {
        const par *P = ud;
        const double k = P->m2 * P->l1 * P->l2, s = sin(q[0] - q[1]), c = cos(q[0] - q[1]);
        const double v1 = (P->m1 + P->m2) * P->g * P->l1, v2 = P->m2 * P->g * P->l2;
        if (need & 1) { M[0] = (P->m1 + P->m2) * P->l1 * P->l1; M[1] = M[2] = k * c;
                        M[3] = P->m2 * P->l2 * P->l2; }
        if (need & 2) { A[0] = -k * s * g[1]; A[1] = k * s * g[1];
                        A[2] = -k * s * g[0]; A[3] = k * s * g[0]; }
        if (need & 4) { const double h = k * c * g[0] * g[1];
                        H[0] = -h; H[1] = H[2] = h; H[3] = -h; }
        if (need & 8) V[0] = -v1 * cos(q[0]) - v2 * cos(q[1]);
        if (need & 16) { dV[0] = v1 * sin(q[0]); dV[1] = v2 * sin(q[1]); }
        if (need & 32) { d2V[0] = v1 * cos(q[0]); d2V[1] = d2V[2] = 0.0; d2V[3] = v2 * cos(q[1]); }
        return 0;
    }
    int failing_eval(const double *q, const double *g, unsigned need, double *M, double *A,
                     double *H, double *V, double *dV, double *d2V, void *ud)
    {
        (void)q; (void)g; (void)need; (void)M; (void)A; (void)H; (void)V; (void)dV; (void)d2V;
        (void)ud;
        return 1;
    }
""")


def compile_library(directory):
    """Build C_SOURCE into a shared library in ``directory``; None without a C compiler."""
    return cbuild.build_shared(C_SOURCE, directory, "dp")


class Par(ctypes.Structure):
    _fields_ = [(k, ctypes.c_double) for k in ("m1", "m2", "l1", "l2", "g")]


def compiled_system(lib):
    """The compiled double pendulum as a System (its parameters kept alive with it)."""
    import symplectic as sp
    par = Par(M1, M2, L1, L2, G)
    return sp.System.from_cfunc(2, lib.dp_eval, ctypes.addressof(par), keepalive=par)
