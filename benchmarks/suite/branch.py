"""The branch rule of the implicit schemes: what it catches and what it costs.

    python benchmarks/branch_rule.py [--quick] [--base PATH] [--out benchmarks/RESULTS_branch.md]

Each implicit step's root may be a false one (not continued from h -> 0);
with ``branch_check="auto"`` the core checks a suspicious root by continuation
in h (csrc/sym_galerkin.c, branch_check), with ``"always"`` every root.

Part 1 -- what "auto" catches.  A sample of runs (the papers' systems, chains
of 2-8 links from fixed and random states, two 3-link cart pendulums, a stiff
linear system; h = 0.005-0.7; every implicit method; full, chord and
per-step Newton, with and without the predictor) runs with "always" and with
"auto".  "always" finds every false root Newton produced (its
``counts.branch_fixes``); "auto" caught them all in a run when its states
equal "always"'s (to 1e-7 relative: chord-mode factorisations differ at
rounding) over the rows both keep.

Part 2 -- what it costs on ordinary runs.  The double pendulum of the
papers at h = 0.01 (and h = 0.05) over 100 s: "auto" against "never" in the
same process, repeats interleaved, the median of the per-round ratios; with
``--base PATH`` (another build, e.g. of the commit before the rule, on
PYTHONPATH; its commit is read from PATH/COMMIT when that file exists) the
same run against that build too, whole processes alternated, and -- where
valgrind is installed -- the instructions of the C loop per step under
callgrind (repeatable, unlike times on a shared machine).
"""
import argparse
import math
import os
import platform
import subprocess
import sys
import tempfile
import time
import warnings

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "tests"))

import symplectic as sp                        # noqa: E402

IMPLICIT = [m for m, d in sp.methods(details=True).items() if d["symplectic"]]
MODES = [dict(), dict(predictor=False), dict(newton="chord"), dict(newton="step")]
L = 9.81 / (2 * math.pi) ** 2


def cases(quick):
    sy = sp.systems
    out = []
    pend = sy.pendulum(1.0, 2 * math.pi)
    for q0, p0 in ((math.pi / 2, 0.0), (3.0, 0.0), (0.0, 15.0)):
        for h in ([0.05, 0.3] if quick else [0.01, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.7]):
            out.append(("pendulum", pend, [q0], [p0], h, 5.0))
    dp = sy.double_pendulum(1.0, 1.0, L, L, 9.81)
    for h in ([0.01, 0.1, 0.2] if quick else [0.005, 0.01, 0.02, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3]):
        out.append(("double pendulum", dp, [math.pi / 4, math.pi / 3], [0, 0], h, 5.0))
        out.append(("double pendulum, fast", dp, [2.5, -2.0], [0.3, 0.1], h, 5.0))
    if not quick:
        top = sy.lagrange_top()
        tq0 = np.array([0.0, math.pi / 3, 0.0])
        tp0 = top.mass(tq0) @ np.array([9.2, 0.0, 252.0])
        for N in (20, 40, 80, 160):
            out.append(("Lagrange top", top, tq0, tp0, 1.8472390 / N, 2 * 1.8472390))
    rng = np.random.default_rng(1)
    for n in ((3, 5) if quick else (2, 3, 4, 5, 8)):
        ch = sy.pendulum_chain(n)
        starts = [(0.8 * np.cos(0.7 * np.arange(n)), np.zeros(n)),
                  (1.2 * np.cos(0.5 * np.arange(n)), np.zeros(n))]
        starts += [(rng.uniform(-2.5, 2.5, n), rng.uniform(-3, 3, n))
                   for _ in range(1 if quick else 4)]
        for i, (qc, vc) in enumerate(starts):
            for h in ([0.1, 0.3] if quick else [0.05, 0.1, 0.2, 0.3, 0.4, 0.5]):
                out.append((f"chain of {n}", ch, qc, ch.mass(qc) @ vc, h, 5.0))
    try:
        from models_cart import (Q0_TRIAL_CART, TRIAL_Q0, TRIAL_QDOT0, cart_pendulum3,
                                 cart_pendulum3_trial)
        cart = cart_pendulum3()
        trial = cart_pendulum3_trial()
        for h in ([0.1, 0.2] if quick else [0.05, 0.1, 0.15, 0.2, 0.3]):
            out.append(("cart pendulum (trust issue)", cart, Q0_TRIAL_CART, np.zeros(4), h, 5.0))
        for h in ([0.18, 0.3] if quick else [0.05, 0.1, 0.18, 0.22, 0.26, 0.3, 0.35, 0.5]):
            out.append(("cart pendulum (first-week trial)", trial, TRIAL_Q0,
                        trial.mass(TRIAL_Q0) @ TRIAL_QDOT0, h, 4.0))
    except ImportError:                         # pragma: no cover (no SymPy)
        pass
    lin = sy.linear(np.eye(2), np.diag([1.0, 1e4]))
    for h in ([0.01] if quick else [0.01, 0.1, 1.0]):
        out.append(("stiff linear", lin, [1.0, 1.0], [0.0, 0.0], h, 5.0))
    return out


