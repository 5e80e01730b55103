"""The mass matrix of the initial state is an input (issue 30).

M(q0) not symmetric positive definite is a ValueError raised before the run
by step, integrate, integrate_many (naming the member) and the tangent map,
naming q0, what is wrong with the eigenvalues, and where M comes from (the
callback, or the parameters of a SymPy or built-in system); M losing
definiteness later stays the run's ConvergenceError.  SymbolicSystem.with_params
checks M as the constructor does, with its message; and the constructor
tells an ill-conditioned M (a 1e-12 kg tip mass) from a singular one.
Expected eigenvalues and directions are worked out by hand in the comments.
"""
import numpy as np
import pytest

import symplectic as sp
from symplectic._model import _matrices

sy = pytest.importorskip("sympy")
symbolic = pytest.importorskip("symplectic.symbolic")
from support.cases import sympy_backends  # noqa: E402

BACKENDS = sympy_backends()
# a private SymPy module cache for this module, as test_symbolic.py has
pytestmark = pytest.mark.usefixtures("sympy_module_cache")

SINGULAR_AT_REST = (r"the mass matrix at {q} = \[0\.0, 0\.0\] \(from the SymPy model with "
                    r"parameters g=9\.81, l=2, m=1\) is singular \(smallest eigenvalue 0, largest "
                    r"4\): the velocity qdot = \[0, 1\] carries no kinetic energy")


def spherical(compile, **values):
    """The spherical pendulum in polar angles: M = m l^2 diag(1, sin^2 theta),
    singular at theta = 0 (with m = 1, l = 2: eigenvalues 0 and 4, the null
    direction phi')."""
    th, ph, thd, phd = sy.symbols("theta phi thetadot phidot")
    m, l, g = sy.symbols("m l g")
    L = m * l ** 2 / 2 * (thd ** 2 + sy.sin(th) ** 2 * phd ** 2) + m * g * l * sy.cos(th)
    params = dict(m=1.0, l=2.0, g=9.81)
    params.update(values)
    return sp.System.from_sympy(L, [th, ph], [thd, phd], params, compile=compile)


# ---------------------------------------------------------------- M(q0) at every entry point
@pytest.mark.parametrize("compiled", BACKENDS)
@pytest.mark.parametrize("run, qname", [
    (lambda s: sp.integrate(s, [0.0, 0.0], [0.0, 0.0], 0.01, 5), "q0"),
    (lambda s: sp.integrate(s, [0.0, 0.0], qdot0=[0.0, 1.0], h=0.01, n_steps=5), "q0"),
    (lambda s: sp.integrate(s, [0.0, 0.0], [0.0, 0.0], 0.01, 0), "q0"),
    (lambda s: sp.step(s, [0.0, 0.0], [0.0, 0.0], 0.01, method="midpoint"), "q"),
    (lambda s: sp.step(s, [0.0, 0.0], qdot=[0.0, 0.0], h=0.01), "q"),
    (lambda s: sp.analysis.tangent_map(s, [0.0, 0.0], [0.0, 0.0], 0.01), "q"),
    (lambda s: sp.analysis.symplecticity_defect(s, [0.0, 0.0], [0.0, 0.0], 0.01, "rk4"), "q"),
])
def test_singular_mass_at_the_start_is_a_value_error(compiled, run, qname):
    with pytest.raises(ValueError, match="^" + SINGULAR_AT_REST.format(q=qname)) as err:
        run(spherical(compiled))
    assert not isinstance(err.value, sp.ConvergenceError)
    assert str(err.value).endswith(f"a run needs M({qname}) symmetric positive definite")


@pytest.mark.parametrize("compiled", BACKENDS)
@pytest.mark.parametrize("errors", ["raise", "mark"])
def test_ensemble_names_the_member(compiled, errors):
    s = spherical(compiled)
    with pytest.raises(ValueError, match="^ensemble member 2: " + SINGULAR_AT_REST.format(
            q=r"q0\[2\]")):
        sp.integrate_many(s, [[0.5, 0.0], [-0.5, 1.0], [0.0, 0.0]], [0.0, 0.0], 0.01, 5,
                          errors=errors)
    with pytest.raises(ValueError, match=r"^ensemble member 1: the mass matrix at q0\[1\]"):
        sp.integrate_many([s, s], [[0.5, 0.0], [0.0, 0.0]], qdot0=[0.0, 0.0], h=0.01, n_steps=5)


