"""Figures of sections 8 and 10: cost against horizon (and against n for the chains)."""
import math
import os

from .plots import COLORS, pyplot, save

# the section-10 peers without a colour in plots.COLORS, and markers that tell GSL's two programs apart
EXTRA_COLORS = {"GSL-rk8pd-ABA": "0.45", "mujoco-rk4": "teal"}
MARKERS = {"GSL-rk8pd-ABA": "^", "mujoco-rk4": "D"}


def _lines(ax, rows, x_key, label_of):
    """One line per method through its reached points (x_key against the median time)."""
    for name in dict.fromkeys(r["method"] for r in rows):
        pts = sorted((r[x_key], r["wall"]) for r in rows if r["method"] == name and r["reached"]
                     and math.isfinite(r["wall"]))
        if pts:
            ours = any(r["ours"] for r in rows if r["method"] == name)
            step = name.endswith("_step")    # newton="step": the full-Newton method's colour, dotted
            base = name.removesuffix("_step")
            ax.loglog(*zip(*pts), ":" if step else "-" if ours else "--",
                      marker="s" if step else MARKERS.get(base, "o"), ms=3,
                      color=COLORS.get(base, EXTRA_COLORS.get(base)), label=label_of(name))
    xs = sorted({r[x_key] for r in rows})
    ax.set_xticks(xs, [f"{x:g}" for x in xs])
    ax.minorticks_off()


def _style(ax, xlabel, title):
    ax.set_xlabel(xlabel)
    ax.set_ylabel("wall time (s), median")
    ax.set_title(title, fontsize=9)
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(fontsize=7)


def plot_dp(out, rows, cfg):
    plt = pyplot()
    if plt is None:
        return None
    targets = cfg["peer_targets"]
    ncol = 2 if len(targets) > 1 else 1
    nrow = math.ceil(len(targets) / ncol)
    fig, axes = plt.subplots(nrow, ncol, figsize=(6 * ncol, 4.5 * nrow), squeeze=False)
    labels = {r["method"]: r["label"] for r in rows}
    for ax, tgt in zip(axes.flat, targets):
        _lines(ax, [r for r in rows if r["target"] == tgt], "T", labels.get)
        _style(ax, "horizon T (s)", f"double pendulum: cost of e_H ≤ {tgt:.0e} over [0, T]")
    save(fig, plt, os.path.join(out, "peers_dp.png"))
    return "peers_dp.png"


def plot_chain(out, rows, cfg):
    """Per kind (a row of panels): cost against T at the n with the most horizons (nearest 8), then
    cost against n at each horizon; lines through the reached settings only."""
    plt = pyplot()
    if plt is None or not rows:
        return None
    Ts = sorted({r["T"] for r in rows})
    fig, axes = plt.subplots(2, 1 + len(Ts), figsize=(5 * (1 + len(Ts)), 9), squeeze=False)
    labels = {r["method"]: r["label"] for r in rows}
    for k, kind in enumerate(("chain", "arm")):
        sub = [r for r in rows if r["kind"] == kind]
        if not sub:
            for ax in axes[k]:
                ax.set_visible(False)
            continue
        n_h = max({r["n"] for r in sub}, key=lambda n: (len({r["T"] for r in sub if r["n"] == n and r["reached"]}),
                                                        -abs(n - 8)))
        _lines(axes[k, 0], [r for r in sub if r["n"] == n_h], "T", labels.get)
        _style(axes[k, 0], "horizon T (s)", f"{kind}, n = {n_h}: cost of e_H ≤ {cfg['pc_target']:.0e}")
        for ax, T in zip(axes[k, 1:], Ts):
            _lines(ax, [r for r in sub if r["T"] == T], "n", labels.get)
            _style(ax, "n (links)", f"{kind}, T = {T:g} s: cost against n")
    save(fig, plt, os.path.join(out, "peers_chain.png"))
    return "peers_chain.png"
