"""PNG figures: work-precision (sections 1 and 7) and long horizons (section 3)."""
import math
import os

from .common import say
from .config import TARGETS

STYLE = {"symplectic (C)": "-", "SciPy solve_ivp": "--", "SUNDIALS (sksundae)": ":",
         "GSL (compiled C)": "-.", "heyoka (Taylor, LLVM)": (0, (5, 1, 1, 1))}
COLORS = {"simpson": "C0", "lobatto4": "C1", "lobatto5": "C2", "midpoint": "C3", "rk4": "C4",
          "DOP853": "C5", "DOP853-generic": "C6", "RK45": "C7", "Radau": "C8", "CVODE-Adams": "C9",
          "GSL-rk8pd": "black", "heyoka": "magenta", "heyoka-compact": "orchid", "heyoka-default": "purple", "GSL-rk8pd-LU": "black"}


def pyplot():
    """matplotlib.pyplot on the Agg backend, or None (with a message) when matplotlib is missing."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        say("matplotlib missing: no PNG")
        return None
    return plt


def save(fig, plt, path):
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def _wp_panel(ax, res, key, title):
    for s in res["solvers"]:
        pts = [p for p in res["curves"][s.name] if p["status"] == "ok" and math.isfinite(p["wall"])
               and p.get(key) is not None and math.isfinite(p[key]) and p[key] > 0]
        if not pts:
            continue
        ax.loglog([p[key] for p in pts], [p["wall"] for p in pts], STYLE.get(s.family, "-"),
                  marker="o", ms=3, lw=1.2, color=COLORS.get(s.name), label=s.label)
    if key == "e_H":
        for tgt in TARGETS:
            ax.axvline(tgt, color="0.85", lw=0.8, zorder=0)
    ax.invert_xaxis()
    ax.set_xlabel("max |H - H0| / |H0|" if key == "e_H" else "relative error of (q, p) at T")
    ax.set_ylabel("wall time per run (s)")
    ax.set_title(title, fontsize=10)
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(fontsize=7)


def plot_work_precision(plt, out_dir, dp_res, small):
    fig, axes = plt.subplots(2, 2, figsize=(13, 10))
    panels = [(axes[0, 0], dp_res, "e_H", "double pendulum, 100 s: energy error"),
              (axes[0, 1], dp_res, "err_final", "double pendulum, 100 s: final-state error"),
              (axes[1, 0], small["pendulum"], "e_H", "pendulum, 100 s: energy error"),
              (axes[1, 1], small["lagrange_top"], "e_H", "Lagrange top, 10 nutation periods: energy error")]
    for panel in panels:
        _wp_panel(*panel)
    fig.suptitle("Work-precision (single runs of the search; tables in RESULTS.md use medians of "
                 "interleaved repeats)", fontsize=10)
    return save(fig, plt, os.path.join(out_dir, "work_precision.png"))


def plot_long_horizon(plt, out_dir, horizon_rows):
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(12, 4.5))
    horizon_rows = [r for r in horizon_rows if not r["hold"]]
    names = list(dict.fromkeys(r["solver"] for r in horizon_rows))
    for name in names:
        rs = sorted([r for r in horizon_rows if r["solver"] == name], key=lambda r: r["T"])
        lab = f"{rs[0]['label']} ({rs[0]['knob']})"
        a1.loglog([r["T"] for r in rs], [r["e_H"] for r in rs], marker="o", color=COLORS.get(name), label=lab)
        a2.loglog([r["T"] for r in rs], [r["wall"] for r in rs], marker="o", color=COLORS.get(name), label=lab)
    a1.set_xlabel("horizon T (s)")
    a1.set_ylabel("max |H - H0| / |H0| over [0, T]")
    a2.set_xlabel("horizon T (s)")
    a2.set_ylabel("wall time (s)")
    a1.set_title("double pendulum: energy error vs horizon (settings that give 1e-8 at 100 s)", fontsize=9)
    a2.set_title("cost vs horizon", fontsize=9)
    for a in (a1, a2):
        a.grid(True, alpha=0.3)
        a.legend(fontsize=7)
    return save(fig, plt, os.path.join(out_dir, "long_horizon.png"))


def plot(out_dir, dp_res, small, horizon_rows):
    plt = pyplot()
    if plt is None:
        return []
    return [plot_work_precision(plt, out_dir, dp_res, small), plot_long_horizon(plt, out_dir, horizon_rows)]
