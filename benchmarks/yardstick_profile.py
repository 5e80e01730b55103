"""Where the per-step cost against the yardstick goes: instructions, branches and branch
misses per step of our Simpson step and of the hand-written one (../shared/bench/limit/),
counted by valgrind's callgrind, which counts, not times -- the same numbers whatever else the
machine is doing.  (Section 9 of RESULTS.md times the two; this says how much of the gap is
work and how much is the speed of that work.)

Per step = (count of a run of 2N steps - count of a run of N steps) / steps, so that start-up
(the interpreter, NumPy, the yardstick's set-up) cancels.  The yardstick's `wpone` mode under
callgrind runs its N steps 8 times (a warm-up, one sizing run, 5 timed samples, the energy run:
its repeat count is 1 when one run takes more than 2 ms, as every run does under valgrind).
Ours: `sp.integrate(..., store_every=N)` REPEATS times.  Our per-function split: the self cost
of every function of csrc/ in the 2N run, per step.

    python benchmarks/yardstick_profile.py [--h 0.01] [--steps 5000]
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from suite.yardstick import find_source  # noqa: E402

REPEATS = 3
YARD_RUNS = 8
EVENTS = ("Ir", "Bc", "Bcm", "Bi", "Bim")
OURS = """
import math, sys
import numpy as np
import symplectic as sp
l = 9.81 / (2 * math.pi) ** 2
dp = sp.systems.double_pendulum(m1=1, m2=1, l1=l, l2=l, g=9.81)
h, N, newton = float(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
for _ in range({repeats}):
    sp.integrate(dp, [math.pi / 4, math.pi / 3], [0.0, 0.0], h, N, "simpson", newton=newton,
                 store_every=N)
"""


def callgrind(cmd, out, env=None, extra=()):
    """Run cmd under callgrind (extra: more valgrind options); callgrind_annotate's text."""
    subprocess.run(["valgrind", "--tool=callgrind", "--branch-sim=yes",
                    f"--callgrind-out-file={out}", *extra] + cmd, check=True, capture_output=True,
                   env=env)
    text = subprocess.run(["callgrind_annotate", "--auto=no", out], check=True, capture_output=True,
                          text=True).stdout
    return text


def totals(text):
    """The PROGRAM TOTALS line: {event: count}."""
    head = re.search(r"Events shown:\s+(.*)", text).group(1).split()
    line = next(x for x in text.splitlines() if "PROGRAM TOTALS" in x)
    nums = [int(v.replace(",", "")) for v in re.findall(r"[\d,]+(?= )", line + " ")
            if "," in v or v.isdigit()]
    return dict(zip(head, nums))


def functions(text, marker):
    """Self counts of the functions whose file path contains marker: [(Ir, name)]."""
    rows = []
    for line in text.splitlines():
        if marker not in line or ":" not in line:
            continue
        m = re.match(r"\s*([\d,]+)", line)
        if m:
            name = line.split(marker, 1)[1].split(" [")[0]
            rows.append((int(m.group(1).replace(",", "")), name))
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--h", type=float, default=0.01)
    ap.add_argument("--steps", type=int, default=5000, help="N (the runs take N and 2N steps)")
    ap.add_argument("--newton", default="full")
    a = ap.parse_args()
    src = find_source()
    if src is None:
        sys.exit("the yardstick (../shared/bench/limit/bench.c) is not there")
    tmp = tempfile.mkdtemp(prefix="symplectic-yprof-")
    exe = os.path.join(tmp, "limit_bench")
    subprocess.run(["gcc", "-O2", "-g", "-std=gnu99", "-o", exe, src, "-lm"], check=True)
    script = os.path.join(tmp, "ours.py")
    with open(script, "w") as f:
        f.write(OURS.format(repeats=REPEATS))
    env = dict(os.environ, PYTHONHASHSEED="0", OPENBLAS_NUM_THREADS="1")
    N = a.steps
    res = {}
    for who in ("ours", "yardstick"):
        counts = []
        for k in (1, 2):
            out = os.path.join(tmp, f"{who}{k}.cg")
            if who == "ours":
                cmd = [sys.executable, script, repr(a.h), str(k * N), a.newton]
            else:
                cmd = [exe, "wpone", "simpson", repr(a.h), "1e-6", "2", repr(k * N * a.h)]
            text = callgrind(cmd, out, env)
            counts.append(totals(text))
        steps = N * (REPEATS if who == "ours" else YARD_RUNS)
        res[who] = {e: (counts[1][e] - counts[0][e]) / steps for e in EVENTS}
        res[who]["text"] = text
        res[who]["steps2"] = 2 * steps
    print(f"Simpson, double pendulum, h = {a.h}, N = {N} and {2 * N} steps; ours newton={a.newton!r}")
    print("| per step | ours | yardstick | ours / yardstick |")
    print("|---|---|---|---|")
    names = dict(Ir="instructions", Bc="conditional branches", Bcm="... mispredicted",
                 Bi="indirect branches (calls through pointers, returns excluded)",
                 Bim="... mispredicted")
    for e in EVENTS:
        o, y = res["ours"][e], res["yardstick"][e]
        print(f"| {names[e]} | {o:.1f} | {y:.1f} | {o / y:.2f} |" if y else
              f"| {names[e]} | {o:.1f} | {y:.1f} | - |")
    print()
    print("Ours, instructions per step by function (self, csrc/):")
    rows = functions(res["ours"]["text"], "csrc/")
    total = sum(r[0] for r in rows)
    for ir, name in sorted(rows, reverse=True)[:25]:
        print(f"  {ir / res['ours']['steps2']:8.1f}  {name}")
    print(f"  {total / res['ours']['steps2']:8.1f}  all of csrc/")


if __name__ == "__main__":
    main()
