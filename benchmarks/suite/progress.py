"""Section 15: what progress=True costs, and what a per-step event costs.

``sp.integrate`` on the built-in pendulum (Simpson, h = 1e-3, q0 = 1 rad), the cheapest step there
is, so that a fixed cost per progress report weighs most:

- progress=False against progress=True over N steps (tqdm's bar when tqdm is installed, else the
  plain stderr line; the bar is written to /dev/null), ``store_every=10`` in both so that memory
  allocation is not what is measured; interleaved rounds, medians and the median of the paired
  ratios; and one report of the bar alone (``_progress.Bar.report``, what the C loop calls every
  512 steps here: csrc/binding/py_integrate.c), times the number of reports;
- the same run with one event function (the per-step Python hook) and with ``t_eval`` of 1000
  times (a hook call only at the steps that hold one), per step.
"""
import contextlib
import os
import time

import numpy as np

import symplectic as sp
from symplectic._run import _progress

from .common import md_table, med, timed_rounds

H, K, EVERY = 1e-3, 10, 512


def crossing(t, q, p):
    return q[0]


def per_report(n, reps=200_000):
    """Seconds per call of the bar's report, alone."""
    with open(os.devnull, "w") as null:
        b = _progress.Bar(n, "x", stream=null)
        t = time.perf_counter()
        for i in range(reps):
            b.report(i)
        dt = (time.perf_counter() - t) / reps
        b.close()
    return dt


def run_section(cfg, ctx):
    pend, N, M = sp.systems.pendulum(), cfg["prog_steps"], cfg["prog_hook_steps"]

    def run(n, **kw):
        return lambda: sp.integrate(pend, [1.0], [0.0], H, n, **kw)

    with open(os.devnull, "w") as null, contextlib.redirect_stderr(null):
        run(N, store_every=K)()                                         # warm-up
        t, paired = timed_rounds({"off": run(N, store_every=K), "on": run(N, store_every=K, progress=True)},
                                 cfg["prog_rounds"])
    te = np.linspace(0.0, M * H, 1000)
    hooks = {"no hook": run(M, store_every=K), "one event (hook every step)": run(M, store_every=K, events=crossing),
             "t_eval, 1000 times (hook at 1000 steps)": run(M, t_eval=te)}
    th, _ = timed_rounds(hooks, cfg["prog_hook_rounds"])
    off, on = t["off"]["wall"], t["on"]["wall"]
    one = per_report(N)
    implied = one * (N / EVERY) / off
    bar = "tqdm" if _progress._tqdm() is not None else "plain stderr line"
    base = th["no hook"]["wall"]
    return "\n".join([
        f"Built-in pendulum, Simpson, h = {H:g}, {N:.0e} steps, `store_every={K}`; {cfg['prog_rounds']} "
        f"interleaved rounds (medians); progress bar: {bar}, written to /dev/null.\n",
        md_table(["run", "median s", "fastest s", "ns/step (median)"],
                 [["progress=False", f"{off:.3f}", f"{t['off']['wall_min']:.3f}", f"{1e9 * off / N:.1f}"],
                  ["progress=True", f"{on:.3f}", f"{t['on']['wall_min']:.3f}", f"{1e9 * on / N:.1f}"]]),
        f"\nOverhead of progress=True: median of the paired ratios − 1 = **{100 * (med(paired['on']) - 1):+.2f} %** "
        f"(the spread of the rounds is the shared machine's noise, larger than the effect). Measured alone, one "
        f"report (what the C loop calls every {EVERY} steps here) costs {1e6 * one:.3f} µs: "
        f"{N // EVERY} reports in a run of {off:.2f} s are **{100 * implied:.3f} %**. progress=False costs "
        "nothing (no report function is passed to the C loop).\n",
        f"Per-step cost of the Python hook ({M:.0e} steps, medians of {cfg['prog_hook_rounds']} interleaved "
        "rounds):\n",
        md_table(["run", "s", "µs/step", "extra µs/step"],
                 [[k, f"{v['wall']:.3f}", f"{1e6 * v['wall'] / M:.3f}", f"{1e6 * (v['wall'] - base) / M:+.3f}"]
                  for k, v in th.items()]),
        "\nThe event row is the price of `events=`: one call of the C-to-Python hook per step (the step's data "
        "copied into a buffer, the GIL taken) and one call of each event function at the step's end; the "
        "search on the dense polynomial runs only in the steps where the sign changes."]) + "\n"
