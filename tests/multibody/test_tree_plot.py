"""multibody.draw and multibody.animate draw the tree they are given: the segments end at the
link origins, one per link but the root, on axes of one scale; films have the frames their
duration and rate ask for and save to .gif (Agg backend).

Most tests use a stand-in tree written here from the contract's conventions (rotations by
Rodrigues' formula, no code of the package), so that the drawing is checked on its own; the
last ones draw a real multibody.Tree."""
import gc
import math
import pathlib
import subprocess
import sys
import types

import numpy as np
import pytest

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")

import matplotlib.animation as mpl_animation  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402

import symplectic as sp  # noqa: E402
from symplectic.multibody import _plot  # noqa: E402

# the films made only to count or inspect their frames are never rendered
pytestmark = pytest.mark.filterwarnings("ignore:Animation was deleted without rendering")


# ---------------------------------------------------------------- a stand-in tree

def _rotation(axis, angle):
    """Rotation by ``angle`` about the unit vector ``axis`` (Rodrigues)."""
    k = np.asarray(axis, float) / np.linalg.norm(axis)
    K = np.array([[0, -k[2], k[1]], [k[2], 0, -k[0]], [-k[1], k[0], 0]])
    return np.eye(3) + math.sin(angle) * K + (1 - math.cos(angle)) * K @ K


class StandInTree:
    """The part of the Tree API the pictures use.  joints: (name, type, parent, child, xyz,
    axis) in document order (depth first); no rpy (every joint frame parallel to its parent's at
    q = 0); bodies: {link: (mass, com in the link frame)}."""

    def __init__(self, root, joints, bodies=None):
        self.root = root
        self._joints = {j[3]: j for j in joints}                # by child link
        self.links = (root,) + tuple(j[3] for j in joints)
        self.coordinates = tuple(j[0] for j in joints if j[1] != "fixed")
        self._bodies = bodies or {}
        self.bodies = [types.SimpleNamespace(name=k, mass=m, com=np.asarray(c, float))
                       for k, (m, c) in self._bodies.items()]

    def parent_link(self, link):
        return None if link == self.root else self._joints[link][2]

    def link_pose(self, link, q):
        if link == self.root:
            return np.eye(3), np.zeros(3)
        name, kind, parent, _, xyz, axis = self._joints[link]
        R, p = self.link_pose(parent, q)
        p = p + R @ np.asarray(xyz, float)
        if kind == "fixed":
            return R, p
        qj = q[self.coordinates.index(name)]
        if kind == "prismatic":
            return R, p + R @ (qj * np.asarray(axis, float) / np.linalg.norm(axis))
        return R @ _rotation(axis, qj), p

    def com(self, q):
        total = sum(m for m, _ in self._bodies.values())
        return sum(m * (self.link_pose(k, q)[0] @ c + self.link_pose(k, q)[1])
                   for k, (m, c) in self._bodies.items()) / total


L1, L2 = 0.9, 0.6          # m


def planar_chain():
    """Two revolute joints about y, links of L1 and L2 along x, a tip fixed at the end."""
    return StandInTree("base", [
        ("shoulder", "revolute", "base", "upper", (0, 0, 0), (0, 1, 0)),
        ("elbow", "revolute", "upper", "fore", (L1, 0, 0), (0, 1, 0)),
        ("tip_joint", "fixed", "fore", "tip", (L2, 0, 0), (1, 0, 0)),
    ], bodies={"upper": (2.0, (L1 / 2, 0, 0)), "fore": (1.0, (L2 / 2, 0, 0))})


def chain_origins(q):
    """The link origins of planar_chain by hand: a rotation by q about y takes x to
    (cos q, 0, -sin q)."""
    q1, q2 = q
    e1 = np.array([math.cos(q1), 0, -math.sin(q1)])
    e12 = np.array([math.cos(q1 + q2), 0, -math.sin(q1 + q2)])
    return {"base": np.zeros(3), "upper": np.zeros(3), "fore": L1 * e1,
            "tip": L1 * e1 + L2 * e12}


