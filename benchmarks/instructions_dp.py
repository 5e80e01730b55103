"""Instructions per step and per run of our double-pendulum steps, of heyoka's Taylor steps and of
GSL's rk8pd steps, counted by valgrind's callgrind (counts, not times: the same numbers whatever
else the machine is doing).  The record behind issue 51's ceiling (benchmarks/NOTES.md section 9): how much of our
step is the arithmetic of the scheme itself and how much the layers around it, against the whole
of a heyoka or GSL step.

The TOP double pendulum of RESULTS.md section 8 over T = 100 s.  Ours: `sp.integrate(...,
store_every=N)` with each setting given; heyoka: `taylor_adaptive` (the model of section 8,
benchmarks/suite/heyoka_models.py) at each tolerance given, `propagate_until(T)`; GSL: the
program of section 8 (benchmarks/compiled/gsl_rk8pd_dp.c, one run, no trajectory).  Per step =
(count of the 2T run - count of the T run) / (difference of their steps), counting only inside
the integration call (callgrind's --toggle-collect: `sym_integrate`, heyoka's `propagate_until`;
heyoka's JIT compile varies by ~1e7 instructions from one process to the next), so that set-up
cancels.

Our instructions are split by function (self counts, csrc/ only):
  - system: the double pendulum's evaluation (dp_*, the built-in sin and cos);
  - scheme: the Galerkin kernels (residual, Newton matrix, points, predictor, outputs);
  - LU: the small LU and its solves;
  - layers: everything else (the Newton layer's control, the evaluation loop, the step's
    safeguards, the driver, the binding).
"system + scheme + LU" is what the algorithm's arithmetic costs with no layer around it.

    python benchmarks/instructions_dp.py [--ours lobatto5:step:0.02973 ...] [--heyoka 1.78e-9 ...]
        [--gsl 3.16e-11 ...] [--out benchmarks/results/instructions_dp.md]
"""
import argparse
import datetime
import os
import platform
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from yardstick_profile import callgrind, functions, totals  # noqa: E402

T_RUN = 100.0
OURS = """
import sys
sys.path.insert(0, {here!r})
import symplectic as sp
import models as M
method, newton, h, N = sys.argv[1], sys.argv[2], float(sys.argv[3]), int(sys.argv[4])
sp.integrate(M.dp_system(), M.DP_Q0, M.DP_P0, h, N, method, newton=newton, store_every=N)
"""
HEYOKA = """
import sys
sys.path.insert(0, {here!r})
import models as M
from suite import heyoka_models as HM
hy = HM.load()
tol, T = float(sys.argv[1]), float(sys.argv[2])
ta = hy.taylor_adaptive(HM.dp_system(hy), list(M.DP_Q0) + list(M.DP_P0), tol=tol)
print(int(ta.propagate_until(T)[3]))
"""
# the settings of RESULTS.md section 8 at T = 100 s: its e_H <= 1e-6 (lobatto5, full Newton),
# 1e-10 (lobatto5, newton="step") and 1e-12 (lobatto6, newton="step") cells, lobatto7's 1e-10
# setting, and Simpson as section 9 times it against the yardstick; heyoka's tolerances of the
# 1e-6, 1e-10 and 1e-12 cells
DEFAULT_OURS = ("simpson:full:0.01", "lobatto5:full:0.0841", "lobatto5:step:0.02973",
                "lobatto6:step:0.02973", "lobatto7:step:0.05")
DEFAULT_HEYOKA = ("5.62e-6", "1.78e-9", "3.16e-12")
# GSL rk8pd's tolerances of the same cells (section 8: e_H <= 1e-6, 1e-10, 1e-12 at 100 s)
DEFAULT_GSL = ("5.62e-8", "3.16e-11", "5.62e-13")
SYSTEM = re.compile(r"^(dp_|sym_sincos|SYM_SINCOS)")
SCHEME = re.compile(r"^(residual_|jacobian_|form_points_|correct_|outputs_|predict_)")
LU = re.compile(r"^lu_small_")


def part(name):
    """system, scheme, LU or layers, from the function's name (file:function)."""
    fn = name.split(":", 1)[-1].strip()
    for label, pat in (("system", SYSTEM), ("scheme", SCHEME), ("LU", LU)):
        if pat.match(fn):
            return label
    return "layers"


def ours(tmp, env, method, newton, h):
    script = os.path.join(tmp, "ours.py")
    with open(script, "w") as f:
        f.write(OURS.format(here=HERE))
    N = int(round(T_RUN / h))
    runs = []
    for k in (1, 2):
        out = os.path.join(tmp, f"ours{k}.cg")
        runs.append(callgrind([sys.executable, script, method, newton, repr(h), str(k * N)], out, env,
                              ("--toggle-collect=sym_integrate",)))
    split = {}
    for sign, text in ((-1, runs[0]), (1, runs[1])):
        for ir, name in functions(text, "csrc/"):
            split[part(name)] = split.get(part(name), 0) + sign * ir
    per = {k: v / N for k, v in split.items()}
    per["all"] = (totals(runs[1])["Ir"] - totals(runs[0])["Ir"]) / N
    return N, per


