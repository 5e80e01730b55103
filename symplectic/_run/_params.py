"""Parameter sensitivities of a run: d(q_k, p_k)/dtheta for parameters theta
of a SymPy system's M(q, theta) and V(q, theta).

The parameters being differentiated are read as extra coordinates that do
not move (csrc/core/sym_params.h): an AUGMENTED SymPy system with coordinates
(q, theta), mass matrix blockdiag(M, I) and the same V is compiled by the
same front end and only evaluated, never integrated.  At a quadrature point
(Q_i, theta) with velocity (g_i, 0) its A, H and hess V hold, in the columns
of theta, d(M g)/dtheta, d(1/2 A^T g)/dtheta and d grad V/dtheta, from which
the C core forms each step's exact parameter block C_k = d(q_{k+1},
p_{k+1})/dtheta at fixed (q_k, p_k) (csrc/core/sym_galerkin_param.c) and
propagates S_{k+1} = D_k S_k + C_k, S_0 = 0.

Supported: systems made by :func:`symplectic.symbolic.system` (or
``System.from_sympy``), their constraints included, and every built-in,
whose M, V and constraints are written here in SymPy -- the formulas of
their docstrings, which the C code evaluates (``pendulum``: m, omega;
``double_pendulum``: m1, m2, l1, l2, g; ``pendulum_chain``: m[i], l[i], g;
``lagrange_top`` and ``lagrange_top_quaternion``: m, I, I3, l, g;
``linear``: "M[i,j]", "K[i,j]" for i <= j; ``pendulum_cartesian``,
``spherical_pendulum_cartesian``: m, l, g; ``four_bar``: m1..3, l1..3, d,
g) -- and the joint damping of the pendulums: ``damping[i]`` the
coefficient c_i of joint i, ``damping`` all joints' together when the
built-in was given one value -- F = -D v, D = Delta^T diag(c) Delta, so
dF/dc_i = -Delta_i^T Delta_i v exactly.  A constrained system's augmented
system carries its constraints g(q, theta) in the augmented coordinates
(csrc/core/sym_constraints_tangent.c).  Variational (Galerkin) methods, with
or without forces; a differentiated parameter of a SymPy system's forces
makes the augmented system carry the force (F(t, q, v, theta), 0), whose
dF/dtheta the C core evaluates at each point (csrc/core/sym_galerkin_param.c).
"""
import numpy as np

__all__ = ["ParamSpec", "check_supported", "prepare"]


class ParamSpec:
    """What a run needs for params=: the augmented system, theta (values in
    the order of ``names``) and the names."""

    def __init__(self, system, theta, names, dD=None):
        self.system = system
        self.theta = theta
        self.names = names
        self.dD = dD                # None, or (n_par, n, n): d(damping matrix)/dtheta_j
        f = getattr(system, "force", None)
        # the augmented system's own force: (F(t, q, v, theta), 0), whose dF/dtheta the
        # step's parameter block takes (csrc/core/sym_galerkin_param.c)
        self.force = None if f is None else f.spec(system.n)

    def arg(self, tangent=None, jacobians=None, start=None):
        """The binding's params= tuple; ``start``: S at node 0 (2n, n_par) of
        a run continued from an earlier one (None: 0)."""
        return (self.system, self.theta, tangent, jacobians, self.dD, start, self.force)


def _names(wrt):
    names = (wrt,) if isinstance(wrt, str) else tuple(wrt)
    if not names:
        raise ValueError("wrt: name at least one parameter")
    for w in names:
        if not isinstance(w, str):
            raise TypeError(f"wrt: parameters are named by strings (their symbol names), "
                            f"got {w!r}")
    if len(set(names)) != len(names):
        raise ValueError(f"wrt: a parameter is named twice in {list(names)}")
    return names


