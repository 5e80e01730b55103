"""The linear closed form's cost per step: sp.integrate on sp.systems.linear (simpson and
midpoint, closed_form=True) -- since f585c81 applied by the C driver (sym_linear.c), before
that a NumPy loop in Python.  Prints one line per case: the median of REPS timed calls, in
microseconds per step.  Run it under two checkouts in turn (PYTHONPATH=...) to compare;
RESULTS_closed_form.md has the record."""
import sys
import time

import numpy as np

import symplectic as sp

REPS = 7


def main():
    cases = [("linear_dp", sp.systems.linear_double_pendulum(), [0.0, np.pi / 6], [0.0, 0.0],
              0.025)]
    rng = np.random.default_rng(3)
    A = rng.normal(size=(8, 8))
    M = A @ A.T + 8 * np.eye(8)
    K = np.diag(np.linspace(1.0, 4.0, 8))
    cases.append(("linear_n8", sp.systems.linear(M, K), np.ones(8), np.zeros(8), 0.05))
    for name, S, q0, p0, h in cases:
        for method in ("simpson", "midpoint"):
            for n_steps in (100, 100_000):
                sp.integrate(S, q0, p0, h, n_steps, method)          # warm-up
                ts = []
                for _ in range(REPS):
                    t = time.perf_counter()
                    sp.integrate(S, q0, p0, h, n_steps, method)
                    ts.append(time.perf_counter() - t)
                us = 1e6 * float(np.median(ts)) / n_steps
                print(f"{name:10s} {method:9s} n_steps={n_steps:<7d} {us:9.4f} us/step "
                      f"({sp.__file__.split('/symplectic/')[0]})")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
