"""Time a step of two builds of the package side by side (benchmarks/prototypes/residual_rounding/
README.md): ``python ab_builds.py A B --rounds 5``, where A and B are folders holding a built
``symplectic/`` (e.g. a copy of the in-place build of each variant).  Each round runs both builds, in
alternating order, in fresh interpreters (PYTHONPATH=A or B); a build's time a step is the least of
5 ``sp.integrate`` calls with ``store_every=N``; the ratio B/A is the median over rounds (min-max).
The double pendulum of benchmarks/models.py, from (pi/4, pi/3) at rest.
"""
import argparse
import os
import pathlib
import statistics
import subprocess
import sys

BENCH = pathlib.Path(__file__).resolve().parents[2]
CASES = [("simpson", 0.01, "full", 10000), ("lobatto5", 0.0177, "full", 5000),
         ("lobatto5", 0.0297, "step", 3367), ("lobatto6", 0.0297, "step", 3367),
         ("lobatto7", 0.0177, "full", 5000)]
CODE = r'''
import time
import numpy as np, symplectic as sp, models as M
S, q0, p0 = M.dp_system(), np.array(M.DP_Q0), np.array(M.DP_P0)
out = []
for meth, h, nw, N in CASES:
    best = 1e9
    for _ in range(5):
        t0 = time.perf_counter()
        sp.integrate(S, q0, p0, h, N, meth, newton=nw, store_every=N)
        best = min(best, time.perf_counter() - t0)
    out.append(best / N * 1e6)
print(*out)
'''.replace("CASES", repr(CASES))


def run(build):
    env = dict(os.environ, PYTHONPATH=f"{build}{os.pathsep}{BENCH}")
    o = subprocess.run([sys.executable, "-c", CODE], env=env, capture_output=True, text=True,
                       check=True)
    return [float(x) for x in o.stdout.split()]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("A")
    ap.add_argument("B")
    ap.add_argument("--rounds", type=int, default=5)
    a = ap.parse_args()
    res = {a.A: [], a.B: []}
    for k in range(a.rounds):
        for build in ((a.A, a.B) if k % 2 == 0 else (a.B, a.A)):
            res[build].append(run(build))
    for j, case in enumerate(CASES):
        ta = [r[j] for r in res[a.A]]
        tb = [r[j] for r in res[a.B]]
        ratio = [y / x for x, y in zip(ta, tb)]
        print(f"{case[0]:9s} h={case[1]:<7} {case[2]:5s}: A {statistics.median(ta):.3f} us, "
              f"B {statistics.median(tb):.3f} us, B/A {statistics.median(ratio):.3f} "
              f"({min(ratio):.3f}-{max(ratio):.3f})", flush=True)


if __name__ == "__main__":
    main()
