"""Derivatives checked before they are trusted (issue 14, item 2).

A mass_grad laid out [i, j, k] instead of [k, i, j] integrates, conserves
energy and gives a wrong trajectory; the first step/integrate/integrate_many
of a system with user-supplied derivatives must refuse it with a
DerivativeError that names the callback, the entry, both values, the q and the
layout it looks like -- in every form (plain and contracted callables,
combined, vectorized, compiled callbacks).  Correct derivatives must never be
refused: every built-in system written independently here as Python
callables, at random and at near-singular states, and the SymPy examples.

Expected values come from the models' analytic derivatives written in this
file (or support/models.py), never from the code under test; which axis
permutations are distinguishable is decided here on a generic tensor with the
symmetries of dM and d2M.
"""
import ctypes
import itertools
import math
import pickle
import re
import textwrap

import numpy as np
import pytest

import symplectic as sp
from symplectic._model import _derivcheck
from support import cbuild
from support.models import L_DP, TOP, dp_callables, top_callables
from support.twins import builtin_twins, chain_callables, pendulum_callables

Q0 = np.array([0.785, 1.047])
P0 = np.array([0.0, 0.0])
H = 0.01


# ====================================================================== models
def generic_callables(n=3, seed=3):
    """A made-up system with no structure in its tensors: M = 6 I + sum_m sin(a_m.q + b_m) S_m,
    V = sum_m c_m cos(w_m.q + e_m), so that every axis permutation the core can
    tell apart gives a different tensor."""
    rng = np.random.default_rng(seed)
    a, b = rng.uniform(-1, 1, (4, n)), rng.uniform(0, 3, 4)
    S = rng.uniform(-1, 1, (4, n, n))
    S = S + S.transpose(0, 2, 1)
    w, e, c = rng.uniform(-1, 1, (3, n)), rng.uniform(0, 3, 3), rng.uniform(0.5, 2, 3)

    def mass(q):
        return 6 * np.eye(n) + np.einsum("m,mij->ij", np.sin(a @ q + b), S)

    def mass_grad(q):
        return np.einsum("m,mk,mij->kij", np.cos(a @ q + b), a, S)

    def mass_hess(q):
        return -np.einsum("m,mk,ml,mij->klij", np.sin(a @ q + b), a, a, S)

    def potential(q):
        return float(np.sum(c * np.cos(w @ q + e)))

    def potential_grad(q):
        return -(c * np.sin(w @ q + e)) @ w

    def potential_hess(q):
        return -np.einsum("m,mk,ml->kl", c * np.cos(w @ q + e), w, w)

    return dict(mass=mass, mass_grad=mass_grad, mass_hess=mass_hess, potential=potential,
                potential_grad=potential_grad, potential_hess=potential_hess)


# ====================================================================== the forms
def build(form, n, c, **kw):
    """The same model (dict of callables, possibly with wrong derivatives) in one form."""
    if form == "callables":
        return sp.System(n, **c, **kw)
    if form == "contracted":
        d = dict(mass=c["mass"], potential=c["potential"], potential_grad=c["potential_grad"],
                 mass_dir=lambda q, g: np.einsum("kij,j->ik", c["mass_grad"](q), g))
        if c.get("mass_hess") is not None:
            d["mass_hess_dir"] = lambda q, g: 0.5 * np.einsum("klij,i,j->kl", c["mass_hess"](q), g, g)
        if c.get("potential_hess") is not None:
            d["potential_hess"] = c["potential_hess"]
        return sp.System(n, **d, **kw)
    if form == "combined":
        def fill(q, M, dM, dV, d2M, d2V):
            M[...] = c["mass"](q)
            dM[...] = c["mass_grad"](q)
            d2M[...] = c["mass_hess"](q)
            dV[...] = c["potential_grad"](q)
            d2V[...] = c["potential_hess"](q)
            return c["potential"](q)
        return sp.System.combined(n, fill, **kw)
    if form == "vectorized":
        def func(Q):
            out = {"mass": np.array([c["mass"](q) for q in Q]),
                   "mass_grad": np.array([c["mass_grad"](q) for q in Q]),
                   "potential": np.array([c["potential"](q) for q in Q]),
                   "potential_grad": np.array([c["potential_grad"](q) for q in Q])}
            for k in ("mass_hess", "potential_hess"):
                if c.get(k) is not None:
                    out[k] = np.array([c[k](q) for q in Q])
            return out
        return sp.System.vectorized(n, func, **kw)
    raise ValueError(form)


FORMS = ["callables", "contracted", "combined", "vectorized"]
CALLBACK = {   # the name each form's message must give the wrong callback
    ("callables", "mass_grad"): "mass_grad", ("contracted", "mass_grad"): "mass_dir",
    ("combined", "mass_grad"): "the combined callable's dM",
    ("vectorized", "mass_grad"): "vectorized 'mass_grad'",
    ("cfunc", "mass_grad"): "the compiled callback's A",
    ("callables", "potential_grad"): "potential_grad", ("contracted", "potential_grad"): "potential_grad",
    ("combined", "potential_grad"): "the combined callable's dV",
    ("vectorized", "potential_grad"): "vectorized 'potential_grad'",
    ("cfunc", "potential_grad"): "the compiled callback's dV",
    ("callables", "mass_hess"): "mass_hess", ("contracted", "mass_hess"): "mass_hess_dir",
    ("combined", "mass_hess"): "the combined callable's d2M",
    ("vectorized", "mass_hess"): "vectorized 'mass_hess'",
    ("cfunc", "mass_hess"): "the compiled callback's H",
}


