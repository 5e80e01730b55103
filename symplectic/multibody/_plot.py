"""Stick figures of rigid-body trees, still (:func:`draw`) and moving (:func:`animate`).

Optional dependency: ``pip install "symplectic-vi[plot]"`` (matplotlib; Pillow,
which matplotlib installs, writes ``.gif`` files, and ``.mp4`` needs the
``ffmpeg`` program).  ``symplectic.multibody`` imports without it: matplotlib is
imported when a picture is asked for.

What is drawn, in the world frame (the root link's frame, URDF's convention; x,
y, z in m, z up for the default gravity (0, 0, -9.81)):

- a segment from the origin of each link's parent link frame to the origin of
  the link's frame (``tree.link_pose``), one per link but the root, links
  merged by fixed joints included -- the figure of the kinematic tree, not of
  the links' shapes;
- a dot (open circle) at the origin of each link that a movable joint moves:
  for a revolute or continuous joint the point of its axis where the joint
  sits, for a prismatic one the slider's position; a smaller filled dot where
  a fixed joint attaches a link (when the tree tells its joints apart:
  ``tree.parent_joint`` and ``tree.joint``; otherwise every link gets the
  open circle);
- the root link's origin, a black square;
- optionally (``com=``) the whole tree's centre of mass (``tree.com``) and the
  centre of mass of each body with mass, link labels (``labels=``) and the
  axes of each link frame (``frames=``: x red, y green, z blue).

The axes keep one scale on x, y and z (``set_box_aspect`` and the limits of a
cube), so that the robot is not distorted: by default the cube about what is
drawn, or (``limits="reach"``) the cube about the root that the tree's reach
fills -- the reach being the longest path of segments from the root, which
does not change with q when every joint is revolute.  The limits of
:func:`animate` hold for the whole motion.

Every artist the figure is made of carries a ``gid``, for scripts and tests
that read a picture back: ``"link <name>"`` for the segment ending at link
<name> (a Line3D of two points, parent origin first), ``"joints"``,
``"fixed joints"``, ``"root"``, ``"com"``, ``"body com"``, ``"trail"``, ``"frame <name>"`` and
``"label <name>"``.
"""
import math
import os

import numpy as np

from .. import _optional

#: Default look of the segments (any of them can be given to draw/animate as **style).
SEGMENT_STYLE = {"lw": 2.5, "solid_capstyle": "round"}


def _plt():
    return _optional.load("matplotlib.pyplot", "symplectic.multibody's pictures need matplotlib",
                          "plot", "matplotlib")


def _tree_of(obj):
    """The Tree of a Tree or of a system made from one (``system.tree``)."""
    tree = getattr(obj, "tree", obj)
    needed = ("links", "root", "parent_link", "link_pose", "coordinates")
    missing = [a for a in needed if not hasattr(tree, a)]
    if tree is None or missing:
        raise TypeError(f"expected a multibody.Tree or a system made from one (Tree.system(), "
                        f"multibody.from_urdf), got {type(obj).__name__} (without "
                        f"{', '.join(missing) or 'a tree'})")
    return tree


def _coordinates(q, tree, what="q"):
    """q as a float array of shape (n,), or a ValueError naming n and the coordinates."""
    n = len(tree.coordinates)
    q = np.asarray(q, dtype=float)
    if q.shape != (n,):
        names = ", ".join(tree.coordinates)
        raise ValueError(f"{what} must have {n} values, one per coordinate of the tree "
                         f"({names}), got an array of shape {q.shape}")
    return q


def _centres(tree):
    """[(link, c)]: each body with mass and its centre of mass in its link frame (m), when the
    tree exposes its bodies (``tree.bodies``: objects with name, mass, com); else []."""
    bodies = getattr(tree, "bodies", None)
    if bodies is None:
        return []
    if isinstance(bodies, dict):
        bodies = bodies.values()
    out = []
    for body in bodies:
        if getattr(body, "mass", 0.0) > 0 and getattr(body, "name", None) in tree.links:
            out.append((body.name, np.asarray(body.com, dtype=float)))
    return out


def _fixed_links(tree):
    """The links whose parent joint is fixed, when the tree says (``parent_joint``, ``joint``
    and the joints' ``type``); else none."""
    if not (hasattr(tree, "parent_joint") and hasattr(tree, "joint")):
        return set()
    out = set()
    for link in tree.links:
        name = tree.parent_joint(link)
        if name is not None and getattr(tree.joint(name), "type", None) == "fixed":
            out.add(link)
    return out


def _trail_spec(tree, trail):
    """(link, point in the link frame) of the traced point, or None."""
    if trail is None or trail is False:
        return None
    if trail is True:
        return tree.links[-1], np.zeros(3)
    if isinstance(trail, str):
        link, point = trail, np.zeros(3)
    else:
        link, point = trail
        point = np.asarray(point, dtype=float)
        if point.shape != (3,):
            raise ValueError(f"the trail's point must be 3 coordinates in the frame of link "
                             f"{link!r} (m), got shape {point.shape}")
    if link not in tree.links:
        raise ValueError(f"trail: no link {link!r} in the tree (links: {', '.join(tree.links)})")
    return link, point


class _Pose:
    """Everything the figure needs at one q: link origins and rotations, the reach, the
    centres of mass."""

    def __init__(self, tree, q, com, centres):
        self.R, self.p = {}, {}
        for link in tree.links:
            R, p = tree.link_pose(link, q)
            self.R[link] = np.asarray(R, dtype=float)
            self.p[link] = np.asarray(p, dtype=float)
        root = self.p[tree.root]
        # the longest path of segments from the root: a bound on how far the tree reaches
        length = {tree.root: 0.0}

        def path(link):
            if link not in length:
                parent = tree.parent_link(link)
                length[link] = path(parent) + float(np.linalg.norm(self.p[link]
                                                                   - self.p[parent]))
            return length[link]

        self.reach = max(path(link) for link in tree.links)
        self.total = None               # a tree that moves no mass has no centre of mass
        if com in (True, "total") and getattr(tree, "mass", 1.0) > 0:
            self.total = np.asarray(tree.com(q), dtype=float)
        self.body = (np.array([self.R[link] @ c + self.p[link] for link, c in centres])
                     if com in (True, "bodies") and centres else np.zeros((0, 3)))
        self.points = np.array([self.p[link] for link in tree.links]
                               + ([] if self.total is None else [self.total]) + list(self.body))
        self.reach = max(self.reach, float(np.max(np.linalg.norm(self.points - root, axis=1))))


