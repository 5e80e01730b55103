"""What store_every=k costs in memory: the process's peak resident size, measured.

    python benchmarks/bench_store_every.py [--steps N] [--out FILE]

Each run is a fresh Python process (so that one run's peak does not hide the
next's) that imports symplectic, integrates the built-in pendulum (Simpson,
h = 1e-3, q0 = 1 rad, n = 1) for N = 10^7 steps with ``store_every=k`` and
reports its peak resident set size (``resource.getrusage(...).ru_maxrss``)
and the peak of the memory traced by ``tracemalloc`` (the NumPy arrays).  A
run of 0 steps gives the baseline of the interpreter and the imports.  The
expected size of the kept arrays is written next to each measurement:
t, q, p (8 bytes each per row, n = 1), the Newton iterations (4 bytes per
row, the sums between rows), and with k = 1 Simpson's q_mid (8 bytes per
step).

Writes a Markdown report (default benchmarks/RESULTS_store_every.md).
"""
import argparse
import datetime
import json
import os
import platform
import subprocess
import sys

import numpy as np

CHILD = r"""
import json, resource, sys, tracemalloc
import symplectic as sp
n_steps, k = int(sys.argv[1]), (None if sys.argv[2] == "none" else int(sys.argv[2]))
pend = sp.systems.pendulum()
tracemalloc.start()
tr = sp.integrate(pend, [1.0], [0.0], 1e-3, n_steps, store_every=k)
_, traced = tracemalloc.get_traced_memory()
tracemalloc.stop()
print(json.dumps({"rows": len(tr.t), "t_end": float(tr.t[-1]), "traced": traced,
                  "maxrss_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}))
"""


def child(n_steps, k):
    r = subprocess.run([sys.executable, "-c", CHILD, str(n_steps), "none" if k is None else str(k)],
                       capture_output=True, text=True, check=True)
    return json.loads(r.stdout.strip().splitlines()[-1])


def expected_bytes(n_steps, k):
    rows = -(-n_steps // k) + 1 if n_steps else 1
    b = rows * 8 * 3 + max(rows - 1, 0) * 4
    if k == 1:
        b += n_steps * 8                                  # Simpson's q_mid, every step
    return rows, b


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=10 ** 7)
    ap.add_argument("--out", default=os.path.join(os.path.dirname(__file__),
                                                  "RESULTS_store_every.md"))
    args = ap.parse_args(argv)
    N = args.steps
    base = child(0, None)
    lines = [
        "# store_every: memory of a thinned run, measured",
        "",
        f"`python benchmarks/bench_store_every.py --steps {N}` on {datetime.date.today()}: "
        f"{platform.machine()}, {os.cpu_count()} CPUs, "
        f"Python {platform.python_version()}, NumPy {np.__version__}. Each row is a fresh "
        "process; peak RSS is `ru_maxrss`, the baseline (0 steps: interpreter + imports) "
        f"is {base['maxrss_kib'] / 1024:.1f} MiB.",
        "",
        f"Built-in pendulum (n = 1), Simpson, h = 1e-3, {N:.0e} steps:",
        "",
        "| store_every | rows kept | arrays expected MB | tracemalloc peak MB "
        "| peak RSS − baseline MB |",
        "|---|---|---|---|---|",
    ]
    results = {}
    for k in (1000, 100, 10, 1):
        r = child(N, k)
        rows, exp = expected_bytes(N, k)
        assert r["rows"] == rows, (r, rows)
        rss = (r["maxrss_kib"] - base["maxrss_kib"]) * 1024
        results[k] = (rows, exp, r["traced"], rss)
        lines.append(f"| {k} | {rows} | {exp / 1e6:.1f} | {r['traced'] / 1e6:.1f} "
                     f"| {rss / 1e6:.1f} |")
        print(lines[-1], flush=True)
    r10, r1 = results.get(10), results.get(1)
    lines += [
        "",
        f"store_every=10 keeps {r10[0]} states ({N // 10:.0e} + 1): its peak RSS above the "
        f"baseline is {r10[3] / 1e6:.1f} MB against {r10[1] / 1e6:.1f} MB of kept arrays, "
        f"and {r1[3] / r10[3]:.1f} times less than every step's {r1[3] / 1e6:.1f} MB. The C "
        "loop writes only the kept rows: nothing proportional to the number of steps is "
        "allocated. (tests/test_timespans.py checks the tracemalloc peak of the same "
        "10^7-step run against the kept arrays' size.)",
    ]
    with open(args.out, "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
    print("wrote", args.out)


if __name__ == "__main__":
    main()
