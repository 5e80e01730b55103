"""Command line: ``python -m symplectic`` (or ``symplectic``).

  reproduce [--out DIR] [--quick] [--progress] [--docs FILE]
                                    the papers' tables and figures, side by side
  run SYSTEM [options] --out FILE   integrate a built-in system, write .npz or .csv
                                    (--h, --steps or --t-span T0 TF, --t-eval T..,
                                    --store-every K, --progress)
  methods                           list the integration methods
  systems                           list the built-in systems and their parameters

``run --help`` shows every option with its default.  ``run ... --damping C
[C ...]`` adds viscous joint friction to the systems that have it (the
factory's ``damping=``); the output then also holds the work of the friction
and the summary line gives the energy balance (energy - work) instead of the
energy error.  ``--h`` may be negative
(integrates backward in time, as the API does); it must be finite and nonzero.

Exit status: 0 on success; 2 on a usage error -- anything wrong with the
command line, found before any integration starts (unknown command, system,
method or parameter, a value that does not parse or that the system refuses,
h = 0, a negative step count, initial vectors of the wrong length or not
finite, --p0 with --qdot0, an output name not ending in .npz or .csv); 1 on a
runtime failure (the integration fails, e.g. ``ConvergenceError``, its arrays
do not fit in memory, or the output cannot be written).  Every error is one
line on stderr starting with ``symplectic: error:``, never a traceback.
"""
import argparse
import inspect
import json
import math
import sys

import numpy as np

# Paper initial conditions used when --q0 / --p0 / --qdot0 are not given:
# (q0, qdot0); p0 = M(q0) qdot0.
DEFAULT_STATES = {
    "pendulum": ([math.pi / 2], [0.0]),                                   # FVCA
    "double_pendulum": ([math.pi / 4, math.pi / 3], [0.0, 0.0]),          # TOP Sec. 3
    "lagrange_top": ([0.0, math.pi / 3, 0.0], [9.2, 0.0, 252.0]),         # TOP Table 3
    "linear_double_pendulum": ([0.0, math.pi / 6], [0.0, 0.0]),           # AXIOMS Table 1
}

#: Default (q0, qdot0) of the constrained built-ins, projected onto the constraint
#: manifold of the given parameters (System.project) before integrating.
CONSTRAINED_DEFAULTS = {
    "pendulum_cartesian": ([0.8, -0.6], [0.0, 0.0]),
    "spherical_pendulum_cartesian": ([0.8, 0.0, -0.6], [0.0, 1.0, 0.0]),
    "four_bar": ([0.4, 0.6, 1.6], [8.0, 0.0, 0.0]),
}


#: The step and the step count of ``run`` without --t-span.
DEFAULT_H = 0.01
DEFAULT_STEPS = 1000

#: Exit status of a usage error and of a runtime failure.
EXIT_USAGE = 2
EXIT_FAILURE = 1


class CLIError(Exception):
    """A usage error (exit status 2), reported as one line."""


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        raise CLIError(message)


def _factories():
    from ._model import _registry
    from . import systems  # noqa: F401  (importing systems registers its factories)
    return _registry.factories()


def _parse_value(text):
    try:
        return json.loads(text)
    except ValueError:
        pass
    try:
        return float(text)
    except ValueError:
        raise CLIError(f"cannot parse parameter value {text!r} (a number or a JSON list)") from None


def _build_system(name, params, damping=None):
    factories = _factories()
    if name not in factories:
        raise CLIError(f"unknown system {name!r}; available: {', '.join(sorted(factories))}")
    factory = factories[name]
    allowed = list(inspect.signature(factory).parameters)
    kwargs = {}
    for item in params or []:
        if "=" not in item:
            raise CLIError(f"malformed parameter {item!r}: expected name=value")
        key, value = item.split("=", 1)
        key = key.strip()
        if key not in allowed:
            raise CLIError(f"unknown parameter {key!r} for {name}; parameters: {', '.join(allowed)}")
        kwargs[key] = _parse_value(value)
    if damping is not None:
        if "damping" not in allowed:
            raise CLIError(f"--damping: {name} has no damping (systems with it: "
                           f"{', '.join(k for k, f in factories.items() if 'damping' in inspect.signature(f).parameters)})")
        if "damping" in kwargs:
            raise CLIError("give --damping or --param damping=..., not both")
        kwargs["damping"] = damping[0] if len(damping) == 1 else list(damping)
    if "n" in kwargs:
        if not float(kwargs["n"]).is_integer():
            raise CLIError(f"n must be an integer, got {kwargs['n']}")
        kwargs["n"] = int(kwargs["n"])
    try:
        return factory(**kwargs)
    except (TypeError, ValueError) as exc:
        raise CLIError(f"bad parameters for {name}: {exc}") from None


def _vector(name, values, n):
    if values is None:
        return None
    a = np.array(values, dtype=float)
    if a.shape != (n,):
        raise CLIError(f"{name} needs {n} values for this system, got {len(values)}")
    if not np.all(np.isfinite(a)):
        raise CLIError(f"{name} values must be finite, got {' '.join(str(v) for v in values)}")
    return a


