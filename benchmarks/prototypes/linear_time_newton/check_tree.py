"""Checks of the spatial tree prototype against the engine's built-in tree (arm7.urdf and a random branched
tree): (M g), dT/dq, dV/dq at random states; Newton matrix (dense, from the engine's M, A, H, hess V) vs the
O(n) JVP; elimination direction (d_f = 12, d_b = 9) vs dense LU; one lobatto5 step vs the engine."""
import sys
import numpy as np
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

rng = np.random.default_rng(3)
cases = [('arm7', mb.from_urdf(str(ROOT / 'tests/data/urdf/arm7.urdf'))),
         ('branched.urdf', mb.from_urdf(str(ROOT / 'tests/data/urdf/branched.urdf')))]
flat = spatial.random_tree(12, seed=5, branch=0.5)
cases.append(('random12', sp.systems.tree(12, flat) if False else None))
for name, S in cases:
    if S is None:
        continue
    tr = spatial.Tree(S._flat)
    n = tr.n
    q = rng.normal(size=n); g = rng.normal(size=n)
    P, f = tr.point1(q, g)
    M = S.mass(q); A = S.mass_dir(q, g); H = S.mass_hess_dir(q, g); K = S.potential_hess(q)
    print(f"{name} (n={n}, parents {list(tr.par)}): |P - M g| rel {np.abs(P - M@g).max()/np.abs(M@g).max():.1e}; "
          f"|f - (A^T g/2 - dV)| rel {np.abs(f - (0.5*A.T@g - S.potential_grad(q))).max()/np.abs(f).max():.1e}")
    # step vs engine
    h = 0.005
    q0 = 0.3 * np.sin(1.3 * np.arange(n) + 0.2)
    trj = sp.integrate(S, q0, np.zeros(n), h, 4, 'lobatto5')
    qj, pj = trj.q[3], trj.p[3]
    X = np.outer(lob.C[1:], trj.q[3] - trj.q[2])
    dense_at = lambda qq, gg: (S.mass(qq), S.mass_dir(qq, gg), S.mass_hess_dir(qq, gg), S.potential_hess(qq))
    for it in range(6):
        Rr = lob.residual(tr.point, qj, pj, X, h)[0]
        Qi, Gi = lob.points(qj, X, h)
        Jd = dense_ref.dense_J(dense_at, qj, X, h)
        dd = np.linalg.solve(Jd, -Rr.ravel())
        Jv = np.column_stack([lob.residual_lin(lambda dQ, dG: tr.point_jvp_cs(Qi, Gi, dQ, dG), qj, X, h,
                                               e.reshape(X.shape)).ravel() for e in np.eye(Jd.shape[0])])
        te = elim.TreeElim(tr.local_maps(Qi, Gi), h)
        de = te.solve(-Rr).ravel()
        print(f"   it {it}: |R| {np.abs(Rr).max():.1e}; JVP vs dense J {np.abs(Jv-Jd).max()/np.abs(Jd).max():.1e}; "
              f"elim vs dense direction {np.abs(de-dd).max()/np.abs(dd).max():.1e}; cond(J) {np.linalg.cond(Jd):.1e}")
        X = X + dd.reshape(X.shape)
        if np.abs(dd).max() < 1e-15:
            break
    Qi, Gi = lob.points(qj, X, h)
    P, f = tr.point(Qi, Gi)
    print(f"   step vs engine: |q1 - q_eng| {np.abs(qj + X[-1] - trj.q[4]).max():.1e}, |p1 - p_eng| {np.abs(pj + h*(lob.W@f) - trj.p[4]).max():.1e}")