def branched_tree():
    """A torso on a vertical slider with two arms (two joints each) and a fixed head."""
    return StandInTree("ground", [
        ("lift", "prismatic", "ground", "torso", (0, 0, 0.2), (0, 0, 1)),
        ("l_shoulder", "revolute", "torso", "l_upper", (0, 0.3, 0.5), (0, 1, 0)),
        ("l_elbow", "revolute", "l_upper", "l_fore", (0.4, 0, 0), (0, 0, 1)),
        ("r_shoulder", "revolute", "torso", "r_upper", (0, -0.3, 0.5), (0, 1, 0)),
        ("r_elbow", "revolute", "r_upper", "r_fore", (0.4, 0, 0), (0, 0, 1)),
        ("neck", "fixed", "torso", "head", (0, 0, 0.7), (1, 0, 0)),
    ], bodies={"torso": (10.0, (0, 0, 0.3)), "l_fore": (1.0, (0.2, 0, 0)),
               "r_fore": (1.0, (0.2, 0, 0)), "head": (3.0, (0, 0, 0.1))})


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")
    gc.collect()            # the films' figures now, while the test's warning filter holds


def segments(ax):
    """{link: (2, 3) end points} of the segments drawn in ax."""
    out = {}
    for line in ax.lines:
        gid = line.get_gid() or ""
        if gid.startswith("link "):
            out[gid[5:]] = np.array(line.get_data_3d(), float).T
    return out


def line(ax, gid):
    found = [ln for ln in ax.lines if ln.get_gid() == gid]
    assert len(found) == 1, gid
    return np.array(found[0].get_data_3d(), float).T


# ---------------------------------------------------------------- draw

def test_segments_end_at_the_link_origins_of_a_planar_chain():
    tree = planar_chain()
    q = np.array([0.7, -1.2])
    ax = _plot.draw(tree, q)
    hand = chain_origins(q)
    for link in ("upper", "fore", "tip"):           # the hand formulas are the stand-in's poses
        assert np.allclose(tree.link_pose(link, q)[1], hand[link], atol=1e-14)
    seg = segments(ax)
    assert set(seg) == {"upper", "fore", "tip"}
    for link, ends in seg.items():
        assert np.allclose(ends[0], hand[tree.parent_link(link)], atol=1e-14), link
        assert np.allclose(ends[1], hand[link], atol=1e-14), link
    joints = line(ax, "joints")
    assert np.allclose(joints, [hand[k] for k in ("upper", "fore", "tip")], atol=1e-14)
    assert np.allclose(line(ax, "root"), [[0, 0, 0]])


def test_a_branched_tree_draws_one_segment_per_non_root_link():
    tree = branched_tree()
    q = np.array([0.15, 0.4, -0.8, -0.3, 1.1])
    ax = _plot.draw(tree, q)
    seg = segments(ax)
    assert sorted(seg) == sorted(tree.links[1:])
    for link, ends in seg.items():
        assert np.allclose(ends[0], tree.link_pose(tree.parent_link(link), q)[1], atol=1e-14)
        assert np.allclose(ends[1], tree.link_pose(link, q)[1], atol=1e-14)
    # the slider moved the torso up by q_lift
    assert np.allclose(seg["torso"][1], [0, 0, 0.2 + 0.15])


def test_the_axes_are_a_cube_about_the_drawing_or_sized_by_the_reach():
    tree = planar_chain()
    q = [0.3, 0.2]
    ax = _plot.draw(tree, q)
    pts = np.array([chain_origins(q)[k] for k in tree.links])
    lo, hi = pts.min(axis=0), pts.max(axis=0)
    half = 1.1 * np.max(hi - lo) / 2 + 0.05 * (L1 + L2)
    for k, lim in enumerate((ax.get_xlim(), ax.get_ylim(), ax.get_zlim())):
        assert np.allclose(lim, ((lo[k] + hi[k]) / 2 - half, (lo[k] + hi[k]) / 2 + half))
    aspect = np.asarray(ax.get_box_aspect(), float)
    assert np.allclose(aspect / aspect[0], 1.0)
    assert [ax.get_xlabel(), ax.get_ylabel(), ax.get_zlabel()] == ["x [m]", "y [m]", "z [m]"]
    # "reach": about the root, the longest path of segments, the same at every q (revolute)
    half = 1.05 * (L1 + L2)
    for q in ([0.3, 0.2], [2.0, -2.5]):
        ax = _plot.draw(tree, q, limits="reach")
        for lim in (ax.get_xlim(), ax.get_ylim(), ax.get_zlim()):
            assert np.allclose(lim, (-half, half))
    # a number is the half-width about the root; False keeps the limits
    assert np.allclose(_plot.draw(tree, [0, 0], limits=3.0).get_ylim(), (-3, 3))
    ax = _plot.draw(tree, [0, 0], limits=3.0)
    _plot.draw(tree, [1.0, 1.0], ax=ax, limits=False, color="C2")
    assert np.allclose(ax.get_xlim(), (-3, 3))
    assert sum((ln.get_gid() or "").startswith("link ") for ln in ax.lines) == 6
    for bad in (-1.0, "tight"):
        with pytest.raises(ValueError, match="limits must be"):
            _plot.draw(tree, [0, 0], limits=bad)


