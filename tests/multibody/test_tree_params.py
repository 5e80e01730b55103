"""Parameter sensitivities and identification on rigid-body trees (issue 49): the built-in
C tree's ``integrate(..., tangent=True, wrt=[...])`` and ``control.identify``.

The tree's model for ``wrt=`` is written in SymPy in symplectic/_run/_params.py (M from the
bodies' Jacobians, V from their centres of mass; only the differentiated inertial parameters
are symbols), its joint damping -c_j qdot_j enters through dD/dc_j = e_j e_j^T.  Checked here
on a spatial revolute-prismatic-revolute tree with offsets and tilted joint frames:

- the SymPy model is the C system's Lagrangian (M, V at random q), its constraints the
  mimic rows;
- param_tangent at the end of a run w.r.t. mass[j], com[j][k], inertia[j][..] and damping[j]
  (and ``damping``, all joints together) equals four-point central differences of runs of
  ``systems.tree`` rebuilt with the perturbed flat parameters, to 1e-6 relative, also with
  a mimic constraint;
- ``control.identify`` recovers a link mass and a damping coefficient from noise-free samples
  of a run at known values, from a start 25 % off, to 1e-6 relative;
- a wrong name gives a ValueError listing the valid ones.

The augmented systems are compiled once per machine ($SYMPLECTIC_CACHE): ~5 s each cold.
"""
import numpy as np
import pytest

sy = pytest.importorskip("sympy")     # the augmented system is derived with SymPy
pytest.importorskip("scipy")          # identify's least squares

import symplectic as sp  # noqa: E402
from symplectic import control, multibody  # noqa: E402
from symplectic._run import _params  # noqa: E402

H, N = 0.01, 150
DAMPING = (0.3, 0.5, 0.2)
Q0 = np.array([0.4, 0.05, -0.6])
QDOT0 = np.array([0.5, -0.2, 0.8])
STENCIL = (-2, -1, 1, 2)


def rpr_tree(mimic=False):
    """base -(revolute, y)- upper -(prismatic, oblique)- slider -(revolute, x)- fore: joint
    frames offset and tilted (rpy), centres of mass off the axes, products of inertia."""
    def inertia(a, b, c, d=0.0):
        return np.array([[a, d, 0.0], [d, b, 0.0], [0.0, 0.0, c]])
    bodies = [multibody.Body("base"),
              multibody.Body("upper", mass=1.2, com=(0.05, 0.02, -0.3),
                             inertia=inertia(0.02, 0.025, 0.01, 0.002)),
              multibody.Body("slider", mass=0.8, com=(0.0, 0.04, -0.1),
                             inertia=inertia(0.01, 0.012, 0.006)),
              multibody.Body("fore", mass=0.6, com=(0.1, -0.02, -0.2),
                             inertia=inertia(0.008, 0.009, 0.003, -0.001))]
    joints = [multibody.Joint("shoulder", "revolute", "base", "upper", xyz=(0, 0, 1.0),
                              rpy=(0.1, 0, 0.2), axis=(0, 1, 0), damping=DAMPING[0]),
              multibody.Joint("slide", "prismatic", "upper", "slider", xyz=(0.05, 0, -0.4),
                              rpy=(0, 0.3, 0), axis=(0, 0.6, -0.8), damping=DAMPING[1]),
              multibody.Joint("elbow", "revolute", "slider", "fore", xyz=(0.0, 0.1, -0.2),
                              rpy=(0.2, -0.1, 0.4), axis=(1, 0, 0), damping=DAMPING[2],
                              mimic=("shoulder", -1.5, 0.1) if mimic else None)]
    return multibody.Tree(bodies, joints, name="rpr")


@pytest.fixture(scope="module")
def damped():
    return rpr_tree().system(joint_damping=True)


def index(name):
    """The flat parameter's index of a tree parameter's name."""
    return _params.tree_parameters(3)[name]


def rebuilt(system, name, delta):
    """``systems.tree`` from the system's flat parameters and damping, ``name`` moved by
    ``delta`` (independently of identify's rebuild)."""
    par = np.array(system.params["par"], dtype=float)
    c = np.array(system.params.get("damping", np.zeros(3)), dtype=float)
    if name == "damping":
        c = c + delta
    elif name.startswith("damping["):
        c[int(name[8:-1])] += delta
    else:
        par[index(name)] += delta
    return sp.systems.tree(3, par, damping=c)


def value(system, name):
    if name.startswith("damping"):
        return float(np.ravel(system.params["damping"])[0 if name == "damping" else
                                                          int(name[8:-1])])
    return float(system.params["par"][index(name)])


