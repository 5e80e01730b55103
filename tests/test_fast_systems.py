"""The fast ways to define a system: one vectorised Python callable per Newton
iteration, and compiled C callbacks (no Python in the loop).  Both must give
the trajectories of the built-in C systems."""
import ctypes
import math
import shutil
import subprocess
import sysconfig
import textwrap
import threading

import numpy as np
import pytest

import symplectic as sp
from conftest import L_DP

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


def rel_diff(a, b):
    return max(np.max(np.abs(a.q - b.q)) / np.max(np.abs(a.q)),
               np.max(np.abs(a.p - b.p)) / np.max(np.abs(a.p)))


@pytest.mark.parametrize("method", ["simpson", "midpoint", "rk4"])
def test_vectorized_equals_builtin(method):
    ref = sp.integrate(sp.systems.double_pendulum(M1, M2, L1, L2, G), [math.pi / 4, math.pi / 3],
                       [0, 0], 0.01, 1000, method=method)
    vec = sp.System.vectorized(2, dp_vectorized())
    tr = sp.integrate(vec, [math.pi / 4, math.pi / 3], [0, 0], 0.01, 1000, method=method)
    assert rel_diff(ref, tr) <= 1e-12
    assert np.allclose(tr.energy, ref.energy, rtol=1e-12, atol=0)
    assert vec.check_derivatives([0.3, -1.0], rtol=1e-7)


def test_vectorized_without_hessians_uses_finite_differences():
    ref = sp.integrate(sp.systems.double_pendulum(M1, M2, L1, L2, G), [1.0, -0.3], [0.2, 0.0],
                       0.02, 200)
    tr = sp.integrate(sp.System.vectorized(2, dp_vectorized(False)), [1.0, -0.3], [0.2, 0.0],
                      0.02, 200)
    assert rel_diff(ref, tr) <= 1e-12       # only Newton's matrix is approximate


def test_vectorized_errors_name_the_key():
    def bad(Q):
        d = dp_vectorized()(Q)
        d["mass"] = d["mass"][:, :1]
        return d

    with pytest.raises(ValueError, match=r"vectorized .mass. has shape \(\d, 1, 2\), expected \(\d, 2, 2\)"):
        sp.integrate(sp.System.vectorized(2, bad), [1.0, 0.0], [0.0, 0.0], 0.01, 5)

    def missing(Q):
        d = dp_vectorized()(Q)
        del d["potential_grad"]
        return d

    with pytest.raises(KeyError, match="potential_grad"):
        sp.integrate(sp.System.vectorized(2, missing), [1.0, 0.0], [0.0, 0.0], 0.01, 5)
    with pytest.raises(TypeError, match="must return a dict"):
        sp.integrate(sp.System.vectorized(2, lambda Q: 1.0), [1.0, 0.0], [0.0, 0.0], 0.01, 5)


# ---------------------------------------------------------------- compiled callbacks
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


@pytest.fixture(scope="module")
def compiled(tmp_path_factory):
    cc = shutil.which(sysconfig.get_config_var("CC").split()[0] if sysconfig.get_config_var("CC") else "cc") \
        or shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        pytest.skip("no C compiler on this machine")
    d = tmp_path_factory.mktemp("cfunc")
    src, lib = d / "dp.c", d / "libdp.so"
    src.write_text(C_SOURCE)
    subprocess.run([cc, "-O2", "-shared", "-fPIC", str(src), "-o", str(lib), "-lm"], check=True)
    return ctypes.CDLL(str(lib))


class Par(ctypes.Structure):
    _fields_ = [(k, ctypes.c_double) for k in ("m1", "m2", "l1", "l2", "g")]


@pytest.mark.parametrize("method", ["simpson", "midpoint", "rk4"])
def test_cfunc_equals_builtin(compiled, method):
    par = Par(M1, M2, L1, L2, G)
    sys = sp.System.from_cfunc(2, compiled.dp_eval, ctypes.addressof(par), keepalive=par)
    assert sys.nogil
    ref = sp.integrate(sp.systems.double_pendulum(M1, M2, L1, L2, G), [math.pi / 4, math.pi / 3],
                       [0, 0], 0.01, 1000, method=method)
    tr = sp.integrate(sys, [math.pi / 4, math.pi / 3], [0, 0], 0.01, 1000, method=method)
    assert rel_diff(ref, tr) <= 1e-13
    assert np.allclose(tr.energy, ref.energy, rtol=1e-13, atol=0)
    sys.check_derivatives([0.3, -1.0], rtol=1e-7)