def test_centres_of_mass_labels_and_frames():
    tree = branched_tree()
    q = np.array([0.1, 0.5, 0.2, -0.4, 0.9])
    ax = _plot.draw(tree, q, com=True, labels=True, frames=True)
    assert np.allclose(line(ax, "com"), [tree.com(q)])
    body = line(ax, "body com")
    expected = [tree.link_pose(k, q)[0] @ c + tree.link_pose(k, q)[1]
                for k, (_, c) in tree._bodies.items()]
    assert np.allclose(body, expected)
    texts = {t.get_gid(): t.get_text().strip() for t in ax.texts}
    assert texts == {f"label {k}": k for k in tree.links}
    frames = [ln for ln in ax.lines if (ln.get_gid() or "").startswith("frame ")]
    assert len(frames) == 3 * len(tree.links)
    ax = _plot.draw(tree, q, com="total")
    assert [ln.get_gid() for ln in ax.lines].count("body com") == 0
    assert np.allclose(line(ax, "com"), [tree.com(q)])


def test_a_system_with_a_tree_is_drawn_as_its_tree():
    tree = planar_chain()
    system = types.SimpleNamespace(tree=tree)
    q = [0.4, 0.4]
    a, b = segments(_plot.draw(system, q)), segments(_plot.draw(tree, q))
    assert all(np.array_equal(a[k], b[k]) for k in a)
    with pytest.raises(TypeError, match="multibody.Tree"):
        _plot.draw(sp.systems.pendulum(), [0.1])


def test_a_wrong_q_length_is_a_value_error_naming_the_expected_length():
    tree = planar_chain()
    with pytest.raises(ValueError, match=r"q must have 2 values.*shoulder, elbow.*\(3,\)"):
        _plot.draw(tree, [0.1, 0.2, 0.3])
    with pytest.raises(ValueError, match="2 values"):
        _plot.draw(tree, 0.1)
    with pytest.raises(ValueError, match=r"Q must be an array \(k, 2\)"):
        _plot.animate(tree, np.zeros((5, 3)))
    with pytest.raises(ValueError, match="2 columns"):
        _plot.animate(tree, types.SimpleNamespace(t=np.arange(4.0), q=np.zeros((4, 1))))
    with pytest.raises(ValueError, match="3-D axes"):
        _plot.draw(tree, [0, 0], ax=plt.figure().add_subplot(111))


# ---------------------------------------------------------------- animate

def test_animate_has_one_frame_per_1_over_fps_of_the_duration():
    tree = planar_chain()
    k = 41
    t = np.linspace(0.0, 2.0, k)
    Q = np.column_stack([np.sin(t), np.cos(t)])
    anim = _plot.animate(tree, Q, t, fps=10)
    assert isinstance(anim, mpl_animation.FuncAnimation)
    assert len(list(anim.new_frame_seq())) == 21              # 2 s at 10 frames/s, both ends
    assert np.allclose(anim.times, np.arange(21) / 10)
    assert np.allclose(anim.Q, np.column_stack([np.interp(anim.times, t, Q[:, 0]),
                                                 np.interp(anim.times, t, Q[:, 1])]))
    assert len(list(_plot.animate(tree, Q, t, fps=24).new_frame_seq())) == 49
    assert len(list(_plot.animate(tree, Q, t, fps=10, speed=2).new_frame_seq())) == 11
    assert len(list(_plot.animate(tree, Q).new_frame_seq())) == k     # no t: a row a frame


def test_animate_resamples_a_trajectory_with_its_dense_output():
    tree = planar_chain()
    traj = sp.integrate(sp.systems.pendulum_chain(2), [1.0, 0.5], [0.0, 0.0], 0.01, 150)
    anim = _plot.animate(tree, traj, fps=25)
    assert len(list(anim.new_frame_seq())) == 38              # 1.5 s at 25 frames/s
    assert np.allclose(anim.Q, traj.dense(np.arange(38) / 25), atol=0, rtol=0)
    # a trajectory without dense output (store_every > 1): interpolated between its rows
    thin = sp.integrate(sp.systems.pendulum_chain(2), [1.0, 0.5], [0.0, 0.0], 0.01, 150,
                        store_every=10)
    anim = _plot.animate(tree, thin, fps=25)
    assert len(anim.times) == 38
    assert np.allclose(anim.Q[:, 0], np.interp(anim.times, thin.t, thin.q[:, 0]))