def _builtin_model(system):
    """The SymPy spec (M, V, q, constraints, parameter values) of a built-in
    whose model is written here (the formulas of its docstring in
    symplectic/systems.py, which its C code evaluates), or None."""
    import sympy as sy

    kind, par = system.builtin, system.params
    model = _MODELS.get(kind)
    if model is None:
        return None
    M, V, q, values, *cons = model(sy, system.n, par)
    return {"M": M, "V": V, "q": q, "param_order": list(values), "forces": None,
            "values": values, "constraints": cons[0] if cons else None}


def _pendulum(sy, n, par):
    q = [sy.Symbol("q")]
    m, w = sy.symbols("m omega", positive=True)
    return (sy.Matrix([[m]]), m * w ** 2 * (1 - sy.cos(q[0])), q,
            {m: par["m"], w: par["omega"]})


def _double_pendulum(sy, n, par):
    q = list(sy.symbols("q1 q2"))
    m1, m2, l1, l2, g = sy.symbols("m1 m2 l1 l2 g", positive=True)
    c = m2 * l1 * l2 * sy.cos(q[0] - q[1])
    M = sy.Matrix([[(m1 + m2) * l1 ** 2, c], [c, m2 * l2 ** 2]])
    V = -(m1 + m2) * g * l1 * sy.cos(q[0]) - m2 * g * l2 * sy.cos(q[1])
    return M, V, q, {s: par[s.name] for s in (m1, m2, l1, l2, g)}


def _pendulum_chain(sy, n, par):
    q = list(sy.symbols(f"q0:{n}"))
    m = [sy.Symbol(f"m[{i}]", positive=True) for i in range(n)]
    ln = [sy.Symbol(f"l[{i}]", positive=True) for i in range(n)]
    g = sy.Symbol("g", positive=True)
    mu = [sum(m[i:]) for i in range(n)]
    M = sy.Matrix(n, n, lambda i, j: ln[i] * ln[j] * mu[max(i, j)] * sy.cos(q[i] - q[j]))
    V = -g * sum(mu[i] * ln[i] * sy.cos(q[i]) for i in range(n))
    values = {s: float(v) for s, v in zip(m + ln, list(par["m"]) + list(par["l"]))}
    return M, V, q, {**values, g: par["g"]}


def _lagrange_top(sy, n, par):
    q = list(sy.symbols("phi theta psi"))
    m, I, I3, ln, g = sy.symbols("m I I3 l g", positive=True)
    th = q[1]
    M = sy.Matrix([[I * sy.sin(th) ** 2 + I3 * sy.cos(th) ** 2, 0, I3 * sy.cos(th)],
                   [0, I, 0], [I3 * sy.cos(th), 0, I3]])
    return M, m * g * ln * sy.cos(th), q, {s: par[s.name] for s in (m, I, I3, ln, g)}


def _linear(sy, n, par):
    """M and K by their entries on and above the diagonal: "M[i,j]" (i <= j)
    is M_ij = M_ji, both moving together (M and K stay symmetric)."""
    q = list(sy.symbols(f"q0:{n}"))
    values, mats = {}, []
    for name in ("M", "K"):
        S = [[None] * n for _ in range(n)]
        for i in range(n):
            for j in range(i, n):
                S[i][j] = S[j][i] = sy.Symbol(f"{name}[{i},{j}]")
                values[S[i][j]] = float(par[name][i, j])
        mats.append(sy.Matrix(S))
    qv = sy.Matrix(q)
    return mats[0], (qv.T * mats[1] * qv)[0, 0] / 2, q, values


def _pendulum_cartesian(sy, n, par):
    q = list(sy.symbols("x y z")[:n])
    m, ln, g = sy.symbols("m l g", positive=True)
    r2 = sum(x ** 2 for x in q)
    return (m * sy.eye(n), m * g * q[-1], q, {s: par[s.name] for s in (m, ln, g)},
            [(r2 - ln ** 2) / 2])


