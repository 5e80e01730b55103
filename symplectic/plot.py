"""Plots for trajectories, energies, convergence and the Lagrange top (matplotlib).

Optional dependency: ``pip install "symplectic-vi[plot]"``.  Every function
draws into ``ax`` (a new figure's axes when omitted) and returns the axes, so
they compose in notebooks and scripts (:func:`energy_balance` draws two panels
and takes and returns a pair).  For a forced run, :func:`energy_balance` shows
what it conserves, H − W (W the work of its forces), and W itself;
:func:`energy_error` draws the error of that balance there.

Axis labels carry a name and a unit.  Coordinates are named after the system
when it is known -- the built-in systems (:data:`BUILTIN_COORDINATES`: θ₁, θ₂
of the double pendulum, φ, θ, ψ of the top, all in rad) and SymPy systems (the
coordinate symbols, unit unknown) -- and can always be given with
``coord_names=`` and ``coord_units=``.  A momentum p conjugate to a coordinate
in rad is in kg m² s⁻¹, to one in m in kg m s⁻¹ (SI units, as everywhere in
the package).  Legends are placed outside the axes, on the right
(``legend="right"``, the default), so they never hide data; ``legend="best"``
puts them inside where matplotlib finds room, ``legend=None`` draws none (use
:func:`figure_legend` for one legend shared by several panels).
"""
import math

import numpy as np

from . import _optional, analysis

#: Names and units of the coordinates of the built-in systems, by ``System.name``
#: (``pendulum_chain``: θ₁ ... θₙ in rad; ``linear``: q₁ ... qₙ, unit unknown).
BUILTIN_COORDINATES = {
    "pendulum": (("θ",), ("rad",)),
    "double_pendulum": (("θ₁", "θ₂"), ("rad", "rad")),
    "lagrange_top": (("φ", "θ", "ψ"), ("rad", "rad", "rad")),
}

#: Unit of the momentum conjugate to a coordinate of the given unit (SI).
MOMENTUM_UNITS = {"rad": "kg m² s⁻¹", "m": "kg m s⁻¹"}

_SUB = str.maketrans("0123456789", "₀₁₂₃₄₅₆₇₈₉")


def _plt():
    return _optional.load("matplotlib.pyplot", "symplectic.plot needs matplotlib", "plot",
                          "matplotlib")


def _axes(ax, projection=None):
    if ax is not None:
        return ax
    plt = _plt()
    fig = plt.figure(figsize=(8.0, 4.2))        # room for the legend on the right
    return fig.add_subplot(111, projection=projection) if projection else fig.add_subplot(111)


def _label(traj):
    return f"{traj.method}, h = {traj.h:.3g}"


def with_unit(name, unit):
    """``"name [unit]"``, or ``name`` alone when the unit is unknown (None)."""
    return f"{name} [{unit}]" if unit else name


def coordinate_info(system=None, n=None):
    """(names, units) of the coordinates of ``system`` (a :class:`symplectic.System`).

    Built-in systems use :data:`BUILTIN_COORDINATES` (the chain: θ₁ ... θₙ in
    rad); SymPy systems the names of their coordinate symbols (unit unknown,
    None); anything else q₀ ... qₙ₋₁ (the array indices) with unknown units.
    """
    if n is None:
        n = getattr(system, "n", 1)
    name = getattr(system, "name", None)
    if name in BUILTIN_COORDINATES and len(BUILTIN_COORDINATES[name][0]) == n:
        names, units = BUILTIN_COORDINATES[name]
        return list(names), list(units)
    if name == "pendulum_chain":
        return [f"θ{str(i + 1).translate(_SUB)}" for i in range(n)], ["rad"] * n
    coords = getattr(system, "coordinates", None)
    if coords is not None and len(coords) == n:
        try:
            import sympy
            names = [sympy.pretty(c, use_unicode=True) for c in coords]
        except ImportError:  # pragma: no cover - SymPy systems need SymPy
            names = [str(c) for c in coords]
        return names, [None] * n
    return [f"q{str(i).translate(_SUB)}" for i in range(n)], [None] * n


def _momentum_name(qname):
    if qname.startswith("q") and qname[1:] and all(c in "₀₁₂₃₄₅₆₇₈₉" for c in qname[1:]):
        return "p" + qname[1:]
    return f"p_{qname}"