def test_the_limits_hold_the_whole_motion():
    tree = branched_tree()
    t = np.linspace(0, 1, 11)
    Q = np.zeros((11, 5))
    Q[:, 0] = np.linspace(0, 1.5, 11)                         # the slider rises 1.5 m
    anim = _plot.animate(tree, Q, t, fps=10)
    ax = anim.ax
    bottom, top = 0.0, tree.link_pose("head", Q[-1])[1][2]      # root; head at the end
    assert ax.get_zlim()[0] < bottom and ax.get_zlim()[1] > top
    assert np.allclose(np.ptp(ax.get_xlim()), np.ptp(ax.get_zlim()))
    ax = _plot.animate(tree, Q, t, fps=10, limits="reach").ax
    reach = 0.2 + 1.5 + math.hypot(0.3, 0.5) + 0.4              # to a hand, at the end
    assert np.allclose(ax.get_zlim(), (-1.05 * reach, 1.05 * reach))


def test_saving_a_gif_writes_every_frame_and_leaves_the_last(tmp_path):
    tree = planar_chain()
    t = np.linspace(0.0, 1.0, 11)
    Q = np.column_stack([t, -2 * t])
    path = tmp_path / "chain.gif"
    anim = _plot.animate(tree, Q, t, fps=8, filename=path, trail=True, com=True, labels=True)
    data = path.read_bytes()
    assert len(data) > 1000 and data[:4] == b"GIF8"
    from PIL import Image
    with Image.open(path) as im:
        assert im.n_frames == 9                                 # 1 s at 8 frames/s
    # after the save the figure shows the last frame, and the trail the whole path of the tip
    ax = anim.ax
    last = chain_origins(anim.Q[-1])
    assert np.allclose(segments(ax)["tip"][1], last["tip"])
    assert np.allclose(line(ax, "com"), [tree.com(anim.Q[-1])])
    labels = {t.get_gid(): t.get_position_3d() for t in ax.texts
              if t.get_gid().startswith("label ")}
    assert np.allclose(labels["label fore"], last["fore"])
    trail = line(ax, "trail")
    assert np.allclose(trail, [chain_origins(q)["tip"] for q in anim.Q])
    assert [t.get_text() for t in ax.texts if t.get_gid() == "time"] == ["t = 1.00 s"]


def test_the_trail_of_a_point_in_a_link_frame(tmp_path):
    tree = planar_chain()
    Q = np.array([[0.0, 0.0], [0.5, 0.5], [1.0, 1.0]])
    anim = _plot.animate(tree, Q, trail=("fore", (L2 / 2, 0, 0)))
    anim.save(tmp_path / "t.gif", writer="pillow", fps=5)
    expected = [tree.link_pose("fore", q)[1] + tree.link_pose("fore", q)[0] @ [L2 / 2, 0, 0]
                for q in Q]
    assert np.allclose(line(anim.ax, "trail"), expected)
    with pytest.raises(ValueError, match="no link 'hand'"):
        _plot.animate(tree, Q, trail="hand")


def test_a_missing_writer_and_a_wrong_suffix_are_named(monkeypatch, tmp_path):
    tree = planar_chain()
    Q = np.zeros((3, 2))
    monkeypatch.setattr(mpl_animation.writers, "is_available", lambda name: False)
    with pytest.raises(RuntimeError, match="'ffmpeg' writer.*save a .gif"):
        _plot.animate(tree, Q, filename=tmp_path / "a.mp4")
    with pytest.raises(RuntimeError, match="'pillow' writer.*Pillow"):
        _plot.animate(tree, Q, filename=tmp_path / "a.gif")
    with pytest.raises(ValueError, match=r"\.gif, \.mp4 or \.html"):
        _plot.animate(tree, Q, filename=tmp_path / "a.avi")


def test_html_film(tmp_path):
    path = tmp_path / "a.html"
    _plot.animate(planar_chain(), np.zeros((3, 2)), filename=path)
    assert "<script" in path.read_text(encoding="utf-8")


# ---------------------------------------------------------------- matplotlib is optional

