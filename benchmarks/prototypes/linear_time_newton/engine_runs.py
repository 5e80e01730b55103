"""The engine's own lobatto5 runs of pendulum_chain(n) used throughout: relative energy error over 300 steps
(max |E - E0| / |E0|) and the Newton statistics per step (the same runs as cbench.py)."""
import sys
import numpy as np
from pathlib import Path
HERE = Path(__file__).resolve().parent      # this folder: the sibling modules, the .npz files
ROOT = HERE.parents[2]                      # the repository root: its engine, tests/data
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT))
import symplectic as sp
HS = {8: 0.0125, 16: 0.01, 32: 0.0075, 64: 0.005, 128: 0.005}
for n, h in HS.items():
    tr = sp.integrate(sp.systems.pendulum_chain(n), 0.5 * np.sin(1.3 * np.arange(n)), np.zeros(n), h, 300, 'lobatto5')
    E = tr.energy; c = tr.counts
    print(f"n={n} h={h}: energy error {np.abs(E - E[0]).max() / abs(E[0]):.1e}; per step {c.factorizations / c.steps:.2f} "
          f"factorisations, {c.newton_iterations / c.steps:.2f} Newton iterations, {c.evaluations / c.steps:.1f} point evaluations")
