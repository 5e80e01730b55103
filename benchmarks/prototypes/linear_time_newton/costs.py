"""Flop model per Lobatto-5 step, per approach, vs n, with the measured iteration counts (exp_chain_<n>.npz,
exp_tree_<case>.npz) and the engine's per-step Newton statistics (cbench.log's factorisations/iterations).
Hand counts (per joint; r = 5 points, m = 4 node unknowns), from the kernels as written in c/chain_elim.c
(chain) or as a C version of spatial.py would run them (spatial, an estimate):
  chain  residual  ~200 flops + 5 sin + 5 cos;  JVP ~280;  local maps ~200;  factor elim.factor_flops(2,2,T=I);
         solve elim.solve_flops(2,2,T=I);  M(q) tree factor ~30, M solve ~20 (x m = 4 per P1 application + K^-1 32)
  spatial residual ~2000 (per point: pose/axis ~150, R Ic R^T + parallel axis ~130, V, I V ~60, a, P, f ~60);
         JVP ~1300; local maps ~1250; factor elim.factor_flops(12,9); solve elim.solve_flops(12,9);
         M(q) tree factor (articulated-inertia style 6x6) ~300, M solve ~100
  Krylov (GMRES, MGS): per iteration k: 2 (k+1) dot/axpy over m n entries -> 16 (k+1) flops per joint.
  dense path (for reference): LU (2/3)(4n)^3, assembly of J ~ 5 points x 16 blocks x 8 n^2, M, A, H, K at 5
  points ~ 5 x 12 n^2, solves 2 (4n)^2 per iteration."""
import os
import sys
from pathlib import Path
import numpy as np
HERE = Path(__file__).resolve().parent      # this folder: the sibling modules, the .npz files
sys.path.insert(0, str(HERE))
import elim

nfact = {8: 1.02, 16: 1.10, 32: 1.11, 64: 1.11, 128: 1.32}     # engine, cbench.log
nres = {8: 2.48, 16: 2.46, 32: 2.60, 64: 2.61, 128: 3.59}
kinds = {
    'chain': dict(res=200, jvp=280, maps=200, fac=elim.factor_flops(2, 2, T_identity=True),
                  sol=elim.solve_flops(2, 2, T_identity=True), mfac=30, msol=20),
    'spatial': dict(res=2000, jvp=1300, maps=1250, fac=elim.factor_flops(12, 9), sol=elim.solve_flops(12, 9),
                    mfac=300, msol=100),
}


def krylov_its(n, kind='chain'):
    f = HERE / (f'exp_chain_{n}.npz' if kind == 'chain' else f'exp_tree_tree{n}.npz')
    if not os.path.exists(f):
        return None
    d = np.load(f)
    first = d['itidx'] <= 1          # the iterates that matter (later ones are at rounding level)
    return d['it1'][first].mean(), d['it3'][d['itidx'] == 1].mean() if (d['itidx'] == 1).any() else np.nan


print("per joint: factor flops chain %d, spatial %d; solve chain %d, spatial %d" % (
    kinds['chain']['fac'], kinds['spatial']['fac'], kinds['chain']['sol'], kinds['spatial']['sol']))
print("planar rigid bodies (d_f=6, d_b=5): factor %d, solve %d" % (elim.factor_flops(6, 5), elim.solve_flops(6, 5)))
print()
print("| n | dense flops/step | (a) elim flops/step | (b) GMRES-P1 its/Newton it | (b) flops/step | (c) stale-factor GMRES its | kind |")
print("|---|---|---|---|---|---|---|")
for kind in ('chain', 'spatial'):
    k = kinds[kind]
    for n in (8, 16, 32, 64, 128):
        nf, nr = nfact[n], nres[n]
        N = 4 * n
        dense = nf * (2 / 3 * N ** 3 + 5 * 16 * 8 * n * n + 5 * 12 * n * n) + nr * 2 * N * N
        a = n * (nf * (k['maps'] + k['fac']) + nr * (k['res'] + k['sol']))
        kr = krylov_its(n, kind)
        if kr is None:
            print(f"| {n} | {dense:.3g} | {a:.3g} | (not run) | | | {kind} |")
            continue
        K, K3 = kr
        per_it = k['jvp'] + 32 + 4 * k['msol'] + 16 * (K + 1) / 2
        b = n * nr * (k['res'] + k['mfac'] + K * per_it)
        print(f"| {n} | {dense:.3g} | {a:.3g} | {K:.2f} | {b:.3g} | {K3:.2f} | {kind} |")

# spatial (b) beyond the measured trees: K extrapolated from tree32's measured count by the chain's measured
# increments per doubling (exp_chain_{32,64,128}.npz, iterates 0-1); and arm7 (n = 7) with its own counts
print()
k = kinds['spatial']
d = np.load(HERE / 'exp_tree_arm7.npz') if os.path.exists(HERE / 'exp_tree_arm7.npz') else None
rows = []
if d is not None:
    rows.append((7, d['it1'][d['itidx'] <= 1].mean(), 'arm7, measured', 8))
kc = {m: krylov_its(m)[0] for m in (32, 64, 128)}
kt32 = krylov_its(32, 'spatial')[0]
rows += [(64, kt32 + kc[64] - kc[32], 'extrapolated', 64), (128, kt32 + kc[128] - kc[32], 'extrapolated', 128)]
for n, K, lab, nn in rows:
    nf, nr = nfact[nn if nn in nfact else 8], nres[nn if nn in nres else 8]
    N = 4 * n
    dense = nf * (2 / 3 * N ** 3 + 5 * 16 * 8 * n * n + 5 * 12 * n * n) + nr * 2 * N * N
    a = n * (nf * (k['maps'] + k['fac']) + nr * (k['res'] + k['sol']))
    per_it = k['jvp'] + 32 + 4 * k['msol'] + 16 * (K + 1) / 2
    b = n * nr * (k['res'] + k['mfac'] + K * per_it)
    print(f"spatial n={n} ({lab}, K={K:.2f}): dense {dense:.3g}, (a) {a:.3g}, (b) {b:.3g} flops/step")