def _run(S, q0, p0, h, n, m, kw, check):
    kw = dict(kw, branch_check=check)
    if S.builtin == "linear":
        kw["closed_form"] = False
    try:
        tr = sp.integrate(S, q0, p0, h, n, m, **kw)
        return tr, None
    except sp.ConvergenceError as err:
        return err.trajectory, err.reason


def part1(quick):
    rows = []
    for name, S, q0, p0, h, T in cases(quick):
        n = min(max(1, int(round(T / h))), 300)
        for m in IMPLICIT:
            for kw in MODES:
                a, ra = _run(S, q0, p0, h, n, m, kw, "always")
                b, rb = _run(S, q0, p0, h, n, m, kw, "auto")
                k = min(len(a.t), len(b.t))
                scale = max(np.max(np.abs(a.q[:k])), 1.0)
                same = bool(np.max(np.abs(a.q[:k] - b.q[:k])) <= 1e-7 * scale) and \
                    (ra is None) == (rb is None)
                rows.append(dict(system=name, method=m, h=h, mode=str(kw) or "full",
                                 steps=a.counts.steps, fixes=a.counts.branch_fixes,
                                 checks_auto=b.counts.branch_checks, steps_auto=b.counts.steps,
                                 same=same))
    return rows


def _timed(S, m, h, n, check, reps=1):
    q0, p0 = [math.pi / 4, math.pi / 3], [0.0, 0.0]
    t0 = time.perf_counter()
    for _ in range(reps):
        sp.integrate(S, q0, p0, h, n, m, branch_check=check)
    return (time.perf_counter() - t0) / reps


def part2(rounds):
    S = sp.systems.double_pendulum(1.0, 1.0, L, L, 9.81)
    out = []
    for m in ("simpson", "lobatto5", "midpoint"):
        for h in (0.01, 0.05):
            n = int(round(100 / h))
            _timed(S, m, h, n, "auto")                      # warm-up
            ta, tn, ratios = [], [], []
            for _ in range(rounds):
                a = _timed(S, m, h, n, "auto")
                b = _timed(S, m, h, n, "never")
                ta.append(a)
                tn.append(b)
                ratios.append(a / b)
            tr = sp.integrate(S, [math.pi / 4, math.pi / 3], [0, 0], h, n, m)
            out.append(dict(method=m, h=h, n=n, auto_us=1e6 * np.median(ta) / n,
                            never_us=1e6 * np.median(tn) / n, ratio=float(np.median(ratios)),
                            rmin=float(np.min(ratios)), rmax=float(np.max(ratios)),
                            checks=tr.counts.branch_checks))
    return out


_CHILD = r"""
import math, sys, time
import numpy as np
import symplectic as sp
L = 9.81 / (2 * math.pi) ** 2
S = sp.systems.double_pendulum(1.0, 1.0, L, L, 9.81)
m, h = sys.argv[1], float(sys.argv[2])
n = int(round(100 / h))
sp.integrate(S, [math.pi / 4, math.pi / 3], [0, 0], h, n, m)
best = []
for _ in range(5):
    t0 = time.perf_counter()
    sp.integrate(S, [math.pi / 4, math.pi / 3], [0, 0], h, n, m)
    best.append(time.perf_counter() - t0)
print(1e6 * np.median(best) / n)
"""


