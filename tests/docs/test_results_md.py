"""benchmarks/suite/results_md.py, the writer of RESULTS.md: a run of some sections replaces
their blocks and keeps everything else as it was recorded, byte for byte (it once added a blank
line per block at each rewrite: 239 of them had gathered)."""
import pytest
from support.benchscripts import ROOT, load, script

SCRIPT = script("results_md")


@pytest.fixture(scope="module")
def rm():
    return load(SCRIPT)


def test_a_rewrite_replaces_its_block_and_keeps_the_rest(rm, tmp_path):
    path = tmp_path / "RESULTS.md"
    rm.update(path, classic="# Results\n\nsections 1-7\n", blocks={"a": "## 8\n\nA", "b": "## 9"})
    first = path.read_text()
    for _ in range(3):
        rm.update(path, blocks={"a": "## 8\n\nA"})
        assert path.read_text() == first
    rm.update(path, blocks={"b": "## 9\n\nnew"})
    assert path.read_text() == first.replace("## 9\n", "## 9\n\nnew\n")


def test_the_recorded_file_is_what_the_writer_writes(rm, tmp_path):
    path = tmp_path / "RESULTS.md"
    recorded = (ROOT / "benchmarks" / "RESULTS.md").read_text()
    path.write_text(recorded)
    rm.update(path, blocks={})
    assert path.read_text() == recorded