def test_the_module_imports_without_matplotlib_and_names_the_extra():
    code = ("import sys\n"
            "sys.modules['matplotlib'] = sys.modules['matplotlib.pyplot'] = None\n"
            "import symplectic.multibody\n"
            "from symplectic.multibody import _plot\n"
            "try:\n"
            "    _plot.draw(object(), [])\n"
            "except TypeError:\n"
            "    pass\n"
            "class T:\n"
            "    links = ('a',); root = 'a'; coordinates = ()\n"
            "    def parent_link(self, k): return None\n"
            "    def link_pose(self, k, q): return __import__('numpy').eye(3), [0.0, 0, 0]\n"
            "try:\n"
            "    _plot.draw(T(), [])\n"
            "except ImportError as e:\n"
            "    print(e)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert "symplectic-vi[plot]" in out.stdout and "matplotlib" in out.stdout


# ---------------------------------------------------------------- real trees

def real_chain():
    """planar_chain as a multibody.Tree (point masses at the middle of the links)."""
    from symplectic import multibody as mb
    return mb.Tree([mb.Body("base"), mb.Body("upper", 2.0, (L1 / 2, 0, 0)),
                    mb.Body("fore", 1.0, (L2 / 2, 0, 0)), mb.Body("tip", 0.5)],
                   [mb.Joint("shoulder", "revolute", "base", "upper", axis=(0, 1, 0)),
                    mb.Joint("elbow", "revolute", "upper", "fore", xyz=(L1, 0, 0),
                             axis=(0, 1, 0)),
                    mb.Joint("tip_joint", "fixed", "fore", "tip", xyz=(L2, 0, 0))],
                   name="chain")


def arm6():
    """A six-joint arm (pan, shoulder, elbow, three wrist joints) with a fixed tool, turned
    joint frames (rpy) included."""
    from symplectic import multibody as mb
    I = np.diag([0.02, 0.02, 0.01])
    bodies = [mb.Body("base", 4.0, (0, 0, 0.05), I), mb.Body("turret", 3.0, (0, 0, 0.1), I),
              mb.Body("upper_arm", 2.5, (0.2, 0, 0), I), mb.Body("forearm", 1.5, (0.2, 0, 0), I),
              mb.Body("wrist_1", 0.5, (0, 0, 0.03), I), mb.Body("wrist_2", 0.5, (0, 0, 0.03), I),
              mb.Body("flange", 0.3, (0, 0, 0.02), I), mb.Body("tool", 0.2, (0, 0, 0.05), I)]
    joints = [mb.Joint("pan", "revolute", "base", "turret", xyz=(0, 0, 0.15), axis=(0, 0, 1)),
              mb.Joint("shoulder", "revolute", "turret", "upper_arm", xyz=(0, 0, 0.2),
                       axis=(0, 1, 0)),
              mb.Joint("elbow", "revolute", "upper_arm", "forearm", xyz=(0.45, 0, 0),
                       axis=(0, 1, 0)),
              mb.Joint("wrist_pitch", "revolute", "forearm", "wrist_1", xyz=(0.4, 0, 0),
                       rpy=(0, math.pi / 2, 0), axis=(0, 1, 0)),
              mb.Joint("wrist_roll", "continuous", "wrist_1", "wrist_2", xyz=(0, 0, 0.08),
                       axis=(0, 0, 1)),
              mb.Joint("wrist_yaw", "revolute", "wrist_2", "flange", xyz=(0, 0, 0.06),
                       rpy=(math.pi / 2, 0, 0), axis=(0, 1, 0)),
              mb.Joint("tool_mount", "fixed", "flange", "tool", xyz=(0, 0.1, 0.05))]
    return mb.Tree(bodies, joints, name="arm6")


def real_branched():
    """A torso on a vertical slider, two two-joint arms turned by rpy, a fixed head."""
    from symplectic import multibody as mb
    I = np.diag([0.01, 0.01, 0.01])
    bodies = [mb.Body("ground"), mb.Body("torso", 10.0, (0, 0, 0.3), I)]
    joints = [mb.Joint("lift", "prismatic", "ground", "torso", xyz=(0, 0, 0.2), axis=(0, 0, 1))]
    for side, y, yaw in (("l", 0.3, 0.4), ("r", -0.3, -0.4)):
        bodies += [mb.Body(f"{side}_upper", 1.0, (0.15, 0, 0), I),
                   mb.Body(f"{side}_fore", 1.0, (0.2, 0, 0), I)]
        joints += [mb.Joint(f"{side}_shoulder", "revolute", "torso", f"{side}_upper",
                            xyz=(0, y, 0.5), rpy=(0, 0, yaw), axis=(0, 1, 0)),
                   mb.Joint(f"{side}_elbow", "revolute", f"{side}_upper", f"{side}_fore",
                            xyz=(0.3, 0, 0), axis=(0, 0, 1))]
    bodies.append(mb.Body("head", 3.0, (0, 0, 0.1), I))
    joints.append(mb.Joint("neck", "fixed", "torso", "head", xyz=(0, 0, 0.7)))
    return mb.Tree(bodies, joints, name="branched")


def test_a_real_chain_is_drawn_at_its_link_origins():
    tree = real_chain()
    q = np.array([0.7, -1.2])
    hand = chain_origins(q)
    for link in tree.links:
        assert np.allclose(tree.link_pose(link, q)[1], hand[link], atol=1e-14), link
    ax = _plot.draw(tree.system(), q, com=True)
    seg = segments(ax)
    assert sorted(seg) == ["fore", "tip", "upper"]
    for link, ends in seg.items():
        assert np.allclose(ends, [hand[tree.parent_link(link)], hand[link]], atol=1e-14), link
    # open circles at the two revolute joints, a small dot where the tip is fixed
    assert np.allclose(line(ax, "joints"), [hand["upper"], hand["fore"]], atol=1e-14)
    assert np.allclose(line(ax, "fixed joints"), [hand["tip"]], atol=1e-14)
    assert np.allclose(line(ax, "com"), [tree.com(q)])
    expected = [tree.point(b.name, q, b.com) for b in tree.bodies if b.mass > 0]
    assert np.allclose(line(ax, "body com"), expected)
    with pytest.raises(ValueError, match=r"q must have 2 values.*shoulder, elbow"):
        _plot.draw(tree, [0.1])


def test_real_trees_with_turned_joint_frames_draw_one_segment_per_link():
    for tree, q in ((real_branched(), [0.3, 0.5, -0.7, 0.2, 1.0]),
                    (arm6(), [0.4, -0.6, 1.1, 0.3, -0.8, 0.5])):
        ax = _plot.draw(tree, q, labels=True)
        seg = segments(ax)
        assert sorted(seg) == sorted(tree.links[1:]), tree.name
        for link, ends in seg.items():
            assert np.allclose(ends[0], tree.link_pose(tree.parent_link(link), q)[1])
            assert np.allclose(ends[1], tree.link_pose(link, q)[1])
        assert len(line(ax, "joints")) == tree.n
        lo = np.array([ax.get_xlim()[0], ax.get_ylim()[0], ax.get_zlim()[0]])
        hi = np.array([ax.get_xlim()[1], ax.get_ylim()[1], ax.get_zlim()[1]])
        for link in tree.links:
            x = tree.link_pose(link, q)[1]
            assert np.all(x > lo) and np.all(x < hi), link


def test_a_film_of_a_real_run(tmp_path):
    tree = arm6()
    system = tree.system()
    q0 = np.array([0.0, -0.3, 0.8, 0.2, 0.0, 0.3])
    traj = sp.integrate(system, q0, np.zeros(6), 0.005, 200)          # 1 s of falling
    path = tmp_path / "arm.gif"
    anim = _plot.animate(system, traj, fps=20, filename=path, trail=True)
    assert len(list(anim.new_frame_seq())) == 21
    assert np.allclose(anim.Q, traj.dense(anim.times), atol=0, rtol=0)
    assert path.stat().st_size > 1000
    ax = anim.ax
    tip = [tree.link_pose("tool", q)[1] for q in anim.Q]
    assert np.allclose(line(ax, "trail"), tip)
    assert np.allclose(segments(ax)["tool"][1], tip[-1])


def test_urdf_robots_through_the_public_names(tmp_path):
    from symplectic import multibody
    assert multibody.draw is _plot.draw and multibody.animate is _plot.animate
    data = pathlib.Path(__file__).resolve().parents[1] / "data" / "urdf"
    for name in ("arm6.urdf", "branched.urdf"):
        system = multibody.from_urdf(data / name)
        tree = system.tree
        q = np.linspace(-0.6, 0.9, system.n)
        seg = segments(multibody.draw(system, q, com=True, labels=True))
        assert sorted(seg) == sorted(tree.links[1:]), name
        for link, ends in seg.items():
            assert np.allclose(ends, [tree.link_pose(tree.parent_link(link), q)[1],
                                      tree.link_pose(link, q)[1]]), (name, link)
    Q = np.outer(np.linspace(0, 1, 6), q)
    anim = multibody.animate(system, Q, filename=tmp_path / "branched.gif")
    assert len(anim.times) == 6 and (tmp_path / "branched.gif").stat().st_size > 1000
