"""The symplectic benchmark suite: everything side by side, in one run.

    python benchmarks/run.py [--quick] [--out DIR] [--results-md FILE] [--only SECTIONS]

Sections (numbers in the CSVs of the out directory, the summary in RESULTS.md):

1. work-precision on the TOP paper's double pendulum (100 s): time to reach
   e_H = max|H - H0|/|H0| <= 1e-6, 1e-8, 1e-10 for the built-in C methods
   (cheapest step h = T/N on a geometric grid of N) against SciPy's solve_ivp
   (DOP853, RK45, Radau; rtol = atol on a geometric grid), SUNDIALS CVODE
   (scikit-sundae, if installed) and GSL rk8pd (compiled C, if libgsl is
   there); final-state error against a tight reference;
2. per-step cost of the built-in double pendulum for each method at h = 0.1, 0.01;
3. the long-horizon story: e_H and cost at 100, 1000, 10^4 s for fixed h
   (Simpson, Lobatto) and fixed tolerance (DOP853, GSL rk8pd);
4. the double pendulum as Python callables / vectorized / combined / compiled
   callback against the built-in system;
5. the n-link chain, n = 2 ... 64, full Newton and chord Newton;
6. an ensemble of double-pendulum initial conditions on 1 and 2 threads;
7. work-precision on the pendulum and the Lagrange top;
8. the double pendulum against the strongest peers (heyoka.py, GSL rk8pd, SciPy DOP853,
   SUNDIALS CVODE) at horizons 100 ... 10^5 s and e_H <= 1e-6 ... 1e-12;
9. per-step cost against a hand-written C Simpson step (the yardstick in
   ../shared/bench/limit/, compiled at run time; skipped when absent);
10. the n-link chain and an arm-like chain (non-uniform masses and lengths), n = 4 ... 128,
   against GSL rk8pd with an LU and with an articulated-body right-hand side, MuJoCo's RK4 and
   heyoka.py (Lagrangian helper);
11-26. the focused sections, one module each (suite/KEY.py, listed in FOCUSED below): the forms
   of force=, systems from SymPy, constraints, the Integrator loop, progress/events/t_eval,
   store_every's memory, the top's two forms, the linear closed form, the derivative check,
   the plausibility rule, the branch rule, the cost of tangent=True, stiff oscillations
   (the Fermi-Pasta-Ulam problem, a stiff spring, Gauss against Lobatto per step) and
   optimal control (the pendulum swing-up against backward Euler and the midpoint rule), its
   defaults, and rigid-body trees from URDF (the C built-in "tree" against SymPy).

Timing: wall-clock time (time.perf_counter) of the integration call alone
(energies and errors are computed outside the timed region), median of
repeats that are interleaved round-robin between the configurations being
compared, so that slow phases of a noisy shared machine hit all of them.  CPU
time (time.process_time) is recorded next to it in the CSVs.  The GSL programs
time themselves (CLOCK_MONOTONIC, same definition).
"""
import argparse
import datetime
import os
import shutil
import sys
import tempfile
import time

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

if __package__ in (None, ""):                   # `python benchmarks/suite`
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    __package__ = "suite"                       # noqa: A001

from .common import HERE, LoadMeter, load_module, machine_info, say, write_csv  # noqa: E402
from .config import FULL, QUICK  # noqa: E402
from . import results_md  # noqa: E402

# Sections 11-26, in order: (key = the module suite/KEY.py, whose run_section(cfg, ctx) returns the
# Markdown of the section, title).
FOCUSED = (
    ("forces", "Forces: cost per step of each `force=` form"),
    ("symbolic", "Systems from SymPy: cost per step"),
    ("constraints", "Constrained schemes: cost per step"),
    ("integrator", "A closed loop of 100 steps: `Integrator.step()` against `sp.step`"),
    ("progress", "`progress=True`, events and `t_eval`: what they cost"),
    ("store_every", "`store_every`: the memory of a thinned run"),
    ("top_forms", "The Lagrange top in ZXZ Euler angles and in a unit quaternion"),
    ("closed_form", "The linear closed form against Newton"),
    ("derivcheck", "The first-use derivative check: what it costs"),
    ("plausibility", "The plausibility rule: genuine steps against false roots"),
    ("branch", "The branch rule: what it catches, what it costs"),
    ("tangent", "`tangent=True`: the cost of the exact tangent per step"),
    ("stiff", "Stiff oscillations: the Fermi–Pasta–Ulam problem and a stiff spring"),
    ("control", "Optimal control: the pendulum swing-up against collocation baselines"),
    ("control_defaults", "Optimal control's defaults: the polish, the miss, without ipyopt, "
                         "minimum time"),
    ("tree", "Rigid-body trees: the C built-in against the same Lagrangian from SymPy"),
)
GROUPS = {"classic": ("classic",), "peers": ("peers_dp", "yardstick", "peers_chain"),
          "focused": tuple(k for k, _ in FOCUSED)}