def part3(base, rounds):
    """This build against the build at ``base``: whole processes alternated."""
    out = []
    env_new = dict(os.environ)
    env_old = dict(os.environ, PYTHONPATH=base)
    # (children run outside the checkout: python -c puts the working directory
    # first on sys.path, before PYTHONPATH)
    cwd = tempfile.gettempdir()
    for m in ("simpson", "lobatto5", "midpoint"):
        for h in (0.01,):
            ratios, new, old = [], [], []
            for _ in range(rounds):
                a = float(subprocess.run([sys.executable, "-c", _CHILD, m, str(h)], env=env_new,
                                         capture_output=True, text=True, check=True,
                                         cwd=cwd).stdout)
                b = float(subprocess.run([sys.executable, "-c", _CHILD, m, str(h)], env=env_old,
                                         capture_output=True, text=True, check=True,
                                         cwd=cwd).stdout)
                new.append(a)
                old.append(b)
                ratios.append(a / b)
            out.append(dict(method=m, h=h, new=np.median(new), old=np.median(old),
                            ratio=float(np.median(ratios)), rmin=min(ratios), rmax=max(ratios)))
    return out


_CG_CHILD = r"""
import math, sys
import symplectic as sp
L = 9.81 / (2 * math.pi) ** 2
S = sp.systems.double_pendulum(1.0, 1.0, L, L, 9.81)
sp.integrate(S, [math.pi / 4, math.pi / 3], [0, 0], float(sys.argv[2]), int(sys.argv[3]), sys.argv[1])
"""


def _c_instructions(env, m, h, n, tmp):
    """Instructions inside the C loop (sym_driver.c integrate_on, inclusive) per step."""
    out = os.path.join(tmp, "cg.out")
    subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", sys.executable,
                    "-c", _CG_CHILD, m, str(h), str(n)], env=dict(env, PYTHONHASHSEED="0"),
                   capture_output=True, check=True, cwd=tmp)
    ann = subprocess.run(["callgrind_annotate", "--inclusive=yes", out], capture_output=True,
                         text=True, check=True).stdout
    for line in ann.splitlines():
        if "sym_driver.c:integrate_on" in line:
            return int(line.split()[0].replace(",", "")) / n
    raise RuntimeError("integrate_on not found in the callgrind output")


def part4(base):
    """C instructions per step, this build and the base build (callgrind)."""
    import shutil
    if not (shutil.which("valgrind") and shutil.which("callgrind_annotate")):
        return None
    out = []
    with tempfile.TemporaryDirectory() as tmp:
        for m, h in (("simpson", 0.01), ("simpson", 0.1), ("midpoint", 0.01), ("lobatto5", 0.0297)):
            n = 20000
            new = _c_instructions(dict(os.environ), m, h, n, tmp)
            old = _c_instructions(dict(os.environ, PYTHONPATH=base), m, h, n, tmp)
            out.append(dict(method=m, h=h, new=new, old=old, ratio=new / old))
    return out


def _base_commit(base):
    try:
        with open(os.path.join(base, "COMMIT")) as fh:
            return fh.read().strip()[:7]
    except OSError:
        return "unknown"


