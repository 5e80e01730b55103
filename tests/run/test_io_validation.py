"""symplectic.load checks a file against its layout before it makes anything (issue 47).

A valid file with one field altered (np.savez) is a ValueError that names the file, the field,
what the layout wants and what the file has; the numbers the messages must state (rows, steps,
columns) are worked out here from the runs' own settings, not read back from the code.  Files
that are not trajectory files at all (truncated, foreign, .npy, text, pickles, object arrays)
are a ValueError that says so, without NumPy's allow_pickle advice.  And every kind of
trajectory that Trajectory.save writes still loads, every array bitwise.
(The round trips of each field and the system's rebuild: tests/run/test_io.py.)"""
import math
import pickle
import re
import zipfile

import numpy as np
import pytest

import symplectic as sp
from support.models import dp_callables

DP = sp.systems.double_pendulum()


# ---------------------------------------------------------------- helpers
def same_bits(a, b):
    """a and b are the same array to the bit (dtype, shape, bytes; nan-safe)."""
    a, b = np.asarray(a), np.asarray(b)
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


def assert_loaded_as_saved(tr, back):
    """Every array of ``back`` the one of ``tr``, bitwise; the scalars equal."""
    for name in ("t", "q", "p", "q_mid", "newton_iterations", "multipliers", "tangent",
                 "_qdot", "_energy", "_work", "_impulse"):
        x, y = getattr(tr, name), getattr(back, name)
        assert (x is None) == (y is None), name
        if x is not None:
            assert same_bits(x, y), name
    for name in ("t_events", "q_events", "p_events"):
        x, y = getattr(tr, name), getattr(back, name)
        assert (x is None) == (y is None), name
        if x is not None:
            assert len(x) == len(y) and all(same_bits(u, v) for u, v in zip(x, y)), name
    assert (back.method, back.status, back.message, back.store_every, back.t0) == (
        tr.method, tr.status, tr.message, tr.store_every, tr.t0)
    assert same_bits(back.h, tr.h) and back.counts == tr.counts


def crossing(t, q, p):
    return q[0]


crossing.terminal = 2


def early(t, q, p):
    return t - 0.05


early.terminal = True


def drive(t, q, qdot):
    return np.full(len(q), 0.1 * math.cos(t))


def quartic(q):
    return -q[0] ** 4


def quartic_grad(q):
    return -4 * q ** 3


def failed(**options):
    """The partial trajectory of a run that fails (Newton, as q runs off on -q^4)."""
    blow = sp.System(1, np.eye(1), quartic, potential_grad=quartic_grad)
    with pytest.raises(sp.ConvergenceError) as info:
        sp.integrate(blow, [1.0], [0.0], 0.05, 100, **options)
    return info.value.trajectory


def raised_midway(**options):
    """The partial trajectory of a run whose potential raises at its 151st call (once)."""
    calls = [0]

    def potential(q):
        calls[0] += 1
        if calls[0] == 151:
            raise RuntimeError("the potential gives up")
        return -np.cos(q[0])
    with pytest.raises(RuntimeError) as info:
        sp.integrate(sp.System(1, np.eye(1), potential), [1.0], [0.0], 0.01, 100, **options)
    return info.value.trajectory


def pieces():
    """The second piece of an Integrator with the tangent, thinned."""
    it = sp.Integrator(sp.systems.double_pendulum(damping=0.1), 0.01, [1.0, 2.0], [0, 0],
                       tangent=True)
    it.propagate(10)
    return it.propagate(7, store_every=3)


def resaved_without_system(tmp_path):
    """A trajectory of a Python-callables system, loaded (no system) from its file."""
    tr = sp.integrate(sp.System(2, **dp_callables()), [1.0, 2.0], [0, 0], 0.01, 20)
    tr.save(tmp_path / "first.npz", derived=False)
    return sp.load(tmp_path / "first.npz")


