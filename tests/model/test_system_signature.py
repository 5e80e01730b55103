"""A System callback of the wrong arity is refused at construction (issue 47), with a
TypeError that names the argument, the call it must take and the callable's own signature
-- as a force of the wrong signature is (test_force_signature.py) -- instead of a bare
TypeError from inside the first run.  Every Python callable of System(), of System.combined
and of System.vectorized is checked; callables without an inspectable signature pass."""
import functools
import math

import numpy as np
import pytest

import symplectic as sp

N = 2
EYE = np.eye(N)


def mass(q):
    return EYE


def V(q):
    return 0.5 * float(q @ q)


def dV(q):
    return np.asarray(q, dtype=float)


#: argument -> (the call it must take, its arguments in words, a wrong callable and the
#: signature the message shows for it)
SLOTS = {
    "mass": ("mass(q) -> (n, n)", "one positional argument, the coordinates q (n,)",
             lambda q, t: EYE, "<lambda>(q, t)"),
    "potential": ("potential(q) -> float", "one positional argument, the coordinates q (n,)",
                  lambda: 0.0, "<lambda>()"),
    "mass_grad": ("mass_grad(q) -> (n, n, n)", "one positional argument, the coordinates q (n,)",
                  lambda q, g: np.zeros((N, N, N)), "<lambda>(q, g)"),
    "potential_grad": ("potential_grad(q) -> (n,)",
                       "one positional argument, the coordinates q (n,)",
                       lambda: np.zeros(N), "<lambda>()"),
    "mass_hess": ("mass_hess(q) -> (n, n, n, n)",
                  "one positional argument, the coordinates q (n,)",
                  lambda q, *, k: 0, "<lambda>(q, *, k)"),
    "potential_hess": ("potential_hess(q) -> (n, n)",
                       "one positional argument, the coordinates q (n,)",
                       lambda q, r, s: EYE, "<lambda>(q, r, s)"),
    "mass_dir": ("mass_dir(q, g) -> (n, n)",
                 "two positional arguments, the coordinates q (n,) and a vector g (n,)",
                 lambda q: EYE, "<lambda>(q)"),
    "mass_hess_dir": ("mass_hess_dir(q, g) -> (n, n)",
                      "two positional arguments, the coordinates q (n,) and a vector g (n,)",
                      lambda q, g, t: EYE, "<lambda>(q, g, t)"),
    "constraint": ("constraint(q) -> (m,) values of g(q)",
                   "one positional argument, the coordinates q (n,)",
                   lambda q, t: q[0], "<lambda>(q, t)"),
    "constraint_jac": ("constraint_jac(q) -> (m, n)",
                       "one positional argument, the coordinates q (n,)",
                       lambda: EYE[:1], "<lambda>()"),
    "constraint_hess": ("constraint_hess(q) -> (m, n, n)",
                        "one positional argument, the coordinates q (n,)",
                        lambda q, mu: np.zeros((1, N, N)), "<lambda>(q, mu)"),
}

GOOD = dict(mass=mass, potential=V, potential_grad=dV, constraint=lambda q: q[0],
            constraint_jac=lambda q: EYE[:1])


def make(slot, f):
    """System() with the callable ``f`` as ``slot`` and good callables elsewhere (the
    constraints only when a constraint slot is tried)."""
    kw = {k: v for k, v in GOOD.items() if not k.startswith("constraint")}
    if slot.startswith("constraint"):
        kw.update(constraint=GOOD["constraint"], constraint_jac=GOOD["constraint_jac"])
    if slot in ("mass_dir", "mass_hess_dir"):
        kw["mass_dir"] = lambda q, g: np.zeros((N, N))
    kw[slot] = f
    return sp.System(N, kw.pop("mass"), kw.pop("potential"), **kw)


