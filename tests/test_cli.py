"""The command line: run writes exactly what integrate computes; bad input
gives a one-line error and a nonzero exit status, never a traceback."""
import subprocess
import sys

import numpy as np
import pytest

import symplectic as sp
from symplectic.__main__ import main


def cli(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "symplectic", *args], capture_output=True,
                          text=True, cwd=cwd)


def test_run_npz_matches_integrate(tmp_path):
    out = tmp_path / "x.npz"
    r = cli("run", "double_pendulum", "--h", "0.01", "--steps", "1000", "--out", str(out))
    assert r.returncode == 0, r.stderr
    data = np.load(out)
    ref = sp.integrate(sp.systems.double_pendulum(), [np.pi / 4, np.pi / 3], [0, 0], 0.01, 1000)
    for key in ("t", "q", "p", "energy", "newton_iterations"):
        assert np.array_equal(data[key], getattr(ref, key)), key
    assert str(data["method"]) == "simpson" and str(data["system"]) == "double_pendulum"


def test_run_csv_round_trips_exactly(tmp_path):
    out = tmp_path / "top.csv"
    assert main(["run", "lagrange_top", "--method", "midpoint", "--h", "0.002", "--steps", "50",
                 "--out", str(out)]) == 0
    data = np.loadtxt(out, delimiter=",", skiprows=1)
    top = sp.systems.lagrange_top()
    q0 = np.array([0.0, np.pi / 3, 0.0])
    ref = sp.integrate(top, q0, top.mass(q0) @ [9.2, 0.0, 252.0], 0.002, 50, method="midpoint")
    assert np.array_equal(data[:, 0], ref.t)
    assert np.array_equal(data[:, 1:4], ref.q) and np.array_equal(data[:, 4:7], ref.p)


def test_run_parameters_and_states(tmp_path):
    out = tmp_path / "c.npz"
    assert main(["run", "pendulum_chain", "--param", "n=3", "--param", "m=[1, 2, 3]",
                 "--q0", "0.1", "0.2", "0.3", "--qdot0", "0", "1", "0", "--steps", "20",
                 "--out", str(out)]) == 0
    chain = sp.systems.pendulum_chain(3, m=[1, 2, 3])
    q0 = np.array([0.1, 0.2, 0.3])
    ref = sp.integrate(chain, q0, chain.mass(q0) @ [0, 1, 0], 0.01, 20)
    assert np.array_equal(np.load(out)["q"], ref.q)


@pytest.mark.parametrize("args,needle", [
    (["run", "nosuch", "--out", "x.npz"], "unknown system 'nosuch'"),
    (["run", "pendulum", "--param", "m", "--out", "x.npz"], "malformed parameter"),
    (["run", "pendulum", "--param", "m=abc", "--out", "x.npz"], "cannot parse parameter value"),
    (["run", "pendulum", "--param", "mass=1", "--out", "x.npz"], "unknown parameter 'mass'"),
    (["run", "pendulum", "--h", "0", "--out", "x.npz"], "--h must be a finite number > 0"),
    (["run", "pendulum", "--h", "-0.1", "--out", "x.npz"], "--h must be a finite number > 0"),
    (["run", "pendulum", "--param", "m=-1", "--out", "x.npz"], "m must be finite and > 0"),
    (["run", "double_pendulum", "--q0", "1", "--out", "x.npz"], "--q0 needs 2 values"),
    (["run", "pendulum", "--out", "x.txt"], "must end in .npz or .csv"),
    (["run", "pendulum", "--method", "euler", "--out", "x.npz"], "unknown method 'euler'"),
    (["run", "pendulum"], "the following arguments are required: --out"),
    (["frobnicate"], "invalid choice"),
])
def test_bad_input_one_line_no_traceback(tmp_path, args, needle):
    r = cli(*args, cwd=tmp_path)
    assert r.returncode != 0
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr
    assert lines[0].startswith("symplectic: error:") and needle in lines[0]
    assert "Traceback" not in r.stderr


def test_methods_and_systems_listings():
    r = cli("methods")
    assert r.returncode == 0 and "simpson" in r.stdout and "order 4" in r.stdout
    r = cli("systems")
    assert r.returncode == 0
    for name in ("pendulum", "double_pendulum", "lagrange_top", "pendulum_chain", "linear"):
        assert name in r.stdout