def end_state(system, q0, p0):
    tr = sp.integrate(system, q0, p0, H, N, method="simpson", store_every=N)
    return np.concatenate([tr.q[-1], tr.p[-1]])


def rel_err(got, want):
    return float(np.max(np.abs(got - want)) / np.max(np.abs(want)))


def check_against_differences(system, q0, p0, wrt, rel=1e-4, qdot=None):
    """max relative error of param_tangent at the end against the four-point stencil.  With
    ``qdot`` the start moves with theta, p0(theta) = M_theta(q0) qdot (a mass moves the hidden
    constraint G M^-1 p = 0): the stencil then gives S_N + Phi_N dx0/dtheta."""
    tr = sp.integrate(system, q0, p0, H, N, method="simpson", tangent=True, wrt=wrt)
    assert tr.param_tangent.shape[-1] == len(wrt)
    errs = {}
    for j, name in enumerate(wrt):
        e = rel * max(1.0, abs(value(system, name)))
        moved = {k: rebuilt(system, name, k * e) for k in STENCIL}
        starts = {k: p0 if qdot is None else s.mass(q0) @ qdot for k, s in moved.items()}
        y = {k: end_state(moved[k], q0, starts[k]) for k in STENCIL}
        want = (-y[2] + 8 * y[1] - 8 * y[-1] + y[-2]) / (12 * e)
        got = tr.param_tangent[-1][:, j]
        if qdot is not None:
            dp0 = (-starts[2] + 8 * starts[1] - 8 * starts[-1] + starts[-2]) / (12 * e)
            got = got + tr.tangent[-1] @ np.concatenate([np.zeros(3), dp0])
        errs[name] = rel_err(got, want)
    return errs


def test_the_model_is_the_c_tree():
    """The SymPy M, V of every parameter symbolic equal the C system's at random q (and at
    its values); the mimic constraint is the C system's."""
    S = rpr_tree(mimic=True).system(mimic="constraint")
    spec = _params._builtin_model(S)
    assert len(spec["values"]) == 30 and spec["valid"][:2] == ["mass[0]", "com[0][0]"]
    f = sy.lambdify([list(spec["q"]) + list(spec["values"])],
                    [spec["M"], spec["V"], spec["constraints"]])
    rng = np.random.default_rng(3)
    for q in rng.uniform(-1.5, 1.5, (4, 3)):
        Mq, Vq, gq = f(list(q) + list(spec["values"].values()))
        assert np.allclose(np.array(Mq, float), S.mass(q), rtol=0, atol=1e-13)
        assert abs(Vq - S.potential(q)) < 1e-12
        assert np.allclose(np.ravel(np.array(gq, float)), S.constraint(q), atol=1e-14)


def test_param_tangent_of_masses_inertias_and_damping(damped):
    """dx_N/dtheta w.r.t. two masses, a centre of mass, a product of inertia and two joints'
    damping: the run's exact S_N equals four-point differences to 1e-6 (measured ~1e-9)."""
    p0 = damped.mass(Q0) @ QDOT0
    wrt = ["mass[1]", "mass[2]", "com[2][1]", "inertia[2][xy]", "damping[0]", "damping[2]"]
    errs = check_against_differences(damped, Q0, p0, wrt)
    assert max(errs.values()) < 1e-6, errs


def test_all_joints_damping_together():
    """With one damping value for every joint, ``damping`` is all of them together (dD/dc = I):
    its column is the sum of the damping[j] columns and the difference of runs rebuilt with
    c +- e on every joint."""
    S = rpr_tree().system(joint_damping=False)
    S = sp.systems.tree(3, S.params["par"], damping=0.25)
    p0 = S.mass(Q0) @ QDOT0
    errs = check_against_differences(S, Q0, p0, ["damping"])
    assert errs["damping"] < 1e-6, errs
    per = sp.integrate(S, Q0, p0, H, N, tangent=True, wrt=["damping[0]", "damping[1]",
                                                           "damping[2]"])
    together = sp.integrate(S, Q0, p0, H, N, tangent=True, wrt=["damping"])
    assert rel_err(together.param_tangent[-1][:, 0], per.param_tangent[-1].sum(axis=1)) < 1e-12
    # joint values that differ: no common ``damping``
    D = sp.systems.tree(3, S.params["par"], damping=DAMPING)
    with pytest.raises(ValueError, match=r"damping is not a parameter.*damping\[2\]"):
        sp.integrate(D, Q0, p0, H, 5, tangent=True, wrt=["damping"])


