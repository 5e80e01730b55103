"""A/B timing of the n-link chain (and the double pendulum) between two revisions of the C core, in one run.

    python benchmarks/ab_chain.py OLD_REV [NEW_REV] [--rounds 9] [--out FILE]

Builds each revision (``git worktree`` in a temporary directory, ``setup.py build_ext
--inplace``), then times ``sp.integrate(pendulum_chain(n), ...)`` (Simpson, h = 0.01, the
initial state of run.py's section 5: q_i = 0.5 sin(1.3 i), p = 0) in fresh subprocesses,
alternating the revisions round by round so that both see the same machine load. Reports the
median and min–max of the per-round best-of-3 wall times per step and the ratio of medians, and
checks that both revisions give bitwise the same trajectory. NEW_REV defaults to the working
tree. The double-pendulum per-step cost (h = 0.01, Simpson and lobatto5) is measured in the
same rounds (Simpson's is the machine calibration point against benchmarks/RESULTS.md).
Prints a Markdown report (and writes it to FILE with --out): its place is the commit message or
the issue's notes, not a committed file.
"""
import argparse
import datetime
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

CHILD = r"""
import json, sys, time, hashlib
import numpy as np, symplectic as sp
n, newton, steps, method = int(sys.argv[1]), sys.argv[2], int(sys.argv[3]), sys.argv[4]
if n == 0:   # calibration: built-in double pendulum, Simpson, h = 0.01
    l = 9.81 / (2 * np.pi) ** 2
    sys_ = sp.systems.double_pendulum(l1=l, l2=l)
    q0, p0 = [np.pi / 4, np.pi / 3], [0.0, 0.0]
else:
    sys_ = sp.systems.pendulum_chain(n)
    q0, p0 = 0.5 * np.sin(1.3 * np.arange(n)), np.zeros(n)
sp.integrate(sys_, q0, p0, 0.01, 5, method, newton=newton)
best = float("inf")
for _ in range(3):
    t = time.perf_counter()
    tr = sp.integrate(sys_, q0, p0, 0.01, steps, method, newton=newton)
    best = min(best, time.perf_counter() - t)
digest = hashlib.sha256(tr.q.tobytes() + tr.p.tobytes()).hexdigest()
print(json.dumps(dict(us=best / steps * 1e6, it=float(tr.newton_iterations.mean()), digest=digest)))
"""

# (n, newton, steps, method); n = 0: the built-in double pendulum
CASES = [(0, "full", 100000, "simpson"), (0, "full", 40000, "lobatto5"),
         (16, "full", 400, "simpson"), (32, "full", 200, "simpson"), (64, "full", 100, "simpson"),
         (64, "chord", 100, "simpson")]


def build(rev, dest):
    if rev is None:
        src = ROOT
    else:
        subprocess.run(["git", "-C", ROOT, "worktree", "add", "--detach", "-q", dest, rev], check=True)
        src = dest
    subprocess.run([sys.executable, "setup.py", "build_ext", "--inplace", "-q"], cwd=src, check=True,
                   capture_output=True)
    return src