class _Figure:
    """The artists of one stick figure, updated in place from a _Pose."""

    def __init__(self, ax, tree, pose, *, com, labels, frames, color, style, frame_size):
        self.ax, self.tree, self.frame_size = ax, tree, frame_size
        color = "C0" if color is None else color
        style = {**SEGMENT_STYLE, **style}
        style.setdefault("color", color)
        self.moving = [link for link in tree.links if link != tree.root]
        self.segments = {}
        for link in self.moving:
            xyz = self._segment(pose, link)
            line, = ax.plot(*xyz, gid=f"link {link}", label=f"_link {link}", **style)
            self.segments[link] = line
        fixed = _fixed_links(tree)
        self.movable = [link for link in self.moving if link not in fixed]
        self.fixed = [link for link in self.moving if link in fixed]
        self.joints, = ax.plot(*self._origins(pose, self.movable), ls="none", marker="o", ms=6,
                               mfc="white", mec=style["color"], mew=1.5, gid="joints",
                               label="_joints")
        self.fixed_joints = None
        if self.fixed:
            self.fixed_joints, = ax.plot(*self._origins(pose, self.fixed), ls="none",
                                         marker="o", ms=3, color=style["color"],
                                         gid="fixed joints", label="_fixed joints")
        root = pose.p[tree.root]
        self.root, = ax.plot([root[0]], [root[1]], [root[2]], ls="none", marker="s", ms=9,
                             color="k", gid="root", label=f"root ({tree.root})")
        self.com = self.body_com = None
        if pose.total is not None:
            x = pose.total
            self.com, = ax.plot([x[0]], [x[1]], [x[2]], ls="none", marker="X", ms=10,
                                color="C3", mec="k", mew=0.5, gid="com",
                                label="centre of mass")
        if len(pose.body):
            self.body_com, = ax.plot(*pose.body.T, ls="none", marker="o", ms=4, color="C1",
                                     gid="body com", label="centres of mass of the bodies")
        self.labels = {}
        if labels:
            for link in tree.links:
                x = pose.p[link]
                self.labels[link] = ax.text(x[0], x[1], x[2], f"  {link}", fontsize=8,
                                            gid=f"label {link}")
        self.frames = {}
        if frames:
            for link in tree.links:
                self.frames[link] = [ax.plot(*self._axis(pose, link, k), color=c, lw=1.0,
                                             gid=f"frame {link}", label="_frame")[0]
                                     for k, c in enumerate(("r", "g", "b"))]

    def _segment(self, pose, link):
        a, b = pose.p[self.tree.parent_link(link)], pose.p[link]
        return [a[0], b[0]], [a[1], b[1]], [a[2], b[2]]

    @staticmethod
    def _origins(pose, links):
        x = np.array([pose.p[link] for link in links]).reshape(-1, 3)
        return x[:, 0], x[:, 1], x[:, 2]

    def _axis(self, pose, link, k):
        a = pose.p[link]
        b = a + self.frame_size * pose.R[link][:, k]
        return [a[0], b[0]], [a[1], b[1]], [a[2], b[2]]

    def update(self, pose):
        for link, line in self.segments.items():
            line.set_data_3d(*self._segment(pose, link))
        self.joints.set_data_3d(*self._origins(pose, self.movable))
        if self.fixed_joints is not None:
            self.fixed_joints.set_data_3d(*self._origins(pose, self.fixed))
        if self.com is not None:
            self.com.set_data_3d([pose.total[0]], [pose.total[1]], [pose.total[2]])
        if self.body_com is not None:
            self.body_com.set_data_3d(*pose.body.T)
        for link, text in self.labels.items():
            x = pose.p[link]
            text.set_position((x[0], x[1]))
            text.set_3d_properties(x[2], None)
        for link, lines in self.frames.items():
            for k, line in enumerate(lines):
                line.set_data_3d(*self._axis(pose, link, k))

    def artists(self):
        out = list(self.segments.values()) + [self.joints, self.root]
        out += [a for a in (self.fixed_joints, self.com, self.body_com) if a is not None]
        out += list(self.labels.values()) + [ln for lines in self.frames.values() for ln in lines]
        return out


def _check_com(com):
    if com not in (False, None, True, "total", "bodies"):
        raise ValueError(f"com must be True, False, 'total' or 'bodies', got {com!r}")


def _new_axes(ax):
    if ax is not None:
        if getattr(ax, "name", None) != "3d":
            raise ValueError("ax must be a 3-D axes (projection='3d'), got a "
                             f"{getattr(ax, 'name', type(ax).__name__)!r} axes")
        return ax
    fig = _plt().figure(figsize=(6.4, 6.0))
    return fig.add_subplot(111, projection="3d")


def _set_limits(ax, limits, points, root, reach):
    """Axes limits from ``limits`` (see draw), a cube drawn as a cube.  points (m, 3): what is
    drawn (over all frames); root: the root's origin; reach: the tree's (m)."""
    if limits is False:
        return
    if limits is None:                  # the drawn points' bounding box, made a cube
        lo, hi = points.min(axis=0), points.max(axis=0)
        centre, half = (lo + hi) / 2, 1.1 * float(np.max(hi - lo)) / 2 + 0.05 * reach
    elif isinstance(limits, str):
        if limits != "reach":
            raise ValueError(f"limits must be None, 'reach', a half-width in m or False, got "
                             f"{limits!r}")
        centre, half = root, 1.05 * reach
    else:
        centre, half = root, float(limits)
        if not (half > 0 and math.isfinite(half)):
            raise ValueError(f"limits must be None, 'reach', a positive half-width in m or "
                             f"False, got {limits!r}")
    if not (half > 0 and math.isfinite(half)):
        half = 1.0
    for k, setter in enumerate((ax.set_xlim, ax.set_ylim, ax.set_zlim)):
        setter(centre[k] - half, centre[k] + half)
    ax.set_box_aspect((1.0, 1.0, 1.0))
    ax.set_xlabel("x [m]")
    ax.set_ylabel("y [m]")
    ax.set_zlabel("z [m]")


