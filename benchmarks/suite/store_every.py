"""Section 16: what store_every=k costs in memory: the process's peak resident size, measured.

Each run is a fresh Python process (so that one run's peak does not hide the next's) that imports
symplectic, integrates the built-in pendulum (Simpson, h = 1e-3, q0 = 1 rad, n = 1) for N steps
with ``store_every=k`` and reports its peak resident set size -- the kernel's high-water mark of
the process's own memory, ``VmHWM`` of ``/proc/self/status`` (``ru_maxrss`` where there is no
/proc: on Linux ``ru_maxrss`` keeps the parent's peak across fork and exec, so that a child of a
large benchmark process would report the parent's size) -- and the peak of the memory traced by
``tracemalloc`` (the NumPy arrays).  A run of 0 steps gives
the baseline of the interpreter and the imports.  The expected size of the kept arrays is written
next to each measurement: t, q, p (8 bytes each per row, n = 1), the Newton iterations (4 bytes per
row, the sums between rows), and with k = 1 Simpson's q_mid (8 bytes per step).
"""
import json
import subprocess
import sys

from .common import md_table

CHILD = r"""
import json, resource, sys, tracemalloc
import symplectic as sp
n_steps, k = int(sys.argv[1]), (None if sys.argv[2] == "none" else int(sys.argv[2]))
pend = sp.systems.pendulum()
tracemalloc.start()
tr = sp.integrate(pend, [1.0], [0.0], 1e-3, n_steps, store_every=k)
_, traced = tracemalloc.get_traced_memory()
tracemalloc.stop()
try:
    with open("/proc/self/status") as fh:
        peak = next(int(line.split()[1]) for line in fh if line.startswith("VmHWM:"))
except (OSError, StopIteration):
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"rows": len(tr.t), "t_end": float(tr.t[-1]), "traced": traced,
                  "maxrss_kib": peak}))
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


def run_section(cfg, ctx):
    N = cfg["store_steps"]
    base = child(0, None)
    rows, res = [], {}
    for k in (1000, 100, 10, 1):
        r = child(N, k)
        kept, exp = expected_bytes(N, k)
        if r["rows"] != kept:
            raise RuntimeError(f"store_every={k}: {r['rows']} rows kept, {kept} expected")
        rss = (r["maxrss_kib"] - base["maxrss_kib"]) * 1024
        res[k] = (kept, exp, rss)
        rows.append([k, kept, f"{exp / 1e6:.1f}", f"{r['traced'] / 1e6:.1f}", f"{rss / 1e6:.1f}"])
    r10, r1 = res[10], res[1]
    return "\n".join([
        f"Built-in pendulum (n = 1), Simpson, h = 1e-3, {N:.0e} steps. Each row is a fresh process; peak RSS is "
        f"its `VmHWM`, the baseline (0 steps: interpreter + imports) is {base['maxrss_kib'] / 1024:.1f} MiB.\n",
        md_table(["store_every", "rows kept", "arrays expected MB", "tracemalloc peak MB",
                  "peak RSS − baseline MB"], rows),
        f"\nstore_every=10 keeps {r10[0]} states: its peak RSS above the baseline is {r10[2] / 1e6:.1f} MB against "
        f"{r10[1] / 1e6:.1f} MB of kept arrays, and {r1[2] / max(r10[2], 1):.1f} times less than every step's "
        f"{r1[2] / 1e6:.1f} MB. The C loop writes only the kept rows: nothing proportional to the number of "
        "steps is allocated (tests/run/test_timespans.py checks the tracemalloc peak of a 10^7-step run against "
        "the kept arrays' size)."]) + "\n"
