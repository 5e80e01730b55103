"""A force of the wrong signature is refused before the run, with a message
that names the expected one (issue 30): force(t, q, qdot) -> (n,) and
force_jac(t, q, qdot) -> (dF/dq, dF/dqdot)."""
import functools

import numpy as np
import pytest

import symplectic as sp

PEND = sp.systems.pendulum()
EXPECTED = (r"^force must be callable as force\(t, q, qdot\) -> \(n,\): three positional "
            r"arguments, the time t \(float\), the coordinates q \(n,\) and the velocities qdot "
            r"\(n,\); ")


class Counting:
    """A force that counts its calls (none may happen before the refusal)."""

    def __init__(self):
        self.calls = 0

    def two(self, q, qdot):
        self.calls += 1
        return -qdot


def run(**kw):
    return sp.integrate(PEND, [1.0], [0.0], 0.01, 10, **kw)


def test_two_arguments_are_refused_before_the_run():
    c = Counting()
    with pytest.raises(TypeError, match=EXPECTED + r"two\(q, qdot\) cannot be called so "
                                                   r"\(too many positional arguments\)$"):
        run(force=c.two)
    assert c.calls == 0
    with pytest.raises(TypeError, match=EXPECTED + r"<lambda>\(q, qdot\) cannot be called so"):
        run(force=lambda q, qdot: -qdot)


@pytest.mark.parametrize("entry", ["step", "integrate_many", "from_callable"])
def test_every_entry_point_refuses_it(entry):
    def f(q, qdot):
        return -qdot

    calls = {"step": lambda: sp.step(PEND, [1.0], [0.0], 0.01, force=f),
             "integrate_many": lambda: sp.integrate_many(PEND, [[1.0], [0.5]], [0.0], 0.01, 5,
                                                         force=f),
             "from_callable": lambda: sp.forces.from_callable(f)}
    with pytest.raises(TypeError, match=r"force must be callable as force\(t, q, qdot\) -> "
                                        r"\(n,\).*f\(q, qdot\) cannot be called so"):
        calls[entry]()


def test_a_wrong_jacobian_is_refused_naming_its_signature():
    with pytest.raises(TypeError, match=r"^force_jac must be callable as force_jac\(t, q, qdot\) "
                                        r"-> \(dF/dq, dF/dqdot\): three positional arguments.*"
                                        r"jac\(q\) cannot be called so"):
        def jac(q):
            return np.zeros((1, 1)), np.eye(1)

        run(force=lambda t, q, qdot: -qdot, force_jac=jac)


def test_required_keywords_and_four_arguments_are_refused():
    with pytest.raises(TypeError, match=r"g\(t, q, \*, qdot\) cannot be called so"):
        def g(t, q, *, qdot):
            return -qdot

        run(force=g)
    with pytest.raises(TypeError, match=r"h\(t, q, qdot, u\) cannot be called so "
                                        r"\(missing a required argument: 'u'\)"):
        def h(t, q, qdot, u):
            return -qdot

        run(force=h)


def damping(c, t, q, qdot):
    return -c * qdot


class Drive:
    def __call__(self, t, q, qdot):
        return np.array([0.1 * np.cos(t)])


@pytest.mark.parametrize("f", [
    lambda t, q, qdot: -0.1 * qdot,
    lambda *args: -0.1 * args[2],
    lambda t, q, qdot, scale=0.1: -scale * qdot,
    functools.partial(damping, 0.1),
    Drive(),
], ids=["plain", "*args", "optional extra", "partial", "callable object"])
def test_callables_that_take_three_arguments_are_accepted(f):
    tr = run(force=f)
    assert tr.status == 0 and np.all(np.isfinite(tr.work))


def test_callables_without_a_signature_pass_the_check():
    """A builtin without an inspectable signature is not refused by the check
    (its first call would report a wrong one)."""
    import inspect
    import math
    with pytest.raises(ValueError):
        inspect.signature(math.hypot)
    assert sp.forces.from_callable(math.hypot).python
