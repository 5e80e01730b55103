"""Cost per step of a force (issue 16) against the unforced run.

    python benchmarks/bench_forces.py [--repeats 21] [--steps 2000] [--methods simpson,...]

The built-in double pendulum (C, q0 = (pi/4, pi/3), p0 = 0, h = 0.01) with
each form of force=:

* unforced (force=None: today's path, the baseline of every ratio);
* built-in linear damping (``double_pendulum(damping=(0.3, 0.2))``, -D qdot
  evaluated in C, with its Jacobian);
* a held (zero-order-hold) array of shape (n_steps, 2), in C;
* a compiled callback (benchmarks/cfunc_force.c through forces.from_cfunc,
  with its Jacobian; skipped without a C compiler);
* a Python callable f(t, q, qdot) = -D qdot + (A cos Wt, 0) with its
  Jacobian (force_jac), and the same without (the core's central
  differences: 4n extra calls per point whenever Newton needs the Jacobian).

Per repeat every configuration runs once, interleaved round-robin (the machine
may be shared: a slow period then slows all columns alike); reported are the
medians over the repeats of the time per step, the ratio to the unforced run
of the same method, and the mean Newton iterations per step.  No assertions:
this measures.
"""
import argparse
import datetime
import math
import os
import platform
import shutil
import statistics
import subprocess
import sysconfig
import tempfile
import time

import numpy as np

import symplectic as sp
from symplectic import forces

HERE = os.path.dirname(os.path.abspath(__file__))
Q0 = np.array([math.pi / 4, math.pi / 3])
P0 = np.zeros(2)
H = 0.01
C1, C2, A, W = 0.3, 0.2, 0.5, 1.3
D = np.array([[C1 + C2, -C2], [-C2, C2]])       # joint friction of damping=(C1, C2)


def py_force(t, q, v):
    return np.array([A * math.cos(W * t), 0.0]) - D @ v


ZERO = np.zeros((2, 2))


def py_jac(t, q, v):
    return ZERO, -D


def compiled_force():
    """forces.from_cfunc of benchmarks/cfunc_force.c (the same F), or None."""
    cc_var = sysconfig.get_config_var("CC")
    cc = (shutil.which(cc_var.split()[0]) if cc_var else None) or shutil.which("cc")
    if cc is None:
        return None
    import ctypes
    d = tempfile.mkdtemp(prefix="bench_forces_")
    lib = os.path.join(d, "libforce.so")
    subprocess.run([cc, "-std=c99", "-O2", "-shared", "-fPIC",
                    os.path.join(HERE, "cfunc_force.c"), "-o", lib, "-lm"], check=True)
    so = ctypes.CDLL(lib)
    par = np.array([C1, C2, A, W])
    return forces.from_cfunc(so.dp_damped_driven, par, n=2, jacobian=True, depends_on="v",
                             keepalive=so)


def configurations(n_steps):
    plain = sp.systems.double_pendulum()
    damped = sp.systems.double_pendulum(damping=(C1, C2))
    hold = np.column_stack([A * np.cos(W * H * np.arange(n_steps)), np.zeros(n_steps)])
    out = [("unforced", plain, {}),
           ("built-in damping (C)", damped, {}),
           ("held array (C)", plain, dict(force=hold))]
    cf = compiled_force()
    if cf is not None:
        out.append(("compiled callback + Jacobian", plain, dict(force=cf)))
    out += [("Python callable + force_jac", plain, dict(force=py_force, force_jac=py_jac)),
            ("Python callable, differences", plain, dict(force=py_force))]
    return out


def load():
    try:
        return os.getloadavg()[0]
    except OSError:
        return float("nan")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=21)
    ap.add_argument("--steps", type=int, default=2000)
    ap.add_argument("--methods", default="midpoint,simpson,lobatto4,rk4")
    a = ap.parse_args()
    methods = a.methods.split(",")
    confs = configurations(a.steps)
    runs = [(m, name, S, kw) for m in methods for name, S, kw in confs]
    times = {(m, name): [] for m, name, _, _ in runs}
    iters = {}
    for m, name, S, kw in runs:                               # warm-up (and the iterations)
        tr = sp.integrate(S, Q0, P0, H, a.steps, m, **kw)
        iters[m, name] = float(np.mean(tr.newton_iterations))
    la0 = load()
    for _ in range(a.repeats):
        for m, name, S, kw in runs:
            t0 = time.perf_counter()
            sp.integrate(S, Q0, P0, H, a.steps, m, **kw)
            times[m, name].append(time.perf_counter() - t0)
    la1 = load()
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    print(f"{now}; {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, "
          f"{platform.system()} {platform.machine()}; Python {platform.python_version()}, "
          f"NumPy {np.__version__}; {a.steps} steps, median of {a.repeats} repeats; "
          f"1-minute load average {la0:.2f} before, {la1:.2f} after\n")
    print("| method | force | us / step | ratio to unforced | Newton iterations / step |")
    print("|---|---|---|---|---|")
    for m in methods:
        base = statistics.median(times[m, "unforced"])
        for name, _, _ in confs:
            med = statistics.median(times[m, name])
            print(f"| {m} | {name} | {1e6 * med / a.steps:.2f} | {med / base:.2f} | "
                  f"{iters[m, name]:.2f} |")


if __name__ == "__main__":
    main()