def run(entry, system, q0=Q0, p0=P0, **kw):
    """The first use of a system through one public entry point."""
    if entry == "integrate":
        return sp.integrate(system, q0, p0, H, 5, **kw)
    if entry == "step":
        return sp.step(system, q0, p0, H, **kw)
    if entry == "integrate_many":
        return sp.integrate_many(system, [q0, np.asarray(q0) + 0.01], p0, H, 5, **kw)
    raise ValueError(entry)


ENTRIES = ["integrate", "step", "integrate_many"]


# ====================================================================== layouts, decided here
LABELS = {"mass_grad": "kij", "mass_hess": "klij"}


def used(quantity, T):
    """What the core sees of a tensor: dM entirely; d2M only through 1/2 g^T d2M g."""
    return 0.5 * (T + T.transpose(0, 1, 3, 2)) if quantity == "mass_hess" else T


def generic_tensor(quantity, n=3, seed=11):
    """A tensor with exactly the symmetries of the true one and no others."""
    rng = np.random.default_rng(seed)
    if quantity == "mass_grad":
        R = rng.standard_normal((n,) * 3)
        return R + R.transpose(0, 2, 1)
    R = rng.standard_normal((n,) * 4)
    R = R + R.transpose(1, 0, 2, 3)
    return R + R.transpose(0, 1, 3, 2)


def equivalent(quantity, P1, P2):
    """True if layouts P1 and P2 give the same tensor as the core uses it, for every M."""
    R = generic_tensor(quantity)
    return np.allclose(used(quantity, R.transpose(P1)), used(quantity, R.transpose(P2)))


def hinted_layout(message, quantity):
    """The first layout the hint says the callback looks like."""
    m = re.search(r"laid out (?:minus )?\[([klij, ]+)\]", message)
    assert m, message
    return tuple(LABELS[quantity].index(x) for x in m.group(1).split(", "))


def permuted(c, key, P):
    f = c[key]
    d = dict(c)
    d[key] = lambda q: np.asarray(f(q)).transpose(P)
    return d


def differs(quantity, c, P, points):
    """Does the permuted tensor of model c differ, as the core uses it, from the
    correct one at any of the points (the analytic tensors of the model)?"""
    key = quantity
    return any(not np.allclose(used(quantity, c[key](q).transpose(P)), used(quantity, c[key](q)),
                               rtol=1e-12, atol=1e-14) for q in points)


# ====================================================================== wrong derivatives are refused
@pytest.mark.parametrize("entry", ENTRIES)
@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("P", list(itertools.permutations(range(3))))
def test_mass_grad_in_every_axis_order(P, form, entry):
    """All six axis orders of the double pendulum's dM: [k, i, j] and [k, j, i] are the
    same array (M is symmetric) and must pass; the four others must be refused, with
    the layout named (up to the i <-> j symmetry)."""
    c = dp_callables()
    sys_ = build(form, 2, permuted(c, "mass_grad", P))
    if not differs("mass_grad", c, P, [Q0]):
        assert P in ((0, 1, 2), (0, 2, 1))
        run(entry, sys_)
        return
    with pytest.raises(sp.DerivativeError) as info:
        run(entry, sys_)
    err = info.value
    msg = str(err)
    assert isinstance(err, ValueError)
    assert msg.startswith(CALLBACK[form, "mass_grad"] + " disagrees")
    assert err.quantity == "mass_grad" and err.callback == CALLBACK[form, "mass_grad"]
    assert equivalent("mass_grad", hinted_layout(msg, "mass_grad"), P), msg
    assert "expected [k, i, j]" in msg or "instead of A[i, k] = sum_j dM_ij/dq_k g_j" in msg
    assert "only the position of the derivative index k can be told apart" in msg


@pytest.mark.parametrize("entry", ENTRIES)
@pytest.mark.parametrize("form", FORMS)
def test_wrong_sign_potential_grad(form, entry):
    c = dict(dp_callables())
    good = c["potential_grad"]
    c["potential_grad"] = lambda q: -good(q)
    with pytest.raises(sp.DerivativeError) as info:
        run(entry, build(form, 2, c))
    msg = str(info.value)
    assert msg.startswith(CALLBACK[form, "potential_grad"] + " disagrees")
    assert "looks like the negative of dV/dq_k (a sign error)" in msg
    k = info.value.index[0]
    assert info.value.supplied == pytest.approx(-good(Q0)[k], rel=1e-15)
    assert info.value.finite_difference == pytest.approx(good(Q0)[k], rel=1e-9)