def _four_bar(sy, n, par):
    q = list(sy.symbols("theta1 theta2 theta3"))
    m1, m2, m3, l1, l2, l3, d, g = sy.symbols("m1 m2 m3 l1 l2 l3 d g", positive=True)
    k = m2 * l1 * l2 * sy.cos(q[0] - q[1]) / 2
    M = sy.Matrix([[(m1 / 3 + m2) * l1 ** 2, k, 0], [k, m2 * l2 ** 2 / 3, 0],
                   [0, 0, m3 * l3 ** 2 / 3]])
    V = g * ((m1 / 2 + m2) * l1 * sy.sin(q[0]) + m2 * l2 / 2 * sy.sin(q[1])
             + m3 * l3 / 2 * sy.sin(q[2]))
    cons = [l1 * sy.cos(q[0]) + l2 * sy.cos(q[1]) - l3 * sy.cos(q[2]) - d,
            l1 * sy.sin(q[0]) + l2 * sy.sin(q[1]) - l3 * sy.sin(q[2])]
    return M, V, q, {s: par[s.name] for s in (m1, m2, m3, l1, l2, l3, d, g)}, cons


def _lagrange_top_quaternion(sy, n, par):
    q = list(sy.symbols("q0:4"))
    m, I, I3, ln, g = sy.symbols("m I I3 l g", positive=True)
    r2 = sum(x ** 2 for x in q)
    e = sy.Matrix([-q[3], q[2], -q[1], q[0]])
    M = 4 * I * r2 * sy.eye(4) - 4 * (I - I3) * e * e.T
    V = m * g * ln * (q[0] ** 2 - q[1] ** 2 - q[2] ** 2 + q[3] ** 2)
    return M, V, q, {s: par[s.name] for s in (m, I, I3, ln, g)}, [r2 - 1]


_MODELS = {"pendulum": _pendulum, "double_pendulum": _double_pendulum,
           "pendulum_chain": _pendulum_chain, "lagrange_top": _lagrange_top, "linear": _linear,
           "pendulum_cartesian": _pendulum_cartesian,
           "spherical_pendulum_cartesian": _pendulum_cartesian, "four_bar": _four_bar,
           "lagrange_top_quaternion": _lagrange_top_quaternion}
BUILTINS = tuple(_MODELS)


def check_supported(system, method, what):
    """The system's SymPy spec (a built-in's: M, V, q, constraints, values,
    param_order and its forces' parameters none), or NotImplementedError
    naming what is supported."""
    spec = getattr(system, "_spec", None)
    if spec is None and getattr(system, "builtin", None) in BUILTINS:
        spec = _builtin_model(system)
    if spec is None:
        raise NotImplementedError(
            f"{what}: parameter sensitivities (params) need a system made by "
            f"symplectic.symbolic.system (System.from_sympy), or a built-in "
            f"({', '.join(BUILTINS)}), and a variational method; got {system!r}")
    if not method.symplectic:
        raise NotImplementedError(f"{what}: parameter sensitivities need a variational "
                                  f"(Galerkin) method: midpoint, simpson, lobatto*; not "
                                  f"{method.name!r}")
    return spec


def prepare(system, wrt, method, what="integrate"):
    """The :class:`ParamSpec` of the parameters named ``wrt`` (symbol names,
    as ``system.parameters`` knows them) of ``system`` for ``method``.

    Raises NotImplementedError for a system that is neither a SymPy system
    nor a built-in, or a method that is not variational; ValueError for a
    name that is not a parameter."""
    names = _names(wrt)
    try:
        import sympy  # noqa: F401
    except ImportError as exc:
        raise ImportError(f"{what}: parameter sensitivities (wrt=...) compile an augmented "
                          "system with SymPy, which is not installed (pip install sympy, or "
                          "the extra symplectic-vi[sympy])") from exc
    spec = check_supported(system, method, what)
    values = spec.get("values") or system.parameters
    by_name = {s.name: s for s in values}
    damping = _damping_derivatives(system)
    if any(w in damping for w in names):
        return _with_damping(system, spec, values, by_name, damping, names, what)
    bad = [w for w in names if w not in by_name]
    if bad:
        raise ValueError(f"{what}: {', '.join(bad)} is not a parameter of this system "
                         f"(parameters: {', '.join(by_name)})")
    syms = [by_name[w] for w in names]
    theta = np.array([float(values[s]) for s in syms])
    cache = system.__dict__.setdefault("_param_aug", {})
    if names not in cache:
        cache[names] = _augmented(system, spec, values, syms, theta)
    return ParamSpec(cache[names], theta, names)


