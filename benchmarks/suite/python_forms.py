"""Section 4: the double pendulum as Python callables / vectorized / combined / compiled callback
against the built-in system (Simpson, h = 0.01)."""
import subprocess

import numpy as np

import symplectic as sp
import models as M

from .common import interleave, per_unit, say, summarize, timer

H = 0.01


def _forms(cfg, ctx):
    forms = [("built-in C", M.dp_system(), cfg["forms_builtin_steps"])]
    cf = None
    try:
        cf = M.dp_cfunc(ctx["tmp"])
    except (OSError, subprocess.CalledProcessError) as exc:
        say("  cfunc: could not compile:", exc)
    if cf is not None:
        forms.append(("compiled callback (from_cfunc)", cf, cfg["forms_builtin_steps"]))
    forms += [("combined", M.dp_combined(), cfg["forms_steps"]),
              ("plain callables", M.dp_callables(), cfg["forms_steps"]),
              ("plain callables, no Hessians", M.dp_callables(hessians=False), cfg["forms_steps"]),
              ("vectorized", M.dp_vectorized(), cfg["forms_steps"])]
    return forms


def section_forms(cfg, ctx):
    say("== 4. Python forms of the double pendulum, Simpson h = 0.01")
    forms = _forms(cfg, ctx)
    ref = sp.integrate(forms[0][1], M.DP_Q0, M.DP_P0, H, 1000)
    configs, info = {}, {}
    for name, s, N in forms:
        tr = sp.integrate(s, M.DP_Q0, M.DP_P0, H, 1000)
        dev = max(float(np.max(np.abs(tr.q - ref.q))), float(np.max(np.abs(tr.p - ref.p))))
        info[name] = dict(N=N, newton=float(np.mean(tr.newton_iterations)), dev=dev)
        configs[name] = timer(lambda s=s, N=N: sp.integrate(s, M.DP_Q0, M.DP_P0, H, N))
    samples = interleave(configs, cfg["forms_rounds"])
    rows = []
    base = None
    for name, s, N in forms:
        t = summarize(samples[name])
        u = per_unit(t, N)
        base = u["us"] if base is None else base
        rows.append(dict(form=name, steps=N, us_per_step=u["us"], us_min=u["us_min"], us_max=u["us_max"],
                         cpu_us_per_step=u["cpu_us"], vs_builtin=u["us"] / base,
                         newton_per_step=info[name]["newton"], max_dev_vs_builtin=info[name]["dev"],
                         samples=t["samples"]))
        say(f"  {name:32s} {u['us']:9.3f} µs/step  {u['us'] / base:7.1f}× built-in  (dev {info[name]['dev']:.1e})")
    return rows