KINDS = {
    "plain": lambda tmp: sp.integrate(DP, [1.0, 2.0], [0, 0], 0.01, 60),
    "lobatto5 (3-d q_mid)": lambda tmp: sp.integrate(DP, [1.0, 2.0], [0, 0], 0.01, 20,
                                                     method="lobatto5"),
    "midpoint": lambda tmp: sp.integrate(DP, [1.0, 2.0], [0, 0], 0.01, 20, method="midpoint"),
    "rk4": lambda tmp: sp.integrate(DP, [1.0, 2.0], [0, 0], 0.01, 20, method="rk4"),
    "backward": lambda tmp: sp.integrate(DP, [1.0, 2.0], [0, 0], -0.01, 20, t0=1.0),
    "no steps": lambda tmp: sp.integrate(DP, [1.0, 2.0], [0, 0], 0.01, 0),
    "thinned": lambda tmp: sp.integrate(DP, [1.0, 2.0], [0, 0], 0.01, 47, store_every=5),
    "linear closed form, thinned": lambda tmp: sp.integrate(
        sp.systems.linear(np.eye(2), [[2.0, -1.0], [-1.0, 2.0]]), [1.0, 0.0], [0, 0], 0.1, 20,
        store_every=6),
    "t_eval": lambda tmp: sp.integrate(DP, [1.0, 2.0], [0, 0], 0.01, 50,
                                       t_eval=np.linspace(0.1, 0.45, 8)),
    "t_eval, stopped before its first time (no rows)": lambda tmp: sp.integrate(
        DP, [1.0, 2.0], [0, 0], 0.01, 50, t_eval=[0.3, 0.4], events=early),
    "terminal events": lambda tmp: sp.integrate(sp.systems.pendulum(), [1.0], [0.0], 0.01, 400,
                                                events=[crossing, crossing]),
    "events, thinned": lambda tmp: sp.integrate(sp.systems.pendulum(), [1.0], [0.0], 0.01, 400,
                                                events=crossing, store_every=7),
    "Python force": lambda tmp: sp.integrate(DP, [1.0, 2.0], [0, 0], 0.01, 20, force=drive),
    "held force and damping, thinned": lambda tmp: sp.integrate(
        DP, [1.0, 2.0], [0, 0], 0.01, 20, store_every=3,
        force=sp.forces.linear_damping(0.3, 2) + sp.forces.zero_order_hold(np.ones((20, 2)))),
    "force at the points (3-d hold)": lambda tmp: sp.integrate(
        DP, [1.0, 2.0], [0, 0], 0.01, 10, force=sp.forces.at_points(np.ones((10, 3, 2)))),
    "forced, t_eval": lambda tmp: sp.integrate(DP, [1.0, 2.0], [0, 0], 0.01, 50,
                                               t_eval=[0.1, 0.2], force=np.ones((50, 2))),
    "built-in damping": lambda tmp: sp.integrate(sp.systems.double_pendulum(damping=[0.1, 0.2]),
                                                 [1.0, 2.0], [0, 0], 0.01, 20),
    "constrained": lambda tmp: sp.integrate(sp.systems.pendulum_cartesian(), [1.0, 0.0], [0, 0],
                                            0.01, 30),
    "constrained lobatto4, thinned": lambda tmp: sp.integrate(
        sp.systems.pendulum_cartesian(), [1.0, 0.0], [0, 0], 0.01, 30, method="lobatto4",
        store_every=7),
    "constrained, t_eval": lambda tmp: sp.integrate(sp.systems.pendulum_cartesian(), [1.0, 0.0],
                                                    [0, 0], 0.01, 30, t_eval=[0.05, 0.1]),
    "tangent, thinned": lambda tmp: sp.integrate(sp.systems.double_pendulum(damping=0.1),
                                                 [1.0, 2.0], [0, 0], 0.01, 30, tangent=True,
                                                 store_every=4),
    "Integrator piece with tangent": lambda tmp: pieces(),
    "failed, partial": lambda tmp: failed(),
    "failed, partial, thinned, tangent": lambda tmp: failed(store_every=3, tangent=True),
    "callback raised, thinned": lambda tmp: raised_midway(store_every=4),
    "callback raised, t_eval": lambda tmp: raised_midway(t_eval=np.linspace(0, 0.9, 10)),
    "built by hand": lambda tmp: sp.Trajectory(None, "simpson", 0.1, np.zeros(1),
                                               np.zeros((1, 1)), np.zeros((1, 1)), None, None),
    "loaded without its system, saved again": resaved_without_system,
}


@pytest.mark.filterwarnings("ignore:Trajectory.*overflowed:RuntimeWarning")
@pytest.mark.parametrize("derived", [True, False])
@pytest.mark.parametrize("kind", KINDS, ids=list(KINDS))
def test_every_kind_of_trajectory_still_loads(tmp_path, kind, derived):
    tr = KINDS[kind](tmp_path)
    tr.save(tmp_path / "run.npz", derived=derived)
    assert_loaded_as_saved(tr, sp.load(tmp_path / "run.npz"))


