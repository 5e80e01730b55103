"""A closed loop of 100 steps: ``sp.Integrator.step()`` against ``sp.step``, in one run.

    python benchmarks/bench_integrator.py [--rounds 21] [--out benchmarks/RESULTS_integrator.md]

A sampled controller advances its plant one control period at a time.  With ``sp.step`` every
call checks its inputs, resolves the method and options and builds a C workspace; an
``sp.Integrator`` does that once and keeps the workspace (and the predictor history) across
its ``step()`` calls, whose states are bitwise those of one ``sp.integrate`` call (checked
here; a loop of ``sp.step`` starts every step's Newton from a Taylor predictor instead, and
agrees with them to the Newton tolerance: the largest difference is reported).  Each round times, interleaved, a loop of 100 ``sp.step`` calls and a loop
of 100 ``Integrator.step()`` calls (the Integrator made inside the timed region), for the
built-in double pendulum (h = 0.01) with Simpson and lobatto5 and the 8-link chain with Simpson;
the table gives the medians over the rounds and the median of the rounds' paired ratios.  A
third column times 100 steps as one ``sp.integrate`` call, the floor of the per-step cost.
"""
import argparse
import datetime
import os
import platform
import statistics
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

import symplectic as sp  # noqa: E402

N = 100


def cases():
    dp = sp.systems.double_pendulum()
    chain = sp.systems.pendulum_chain(8)
    q8 = 0.5 * np.sin(1.3 * np.arange(8))
    return [("double pendulum, simpson", dp, np.array([1.0, 0.5]), np.zeros(2), "simpson"),
            ("double pendulum, lobatto5", dp, np.array([1.0, 0.5]), np.zeros(2), "lobatto5"),
            ("8-link chain, simpson", chain, q8, np.zeros(8), "simpson")]


def loop_step(system, q0, p0, method):
    q, p = q0, p0
    for _ in range(N):
        q, p = sp.step(system, q, p, 0.01, method)
    return q


def loop_integrator(system, q0, p0, method):
    it = sp.Integrator(system, 0.01, q0, p0, method=method)
    for _ in range(N):
        q, _p = it.step()
    return q


def one_call(system, q0, p0, method):
    return sp.integrate(system, q0, p0, 0.01, N, method).q[-1]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=21)
    ap.add_argument("--out", default=os.path.join(HERE, "RESULTS_integrator.md"))
    args = ap.parse_args(argv)
    fns = (loop_step, loop_integrator, one_call)
    rows = []
    for name, system, q0, p0, method in cases():
        ends = [f(system, q0, p0, method) for f in fns]            # warm-up, and the check
        same = np.array_equal(ends[1], ends[2])
        diff = float(np.max(np.abs(ends[0] - ends[1])))
        times = {f.__name__: [] for f in fns}
        for r in range(args.rounds):
            for f in (fns if r % 2 == 0 else fns[::-1]):
                t = time.perf_counter()
                f(system, q0, p0, method)
                times[f.__name__].append(time.perf_counter() - t)
        a, b, c = (times[f.__name__] for f in fns)
        rows.append((name, statistics.median(a), statistics.median(b), statistics.median(c),
                     statistics.median(x / y for x, y in zip(a, b)), same, diff))
        print(f"{name}: sp.step {rows[-1][1] * 1e3:.2f} ms, Integrator.step "
              f"{rows[-1][2] * 1e3:.2f} ms, ratio {rows[-1][4]:.2f}", file=sys.stderr)
    lines = [
        "# A closed loop of 100 steps: Integrator.step() against sp.step "
        "(benchmarks/bench_integrator.py)", "",
        f"Generated {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M UTC} by "
        f"`python benchmarks/bench_integrator.py --rounds {args.rounds}`; machine: "
        f"{platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, Python "
        f"{platform.python_version()}, NumPy {np.__version__}.", "",
        "h = 0.01; wall time of the whole loop (the Integrator made inside it), median over "
        "interleaved rounds; the ratio is the median of the rounds' paired ratios.", "",
        "| case | 100 × sp.step (ms) | 100 × Integrator.step() (ms) | one integrate call, 100 "
        "steps (ms) | sp.step / Integrator.step (paired) | Integrator = integrate | largest q "
        "difference, sp.step loop |",
        "|---|---|---|---|---|---|---|"]
    for name, a, b, c, ratio, same, diff in rows:
        lines.append(f"| {name} | {a * 1e3:.3f} | {b * 1e3:.3f} | {c * 1e3:.3f} | {ratio:.2f} | "
                     f"{'bitwise' if same else 'DIFFERENT'} | {diff:.1e} |")
    with open(args.out, "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
