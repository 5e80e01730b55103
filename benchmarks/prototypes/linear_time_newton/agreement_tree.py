"""agreement.py for spatial trees: J from the engine's dense M, A, H, hess V; reference = LU + 3 refinement
steps with long-double residuals; relative errors of LU and of the tree elimination (d_f = 12, d_b = 9).
States: lobatto5 runs (h = 0.005) at steps 50/150, first iterate X_a = 1.01 c_a (q_{j+1} - q_j)."""
import sys
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
src = (HERE / 'exp_tree.py').read_text()
ns = {'np': np}       # exp_tree.py's gen_urdf, without running its body (which reads sys.argv)
exec(src[src.index('def gen_urdf'):src.index('NST, h =')], ns)
gen_urdf = ns['gen_urdf']
h = 0.005
for case in ('arm7', 'tree16', 'chain16', 'tree32', 'chain32'):
    S = mb.from_urdf(str(ROOT / 'tests/data/urdf/arm7.urdf')) if case == 'arm7' else \
        mb.from_urdf(gen_urdf(int(case[-2:]), case.startswith('tree')))
    tr = spatial.Tree(S._flat); n = tr.n
    traj = sp.integrate(S, 0.3 * np.sin(1.3 * np.arange(n) + 0.2), np.zeros(n), h, 200, 'lobatto5')
    e_lu = e_el = 0.0
    for j in (50, 150):
        q, p = traj.q[j], traj.p[j]
        X = np.outer(lob.C[1:], traj.q[j + 1] - traj.q[j]) * 1.01
        Rr = lob.residual(tr.point, q, p, X, h)[0]
        Qi, Gi = lob.points(q, X, h)
        J = dense_ref.dense_J(lambda qq, gg: (S.mass(qq), S.mass_dir(qq, gg), S.mass_hess_dir(qq, gg), S.potential_hess(qq)), q, X, h)
        b = -Rr.ravel(); lu = sla.lu_factor(J); x0 = sla.lu_solve(lu, b); xr = x0.copy()
        Jl, bl = J.astype(np.longdouble), b.astype(np.longdouble)
        for _ in range(3):
            r = (bl - Jl @ xr.astype(np.longdouble)).astype(np.float64)
            xr = xr + sla.lu_solve(lu, r)
        xe = elim.TreeElim(tr.local_maps(Qi, Gi), h).solve(-Rr).ravel()
        sc = np.abs(xr).max()
        e_lu = max(e_lu, np.abs(x0 - xr).max() / sc); e_el = max(e_el, np.abs(xe - xr).max() / sc)
        cond = np.linalg.cond(J)
    print(f"{case} (n={n}): cond(J) {cond:.1e}; rel error vs refined: LU {e_lu:.1e}, elimination {e_el:.1e}", flush=True)