def test_the_kinds_cover_what_the_rules_distinguish(tmp_path):
    """The runs above have the fields whose rules differ (a guard against a KINDS edit)."""
    made = {k: f(tmp_path) for k, f in KINDS.items()}
    assert made["thinned"].store_every == 5 and made["t_eval"].store_every is None
    assert len(made["t_eval, stopped before its first time (no rows)"].t) == 0
    assert made["lobatto5 (3-d q_mid)"].q_mid.ndim == 3 and made["midpoint"].q_mid is None
    assert made["constrained lobatto4, thinned"].multipliers.shape[1:] == (4, 1)
    assert made["failed, partial, thinned, tangent"].status == -1
    assert made["force at the points (3-d hold)"].force.hold.ndim == 3
    assert made["Integrator piece with tangent"].tangent.shape[1:] == (4, 4)


# ---------------------------------------------------------------- files with a field altered
#: The base runs of the altered files, and their rows and steps (worked out from the settings).
BASES = {
    "plain": (lambda: sp.integrate(DP, [1.0, 2.0], [0, 0], 0.01, 60)),     # 61 rows
    "thinned": (lambda: sp.integrate(DP, [1.0, 2.0], [0, 0], 0.01, 47, store_every=5)),
    "t_eval": (lambda: sp.integrate(DP, [1.0, 2.0], [0, 0], 0.01, 50,
                                    t_eval=np.linspace(0.1, 0.45, 8))),
    "midpoint": (lambda: sp.integrate(DP, [1.0, 2.0], [0, 0], 0.01, 30, method="midpoint")),
    "events": (lambda: sp.integrate(sp.systems.pendulum(), [1.0], [0.0], 0.01, 400,
                                    events=[crossing, crossing])),
    "forced": (lambda: sp.integrate(DP, [1.0, 2.0], [0, 0], 0.01, 20,
                                    force=sp.forces.linear_damping(0.3, 2)
                                    + sp.forces.zero_order_hold(np.ones((20, 2))))),
    "constrained": (lambda: sp.integrate(sp.systems.pendulum_cartesian(), [1.0, 0.0], [0, 0],
                                         0.01, 30)),
    "tangent": (lambda: sp.integrate(sp.systems.double_pendulum(damping=0.1), [1.0, 2.0],
                                     [0, 0], 0.01, 30, tangent=True, store_every=4)),
}
THINNED_ROWS = math.ceil(47 / 5) + 1          # the initial state, every 5th step and the last
TANGENT_ROWS = math.ceil(30 / 4) + 1


@pytest.fixture(scope="module")
def base_files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("bases")
    paths = {}
    for name, run in BASES.items():
        paths[name] = folder / f"{name}.npz"
        run().save(paths[name])
    return paths


def altered(base, folder, change):
    """The file ``base`` with the fields of ``change(d)`` replaced (None: removed)."""
    d = dict(np.load(base, allow_pickle=False))
    for k, v in change(d).items():
        if v is None:
            del d[k]
        else:
            d[k] = v
    path = folder / "altered.npz"
    np.savez(path, **d)
    return path