@pytest.mark.parametrize("entry", ENTRIES)
@pytest.mark.parametrize("form", FORMS)
def test_transposed_mass_hess(form, entry):
    """d2M returned as [i, j, k, l] = d2M_kl/dq_i dq_j instead of [k, l, i, j]."""
    c = dp_callables()
    with pytest.raises(sp.DerivativeError) as info:
        run(entry, build(form, 2, permuted(c, "mass_hess", (2, 3, 0, 1))))
    err = info.value
    msg = str(err)
    assert msg.startswith(CALLBACK[form, "mass_hess"] + " disagrees")
    assert err.quantity == "mass_hess"
    assert equivalent("mass_hess", hinted_layout(msg, "mass_hess"), (2, 3, 0, 1)), msg
    # the entry is one of the 4-index tensor, with both values right
    k, l, i, j = err.index
    T2 = c["mass_hess"](Q0)
    assert err.supplied == pytest.approx(0.5 * (T2[i, j, k, l] + T2[j, i, k, l]), abs=1e-15)
    assert err.finite_difference == pytest.approx(T2[k, l, i, j], abs=1e-9)


@pytest.mark.parametrize("form", ["callables", "contracted"])
@pytest.mark.parametrize("quantity", ["mass_grad", "mass_hess"])
def test_every_distinguishable_layout_on_a_generic_system(quantity, form):
    """Every axis permutation of dM (6) and d2M (24) on a system without special
    structure: exactly those that change the tensor as the core uses it are refused,
    and the hint names a layout equivalent to the one used."""
    n = 3
    c = generic_callables(n)
    q0 = np.array([0.3, -0.7, 1.1])
    refused = 0
    for P in itertools.permutations(range(len(LABELS[quantity]))):
        sys_ = build(form, n, permuted(c, quantity, P))
        if not differs(quantity, c, P, [q0]):
            sp.integrate(sys_, q0, np.zeros(n), H, 3)
            continue
        with pytest.raises(sp.DerivativeError) as info:
            sp.integrate(sys_, q0, np.zeros(n), H, 3)
        refused += 1
        msg = str(info.value)
        assert equivalent(quantity, hinted_layout(msg, quantity), P), (P, msg)
    # dM: 6 orders in 3 classes of 2; d2M: 24 orders in 4 classes (4, 4, 8, 8)
    assert refused == {"mass_grad": 4, "mass_hess": 20}[quantity]


def test_wrong_layout_on_a_large_chain_uses_projections_and_reports_the_full_tensor():
    """n = 20 > 16: the check compares a few random projections (cost independent of
    n); the message still gives an entry of the full tensor and the layout."""
    n = 20
    rng = np.random.default_rng(2)
    c = chain_callables(n, rng.uniform(0.5, 2, n), rng.uniform(0.3, 1.0, n))
    q0 = rng.uniform(-0.5, 0.5, n)
    sp.integrate(build("callables", n, c), q0, np.zeros(n), 1e-3, 2)        # correct: passes
    with pytest.raises(sp.DerivativeError) as info:
        sp.integrate(build("callables", n, permuted(c, "mass_grad", (1, 2, 0))), q0, np.zeros(n),
                     1e-3, 2)
    err = info.value
    k, i, j = err.index
    assert err.supplied == pytest.approx(c["mass_grad"](q0)[j, k, i], abs=1e-15)
    assert err.finite_difference == pytest.approx(c["mass_grad"](q0)[k, i, j], abs=1e-8)
    assert hinted_layout(str(err), "mass_grad") in ((1, 2, 0), (2, 1, 0))


# ====================================================================== compiled callbacks
C_SOURCE = textwrap.dedent(r"""
    #include <math.h>
    #include <string.h>
    /* the double pendulum with its tensors laid out as the parameters say:
       A from dM read through the axis permutation pg, H from d2M read
       through ph, grad V multiplied by sdv (1 or -1) */
    typedef struct { double m1, m2, l1, l2, g; int pg[3]; int ph[4]; double sdv; } par;

    int dp_layout_eval(const double *q, const double *g, unsigned need, double *M, double *A,
                       double *H, double *V, double *dV, double *d2V, void *ud)
    {
        const par *P = ud;
        const double k = P->m2 * P->l1 * P->l2, s = sin(q[0] - q[1]), c = cos(q[0] - q[1]);
        const double v1 = (P->m1 + P->m2) * P->g * P->l1, v2 = P->m2 * P->g * P->l2;
        double T[2][2][2], T2[2][2][2][2];
        memset(T, 0, sizeof T);
        memset(T2, 0, sizeof T2);
        T[0][0][1] = T[0][1][0] = -k * s;
        T[1][0][1] = T[1][1][0] = k * s;
        for (int a = 0; a < 2; a++)
            for (int b = 0; b < 2; b++)
                T2[a][b][0][1] = T2[a][b][1][0] = (a == b ? -1.0 : 1.0) * k * c;
        if (need & 1) { M[0] = (P->m1 + P->m2) * P->l1 * P->l1; M[1] = M[2] = k * c;
                        M[3] = P->m2 * P->l2 * P->l2; }
        if (need & 2)
            for (int i = 0; i < 2; i++)
                for (int cc = 0; cc < 2; cc++) {
                    double sum = 0.0;
                    for (int j = 0; j < 2; j++) {
                        const int a[3] = {cc, i, j};
                        int x[3];
                        for (int m = 0; m < 3; m++) x[P->pg[m]] = a[m];
                        sum += T[x[0]][x[1]][x[2]] * g[j];
                    }
                    A[i * 2 + cc] = sum;
                }
        if (need & 4)
            for (int kk = 0; kk < 2; kk++)
                for (int l = 0; l < 2; l++) {
                    double sum = 0.0;
                    for (int i = 0; i < 2; i++)
                        for (int j = 0; j < 2; j++) {
                            const int a[4] = {kk, l, i, j};
                            int x[4];
                            for (int m = 0; m < 4; m++) x[P->ph[m]] = a[m];
                            sum += T2[x[0]][x[1]][x[2]][x[3]] * g[i] * g[j];
                        }
                    H[kk * 2 + l] = 0.5 * sum;
                }
        if (need & 8) V[0] = -v1 * cos(q[0]) - v2 * cos(q[1]);
        if (need & 16) { dV[0] = P->sdv * v1 * sin(q[0]); dV[1] = P->sdv * v2 * sin(q[1]); }
        if (need & 32) { d2V[0] = v1 * cos(q[0]); d2V[1] = d2V[2] = 0.0; d2V[3] = v2 * cos(q[1]); }
        return 0;
    }
""")


