"""Spatial trees along lobatto5 runs of the engine's built-in "tree": arm7.urdf and generated n-link spatial
chains / branched trees (gen_urdf).  Per Newton iterate (full exact Newton from SYM_PRED_POLY): dense LU
direction (engine's M, A, H, hess V) vs the tree elimination (d_f = 12, d_b = 9); GMRES iterations with
P1 = K (x) M(q_mid)/h, P3 = the step's first-iterate exact factors.  The GMRES matvec is the dense J
(check_tree.py shows the O(n) JVP equals it to <= 2e-15).
Usage: python exp_tree.py NSTEPS h case1 case2 ...  (case: arm7 | chainN | treeN)"""
import sys
import time
import numpy as np
import scipy.linalg as sla
from pathlib import Path
HERE = Path(__file__).resolve().parent      # this folder: the sibling modules, the .npz files
ROOT = HERE.parents[2]                      # the repository root: its engine, tests/data
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT))
import symplectic as sp
from symplectic import multibody as mb
import lob
import spatial
import elim
import dense_ref
import gmres


def gen_urdf(n, branched, seed=0):
    rng = np.random.default_rng(seed)
    axes = ['1 0 0', '0 1 0', '0 0 1']
    s = ['<robot name="g">', '<link name="l0"/>']
    for i in range(1, n + 1):
        par = i - 1 if (not branched or i < 3 or rng.random() < 0.5) else int(rng.integers(1, i))
        s.append(f'<link name="l{i}"><inertial><origin xyz="0 0 0.2"/><mass value="1.0"/>'
                 f'<inertia ixx="0.02" ixy="0" ixz="0" iyy="0.02" iyz="0" izz="0.005"/></inertial></link>')
        s.append(f'<joint name="j{i}" type="revolute"><parent link="l{par}"/><child link="l{i}"/>'
                 f'<origin xyz="0 0 0.4" rpy="0.2 0 0"/><axis xyz="{axes[i % 3]}"/>'
                 f'<limit effort="1" velocity="1" lower="-3" upper="3"/></joint>')
    s.append('</robot>')
    return '\n'.join(s)


NST, h = int(sys.argv[1]), float(sys.argv[2])
K = lob.Kmat(); Kinv = np.linalg.inv(K)
for case in sys.argv[3:]:
    if case == 'arm7':
        S = mb.from_urdf(str(ROOT / 'tests/data/urdf/arm7.urdf'))
    else:
        import re
        S = mb.from_urdf(gen_urdf(int(re.sub('[a-z]', '', case)), case.startswith('tree')))
    tr = spatial.Tree(S._flat)
    n = tr.n
    q0 = 0.3 * np.sin(1.3 * np.arange(n) + 0.2)
    traj = sp.integrate(S, q0, np.zeros(n), h, NST, 'lobatto5')
    dense_at = lambda qq, gg: (S.mass(qq), S.mass_dir(qq, gg), S.mass_hess_dir(qq, gg), S.potential_hess(qq))
    rec = dict(itidx=[], agree=[], it1=[], it3=[], newton=[], stepdiff=[])
    Xprev = None; t0 = time.time()
    for j in range(NST):
        q, p = traj.q[j], traj.p[j]
        X = lob.predictor_poly(Xprev, traj.q[j - 1], q) if Xprev is not None else np.zeros((lob.M_, n))
        stale = None
        for it in range(8):
            Rr = lob.residual(tr.point, q, p, X, h)[0]
            Qi, Gi = lob.points(q, X, h)
            Jd = dense_ref.dense_J(dense_at, q, X, h)
            dd = np.linalg.solve(Jd, -Rr.ravel())
            te = elim.TreeElim(tr.local_maps(Qi, Gi), h)
            de = te.solve(-Rr).ravel()
            stale = stale or te
            rec['itidx'].append(it)
            rec['agree'].append(np.abs(de - dd).max() / np.abs(dd).max())
            Lc = np.linalg.cholesky(S.mass(Qi[2]))
            P1 = lambda v: sla.cho_solve((Lc, True), (Kinv @ v.reshape(X.shape) * h).T).T.ravel()
            P3 = lambda v: stale.solve(v.reshape(X.shape)).ravel()
            rec['it1'].append(gmres.gmres(lambda v: Jd @ v, P1, -Rr.ravel())[1])
            rec['it3'].append(gmres.gmres(lambda v: Jd @ v, P3, -Rr.ravel())[1])
            X = X + dd.reshape(X.shape)
            if np.abs(dd).max() <= 1e-13 * np.abs(X).max() or np.abs(Rr).max() < 1e-15:
                break
        rec['newton'].append(it + 1)
        rec['stepdiff'].append(np.abs(q + X[-1] - traj.q[j + 1]).max())
        Xprev = X
    r = {k: np.array(v) for k, v in rec.items()}
    np.savez(HERE / f'exp_tree_{case}.npz', **r)
    E = traj.energy
    print(f"{case} n={n} depth-first parents {list(tr.par)[:12]}... h={h} steps={NST}: energy err {np.abs(E-E[0]).max()/np.abs(E).max():.1e}; "
          f"Newton its/step {r['newton'].mean():.2f}; elim vs dense max {r['agree'].max():.1e} "
          f"(iterates 0,1: {r['agree'][r['itidx'] <= 1].max():.1e}); GMRES P1 its on iterates 0/1/2 "
          f"{[round(r['it1'][r['itidx']==k].mean(), 2) for k in (0, 1, 2)]} max {r['it1'].max()}; P3 "
          f"{[round(r['it3'][r['itidx']==k].mean(), 2) for k in (0, 1, 2)]}; |q1-engine| {r['stepdiff'].max():.1e}; {time.time()-t0:.0f}s", flush=True)