def momentum_unit(unit):
    """Unit of the momentum conjugate to a coordinate in ``unit`` (None if unknown)."""
    if unit is None:
        return None
    return MOMENTUM_UNITS.get(unit, f"J s/{unit}")


def _coord_labels(trajs, coord, coord_names, coord_units):
    """(q label, p label) of coordinate ``coord``."""
    system = getattr(trajs[0], "system", None) if trajs else None
    n = trajs[0].q.shape[1] if trajs and hasattr(trajs[0], "q") else coord + 1
    names, units = coordinate_info(system, n)
    if coord_names is not None:
        names = list(coord_names)
    if coord_units is not None:
        units = [coord_units] * len(names) if isinstance(coord_units, str) else list(coord_units)
    qname = names[coord] if coord < len(names) else f"q{str(coord).translate(_SUB)}"
    qunit = units[coord] if coord < len(units) else None
    return with_unit(qname, qunit), with_unit(_momentum_name(qname), momentum_unit(qunit))


def place_legend(ax, where="right", fontsize=8):
    """Draw the legend of ``ax`` where it hides no data.

    ``"right"``: outside the axes, to the right, top-aligned (the default of every
    plot function); a figure without a layout engine gets matplotlib's "tight"
    one, so neighbouring panels make room for the legend, and :func:`savefig`
    keeps it in the image; ``"best"``:
    matplotlib's choice inside the axes; None or False: no legend.  Returns the
    legend (or None).
    """
    if not where:
        return None
    if where == "right":
        fig = ax.get_figure()
        if fig.get_layout_engine() is None:
            # lay the figure out at every draw, legends outside the axes included, so a
            # panel to the right (even one added later) moves aside instead of being covered
            fig.set_layout_engine("tight")
        return ax.legend(fontsize=fontsize, loc="upper left", bbox_to_anchor=(1.02, 1.0),
                         borderaxespad=0.0)
    if where == "best":
        return ax.legend(fontsize=fontsize, loc="best")
    raise ValueError(f"legend must be 'right', 'best' or None, got {where!r}")


def figure_legend(fig, ax=None, handles=None, labels=None, ncol=None, fontsize=8):
    """One legend for a figure of several panels, centred below them.

    Takes the handles and labels of ``ax`` (default: the figure's first axes)
    unless given.  It lies below the panels, outside every axes; :func:`savefig`
    keeps it in the image.
    """
    if handles is None:
        ax = ax if ax is not None else fig.axes[0]
        handles, labels = ax.get_legend_handles_labels()
    ncol = ncol or min(len(handles), 4)
    return fig.legend(handles, labels, loc="upper center", bbox_to_anchor=(0.5, 0.0),
                      ncol=ncol, fontsize=fontsize, frameon=False)


def _forced(traj):
    """True for the trajectory of a run with a non-conservative force."""
    return getattr(traj, "force", None) is not None


def energy_error(trajs, ax=None, relative=True, labels=None, legend="right",
                 time_label="t [s]", energy_unit="J"):
    """|H(t) - H(0)| (divided by |H(0)| when ``relative``) on a log scale.

    ``trajs``: a Trajectory or a list of them.  Symplectic methods show a
    bounded, oscillating error; RK4's grows with time.  ``energy_unit`` labels
    the absolute error.

    A forced run (``traj.force`` not None: a ``force=`` argument, or a system's
    own ``damping=`` / ``dissipation=``) changes H by the work W of its forces,
    so H − H₀ measures the force, not the integrator.  For such a trajectory
    the error drawn is that of the energy balance, |H − W − H₀| (W =
    ``traj.work``; :func:`symplectic.analysis.energy_balance`), still divided
    by |H₀| when ``relative``, and the axis is labelled with that formula (it
    holds for the unforced trajectories of the same list too: their W is 0).
    :func:`energy_balance` draws the same residual relative to the energy
    exchanged, with W and H − H₀ in a second panel.
    """
    ax = _axes(ax)
    trajs = [trajs] if not isinstance(trajs, (list, tuple)) else trajs
    forced = any(_forced(tr) for tr in trajs)
    for k, tr in enumerate(trajs):
        H = np.asarray(tr.energy)
        if _forced(tr):
            err = np.abs(analysis.energy_balance(tr).residual)
        else:
            err = np.abs(H - H[0])
        if relative:
            err = err / abs(H[0]) if H[0] != 0 else err
        err = np.where(err > 0, err, np.nan)
        ax.semilogy(tr.t, err, label=labels[k] if labels else _label(tr), lw=1)
    ax.set_xlabel(time_label)
    what = "|H − W − H₀|" if forced else "|H − H₀|"
    ax.set_ylabel(f"relative energy error {what}/|H₀|" if relative
                  else with_unit(f"energy error {what}", energy_unit))
    ax.grid(True, which="both", alpha=0.3)
    place_legend(ax, legend)
    return ax