class LayoutPar(ctypes.Structure):
    _fields_ = [(k, ctypes.c_double) for k in ("m1", "m2", "l1", "l2", "g")] + \
        [("pg", ctypes.c_int * 3), ("ph", ctypes.c_int * 4), ("sdv", ctypes.c_double)]


@pytest.fixture(scope="module")
def layout_lib(tmp_path_factory):
    return cbuild.shared_or_skip(C_SOURCE, tmp_path_factory.mktemp("derivcheck"), "dp_layout",
                                 flags=("-std=c99", "-O2"))


def cfunc_system(lib, pg=(0, 1, 2), ph=(0, 1, 2, 3), sdv=1.0):
    par = LayoutPar(1.0, 1.0, L_DP, L_DP, 9.81, (ctypes.c_int * 3)(*pg), (ctypes.c_int * 4)(*ph), sdv)
    return sp.System.from_cfunc(2, lib.dp_layout_eval, ctypes.addressof(par), keepalive=par)


@pytest.mark.parametrize("entry", ENTRIES)
def test_compiled_callback(layout_lib, entry):
    c = dp_callables()
    ref = sp.integrate(sp.systems.double_pendulum(l1=L_DP, l2=L_DP), Q0, P0, H, 5)
    good = cfunc_system(layout_lib)
    if entry == "integrate":
        assert np.allclose(run(entry, good).q, ref.q, rtol=0, atol=1e-13)
    else:
        run(entry, good)
    for P in itertools.permutations(range(3)):
        sys_ = cfunc_system(layout_lib, pg=P)
        if not differs("mass_grad", c, P, [Q0]):
            run(entry, sys_)
            continue
        with pytest.raises(sp.DerivativeError) as info:
            run(entry, sys_)
        msg = str(info.value)
        assert msg.startswith("the compiled callback's A (need bit 2) disagrees"), msg
        assert "rebuilt from A(q, e_j)" in msg
        assert equivalent("mass_grad", hinted_layout(msg, "mass_grad"), P), msg
    with pytest.raises(sp.DerivativeError, match=r"^the compiled callback's dV .* sign error"):
        run(entry, cfunc_system(layout_lib, sdv=-1.0))
    with pytest.raises(sp.DerivativeError) as info:
        run(entry, cfunc_system(layout_lib, ph=(2, 3, 0, 1)))
    msg = str(info.value)
    assert msg.startswith("the compiled callback's H (need bit 4) disagrees"), msg
    assert "H[k, l] = 1/2 sum_ij d2M_kl/dq_i dq_j g_i g_j" in msg      # what it computes
    assert equivalent("mass_hess", hinted_layout(msg, "mass_hess"), (2, 3, 0, 1)), msg


# ====================================================================== correct derivatives pass
def builtin_models():
    """Every built-in system, written independently as Python callables
    (tests/support/twins.py), with a random-state generator; and a 20-link chain."""
    rng = np.random.default_rng(21)
    models = {name: (t.n, t.callables, t.draw) for name, t in builtin_twins(rng).items()}
    models["pendulum_chain_20"] = (20, chain_callables(20, np.linspace(0.5, 2, 20),
                                                       np.linspace(1, 0.3, 20)),
                                   lambda: rng.uniform(-1, 1, 20))
    return models


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("name", sorted(builtin_models()))
def test_correct_derivatives_of_every_builtin_pass(name, form):
    n, c, draw = builtin_models()[name]
    if not callable(c["mass"]) and form != "callables":    # a constant M in the other forms
        M = c["mass"]
        c = dict(c, mass=lambda q: M, mass_grad=lambda q: np.zeros((n,) * 3),
                 mass_hess=lambda q: np.zeros((n,) * 4))
    for _ in range(4):
        q0 = draw()
        sys_ = build(form, n, c)
        sp.integrate(sys_, q0, np.zeros(n), 1e-3, 2)                # first use: checked
        assert sys_._derivcheck_verdict == "passed"
        report = sys_.check_derivatives(q0)                          # and explicitly
        assert all(isinstance(v, float) for v in report.values()), report


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("theta", [0.0, 1e-12, 1e-8, 1e-4, math.pi, math.pi - 1e-9])
def test_top_near_its_singular_points(theta, form):
    """At theta ~ 0 and pi every entry of dM is O(theta) and M is (nearly)
    singular: the tolerance floor from the finite-difference error, not rtol, decides."""
    c = top_callables()
    q = np.array([0.4, theta, -1.3])
    sys_ = build(form, 3, c)
    sys_.check_derivatives(q)
    try:
        sp.integrate(sys_, q, sys_.mass(q) @ np.array([9.2, 0.0, 252.0]), 1e-4, 2)
    except sp.ConvergenceError:
        pass                              # M singular at theta = 0: not a derivative problem
    except ValueError as exc:             # ... refused before the run (M(q0) is an input)
        assert "is singular" in str(exc) and not isinstance(exc, sp.DerivativeError)