def draw(tree_or_system, q, ax=None, *, com=False, labels=False, color=None, frames=False,
         limits=None, **style):
    """Draw the tree at coordinates ``q`` as a 3-D stick figure; returns the axes.

    Parameters
    ----------
    tree_or_system : multibody.Tree, or a system made from one
        A Tree, or what ``Tree.system()`` and ``multibody.from_urdf`` return
        (its ``.tree`` is drawn).
    q : array_like (n,)
        The joint coordinates, in ``tree.coordinates``' order (rad for
        revolute and continuous joints, m for prismatic ones).  Any other
        length is a ValueError that names n.
    ax : matplotlib 3-D axes, optional
        Drawn into (``fig.add_subplot(projection="3d")``); a new figure's
        by default.
    com : bool or str
        True: the whole tree's centre of mass (``tree.com(q)``, a red cross;
        the moving links only) and that of every link with mass in
        ``tree.bodies`` (orange dots; the root and the links fixed to it
        included); ``"total"`` or ``"bodies"``: one of the two.
    labels : bool
        Write each link's name at its frame's origin.
    color : matplotlib colour, optional
        Of the segments and the joints' dots (default ``"C0"``).
    frames : bool
        Draw the axes of every link frame (x red, y green, z blue), a tenth of
        the reach long.
    limits : None, "reach", float or False
        The cube shown (one scale on x, y, z).  None: about the drawn
        points -- link origins, centres of mass -- their bounding box's
        largest side, 10 % more, plus a twentieth of the reach; ``"reach"``:
        centred on the root's origin, of half-width the reach 5 % more (the
        same cube at every q when every joint is revolute: to compare
        poses); a number: that half-width (m) about the root's origin;
        False: leave the axes' limits as they are (to draw several poses
        into one axes, set them with the first).
    **style
        Passed to ``ax.plot`` for the segments (``lw``, ``alpha``, ``ls``,
        ...; default ``lw=2.5``).

    The figure is in the world (root) frame, in m, with one scale on the three
    axes (``set_box_aspect``).  Each artist has a ``gid`` (the module's doc):
    the segment ending at link L is the Line3D with gid ``"link L"``, from the
    origin of L's parent frame to L's origin.
    """
    tree = _tree_of(tree_or_system)
    q = _coordinates(q, tree)
    _check_com(com)
    ax = _new_axes(ax)
    pose = _Pose(tree, q, com, _centres(tree) if com in (True, "bodies") else [])
    _Figure(ax, tree, pose, com=com, labels=labels, frames=frames, color=color, style=style,
            frame_size=0.1 * max(pose.reach, 1e-3))
    _set_limits(ax, limits, pose.points, pose.p[tree.root], pose.reach)
    return ax