def test_cfunc_runs_in_threads(compiled):
    par = Par(M1, M2, L1, L2, G)
    sys = sp.System.from_cfunc(2, compiled.dp_eval, ctypes.addressof(par), keepalive=par)
    starts = [[0.1 * k, 0.2] for k in range(4)]
    seq = [sp.integrate(sys, s, [0, 0], 0.01, 3000).q for s in starts]
    out = [None] * 4
    ths = [threading.Thread(target=lambda k=k: out.__setitem__(k, sp.integrate(sys, starts[k], [0, 0], 0.01, 3000).q))
           for k in range(4)]
    for t in ths:
        t.start()
    for t in ths:
        t.join()
    assert all(np.array_equal(a, b) for a, b in zip(seq, out))


def test_cfunc_failure_is_reported(compiled):
    sys = sp.System.from_cfunc(2, compiled.failing_eval)
    with pytest.raises(RuntimeError, match="callback"):
        sp.integrate(sys, [0.1, 0.2], [0, 0], 0.01, 10)


def test_cfunc_bad_address():
    with pytest.raises(ValueError, match="null"):
        sp.System.from_cfunc(2, 0)
    with pytest.raises(TypeError, match="address"):
        sp.System.from_cfunc(2, "dp_eval")


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


@pytest.mark.parametrize("method", ["simpson", "midpoint", "rk4"])
def test_combined_equals_builtin(method):
    ref = sp.integrate(sp.systems.double_pendulum(M1, M2, L1, L2, G), [math.pi / 4, math.pi / 3],
                       [0, 0], 0.01, 1000, method=method)
    sys = sp.System.combined(2, dp_combined())
    tr = sp.integrate(sys, [math.pi / 4, math.pi / 3], [0, 0], 0.01, 1000, method=method)
    assert rel_diff(ref, tr) <= 1e-12
    assert np.allclose(tr.energy, ref.energy, rtol=1e-12, atol=0)
    assert max(sys.check_derivatives([0.3, -1.0], rtol=1e-7).values()) < 1e-7


def test_combined_calls_once_per_new_point():
    calls = {"n": 0}
    fill = dp_combined()

    def counted(*args):
        calls["n"] += 1
        return fill(*args)

    tr = sp.integrate(sp.System.combined(2, counted), [0.5, 0.2], [0, 0], 0.01, 200,
                      check=False)             # the integration's calls only
    per_step = calls["n"] / 200
    # left node once, then (mid, right) per Newton iteration
    assert per_step <= 1 + 2 * tr.newton_iterations.mean() + 1e-9


def test_combined_errors():
    def wrong_return(q, M, dM, dV, d2M, d2V):
        dp_combined()(q, M, dM, dV, d2M, d2V)
        return None

    with pytest.raises(TypeError, match="must return the potential"):
        sp.integrate(sp.System.combined(2, wrong_return), [0.5, 0.2], [0, 0], 0.01, 5)

    def nan_fill(q, M, dM, dV, d2M, d2V):
        v = dp_combined()(q, M, dM, dV, d2M, d2V)
        dV[0] = float("nan")
        return v

    with pytest.raises(ValueError, match="non-finite value into dV"):
        sp.integrate(sp.System.combined(2, nan_fill), [0.5, 0.2], [0, 0], 0.01, 5)


def test_combined_reentrant():
    """A callable that integrates the same system inside itself."""
    fill = dp_combined()
    holder = {}

    def nested(q, M, dM, dV, d2M, d2V):
        if "done" not in holder:
            holder["done"] = True
            holder["inner"] = sp.integrate(holder["sys"], [0.1, 0.1], [0, 0], 0.01, 20)
        return fill(q, M, dM, dV, d2M, d2V)

    holder["sys"] = sp.System.combined(2, nested)
    tr = sp.integrate(holder["sys"], [math.pi / 4, math.pi / 3], [0, 0], 0.01, 100)
    ref = sp.integrate(sp.systems.double_pendulum(M1, M2, L1, L2, G), [math.pi / 4, math.pi / 3],
                       [0, 0], 0.01, 100)
    assert rel_diff(ref, tr) <= 1e-12
    inner_ref = sp.integrate(sp.systems.double_pendulum(M1, M2, L1, L2, G), [0.1, 0.1], [0, 0], 0.01, 20)
    assert rel_diff(inner_ref, holder["inner"]) <= 1e-12
