"""Along lobatto5 runs of pendulum_chain(n) (q_i(0) = 0.5 sin(1.3 i), at rest, g = 9.81): per Newton
iterate of each step (full exact Newton from the SYM_PRED_POLY predictor), the dense LU direction, the
O(n) tree-elimination direction and GMRES (exact O(n) JVP) with three preconditioners:
  P1 = K (x) M(q_mid) / h           (K = sum_i b_i D_i^T D_i block, constant-M leading term)
  P2 = the engine's decoupled matrix (1/h) Ah (x) Mbar + h Bh (x) Sbar (sym_galerkin_decouple.c)
  P3 = the exact matrix of the step's FIRST iterate, i.e. the stale elimination factors (per-step policy)
Usage: python exp_chain.py N_STEPS n1 n2 ...   -> prints a table, writes exp_chain_<n>.npz"""
import sys
import time
import numpy as np
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
NST = int(sys.argv[1])
K = lob.Kmat()
Ah = K
Bh = np.zeros((lob.M_, lob.M_))
for a in range(lob.M_):
    for b in range(1, lob.S):
        Bh[a, b - 1] = sum(lob.W[i] * lob.B[i, a] * lob.B[i, b] for i in range(lob.R))

for n in map(int, sys.argv[2:]):
    h = HS[n]
    ch = chain.Chain(n)
    S = sp.systems.pendulum_chain(n)
    q0 = 0.5 * np.sin(1.3 * np.arange(n))
    tr = sp.integrate(S, q0, np.zeros(n), h, NST, 'lobatto5')
    dense_at = lambda qq, gg: (lambda M, A, H, dV, Kv: (M, A, H, Kv))(*ch.dense(qq, gg))
    rec = dict(itidx=[], agree_elim=[], agree_gm=[], it1=[], it2=[], it3=[], newton=[], stepdiff=[])
    Xprev = None
    t0 = time.time()
    for j in range(NST):
        q, p = tr.q[j], tr.p[j]
        X = lob.predictor_poly(Xprev, tr.q[j - 1], q) if Xprev is not None else np.zeros((lob.M_, n))
        res = lambda X: lob.residual(ch.point, q, p, X, h)[0]
        stale = None
        for it in range(8):
            Rr = res(X)
            Qi, Gi = lob.points(q, X, h)
            Jd = dense_ref.dense_J(dense_at, q, X, h)
            dd = np.linalg.solve(Jd, -Rr.ravel())
            te = elim.TreeElim(ch.local_maps(Qi, Gi), h)
            de = te.solve(-Rr).ravel()
            if stale is None:
                stale = te
            sc = np.abs(dd).max()
            rec['agree_elim'].append(np.abs(de - dd).max() / sc)
            Av = lambda v: lob.residual_lin(lambda dQ, dG: ch.point_jvp(Qi, Gi, dQ, dG), q, X, h, v.reshape(X.shape)).ravel()
            Mmid = ch.dense(Qi[2], Gi[2])[0]
            Lc = np.linalg.cholesky(Mmid)
            Kinv = np.linalg.inv(K)
            def P1(v):
                Y = Kinv @ v.reshape(X.shape) * h
                return np.linalg.solve(Lc.T, np.linalg.solve(Lc, Y.T)).T.ravel()
            Mb = sum(lob.W[i] * ch.dense(Qi[i], Gi[i])[0] for i in range(lob.R))
            Sb = sum(lob.W[i] * (lambda M, A, H, dV, Kv: H - Kv)(*ch.dense(Qi[i], Gi[i])) for i in range(lob.R))
            J0 = np.kron(Ah, Mb) / h + h * np.kron(Bh, Sb)
            import scipy.linalg as sla
            lu0 = sla.lu_factor(J0)
            P2 = lambda v: sla.lu_solve(lu0, v)
            P3 = lambda v: stale.solve(v.reshape(X.shape)).ravel()
            b = -Rr.ravel()
            x1, k1 = gmres.gmres(Av, P1, b)
            x2, k2 = gmres.gmres(Av, P2, b)
            x3, k3 = gmres.gmres(Av, P3, b)
            rec['itidx'].append(it)
            rec['it1'].append(k1); rec['it2'].append(k2); rec['it3'].append(k3)
            rec['agree_gm'].append(max(np.abs(x - dd).max() for x in (x1, x2, x3)) / sc)
            X = X + dd.reshape(X.shape)
            if np.abs(dd).max() <= 1e-14 * max(np.abs(X).max(), 1e-300) or np.abs(Rr).max() < 1e-15:
                break
        rec['newton'].append(it + 1)
        rec['stepdiff'].append(np.abs(q + X[-1] - tr.q[j + 1]).max())
        Xprev = X
    el = time.time() - t0
    r = {k: np.array(v) for k, v in rec.items()}
    np.savez(HERE / f'exp_chain_{n}.npz', **r)
    q = lambda a: f"{a.mean():.2f} [{a.min()}-{a.max()}]"
    print(f"n={n} h={h} steps={NST} Newton its/step {r['newton'].mean():.2f}; iterates {r['it1'].size}; "
          f"max rel diff elim-dense {r['agree_elim'].max():.1e}, gmres-dense {r['agree_gm'].max():.1e}; "
          f"GMRES its P1 {q(r['it1'])} P2 {q(r['it2'])} P3 {q(r['it3'])}; "
          f"on Newton iterates 0/1/2: P1 {[round(r['it1'][r['itidx']==k].mean(),2) for k in (0,1,2)]} P2 {[round(r['it2'][r['itidx']==k].mean(),2) for k in (0,1,2)]} P3 {[round(r['it3'][r['itidx']==k].mean(),2) for k in (0,1,2)]}; |q1 - engine| max {r['stepdiff'].max():.1e}; {el:.0f}s", flush=True)