def _frames(traj_or_Q, t, fps, speed, n):
    """(times (k,), Q (k, n)) of the frames."""
    if not (fps > 0 and math.isfinite(fps)):
        raise ValueError(f"fps must be a positive number of frames per second, got {fps!r}")
    if not (speed > 0 and math.isfinite(speed)):
        raise ValueError(f"speed must be positive (seconds of motion per second of film), got "
                         f"{speed!r}")
    if hasattr(traj_or_Q, "q") and hasattr(traj_or_Q, "t"):
        traj = traj_or_Q
        tt, Q = np.asarray(traj.t, dtype=float), np.asarray(traj.q, dtype=float)
        if Q.ndim != 2 or Q.shape[1] != n:
            raise ValueError(f"the trajectory's q must have {n} columns, one per coordinate of "
                             f"the tree, got shape {Q.shape}")
        if t is None:
            t = _grid(tt[0], tt[-1], fps / speed)
        t = np.atleast_1d(np.asarray(t, dtype=float))
        try:                                  # the scheme's own dense output
            return t, np.asarray(traj.dense(t), dtype=float).reshape(len(t), n)
        except (AttributeError, ValueError, KeyError, TypeError):
            return t, _interpolate(tt, Q, t)  # e.g. store_every > 1 or t_eval rows
    Q = np.asarray(traj_or_Q, dtype=float)
    if Q.ndim == 1 and n == 1:
        Q = Q[:, None]
    if Q.ndim != 2 or Q.shape[1] != n:
        raise ValueError(f"Q must be an array (k, {n}), one column per coordinate of the tree, "
                         f"got shape {Q.shape}")
    if t is None:                             # one frame per row
        return np.arange(len(Q)) * (speed / fps), Q
    tt = np.asarray(t, dtype=float)
    if tt.shape != (len(Q),):
        raise ValueError(f"t must hold one time per row of Q ({len(Q)}), got shape {tt.shape}")
    if len(tt) > 1 and np.any(np.diff(tt) <= 0):
        raise ValueError("the times t must increase")
    times = _grid(tt[0], tt[-1], fps / speed)
    return times, _interpolate(tt, Q, times)


def _grid(t0, t1, rate):
    """t0, t0 + 1/rate, ... up to t1 (included when it falls on the grid)."""
    k = int(math.floor((t1 - t0) * rate * (1 + 1e-12) + 1e-9)) + 1
    return np.minimum(t0 + np.arange(max(k, 1)) / rate, t1)


def _interpolate(tt, Q, times):
    if len(tt) == 1:
        return np.repeat(Q[:1], len(times), axis=0)
    return np.column_stack([np.interp(times, tt, Q[:, j]) for j in range(Q.shape[1])]) \
        if Q.shape[1] else np.zeros((len(times), 0))