def test_spherical_pendulum_and_pendulum_at_and_near_equilibrium():
    m, l, g = 1.0, 1.0, 9.81

    def mass_grad(q):
        T = np.zeros((2, 2, 2))
        T[0, 1, 1] = m * l * l * math.sin(2 * q[0])
        return T

    def mass_hess(q):
        T = np.zeros((2, 2, 2, 2))
        T[0, 0, 1, 1] = 2 * m * l * l * math.cos(2 * q[0])
        return T

    sph = dict(mass=lambda q: np.diag([m * l * l, m * l * l * math.sin(q[0]) ** 2]),
               mass_grad=mass_grad, mass_hess=mass_hess,
               potential=lambda q: -m * g * l * math.cos(q[0]),
               potential_grad=lambda q: np.array([m * g * l * math.sin(q[0]), 0.0]),
               potential_hess=lambda q: np.array([[m * g * l * math.cos(q[0]), 0.0], [0.0, 0.0]]))
    for theta in (0.0, 1e-9, 1e-5, 1.0):
        for form in FORMS:
            build(form, 2, sph).check_derivatives([theta, 0.3])
    for q in (0.0, 1e-9, -3e-7, 1e-3):
        for form in FORMS:
            build(form, 1, pendulum_callables()).check_derivatives([q])
            sp.integrate(build(form, 1, pendulum_callables()), [q], [0.0], 0.01, 2)


def test_a_sign_error_invisible_at_the_initial_state_is_caught_at_the_perturbed_one():
    """At the equilibrium q0 = 0 grad V = 0, so -grad V is right there; the perturbed
    state exposes it, and the message says where."""
    c = dict(dp_callables())
    good = c["potential_grad"]
    c["potential_grad"] = lambda q: -good(q)
    sys_ = sp.System(2, **c)
    report = sys_.check_derivatives([0.0, 0.0], raise_on_failure=False)
    assert report["potential_grad"] == 0.0                 # looks right at q = 0 ...
    assert report["potential_hess"] > 1                    # (its derivative does not)
    with pytest.raises(sp.DerivativeError,
                       match=r"^potential_grad disagrees .*a perturbed state.*sign error") as info:
        sp.integrate(sys_, [0.0, 0.0], [0.0, 0.0], H, 5)   # ... and is reported first
    assert "Also wrong" not in str(info.value)
    assert np.all(info.value.q != 0.0) and np.max(np.abs(info.value.q)) <= 0.1


def test_a_model_defined_only_near_the_initial_state():
    """V = -sqrt(1 - q^2) is undefined beyond |q| = 1; starting at q0 = 0.95 the
    perturbed state q0 + dq may leave the domain: the check falls back to q0 + dq/10
    rather than failing."""
    c = dict(mass=lambda q: np.array([[1.0]]), mass_grad=lambda q: np.zeros((1, 1, 1)),
             potential=lambda q: -math.sqrt(1.0 - q[0] ** 2),
             potential_grad=lambda q: np.array([q[0] / math.sqrt(1.0 - q[0] ** 2)]))
    for q0 in (0.95, -0.95, 0.0):
        sys_ = sp.System(1, **c)
        sp.integrate(sys_, [q0], [0.0], 1e-3, 2)
        assert sys_._derivcheck_verdict == "passed"


