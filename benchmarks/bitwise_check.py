"""Bitwise comparison of trajectories between two builds of the C core.

    PYTHONPATH=/path/to/old/build python benchmarks/bitwise_check.py save OLD.npz
    python benchmarks/bitwise_check.py compare OLD.npz

``save`` integrates every built-in system (and the SymPy cart pendulum of
tests/support/models_cart.py) with every method, predictor on/off, full, chord and per-step
Newton, at the papers' step sizes and at large ones, and stores t, q, p,
q_mid, the Newton iteration counts and the failure (step, reason) of runs that
raise.  ``compare`` repeats the runs with the build on the path and reports
every run whose arrays are not bitwise equal (or whose outcome changed).
"""
import math
import os
import sys
import warnings

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tests"))

import symplectic as sp   # noqa: E402

METHODS = ["midpoint", "lobatto2", "simpson", "lobatto3", "lobatto4", "lobatto5", "rk4"]


def cases():
    sy = sp.systems
    L = 9.81 / (2 * math.pi) ** 2
    top = sy.lagrange_top()
    tq0 = np.array([0.0, math.pi / 3, 0.0])
    out = [
        ("pendulum", sy.pendulum(), [math.pi / 2], [0.0], [0.0236, 0.1, 0.3, 0.44], 200),
        ("pendulum-3", sy.pendulum(), [3.0], [0.0], [0.05, 0.2, 0.6], 200),
        ("double_pendulum", sy.double_pendulum(1.0, 1.0, L, L, 9.81), [math.pi / 4, math.pi / 3],
         [0.0, 0.0], [0.01, 0.05, 0.1, 0.2], 200),
        ("lagrange_top", top, tq0, top.mass(tq0) @ np.array([9.2, 0.0, 252.0]),
         [1.8472390 / 160, 1.8472390 / 40, 1.8472390 / 20], 200),
        ("chain8", sy.pendulum_chain(8), 0.5 * np.sin(1.3 * np.arange(8)), np.zeros(8),
         [0.01, 0.05, 0.1], 100),
        ("chain64", sy.pendulum_chain(64), 0.5 * np.sin(1.3 * np.arange(64)), np.zeros(64),
         [0.01], 20),
        ("linear_dp", sy.linear_double_pendulum(), [0.0, math.pi / 6], [0.0, 0.0],
         [0.025, 0.1], 200),
        ("stiff", sy.linear(np.eye(2), np.diag([1.0, 1e4])), [1.0, 1.0], [0.0, 0.0],
         [0.01, 1.0], 100),
    ]
    try:
        from support.models_cart import cart_pendulum3
        out.append(("cart", cart_pendulum3(), [0, 0.3, -0.2, 0.1], [0, 0, 0, 0],
                    [0.01, 0.1, 0.2], 100))
    except ImportError:      # pragma: no cover
        pass
    return out


def run_all():
    res = {}
    warnings.simplefilter("ignore")
    for name, S, q0, p0, hs, n in cases():
        for h in hs:
            for m in METHODS:
                for pred in (True, False):
                    for newton in ("full", "chord", "step"):
                        if m == "rk4" and (not pred or newton != "full"):
                            continue
                        key = f"{name}|{m}|{h!r}|{pred}|{newton}"
                        kw = dict(closed_form=False) if S.builtin == "linear" else {}
                        if m != "rk4":      # (an explicit method takes no Newton options)
                            kw.update(predictor=pred, newton=newton)
                        try:
                            tr = sp.integrate(S, q0, p0, h, n, m, **kw)
                            fail = ""
                        except sp.ConvergenceError as e:
                            tr, fail = e.trajectory, f"step {e.step}: {e.reason}"
                        arrs = dict(t=tr.t, q=tr.q, p=tr.p, it=tr.newton_iterations)
                        if tr.q_mid is not None:
                            arrs["qm"] = tr.q_mid
                        res[key] = (arrs, fail)
    return res


def main():
    mode, path = sys.argv[1], sys.argv[2]
    res = run_all()
    if mode == "save":
        flat = {}
        for key, (arrs, fail) in res.items():
            for k, v in arrs.items():
                flat[f"{key}#{k}"] = v
            flat[f"{key}#fail"] = np.array(fail)
        np.savez_compressed(path, **flat)
        print(f"saved {len(res)} runs to {path} ({sp.__file__})")
        return
    old = np.load(path)
    diff, failchange = [], []
    for key, (arrs, fail) in res.items():
        ofail = str(old[f"{key}#fail"])
        same = all(f"{key}#{k}" in old.files and old[f"{key}#{k}"].shape == v.shape
                   and np.array_equal(old[f"{key}#{k}"], v) for k, v in arrs.items())
        if ofail != fail:
            failchange.append((key, ofail, fail, int(old[f"{key}#t"].shape[0]) - 1,
                               len(arrs["t"]) - 1))
        elif not same:
            diff.append(key)
    print(f"{len(res)} runs; {len(res) - len(diff) - len(failchange)} bitwise equal; "
          f"{len(diff)} differ with the same outcome; {len(failchange)} changed outcome")
    for key in diff:
        print("  DIFFERENT:", key)
    for key, of, nf, on, nn in failchange:
        print(f"  OUTCOME: {key}: was [{of or 'ok'}] ({on} steps), now [{nf or 'ok'}] ({nn} steps)")
    sys.exit(1 if diff else 0)


if __name__ == "__main__":
    main()