def per_step(tmp, env, tag, cmd_of, steps_of, extra=()):
    """(steps of the T run, instructions a step): a peer's program cmd_of(k) run over k T,
    k = 1, 2, plainly for its step count (steps_of its stdout) and under callgrind."""
    counts, steps = [], []
    for k in (1, 2):
        cmd = cmd_of(k)
        steps.append(steps_of(subprocess.run(cmd, check=True, capture_output=True, text=True,
                                             env=env).stdout))
        counts.append(totals(callgrind(cmd, os.path.join(tmp, f"{tag}{k}.cg"), env, extra))["Ir"])
    return steps[0], (counts[1] - counts[0]) / (steps[1] - steps[0])


def heyoka(tmp, env, tol):
    script = os.path.join(tmp, "taylor_run.py")   # not heyoka.py: it would shadow the module
    with open(script, "w") as f:
        f.write(HEYOKA.format(here=HERE))
    return per_step(tmp, env, "hy", lambda k: [sys.executable, script, tol, repr(k * T_RUN)],
                    lambda out: int(out.split()[-1]), ("--toggle-collect=*propagate_until*",))


def header():
    """When, which commit, which tools: the lines above the table."""
    def out(cmd):
        try:
            return subprocess.run(cmd, capture_output=True, text=True, cwd=HERE).stdout.strip()
        except OSError:
            return "?"
    import heyoka
    return [f"Generated by `python benchmarks/instructions_dp.py` on "
            f"{datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC at symplectic commit "
            f"{out(['git', 'rev-parse', '--short', 'HEAD'])}; {out(['valgrind', '--version'])}, "
            f"heyoka {heyoka.__version__}, Python {platform.python_version()}, {platform.machine()}. "
            "Counts do not depend on the machine's load. Do not edit by hand: rerun the command.",
            "",
            f"Double pendulum (TOP), T = {T_RUN:g} s; instructions per step and per run of "
            f"{T_RUN:g} s. Ours: the settings of RESULTS.md section 8 (`store_every=N`); "
            "heyoka: `propagate_until` at each tolerance; GSL rk8pd: section 8's program, no "
            "trajectory. Counted inside the integration call alone (ours `sym_integrate`, "
            "heyoka's `propagate_until`), per step from the difference of a T and a 2T run. "
            "The parts of ours: the module docstring.",
            ""]


def gsl(tmp, env, tol):
    from compiled import gsl as G
    exe = G.build(tmp)
    if exe is None:
        return None
    return per_step(tmp, env, "gsl", lambda k: [exe, repr(k * T_RUN), tol, "1", "notrack"],
                    lambda out: int(out.split(",")[2]))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ours", nargs="*", default=list(DEFAULT_OURS), help="method:newton:h")
    ap.add_argument("--heyoka", nargs="*", default=list(DEFAULT_HEYOKA), help="tolerances")
    ap.add_argument("--gsl", nargs="*", default=list(DEFAULT_GSL), help="tolerances")
    ap.add_argument("--out", help="also write the table, with its header, to this file")
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="symplectic-instr-")
    env = dict(os.environ, PYTHONHASHSEED="0", OPENBLAS_NUM_THREADS="1")
    lines = header() + [
        "| who | setting | steps | per step: all | system | scheme | LU | layers | "
        "system + scheme + LU | per run (millions) | the same without layers |",
        "|---|---|---|---|---|---|---|---|---|---|---|"]
    print("\n".join(lines), flush=True)
    for spec in a.ours:
        method, newton, h = spec.split(":")
        N, per = ours(tmp, env, method, newton, float(h))
        core = per.get("system", 0) + per.get("scheme", 0) + per.get("LU", 0)
        lines.append(f"| ours | {method}, newton={newton!r}, h = {h} | {N} | {per['all']:.0f} | "
                     f"{per.get('system', 0):.0f} | {per.get('scheme', 0):.0f} | "
                     f"{per.get('LU', 0):.0f} | {per.get('layers', 0):.0f} | {core:.0f} | "
                     f"{per['all'] * N / 1e6:.1f} | {core * N / 1e6:.1f} |")
        print(lines[-1], flush=True)
    for tol in a.heyoka:
        steps, per = heyoka(tmp, env, tol)
        lines.append(f"| heyoka | tol = {tol} | {steps} | {per:.0f} | - | - | - | - | - | "
                     f"{per * steps / 1e6:.1f} | - |")
        print(lines[-1], flush=True)
    for tol in a.gsl:
        r = gsl(tmp, env, tol)
        if r is None:
            lines.append(f"| GSL rk8pd | tol = {tol} | not built (libgsl-dev) | | | | | | | | |")
        else:
            steps, per = r
            lines.append(f"| GSL rk8pd | tol = {tol} | {steps} | {per:.0f} | - | - | - | - | - | "
                         f"{per * steps / 1e6:.1f} | - |")
        print(lines[-1], flush=True)
    if a.out:
        with open(a.out, "w") as f:
            f.write("# Instructions per step: ours by part, heyoka and GSL rk8pd\n\n" + "\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
