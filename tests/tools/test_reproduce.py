"""The main job: `python -m symplectic reproduce` writes every table and figure,
flags every printed value it does not reproduce with a key of docs/errata.md,
labels every axis with a unit, keeps legends off the data, and writes as many
files as the README says."""
import io
import os
import pathlib
import re
import subprocess
import sys

import pytest

from symplectic import papers, reproduce

pytest.importorskip("matplotlib")

ROOT = pathlib.Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def quick_command_line(request, tmp_path_factory):
    """`python -m symplectic reproduce --quick` (test_reproduce_command_line_quick), started as
    soon as this module needs a fixture, so that it runs beside the full reproduction of
    full_run (a process of its own, with its own output directory: the two share nothing but
    the two cores); not started when that test is not selected (e.g. the sanitizer run
    deselects it).  Yields (process, output directory, stdout file, stderr file) or None."""
    if not any(getattr(item, "module", None) is request.module
               and item.originalname == "test_reproduce_command_line_quick"
               for item in request.session.items):
        yield None
        return
    d = tmp_path_factory.mktemp("quick")
    env = dict(os.environ, MPLBACKEND="Agg")
    with open(d / "stdout", "w") as out, open(d / "stderr", "w") as err:   # files: no pipe to fill
        proc = subprocess.Popen([sys.executable, "-m", "symplectic", "reproduce", "--quick",
                                 "--out", str(d / "res")], stdout=out, stderr=err, env=env)
    try:
        yield proc, d / "res", d / "stdout", d / "stderr"
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


@pytest.fixture(scope="module")
def full_run(tmp_path_factory, quick_command_line):
    """The full reproduction, once, with every figure inspected just before it is saved (the
    quick command line started first, to run beside it)."""
    import matplotlib
    matplotlib.use("Agg")
    from symplectic import plot
    from support.figcheck import axis_labels, legend_overlaps, legends

    out_dir = tmp_path_factory.mktemp("results")
    figures = {}
    original = plot.savefig

    def inspecting_savefig(ax, path, dpi=130):
        fig = ax.get_figure()
        fig.tight_layout()                       # the layout savefig writes
        figures[os.path.basename(str(path))] = dict(
            labels=axis_labels(fig), overlaps=legend_overlaps(fig), n_legends=len(legends(fig)))
        return original(ax, path, dpi)

    plot.savefig = inspecting_savefig
    try:
        out, err = io.StringIO(), io.StringIO()
        res = reproduce.run(out=str(out_dir), quick=False, stream=out, progress=err)
    finally:
        plot.savefig = original
    return dict(dir=out_dir, res=res, stdout=out.getvalue(), stderr=err.getvalue(),
                figures=figures, files=sorted(os.listdir(out_dir)))


def test_reproduce_writes_tables_and_figures(full_run):
    text, files = full_run["stdout"], set(full_run["files"])
    assert "FVCA 2023, Table 1" in text and "AXIOMS 2024, Table 2" in text
    for name in ("fvca_table1.csv", "axioms_table2.csv", "axioms_fig8_convergence.png",
                 "fvca_fig1_2_pendulum.png", "top_fig5_dp_energy.png",
                 "top_table5_energy_100_1000.csv"):
        assert name in files, sorted(files)
    for name, _, _, _ in reproduce.TASKS:
        assert name in full_run["res"]
        assert f"{name} done in" in full_run["stderr"]
    for f in files:                                  # every PNG is a real image
        if f.endswith(".png"):
            with open(full_run["dir"] / f, "rb") as fh:
                assert fh.read(8) == b"\x89PNG\r\n\x1a\n"
    # FVCA and AXIOMS numbers are those of the earlier issues' tests
    res = full_run["res"]
    assert max(abs(r["rel_diff"]) for r in res["FVCA Table 1"] if r["N"] != "order") < 0.006


def _readme_counts(pattern):
    m = re.search(pattern, README)
    assert m, f"README states no file counts matching {pattern!r}"
    return int(m.group(1)), int(m.group(2))


def test_readme_states_the_number_of_files_written(full_run):
    png, csv = _readme_counts(r"writes\s+(\d+)\s+PNG\s+figures\s+and\s+(\d+)\s+CSV\s+tables")
    files = full_run["files"]
    assert (png, csv) == (sum(f.endswith(".png") for f in files),
                          sum(f.endswith(".csv") for f in files)), files
    assert len(files) == png + csv


def test_every_figure_axis_has_a_name_and_a_unit(full_run):
    from support.figcheck import has_unit
    figs = full_run["figures"]
    assert set(figs) == {f for f in full_run["files"] if f.endswith(".png")}
    for name, info in figs.items():
        for title, axis, label in info["labels"]:
            assert label and has_unit(label), (name, title, axis, label)


def test_no_legend_covers_data_in_any_figure(full_run):
    for name, info in full_run["figures"].items():
        assert info["n_legends"] >= 1, name
        assert info["overlaps"] == [], (name, info["overlaps"])


def test_every_flag_is_printed_with_its_errata_key(full_run):
    text = full_run["stdout"]
    assert text.splitlines()[0] == reproduce.ERRATA_LINE
    assert "docs/errata.md" in reproduce.ERRATA_LINE
    for key, note in papers.flags().items():
        assert f"errata {key}]" in text, key


def test_reproduce_command_line_quick(quick_command_line):
    proc, res_dir, stdout, stderr = quick_command_line
    returncode = proc.wait(timeout=300)
    r_stdout, r_stderr = stdout.read_text(), stderr.read_text()
    assert returncode == 0, r_stderr
    assert "AXIOMS 2024, Table 2" in r_stdout
    assert r_stdout.startswith(reproduce.ERRATA_LINE)
    assert "[1/" in r_stderr and "finished in" in r_stderr
    files = os.listdir(res_dir)
    png, csv = _readme_counts(r"`--quick`[^)]*?(\d+)\s+PNG\s+and\s+(\d+)\s+CSV")
    assert (png, csv) == (sum(f.endswith(".png") for f in files),
                          sum(f.endswith(".csv") for f in files)), sorted(files)
