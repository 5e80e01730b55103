"""Checks on drawn matplotlib figures, shared by test_plot.py and test_reproduce.py.

``legend_overlaps(fig)`` finds data points (and points along the drawn line
segments) that fall inside a legend's box, in display coordinates after the
figure is drawn; ``axis_labels(fig)`` lists every axis label; ``has_unit``
says whether a label carries a unit ("[...]") or names a dimensionless ratio
("relative ...").
"""
import re

import numpy as np

UNIT = re.compile(r"\[[^\]]+\]")


def has_unit(label):
    return bool(UNIT.search(label)) or "relative" in label


def axis_labels(fig):
    """[(axes title, axis, label)] for every x, y (and z) axis of the figure."""
    out = []
    for ax in fig.axes:
        title = ax.get_title()
        out.append((title, "x", ax.get_xlabel()))
        out.append((title, "y", ax.get_ylabel()))
        if hasattr(ax, "get_zlabel"):
            out.append((title, "z", ax.get_zlabel()))
    return out


def _display_points(line, step=2.0):
    """Display coordinates of a line's vertices and of points every ``step`` pixels
    along its drawn segments (finite points only)."""
    xy = np.asarray(line.get_xydata(), float)
    if xy.size == 0:
        return np.empty((0, 2))
    pts = line.get_transform().transform(xy)
    if line.get_linestyle() in ("None", "", " ", "none") or len(pts) < 2:
        return pts[np.all(np.isfinite(pts), axis=1)]
    a, b = pts[:-1], pts[1:]
    ok = np.all(np.isfinite(a), axis=1) & np.all(np.isfinite(b), axis=1)
    a, b = a[ok], b[ok]
    n = np.maximum(1, np.ceil(np.hypot(*(b - a).T) / step)).astype(int)
    idx = np.repeat(np.arange(len(a)), n)
    frac = np.concatenate([np.arange(k) / k for k in n]) if len(n) else np.empty(0)
    seg = a[idx] + (b[idx] - a[idx]) * frac[:, None]
    finite = pts[np.all(np.isfinite(pts), axis=1)]
    return np.vstack([seg, finite])


def legends(fig):
    out = [ax.get_legend() for ax in fig.axes if ax.get_legend() is not None]
    return out + list(fig.legends)


def legend_overlaps(fig, pad=2.0):
    """[(legend index, line label, number of points inside)] for every data line
    of every axes with points (inside its axes, where it is drawn) in a legend's box."""
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    found = []
    for k, leg in enumerate(legends(fig)):
        box = leg.get_window_extent(renderer)
        for ax in fig.axes:
            axbox = ax.get_window_extent(renderer)
            for line in ax.get_lines():
                if not line.get_visible():
                    continue
                pts = _display_points(line)
                x, y = pts[:, 0], pts[:, 1]
                drawn = (x >= axbox.x0) & (x <= axbox.x1) & (y >= axbox.y0) & (y <= axbox.y1)
                inside = ((x >= box.x0 - pad) & (x <= box.x1 + pad)
                          & (y >= box.y0 - pad) & (y <= box.y1 + pad))
                hits = int(np.sum(drawn & inside))
                if hits:
                    found.append((k, line.get_label(), hits))
    return found
