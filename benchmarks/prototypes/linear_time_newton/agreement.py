"""Accuracy of the Newton directions against a refined reference: J (float64, the dense exact matrix from
the dense formulas) x = b solved by LU + 3 steps of iterative refinement with residuals in long double
(x87 80-bit), then the relative errors |x - x_ref|_inf / |x_ref|_inf of: dense LU (numpy/LAPACK), the
O(n) tree elimination (elim.py), GMRES to 1e-13 with P1, and the elimination + one refinement step with
the O(n) JVP.  States: the engine's lobatto5 chain runs, steps 50/150/250, first Newton iterate
(SYM_PRED_POLY-like start: X_a = 1.01 c_a (q_{j+1} - q_j))."""
import sys
import numpy as np
import scipy.linalg as sla
from pathlib import Path
HERE = Path(__file__).resolve().parent      # this folder: the sibling modules, the .npz files
ROOT = HERE.parents[2]                      # the repository root: its engine, tests/data
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT))
import symplectic as sp
import lob
import chain
import elim
import dense_ref
import gmres

HS = {8: 0.0125, 16: 0.01, 32: 0.0075, 64: 0.005, 128: 0.005}
for n in (16, 32, 64, 128):
    h = HS[n]; ch = chain.Chain(n)
    tr = sp.integrate(sp.systems.pendulum_chain(n), 0.5 * np.sin(1.3 * np.arange(n)), np.zeros(n), h, 300, 'lobatto5')
    errs = {k: 0.0 for k in ('LU', 'elim', 'elim+1 refinement', 'GMRES P1')}
    for j in (50, 150, 250):
        q, p = tr.q[j], tr.p[j]
        X = np.outer(lob.C[1:], tr.q[j + 1] - tr.q[j]) * 1.01
        Rr = lob.residual(ch.point, q, p, X, h)[0]
        Qi, Gi = lob.points(q, X, h)
        J = dense_ref.dense_J(lambda qq, gg: (lambda M, A, H, dV, K: (M, A, H, K))(*ch.dense(qq, gg)), q, X, h)
        b = -Rr.ravel()
        lu = sla.lu_factor(J)
        xr = sla.lu_solve(lu, b)
        Jl, bl = J.astype(np.longdouble), b.astype(np.longdouble)
        for _ in range(3):
            r = (bl - Jl @ xr.astype(np.longdouble)).astype(np.float64)
            xr = (xr.astype(np.longdouble) + sla.lu_solve(lu, r).astype(np.longdouble)).astype(np.float64)
        te = elim.TreeElim(ch.local_maps(Qi, Gi), h)
        xe = te.solve(-Rr).ravel()
        Av = lambda v: lob.residual_lin(lambda dQ, dG: ch.point_jvp(Qi, Gi, dQ, dG), q, X, h, v.reshape(X.shape)).ravel()
        xe1 = xe + te.solve((b - Av(xe)).reshape(X.shape)).ravel()
        Lc = np.linalg.cholesky(ch.dense(Qi[2], Gi[2])[0]); Kinv = np.linalg.inv(lob.Kmat())
        P1 = lambda v: sla.cho_solve((Lc, True), (Kinv @ v.reshape(X.shape) * h).T).T.ravel()
        xg = gmres.gmres(Av, P1, b)[0]
        sc = np.abs(xr).max()
        for k, x in (('LU', sla.lu_solve(lu, b)), ('elim', xe), ('elim+1 refinement', xe1), ('GMRES P1', xg)):
            errs[k] = max(errs[k], np.abs(x - xr).max() / sc)
        cond = np.linalg.cond(J)
    print(f"n={n}: cond(J) ~ {cond:.1e}; max rel error vs refined reference: " +
          ", ".join(f"{k} {v:.1e}" for k, v in errs.items()), flush=True)