def report(r1, r2, r3, args, seconds, r4=None):
    lines = ["# The branch rule: what it catches, what it costs", "",
             f"Generated by `python benchmarks/branch_rule.py{' --quick' if args.quick else ''}"
             f"{' --base BUILD' if args.base else ''}` on "
             f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} in {seconds:.0f} s; "
             f"{platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, "
             f"Python {platform.python_version()}, NumPy {np.__version__}, symplectic at "
             f"{_commit()}. Do not edit by hand: rerun the command.", "",
             "## 1. False roots caught by `branch_check=\"auto\"`", "",
             "Every run of the sample with `\"always\"` (every root checked: its "
             "`branch_fixes` are the false roots Newton produced) and with `\"auto\"`. "
             "A run counts as caught when its states equal the `\"always\"` run's (1e-7 "
             "relative) with the same outcome.", ""]
    runs = len(r1)
    with_false = [r for r in r1 if r["fixes"] > 0]
    missed = [r for r in with_false if not r["same"]]
    diff_clean = [r for r in r1 if r["fixes"] == 0 and not r["same"]]
    lines += ["| | runs | steps | false roots (always) | runs with false roots | of them "
              "caught by auto |", "|---|---|---|---|---|---|",
              f"| all | {runs} | {sum(r['steps'] for r in r1)} | {sum(r['fixes'] for r in r1)} "
              f"| {len(with_false)} | {len(with_false) - len(missed)} |"]
    for m in IMPLICIT:
        rm = [r for r in r1 if r["method"] == m]
        wf = [r for r in rm if r["fixes"] > 0]
        lines.append(f"| {m} | {len(rm)} | {sum(r['steps'] for r in rm)} | "
                     f"{sum(r['fixes'] for r in rm)} | {len(wf)} | "
                     f"{len([r for r in wf if r['same']])} |")
    lines += ["", f"Runs with a false root that `\"auto\"` did not catch: {len(missed)}."]
    for r in missed:
        lines.append(f"- {r['system']}, {r['method']}, h = {r['h']}, {r['mode']}")
    lines += [f"Runs without a false root whose `\"auto\"` states differ anyway: "
              f"{len(diff_clean)} (a check's factorisations replace chord mode's kept "
              f"one, or a Newton failure that the continuation rescues in only one of "
              f"the two)."]
    for r in diff_clean[:10]:
        lines.append(f"- {r['system']}, {r['method']}, h = {r['h']}, {r['mode']}")
    checks = sum(r["checks_auto"] for r in r1)
    steps = sum(r["steps_auto"] for r in r1)
    lines += ["", f"Roots checked by `\"auto\"`: {checks} of {steps} steps "
              f"({100 * checks / max(steps, 1):.1f} %, mostly at the large h of the sample).", ""]
    lines += ["## 2. Cost on ordinary runs, same process", "",
              "Double pendulum (TOP Table 1), 100 s; per-step time of `\"auto\"` and "
              "`\"never\"` (medians over interleaved rounds) and the median of the per-round "
              "ratios (min-max).", "",
              "| method | h | checks in the run | auto µs/step | never µs/step | auto / never |",
              "|---|---|---|---|---|---|"]
    for r in r2:
        lines.append(f"| {r['method']} | {r['h']} | {r['checks']} | {r['auto_us']:.3f} | "
                     f"{r['never_us']:.3f} | {r['ratio']:.3f} ({r['rmin']:.3f}-{r['rmax']:.3f}) |")
    if r3:
        lines += ["", f"## 3. Against the base build (commit {_base_commit(args.base)})", "",
                  "The same double-pendulum run (h = 0.01, 100 s) in whole processes, this "
                  "build and the base build alternated; per-step medians (best of 5 calls "
                  "in each process) and the median ratio.", "",
                  "| method | this build µs/step | base µs/step | ratio |", "|---|---|---|---|"]
        for r in r3:
            lines.append(f"| {r['method']} | {r['new']:.3f} | {r['old']:.3f} | "
                         f"{r['ratio']:.3f} ({r['rmin']:.3f}-{r['rmax']:.3f}) |")
    if r4:
        lines += ["", "Instructions of the C loop per step (callgrind, inclusive cost of "
                  "`integrate_on` over 20,000 steps of the same run; repeatable):", "",
                  "| method | h | this build | base | ratio |", "|---|---|---|---|---|"]
        for r in r4:
            lines.append(f"| {r['method']} | {r['h']} | {r['new']:.0f} | {r['old']:.0f} | "
                         f"{r['ratio']:.4f} |")
    return "\n".join(lines) + "\n"


def _commit():
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=HERE,
                              capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--base", help="PYTHONPATH of the build to compare with (part 3)")
    ap.add_argument("--out", default=os.path.join(HERE, "RESULTS_branch.md"))
    ap.add_argument("--rounds", type=int, default=None)
    args = ap.parse_args()
    warnings.simplefilter("ignore")
    t0 = time.time()
    r1 = part1(args.quick)
    rounds = args.rounds or (3 if args.quick else 15)
    r2 = part2(rounds)
    r3 = part3(args.base, rounds) if args.base else None
    r4 = part4(args.base) if args.base else None
    text = report(r1, r2, r3, args, time.time() - t0, r4)
    with open(args.out, "w") as fh:
        fh.write(text)
    print(text)


if __name__ == "__main__":
    main()
