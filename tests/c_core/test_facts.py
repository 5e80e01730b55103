"""The core's facts that the binding exports, read from the core and not typed in Python:
``_core.NEWTON_MODES`` and ``_core.BRANCH_MODES`` (name -> value of sym_options' newton and
branch, from the core's tables sym_newton_mode_name and sym_branch_mode_name) and
``_core.FORCE_MAX_TERMS`` (SYM_FORCE_MAX_TERMS).  Checked against the header's enums and
against what the core accepts: a run with each mode's value runs, a value without a name is
refused, a force with FORCE_MAX_TERMS terms runs and one with a term more is refused."""
import pathlib
import re

import numpy as np
import pytest

import symplectic as sp
from symplectic import _core

CORE = pathlib.Path(__file__).resolve().parents[2] / "csrc" / "core"


def _header_enum(enum, prefix):
    """{name: value} of ``enum`` in csrc/core/symplectic.h, names without ``prefix``, lower case."""
    path = CORE / "symplectic.h"
    if not path.is_file():
        pytest.skip("the C sources are not next to the tests (installed package)")
    body = re.search(rf"enum {enum} \{{(.*?)\}};", path.read_text(), re.S).group(1)
    return {k.lower(): int(v) for k, v in re.findall(rf"\b{prefix}(\w+)\s*=\s*(\d+)", body)}


def test_the_modes_are_the_header_enums():
    newton = _header_enum("sym_newton_mode", "SYM_NEWTON_")
    branch = _header_enum("sym_branch_mode", "SYM_BRANCH_")
    assert set(newton) >= {"full", "chord", "step", "decoupled", "auto"}   # the header was read
    assert set(branch) >= {"auto", "always", "never"}
    assert dict(_core.NEWTON_MODES) == newton
    assert dict(_core.BRANCH_MODES) == branch


def test_the_facts_cannot_be_changed_from_python():
    with pytest.raises(TypeError):
        _core.NEWTON_MODES["fast"] = 9
    with pytest.raises(TypeError):
        _core.BRANCH_MODES["auto"] = 1
    assert isinstance(_core.FORCE_MAX_TERMS, int) and _core.FORCE_MAX_TERMS >= 1


def _run(system, q0, p0, force=None, **options):
    """Ten Simpson steps through the binding: the failure (None) and the iterations."""
    out = _core.integrate(system, np.asarray(q0, float), np.asarray(p0, float), 0.05, 10,
                          "simpson", force=force, **options)
    return out[6], out[4]


def test_every_named_mode_is_a_mode_of_the_core():
    pend = sp.systems.pendulum()
    for name, value in _core.NEWTON_MODES.items():
        failure, iters = _run(pend, [1.0], [0.0], chord=value)
        assert failure is None and iters.min() >= 1, name
    for name, value in _core.BRANCH_MODES.items():
        failure, _ = _run(pend, [1.0], [0.0], branch=value)
        assert failure is None, name


@pytest.mark.parametrize("option, modes", [("chord", "NEWTON_MODES"), ("branch", "BRANCH_MODES")])
def test_a_value_without_a_name_is_refused_by_the_core(option, modes):
    values = getattr(_core, modes).values()
    assert sorted(values) == list(range(len(values)))   # the values are 0 .. count - 1
    pend = sp.systems.pendulum()
    for value in (-1, max(values) + 1):
        with pytest.raises(ValueError, match="invalid argument"):
            _run(pend, [1.0], [0.0], **{option: value})


def test_a_force_takes_at_most_force_max_terms_terms():
    top = sp.systems.lagrange_top()
    q0 = np.array([0.0, np.pi / 3, 0.0])                 # theta = 60 degrees
    p0 = top.mass(q0) @ np.array([9.2, 0.0, 25.2])
    term = ("builtin", "pivot_friction", np.array([0.05]))
    spec = {"damping": None, "hold": None, "terms": [term] * _core.FORCE_MAX_TERMS}
    failure, _ = _run(top, q0, p0, force=spec)
    assert failure is None
    spec["terms"] = [term] * (_core.FORCE_MAX_TERMS + 1)
    with pytest.raises(ValueError, match=rf"at most {_core.FORCE_MAX_TERMS} callback terms"):
        _run(top, q0, p0, force=spec)