def sympy_examples():
    """The SymPy examples of the notebooks, tests and README."""
    sy = pytest.importorskip("sympy")
    symbolic = pytest.importorskip("symplectic.symbolic")
    out = {}
    q1, q2, u1, u2 = sy.symbols("q1 q2 u1 u2")
    m1, m2, l1, l2, g = sy.symbols("m1 m2 l1 l2 g", positive=True)
    dpv = {m1: 1.0, m2: 2.0, l1: 0.7, l2: 1.3, g: 9.81}
    L = ((m1 + m2) * l1 ** 2 * u1 ** 2 / 2 + m2 * l1 * l2 * sy.cos(q1 - q2) * u1 * u2
         + m2 * l2 ** 2 * u2 ** 2 / 2 + (m1 + m2) * g * l1 * sy.cos(q1) + m2 * g * l2 * sy.cos(q2))
    out["double pendulum"] = ((L, [q1, q2], [u1, u2], dpv), {})
    r1 = [l1 * sy.sin(q1), -l1 * sy.cos(q1)]
    r2 = [r1[0] + l2 * sy.sin(q2), r1[1] - l2 * sy.cos(q2)]
    bodies = [(m1, r1), (m2, r2)]
    L = (symbolic.kinetic_from_positions([q1, q2], [u1, u2], bodies)
         - symbolic.gravity_potential(bodies, g))
    out["double pendulum from positions"] = ((L, [q1, q2], [u1, u2], dpv), {})
    x, th, xd, thd = sy.symbols("x theta xdot thetadot")
    Mc, m, l = sy.symbols("M m l", positive=True)
    cart, bob = (Mc, [x, 0]), (m, [x + l * sy.sin(th), -l * sy.cos(th)])
    L = (symbolic.kinetic_from_positions([x, th], [xd, thd], [cart, bob])
         - symbolic.gravity_potential([cart, bob], g))
    out["pendulum on a cart"] = ((L, [x, th], [xd, thd], {Mc: 1.0, m: 0.3, l: 0.5, g: 9.81}),
                                 dict(simplify=True))
    r, ph, rd, phd = sy.symbols("r phi rdot phidot")
    k, l0 = sy.symbols("k l_0", positive=True)
    body = (m, [r * sy.sin(ph), -r * sy.cos(ph)])
    L = (symbolic.kinetic_from_positions([r, ph], [rd, phd], [body])
         - symbolic.gravity_potential([body], g) - k * (r - l0) ** 2 / 2)
    out["spring pendulum"] = ((L, [r, ph], [rd, phd], {m: 1.0, g: 9.81, k: 40.0, l0: 1.0}),
                              dict(simplify=True))
    qs = sy.symbols("x a1 a2 a3")
    vs = sy.symbols("xd ad1 ad2 ad3")
    pos, bodies = [qs[0], 0], [(Mc, [qs[0], 0])]
    for a in qs[1:]:
        pos = [pos[0] + l * sy.sin(a), pos[1] - l * sy.cos(a)]
        bodies.append((m, list(pos)))
    L = (symbolic.kinetic_from_positions(list(qs), list(vs), bodies)
         - symbolic.gravity_potential(bodies, g))
    out["3-link pendulum on a cart"] = ((L, list(qs), list(vs), {Mc: 1.0, m: 0.5, l: 0.4, g: 9.81}),
                                        {})
    phi, theta, psi = sy.symbols("phi theta psi")
    dphi, dtheta, dpsi = sy.symbols("phidot thetadot psidot")
    mt, I, I3, lt = sy.symbols("m I I_3 l", positive=True)
    R = symbolic.rotation("z", phi) * symbolic.rotation("x", theta) * symbolic.rotation("z", psi)
    top = symbolic.RigidBody(mt, R * sy.Matrix([0, 0, lt]), [I - mt * lt ** 2, I - mt * lt ** 2, I3],
                             rotation=R)
    q3, qd3 = [phi, theta, psi], [dphi, dtheta, dpsi]
    L = (symbolic.kinetic_from_positions(q3, qd3, [top]) - symbolic.gravity_potential([top], g))
    out["Lagrange top (rigid body)"] = ((L, q3, qd3, {mt: TOP["m"], I: TOP["I"], I3: TOP["I3"],
                                                      lt: TOP["l"], g: TOP["g"]}), dict(simplify=True))
    M2 = [[1 + q2 ** 2, 0], [0, 2 + sy.sin(q1)]]
    out["(M, V) pair"] = (((M2, q1 ** 2 + sy.cos(q2)), [q1, q2], None, None), {})
    return out


@pytest.mark.parametrize("compile_", [True, False], ids=["compiled", "numpy"])
def test_sympy_examples_pass_and_are_not_checked_on_use(compile_, tmp_path, monkeypatch):
    examples = sympy_examples()
    from symplectic import symbolic
    if compile_ and not cbuild.sympy_compiles():
        pytest.skip(cbuild.NO_COMPILER)
    monkeypatch.setenv("SYMPLECTIC_CACHE", str(tmp_path))
    rng = np.random.default_rng(4)
    for name, ((expr, q, qd, params), opts) in examples.items():
        sys_ = symbolic.system(expr, q, qd, params, compile=compile_, **opts)
        n = sys_.n
        for _ in range(3):
            x = rng.uniform(-1.5, 1.5, n)
            if "top" in name:
                x[1] = rng.uniform(0.3, 2.8)
            if "spring" in name:
                x[0] = rng.uniform(0.5, 2.0)
            report = sys_.check_derivatives(x)                 # explicit: runs, and passes
            assert set(report) == {"mass_grad", "potential_grad", "mass_hess", "potential_hess"}
            assert all(isinstance(v, float) for v in report.values()), (name, report)

        def forbidden(*a, **k):
            raise AssertionError("SymPy-generated systems are not checked on use")

        with monkeypatch.context() as mp:
            mp.setattr(_derivcheck, "_first_use", forbidden)
            sp.integrate(sys_, x, np.zeros(n), 1e-3, 2)


