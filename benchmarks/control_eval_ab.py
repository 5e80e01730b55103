"""Tool: control's cost per NLP evaluation between two trees of the package, A/B.

    python benchmarks/control_eval_ab.py OLD_TREE NEW_TREE [--rounds 6]

Each tree is a checkout with its extension built in place (``python setup.py build_ext
--inplace``).  Each round runs, in a fresh process per tree (PYTHONPATH=TREE), the two problems
below and times one evaluation at a new point -- the constraints and the Jacobian's values, what an
interior point solver asks for at every trial point -- as the median of 30 points near the
default guess; the trees alternate round by round, and the ratio NEW / OLD is taken round by
round.  The problems: the crane of section 24 in minimum time with Simpson on 80 intervals (T free)
and the cart-pole of section 25 with lobatto5 on 40 intervals (T = 2 s).  Like ab_chain.py's,
its report belongs in the commit message of the change it measures.
"""
import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np

_CHILD = r"""
import sys, time
import numpy as np
sys.path.insert(0, {bench!r})
import symplectic as sp
from symplectic import control
from suite.control import CRANE_PROBLEM, crane
from suite.control_defaults import CARTPOLE_KW, cartpole


def per_eval(pb, reps=30):
    rng = np.random.default_rng(0)
    guess = pb.guess(None) if hasattr(pb, "guess") else pb._guess(None)
    ts = []
    for r in range(reps + 3):
        z = guess + 1e-3 * rng.standard_normal(len(guess))
        t = time.perf_counter()
        pb.constraints(z)
        pb.jac_values(z)
        ts.append(time.perf_counter() - t)
    return 1e3 * float(np.median(ts[3:]))


crane_pb = control.Problem(crane(), intervals=80, method="simpson", cost=control.duration(),
                           **CRANE_PROBLEM)
cart_pb = control.Problem(cartpole(), 2.0, 40, method="lobatto5", **CARTPOLE_KW)
print(per_eval(crane_pb), per_eval(cart_pb))
"""


def one(tree, bench):
    cache = os.path.join(tempfile.gettempdir(), "symplectic-ab-" + os.path.basename(tree))
    env = dict(os.environ, PYTHONPATH=tree, SYMPLECTIC_CACHE=cache)
    code = _CHILD.format(bench=bench)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                       cwd=tree, timeout=900)
    if r.returncode:
        raise RuntimeError(r.stderr[-2000:])
    return [float(x) for x in r.stdout.split()[-2:]]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("old")
    ap.add_argument("new")
    ap.add_argument("--rounds", type=int, default=6)
    args = ap.parse_args(argv)
    bench = os.path.dirname(os.path.abspath(__file__))
    old, new = [], []
    for r in range(args.rounds):
        first, second = (args.old, old), (args.new, new)
        for tree, into in ((first, second) if r % 2 == 0 else (second, first)):
            into.append(one(os.path.abspath(tree), bench))
    old, new = np.array(old), np.array(new)
    for j, name in enumerate(("crane, simpson, 80 (T free)", "cart-pole, lobatto5, 40")):
        print(f"{name}: old {np.median(old[:, j]):.3f} ms, new {np.median(new[:, j]):.3f} ms; "
              f"new / old round by round {np.round(new[:, j] / old[:, j], 2).tolist()}, median "
              f"{np.median(new[:, j] / old[:, j]):.2f}")


if __name__ == "__main__":
    main()