@pytest.mark.parametrize("compiled", BACKENDS)
def test_close_to_the_singularity_still_runs(compiled):
    """theta0 = 1e-3: M = diag(4, 4e-6) is regular (Cholesky passes); the run
    goes on as before, and the refused theta0 = 0 is only the singular point."""
    tr = sp.integrate(spherical(compiled), [1e-3, 0.0], [0.0, 0.0], 0.01, 50)
    assert tr.status == 0 and len(tr.t) == 51
    q1, _ = sp.step(spherical(compiled), [1e-3, 0.0], [0.0, 0.0], 0.01)
    assert np.array_equal(q1, tr.q[1])


def indefinite_mass(q):
    return np.array([[1.0, 2.0], [2.0, 1.0]])   # eigenvalues 1 -+ 2, the -1 along [1, -1]


def test_indefinite_mass_callback():
    s = sp.System(2, indefinite_mass, lambda q: 0.0, derivative_check=False)
    msg = (r"^the mass matrix at q0 = \[0\.25, -1\.0\] \(from the mass callback indefinite_mass\) "
           r"is not positive definite \(smallest eigenvalue -1, largest 3\): the kinetic energy "
           r"1/2 qdot\^T M qdot is negative for qdot = \[1, -1\]; a run needs M\(q0\) symmetric "
           r"positive definite$")
    with pytest.raises(ValueError, match=msg):
        sp.integrate(s, [0.25, -1.0], [0.0, 0.0], 0.01, 10)
    with pytest.raises(ValueError, match=msg.replace("q0", "q")):
        sp.step(s, [0.25, -1.0], [0.0, 0.0], 0.01)


def test_mass_callback_singular_at_q0():
    """M(q) = q^2 at q = 0: the 1 x 1 zero matrix (eigenvalue 0)."""
    s = sp.System(1, lambda q: np.array([[q[0] ** 2]]), lambda q: 0.0,
                  mass_grad=lambda q: np.array([[[2 * q[0]]]]),
                  potential_grad=lambda q: np.zeros(1))
    with pytest.raises(ValueError, match=r"^the mass matrix at q = \[0\.0\] \(from the mass "
                                         r"callback <lambda>\) is singular \(smallest eigenvalue "
                                         r"0, largest 0\)"):
        sp.step(s, [0.0], [1.0], 0.01, check=False)


def test_compiled_callback_with_a_negative_mass(pendulum_lib):
    """pend_eval's M is its user_data[0]: -2 is the 1 x 1 matrix [[-2]]."""
    s = sp.System.from_cfunc(1, pendulum_lib.pend_eval, user_data=np.array([-2.0, 1.0]))
    with pytest.raises(ValueError, match=r"^the mass matrix at q0 = \[0\.5\] \(from the compiled "
                                         r"callback's M\) is not positive definite \(smallest "
                                         r"eigenvalue -2, largest -2\)"):
        sp.integrate(s, [0.5], [0.0], 0.01, 5, check=False)


def _combined_non_symmetric(q, M, dM, dV, d2M, d2V):
    M[0, 0], M[0, 1], M[1, 1] = 1.0, 0.5, 1.0          # M[1, 0] left 0
    return 0.0


def _vectorized_non_symmetric(Q):
    k = len(Q)
    M = np.tile([[1.0, 0.5], [0.0, 1.0]], (k, 1, 1))
    return dict(mass=M, mass_grad=np.zeros((k, 2, 2, 2)), potential=np.zeros(k),
                potential_grad=np.zeros((k, 2)))


@pytest.mark.parametrize("make, label", [
    (lambda: sp.System.combined(2, _combined_non_symmetric, derivative_check=False),
     "the combined callback _combined_non_symmetric"),
    (lambda: sp.System.vectorized(2, _vectorized_non_symmetric, derivative_check=False),
     "the vectorized callback _vectorized_non_symmetric"),
])
def test_non_symmetric_mass_of_the_single_callable_forms(make, label):
    """The C core reads only M's lower triangle in its Cholesky: an upper
    triangle that disagrees was taken silently before."""
    with pytest.raises(ValueError, match=r"^the mass matrix at q0 = \[0\.0, 0\.0\] \(from "
                                         + label + r"\) must be symmetric \(to 1e-10 of its "
                                         r"largest entry\): \[0, 1\] = 0\.5 but \[1, 0\] = 0\.0$"):
        sp.integrate(make(), [0.0, 0.0], [0.0, 0.0], 0.01, 5)


def test_constrained_system_checks_m_before_the_constraints():
    """A particle on the unit circle with M = diag(1, -1): refused for M, not
    sent to the constraint check's solve with M."""
    s = sp.System(2, lambda q: np.diag([1.0, -1.0]), lambda q: 0.0,
                  constraint=lambda q: q @ q - 1.0, constraint_jac=lambda q: 2.0 * q,
                  derivative_check=False)
    with pytest.raises(ValueError, match=r"^the mass matrix at q0 = \[0\.6, 0\.8\] .* is not "
                                         r"positive definite \(smallest eigenvalue -1, largest "
                                         r"1\): .* qdot = \[0, 1\]"):
        sp.integrate(s, [0.6, 0.8], [0.0, 0.0], 0.01, 5)


