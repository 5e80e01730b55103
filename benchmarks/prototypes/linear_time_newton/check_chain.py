"""Checks of the chain prototype: O(n) point quantities vs dense formulas, JVP vs dense J and differences,
one Lobatto-5 step vs the engine, elimination direction vs dense LU direction."""
import sys
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

rng = np.random.default_rng(1)
for n in (8, 32):
    ch = chain.Chain(n)
    Q = rng.normal(size=(5, n)); G = rng.normal(size=(5, n))
    P1, f1 = ch.point(Q, G); P2, f2 = ch.point_dense(Q, G)
    print(f"n={n}: |P - Mg|/|Mg| = {np.abs(P1-P2).max()/np.abs(P2).max():.1e}, |f - f_dense| rel = {np.abs(f1-f2).max()/np.abs(f2).max():.1e}")
    # engine's M and dV
    S = sp.systems.pendulum_chain(n)
    Me = S.mass(Q[1]); Md, A, H, dV, K = ch.dense(Q[1], G[1])
    print(f"   dense M vs engine mass(): {np.abs(Me-Md).max():.1e}; dV vs engine: {np.abs(S.potential_grad(Q[1])-dV).max():.1e}")

# Newton matrix and a step vs the engine
n, h = 16, 0.01
ch = chain.Chain(n)
S = sp.systems.pendulum_chain(n)
q0 = 0.5 * np.sin(1.3 * np.arange(n))
tr = sp.integrate(S, q0, np.zeros(n), h, 3, 'lobatto5')
q, p = tr.q[2], tr.p[2]
Xp = np.outer(lob.C[1:], (tr.q[2] - tr.q[1]))  # crude start
res = lambda X: lob.residual(ch.point, q, p, X, h)[0]
X = Xp.copy()
for it in range(8):
    Rr = res(X)
    Jd = dense_ref.dense_J(lambda qq, gg: (lambda M, A, H, dV, K: (M, A, H, K))(*ch.dense(qq, gg)), q, X, h)
    dX = np.linalg.solve(Jd, -Rr.ravel()).reshape(X.shape)
    X += dX
    print(f"  Newton it {it}: |R| = {np.abs(Rr).max():.2e} |dX| = {np.abs(dX).max():.2e}")
    if np.abs(dX).max() < 1e-15:
        break
Qi, Gi = lob.points(q, X, h)
P, f = ch.point(Qi, Gi)
q1 = q + X[-1]; p1 = p + h * (lob.W @ f)
print(f"step vs engine: |q1 - q_eng| = {np.abs(q1 - tr.q[3]).max():.1e}, |p1 - p_eng| = {np.abs(p1 - tr.p[3]).max():.1e}")

# Jacobians at a non-root iterate
X = Xp.copy()
Jd = dense_ref.dense_J(lambda qq, gg: (lambda M, A, H, dV, K: (M, A, H, K))(*ch.dense(qq, gg)), q, X, h)
Jfd = dense_ref.fd_J(res, X, 1e-6)
Qi, Gi = lob.points(q, X, h)
Jv = np.zeros_like(Jd)
for k in range(Jd.shape[1]):
    e = np.zeros(Jd.shape[1]); e[k] = 1.0
    Jv[:, k] = lob.residual_lin(lambda dQ, dG: ch.point_jvp(Qi, Gi, dQ, dG), q, X, h, e.reshape(X.shape)).ravel()
print(f"dense J vs differences of the O(n) residual: {np.abs(Jd-Jfd).max()/np.abs(Jd).max():.1e}; O(n) JVP vs dense J: {np.abs(Jd-Jv).max()/np.abs(Jd).max():.1e}")
Rr = res(X)
dd = np.linalg.solve(Jd, -Rr.ravel()).reshape(X.shape)
L = ch.local_maps(Qi, Gi)
te = elim.TreeElim(L, h)
de = te.solve(-Rr)
print(f"elimination direction vs dense LU: {np.abs(de-dd).max()/np.abs(dd).max():.1e}  (cond(J) = {np.linalg.cond(Jd):.1e})")
