"""The runs whose arrays tests/data/unforced_base.npz holds, as computed by the
build before forces existed (commit 202c6c9; regenerated once since, when the
built-in systems with several angles took their sines and cosines from
csrc/core/sym_sincos.h instead of libm: the double pendulum's and the chain's arrays
then moved by at most 8.5e-16 and 9.7e-16 relative, three Lobatto-5 steps took
one Newton iteration more, and the other three cases stayed bitwise
equal; and again when Newton's stopping rule took 1e-3 rtol and the final
correction (benchmarks/NOTES.md section 1): the arrays moved by at most 2.3e-11
relative (the Lagrange top; the double pendulum 1.2e-12, the chain 1.0e-12, the
Python double pendulum 1.8e-12, the linear system 1.2e-15), the iterations of a
run by -2 ... +65): every method on a built-in
double pendulum, the Lagrange top, a 5-link chain, a Python-callable double
pendulum and a linear system on the Newton path, plus one step of each.
The initial states use Python's math (libm), not NumPy's ufuncs, whose last
bit differs between NumPy versions (SIMD kernels): the comparison must not
depend on the NumPy the tests run with.
``force=None`` must reproduce them bitwise (tests/model/test_forces.py).

Regenerate (only with a build whose unforced path is trusted on the path):

    PYTHONPATH=/path/to/base/build python tests/support/unforced_cases.py tests/data/unforced_base.npz
"""
import math
import inspect
import platform
import sys

import numpy as np


def cases(sp):
    from support.models import dp_callables
    top = sp.systems.lagrange_top()
    tq0 = np.array([0.0, math.pi / 3, 0.0])
    return [
        ("double_pendulum", sp.systems.double_pendulum(), [math.pi / 4, math.pi / 3], [0.0, 0.0],
         0.01, 200, {}),
        ("top", top, tq0, top.mass(tq0) @ np.array([9.2, 0.0, 252.0]), 1.8472390 / 80, 80, {}),
        ("chain5", sp.systems.pendulum_chain(5),
         [0.4 * math.sin(1.3 * k) for k in range(5)], np.zeros(5),
         0.02, 100, {}),
        ("callables", sp.System(2, **dp_callables()), [0.6, -0.4], [0.3, 0.5], 0.02, 60, {}),
        ("linear_newton", sp.systems.linear_double_pendulum(), [0.0, math.pi / 6], [0.0, 0.0],
         0.025, 80, dict(closed_form=False)),
    ]


def runs(sp, **extra):
    """{key: array} of every case and method (integrate and one step), with full Newton, the
    default when the baseline was saved (newton="auto" takes the decoupled matrix
    from 16 unknowns on: chain5 with lobatto5)."""
    out = {}
    for name, S, q0, p0, h, n, kw in cases(sp):
        for m in sp.methods():
            full = {} if m == "rk4" else {"newton": "full"}
            tr = sp.integrate(S, q0, p0, h, n, m, **kw, **full, **extra)
            out[f"{name}|{m}|q"] = tr.q
            out[f"{name}|{m}|p"] = tr.p
            out[f"{name}|{m}|it"] = tr.newton_iterations
            one = full if "newton" in inspect.signature(sp.step).parameters else {}   # older builds
            q1, p1 = sp.step(S, q0, p0, h, m, **kw, **one, **extra)
            out[f"{name}|{m}|step"] = np.concatenate([q1, p1])
    return out


def platform_tag():
    return f"{platform.machine()}|{platform.libc_ver()}|{sys.version_info[:2]}"


if __name__ == "__main__":
    import os
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import symplectic as sp
    data = runs(sp)
    np.savez_compressed(sys.argv[1], platform=np.array(platform_tag()), **data)
    print(f"saved {len(data)} arrays from {sp.__file__}")
