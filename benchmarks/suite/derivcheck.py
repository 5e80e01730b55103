"""Cost of the first-use derivative check against a 1000-step integration.

    python benchmarks/bench_derivcheck.py [--repeats 21] [--steps 1000]

The double pendulum of benchmarks/models.py (TOP Section 3, q0 = (pi/4, pi/3),
p0 = 0, Simpson, h = 0.01) in every form with user-supplied derivatives:
plain Python callables with and without Hessians, the combined and the
vectorized callable, and a compiled C callback (skipped without a compiler).

Per repeat and form, interleaved round-robin: the check alone (exactly the
call integrate() makes, symplectic._derivcheck.ensure, on a fresh System),
an integration with check=False on another fresh System, and a first
integration with the check on a third (the total a user sees).  Reported:
medians over the repeats, the ratio check / integration, and the number of
callback calls the check makes (counted separately, once, for the Python
forms).  No assertions: this measures.
"""
import argparse
import datetime
import math
import os
import platform
import statistics
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import models as M  # noqa: E402
import symplectic as sp  # noqa: E402
from symplectic import _derivcheck  # noqa: E402

Q0 = np.array([math.pi / 4, math.pi / 3])
P0 = np.zeros(2)
H = 0.01


def counted_callables(hessians):
    """The plain-callables system with every callback counted."""
    calls = {"n": 0}
    sys_ = M.dp_callables(hessians)
    c = {k: v for k, v in sys_._callables.items() if callable(v)}
    c = {k: v for k, v in c.items() if k not in sys_._fd_used}

    def wrap(f):
        def g(*a):
            calls["n"] += 1
            return f(*a)
        return g

    kw = {k: wrap(v) for k, v in c.items()}
    return sp.System(2, kw.pop("mass"), kw.pop("potential"), **kw), calls


def counted_form(make):
    """A combined or vectorized system with its one callable counted."""
    calls = {"n": 0}
    base = make()
    key = "combined" if "combined" in base._callables else "vectorized"
    f = base._callables[key]

    def g(*a):
        calls["n"] += 1
        return f(*a)

    return getattr(sp.System, key)(2, g), calls


def forms():
    out = [("callables + Hessians", lambda: M.dp_callables(True)),
           ("callables, no Hessians", lambda: M.dp_callables(False)),
           ("combined", M.dp_combined),
           ("vectorized", M.dp_vectorized)]
    workdir = None
    if M.compiler() is not None:
        import tempfile
        workdir = tempfile.mkdtemp(prefix="symplectic-bench-")
        M.dp_cfunc(workdir)                              # compile once
        out.append(("compiled callback", lambda: M.dp_cfunc(workdir)))
    return out


def calls_of(name):
    if name.startswith("callables"):
        s, calls = counted_callables("no" not in name)
    elif name in ("combined", "vectorized"):
        s, calls = counted_form(M.dp_combined if name == "combined" else M.dp_vectorized)
    else:
        return None
    _derivcheck.ensure(s, Q0)
    return calls["n"]


def cpu_model():
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=21)
    ap.add_argument("--steps", type=int, default=1000)
    args = ap.parse_args()

    cases = forms()
    load0 = os.getloadavg()
    t_check = {n: [] for n, _ in cases}
    t_int = {n: [] for n, _ in cases}
    t_first = {n: [] for n, _ in cases}
    for _ in range(args.repeats):
        for name, make in cases:
            s = make()
            t = time.perf_counter()
            _derivcheck.ensure(s, Q0)
            t_check[name].append(time.perf_counter() - t)
            assert s._derivcheck_verdict == "passed"
            s = make()
            t = time.perf_counter()
            sp.integrate(s, Q0, P0, H, args.steps, check=False)
            t_int[name].append(time.perf_counter() - t)
            s = make()
            t = time.perf_counter()
            sp.integrate(s, Q0, P0, H, args.steps)
            t_first[name].append(time.perf_counter() - t)

    med = statistics.median
    print(f"# First-use derivative check vs a {args.steps}-step integration "
          f"(benchmarks/bench_derivcheck.py)\n")
    load1 = os.getloadavg()
    print(f"{datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC; {cpu_model()}, "
          f"{os.cpu_count()} CPUs, {platform.system()} {platform.machine()}; Python "
          f"{platform.python_version()}, NumPy {np.__version__}; median of {args.repeats} "
          f"repeats; 1-minute load average {load0[0]:.2f} before, {load1[0]:.2f} after\n")
    print("| form | check (ms) | integrate, check=False (ms) | check / integrate | "
          "first integrate, check on (ms) | callback calls of the check |")
    print("|---|---|---|---|---|---|")
    for name, _ in cases:
        c, i, f = med(t_check[name]), med(t_int[name]), med(t_first[name])
        k = calls_of(name)
        print(f"| {name} | {c * 1e3:.3f} | {i * 1e3:.2f} | {100 * c / i:.2f} % | {f * 1e3:.2f} | "
              f"{'-' if k is None else k} |")


if __name__ == "__main__":
    main()
