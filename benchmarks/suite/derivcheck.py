"""Section 19: the cost of the first-use derivative check against a 1000-step integration.

The double pendulum of benchmarks/models.py (TOP Section 3, q0 = (pi/4, pi/3), p0 = 0, Simpson,
h = 0.01) in every form with user-supplied derivatives: plain Python callables with and without
Hessians, the combined and the vectorized callable, and a compiled C callback (skipped without a
compiler).  Per round and form, interleaved: the check alone (exactly the call integrate() makes,
symplectic._model._derivcheck.ensure, on a fresh System), an integration with check=False on another
fresh System, and a first integration with the check on a third (the total a user sees); each
System is made outside the timed call.  Reported: medians, the ratio check / integration, and the
number of callback calls the check makes (counted separately, once, for the Python forms).
"""
import math

import numpy as np

import models as M
import symplectic as sp
from symplectic._model import _derivcheck

from .common import clock, interleave, md_table, summarize

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


def forms(tmp):
    out = [("callables + Hessians", lambda: M.dp_callables(True)),
           ("callables, no Hessians", lambda: M.dp_callables(False)),
           ("combined", M.dp_combined),
           ("vectorized", M.dp_vectorized)]
    if M.compiler() is not None:
        M.dp_cfunc(tmp)                                  # compile once
        out.append(("compiled callback", lambda: M.dp_cfunc(tmp)))
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


def fresh(make, fn):
    """() -> (wall, cpu) of fn(a fresh System made by make()), the making untimed."""
    def timed():
        s = make()
        return clock(lambda: fn(s))[1:]
    return timed


def run_section(cfg, ctx):
    N = cfg["deriv_steps"]
    cases = forms(ctx["tmp"])
    what = {"check": lambda s: _derivcheck.ensure(s, Q0),
            "integrate": lambda s: sp.integrate(s, Q0, P0, H, N, check=False),
            "first": lambda s: sp.integrate(s, Q0, P0, H, N)}
    configs = {(name, w): fresh(make, fn) for name, make in cases for w, fn in what.items()}
    t = {k: summarize(v) for k, v in interleave(configs, cfg["deriv_rounds"]).items()}
    rows = []
    for name, _ in cases:
        c, i, f = (1e3 * t[(name, w)]["wall"] for w in what)
        k = calls_of(name)
        rows.append([name, f"{c:.3f}", f"{i:.2f}", f"{100 * c / i:.2f} %", f"{f:.2f}", "-" if k is None else k])
    return "\n".join([
        f"The double pendulum of `benchmarks/models.py` (TOP Section 3), q0 = (π/4, π/3), p0 = 0, Simpson, h = {H}, "
        f"{N} steps, in every form whose derivatives the user supplies (the compiled callback: "
        "`benchmarks/cfunc_dp.c`). \"check\" is the call `integrate` makes before its first step "
        "(`symplectic._model._derivcheck.ensure` on a fresh System: initial state and one perturbed state); "
        f"\"integrate, check=False\" is the {N}-step run alone; \"first integrate, check on\" is what a user "
        "sees: one `integrate` call on a third fresh System, check and run together. Medians of "
        f"{cfg['deriv_rounds']} interleaved rounds. The last column counts the callback calls of the check.\n",
        md_table(["form", "check (ms)", "integrate, check=False (ms)", "check / integrate",
                  "first integrate, check on (ms)", "callback calls of the check"], rows)]) + "\n"