# ---------------------------------------------------------------- left to the run, as before
def test_losing_definiteness_within_the_run_stays_a_convergence_error():
    """M(q) = 1 - q: positive definite at q0 = 0.95, not past q = 1, which the
    step crosses: the core's run-time check and message."""
    s = sp.System(1, lambda q: np.array([[1.0 - q[0]]]), lambda q: 0.0,
                  mass_grad=lambda q: np.array([[[-1.0]]]), potential_grad=lambda q: np.zeros(1))
    with pytest.raises(sp.ConvergenceError, match=r"^simpson failed at step 0 \(t = 0, h = 0\.05\): "
                                                  r"mass matrix is not symmetric positive definite"):
        sp.step(s, [0.95], [0.1], 0.05, check=False)


def test_a_mass_callback_that_raises_is_reported_by_the_run():
    """An exception from M at q0 propagates from the run (with its note and
    the trajectory of the initial state), not from the check."""
    def mass(q):
        raise RuntimeError("no mass here")

    s = sp.System(1, mass, lambda q: 0.0, mass_grad=lambda q: np.zeros((1, 1, 1)),
                  potential_grad=lambda q: np.zeros(1))
    with pytest.raises(RuntimeError, match="no mass here") as err:
        sp.integrate(s, [0.0], [0.0], 0.01, 5, check=False)
    assert len(err.value.trajectory.t) == 1


def test_zxz_top_at_its_pole_is_still_refused_by_its_chart():
    """The built-in's evaluation refuses |sin theta| < 0.01 itself: the run's
    pre-run refusal (ConvergenceError, as before), not the mass check."""
    top = sp.systems.lagrange_top()
    with pytest.raises(sp.ConvergenceError, match=r"refused the initial state.*coordinate "
                                                  r"singularity"):
        sp.integrate(top, [0.0, 0.005, 0.0], [0.0, 0.0, 0.01], 0.001, 5)


def test_builtin_source_names_its_parameters():
    """The built-ins refuse bad parameters themselves; their M can still be
    singular where the state is: the quaternion top at Q = 0 (M = 0)."""
    top = sp.systems.lagrange_top_quaternion(m=0.5)
    with pytest.raises(ValueError, match=r"^the mass matrix at q0 = \[0\.0, 0\.0, 0\.0, 0\.0\] "
                                         r"\(from the built-in lagrange_top_quaternion with "
                                         r"parameters m=0\.5, I=.*\) is singular"):
        sp.integrate(top, [0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0], 0.01, 5)


# ---------------------------------------------------------------- with_params
@pytest.mark.parametrize("compiled", BACKENDS)
@pytest.mark.parametrize("m, text", [
    # M = m l^2 diag(1, sin^2 theta) = -1.2 diag(1, sin^2): smallest -1.2, along theta'
    (-0.3, r"the mass matrix is not positive definite at the test point q = \[.*\] with the "
           r"parameters g=9\.81, l=2, m=-0\.3 \(smallest eigenvalue -1\.2\): the kinetic energy "
           r"is negative for the velocity direction theta'$"),
    (0.0, r"the mass matrix is singular at the test point and at two random points, so probably "
          r"for every q \(q = \[.*\] with the parameters g=9\.81, l=2, m=0, eigenvalues \[0, 0\]\)"),
])
def test_with_params_refuses_what_the_constructor_refuses(compiled, m, text):
    base = spherical(compiled)
    with pytest.raises(ValueError, match="^" + text) as changed:
        base.with_params(m=m)
    with pytest.raises(ValueError) as made:
        spherical(compiled, m=m)
    assert str(changed.value) == str(made.value)


@pytest.mark.parametrize("compiled", BACKENDS)
def test_with_params_accepts_a_valid_mass(compiled):
    """m = 2 passes; the run equals that of a system built with m = 2."""
    changed = spherical(compiled).with_params(m=2.0)
    made = spherical(compiled, m=2.0)
    a = sp.integrate(changed, [0.4, 0.0], [0.0, 0.3], 0.01, 50)
    b = sp.integrate(made, [0.4, 0.0], [0.0, 0.3], 0.01, 50)
    assert changed.params["m"] == 2.0
    np.testing.assert_array_equal(a.q, b.q)
    np.testing.assert_array_equal(a.p, b.p)