def commit_of(rev):
    return subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", rev or "HEAD"], check=True,
                          capture_output=True, text=True).stdout.strip() + ("" if rev else "+worktree")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("old")
    ap.add_argument("new", nargs="?", default=None)
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--out", default=None, help="also write the report to this file")
    args = ap.parse_args(argv)
    tmp = tempfile.mkdtemp(prefix="symplectic-ab-")
    wts = []
    try:
        srcs = {}
        for label, rev in (("old", args.old), ("new", args.new)):
            d = os.path.join(tmp, label)
            srcs[label] = build(rev, d)
            if rev is not None:
                wts.append(d)
        res = {(c, lab): [] for c in CASES for lab in srcs}
        digests = {}
        for r in range(args.rounds):
            for case in CASES:
                for lab in (("old", "new") if r % 2 == 0 else ("new", "old")):
                    env = dict(os.environ, PYTHONPATH=srcs[lab], OPENBLAS_NUM_THREADS="1")
                    out = subprocess.run([sys.executable, "-c", CHILD, *map(str, case)], env=env,
                                         cwd=tmp, check=True, capture_output=True, text=True).stdout
                    d = json.loads(out)
                    res[(case, lab)].append(d)
                    digests.setdefault(case, {})[lab] = d["digest"]
            print(f"round {r + 1}/{args.rounds} done", file=sys.stderr)
    finally:
        for d in wts:
            subprocess.run(["git", "-C", ROOT, "worktree", "remove", "--force", d], check=False)
        shutil.rmtree(tmp, ignore_errors=True)

    lines = [
        "# n-link chain: A/B timing of two revisions (benchmarks/ab_chain.py)", "",
        f"Generated {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M UTC} by "
        f"`python benchmarks/ab_chain.py {args.old}{' ' + args.new if args.new else ''} "
        f"--rounds {args.rounds}`; machine: {platform.processor() or platform.machine()}, "
        f"{os.cpu_count()} CPUs, Python {platform.python_version()}. "
        f"old = {commit_of(args.old)}, new = {commit_of(args.new)}.", "",
        "h = 0.01; the chain with Simpson from q_i(0) = 0.5 sin(1.3 i), p(0) = 0. Each round runs every case in a fresh "
        "process per revision (order alternating between rounds) and keeps the best of 3 runs; the "
        "table gives the median over rounds (min–max in brackets), µs per step. The two revisions "
        "run back to back within a round, so the paired ratios are the robust comparison on a "
        "machine whose speed drifts; where it switches between a fast and a slow state, the ratio of "
        "the minima compares the fast states. The double pendulum is the built-in one; with Simpson it "
        "is the calibration point (RESULTS.md section 2 measures the same, h = 0.01).", "",
        "| case | old µs/step | new µs/step | new / old (medians) | new / old (median of the rounds' paired ratios) | new / old (minima) | it/step | same trajectory |",
        "|---|---|---|---|---|---|---|---|"]
    for case in CASES:
        o = [d["us"] for d in res[(case, "old")]]
        nw = [d["us"] for d in res[(case, "new")]]
        name = (f"double pendulum, {case[3]}" if case[0] == 0
                else f"chain n = {case[0]}, {case[1]} Newton")
        lines.append(f"| {name} | {statistics.median(o):.1f} ({min(o):.1f}–{max(o):.1f}) | "
                     f"{statistics.median(nw):.1f} ({min(nw):.1f}–{max(nw):.1f}) | "
                     f"{statistics.median(nw) / statistics.median(o):.3f} | "
                     f"{statistics.median(b / a for a, b in zip(o, nw)):.3f} | "
                     f"{min(nw) / min(o):.3f} | "
                     f"{res[(case, 'new')][0]['it']:.2f} | "
                     f"{'bitwise' if digests[case]['old'] == digests[case]['new'] else 'DIFFERENT'} |")
    cal = [d["us"] for lab in ("old", "new") for d in res[(CASES[0], lab)]]
    try:
        import csv
        with open(os.path.join(HERE, "results", "per_step.csv"), encoding="utf-8") as f:
            rec = next(float(r["us_per_step"]) for r in csv.DictReader(f)
                       if r["method"] == "simpson" and float(r["h"]) == 0.01)
        lines += ["", f"Machine speed: the calibration point took {statistics.median(cal):.2f} µs/step "
                  f"here (median over both revisions) against {rec:.3f} µs/step in the last full run "
                  f"(RESULTS.md): this machine ran {statistics.median(cal) / rec:.2f}× slower than "
                  "then, so compare ratios, not absolute times, with RESULTS.md."]
    except (OSError, StopIteration, KeyError, ValueError):
        pass
    text = "\n".join(lines) + "\n"
    if args.out:
        with open(args.out, "w", encoding="utf-8") as f:
            f.write(text)
    print(text)


if __name__ == "__main__":
    main()
