"""The reference runs of tests/multibody/test_tree_runs.py, and the stored ones of the robots
whose SymPy derivation is slow (test helper; run as a script it writes the stored file).

The reference of a robot is tests/support/urdf_reference.py's M(q) and V(q) through
``System.from_sympy``.  SymPy derives and compiles the second derivatives of fixed's,
branched's and arm7's M in about 15 s, 30 s and 3 minutes (arm7's M has entries of ~3000
operations): those three robots' reference values -- the 1-second runs from a moving start
(simpson, lobatto5: q0, p0 and the states) and the derivatives at three points -- are computed
once by this script and stored in tests/data/urdf/reference_runs.npz, with a fingerprint of
the URDF file and of urdf_reference.py.  A changed robot or reference makes the stored values
stale: the tests then fail and say to rerun

    python tests/support/urdf_runs.py            (from the repository's root, ~5 minutes)

The other robots' reference values are computed in the test session.  A slow test reproduces
the stored values of one robot (fixed) live.
"""
import sys
import zlib
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
DATA = HERE.parent / "data" / "urdf"
STORED_FILE = DATA / "reference_runs.npz"
STORED = ("fixed", "branched", "arm7")
METHODS = ("simpson", "lobatto5")
H, N_STEPS = 0.01, 100           # 1 second
DERIVATIVES = ("mass_dir", "mass_hess_dir", "potential_hess")


def path(name):
    return str(DATA / f"{name}.urdf")


def moving_start(name, mimic="independent", mass=None):
    """q0 inside the joint limits and velocities up to 1 (rad or m)/s, seeded by the name;
    with mimic="constraint" on the constraint manifold (q_j = a q_k + b, qdot_j = a qdot_k).
    p0 = M(q0) qdot0 with the reference's M (or ``mass``)."""
    from .urdf_reference import Robot, cached_reference
    rb = Robot(path(name))
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    q0, qd0 = rb.random_q(rng, shrink=0.8), rng.uniform(-1.0, 1.0, rb.n)
    if mimic == "constraint":
        q0, qd0 = rb.mimic_q(q0), rb.mimic_qdot(qd0)
    return q0, (mass or cached_reference(path(name)).mass)(q0) @ qd0


def fingerprint(name):
    """crc32 of the robot's URDF file and of the reference's source."""
    crc = zlib.crc32(Path(path(name)).read_bytes())
    return zlib.crc32((HERE / "urdf_reference.py").read_bytes(), crc)


def compute(name):
    """{key: array} of a robot's reference values, from its SymPy system (slow for STORED)."""
    import symplectic as sp
    from .urdf_reference import Robot, cached_system
    R = cached_system(path(name))
    q0, p0 = moving_start(name)
    out = {"q0": q0, "p0": p0, "fingerprint": np.array(fingerprint(name), dtype=np.int64)}
    for method in METHODS:
        tr = sp.integrate(R, q0, p0, H, N_STEPS, method=method)
        out[f"{method}.q"], out[f"{method}.p"] = tr.q, tr.p
    rng = np.random.default_rng(zlib.crc32(name.encode()) + 1)
    robot = Robot(path(name))
    for i in range(3):
        q, g = robot.random_q(rng), rng.uniform(-1.0, 1.0, R.n)
        out[f"point{i}.q"], out[f"point{i}.g"] = q, g
        out[f"point{i}.mass_dir"] = R.mass_dir(q, g)
        out[f"point{i}.mass_hess_dir"] = R.mass_hess_dir(q, g)
        out[f"point{i}.potential_hess"] = R.potential_hess(q)
    return out


def _stored(name):
    with np.load(STORED_FILE) as f:
        out = {k.split("/", 1)[1]: f[k] for k in f.files if k.startswith(name + "/")}
    if not out or int(out["fingerprint"]) != fingerprint(name):
        raise AssertionError(f"{STORED_FILE.name}: the stored reference of {name} is stale (its "
                             f"URDF or tests/support/urdf_reference.py changed): rerun "
                             f"python tests/support/urdf_runs.py")
    return out


_LIVE = {}


def reference_values(name):
    """A robot's reference values: stored for STORED, else computed once per session."""
    if name in STORED:
        return _stored(name)
    if name not in _LIVE:
        _LIVE[name] = compute(name)
    return _LIVE[name]


def reference_run(name, method):
    """(q0, p0, q, p) of the reference's 1-second run of ``method``."""
    v = reference_values(name)
    return v["q0"], v["p0"], v[f"{method}.q"], v[f"{method}.p"]


def reference_derivatives(name):
    """[(q, g, {what: the reference's value})] at three points (``DERIVATIVES``)."""
    v = reference_values(name)
    return [(v[f"point{i}.q"], v[f"point{i}.g"], {w: v[f"point{i}.{w}"] for w in DERIVATIVES})
            for i in range(3)]


def main():
    arrays = {}
    for name in STORED:
        print(f"{name}: deriving and compiling its SymPy system ...", flush=True)
        arrays.update({f"{name}/{k}": v for k, v in compute(name).items()})
    np.savez_compressed(STORED_FILE, **arrays)
    print(f"wrote {STORED_FILE}")


if __name__ == "__main__":
    sys.path.insert(0, str(HERE.parent))
    from support import urdf_runs
    urdf_runs.main()