# ---------------------------------------------------------------- singular or ill-conditioned
def tip_mass_pendulum(compiled, m2):
    """A double pendulum from the positions of its two point masses (absolute
    angles a, b; l1 = 1, l2 = 0.5), the second mass m2."""
    a, b, ad, bd = sy.symbols("a b adot bdot")
    m1, m2s, l1, l2, g = sy.symbols("m1 m2 l1 l2 g", positive=True)
    r1 = [l1 * sy.sin(a), -l1 * sy.cos(a)]
    r2 = [l1 * sy.sin(a) + l2 * sy.sin(b), -l1 * sy.cos(a) - l2 * sy.cos(b)]
    T = symbolic.kinetic_from_positions([a, b], [ad, bd], [(m1, r1), (m2s, r2)])
    V = symbolic.gravity_potential([(m1, r1), (m2s, r2)], g)
    return sp.System.from_sympy(T - V, [a, b], [ad, bd],
                                dict(m1=1.0, m2=m2, l1=1.0, l2=0.5, g=9.81), compile=compiled)


@pytest.mark.parametrize("compiled", BACKENDS)
def test_a_tiny_tip_mass_is_regular(compiled):
    """m2 = 1e-12 kg: M = [[(m1+m2) l1^2, m2 l1 l2 cos], [., m2 l2^2]] has
    eigenvalues ~1 and ~2.5e-13 (condition ~4e12) but is regular (det =
    m1 m2 l1^2 l2^2 + m2^2 l1^2 l2^2 sin^2 > 0): accepted, from the constructor
    and from with_params, and integrated as the built-in C double pendulum
    (independent, hand-derived code) integrates it."""
    sys_ = tip_mass_pendulum(compiled, 1e-12)
    also = tip_mass_pendulum(compiled, 1.0).with_params(m2=1e-12)
    ref = sp.integrate(sp.systems.double_pendulum(m1=1.0, m2=1e-12, l1=1.0, l2=0.5),
                       [0.5, 0.3], qdot0=[0.0, 0.4], h=0.01, n_steps=400)
    for s in (sys_, also):
        tr = sp.integrate(s, [0.5, 0.3], qdot0=[0.0, 0.4], h=0.01, n_steps=400)
        # measured 5e-12 in q and 2e-12 of each momentum's own size (rounding of the two
        # evaluations, grown over 400 steps)
        assert np.max(np.abs(tr.q - ref.q)) <= 1e-10
        for j in range(2):
            assert np.max(np.abs(tr.p[:, j] - ref.p[:, j])) <= 1e-10 * np.max(np.abs(ref.p[:, j]))


def test_singular_whatever_the_scale_is_still_refused():
    """T = 1/2 (x' + 1e-6 y')^2: M = [[1, 1e-6], [1e-6, 1e-12]], rank 1 at every
    q (exactly: rational entries), its rows 1e6 apart in scale."""
    x, y, vx, vy = sy.symbols("x y vx vy")
    c = sy.Rational(1, 10 ** 6)
    with pytest.raises(ValueError, match=r"singular for every q: det M\(q\) simplifies to 0; "
                                         r"the velocity combination -1e-06\*x' \+ y' carries no "
                                         r"kinetic energy"):
        symbolic.system((vx + c * vy) ** 2 / 2 - x ** 2 - y ** 2, [x, y], [vx, vy], compile=False)


@pytest.mark.parametrize("M, verdict, v", [
    ([[4.0, 0.0], [0.0, 0.0]], "singular", [0.0, 1.0]),                  # a zero row
    ([[1.0, 2.0], [2.0, 1.0]], "not positive definite", [1.0, -1.0]),    # eigenvalues -1, 3
    ([[1.0, 1e-6], [1e-6, 1e-12]], "singular", [-1e-6, 1.0]),            # det 0, rows 1e6 apart
    ([[1.0, 0.0], [0.0, -1e-14]], "not positive definite", [0.0, 1.0]),  # tiny but negative
    ([[0.0, 1e-20], [1e-20, 1.0]], "not positive definite", None),       # det -1e-40 < 0
    ([[1.0 + 1e-12, 3e-13], [3e-13, 1e-12]], "positive definite", None),  # det 9.1e-13 > 0
    ([[1e-300, 1e10], [1e10, 1e-300]], "not positive definite", [1.0, -1.0]),  # scaling overflows
])
def test_definiteness(M, verdict, v):
    got, w, direction = _matrices.definiteness(np.array(M))
    assert got == verdict
    np.testing.assert_allclose(w, np.linalg.eigvalsh(np.array(M)), rtol=1e-12)
    if v is not None:
        np.testing.assert_allclose(direction, v, rtol=1e-9, atol=1e-15)