def energy_balance(trajs, ax=None, relative=True, labels=None, legend="right",
                   time_label="t [s]", energy_unit="J"):
    """The energy balance of forced runs: the error of H − W, and the work W.

    A non-conservative force changes the energy H by its work W, so a forced
    run conserves H − W instead of H (exactly for the exact flow, to the
    scheme's order for the variational schemes and RK4).  Two panels sharing
    the time axis:

    - top, log scale: the balance error |(H − W) − H₀| of each trajectory,
      ``analysis.energy_balance(traj).residual`` -- divided, when
      ``relative``, by the energy exchanged, max(|H₀|, max |H − H₀|, max |W|),
      so that the curve's maximum is ``analysis.energy_balance(traj).relative``
      (a scale that stays meaningful for runs starting near H₀ = 0, such as a
      driven system at rest); otherwise in ``energy_unit``;
    - bottom, linear scale, in ``energy_unit``: the work W (solid) and the
      energy change H − H₀ (dashed, same colour), which the first panel shows
      to agree.

    ``trajs``: a Trajectory or a list of them (an unforced run has W = 0, so
    its balance error is its energy error).  ``ax``: a pair of axes (balance,
    work), e.g. from ``plt.subplots(2, 1, sharex=True)``; by default a new
    figure.  Returns that pair.  :func:`energy_error` draws the same residual
    relative to |H₀|.
    """
    if ax is None:
        fig = _plt().figure(figsize=(8.0, 6.0))
        top = fig.add_subplot(2, 1, 1)
        ax = (top, fig.add_subplot(2, 1, 2, sharex=top))
    elif len(ax) != 2:
        raise ValueError(f"ax must be a pair of axes (balance, work), got {len(ax)}")
    ax_bal, ax_work = ax
    trajs = [trajs] if not isinstance(trajs, (list, tuple)) else trajs
    for k, tr in enumerate(trajs):
        bal = analysis.energy_balance(tr)
        err = np.abs(bal.residual)
        if relative and bal.max_error > 0:
            err = err * (bal.relative / bal.max_error)     # / max(|H0|, |H - H0|, |W|)
        err = np.where(err > 0, err, np.nan)
        label = labels[k] if labels else _label(tr)
        line, = ax_bal.semilogy(bal.t, err, label=label, lw=1)
        ax_work.plot(bal.t, bal.work, color=line.get_color(), lw=1, label=f"{label}: W")
        ax_work.plot(bal.t, bal.energy - bal.energy[0], color=line.get_color(), lw=1, ls="--",
                     label=f"{label}: H − H₀")
    ax_bal.set_ylabel("relative energy balance error\n|H − W − H₀| / max(|H₀|, |H − H₀|, |W|)"
                      if relative else with_unit("energy balance error |H − W − H₀|", energy_unit))
    ax_bal.grid(True, which="both", alpha=0.3)
    ax_bal.set_xlabel(time_label)
    ax_work.set_xlabel(time_label)
    ax_work.set_ylabel(with_unit("work W, energy change H − H₀", energy_unit))
    ax_work.grid(True, alpha=0.3)
    place_legend(ax_bal, legend)
    place_legend(ax_work, legend)
    return ax_bal, ax_work