KEYS = ("classic", "peers_dp", "yardstick", "peers_chain") + GROUPS["focused"]


def parse(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="coarse grids and few repeats (a few minutes)")
    ap.add_argument("--out", default=None, help="output directory (default benchmarks/results, "
                    "or benchmarks/results-quick with --quick)")
    ap.add_argument("--results-md", default=None, help="where to write the summary (default "
                    "benchmarks/RESULTS.md for a full run into the default directory, else OUT/RESULTS.md)")
    ap.add_argument("--only", default=None, help="comma-separated sections to run: classic (1-7), "
                    "peers (8-10), peers_dp (8), yardstick (9), peers_chain (10), focused (11-26), "
                    + ", ".join(f"{k} ({n})" for n, (k, _) in enumerate(FOCUSED, 11))
                    + "; default all. RESULTS.md keeps the recorded text of the sections not run")
    args = ap.parse_args(argv)
    keys = KEYS
    if args.only:
        keys = []
        for word in args.only.split(","):
            if word not in GROUPS and word not in KEYS:
                ap.error(f"--only: unknown section {word!r} (choose from {', '.join(list(GROUPS) + list(KEYS[1:]))})")
            keys += [k for k in GROUPS.get(word, (word,)) if k not in keys]
    return args, keys


def context(tmp):
    """What is installed: scikit-sundae, GSL (built into tmp), heyoka."""
    ctx = dict(tmp=tmp, sksundae=False, gsl_exe=None, gsl=None)
    try:
        import sksundae  # noqa: F401
        ctx["sksundae"] = True
    except ImportError:
        say("scikit-sundae is not installed: no SUNDIALS comparison (pip install scikit-sundae)")
    gslmod = load_module("bench_gsl", os.path.join(HERE, "compiled", "gsl.py"))
    if gslmod is not None:
        ctx["gsl"] = gslmod
        ctx["gsl_exe"] = gslmod.build(tmp)
        if ctx["gsl_exe"] is None:
            say("GSL rk8pd could not be built (apt-get install libgsl-dev): no GSL comparison")
    from . import heyoka_models
    ctx["heyoka"] = heyoka_models.load()
    if ctx["heyoka"] is None:
        say("heyoka is not installed: no heyoka comparison (pip install heyoka)")
    return ctx


def timed_section(fn, *a, seconds=None):
    t0 = time.perf_counter()
    out_ = fn(*a)
    dt = time.perf_counter() - t0
    say(f"  [{fn.__name__}: {dt:.1f} s]")
    if seconds is not None:
        seconds[fn.__name__] = dt
    return out_


def run_classic(cfg, ctx):
    from .chain import section_chain
    from .ensemble import section_ensemble
    from .long_horizon import section_horizon
    from .per_step import section_perstep
    from .python_forms import section_forms
    from .work_precision import section_dp, section_small
    s = {}
    R = dict(dp=timed_section(section_dp, cfg, ctx, seconds=s))
    R["perstep"] = timed_section(section_perstep, cfg, seconds=s)
    R["horizon"] = timed_section(section_horizon, cfg, R["dp"], ctx, seconds=s)
    R["forms"] = timed_section(section_forms, cfg, ctx, seconds=s)
    R["chain"] = timed_section(section_chain, cfg, seconds=s)
    R["ens"] = timed_section(section_ensemble, cfg, seconds=s)
    R["small"] = timed_section(section_small, cfg, ctx, seconds=s)
    R["seconds"] = {k: s[f"section_{k}"] for k in ("dp", "perstep", "horizon", "forms", "chain", "small")}
    R["seconds"]["ens"] = s["section_ensemble"]
    return R


