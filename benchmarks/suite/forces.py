"""Section 11: the cost per step of a force (issue 16) against the unforced run.

The built-in double pendulum (C, q0 = (pi/4, pi/3), p0 = 0, h = 0.01) with each form of force=:

* unforced (force=None, the baseline of every ratio);
* built-in linear damping (``double_pendulum(damping=(0.3, 0.2))``, -D qdot evaluated in C, with
  its Jacobian);
* a held (zero-order-hold) array of shape (n_steps, 2), in C;
* a compiled callback (benchmarks/compiled/cfunc_force.c through forces.from_cfunc, with its
  Jacobian; skipped without a C compiler);
* a Python callable f(t, q, qdot) = -D qdot + (A cos Wt, 0) with its Jacobian (force_jac), and the
  same without (the core's central differences: 4n extra calls per point whenever Newton needs the
  Jacobian).

Every configuration of a method runs once per round, interleaved; reported are the medians of
the time per step, the median of the rounds' paired ratios to the unforced run, and the mean
Newton iterations per step.
"""
import ctypes
import math
import os
import subprocess

import numpy as np

import models as M
import symplectic as sp
from symplectic import forces

from .common import HERE, md_table, med, timed_rounds

Q0 = np.array([math.pi / 4, math.pi / 3])
P0 = np.zeros(2)
H = 0.01
C1, C2, A, W = 0.3, 0.2, 0.5, 1.3
D = np.array([[C1 + C2, -C2], [-C2, C2]])       # joint friction of damping=(C1, C2)
ZERO = np.zeros((2, 2))


def py_force(t, q, v):
    return np.array([A * math.cos(W * t), 0.0]) - D @ v


def py_jac(t, q, v):
    return ZERO, -D


def compiled_force(tmp):
    """forces.from_cfunc of benchmarks/compiled/cfunc_force.c (the same F), or None."""
    cc = M.compiler()
    if cc is None:
        return None
    lib = os.path.join(tmp, "libforce.so")
    subprocess.run([cc, "-std=c99", "-O2", "-shared", "-fPIC",
                    os.path.join(HERE, "compiled", "cfunc_force.c"), "-o", lib, "-lm"], check=True)
    so = ctypes.CDLL(lib)
    return forces.from_cfunc(so.dp_damped_driven, np.array([C1, C2, A, W]), n=2, jacobian=True,
                             depends_on="v", keepalive=so)


def configurations(n_steps, tmp):
    plain = sp.systems.double_pendulum()
    hold = np.column_stack([A * np.cos(W * H * np.arange(n_steps)), np.zeros(n_steps)])
    out = [("unforced", plain, {}),
           ("built-in damping (C)", sp.systems.double_pendulum(damping=(C1, C2)), {}),
           ("held array (C)", plain, dict(force=hold))]
    cf = compiled_force(tmp)
    if cf is not None:
        out.append(("compiled callback + Jacobian", plain, dict(force=cf)))
    out += [("Python callable + force_jac", plain, dict(force=py_force, force_jac=py_jac)),
            ("Python callable, differences", plain, dict(force=py_force))]
    return out


def run_section(cfg, ctx):
    N = cfg["forces_steps"]
    confs = configurations(N, ctx["tmp"])
    rows = []
    for m in cfg["forces_methods"]:
        fns = {name: (lambda S=S, kw=kw, m=m: sp.integrate(S, Q0, P0, H, N, m, **kw)) for name, S, kw in confs}
        iters = {name: float(np.mean(fn().newton_iterations)) for name, fn in fns.items()}   # and warm-up
        t, paired = timed_rounds(fns, cfg["forces_rounds"])
        rows += [[m, name, f"{1e6 * t[name]['wall'] / N:.2f}", f"{med(paired[name]):.2f}", f"{iters[name]:.2f}"]
                 for name in fns]
    return "\n".join([
        f"The built-in double pendulum (m1 = m2 = l1 = l2 = 1, g = 9.81), q0 = (π/4, π/3), p0 = 0, h = {H}, "
        f"{N} steps, median of {cfg['forces_rounds']} interleaved rounds. The force in every forced row: joint "
        f"friction F = −D q̇ with D = [[{C1 + C2:g}, −{C2:g}], [−{C2:g}, {C2:g}]] (`damping=({C1}, {C2})`), plus "
        f"a pivot drive {A} cos({W} t) in the callable and compiled rows and a held array of that drive in "
        "the held row. The compiled callback is `benchmarks/compiled/cfunc_force.c`, built with `cc -std=c99 "
        "-O2`. The ratio is the median of the rounds' paired ratios to the unforced run of the same method.\n",
        md_table(["method", "force", "µs / step", "ratio to unforced", "Newton iterations / step"], rows)]) + "\n"
