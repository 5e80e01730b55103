"""The README's Python examples run as written."""
import pathlib
import re

import pytest

README = pathlib.Path(__file__).resolve().parent.parent / "README.md"


def python_blocks():
    text = README.read_text(encoding="utf-8")
    return re.findall(r"```python\n(.*?)```", text, flags=re.S)


def test_readme_has_examples():
    assert len(python_blocks()) >= 2


def test_readme_examples_run():
    blocks = python_blocks()
    ns = {}
    # The first two blocks form the tutorial; the API overview uses placeholders.
    for code in blocks[:2]:
        exec(compile(code, str(README), "exec"), ns)
    assert ns["e"].max() < 1e-4
    assert ns["traj"].q.shape == (2001, 2)