@pytest.mark.parametrize("slot", sorted(SLOTS))
def test_a_callback_of_the_wrong_arity_is_refused_naming_its_slot(slot):
    expected, words, f, shown = SLOTS[slot]
    with pytest.raises(TypeError) as info:
        make(slot, f)
    msg = str(info.value)
    assert msg.startswith(f"{slot} must be callable as {expected}: {words}; {shown} cannot be "
                          f"called so ("), msg


def test_the_issue_s_examples():
    with pytest.raises(TypeError, match=r"^mass must be callable as mass\(q\) -> \(n, n\): one "
                                        r"positional argument, the coordinates q \(n,\); "
                                        r"<lambda>\(q, t\) cannot be called so \(missing a "
                                        r"required argument: 't'\)$"):
        sp.System(2, lambda q, t: EYE, lambda q: 0.0)
    with pytest.raises(TypeError, match=r"^potential must be callable as potential\(q\) -> "
                                        r"float: .*<lambda>\(\) cannot be called so \(too many "
                                        r"positional arguments\)$"):
        sp.System(2, EYE, potential=lambda: 0.0)


def test_the_single_callable_forms():
    with pytest.raises(TypeError, match=r"^func must be callable as func\(q, M, dM, dV, d2M, "
                                        r"d2V\) -> V: six positional arguments, the coordinates "
                                        r"q \(n,\) and the arrays .* to fill; fill\(q, M, dM, "
                                        r"dV\) cannot be called so"):
        def fill(q, M, dM, dV):
            return 0.0

        sp.System.combined(N, fill)
    with pytest.raises(TypeError, match=r"^func must be callable as func\(Q\) -> dict of "
                                        r"arrays: one positional argument, the k evaluation "
                                        r"points Q \(k, n\); <lambda>\(Q, t\) cannot be called"):
        sp.System.vectorized(N, lambda Q, t: {})
    with pytest.raises(TypeError, match=r"^constraint_jac must be callable as "
                                        r"constraint_jac\(q\) -> \(m, n\)"):
        sp.System.vectorized(N, lambda Q: {}, constraint=lambda q: q[0],
                             constraint_jac=lambda q, t: EYE[:1])


def test_nothing_is_called_before_the_refusal():
    calls = []

    def counted(q):
        calls.append(q)
        return 0.0

    with pytest.raises(TypeError, match="mass_dir must be callable as"):
        sp.System(N, mass, counted, mass_dir=lambda q: EYE)
    assert calls == []


def test_a_non_callable_derivative_is_named():
    with pytest.raises(TypeError, match=r"^mass_grad must be callable: mass_grad\(q\) -> "
                                        r"\(n, n, n\)$"):
        sp.System(N, mass, V, mass_grad=np.zeros((N, N, N)))


def scaled_potential(c, q):
    return c * 0.5 * float(q @ q)


class Potential:
    def __call__(self, q):
        return 0.5 * float(q @ q)


@pytest.mark.parametrize("f", [
    lambda q: 0.5 * float(q @ q),
    lambda *args: 0.5 * float(args[0] @ args[0]),
    lambda q, scale=1.0: scale * 0.5 * float(q @ q),
    functools.partial(scaled_potential, 1.0),
    Potential(),
], ids=["plain", "*args", "optional extra", "partial", "callable object"])
def test_callables_that_take_one_argument_are_accepted(f):
    S = sp.System(N, mass, f, potential_grad=dV)
    tr = sp.integrate(S, [0.1, 0.0], [0.0, 0.0], 0.01, 10)
    assert tr.status == 0
    assert tr.q[-1, 0] == pytest.approx(0.1 * math.cos(0.1), rel=1e-6)


def test_callables_without_a_signature_pass_the_check():
    """A builtin whose signature cannot be inspected is passed as it is (its first call
    reports a wrong one), as for forces."""
    import inspect
    with pytest.raises(ValueError):
        inspect.signature(math.hypot)
    S = sp.System(1, np.eye(1), math.hypot, potential_grad=lambda q: q)
    assert S.n == 1
