"""Figures of sections 8 and 10: cost against horizon (and against n for the chains)."""
import math
import os

from .plots import COLORS, pyplot, save


def _lines(ax, rows, x_key, label_of):
    """One line per method through its reached points (x_key against the median time)."""
    for name in dict.fromkeys(r["method"] for r in rows):
        pts = sorted((r[x_key], r["wall"]) for r in rows if r["method"] == name and r["reached"]
                     and math.isfinite(r["wall"]))
        if pts:
            ours = any(r["ours"] for r in rows if r["method"] == name)
            step = name.endswith("_step")    # newton="step": the full-Newton method's colour, dotted
            ax.loglog(*zip(*pts), ":" if step else "-" if ours else "--", marker="s" if step else "o", ms=3,
                      color=COLORS.get(name.removesuffix("_step")), label=label_of(name))
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
    plt = pyplot()
    if plt is None or not rows:
        return None
    fig, axes = plt.subplots(2, 2, figsize=(12, 9), squeeze=False)
    labels = {r["method"]: r["label"] for r in rows}
    for k, kind in enumerate(("chain", "arm")):
        sub = [r for r in rows if r["kind"] == kind]
        if not sub:
            continue
        n_h = max({r["n"] for r in sub}, key=lambda n: (len({r["T"] for r in sub if r["n"] == n}), -abs(n - 8)))
        _lines(axes[k, 0], [r for r in sub if r["n"] == n_h], "T", labels.get)
        _style(axes[k, 0], "horizon T (s)", f"{kind}, n = {n_h}: cost of e_H ≤ {cfg['pc_target']:.0e}")
        T_n = max(T for T in {r["T"] for r in sub} if all(any(r["T"] == T and r["n"] == n for r in sub)
                                                          for n in {r["n"] for r in sub}))
        _lines(axes[k, 1], [r for r in sub if r["T"] == T_n], "n", labels.get)
        _style(axes[k, 1], "n (links)", f"{kind}, T = {T_n:g} s: cost against n")
    save(fig, plt, os.path.join(out, "peers_chain.png"))
    return "peers_chain.png"