def animate(tree_or_system, traj_or_Q, t=None, *, fps=30, filename=None, ax=None, trail=None,
            speed=1.0, com=False, labels=False, color=None, frames=False, limits=None,
            time_label=True, **style):
    """An animation of the tree's stick figure (:func:`draw`) along a motion.

    Returns a ``matplotlib.animation.FuncAnimation``; keep a reference to it
    until it has been shown or saved.  In Jupyter, show it with
    ``from IPython.display import HTML; HTML(anim.to_jshtml())`` (and
    ``plt.close(anim.ax.figure)`` first, so that the notebook does not also
    show the still figure); in a script, ``plt.show()`` plays it; or give
    ``filename``.

    Parameters
    ----------
    tree_or_system : multibody.Tree, or a system made from one
        As for :func:`draw`.
    traj_or_Q : Trajectory or array_like (k, n)
        A :class:`symplectic.Trajectory` of the tree's system: the frames are
        at t0, t0 + speed/fps, ... up to its end, where q comes from the
        scheme's dense output (``traj.dense``; linear interpolation between
        the rows of a trajectory without it, e.g. ``store_every > 1``), so
        the film plays in real time at ``speed=1``.  Or an array of
        coordinates, one row per configuration (columns in
        ``tree.coordinates``' order): with ``t`` (k,) (s, increasing) they
        are resampled the same way (linear interpolation); without, each row
        is a frame.
    t : array_like, optional
        The times of Q's rows (s); for a Trajectory, the times of the frames
        instead of the regular grid.
    fps : float
        Frames per second of the film; the motion is sampled at that rate
        (times speed).  A duration D gives floor(D fps / speed) + 1 frames.
    filename : str or path, optional
        Also save the film there: ``.gif`` with the Pillow writer, ``.mp4``
        with ffmpeg (a RuntimeError naming the writer when matplotlib cannot
        use it), ``.html`` as ``to_jshtml()``'s page.
    ax : matplotlib 3-D axes, optional
        Drawn into; a new figure's by default.
    trail : None, True, str or (str, (3,))
        Trace the path of a point: True the origin of the last link of
        ``tree.links``, a link name its origin, (link, point) a point given
        in that link's frame (m).
    speed : float
        Seconds of motion per second of film (2: twice as fast).
    com, labels, color, frames, **style
        As for :func:`draw`.
    limits : None, "reach", float or False
        As for :func:`draw`, over all the frames (the trail included): the
        limits do not change during the film.
    time_label : bool
        Show the time of each frame, "t = ... s", in a corner.

    The animation carries its axes as ``anim.ax`` and the frames' times and
    coordinates as ``anim.times`` (k,) and ``anim.Q`` (k, n).
    """
    animation = _optional.load("matplotlib.animation",
                               "symplectic.multibody's animations need matplotlib", "plot",
                               "matplotlib")
    tree = _tree_of(tree_or_system)
    n = len(tree.coordinates)
    _check_com(com)
    times, Q = _frames(traj_or_Q, t, fps, speed, n)
    if len(times) == 0:
        raise ValueError("no frames to draw: the motion is empty")
    suffix = None if filename is None else _writer_check(animation, filename)
    spec = _trail_spec(tree, trail)
    centres = _centres(tree) if com in (True, "bodies") else []
    poses = [_Pose(tree, q, com, centres) for q in Q]
    reach = max(p.reach for p in poses)
    root = poses[0].p[tree.root]
    path = None
    if spec is not None:
        link, point = spec
        path = np.array([p.R[link] @ point + p.p[link] for p in poses])
        reach = max(reach, float(np.max(np.linalg.norm(path - root, axis=1))))

    ax = _new_axes(ax)
    fig = ax.get_figure()
    figure = _Figure(ax, tree, poses[0], com=com, labels=labels, frames=frames, color=color,
                     style=style, frame_size=0.1 * max(reach, 1e-3))
    trail_line = None
    if path is not None:
        trail_line, = ax.plot(path[:1, 0], path[:1, 1], path[:1, 2], color="0.45", lw=1.0,
                              gid="trail", label=f"path of {spec[0]}")
    stamp = ax.text2D(0.02, 0.95, "", transform=ax.transAxes, gid="time") if time_label else None
    points = np.concatenate([p.points for p in poses] + ([] if path is None else [path]))
    _set_limits(ax, limits, points, root, reach)

    def update(k):
        figure.update(poses[k])
        if trail_line is not None:
            trail_line.set_data_3d(path[:k + 1, 0], path[:k + 1, 1], path[:k + 1, 2])
        if stamp is not None:
            stamp.set_text(f"t = {times[k]:.2f} s")
        return figure.artists()

    update(0)
    anim = animation.FuncAnimation(fig, update, frames=len(times), interval=1000.0 / fps,
                                   blit=False, repeat=True)
    anim.ax, anim.times, anim.Q = ax, times, Q
    if filename is not None:
        _save(animation, anim, os.fspath(filename), suffix, fps)
    return anim


_WRITERS = {".gif": "pillow", ".mp4": "ffmpeg", ".html": None}


def _writer_check(animation, filename):
    """The suffix of ``filename``, once its writer is known to be there (before any drawing)."""
    suffix = os.path.splitext(os.fspath(filename))[1].lower()
    if suffix not in _WRITERS:
        raise ValueError(f"filename must end in .gif, .mp4 or .html, got {filename!r}")
    name = _WRITERS[suffix]
    if name is not None and not animation.writers.is_available(name):
        need = ("the Pillow package (pip install pillow)" if name == "pillow" else
                "the ffmpeg program on PATH (or rcParams['animation.ffmpeg_path'])")
        other = "save a .mp4 with ffmpeg" if name == "pillow" else "save a .gif (Pillow)"
        raise RuntimeError(f"saving {suffix} needs matplotlib's {name!r} writer, which is not "
                           f"available here: install {need}, or {other}")
    return suffix


def _save(animation, anim, filename, suffix, fps):
    if suffix == ".html":
        with open(filename, "w", encoding="utf-8") as f:
            f.write(anim.to_jshtml(fps=fps))
        return
    anim.save(filename, writer=animation.writers[_WRITERS[suffix]](fps=fps))