ints = np.int64
# (id, base, change, what the message says after "field")
ALTERED = [
    ("q rows", "plain", lambda d: {"q": d["q"][:50]},
     r"field 'q' has 50 rows, but 't' has 61 \(one row per stored time\)"),
    ("p columns", "plain", lambda d: {"p": np.zeros((61, 3))},
     r"field 'p' has shape \(61, 3\) \(layout \(rows, n\)\), but 'system_n' is 2"),
    ("t 2-d", "plain", lambda d: {"t": d["t"][:, None]},
     r"field 't' has shape \(61, 1\), but it must be \(rows,\) \(1-d\)"),
    ("t shorter", "plain", lambda d: {"t": d["t"][:50]},
     r"field 'q' has 61 rows, but 't' has 50 \(one row per stored time\)"),
    ("t empty", "plain", lambda d: {"t": np.zeros(0)},
     r"field 't' has 0 rows, but a run that stores steps \(store_every 1\) keeps at least its "
     r"initial state"),
    ("qdot rows", "plain", lambda d: {"qdot": d["qdot"][:-1]},
     r"field 'qdot' has 60 rows, but 't' has 61"),
    ("energy 2-d", "plain", lambda d: {"energy": d["energy"][:, None]},
     r"field 'energy' has shape \(61, 1\), but it must be \(rows,\)"),
    ("q_mid rows", "plain", lambda d: {"q_mid": d["q_mid"][:-1]},
     r"field 'q_mid' has 59 rows, but 't' has 61 rows, and there is one entry per interval "
     r"between consecutive rows \(60\)"),
    ("q_mid nodes", "plain", lambda d: {"q_mid": np.zeros((60, 2, 2))},
     r"field 'q_mid' has shape \(60, 2, 2\) .*but method 'simpson' has 1 internal node a step"),
    ("q_mid of midpoint", "midpoint", lambda d: {"q_mid": np.zeros((30, 2))},
     r"field 'q_mid' is present, but method 'midpoint' has no internal nodes"),
    ("q_mid thinned", "thinned", lambda d: {"q_mid": np.zeros((THINNED_ROWS - 1, 2))},
     r"field 'q_mid' is present, but it is stored only when every step is a row "
     r"\(store_every 1, not 5\)"),
    ("newton_iterations rows", "thinned",
     lambda d: {"newton_iterations": np.zeros(THINNED_ROWS, np.int32)},
     rf"field 'newton_iterations' has {THINNED_ROWS} rows, but 't' has {THINNED_ROWS} rows, "
     rf".*\({THINNED_ROWS - 1}\)"),
    ("newton_iterations dtype", "plain",
     lambda d: {"newton_iterations": d["newton_iterations"].astype(float)},
     r"field 'newton_iterations' has dtype float64, but it must be an integer dtype"),
    ("newton_iterations of t_eval", "t_eval",
     lambda d: {"newton_iterations": np.zeros(7, np.int32)},
     r"field 'newton_iterations' is present, but a file of t_eval rows \(store_every 0\) has "
     r"none"),
    ("multipliers nodes", "constrained", lambda d: {"multipliers": np.zeros((30, 2, 1))},
     r"field 'multipliers' has shape \(30, 2, 1\) .*but method 'simpson' has 3 nodes a step"),
    ("multipliers rows", "constrained", lambda d: {"multipliers": np.zeros((31, 3, 1))},
     r"field 'multipliers' has 31 rows, but 't' has 31 rows"),
    ("multipliers 2-d", "constrained", lambda d: {"multipliers": np.zeros((30, 3))},
     r"field 'multipliers' has shape \(30, 3\), but it must be \(rows - 1, s, m\) \(3-d\)"),
    ("tangent size", "tangent", lambda d: {"tangent": np.zeros((TANGENT_ROWS, 3, 4))},
     rf"field 'tangent' has shape \({TANGENT_ROWS}, 3, 4\) .*2n = 4"),
    ("tangent rows", "tangent", lambda d: {"tangent": d["tangent"][:-1]},
     rf"field 'tangent' has {TANGENT_ROWS - 1} rows, but 't' has {TANGENT_ROWS}"),
    ("work rows", "forced", lambda d: {"work": d["work"][:-1]},
     r"field 'work' has 20 rows, but 't' has 21"),
    ("impulse columns", "forced", lambda d: {"impulse": d["impulse"][:, :1]},
     r"field 'impulse' has shape \(21, 1\) .*'system_n' is 2"),
    ("event states", "events", lambda d: {"q_events_0": d["q_events_0"][:1]},
     r"field 'q_events_0' has 1 row, but 't_events_0' has 2 \(one row per crossing\)"),
    ("event missing", "events", lambda d: {"p_events_1": None},
     r"the required field 'p_events_1' is missing"),
    ("event beyond n_events", "events", lambda d: {"n_events": np.array(1, ints)},
     r"field '[tqp]_events_1' is present, but 'n_events' is 1 \(event functions 0 to 0\)"),
    ("events without n_events", "events", lambda d: {"n_events": None},
     r"field '[tqp]_events_\d' is present, but the file has no 'n_events'"),
    ("counts shape", "plain", lambda d: {"counts": d["counts"][:5]},
     r"field 'counts' has shape \(5,\), but it must be \(6,\)"),
    ("counts dtype", "plain", lambda d: {"counts": d["counts"].astype(float)},
     r"field 'counts' has dtype float64, but it must be an integer dtype"),
    ("counts steps", "thinned", lambda d: {"counts": np.r_[60, d["counts"][1:]]},
     rf"field 't' has {THINNED_ROWS} rows, but 'counts' gives 60 steps, of which store_every 5 "
     rf"keeps {60 // 5 + 1} rows"),
    ("store_every", "plain", lambda d: {"store_every": np.array(3, ints)},
     rf"field 't' has 61 rows, but 'counts' gives 60 steps, of which store_every 3 keeps "
     rf"{60 // 3 + 1} rows"),
    ("store_every negative", "plain", lambda d: {"store_every": np.array(-1, ints)},
     r"field 'store_every' is -1, but it must be >= 0"),
    ("q integers", "plain", lambda d: {"q": d["q"].astype(np.int64)},
     r"field 'q' has dtype int64, but it must be a real floating dtype"),
    ("q complex", "plain", lambda d: {"q": d["q"].astype(complex)},
     r"field 'q' has dtype complex128, but it must be a real floating dtype"),
    ("method bytes", "plain", lambda d: {"method": np.array(b"simpson")},
     r"field 'method' has dtype \|S7, but it must be a string"),
    ("h not a scalar", "plain", lambda d: {"h": np.array([0.01])},
     r"field 'h' has shape \(1,\), but it must be a scalar \(shape \(\)\)"),
    ("h zero", "plain", lambda d: {"h": np.array(0.0)},
     r"field 'h' is 0.0, but the step must be finite and nonzero"),
    ("t0 infinite", "plain", lambda d: {"t0": np.array(np.inf)},
     r"field 't0' is inf, but it must be finite \(or nan: unknown\)"),
    ("status", "plain", lambda d: {"status": np.array(2, ints)},
     r"field 'status' is 2, but it must be 0 \(completed\), 1 .* or -1"),
    ("system_n", "plain", lambda d: {"system_n": np.array(3, ints)},
     r"field 'q' has shape \(61, 2\) .*but 'system_n' is 3"),
    ("system_kind", "plain", lambda d: {"system_kind": np.array("alien")},
     r"field 'system_kind' is 'alien', but it must be one of builtin, sympy"),
    ("p missing", "plain", lambda d: {"p": None}, r"the required field 'p' is missing"),
    ("message missing", "plain", lambda d: {"message": None},
     r"the required field 'message' is missing"),
    ("built-in without its parameters", "plain", lambda d: {"system_flat": None},
     r"the required field 'system_flat' is missing"),
    ("format_version 0", "plain", lambda d: {"format_version": np.array(0, ints)},
     r"field 'format_version' is 0, but versions start at 1"),
    ("format_version text", "plain", lambda d: {"format_version": np.array("1")},
     r"field 'format_version' has dtype <U1, but it must be an integer dtype"),
    ("force_terms not JSON", "forced", lambda d: {"force_terms": np.array("[{")},
     r"field 'force_terms' is not JSON"),
    ("force_terms term", "forced",
     lambda d: {"force_terms": np.array('[{"kind": "builtin", "name": "x"}]')},
     r"field 'force_terms': term 0 is a built-in term, but it needs a 'name' \(string\), "
     r"'params'"),
    ("force_own", "forced", lambda d: {"force_own": np.array(1, ints)},
     r"field 'force_own' has dtype int64, but it must be bool"),
    ("force_damping", "forced", lambda d: {"force_damping": np.eye(3)},
     r"field 'force_damping' has 3 rows, but 'system_n' is 2"),
    ("force_hold", "forced", lambda d: {"force_hold": np.ones((20, 3))},
     r"field 'force_hold' has shape \(20, 3\) \(layout \(r, n\)\), but 'system_n' is 2"),
    ("force_repr missing", "forced", lambda d: {"force_repr": None},
     r"field 'force_\w+' is present, but the file has no 'force_repr'"),
]