def test_builtin_systems_are_not_checked_on_use(monkeypatch):
    monkeypatch.setattr(_derivcheck, "_first_use",
                        lambda *a: (_ for _ in ()).throw(AssertionError("checked")))
    sp.integrate(sp.systems.double_pendulum(), Q0, P0, H, 3)
    # (at rest it would fall through theta = pi, which the ZXZ top refuses before the step)
    sp.step(sp.systems.lagrange_top(), [0.1, 1.0, 0.2], [0.01, 0.0, 0.03], H)
    sp.integrate_many(sp.systems.pendulum(), [[0.1], [0.2]], [0.0], H, 3)


# ====================================================================== verdict, switches
def counted_combined(c):
    calls = {"n": 0}
    base = build("combined", 2, c)
    fill = base._callables["combined"]

    def f(*a):
        calls["n"] += 1
        return fill(*a)

    return f, calls


def test_the_verdict_is_cached_per_system_object():
    f, calls = counted_combined(dp_callables())
    plain = sp.System.combined(2, f)
    sp.integrate(plain, Q0, P0, H, 50, check=False)
    n_run = calls["n"]                                   # calls of one 50-step run, no check

    calls["n"] = 0
    sys_ = sp.System.combined(2, f)
    sp.integrate(sys_, Q0, P0, H, 50)
    first = calls["n"]
    assert first > n_run                                 # the check ran
    calls["n"] = 0
    sp.integrate(sys_, Q0, P0, H, 50)
    assert calls["n"] == n_run                           # and not again
    calls["n"] = 0
    sp.step(sys_, Q0, P0, H)
    sp.integrate_many(sys_, [Q0, Q0], P0, H, 50)
    step_calls = calls["n"]
    calls["n"] = 0
    sp.step(plain, Q0, P0, H, check=False)
    sp.integrate_many(plain, [Q0, Q0], P0, H, 50, check=False)
    assert step_calls == calls["n"]
    calls["n"] = 0
    sp.integrate(sp.System.combined(2, f), Q0, P0, H, 50)   # a new object is checked again
    assert calls["n"] == first


def test_check_false_and_the_system_option_skip_it():
    c = permuted(dp_callables(), "mass_grad", (1, 2, 0))
    for form in FORMS:
        for entry in ENTRIES:
            run(entry, build(form, 2, c), check=False)
            run(entry, build(form, 2, c, derivative_check=False))
            sys_ = build(form, 2, c)
            assert sys_.derivative_check is True
            sys_.derivative_check = False
            run(entry, sys_)
    with pytest.raises(sp.DerivativeError):           # the option travels with a pickle
        sp.integrate(pickle.loads(pickle.dumps(sp.System(2, **PICKLABLE))), Q0, P0, H, 2)
    unchecked = pickle.loads(pickle.dumps(sp.System(2, **PICKLABLE, derivative_check=False)))
    assert unchecked.derivative_check is False
    sp.integrate(unchecked, Q0, P0, H, 2)


def _mass(q):
    return dp_callables()["mass"](q)


def _bad_mass_grad(q):
    return dp_callables()["mass_grad"](q).transpose(1, 2, 0)


def _potential(q):
    return dp_callables()["potential"](q)


def _potential_grad(q):
    return dp_callables()["potential_grad"](q)


# module-level functions (picklable), the mass_grad in the wrong order
PICKLABLE = dict(mass=_mass, mass_grad=_bad_mass_grad, potential=_potential,
                 potential_grad=_potential_grad)


def test_the_bug_the_check_exists_for():
    """Without the check, the wrong layout integrates, conserves energy and gives
    another trajectory: the usual energy check cannot see it."""
    ref = sp.integrate(sp.systems.double_pendulum(l1=L_DP, l2=L_DP), Q0, P0, H, 3000)
    bad = sp.integrate(build("callables", 2, permuted(dp_callables(), "mass_grad", (1, 2, 0))),
                       Q0, P0, H, 3000, check=False)
    assert np.max(np.abs(bad.energy / bad.energy[0] - 1)) < 1e-6
    assert np.max(np.abs(bad.q - ref.q)) > 1e-2


# ====================================================================== the message, the method
def test_message_names_callback_entry_values_q_and_layout():
    c = dp_callables()
    with pytest.raises(sp.DerivativeError) as info:
        sp.integrate(build("callables", 2, permuted(c, "mass_grad", (1, 2, 0))), Q0, P0, H, 5)
    err = info.value
    msg = str(err)
    k, i, j = err.index
    T = c["mass_grad"](Q0)
    assert err.supplied == T[j, k, i]                                 # the array it returned
    assert err.finite_difference == pytest.approx(T[k, i, j], abs=1e-10)
    assert msg.startswith("mass_grad disagrees with finite differences at q = [0.785, 1.047] "
                          "(the initial state)")
    assert f"at entry [k, i, j] = [{k}, {i}, {j}] (dM[{i},{j}]/dq[{k}])" in msg
    assert f"it gives {err.supplied:.12g}, central differences of M(q) give " \
           f"{err.finite_difference:.12g}" in msg
    assert "mass_grad looks like it is laid out [i, j, k]; expected [k, i, j] = dM_ij/dq_k" in msg
    assert "check=False" in msg and "derivative_check=False" in msg
    assert err.callback == "mass_grad" and np.array_equal(err.q, Q0)
    assert err.error > err.tolerance and err.layout in msg