def cmd_run(args):
    import symplectic as sp
    system = _build_system(args.system, args.param, args.damping)
    n = system.n
    if args.t_span is None:                 # the defaults of --h and --steps
        args.h = DEFAULT_H if args.h is None else args.h
        args.steps = DEFAULT_STEPS if args.steps is None else args.steps
    elif args.h is None and args.steps is None:
        args.h = DEFAULT_H
    if args.h is not None and not (math.isfinite(args.h) and args.h != 0):
        raise CLIError(f"--h must be a finite nonzero number (negative integrates backward), "
                       f"got {args.h}")
    if args.steps is not None and args.steps < 0:
        raise CLIError(f"--steps must be >= 0, got {args.steps}")
    if args.store_every is not None and args.store_every < 1:
        raise CLIError(f"--store-every must be >= 1, got {args.store_every}")
    methods = list(sp.methods())
    if args.method not in methods:
        raise CLIError(f"unknown method {args.method!r}; available: {', '.join(methods)}")
    if not args.out.endswith((".npz", ".csv")):
        raise CLIError(f"--out must end in .npz or .csv, got {args.out!r}")
    q0 = _vector("--q0", args.q0, n)
    p0 = _vector("--p0", args.p0, n)
    qdot0 = _vector("--qdot0", args.qdot0, n)
    if p0 is not None and qdot0 is not None:
        raise CLIError("give --p0 or --qdot0, not both")
    default_q, default_qdot = {**DEFAULT_STATES, **CONSTRAINED_DEFAULTS}.get(args.system,
                                                                             (None, None))
    if q0 is None:
        q0 = np.array(default_q, float) if default_q is not None and len(default_q) == n else np.full(n, 0.3)
    if p0 is None:
        if qdot0 is None:
            qdot0 = (np.array(default_qdot, float)
                     if default_qdot is not None and len(default_qdot) == n else np.zeros(n))
        p0 = system.mass(q0) @ qdot0
    if system.n_constraints and args.q0 is None:
        try:      # the default state, moved onto the constraint manifold
            q0, p0 = system.project(q0, p0)
        except ValueError as exc:
            raise CLIError(f"the default state cannot be projected onto the constraints "
                           f"({str(exc).splitlines()[0]}); give --q0") from None
    try:
        traj = sp.integrate(system, q0, p0, args.h, args.steps, method=args.method,
                            t_span=args.t_span, t_eval=args.t_eval, store_every=args.store_every,
                            progress=args.progress)
    except (ValueError, TypeError) as exc:        # an input the API refuses: a usage error
        raise CLIError(str(exc).splitlines()[0]) from None
    out = args.out
    try:
        if out.endswith(".npz"):
            extra = ({} if traj.newton_iterations is None
                     else {"newton_iterations": traj.newton_iterations})
            if traj.force is not None:
                extra["work"] = traj.work
            if traj.multipliers is not None:
                extra["multipliers"] = traj.multipliers
            np.savez(out, t=traj.t, q=traj.q, p=traj.p, energy=traj.energy, method=args.method,
                     h=traj.h, system=args.system, params=json.dumps(_jsonable(system.params)),
                     **extra)
        elif out.endswith(".csv"):
            cols = ["t"] + [f"q{i}" for i in range(n)] + [f"p{i}" for i in range(n)] + ["energy"]
            data = np.column_stack([traj.t, traj.q, traj.p, traj.energy])
            if traj.force is not None:
                cols.append("work")
                data = np.column_stack([data, traj.work])
            np.savetxt(out, data, delimiter=",", header=",".join(cols), comments="", fmt="%.17g")
    except OSError as exc:
        raise OSError(f"cannot write {out!r}: {exc.strerror or exc}") from None
    scale = max(abs(traj.energy[0]), 1e-300)
    if traj.force is None:
        e = np.max(np.abs(traj.energy - traj.energy[0])) / scale
        what = f"max relative energy error {e:.3e}"
    else:
        e = sp.analysis.energy_balance(traj).max_error / scale
        what = (f"work of the forces {traj.work[-1]:.6g}; max relative error of "
                f"energy - work {e:.3e}")
    print(f"{args.system}: {traj.counts.steps} {args.method} steps of h = {traj.h:g}; {what}; "
          f"wrote {out}")


def _jsonable(params):
    if params is None:
        return None
    return {k: (v.tolist() if isinstance(v, np.ndarray) else v) for k, v in params.items()}


def cmd_methods():
    import symplectic as sp
    for name, info in sp.methods(details=True).items():
        kind = "symplectic" if info["symplectic"] else "not symplectic"
        print(f"{name:<10} order {info['order']}, {kind}\n    {info['doc']}")


def cmd_systems():
    for name, factory in _factories().items():
        sig = inspect.signature(factory)
        doc = inspect.getdoc(factory).split("\n\n")[0].replace("\n", " ")
        print(f"{name}{sig}\n    {doc}")