def phase_portrait(trajs, coord=0, ax=None, exact=None, labels=None, legend="right",
                   coord_names=None, coord_units=None):
    """p_coord against q_coord for one or more trajectories.

    ``exact``: optional (q, p) arrays (e.g. from :mod:`symplectic.exact`) drawn
    as a thin black reference curve.  ``coord_names``, ``coord_units``: names
    and units of the coordinates (default: from the trajectory's system, see
    :func:`coordinate_info`); the momentum's unit follows from the coordinate's.
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
    qlab, plab = _coord_labels(trajs, coord, coord_names, coord_units)
    ax.set_xlabel(qlab)
    ax.set_ylabel(plab)
    ax.grid(True, alpha=0.3)
    place_legend(ax, legend)
    return ax


def convergence(data, ax=None, fit=True, xlabel="h [s]", ylabel="error", legend="right"):
    """Log-log error against step size with least-squares slopes.

    ``data``: ``{label: (hs, errors)}``.  The fitted order (slope of log error
    against log h) is added to each label.  Give ``ylabel`` with the error's
    name and unit.
    """
    ax = _axes(ax)
    for label, (hs, errs) in data.items():
        hs, errs = np.asarray(hs, float), np.asarray(errs, float)
        text = label
        if fit and len(hs) >= 2:
            slope = np.polyfit(np.log(hs), np.log(errs), 1)[0]
            text = f"{label} (order {slope:.2f})"
        ax.loglog(hs, errs, "o-", label=text)
    # label minor ticks only on axes spanning under half a decade (they overlap otherwise)
    from matplotlib.ticker import LogFormatterSciNotation
    ax.xaxis.set_minor_formatter(LogFormatterSciNotation(labelOnlyBase=False,
                                                         minor_thresholds=(0.5, 0.2)))
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.grid(True, which="both", alpha=0.3)
    place_legend(ax, legend)
    return ax


def state_vs_exact(trajs, exact, coord=0, ax=None, t_exact=None, quantity="q", labels=None,
                   legend="right", coord_names=None, coord_units=None, time_label="t [s]",
                   exact_label="exact"):
    """q_coord (or p_coord with ``quantity="p"``) of trajectories against an exact solution.

    ``exact``: a callable ``t -> (q, p)`` (like ``symplectic.exact.pendulum``
    with its parameters bound) or arrays ``(q, p)`` at ``t_exact``.
    ``coord_names``, ``coord_units``: as in :func:`phase_portrait`.
    """
    ax = _axes(ax)
    trajs = [trajs] if not isinstance(trajs, (list, tuple)) else trajs
    if t_exact is None:
        t_exact = np.linspace(trajs[0].t[0], trajs[0].t[-1], 2000)
    qe, pe = exact(t_exact) if callable(exact) else exact
    ye = np.asarray(qe if quantity == "q" else pe, float)
    ye = ye[:, coord] if ye.ndim > 1 else ye
    ax.plot(t_exact, ye, "k-", lw=1, label=exact_label)
    for k, tr in enumerate(trajs):
        y = (tr.q if quantity == "q" else tr.p)[:, coord]
        ax.plot(tr.t, y, "o--", ms=3, lw=0.8, label=labels[k] if labels else _label(tr))
    qlab, plab = _coord_labels(trajs, coord, coord_names, coord_units)
    ax.set_xlabel(time_label)
    ax.set_ylabel(qlab if quantity == "q" else plab)
    ax.grid(True, alpha=0.3)
    place_legend(ax, legend)
    return ax


def top_axis(q):
    """Unit vector of the top's symmetry axis for ZXZ Euler angles q = (phi, theta, psi):
    R = Rz(phi) Rx(theta) Rz(psi) maps e_z to (sin th sin ph, -sin th cos ph, cos th)."""
    q = np.atleast_2d(np.asarray(q, float))
    ph, th = q[:, 0], q[:, 1]
    return np.column_stack([np.sin(th) * np.sin(ph), -np.sin(th) * np.cos(ph), np.cos(th)])


def top_axis_trace(trajs, ax=None, sphere=True, labels=None, view=(25, -60), legend="right"):
    """The trace of the Lagrange top's symmetry axis on the unit sphere (3D).

    Loops (TOP Figure 7) or cusps (Figure 12) depending on the initial
    precession rate.  ``trajs``: Trajectory(ies) of ``lagrange_top`` (or arrays
    of Euler angles).  The axes are the components of the unit vector along the
    symmetry axis in the fixed frame (z vertical, dimensionless).
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
    ax.set_xlabel("axis x = sin θ sin φ [–]")
    ax.set_ylabel("axis y = −sin θ cos φ [–]")
    ax.set_zlabel("axis z = cos θ [–]")
    ax.view_init(*view)
    if labels or any(hasattr(t, "method") for t in trajs):
        place_legend(ax, legend)
    return ax


def savefig(ax, path, dpi=130):
    """Save the figure of ``ax`` to ``path`` and close it.

    The image is cropped to what is drawn, legends outside the axes included.
    """
    plt = _plt()
    fig = ax.get_figure()
    fig.tight_layout()
    fig.savefig(path, dpi=dpi, bbox_inches="tight")
    plt.close(fig)
    return path