def test_param_tangent_with_a_mimic_constraint():
    """The elbow mimics the shoulder (q_2 = -1.5 q_0 + 0.1) as a constraint of the model.  A
    mass does not move the manifold g(q) = 0 but the hidden one, G M^-1 p = 0: the runs of the
    differences start from p0 = M_theta(q0) qdot0, the derivative of the run from that moving
    start is S_N + Phi_N (0, dM/dtheta qdot0) (Phi_N = traj.tangent, exact)."""
    S = rpr_tree(mimic=True).system(mimic="constraint")
    assert S.n_constraints == 1
    q0, p0 = S.project(Q0, S.mass(Q0) @ QDOT0)
    qdot = np.linalg.solve(S.mass(q0), p0)                 # tangent: G qdot = 0
    errs = check_against_differences(S, q0, p0, ["mass[0]", "mass[2]"], qdot=qdot)
    assert max(errs.values()) < 1e-6, errs


def test_identify_recovers_a_mass_and_a_damping(damped):
    """Noise-free samples every 5 steps of a run at the true values; identify starts 25 % off
    (a guess) and recovers mass[2] and damping[1] to 1e-6 relative.  The fitted system is the
    C tree rebuilt with the fitted flat parameters."""
    p0 = damped.mass(Q0) @ QDOT0
    truth = {"mass[2]": value(damped, "mass[2]"), "damping[1]": value(damped, "damping[1]")}
    ref = sp.integrate(damped, Q0, p0, H, N, method="simpson")
    ks = np.arange(0, N + 1, 5)
    guess = {k: 1.25 * v for k, v in truth.items()}
    fit = control.identify(damped, ref.t[ks], ref.q[ks], list(truth), q0=Q0, p0=p0, h=H,
                           guess=guess, bounds={"mass[2]": (1e-3, None),
                                                "damping[1]": (0.0, None)})
    assert fit.success, fit.message
    for k, v in truth.items():
        assert abs(fit.params[k] - v) <= 1e-6 * abs(v), (k, fit.params[k], v)
    assert fit.residual_rms < 1e-9
    assert fit.system.builtin == "tree"
    assert abs(fit.system.params["par"][index("mass[2]")] - fit.params["mass[2]"]) == 0.0
    assert fit.system.params["damping"][1] == fit.params["damping[1]"]
    assert fit.system.params["damping"][0] == DAMPING[0]


def test_wrong_names_list_the_valid_ones(damped):
    p0 = damped.mass(Q0) @ QDOT0
    with pytest.raises(ValueError, match=r"mass\[3\] is not a parameter.*mass\[0\].*"
                                         r"inertia\[2\]\[zz\].*damping\[2\]"):
        sp.integrate(damped, Q0, p0, H, 5, tangent=True, wrt=["mass[3]"])
    with pytest.raises(ValueError, match=r"m1 is not a parameter.*com\[1\]\[2\]"):
        sp.integrate(damped, Q0, p0, H, 5, tangent=True, wrt=["mass[0]", "m1"])
    undamped = rpr_tree().system()
    with pytest.raises(ValueError, match=r"damping\[0\] is not a parameter.*mass\[2\]"):
        sp.integrate(undamped, Q0, p0, H, 5, tangent=True, wrt=["damping[0]"])
    with pytest.raises(ValueError, match=r"mass\[9\] is not a parameter.*mass\[2\]"):
        control.identify(damped, [0.0, H], np.zeros((2, 3)), ["mass[9]"], q0=Q0, p0=p0, h=H,
                         guess={"mass[9]": 1.0})


def test_rebuild_keywords_of_other_builtins():
    """identify's rebuild by name for the other built-ins' element names (m[1] of a chain,
    damping[1] of a pendulum given one value, M[0,1] of linear with its symmetric entry)."""
    chain = sp.systems.pendulum_chain(3, m=1.0, l=1.0, damping=0.2)
    kw = _params.builtin_keywords(chain, {"m[1]": 2.5, "damping[1]": 0.4})
    assert list(kw["m"]) == [1.0, 2.5, 1.0] and list(kw["damping"]) == [0.2, 0.4, 0.2]
    assert _params.builtin_values(chain)["m[1]"] == 1.0
    lin = sp.systems.linear(np.eye(2), np.diag([1.0, 2.0]))
    kw = _params.builtin_keywords(lin, {"M[0,1]": 0.1})
    assert kw["M"][0, 1] == kw["M"][1, 0] == 0.1
    with pytest.raises(ValueError, match=r"nope is not a parameter.*M\[0,1\]"):
        _params.builtin_keywords(lin, {"nope": 1.0})