def write_classic_csv(out, R):
    small = R["small"]
    pts = R["dp"]["points"] + small["pendulum"]["points"] + small["lagrange_top"]["points"]
    write_csv(os.path.join(out, "work_precision.csv"), pts,
              ["problem", "solver", "label", "family", "param", "h", "tol", "steps", "nfev", "newton",
               "wall", "cpu", "e_H", "err_final", "status"])
    trows = R["dp"]["rows"] + small["pendulum"]["rows"] + small["lagrange_top"]["rows"]
    write_csv(os.path.join(out, "targets.csv"), trows,
              ["problem", "target", "solver", "label", "reached", "param", "h", "tol", "steps", "nfev",
               "newton", "e_H", "err_final", "wall", "wall_min", "wall_max", "cpu", "samples", "note"])
    write_csv(os.path.join(out, "per_step.csv"), R["perstep"])
    write_csv(os.path.join(out, "long_horizon.csv"), R["horizon"],
              ["hold", "solver", "label", "knob", "T", "steps", "e_H", "wall", "wall_min", "wall_max", "cpu",
               "samples"])
    write_csv(os.path.join(out, "python_forms.csv"), R["forms"])
    write_csv(os.path.join(out, "chain.csv"), R["chain"])
    write_csv(os.path.join(out, "ensemble.csv"), [R["ens"]])


def run_peers(keys, cfg, ctx, out, md, info, stamp):
    """Sections 8-10, each written into RESULTS.md as soon as it is done (its own block, with its
    own machine line)."""
    import importlib
    rel = os.path.relpath(out, os.path.dirname(os.path.abspath(md)))
    for key in ("peers_dp", "yardstick", "peers_chain"):
        if key in keys:
            mod = importlib.import_module(f".{key}", __package__)
            block = timed_section(mod.run_section, cfg, ctx, out, rel, info, dict(stamp, meter=LoadMeter()))
            results_md.update(md, None, {key: block})


def run_focused(keys, cfg, ctx, md, info, stamp):
    """Sections 11-26, each written into RESULTS.md as soon as it is done."""
    import importlib
    from .report_peers import stamp_lines
    for number, (key, title) in enumerate(FOCUSED, 11):
        if key in keys:
            say(f"== {number}. {title}")
            meter = LoadMeter()
            body = importlib.import_module(f".{key}", __package__).run_section(cfg, ctx)
            head = [f"## {number}. {title}\n"] + stamp_lines(info, dict(stamp, meter=meter), "this section")
            say(f"  [{key}: {meter.stop()['elapsed']:.1f} s]")
            results_md.update(md, None, {key: "\n".join(head) + "\n" + body})


def finish_classic(cfg, info, meta, meter, R, out, md):
    """CSVs, PNGs and the text of sections 1-7 in RESULTS.md (the later sections' blocks kept)."""
    from .plots import plot
    from .report import classic_report
    rel = os.path.relpath(out, os.path.dirname(os.path.abspath(md)))
    write_classic_csv(out, R)
    pngs = plot(out, R["dp"], R["small"], R["horizon"])
    meta.update(meter.stop())
    results_md.update(md, classic_report(cfg, info, meta, R, rel, pngs))


def paths(args):
    out = os.path.abspath(args.out or os.path.join(HERE, "results-quick" if args.quick else "results"))
    default_out = not args.quick and args.out is None
    md = args.results_md or (os.path.join(HERE, "RESULTS.md") if default_out
                             else os.path.join(out, "RESULTS.md"))
    return out, md


def main(argv=None):
    args, keys = parse(argv)
    cfg = QUICK if args.quick else FULL
    out, md = paths(args)
    os.makedirs(out, exist_ok=True)
    meter = LoadMeter()
    command = ("python benchmarks/run.py" + (" --quick" if args.quick else "")
               + (f" --out {args.out}" if args.out else "") + (f" --only {args.only}" if args.only else ""))
    meta = dict(command=command, date=datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"))
    info = machine_info(("scipy", "sksundae", "matplotlib", "heyoka"))
    say(f"machine: {info['model']}, {info['cpus']} CPUs; {meta['date']}; out: {out}")
    tmp = tempfile.mkdtemp(prefix="symplectic-bench-")
    try:
        ctx = dict(context(tmp), out=out)
        if "classic" in keys:
            finish_classic(cfg, info, dict(meta), meter, run_classic(cfg, ctx), out, md)
        run_peers(keys, cfg, ctx, out, md, info, meta)
        run_focused(keys, cfg, ctx, md, info, meta)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    say(f"done in {time.perf_counter() - meter.t0:.0f} s: {md}, {out}")


if __name__ == "__main__":
    main()