def _add_reproduce(sub):
    rep = sub.add_parser("reproduce", help="reproduce the papers' tables and figures",
                         description="Reproduce the papers' tables (printed next to the "
                                     "published values) and figures.")
    rep.add_argument("--out", default=None, metavar="DIR",
                     help="directory for the CSV tables and PNG figures (default: none: print "
                          "the tables, write no files)")
    rep.add_argument("--quick", action="store_true",
                     help="skip the 100- and 1000-period runs (default: off, the full run)")
    rep.add_argument("--progress", action="store_true",
                     help="a progress bar over the tasks with the time left, instead of a line "
                          "per task (default: off)")
    rep.add_argument("--docs", default=None, metavar="FILE",
                     help="also write the tables as a Markdown page headed by the run's date, "
                          "commit and machine, e.g. docs/results.md (default: none)")


def _add_run(sub):
    run = sub.add_parser("run", help="integrate a built-in system and write t, q, p, energy",
                         description="Integrate a built-in system and write t, q, p and the "
                                     "energy to a .npz or .csv file.")
    run.add_argument("system", help="built-in system: " + ", ".join(_factories())
                     + " (parameters: symplectic systems)")
    run.add_argument("--method", default="simpson",
                     help="integration method, see: symplectic methods (default: %(default)s)")
    run.add_argument("--h", type=float, default=None,
                     help="step size in s, finite and nonzero; a negative step integrates "
                          "backward in time; with --t-span the largest step, adjusted down to "
                          f"divide the span (default: {DEFAULT_H})")
    run.add_argument("--steps", type=int, default=None,
                     help=f"number of steps, >= 0; with --t-span as many as --h needs "
                          f"(default: {DEFAULT_STEPS})")
    run.add_argument("--t-span", type=float, nargs=2, metavar=("T0", "TF"), default=None,
                     help="integrate from T0 to TF instead of --steps; the last time is TF "
                          "exactly (default: none: --steps steps from 0)")
    run.add_argument("--t-eval", type=float, nargs="+", metavar="T", default=None,
                     help="write the states at these times (sorted, inside the interval; from "
                          "the dense output) instead of every step (default: every step)")
    run.add_argument("--store-every", type=int, metavar="K", default=None,
                     help="write every K-th step and the last one (default: every step)")
    run.add_argument("--progress", action="store_true",
                     help="show a progress bar with the time left on stderr (default: off)")
    run.add_argument("--param", action="append", metavar="NAME=VALUE",
                     help="system parameter (repeatable), e.g. --param m1=2 or --param "
                          "'m=[1,2,3]' (default: the system's defaults, shown by: symplectic "
                          "systems)")
    run.add_argument("--q0", type=float, nargs="+", metavar="Q",
                     help="initial coordinates (default: the paper's initial state for "
                          + ", ".join(DEFAULT_STATES) + "; for the constrained systems "
                          + ", ".join(CONSTRAINED_DEFAULTS) + " a state moved onto their "
                          "constraints (System.project); 0.3 for every coordinate otherwise)")
    run.add_argument("--p0", type=float, nargs="+", metavar="P",
                     help="initial momenta; exclusive with --qdot0 (default: M(q0) qdot0)")
    run.add_argument("--qdot0", type=float, nargs="+", metavar="QDOT",
                     help="initial velocities, p0 = M(q0) qdot0 (default: the paper's initial "
                          "velocities for the systems above, zero otherwise)")
    run.add_argument("--damping", type=float, nargs="+", metavar="C",
                     help="viscous joint friction (N m s/rad): one value for every joint or "
                          "one per joint (pendulum, double_pendulum, pendulum_chain; "
                          "lagrange_top: friction at the pivot); the output then holds the "
                          "work too (default: none, or --param damping=...)")
    run.add_argument("--out", required=True, metavar="FILE",
                     help="output file, .npz or .csv (required, no default)")


def _parser():
    parser = _Parser(prog="symplectic", description="Symplectic variational integrators.")
    sub = parser.add_subparsers(dest="command", required=True)
    _add_reproduce(sub)
    _add_run(sub)
    sub.add_parser("methods", help="list the integration methods")
    sub.add_parser("systems", help="list the built-in systems")
    return parser


def main(argv=None):
    parser = _parser()
    try:
        args = parser.parse_args(argv)
        if args.command == "reproduce":
            from . import reproduce
            reproduce.run(out=args.out, quick=args.quick,
                          progress=True if args.progress else None, docs=args.docs)
        elif args.command == "run":
            cmd_run(args)
        elif args.command == "methods":
            cmd_methods()
        elif args.command == "systems":
            cmd_systems()
    except CLIError as exc:
        print(f"symplectic: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except (ValueError, TypeError, ImportError, OSError, RuntimeError, MemoryError) as exc:
        msg = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        print(f"symplectic: error: {msg}", file=sys.stderr)
        return EXIT_FAILURE
    return 0


if __name__ == "__main__":
    sys.exit(main())