def _damping_derivatives(system):
    """{name: dD/dtheta (n x n)} of a damped built-in's joint damping, D =
    Delta^T diag(c) Delta (systems._joint_damping; Delta row i: e_i - e_{i-1},
    row 0: e_0): ``damping[i]`` -> Delta_i^T Delta_i, and ``damping`` ->
    Delta^T Delta when the damping was given as one value."""
    if getattr(system, "builtin", None) not in BUILTINS or "damping" not in (system.params or {}):
        return {}
    n = system.n
    delta = np.eye(n) - np.eye(n, k=-1)
    out = {f"damping[{i}]": np.outer(delta[i], delta[i]) for i in range(n)}
    if np.ndim(system.params["damping"]) == 0:
        out["damping"] = delta.T @ delta
    return out


def _with_damping(system, spec, values, by_name, damping, names, what):
    """prepare() for names that include a built-in's damping parameters: those
    enter the augmented system as coordinates that M and V do not contain
    (zero columns) and the run through their dD."""
    import sympy as sy

    bad = [w for w in names if w not in by_name and w not in damping]
    if bad:
        raise ValueError(f"{what}: {', '.join(bad)} is not a parameter of this system "
                         f"(parameters: {', '.join(list(by_name) + list(damping))})")
    c = np.broadcast_to(np.asarray(system.params["damping"], float), (system.n,))
    syms, theta, dD = [], [], []
    for w in names:
        if w in damping:
            syms.append(sy.Symbol(f"theta_{w.replace('[', '_').replace(']', '')}"))
            theta.append(float(c[int(w[8:-1])]) if w != "damping" else float(c[0]))
            dD.append(damping[w])
        else:
            syms.append(by_name[w])
            theta.append(float(values[by_name[w]]))
            dD.append(np.zeros((system.n, system.n)))
    theta = np.array(theta)
    cache = system.__dict__.setdefault("_param_aug", {})
    if names not in cache:
        cache[names] = _augmented(system, spec, values, syms, theta)
    return ParamSpec(cache[names], theta, names, np.ascontiguousarray(dD))


def _augmented(system, spec, values, syms, theta):
    """The augmented SymPy system: coordinates (q, theta_wrt), mass matrix
    blockdiag(M, I), potential V, the constraints, the other parameters at
    their values (a parameter that M and V do not contain gives zero
    columns), and when a differentiated parameter enters the system's
    forces, the force (F(t, q, v, theta), 0) with velocities (v, thetadot)."""
    import sympy as sy

    from ..symbolic import system as make
    from ..symbolic._lagrangian import _test_point

    n, k = system.n, len(syms)
    M = sy.Matrix(spec["M"])
    Maug = sy.diag(M, sy.eye(k))
    order = list(spec["param_order"]) + list(spec.get("cparam_order") or ())
    fs, forced = spec.get("forces"), {}
    if fs is not None and any(s in fs["param_order"] for s in syms):
        order += [s for s in fs["param_order"] if s not in order]
        forced = dict(qdot=list(fs["qdot"]) + [sy.Dummy(f"thetadot_{j}") for j in range(k)],
                      forces=list(fs["F"]) + [0] * k, time=fs["time"])
    others = {s: values[s] for s in order if s not in syms}
    test_q = np.asarray(spec["test_q"], float) if "test_q" in spec else _test_point(None, n)
    opts = getattr(system, "_options", None) or {"compile": "auto", "cache_dir": None}
    aug = make((Maug, spec["V"]), list(spec["q"]) + list(syms), params=others,
               constraints=spec.get("constraints") or None, **forced,
               compile=opts["compile"], cache_dir=opts["cache_dir"],
               test_point=np.concatenate([np.asarray(test_q, float).reshape(n), theta]),
               name="parameter-augmented")
    return aug
