"""The registries' rows as test cases, and the systems the tests build from the models.

Unlike support.models these use the package: the registries are read from the C core, and
the systems are symplectic.System objects.
"""
import pytest

import symplectic as sp
from symplectic._model import _registry
from support import cbuild
from support.forms_dp import compiled_system, dp_combined, dp_vectorized
from support.models import L_DP, dp_callables


# ---------------------------------------------------------------- registry-driven cases
def method_cases():
    """Every method of the registry (symplectic._model._registry.METHODS), in its order:
    the parametrisation of the tests that must cover every method."""
    return list(_registry.METHODS)


def builtin_cases():
    """Every C built-in system of the registry (symplectic._model._registry.BUILTINS)."""
    return list(_registry.BUILTINS)


def sympy_backends():
    """The two backends of a SymPy system: compiled to C (skipped when symplectic.symbolic
    finds no C compiler) and NumPy."""
    return [pytest.param(True, id="compiled", marks=cbuild.needs_sympy_cc()),
            pytest.param(False, id="numpy")]


# ---------------------------------------------------------------- systems
class Boom(Exception):
    """An exception a test's callback raises on purpose."""


def dp_with(slot, fn, **params):
    """A Python-callable double pendulum with one callable replaced."""
    c = dict(dp_callables(**params))
    c[slot] = fn
    return sp.System(2, **c)


#: every kind of system the double pendulum can be given as (test_identity.py, test_integrator.py)
KINDS = ["builtin", "linear", "linear-newton", "callables", "combined", "vectorized",
         "compiled", "sympy"]


def sympy_system(cache_dir):
    sy = pytest.importorskip("sympy")
    q1, q2, u1, u2 = sy.symbols("q1 q2 u1 u2")
    m1, m2, l, g = 1.0, 1.0, L_DP, 9.81
    T = ((m1 + m2) * l ** 2 * u1 ** 2 / 2 + m2 * l * l * sy.cos(q1 - q2) * u1 * u2
         + m2 * l ** 2 * u2 ** 2 / 2)
    V = -(m1 + m2) * g * l * sy.cos(q1) - m2 * g * l * sy.cos(q2)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("SYMPLECTIC_CACHE", str(cache_dir))
        return sp.System.from_sympy(T - V, [q1, q2], [u1, u2])


def system_of_kind(kind, compiled_lib, tmp_path_factory):
    """(system, closed_form) of one of KINDS; compiled_lib is support.forms_dp's library
    (None without a C compiler, which skips the compiled kind)."""
    if kind == "builtin":
        return sp.systems.double_pendulum(l1=L_DP, l2=L_DP), True
    if kind.startswith("linear"):
        return sp.systems.linear_double_pendulum(), kind == "linear"
    if kind == "callables":
        return sp.System(2, **dp_callables()), True
    if kind == "combined":
        return sp.System.combined(2, dp_combined()), True
    if kind == "vectorized":
        return sp.System.vectorized(2, dp_vectorized()), True
    if kind == "compiled":
        if compiled_lib is None:
            pytest.skip(cbuild.NO_COMPILER)
        return compiled_system(compiled_lib), True
    return sympy_system(tmp_path_factory.mktemp("identity_sympy")), True
