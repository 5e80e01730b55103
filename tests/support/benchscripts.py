"""The benchmark suite's scripts as modules, for the tests that check what they write (an
installed sdist has no benchmarks/: those tests skip)."""
import importlib.util
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]


def script(name):
    """The path of benchmarks/suite/<name>.py; skips the calling test module when the tree has
    no benchmarks/ (call it at module level)."""
    path = ROOT / "benchmarks" / "suite" / f"{name}.py"
    if not path.exists():
        pytest.skip("benchmarks/ is not in this tree (the tests of an installed sdist)",
                    allow_module_level=True)
    return path


def load(path):
    """The module of a script path, executed."""
    spec = importlib.util.spec_from_file_location(path.stem, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod
