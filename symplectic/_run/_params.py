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
g; ``tree``: ``mass[j]``, ``com[j][k]``, ``inertia[j][xx]`` .. ``[zz]`` of
body j, :func:`tree_parameters`, only the differentiated ones symbols in
its expressions, the mimic rows its constraints) -- and the joint damping:
``damping[i]`` the coefficient c_i of joint i, ``damping`` all joints'
together when the built-in was given one value (the tree: when every c_j
is the same) -- F = -D v, for the pendulums D = Delta^T diag(c) Delta, so
dF/dc_i = -Delta_i^T Delta_i v exactly, for the tree D = diag(c), dF/dc_j =
-e_j e_j^T v.  :func:`builtin_values` and :func:`builtin_keywords` read and
change a built-in's parameters by these names (symplectic.control.identify
rebuilds a built-in through its factory with them).  A constrained system's augmented
system carries its constraints g(q, theta) in the augmented coordinates
(csrc/core/sym_constraints_tangent.c).  Variational (Galerkin) methods, with
or without forces; a differentiated parameter of a SymPy system's forces
makes the augmented system carry the force (F(t, q, v, theta), 0), whose
dF/dtheta the C core evaluates at each point (csrc/core/sym_galerkin_param.c).
"""
import numpy as np

__all__ = ["ParamSpec", "check_supported", "prepare", "builtin_values", "builtin_keywords",
           "tree_parameters"]


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


def _builtin_model(system, names=None):
    """The SymPy spec (M, V, q, constraints, parameter values) of a built-in
    whose model is written here (the formulas of its docstring in
    symplectic/systems.py, which its C code evaluates), or None.  ``names``:
    the parameters to be differentiated, for a model that keeps only those
    symbolic (the tree's); ``"valid"`` lists every parameter's name."""
    import sympy as sy

    kind, par = system.builtin, system.params
    model = _MODELS.get(kind)
    if model is None:
        return None
    if kind in _SELECTIVE:
        M, V, q, values, *cons = model(sy, system.n, par, names)
        valid = _SELECTIVE[kind](system.n)
    else:
        M, V, q, values, *cons = model(sy, system.n, par)
        valid = [s.name for s in values]
    return {"M": M, "V": V, "q": q, "param_order": list(values), "forces": None,
            "values": values, "constraints": cons[0] if cons else None, "valid": valid}


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


#: The inertia entries' suffixes, in the flat layout's order (about the centre of mass, body axes).
TREE_INERTIA = ("xx", "xy", "xz", "yy", "yz", "zz")
_TREE_BODY = 27             # flat values per body (Tree.flat_parameters)
_TREE_EXPRS = {}            # geometry -> the tree's SymPy expressions (kept: a run's rebuilds share them)


def tree_parameters(n):
    """{name: index in the flat parameters} of a tree's differentiable
    parameters: ``mass[j]`` (body j's mass), ``com[j][k]`` (its centre of mass,
    k = 0, 1, 2, body frame) and ``inertia[j][xx]`` .. ``inertia[j][zz]`` (its
    inertia about the centre of mass, body axes, entries xx xy xz yy yz zz;
    the symmetric entry moves with it)."""
    out = {}
    for j in range(n):
        k = 3 + _TREE_BODY * j + 17
        out[f"mass[{j}]"] = k
        out.update({f"com[{j}][{i}]": k + 1 + i for i in range(3)})
        out.update({f"inertia[{j}][{e}]": k + 4 + i for i, e in enumerate(TREE_INERTIA)})
    return out


def _number(sy, v):
    """A flat parameter as SymPy: exact 0 and +-1 (the rotations' usual
    entries, keeping the expressions small), else the double itself."""
    v = float(v)
    return sy.Integer(int(v)) if v in (0.0, 1.0, -1.0) else sy.Float(v)


def _tree_expressions(sy, n, par, names):
    """(M, V, q, symbols, constraints) of the tree of flat parameters ``par``
    with the inertial parameters ``names`` (of ``tree_parameters``) as
    symbols, every other value (geometry, gravity, the other masses, centres
    of mass and inertias) a number -- the expressions stay small: what the
    augmented system derives and compiles grows with the symbols.

    M = sum_j m_j Jv_j^T Jv_j + Jw_j^T I_j Jw_j from the Jacobians of body j's
    centre-of-mass velocity (Jv) and angular velocity (Jw), both in body j's
    own axes (the products do not depend on the axes), column i of a joint
    i on the body's chain: with a the joint's axis and r the vector from its
    origin to the centre of mass, both in body j's axes, a x r and a for a
    revolute joint, a and 0 for a prismatic one.  a and r come from the pose
    of body j relative to body i (the joints between them only), which keeps
    the expressions far smaller than world-frame Jacobians; no derivative of
    T is taken.  V = -sum_j m_j g . x_cj from the world poses."""
    idx = tree_parameters(n)
    names = tuple(sorted(names, key=lambda w: idx[w]))
    masked = par.copy()
    masked[[idx[w] for w in names]] = 0.0
    key = (n, masked.tobytes(), names)
    if key in _TREE_EXPRS:
        return _TREE_EXPRS[key]
    num = lambda v: _number(sy, v)                         # noqa: E731
    sym = {w: sy.Symbol(w) for w in names}

    def value(w):
        return sym[w] if w in sym else num(par[idx[w]])
    q = list(sy.symbols(f"q0:{n}"))
    joints = []                                            # (parent, prismatic, axis, R0, p0)
    for j in range(n):
        k = 3 + _TREE_BODY * j
        joints.append((int(par[k]), par[k + 1] == 1.0,
                       sy.Matrix([num(v) for v in par[k + 2:k + 5]]),
                       sy.Matrix(3, 3, [num(v) for v in par[k + 5:k + 14]]),
                       sy.Matrix([num(v) for v in par[k + 14:k + 17]])))

    def placement(j):
        """Body j's frame in its parent body's frame: (R, p) = [R0 | p0] Joint_j(q_j)."""
        _, prismatic, a, R0, p0 = joints[j]
        if prismatic:
            return R0, p0 + q[j] * (R0 * a)
        K = sy.Matrix([[0, -a[2], a[1]], [a[2], 0, -a[0]], [-a[1], a[0], 0]])
        return R0 * (sy.eye(3) + sy.sin(q[j]) * K + (1 - sy.cos(q[j])) * K * K), p0
    local = [placement(j) for j in range(n)]
    world = []
    for j in range(n):
        R, p = local[j]
        if joints[j][0] >= 0:
            Rp, pp = world[joints[j][0]]
            R, p = Rp * R, Rp * p + pp
        world.append((R, p))
    gw = sy.Matrix([num(v) for v in par[0:3]])
    M, V = sy.zeros(n, n), sy.Integer(0)
    for j in range(n):
        m = value(f"mass[{j}]")
        cj = sy.Matrix([value(f"com[{j}][{i}]") for i in range(3)])
        e = [value(f"inertia[{j}][{s}]") for s in TREE_INERTIA]
        I = sy.Matrix([[e[0], e[1], e[2]], [e[1], e[3], e[4]], [e[2], e[4], e[5]]])
        if m == 0 and not any(I):
            continue
        Jv, Jw = sy.zeros(3, n), sy.zeros(3, n)
        Rij, pij = sy.eye(3), sy.zeros(3, 1)               # body j in body i's frame
        i = j
        while i >= 0:
            _, prismatic, a, _, _ = joints[i]
            aj = Rij.T * a                                 # joint i's axis in body j's axes
            if prismatic:
                Jv[:, i] = aj
            else:                                          # its origin: body i's origin
                Jv[:, i] = aj.cross(cj + Rij.T * pij)
                Jw[:, i] = aj
            R, p = local[i]
            Rij, pij = R * Rij, R * pij + p
            i = joints[i][0]
        M += m * (Jv.T * Jv) + Jw.T * I * Jw
        R, p = world[j]
        V -= m * (gw.T * (R * cj + p))[0, 0]
    M = sy.Matrix(n, n, lambda r, c: M[min(r, c), max(r, c)])     # exactly symmetric
    k = 3 + _TREE_BODY * n
    rows = par[k + 1:k + 1 + 4 * int(par[k])].reshape(-1, 4) if par.size > k else ()
    cons = [q[int(j)] - num(a) * q[int(i)] - num(b) for j, i, a, b in rows]
    out = (M, V, q, [(sym[w], idx[w]) for w in names], cons)
    if len(_TREE_EXPRS) >= 16:
        _TREE_EXPRS.clear()
    _TREE_EXPRS[key] = out
    return out


def _tree(sy, n, par, names=None):
    """The rigid-body tree (symplectic.multibody): its contract's kinematics
    (T_j = T_parent [R | p] Joint_j(q_j)), T = 1/2 sum_j (m_j |v_cj|^2
    + w_j^T I_j^w w_j), V = -sum_j m_j g . x_cj, the mimic constraints
    q_j - a q_k - b; its parameters: ``tree_parameters``, of which only those
    in ``names`` (None: all) are symbols."""
    flat = np.asarray(par["par"], dtype=float)
    valid = tree_parameters(n)
    names = valid if names is None else [w for w in names if w in valid]
    M, V, q, syms, cons = _tree_expressions(sy, n, flat, names)
    return M, V, q, {s: float(flat[i]) for s, i in syms}, cons

_MODELS = {"pendulum": _pendulum, "double_pendulum": _double_pendulum,
           "pendulum_chain": _pendulum_chain, "lagrange_top": _lagrange_top, "linear": _linear,
           "pendulum_cartesian": _pendulum_cartesian,
           "spherical_pendulum_cartesian": _pendulum_cartesian, "four_bar": _four_bar,
           "lagrange_top_quaternion": _lagrange_top_quaternion, "tree": _tree}
BUILTINS = tuple(_MODELS)
# models that make only the differentiated parameters symbols: {kind: n -> every parameter's name}
_SELECTIVE = {"tree": lambda n: list(tree_parameters(n))}


def _refuse_python_constraints(system, what):
    """NotImplementedError for a built-in carrying Python constraint callables."""
    if getattr(system, "_builtin_constraints", None):
        raise NotImplementedError(
            f"{what}: parameter sensitivities of a built-in with Python constraint callables "
            f"(with_constraints, e.g. a tree's loop_closure) are not supported: the augmented "
            f"system is compiled from SymPy and the callables have no SymPy form; write the "
            f"constrained system with System.from_sympy, or differentiate the open tree")


def check_supported(system, method, what, names=None):
    """The system's SymPy spec (a built-in's: M, V, q, constraints, values,
    param_order and its forces' parameters none; ``names`` the parameters to
    be differentiated, None: all), or NotImplementedError naming what is
    supported."""
    _refuse_python_constraints(system, what)
    spec = getattr(system, "_spec", None)
    if spec is None and getattr(system, "builtin", None) in BUILTINS:
        spec = _builtin_model(system, names)
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
    _refuse_python_constraints(system, what)
    try:
        import sympy  # noqa: F401
    except ImportError as exc:
        raise ImportError(f"{what}: parameter sensitivities (wrt=...) compile an augmented "
                          "system with SymPy, which is not installed (pip install sympy, or "
                          "the extra symplectic-vi[sympy])") from exc
    spec = check_supported(system, method, what, names)
    values = spec.get("values")
    values = system.parameters if values is None else values
    by_name = {s.name: s for s in values}
    valid = list(spec.get("valid") or by_name)
    damping = _damping_derivatives(system)
    bad = [w for w in names if w not in by_name and w not in damping]
    if bad:
        raise ValueError(f"{what}: {', '.join(bad)} is not a parameter of this system "
                         f"(parameters: {', '.join(valid + list(damping))})")
    if any(w in damping for w in names):
        return _with_damping(system, spec, values, by_name, damping, names)
    syms = [by_name[w] for w in names]
    theta = np.array([float(values[s]) for s in syms])
    cache = system.__dict__.setdefault("_param_aug", {})
    if names not in cache:
        cache[names] = _augmented(system, spec, values, syms, theta)
    return ParamSpec(cache[names], theta, names)


def _damping_derivatives(system):
    """{name: dD/dtheta (n x n)} of a damped built-in's joint damping F = -D v.

    The planar pendulums (systems._joint_damping): D = Delta^T diag(c) Delta
    (Delta row i: e_i - e_{i-1}, row 0: e_0): ``damping[i]`` -> Delta_i^T
    Delta_i, and ``damping`` -> Delta^T Delta when the damping was given as
    one value.  The tree: D = diag(c), each joint's friction on its own
    coordinate: ``damping[j]`` -> e_j e_j^T, and ``damping`` -> I (all the
    c_j moving together) when every c_j is the same -- the tree's params
    keep the n values (a scalar given to systems.tree is broadcast), and a
    system rebuilt with one value for ``damping`` has every c_j equal to it."""
    if getattr(system, "builtin", None) not in BUILTINS or "damping" not in (system.params or {}):
        return {}
    n = system.n
    c = np.asarray(system.params["damping"], dtype=float)
    if system.builtin == "tree":
        out = {f"damping[{i}]": np.diag(np.eye(n)[i]) for i in range(n)}
        if np.all(c == c.flat[0]):
            out["damping"] = np.eye(n)
        return out
    delta = np.eye(n) - np.eye(n, k=-1)
    out = {f"damping[{i}]": np.outer(delta[i], delta[i]) for i in range(n)}
    if c.ndim == 0:
        out["damping"] = delta.T @ delta
    return out


def builtin_values(system):
    """{name: value} of every parameter of a built-in that ``wrt=`` knows (its
    model's and its joint damping's); {} for another system (or without
    SymPy).  What :func:`symplectic.control.identify` starts from."""
    kind = getattr(system, "builtin", None)
    if kind not in BUILTINS:
        return {}
    out = {}
    if kind == "tree":
        par = np.asarray(system.params["par"], dtype=float)
        out = {w: float(par[i]) for w, i in tree_parameters(system.n).items()}
    else:
        try:
            out = {s.name: float(v) for s, v in _builtin_model(system)["values"].items()}
        except ImportError:
            pass
    damping = _damping_derivatives(system)
    if damping:
        c = np.broadcast_to(np.asarray(system.params["damping"], float), (system.n,))
        out.update({w: float(c[0] if w == "damping" else c[int(w[8:-1])]) for w in damping})
    return out


def builtin_keywords(system, values):
    """The keywords of a built-in's factory (its registry constructor, e.g.
    ``systems.tree(n, par, damping)``) that make it again with the
    parameters named in ``values`` ({name: value}, the names of ``wrt=``)
    changed: a keyword's own name (``m``, ``damping``), an element of an
    array keyword (``m[2]``, ``damping[1]``; ``M[0,1]`` of ``linear``, with
    its symmetric entry), or a tree's ``mass[j]``, ``com[j][k]``,
    ``inertia[j][xy]`` (its flat ``par``).  ValueError naming the valid
    names for another name."""
    kw = {k: (np.array(v, dtype=float) if np.ndim(v) else v)
          for k, v in (system.params or {}).items()}
    tree = tree_parameters(system.n) if system.builtin == "tree" else {}
    valid = builtin_values(system)
    for name, v in values.items():
        v = float(v)
        base, _, index = name.partition("[")
        if name not in valid:
            raise ValueError(f"{name} is not a parameter of this system (parameters: "
                             f"{', '.join(valid)})")
        if name in tree:
            kw["par"][tree[name]] = v
        elif not index:                                    # m, g, ..., damping (every joint)
            kw[name] = v
        else:
            a = kw[base] = np.array(np.broadcast_to(kw[base], (system.n,) if base == "damping"
                                                    else np.shape(kw[base])), dtype=float)
            ij = tuple(int(i) for i in index.rstrip("]").split(","))
            a[ij] = v
            if len(ij) == 2:
                a[ij[::-1]] = v
    return kw


def _with_damping(system, spec, values, by_name, damping, names):
    """prepare() for names that include a built-in's damping parameters: those
    enter the augmented system as coordinates that M and V do not contain
    (zero columns) and the run through their dD."""
    import sympy as sy

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
