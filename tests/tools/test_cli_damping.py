"""run ... --damping (issue 16): the damped built-in system, its work in the
output, the energy balance in the summary; usage errors for systems without
damping and for a clash with --param damping."""
import numpy as np
import pytest

import symplectic as sp
from symplectic.__main__ import main


def test_damping_npz_and_csv_match_integrate(tmp_path, capsys):
    out = tmp_path / "d.npz"
    assert main(["run", "double_pendulum", "--damping", "0.3", "0.2", "--steps", "300",
                 "--out", str(out)]) == 0
    line = capsys.readouterr().out
    S = sp.systems.double_pendulum(damping=(0.3, 0.2))
    ref = sp.integrate(S, [np.pi / 4, np.pi / 3], [0, 0], 0.01, 300)
    data = np.load(out)
    for key in ("t", "q", "p", "energy", "work"):
        assert np.array_equal(data[key], getattr(ref, key)), key
    assert ref.work[-1] < 0 and "energy - work" in line
    csv = tmp_path / "d.csv"
    assert main(["run", "pendulum", "--damping", "0.4", "--steps", "50", "--out", str(csv)]) == 0
    with open(csv) as fh:
        assert fh.readline().strip() == "t,q0,p0,energy,work"
    table = np.loadtxt(csv, delimiter=",", skiprows=1)
    ref = sp.integrate(sp.systems.pendulum(damping=0.4), [np.pi / 2], [0.0], 0.01, 50)
    assert np.array_equal(table[:, -1], ref.work)


def test_damping_zero_is_the_unforced_run(tmp_path):
    a, b = tmp_path / "a.npz", tmp_path / "b.npz"
    assert main(["run", "pendulum", "--damping", "0", "--steps", "50", "--out", str(a)]) == 0
    assert main(["run", "pendulum", "--steps", "50", "--out", str(b)]) == 0
    da, db = np.load(a), np.load(b)
    assert "work" not in da.files and np.array_equal(da["q"], db["q"])


@pytest.mark.parametrize("args, what", [
    (["linear", "--damping", "0.3"], "linear has no damping"),
    (["pendulum", "--damping", "-1"], "damping must be >= 0"),
    (["pendulum", "--damping", "0.1", "--param", "damping=0.2"], "not both"),
    (["pendulum_chain", "--param", "n=3", "--damping", "0.1", "0.2"], "damping"),
])
def test_damping_usage_errors(args, what, tmp_path, capsys):
    assert main(["run", *args, "--out", str(tmp_path / "x.npz")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("symplectic: error:") and what in err
