"""The command line: run writes exactly what integrate computes; bad input
gives a one-line error, never a traceback, with exit status 2 for usage errors
and 1 for runtime failures (the __main__ module docstring and the README)."""
import concurrent.futures
import os
import subprocess
import sys

import numpy as np
import pytest

import symplectic as sp
from symplectic.__main__ import main


def cli(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "symplectic", *args], capture_output=True,
                          text=True, cwd=cwd)


# the command line of each parametrized usage-error test, from its args
USAGE_COMMANDS = {
    "test_usage_errors_exit_2_with_one_line": lambda args: list(args),
    "test_run_bad_time_arguments_are_usage_errors":
        lambda args: ["run", "pendulum", *args, "--out", "x.npz"],
}


@pytest.fixture(scope="module")
def usage_runs(request, tmp_path_factory):
    """The command lines of the parametrized usage-error tests that this session runs, each
    started ahead in a process of its own, two at a time, in an empty directory of its own
    (each is independent of the others: the time is the interpreter's start, spent side by side
    on two cores).  ``usage_runs(command)``: (CompletedProcess, its directory)."""
    def run(command):
        d = tmp_path_factory.mktemp("cli")
        return cli(*command, cwd=d), d

    if "asan" in os.environ.get("LD_PRELOAD", ""):
        # under the sanitizers (.ci/sanitize preloads libasan) a process started from a
        # worker thread can fail with "OSError: [Errno 14] Bad address" (seen once in
        # .ci/run): there each command runs when its test asks, in the test's own thread
        yield run
        return
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        futures = {}
        for item in request.session.items:
            if getattr(item, "module", None) is request.module and item.originalname in USAGE_COMMANDS:
                command = USAGE_COMMANDS[item.originalname](item.callspec.params["args"])
                futures.setdefault(tuple(command), pool.submit(run, command))
        yield lambda command: (futures.get(tuple(command)) or pool.submit(run, command)).result()


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


# Usage errors: exit status 2, one line, the exact message (or its stable start).
USAGE_ERRORS = [
    (["run", "nosuch", "--out", "x.npz"], "unknown system 'nosuch'; available: "),
    (["run", "pendulum", "--param", "m", "--out", "x.npz"],
     "malformed parameter 'm': expected name=value"),
    (["run", "pendulum", "--param", "m=abc", "--out", "x.npz"],
     "cannot parse parameter value 'abc' (a number or a JSON list)"),
    (["run", "pendulum", "--param", "mass=1", "--out", "x.npz"],
     "unknown parameter 'mass' for pendulum; parameters: m, omega"),
    (["run", "pendulum", "--h", "0", "--out", "x.npz"],
     "--h must be a finite nonzero number (negative integrates backward), got 0.0"),
    (["run", "pendulum", "--h", "nan", "--out", "x.npz"],
     "--h must be a finite nonzero number (negative integrates backward), got nan"),
    (["run", "pendulum", "--steps", "-1", "--out", "x.npz"], "--steps must be >= 0, got -1"),
    (["run", "pendulum", "--param", "m=-1", "--out", "x.npz"],
     "bad parameters for pendulum: m must be finite and > 0, got -1"),
    (["run", "double_pendulum", "--q0", "1", "--out", "x.npz"],
     "--q0 needs 2 values for this system, got 1"),
    (["run", "pendulum", "--q0", "nan", "--out", "x.npz"], "--q0 values must be finite, got nan"),
    (["run", "pendulum", "--p0", "0", "--qdot0", "0", "--out", "x.npz"],
     "give --p0 or --qdot0, not both"),
    (["run", "pendulum", "--out", "x.txt"], "--out must end in .npz or .csv, got 'x.txt'"),
    (["run", "pendulum", "--method", "euler", "--out", "x.npz"],
     "unknown method 'euler'; available: simpson, midpoint, rk4, lobatto2, lobatto3"),
    (["run", "pendulum"], "the following arguments are required: --out"),
    (["run", "pendulum", "--steps", "1.5", "--out", "x.npz"],
     "argument --steps: invalid int value: '1.5'"),
    (["frobnicate"], "argument command: invalid choice: 'frobnicate'"),
]


@pytest.mark.parametrize("args,message", USAGE_ERRORS)
def test_usage_errors_exit_2_with_one_line(usage_runs, args, message):
    r, tmp_path = usage_runs(USAGE_COMMANDS["test_usage_errors_exit_2_with_one_line"](args))
    assert r.returncode == 2, (r.returncode, r.stderr)
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr
    assert lines[0].startswith("symplectic: error: " + message), lines[0]
    assert "Traceback" not in r.stderr
    assert not list(tmp_path.iterdir())                  # nothing written


def test_usage_errors_in_process_return_2():
    assert main(["run", "pendulum", "--h", "0", "--out", "x.npz"]) == 2
    assert main(["run", "pendulum", "--method", "euler", "--out", "x.npz"]) == 2


def test_runtime_failure_convergence_exits_1(tmp_path):
    """The integration itself fails (Newton cannot complete the first step): status 1."""
    r = cli("run", "lagrange_top", "--h", "5", "--steps", "10", "--out", "x.npz", cwd=tmp_path)
    assert r.returncode == 1, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in r.stderr
    assert lines[0].startswith("symplectic: error: simpson failed at step 0 (t = 0, h = 5)")


def test_runtime_failure_unwritable_output_exits_1(tmp_path):
    target = tmp_path / "no" / "such" / "dir" / "x.npz"
    r = cli("run", "pendulum", "--steps", "5", "--out", str(target))
    assert r.returncode == 1, r.stderr
    assert r.stderr.strip() == (f"symplectic: error: cannot write {str(target)!r}: "
                                f"No such file or directory")


