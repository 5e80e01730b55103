"""Absolute vs relative angles: the planar point-mass chain written as a spatial tree in RELATIVE joint
angles (revolute z axes, rods of length 1 along -y, point masses at the rod ends, g_w = (0, -9.81, 0))
against the chain prototype in ABSOLUTE angles, q_abs = L q_rel (L lower-triangular ones):
  p_rel = L^T p_abs,  f_rel = L^T f_abs   (equivalently p_abs = L^-T p_rel, (L^-T x)_i = x_i - x_{i+1})."""
import sys
from pathlib import Path
import numpy as np
sys.path.insert(0, str(Path(__file__).resolve().parent))     # this folder: the sibling modules
import chain
import spatial

n = 12
flat = [0.0, -9.81, 0.0]
for j in range(n):
    flat += [j - 1, 0, 0, 0, 1, *np.eye(3).ravel(), *((0, 0, 0) if j == 0 else (0, -1, 0)), 1.0, 0, -1, 0, 0, 0, 0, 0, 0, 0]
tr = spatial.Tree(np.array(flat, float))
ch = chain.Chain(n)
rng = np.random.default_rng(7)
L = np.tril(np.ones((n, n)))
qr, gr = rng.normal(size=n), rng.normal(size=n)
Pr, fr = tr.point1(qr, gr)
Pa, fa = ch.point((L @ qr)[None], (L @ gr)[None])
print(f"n={n}: |P_rel - L^T P_abs| rel {np.abs(Pr - L.T @ Pa[0]).max() / np.abs(Pr).max():.1e}; "
      f"|f_rel - L^T f_abs| rel {np.abs(fr - L.T @ fa[0]).max() / np.abs(fr).max():.1e}")
Linv_T = np.linalg.inv(L).T
x = rng.normal(size=n)
print(f"(L^-T x)_i = x_i - x_(i+1): {np.abs(Linv_T @ x - (x - np.append(x[1:], 0))).max():.1e}")
