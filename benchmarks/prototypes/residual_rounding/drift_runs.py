"""Energy drift of the Lobatto rows over long runs of the double pendulum (benchmarks/prototypes/
residual_rounding/README.md): for each setting, the least-squares slope of the relative energy
error times the run's length, at ``--samples`` step sizes h0 (1 + 0.0137 k), and the largest
relative energy error of those runs.  It measures the ``symplectic`` first on ``sys.path``
(``PYTHONPATH=<a build>``), so one script compares builds of the variants the README lists.

    python benchmarks/prototypes/residual_rounding/drift_runs.py lobatto5:0.0125:1e5:full \
        lobatto6:0.0297:1e5:step lobatto7:0.0177:1e5:full --samples 4

A setting is ``method:h0:T:newton``.  The system is the TOP paper's double pendulum
(benchmarks/models.py), from (pi/4, pi/3) at rest, its energy from the closed form there.
"""
import argparse
import pathlib
import sys

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2]))   # benchmarks/
import models as M  # noqa: E402
import symplectic as sp  # noqa: E402


def drift(method, h, T, newton, store_every=32):
    """(slope of the relative energy error times T, its largest absolute value) over one run."""
    tr = sp.integrate(M.dp_system(), np.array(M.DP_Q0), np.array(M.DP_P0), h, int(round(T / h)),
                      method=method, newton=newton, store_every=store_every)
    H = M.dp_energy(tr.q, tr.p)
    e = (H - H[0]) / abs(H[0])
    return np.polyfit(tr.t, e, 1)[0] * T, float(np.abs(e).max())


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("settings", nargs="+", help="method:h0:T:newton")
    ap.add_argument("--samples", type=int, default=4)
    a = ap.parse_args()
    print(f"symplectic from {pathlib.Path(sp.__file__).parent}")
    for spec in a.settings:
        m, h0, T, nw = spec.split(":")
        runs = [drift(m, float(h0) * (1 + 0.0137 * k), float(T), nw) for k in range(a.samples)]
        d = [r[0] for r in runs]
        print(f"{spec:28s} drift " + " ".join(f"{x:+.1e}" for x in d)
              + f" | mean {np.mean(d):+.1e}, largest |e_H| {max(r[1] for r in runs):.1e}", flush=True)


if __name__ == "__main__":
    main()