def test_runtime_failure_out_of_memory_exits_1(tmp_path):
    r = cli("run", "pendulum", "--steps", str(10 ** 15), "--out", "x.npz", cwd=tmp_path)
    assert r.returncode == 1, r.stderr
    assert r.stderr.startswith("symplectic: error: integrate(n_steps=1000000000000000)")
    assert "GiB" in r.stderr and "Traceback" not in r.stderr


def test_negative_step_integrates_backward(tmp_path):
    out = tmp_path / "back.npz"
    r = cli("run", "double_pendulum", "--h", "-0.01", "--steps", "300", "--out", str(out))
    assert r.returncode == 0, r.stderr
    assert "300 simpson steps of h = -0.01" in r.stdout
    data = np.load(out)
    ref = sp.integrate(sp.systems.double_pendulum(), [np.pi / 4, np.pi / 3], [0, 0], -0.01, 300)
    assert np.array_equal(data["q"], ref.q) and np.array_equal(data["p"], ref.p)
    assert data["t"][-1] == pytest.approx(-3.0)
    # integrating forward again from the end state comes back to the start (reversible scheme)
    fwd = sp.integrate(sp.systems.double_pendulum(), data["q"][-1], data["p"][-1], 0.01, 300)
    assert np.allclose(fwd.q[-1], [np.pi / 4, np.pi / 3], atol=1e-9)


def _option_blocks(help_text):
    """{option: its help text} from argparse's help output."""
    blocks, current = {}, None
    for line in help_text.splitlines():
        stripped = line.strip()
        if line.startswith("  -"):
            current = stripped.split()[0].rstrip(",")
            blocks[current] = stripped
        elif current and line.startswith("      ") and stripped:
            blocks[current] += " " + stripped
        else:
            current = None
    return blocks


def test_run_help_shows_every_default():
    r = cli("run", "--help")
    assert r.returncode == 0, r.stderr
    blocks = _option_blocks(r.stdout)
    assert set(blocks) == {"-h", "--method", "--h", "--steps", "--param", "--q0", "--p0",
                           "--qdot0", "--damping", "--out", "--t-span", "--t-eval",
                           "--store-every", "--progress"}, blocks
    for opt, text in blocks.items():
        if opt != "-h":
            assert "default" in text, (opt, text)
    assert "(default: simpson)" in blocks["--method"]
    assert "(default: 0.01)" in blocks["--h"] and "backward" in blocks["--h"]
    assert "(default: 1000)" in blocks["--steps"]
    assert "(default: M(q0) qdot0)" in blocks["--p0"]
    assert "(required, no default)" in blocks["--out"]


def test_reproduce_help_shows_every_default():
    r = cli("reproduce", "--help")
    assert r.returncode == 0, r.stderr
    blocks = _option_blocks(r.stdout)
    assert set(blocks) == {"-h", "--out", "--quick", "--progress", "--docs"}, blocks
    assert "(default: none: print the tables, write no files)" in blocks["--out"]
    assert "(default: none)" in blocks["--docs"]
    assert "(default: off, the full run)" in blocks["--quick"]


def test_methods_and_systems_listings():
    r = cli("methods")
    assert r.returncode == 0 and "simpson" in r.stdout and "order 4" in r.stdout
    r = cli("systems")
    assert r.returncode == 0
    for name in ("pendulum", "double_pendulum", "lagrange_top", "pendulum_chain", "linear"):
        assert name in r.stdout


def test_run_time_span_output_times_and_thinning(tmp_path):
    out = tmp_path / "span.npz"
    r = cli("run", "pendulum", "--t-span", "0", "1", "--h", "0.03", "--store-every", "5",
            "--out", str(out))
    assert r.returncode == 0, r.stderr
    d = np.load(out)
    assert d["t"][-1] == 1.0 and len(d["t"]) == 8 and float(d["h"]) == 1.0 / 34
    assert "34 simpson steps of h = 0.0294118" in r.stdout
    out = tmp_path / "teval.csv"
    r = cli("run", "pendulum", "--t-span", "0", "1", "--t-eval", "0.25", "0.5", "--progress",
            "--out", str(out))
    assert r.returncode == 0, r.stderr
    rows = np.loadtxt(out, delimiter=",", skiprows=1)
    assert rows[:, 0].tolist() == [0.25, 0.5]
    assert "100%" in r.stderr or "100.0%" in r.stderr       # the progress bar, on stderr


@pytest.mark.parametrize("args, message", [
    (["--store-every", "0"], "--store-every must be >= 1, got 0"),
    (["--t-span", "0", "1", "--t-eval", "2"], "t_eval must lie within the integrated interval"),
    (["--t-span", "0", "1", "--steps", "7", "--h", "0.1"], "7 steps of h = 0.1 span"),
    (["--t-eval", "0.5", "0.2"], "t_eval must be sorted"),
    (["--t-eval", "nan"], "t_eval contains non-finite values"),
    (["--t-span", "0"], "argument --t-span: expected 2 arguments"),
    (["--t-span", "1", "1"], "t_span must have t0 != tf"),
    (["--t-span", "0", "inf"], "t_span[1] must be finite"),
    (["--store-every", "2.5"], "argument --store-every: invalid int value"),
    (["--t-span", "0", "1", "--t-eval", "0.5", "--store-every", "2"], "not both"),
])
def test_run_bad_time_arguments_are_usage_errors(usage_runs, args, message):
    r, _ = usage_runs(USAGE_COMMANDS["test_run_bad_time_arguments_are_usage_errors"](args))
    assert r.returncode == 2 and message in r.stderr, r.stderr
