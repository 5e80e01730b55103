"""Plots for trajectories, energies, convergence and the Lagrange top (matplotlib).

Optional dependency: ``pip install "symplectic-vi[plot]"``.  Every function
draws into ``ax`` (a new figure's axes when omitted) and returns the axes, so
they compose in notebooks and scripts.
"""
import math

import numpy as np


def _plt():
    try:
        import matplotlib.pyplot as plt
    except ImportError:  # pragma: no cover - exercised without matplotlib
        raise ImportError("symplectic.plot needs matplotlib: pip install 'symplectic-vi[plot]' "
                          "(or pip install matplotlib)") from None
    return plt


def _axes(ax, projection=None):
    if ax is not None:
        return ax
    plt = _plt()
    fig = plt.figure(figsize=(6.4, 4.2))
    return fig.add_subplot(111, projection=projection) if projection else fig.add_subplot(111)


def _label(traj):
    return f"{traj.method}, h = {traj.h:.3g}"


def energy_error(trajs, ax=None, relative=True, labels=None):
    """|H(t) - H(0)| (divided by |H(0)| when ``relative``) on a log scale.

    ``trajs``: a Trajectory or a list of them.  Symplectic methods show a
    bounded, oscillating error; RK4's grows with time.
    """
    ax = _axes(ax)
    trajs = [trajs] if not isinstance(trajs, (list, tuple)) else trajs
    for k, tr in enumerate(trajs):
        H = np.asarray(tr.energy)
        err = np.abs(H - H[0])
        if relative:
            err = err / abs(H[0]) if H[0] != 0 else err
        err = np.where(err > 0, err, np.nan)
        ax.semilogy(tr.t, err, label=labels[k] if labels else _label(tr), lw=1)
    ax.set_xlabel("t")
    ax.set_ylabel("relative energy error |H - H0| / |H0|" if relative else "|H - H0|")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    return ax


def phase_portrait(trajs, coord=0, ax=None, exact=None, labels=None):
    """p_coord against q_coord for one or more trajectories.

    ``exact``: optional (q, p) arrays (e.g. from :mod:`symplectic.exact`) drawn
    as a thin black reference curve.
    """
    ax = _axes(ax)
    if exact is not None:
        qe, pe = exact
        ax.plot(np.asarray(qe).reshape(len(qe), -1)[:, coord if np.ndim(qe) > 1 else 0],
                np.asarray(pe).reshape(len(pe), -1)[:, coord if np.ndim(pe) > 1 else 0],
                "k-", lw=0.8, label="exact")
    trajs = [trajs] if not isinstance(trajs, (list, tuple)) else trajs
    for k, tr in enumerate(trajs):
        ax.plot(tr.q[:, coord], tr.p[:, coord], ".-", ms=2, lw=0.6,
                label=labels[k] if labels else _label(tr))
    ax.set_xlabel(f"q[{coord}]")
    ax.set_ylabel(f"p[{coord}]")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    return ax


def convergence(data, ax=None, fit=True, xlabel="h", ylabel="error"):
    """Log-log error against step size with least-squares slopes.

    ``data``: ``{label: (hs, errors)}``.  The fitted order (slope of log error
    against log h) is added to each label.
    """
    ax = _axes(ax)
    for label, (hs, errs) in data.items():
        hs, errs = np.asarray(hs, float), np.asarray(errs, float)
        text = label
        if fit and len(hs) >= 2:
            slope = np.polyfit(np.log(hs), np.log(errs), 1)[0]
            text = f"{label} (order {slope:.2f})"
        ax.loglog(hs, errs, "o-", label=text)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    return ax


def state_vs_exact(trajs, exact, coord=0, ax=None, t_exact=None, quantity="q", labels=None):
    """q_coord (or p_coord with ``quantity="p"``) of trajectories against an exact solution.

    ``exact``: a callable ``t -> (q, p)`` (like ``symplectic.exact.pendulum``
    with its parameters bound) or arrays ``(q, p)`` at ``t_exact``.
    """
    ax = _axes(ax)
    trajs = [trajs] if not isinstance(trajs, (list, tuple)) else trajs
    if t_exact is None:
        t_exact = np.linspace(trajs[0].t[0], trajs[0].t[-1], 2000)
    qe, pe = exact(t_exact) if callable(exact) else exact
    ye = np.asarray(qe if quantity == "q" else pe, float)
    ye = ye[:, coord] if ye.ndim > 1 else ye
    ax.plot(t_exact, ye, "k-", lw=1, label="exact")
    for k, tr in enumerate(trajs):
        y = (tr.q if quantity == "q" else tr.p)[:, coord]
        ax.plot(tr.t, y, "o--", ms=3, lw=0.8, label=labels[k] if labels else _label(tr))
    ax.set_xlabel("t")
    ax.set_ylabel(f"{quantity}[{coord}]")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    return ax


def top_axis(q):
    """Unit vector of the top's symmetry axis for ZXZ Euler angles q = (phi, theta, psi):
    R = Rz(phi) Rx(theta) Rz(psi) maps e_z to (sin th sin ph, -sin th cos ph, cos th)."""
    q = np.atleast_2d(np.asarray(q, float))
    ph, th = q[:, 0], q[:, 1]
    return np.column_stack([np.sin(th) * np.sin(ph), -np.sin(th) * np.cos(ph), np.cos(th)])


def top_axis_trace(trajs, ax=None, sphere=True, labels=None, view=(25, -60)):
    """The trace of the Lagrange top's symmetry axis on the unit sphere (3D).

    Loops (TOP Figure 7) or cusps (Figure 12) depending on the initial
    precession rate.  ``trajs``: Trajectory(ies) of ``lagrange_top`` (or arrays
    of Euler angles).
    """
    ax = _axes(ax, projection="3d")
    trajs = [trajs] if not isinstance(trajs, (list, tuple)) else trajs
    if sphere:
        u, v = np.mgrid[0:2 * math.pi:40j, 0:math.pi / 2:20j]
        ax.plot_wireframe(np.cos(u) * np.sin(v), np.sin(u) * np.sin(v), np.cos(v),
                          color="0.85", lw=0.4)
    for k, tr in enumerate(trajs):
        q = tr.q if hasattr(tr, "q") else np.asarray(tr)
        z = top_axis(q)
        lab = labels[k] if labels else (_label(tr) if hasattr(tr, "method") else None)
        ax.plot(z[:, 0], z[:, 1], z[:, 2], lw=1.0, label=lab)
    ax.set_xlabel("x")
    ax.set_ylabel("y")
    ax.set_zlabel("z")
    ax.view_init(*view)
    if labels or any(hasattr(t, "method") for t in trajs):
        ax.legend(fontsize=8)
    return ax


def savefig(ax, path, dpi=130):
    """Save the figure of ``ax`` to ``path`` and close it."""
    plt = _plt()
    fig = ax.get_figure()
    fig.tight_layout()
    fig.savefig(path, dpi=dpi)
    plt.close(fig)
    return path
