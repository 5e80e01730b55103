"""C timing prototype c/chain_elim.c (gcc -std=c99 -O3, the engine's flags): agreement of its residual and
Newton direction with the NumPy prototype / dense LU, and the time of one residual (5 points), one
factorisation and one solve at n = 8..128; then the predicted per-step cost
  t_step = nfact * t_factor + nev * t_eval + nres * t_solve
with nfact, nres the engine's per-step factorisations and Newton iterations, nev its point evaluations / 5
(residual evaluations), on the same runs."""
import ctypes
import os
import subprocess
import sys
import tempfile
import numpy as np
from pathlib import Path
HERE = Path(__file__).resolve().parent      # this folder: the sibling modules, the .npz files
ROOT = HERE.parents[2]                      # the repository root: its engine, tests/data
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT))
import symplectic as sp
import lob
import chain
import dense_ref
import elim

# c/chain_elim.c, compiled at run time into a temporary folder (the spike's build command, DESIGN.md)
with tempfile.TemporaryDirectory() as tmp:
    so = os.path.join(tmp, 'libchain.so')
    subprocess.run(['gcc', '-std=c99', '-O3', '-fPIC', '-shared', '-o', so, str(HERE / 'c' / 'chain_elim.c'),
                    '-lm'], check=True)
    lib = ctypes.CDLL(so)
dp = np.ctypeslib.ndpointer(np.float64, flags='C_CONTIGUOUS')
lib.chain_new.restype = ctypes.c_void_p
lib.chain_new.argtypes = [ctypes.c_int, ctypes.c_double, ctypes.c_double, dp, dp, dp, dp, dp]
lib.chain_eval.argtypes = [ctypes.c_void_p, dp, dp, dp, dp]
lib.chain_factor.argtypes = [ctypes.c_void_p]
lib.chain_solve.argtypes = [ctypes.c_void_p, dp, dp]
lib.chain_time.argtypes = [ctypes.c_void_p, dp, dp, dp, ctypes.c_int, dp]
HS = {8: 0.0125, 16: 0.01, 32: 0.0075, 64: 0.005, 128: 0.005}
rows = []
for n in (8, 16, 32, 64, 128):
    h = HS[n]
    ch = chain.Chain(n)
    S = sp.systems.pendulum_chain(n)
    tr = sp.integrate(S, 0.5 * np.sin(1.3 * np.arange(n)), np.zeros(n), h, 300, 'lobatto5')
    cnt = tr.counts
    nfact, nres = cnt.factorizations / cnt.steps, cnt.newton_iterations / cnt.steps
    nev = cnt.evaluations / cnt.steps / 5
    keep = tuple(np.ascontiguousarray(a) for a in (ch.l, ch.m, ch.mu)) + (np.ascontiguousarray(lob.D), np.ascontiguousarray(lob.W))
    C = lib.chain_new(n, h, 9.81, *keep)
    worst = rerr = 0.0
    for j in (50, 150, 250):
        q, p = tr.q[j], tr.p[j]
        X = np.ascontiguousarray(np.outer(lob.C[1:], tr.q[j + 1] - tr.q[j]) * 1.01)
        Rc = np.zeros((4, n)); lib.chain_eval(C, q, p, X, Rc)
        Rp = lob.residual(ch.point, q, p, X, h)[0]
        assert lib.chain_factor(C) == 0
        xc = np.zeros((4, n)); lib.chain_solve(C, np.ascontiguousarray(-Rc), xc)
        Jd = dense_ref.dense_J(lambda qq, gg: (lambda M, A, H, dV, K: (M, A, H, K))(*ch.dense(qq, gg)), q, X, h)
        dd = np.linalg.solve(Jd, -Rp.ravel()).reshape(X.shape)
        worst = max(worst, np.abs(xc - dd).max() / np.abs(dd).max())
        rerr = max(rerr, np.abs(Rc - Rp).max() / np.abs(Rp).max())
    reps = max(20, 20000 // n)
    outs = []
    for _ in range(4):       # the machine is shared (other jobs seen in top): best of 4 x best of 5 rounds
        out = np.zeros(3); lib.chain_time(C, q, p, X, reps, out); outs.append(out.copy())
    outs = np.array(outs)
    te, tf, ts = outs.min(0) * 1e6
    spread = outs[:, 1].max() / outs[:, 1].min()
    step = nfact * tf + nev * te + nres * ts
    rows.append((n, te, tf, ts, nfact, nres, step))
    print(f"n={n:4d}: C residual vs NumPy {rerr:.1e}, C direction vs dense LU {worst:.1e}; "
          f"t_eval {te:.2f} us, t_factor {tf:.2f} us (max/min over 4 tries {spread:.2f}), t_solve {ts:.2f} us; engine per step: "
          f"{nfact:.2f} factorisations, {nres:.2f} iterations, {nev:.2f} residuals -> predicted {step:.1f} us/step", flush=True)
r = np.array(rows)
sel = r[:, 0] >= 16
alpha = np.polyfit(np.log(r[sel, 0]), np.log(r[sel, 6]), 1)[0]
ff = elim.factor_flops(2, 2, T_identity=True)
print(f"fitted exponent of the predicted per-step cost over n = 16..128: {alpha:.2f}")
print(f"factor flops/joint (elim.factor_flops(2,2,T=I)) {ff}; effective GFLOP/s of the C factorisation at n=128: "
      f"{ff * 128 / (r[-1, 2] * 1e-6) / 1e9:.2f}")
