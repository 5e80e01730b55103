"""Section 2: per-step cost of the built-in double pendulum for each method at h = 0.1, 0.01."""
import numpy as np

import symplectic as sp
import models as M

from .common import interleave, per_unit, say, summarize, timer

METHODS = ("simpson", "midpoint", "rk4", "lobatto2", "lobatto4", "lobatto5")
STEPS_H = (0.1, 0.01)


def section_perstep(cfg):
    say("== 2. per-step cost, built-in double pendulum")
    dp = M.dp_system()
    N = cfg["perstep_steps"]
    configs, iters = {}, {}
    for m in METHODS:
        for h in STEPS_H:
            tr = sp.integrate(dp, M.DP_Q0, M.DP_P0, h, N, method=m)
            iters[(m, h)] = float(np.mean(tr.newton_iterations))
            configs[(m, h)] = timer(lambda m=m, h=h: sp.integrate(dp, M.DP_Q0, M.DP_P0, h, N, method=m))
    samples = interleave(configs, cfg["perstep_rounds"])
    rows = []
    for (m, h), s in samples.items():
        t = summarize(s)
        u = per_unit(t, N)
        rows.append(dict(method=m, h=h, steps=N, us_per_step=u["us"], us_min=u["us_min"], us_max=u["us_max"],
                         cpu_us_per_step=u["cpu_us"], newton_per_step=iters[(m, h)], samples=t["samples"]))
        say(f"  {m:9s} h={h:<5g} {rows[-1]['us_per_step']:.3f} µs/step "
            f"(min {rows[-1]['us_min']:.3f}, max {rows[-1]['us_max']:.3f}), {iters[(m, h)]:.2f} Newton it/step")
    return rows