@pytest.mark.parametrize("base, change, says", [c[1:] for c in ALTERED],
                         ids=[c[0] for c in ALTERED])
def test_an_inconsistent_file_names_the_field(base_files, tmp_path, base, change, says):
    path = altered(base_files[base], tmp_path, change)
    start = re.escape(f"{str(path)!r} is not a valid symplectic trajectory file: ")
    with pytest.raises(ValueError, match="^" + start + says):
        sp.load(path)
    # the base file itself loads
    sp.load(base_files[base])


def test_extra_keys_are_ignored(base_files, tmp_path):
    """Keys the layout does not name are left alone (a reader ignores them)."""
    path = altered(base_files["plain"], tmp_path, lambda d: {"notes": np.array("mine")})
    assert same_bits(sp.load(path).q, np.load(base_files["plain"])["q"])


def test_a_newer_format_version_is_refused_before_its_layout(base_files, tmp_path):
    path = altered(base_files["plain"], tmp_path,
                   lambda d: {"format_version": np.array(2, ints), "q": None})
    with pytest.raises(ValueError, match="format_version 2; this symplectic reads up to 1"):
        sp.load(path)


# ---------------------------------------------------------------- files that are not trajectories
def refused(path, says):
    """load(path) raises the foreign-file ValueError ``says``, without NumPy's advice."""
    start = re.escape(f"{str(path)!r} is not a symplectic trajectory file: ")
    with pytest.raises(ValueError, match="^" + start + says) as info:
        sp.load(path)
    assert "allow_pickle" not in str(info.value)
    assert info.value.__context__ is None or info.value.__suppress_context__
    return info.value


