"""newton="decoupled" against "step" on systems whose M(q) varies: robots read from URDF (the
test arms, planar URDF chains, random spatial trees), the compiled dense pendulum chain, and a
chain evaluated in Python; lobatto4 and lobatto5 at h = 0.005.

    python benchmarks/modes_urdf.py

Prints, per system and method, the least time a step of each mode over 3 rounds (the modes
alternating), the Newton updates a step, and decoupled / step with its range over the rounds.
Its record is benchmarks/NOTES.md section 8 (the rule of newton="auto" for URDF trees).
"""
import os
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "tests"))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "prototypes", "linear_time_newton"))

import symplectic as sp  # noqa: E402
import models as M  # noqa: E402
from spatial import random_tree  # noqa: E402
from suite.tree import chain_urdf  # noqa: E402
from support import twins  # noqa: E402
from support.urdf_runs import moving_start, path  # noqa: E402
from symplectic.multibody import from_urdf  # noqa: E402

H = 0.005


def cases():
    """(label, system, q0, p0, steps a timed call)."""
    out = []
    for n in (4, 5):
        out.append((f"builtin chain n={n} (dense)", M.chain_system(n, "chain"), M.chain_q0(n),
                    np.zeros(n), 2000))
    for name in ("arm6", "arm7", "branched"):
        q0, p0 = moving_start(name)
        out.append((f"urdf {name}", from_urdf(path(name)), q0, p0, 500))
    for n in (6, 16, 24):      # beyond 25 links chain_urdf's tapered masses turn negative
        out.append((f"urdf chain n={n}", from_urdf(chain_urdf(n)), 0.3 * np.sin(1.3 * np.arange(n)),
                    np.zeros(n), 400 if n < 24 else 200))
    for n, br in ((8, 0.5), (16, 0.8), (32, 0.5)):
        flat = random_tree(n, seed=3, branch=br)
        out.append((f"random tree n={n} branch={br}", sp.systems.tree(n, list(flat) + [0.0]),
                    0.2 * np.sin(1.3 * np.arange(n)), np.zeros(n), 100))
    for n in (4, 8, 16):
        S = sp.System(n, **twins.chain_callables(n, np.ones(n), np.ones(n)), derivative_check=False)
        out.append((f"python chain n={n}", S, 0.5 * np.sin(1.3 * np.arange(n)), np.zeros(n),
                    200 if n < 16 else 60))
    return out


def main():
    for name, S, q0, p0, N in cases():
        for meth in ("lobatto4", "lobatto5"):
            if meth == "lobatto4" and 3 * S.n < 16:     # full Newton under auto: not compared
                continue
            res = {"step": [], "decoupled": []}
            for rnd in range(3):
                for nw in (("step", "decoupled") if rnd % 2 == 0 else ("decoupled", "step")):
                    t = time.perf_counter()
                    sp.integrate(S, q0, p0, H, N, method=meth, newton=nw, store_every=N)
                    res[nw].append((time.perf_counter() - t) / N * 1e6)
            it = {nw: sp.integrate(S, q0, p0, H, N, method=meth, newton=nw).newton_iterations.mean()
                  for nw in res}
            r = [d / s for d, s in zip(res["decoupled"], res["step"])]
            print(f"{name} {meth}: step {min(res['step']):.2f} us ({it['step']:.2f} it)  "
                  f"decoupled {min(res['decoupled']):.2f} us ({it['decoupled']:.2f} it)  "
                  f"dec/step {min(res['decoupled']) / min(res['step']):.3f} "
                  f"(rounds {min(r):.2f}-{max(r):.2f})", flush=True)


if __name__ == "__main__":
    main()