def test_check_derivatives_keeps_its_signature_and_raises_derivative_error():
    c = dict(dp_callables())
    good = c["mass_grad"]
    c["mass_grad"] = lambda q: -good(q)
    sys_ = sp.System(2, **c)
    with pytest.raises(sp.DerivativeError, match="mass_grad looks like the negative"):
        sys_.check_derivatives([0.3, 1.2])
    with pytest.raises(ValueError):
        sys_.check_derivatives([0.3, 1.2], [0.5, -0.2], rtol=1e-6)
    report = sys_.check_derivatives([0.3, 1.2], raise_on_failure=False)
    assert report["mass_grad"] == pytest.approx(2.0, rel=1e-6)       # |-T - T| / max |T|
    assert report["mass_hess"] == "not checked: mass_grad is wrong"
    assert report["potential_grad"] < 1e-9 and report["potential_hess"] < 1e-9
    assert issubclass(sp.DerivativeError, ValueError) and "DerivativeError" in sp.__all__
    bare = sp.System(2, c["mass"], c["potential"])
    assert bare.check_derivatives([0.3, 1.2]) == {
        "mass_grad": "finite differences", "potential_grad": "finite differences",
        "mass_hess": "finite differences", "potential_hess": "finite differences"}


def test_exceptions_of_callbacks_during_the_check_propagate_with_a_note():
    class Boom(Exception):
        pass

    c = dict(dp_callables())

    def potential_hess(q):
        raise Boom("no Hessian today")

    c["potential_hess"] = potential_hess
    with pytest.raises(Boom, match="no Hessian today") as info:
        sp.integrate(sp.System(2, **c), Q0, P0, H, 5)
    notes = getattr(info.value, "__notes__", None)
    if notes is not None:                                           # Python >= 3.11
        assert any("checked the supplied derivatives" in n for n in notes)


def test_tangent_map_checks_too():
    from symplectic import analysis
    sys_ = build("callables", 2, permuted(dp_callables(), "mass_hess", (2, 3, 0, 1)))
    with pytest.raises(sp.DerivativeError):
        analysis.tangent_map(sys_, Q0, P0, H)


def test_correct_derivatives_stay_far_below_the_tolerance():
    """The margin behind "false positives are worse than the bug": over random,
    tiny (down to 1e-14), special (0, pi) and large (1000 pi, 1e6) states, the
    deviation of correct derivatives from the finite differences stays below 1/20
    of the tolerance -- for the built-in C systems (derivatives derived
    independently in C), for n > 16 (projections) and for Python callables."""
    from symplectic._model._derivcheck import _supplied
    from symplectic._model._derivcheck._compare import Evaluator, check_point, default_g
    rng = np.random.default_rng(9)
    systems = [sp.systems.pendulum(m=1.3, omega=2.0), sp.systems.double_pendulum(1.0, 2.0, 0.7, 1.3),
               sp.systems.lagrange_top(), sp.systems.pendulum_chain(5, m=[1.0, 0.5, 2.0, 1.5, 0.7],
                                                                    l=[0.3, 1.0, 0.6, 0.9, 1.2]),
               sp.systems.pendulum_chain(40, m=rng.uniform(0.5, 2, 40), l=rng.uniform(0.02, 0.5, 40)),
               build("callables", 2, dp_callables()), build("combined", 3, top_callables()),
               build("vectorized", 1, pendulum_callables())]
    worst = 0.0
    for s in systems:
        n = s.n
        ev = Evaluator(s)
        sup = _supplied(s, ev, np.zeros(n))
        states = [rng.uniform(-3, 3, n) for _ in range(25)]
        states += [10.0 ** rng.uniform(-14, -1, n) * rng.choice([-1, 1], n) for _ in range(25)]
        states += [np.full(n, x) for x in (0.0, math.pi, 1e3 * math.pi, 1e6)]
        for q in states:
            if n == 3:
                q = q.copy()
                q[1] = q[1] if abs(q[1]) < 1 else rng.choice([0.0, 1e-12, math.pi, 1.0])
                if s.builtin == "lagrange_top" and abs(math.sin(q[1])) < 0.01:
                    # the ZXZ top refuses its coordinate singularity (SYM_ECHART)
                    with pytest.raises(ValueError, match="coordinate singularity"):
                        s.mass_dir(q, default_g(n))
                    continue
            for r in check_point(ev, q, default_g(n), sup, 1e-6, "explicit").values():
                assert r["ok"], (s, q, r["quantity"])
                worst = max(worst, r["error"] / r["tol"] if r["error"] else 0.0)
    assert worst < 0.05, worst


def test_integrate_many_checks_each_distinct_system_once():
    good = [build("callables", 2, dp_callables(m2=m)) for m in (1.0, 2.0)]
    sp.integrate_many(good + [good[0]], [Q0, Q0 + 0.1, Q0 - 0.1], P0, H, 3)
    assert all(s._derivcheck_verdict == "passed" for s in good)
    bad = build("callables", 2, permuted(dp_callables(), "mass_grad", (1, 0, 2)))
    with pytest.raises(sp.DerivativeError, match=r"^mass_grad disagrees .* laid out \[i, k, j\]"):
        sp.integrate_many([build("callables", 2, dp_callables()), bad], [Q0, Q0 + 0.1], P0, H, 3)