def test_a_truncated_file(base_files, tmp_path):
    raw = base_files["plain"].read_bytes()
    (tmp_path / "half.npz").write_bytes(raw[:len(raw) // 2])
    refused(tmp_path / "half.npz", r"it is a damaged or truncated \.npz \(zip\) archive "
                                   r"\(BadZipFile: ")


def test_a_damaged_member(base_files, tmp_path):
    """One byte of q's data flipped: the zip's checksum of q.npy fails."""
    raw = bytearray(base_files["plain"].read_bytes())
    q = np.load(base_files["plain"])["q"]
    at = bytes(raw).index(q.tobytes())
    raw[at + 3] ^= 0xFF
    (tmp_path / "flipped.npz").write_bytes(bytes(raw))
    refused(tmp_path / "flipped.npz", r"its field 'q' is damaged \(BadZipFile: Bad CRC-32")


def test_a_foreign_npz(tmp_path):
    np.savez(tmp_path / "other.npz", time=np.zeros(3), state=np.ones((3, 2)))
    refused(tmp_path / "other.npz", r"it has no 'format' key \(an \.npz of other arrays: "
                                    r"'state', 'time'\)")


def test_an_npz_of_another_format(base_files, tmp_path):
    path = altered(base_files["plain"], tmp_path, lambda d: {"format": np.array("other")})
    refused(path, r"its 'format' is 'other', not 'symplectic\.Trajectory'")
    path = altered(base_files["plain"], tmp_path, lambda d: {"format": np.arange(3)})
    refused(path, r"its 'format' is an array of shape \(3,\) and dtype int64")


def test_an_npy_file(base_files, tmp_path):
    np.save(tmp_path / "q.npy", np.load(base_files["plain"])["q"])
    refused(tmp_path / "q.npy", r"it is a single NumPy array \(an \.npy file\), not an \.npz")


def test_a_text_file(tmp_path):
    (tmp_path / "run.csv").write_text("t,q\n0.0,1.0\n", encoding="utf-8")
    refused(tmp_path / "run.csv", r"it is a text file \(it begins 't,q\\n0\.0,1\.0\\n'\), not "
                                  r"an \.npz archive")


def test_an_empty_file_and_a_pickle(tmp_path):
    (tmp_path / "empty.npz").write_bytes(b"")
    refused(tmp_path / "empty.npz", r"the file is empty")
    (tmp_path / "run.pkl").write_bytes(pickle.dumps({"t": [0.0]}))
    refused(tmp_path / "run.pkl", r"it is a Python pickle, not an \.npz archive")


def test_an_object_array(base_files, tmp_path):
    """A field of pickled Python objects (np.savez pickles an object array)."""
    path = altered(base_files["plain"], tmp_path,
                   lambda d: {"q": np.array([object(), None], dtype=object)})
    refused(path, r"its field 'q' is an array of Python objects \(pickled data\), which a "
                  r"trajectory file never holds")


def test_a_zip_whose_member_is_not_an_array(tmp_path):
    with zipfile.ZipFile(tmp_path / "run.npz", "w") as z:
        z.writestr("format", "symplectic.Trajectory")
    refused(tmp_path / "run.npz", r"its member 'format' is not a NumPy array")


def test_a_missing_file_stays_file_not_found(tmp_path):
    with pytest.raises(FileNotFoundError):
        sp.load(tmp_path / "nowhere.npz")


def test_an_open_file_loads_and_is_named(base_files, tmp_path):
    with open(base_files["plain"], "rb") as f:
        back = sp.load(f)
    assert same_bits(back.q, np.load(base_files["plain"])["q"])
    (tmp_path / "run.txt").write_text("not a trajectory\n", encoding="utf-8")
    with open(tmp_path / "run.txt", "rb") as f:
        with pytest.raises(ValueError, match=re.escape(f"{str(tmp_path / 'run.txt')!r} is not a "
                                                       f"symplectic trajectory file: it is a "
                                                       f"text file")):
            sp.load(f)
    with open(tmp_path / "run.txt", encoding="utf-8") as f:
        with pytest.raises(TypeError, match="reads a file name or a binary file"):
            sp.load(f)
