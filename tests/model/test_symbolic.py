"""Systems from SymPy (symplectic.symbolic): the double pendulum and the
Lagrange top written as SymPy Lagrangians must give the trajectories of the
built-in C systems (independent, hand-derived code), through the compiled
and the NumPy paths; bad Lagrangians are rejected; the on-disk module cache
is keyed by source and survives corruption."""
import ast
import ctypes
import hashlib
import importlib
import inspect
import math
import pathlib
import pickle
import sys
import warnings

import numpy as np
import pytest

import symplectic as sp
from support.cases import sympy_backends
from support.cbuild import needs_sympy_cc
from support.models import L_DP, TOP, TOP_PERIOD, TOP_Q0, TOP_QDOT0

sy = pytest.importorskip("sympy")
symbolic = pytest.importorskip("symplectic.symbolic")
from symplectic.symbolic import _ccache, _model  # noqa: E402
from support.lagrangians import (  # noqa: E402
    dp_from_positions, dp_lagrangian, top_lagrangian, top_rigid_body)

DP_Q0 = [math.pi / 4, math.pi / 3]
N_STEPS = 400


needs_cc = needs_sympy_cc()
BACKENDS = sympy_backends()


@pytest.fixture(autouse=True, scope="module")
def cache(sympy_module_cache):
    """A private module cache for this test module: compiled once, reused by the tests."""
    return sympy_module_cache


def rel_diff(a, b):
    return max(np.max(np.abs(a.q - b.q)) / np.max(np.abs(a.q)),
               np.max(np.abs(a.p - b.p)) / np.max(np.abs(a.p)))


def dp_reference(n_steps=N_STEPS, method="simpson"):
    return sp.integrate(sp.systems.double_pendulum(1.0, 1.0, L_DP, L_DP, 9.81), DP_Q0, [0, 0],
                        0.01, n_steps, method=method)


def top_start():
    top = sp.systems.lagrange_top(**TOP)
    return top, TOP_Q0.copy(), top.mass(TOP_Q0) @ TOP_QDOT0


# ---------------------------------------------------------------- agreement with C
@pytest.mark.parametrize("compiled", BACKENDS)
@pytest.mark.parametrize("build", [dp_lagrangian, dp_from_positions])
def test_double_pendulum_equals_builtin(build, compiled):
    L, q, qd, params = build()
    sys_ = sp.System.from_sympy(L, q, qd, params, compile=compiled)
    assert sys_.backend == ("c" if compiled else "numpy")
    assert sys_.nogil == compiled
    ref = dp_reference()
    tr = sp.integrate(sys_, DP_Q0, [0, 0], 0.01, N_STEPS)
    assert rel_diff(ref, tr) <= 1e-12
    assert np.allclose(tr.energy, ref.energy, rtol=1e-12, atol=0)
    rep = sys_.check_derivatives([0.3, -1.0], rtol=1e-7)
    assert set(rep) == {"mass_grad", "mass_hess", "potential_grad", "potential_hess"}


@pytest.mark.parametrize("compiled", BACKENDS)
@pytest.mark.parametrize("build", [top_lagrangian, top_rigid_body])
def test_lagrange_top_equals_builtin(build, compiled):
    L, q, qd, params = build()
    sys_ = sp.symbolic.system(L, q, qd, params, compile=compiled, simplify=True)
    # phi and psi are cyclic: the simplified mass matrix depends on theta only
    assert sys_.mass_matrix.free_symbols & set(q) == {q[1]}
    ref_sys, q0, p0 = top_start()
    h = TOP_PERIOD / 40
    ref = sp.integrate(ref_sys, q0, p0, h, N_STEPS)
    tr = sp.integrate(sys_, q0, p0, h, N_STEPS)
    assert rel_diff(ref, tr) <= 1e-12
    assert np.allclose(tr.energy, ref.energy, rtol=1e-12, atol=0)
    # the momenta of the cyclic coordinates stay bitwise constant, as in C
    assert np.all(tr.p[:, 0] == p0[0]) and np.all(tr.p[:, 2] == p0[2])
    sys_.check_derivatives([0.2, 0.9, -0.4], rtol=1e-7)


@needs_cc
@pytest.mark.parametrize("method", ["midpoint", "rk4", "lobatto4"])
def test_other_methods_compiled(method):
    sys_ = sp.System.from_sympy(*dp_lagrangian())
    ref = dp_reference(200, method)
    tr = sp.integrate(sys_, DP_Q0, [0, 0], 0.01, 200, method=method)
    assert rel_diff(ref, tr) <= 1e-12


def test_mass_and_potential_pair():
    q1, q2 = sy.symbols("q1 q2")
    m1, m2, l1, l2, g = sy.symbols("m1 m2 l1 l2 g", positive=True)
    k = m2 * l1 * l2 * sy.cos(q1 - q2)
    M = [[(m1 + m2) * l1 ** 2, k], [k, m2 * l2 ** 2]]
    V = -(m1 + m2) * g * l1 * sy.cos(q1) - m2 * g * l2 * sy.cos(q2)
    params = dict(m1=1.0, m2=1.0, l1=L_DP, l2=L_DP, g=9.81)
    sys_ = sp.System.from_sympy((M, V), [q1, q2], params=params, compile="auto")
    assert rel_diff(dp_reference(200), sp.integrate(sys_, DP_Q0, [0, 0], 0.01, 200)) <= 1e-12
    assert sys_.params == params
    assert sys_.velocities is None


def test_functions_of_time():
    t = sy.Symbol("t")
    q1, q2 = sy.Function("q1")(t), sy.Function("q2")(t)
    m1, m2, l1, l2, g = sy.symbols("m1 m2 l1 l2 g", positive=True)
    u1, u2 = q1.diff(t), q2.diff(t)
    L = ((m1 + m2) * l1 ** 2 * u1 ** 2 / 2 + m2 * l1 * l2 * sy.cos(q1 - q2) * u1 * u2
         + m2 * l2 ** 2 * u2 ** 2 / 2 + (m1 + m2) * g * l1 * sy.cos(q1) + m2 * g * l2 * sy.cos(q2))
    sys_ = symbolic.system(L, [q1, q2], params=dict(m1=1, m2=1, l1=L_DP, l2=L_DP, g=9.81),
                           compile=False)
    assert rel_diff(dp_reference(200), sp.integrate(sys_, DP_Q0, [0, 0], 0.01, 200)) <= 1e-12


# ---------------------------------------------------------------- no compiler
def test_numpy_fallback_without_compiler(monkeypatch):
    monkeypatch.setenv("CC", "/nonexistent/bin/cc")
    with pytest.warns(symbolic.CompileWarning, match="cannot compile.*NumPy"):
        sys_ = sp.System.from_sympy(*dp_lagrangian())          # compile="auto"
    assert sys_.backend == "numpy" and sys_.library is None
    tr = sp.integrate(sys_, DP_Q0, [0, 0], 0.01, N_STEPS)
    assert rel_diff(dp_reference(), tr) <= 1e-12
    with pytest.raises(symbolic.CompilerError, match="not found"):
        sp.System.from_sympy(*dp_lagrangian(), compile=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert sp.System.from_sympy(*dp_lagrangian(), compile=False).backend == "numpy"


def test_compiler_that_fails_falls_back(monkeypatch, tmp_path):
    fake = tmp_path / "badcc"
    fake.write_text("#!/bin/sh\nif [ \"$1\" = --version ]; then echo badcc 1.0; exit 0; fi\n"
                    "echo 'error: no thanks' >&2\nexit 1\n")
    fake.chmod(0o755)
    monkeypatch.setenv("CC", str(fake))
    with pytest.warns(symbolic.CompileWarning, match="no thanks"):
        sys_ = sp.System.from_sympy(*dp_lagrangian())
    assert sys_.backend == "numpy"
    with pytest.raises(symbolic.CompilerError, match="no thanks"):
        sp.System.from_sympy(*dp_lagrangian(), compile=True)


# ---------------------------------------------------------------- rejected input
def one_dof():
    x, v = sy.symbols("x v")
    k = sy.Symbol("k", positive=True)
    return x, v, k


def test_non_quadratic_rejected():
    x, v, k = one_dof()
    with pytest.raises(ValueError, match="not quadratic in the velocities"):
        symbolic.system(v ** 4 / 4 - k * x ** 2 / 2, [x], [v], {k: 1.0})
    with pytest.raises(ValueError, match="not quadratic in the velocities"):
        symbolic.system(-sy.sqrt(1 - v ** 2) - k * x ** 2 / 2, [x], [v], {k: 1.0})


def test_linear_terms_rejected():
    x, y, vx, vy = sy.symbols("x y vx vy")
    B = sy.Symbol("B")
    L = (vx ** 2 + vy ** 2) / 2 + B * (x * vy - y * vx) / 2          # charge in a magnetic field
    with pytest.raises(ValueError, match="linear in the velocities"):
        symbolic.system(L, [x, y], [vx, vy], {B: 1.0})


def test_singular_mass_rejected():
    x, y, vx, vy = sy.symbols("x y vx vy")
    with pytest.raises(ValueError, match=r"singular for every q: row 1 of M is identically zero.*y"):
        symbolic.system(vx ** 2 / 2 - x ** 2 - y ** 2, [x, y], [vx, vy])
    with pytest.raises(ValueError, match=r"singular for every q: det M\(q\) simplifies to 0"):
        symbolic.system((vx + vy) ** 2 / 2 - x ** 2 - y ** 2, [x, y], [vx, vy])
    # singular at the test point only: the message says so and how to move it
    with pytest.raises(ValueError, match=r"singular at the test point.*test_point="):
        symbolic.system((vx ** 2 + (x - 0.5) ** 2 * vy ** 2) / 2, [x, y], [vx, vy],
                        test_point=[0.5, 0.0])
    sys_ = symbolic.system((vx ** 2 + (x - 0.5) ** 2 * vy ** 2) / 2, [x, y], [vx, vy],
                           compile=False)
    assert sys_.n == 2


def test_not_positive_definite_rejected():
    x, v, k = one_dof()
    with pytest.raises(ValueError, match="not positive definite"):
        symbolic.system(-v ** 2 / 2 - k * x ** 2 / 2, [x], [v], {k: 1.0})


def test_bad_pairs_and_symbols():
    x, y = sy.symbols("x y")
    with pytest.raises(ValueError, match="not symmetric"):
        symbolic.system(([[1, x], [0, 1]], x ** 2), [x, y])
    with pytest.raises(ValueError, match=r"neither coordinates.*: k \(give their values"):
        symbolic.system(([[1]], sy.Symbol("k") * x ** 2), [x])
    with pytest.raises(ValueError, match="2 x 2"):
        symbolic.system(([[1]], x ** 2), [x, y])
    with pytest.raises(ValueError, match="qdot .* required"):
        symbolic.system(x ** 2, [x])
    with pytest.raises(ValueError, match="compile"):
        symbolic.system(([[1]], x ** 2), [x], compile="yes")
    with pytest.raises(ValueError, match="finite"):
        symbolic.system(([[1]], sy.Symbol("k") * x ** 2), [x], params={"k": float("inf")})


# ---------------------------------------------------------------- the module cache
@needs_cc
def test_parameters_share_one_module_and_lagrangians_do_not(cache):
    a = sp.System.from_sympy(*dp_lagrangian())
    L, q, qd, params = dp_lagrangian()
    params = {s: 2 * v for s, v in params.items()}
    b = sp.System.from_sympy(L, q, qd, params)
    assert a.library == b.library                    # parameters are run-time data
    assert a.library.startswith(str(cache))
    c = sp.System.from_sympy(*top_lagrangian())
    d = sp.System.from_sympy(*dp_from_positions())
    assert len({a.library, c.library, d.library}) == 3
    assert len({a.c_source, c.c_source, d.c_source}) == 3
    # doubling every parameter: a different system, the same trajectories as C
    ref = sp.integrate(sp.systems.double_pendulum(2, 2, 2 * L_DP, 2 * L_DP, 2 * 9.81), DP_Q0,
                       [0, 0], 0.01, 200)
    assert rel_diff(ref, sp.integrate(b, DP_Q0, [0, 0], 0.01, 200)) <= 1e-12
    e = a.with_params(m2=2.0)
    assert e.library == a.library and e.params["m2"] == 2.0 and a.params["m2"] == 1.0
    ref = sp.integrate(sp.systems.double_pendulum(1, 2, L_DP, L_DP, 9.81), DP_Q0, [0, 0], 0.01, 200)
    assert rel_diff(ref, sp.integrate(e, DP_Q0, [0, 0], 0.01, 200)) <= 1e-12


@needs_cc
def test_cached_module_is_reused_without_compiling(monkeypatch):
    a = sp.System.from_sympy(*dp_lagrangian())
    _model._MODELS.clear()                            # as in a new process

    def no_compile(*args, **kw):
        raise AssertionError("the cached module was compiled again")

    monkeypatch.setattr(_ccache, "_compile", no_compile)
    b = sp.System.from_sympy(*dp_lagrangian())
    assert b.library == a.library and b.backend == "c"


def fresh_lagrangian(tag):
    """A Lagrangian no other test uses (its own cache entry): an anharmonic
    oscillator with a tag-dependent term, so that its module is not loaded yet."""
    x, v = sy.symbols("x v")
    k = sy.Symbol("k", positive=True)
    return v ** 2 / 2 - k * x ** 2 / 2 - sy.Rational(1, tag) * x ** 4, [x], [v], {k: 3.0}


def quartic_reference(tag):
    """Same system from plain Python callables (independent of the code generator)."""
    c = 1.0 / tag
    return sp.System(1, np.eye(1), lambda q: 1.5 * q[0] ** 2 + c * q[0] ** 4,
                     potential_grad=lambda q: np.array([3.0 * q[0] + 4 * c * q[0] ** 3]),
                     potential_hess=lambda q: np.array([[3.0 + 12 * c * q[0] ** 2]]))


@needs_cc
@pytest.mark.parametrize("damage", ["truncate", "flip", "garbage_with_checksum", "no_checksum"])
def test_corrupted_cache_entry_is_rebuilt(cache, damage):
    tag = {"truncate": 5, "flip": 6, "garbage_with_checksum": 7, "no_checksum": 9}[damage]
    L, q, qd, params = fresh_lagrangian(tag)
    src = symbolic.system(L, q, qd, params, compile=False).c_source
    path = _ccache.build(src)                          # in the cache, not loaded by this process
    key = path.name[:-len(path.suffix)]
    chk = path.with_name(key + ".sha256")
    good = path.read_bytes()
    if damage == "truncate":
        path.write_bytes(good[:len(good) // 2])
    elif damage == "flip":
        bad = bytearray(good)
        bad[len(bad) // 2] ^= 0xFF
        path.write_bytes(bytes(bad))
    elif damage == "garbage_with_checksum":           # checksum matches, the loader refuses it
        junk = b"not a shared library" * 50
        path.write_bytes(junk)
        chk.write_text(hashlib.sha256(junk).hexdigest() + "\n")
    else:
        chk.unlink()
    sys_ = symbolic.system(L, q, qd, params, compile=True)
    assert sys_.library == str(path)
    assert _ccache.is_valid(key, cache)
    tr = sp.integrate(sys_, [0.8], [0.1], 0.01, 300)
    ref = sp.integrate(quartic_reference(tag), [0.8], [0.1], 0.01, 300)
    assert rel_diff(ref, tr) <= 1e-12


@needs_cc
def test_cache_key_covers_source_and_compiler(monkeypatch, tmp_path):
    src = sp.System.from_sympy(*dp_lagrangian(), compile=False).c_source
    k1 = _ccache.key(src)
    assert _ccache.key(src + "\n") != k1
    assert _ccache.key(src) == k1
    # another compiler (a wrapper script with another version banner) -> another key
    real = _ccache.compiler_command()[0]
    fake = tmp_path / "othercc"
    fake.write_text(f"#!/bin/sh\nif [ \"$1\" = --version ]; then echo other 2.0; exit 0; fi\n"
                    f"exec {real} \"$@\"\n")
    fake.chmod(0o755)
    monkeypatch.setenv("CC", str(fake))
    assert _ccache.key(src) != k1


def test_cache_directory_from_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("SYMPLECTIC_CACHE", str(tmp_path / "x"))
    assert _ccache.cache_dir() == tmp_path / "x"
    monkeypatch.delenv("SYMPLECTIC_CACHE")
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    assert _ccache.cache_dir() == tmp_path / ".cache" / "symplectic"


# ---------------------------------------------------------------- the rest of the API
def test_pickle_rebuilds():
    sys_ = sp.System.from_sympy(*dp_lagrangian(), compile="auto", name="dp")
    back = pickle.loads(pickle.dumps(sys_))
    assert back.backend == sys_.backend and back.name == "dp" and back.params == sys_.params
    a = sp.integrate(sys_, DP_Q0, [0, 0], 0.01, 50)
    b = sp.integrate(back, DP_Q0, [0, 0], 0.01, 50)
    assert np.array_equal(a.q, b.q)
    assert "from SymPy" in repr(sys_) and "'dp'" in repr(sys_)


def test_lazy_attribute_and_classmethod():
    assert sp.symbolic is symbolic
    with pytest.raises(AttributeError):
        sp.no_such_thing


def test_helpers():
    th, w = sy.symbols("theta omega")
    R = symbolic.rotation("z", th)
    assert sy.simplify(R * R.T - sy.eye(3)) == sy.zeros(3, 3)
    assert list(R * sy.Matrix([1, 0, 0])) == [sy.cos(th), sy.sin(th), 0]
    assert list(symbolic.angular_velocity(R, [th], [w])) == [0, 0, w]
    assert list(symbolic.angular_velocity(symbolic.rotation("x", th), [th], [w], "space")) == [w, 0, 0]
    with pytest.raises(ValueError, match="axis"):
        symbolic.rotation("w", th)
    m, I, l = sy.symbols("m I l", positive=True)
    # a planar rigid rod pivoting about one end: T = 1/2 (I + m l^2) w^2 from its centre
    rod = symbolic.RigidBody(m, [l * sy.sin(th), -l * sy.cos(th)], I, angular_velocity=w)
    T = symbolic.kinetic_from_positions([th], [w], [rod])
    assert sy.simplify(T - (I + m * l ** 2) * w ** 2 / 2) == 0
    assert sy.simplify(symbolic.gravity_potential([rod], 9.81) + 9.81 * m * l * sy.cos(th)) == 0
    with pytest.raises(ValueError, match="exactly one"):
        symbolic.RigidBody(m, [0, 0], I)


def test_scalar_inertia_with_rotation_says_what_to_do():
    """A scalar inertia is a planar moment: with rotation= (a 3-D angular
    velocity) it is refused at once, and the message names both ways out."""
    th, w = sy.symbols("theta omega")
    m, I, l = sy.symbols("m I l", positive=True)
    pos = [l * sy.sin(th), -l * sy.cos(th)]
    R = symbolic.rotation("z", th)
    expected = (r"a scalar inertia \(I\) is the moment of a planar body about the axis normal to "
                r"its plane and goes with angular_velocity=, not rotation= \(which gives a 3-D "
                r"angular velocity\): for planar motion replace rotation=R by "
                r"angular_velocity=<the rate of the body's angle> \(e.g. angular_velocity=thetadot "
                r"for rotation\('z', theta\)\); for motion in 3-D keep rotation= and give inertia= "
                r"as 3 principal moments \[I1, I2, I3\] or a 3 x 3 matrix$")
    with pytest.raises(ValueError, match=expected):
        symbolic.RigidBody(m, pos, I, rotation=R)
    for scalar in (0.25, 2, np.float64(0.25), sy.Rational(1, 4)):
        with pytest.raises(ValueError, match="angular_velocity=<the rate of the body's angle>"):
            symbolic.RigidBody(m, pos, scalar, rotation=R)
    # both ways out give the rod pivoting about its end: T = 1/2 (I + m l^2) w^2
    planar = symbolic.RigidBody(m, pos, I, angular_velocity=w)
    spatial = symbolic.RigidBody(m, pos, [0, 0, I], rotation=R)
    for body in (planar, spatial):
        T = symbolic.kinetic_from_positions([th], [w], [body])
        assert sy.simplify(T - (I + m * l ** 2) * w ** 2 / 2) == 0


# ---------------------------------------------------------------- the package's layout
PUBLIC = {"system", "SymbolicSystem", "kinetic_from_positions", "gravity_potential",
          "angular_velocity", "rotation", "RigidBody", "CompileWarning", "CompilerError",
          "PointForce", "Torque", "generalized_forces"}          # (the last three: issue 16)


def test_public_face():
    """symplectic.symbolic exposes the names it exposed as a single module:
    __all__ plus the code generator's version; the rest is private."""
    assert sorted(symbolic.__all__) == sorted(PUBLIC)
    public = {k for k, v in vars(symbolic).items()
              if not k.startswith("_") and not inspect.ismodule(v)}
    assert public == PUBLIC | {"CODEGEN_VERSION"}
    assert symbolic.CODEGEN_VERSION == 1
    ns = {}
    exec("from symplectic.symbolic import *", ns)
    assert set(ns) - {"__builtins__"} == PUBLIC
    from symplectic import symbolic as again
    assert again is symbolic is sp.symbolic
    assert issubclass(symbolic.SymbolicSystem, sp.System)
    assert issubclass(symbolic.CompileWarning, RuntimeWarning)
    assert issubclass(symbolic.CompilerError, RuntimeError)
    assert symbolic.CompilerError is _ccache.CompilerError


def imported_names(path):
    """Every module name an import statement of ``path`` mentions."""
    names = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            names += [node.module or ""] + [a.name for a in node.names]
    return names


def test_system_does_not_import_symbolic():
    """One-way: symbolic builds on System; System.from_sympy reaches symbolic
    through the package face (symplectic.__getattr__), never by importing it."""
    path = pathlib.Path(sp._model._system.__file__)
    assert not [n for n in imported_names(path) if "symbolic" in n]
    literals = {n.value for n in ast.walk(ast.parse(path.read_text())) if isinstance(n, ast.Constant)}
    assert not literals & {"symplectic.symbolic", ".symbolic", "symbolic"}    # no importlib detour
    inside = pathlib.Path(symbolic.__file__).parent
    assert "_system" in {n.rsplit(".", 1)[-1] for n in imported_names(inside / "_frontend.py")}


def test_pickles_made_before_the_split_load():
    """Pickles name the rebuild function by module; the old single-module
    address symplectic.symbolic._rebuild_symbolic still resolves."""
    sys_ = sp.System.from_sympy(*dp_lagrangian(), compile=False)
    data = pickle.dumps(sys_, protocol=2)              # GLOBAL opcodes: module and name as text
    new_ref = b"csymplectic.symbolic._frontend\n_rebuild_symbolic\n"
    assert new_ref in data
    back = pickle.loads(data.replace(new_ref, b"csymplectic.symbolic\n_rebuild_symbolic\n"))
    assert back.params == sys_.params and back.backend == "numpy"
    assert np.array_equal(sp.integrate(back, DP_Q0, [0, 0], 0.01, 20).q,
                          sp.integrate(sys_, DP_Q0, [0, 0], 0.01, 20).q)


def test_with_params_checks_values():
    sys_ = sp.System.from_sympy(*dp_lagrangian(), compile=False)
    with pytest.raises(TypeError, match=r"parameter m2 must have a real numeric value, got 'heavy'"):
        sys_.with_params(m2="heavy")
    with pytest.raises(ValueError, match=r"parameter m2 must be finite, got nan"):
        sys_.with_params(m2=float("nan"))
    with pytest.raises(ValueError, match=r"mass is not a parameter of this system"):
        sys_.with_params(mass=1.0)


def test_import_error_without_sympy(monkeypatch):
    monkeypatch.setitem(sys.modules, "sympy", None)            # "not installed"
    monkeypatch.delitem(sys.modules, "symplectic.symbolic")
    monkeypatch.delattr(sp, "symbolic")
    with pytest.raises(ImportError, match=r"pip install sympy"):
        importlib.import_module("symplectic.symbolic")
    with pytest.raises(ImportError, match=r"pip install sympy"):
        sp.symbolic
    x = sy.Symbol("x")
    with pytest.raises(ImportError, match=r"symplectic-vi\[sympy\]"):
        sp.System.from_sympy(([[1]], x ** 2), [x])


@needs_cc
def test_compiled_callback_is_a_cfunc():
    sys_ = sp.System.from_sympy(*dp_lagrangian())
    lib = ctypes.CDLL(sys_.library)
    assert lib.symplectic_module_n() == 2
    assert lib.symplectic_module_ndata() >= 5


# ---------------------------------------------------------------- larger n, ensembles, processes
def chain_from_positions(n):
    q, u = sy.symbols(f"q0:{n}"), sy.symbols(f"u0:{n}")
    m, l, g = sy.symbols("m l g", positive=True)
    x = y = 0
    bodies = []
    for k in range(n):
        x, y = x + l * sy.sin(q[k]), y - l * sy.cos(q[k])
        bodies.append((m, [x, y]))
    L = symbolic.kinetic_from_positions(q, u, bodies) - symbolic.gravity_potential(bodies, g)
    return L, q, u, {m: 0.7, l: 0.5, g: 9.81}


@pytest.mark.parametrize("compiled", BACKENDS)
def test_chain_from_positions_equals_builtin(compiled):
    n = 4
    sys_ = sp.System.from_sympy(*chain_from_positions(n), compile=compiled)
    q0 = np.linspace(0.3, 0.9, n)
    p0 = sys_.mass(q0) @ np.linspace(-0.5, 0.5, n)
    ref = sp.integrate(sp.systems.pendulum_chain(n, 0.7, 0.5, 9.81), q0, p0, 0.01, 300)
    tr = sp.integrate(sys_, q0, p0, 0.01, 300)
    assert rel_diff(ref, tr) <= 1e-12


@needs_cc
def test_parameter_sweep_in_threads():
    base = sp.System.from_sympy(*dp_lagrangian())
    masses = [0.5, 1.0, 2.0, 3.0]
    systems = [base.with_params(m2=v) for v in masses]
    assert all(s.nogil for s in systems)
    ens = sp.integrate_many(systems, DP_Q0, [0, 0], 0.01, 300, threads=2)
    for k, v in enumerate(masses):
        alone = sp.integrate(systems[k], DP_Q0, [0, 0], 0.01, 300)
        assert np.array_equal(ens.q[k], alone.q) and np.array_equal(ens.p[k], alone.p)
        ref = sp.integrate(sp.systems.double_pendulum(1.0, v, L_DP, L_DP, 9.81), DP_Q0, [0, 0],
                           0.01, 300)
        assert rel_diff(ref, alone) <= 1e-12


BUILD_SCRIPT = r"""
import sys, numpy as np, sympy as sy, symplectic as sp
x, v = sy.symbols("x v")
k = sy.Symbol("k", positive=True)
L = v**2 / 2 - k * x**2 / 2 - x**6 / 11
s = sp.System.from_sympy(L, [x], [v], {k: 2.0}, compile=True)
tr = sp.integrate(s, [0.5], [0.0], 0.01, 100)
print(s.library, repr(float(tr.q[-1, 0])))
"""


@needs_cc
def test_concurrent_builds_in_processes(tmp_path):
    """Two processes building the same module into one empty cache at the same time."""
    import os
    import subprocess
    env = dict(os.environ, SYMPLECTIC_CACHE=str(tmp_path))
    procs = [subprocess.Popen([sys.executable, "-c", BUILD_SCRIPT], env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for _ in range(2)]
    outs = [p.communicate(timeout=300) for p in procs]
    for p, (out, err) in zip(procs, outs):
        assert p.returncode == 0, err
    assert outs[0][0] == outs[1][0]                   # same module, same result
    libs = [f for f in tmp_path.iterdir() if f.suffix in (".so", ".dylib", ".dll")]
    assert len(libs) == 1
    assert not [f for f in tmp_path.iterdir() if f.name.endswith(".tmp")]
    assert _ccache.is_valid(libs[0].stem, tmp_path)


@pytest.mark.parametrize("compiled", BACKENDS)
def test_number_symbols(compiled):
    """pi, e and sqrt(2) in the Lagrangian (the M_PI family of macros is not strict C99)."""
    x, v = sy.symbols("x v")
    L = v ** 2 / 2 - sy.pi * x ** 2 - sy.E * x ** 4 / 4 - sy.sqrt(2) * sy.cos(x)
    sys_ = sp.System.from_sympy(L, [x], [v], compile=compiled)
    e, r2 = math.e, math.sqrt(2)
    ref_sys = sp.System(1, np.eye(1), lambda q: math.pi * q[0] ** 2 + e * q[0] ** 4 / 4 + r2 * math.cos(q[0]),
                        potential_grad=lambda q: np.array([2 * math.pi * q[0] + e * q[0] ** 3
                                                           - r2 * math.sin(q[0])]),
                        potential_hess=lambda q: np.array([[2 * math.pi + 3 * e * q[0] ** 2
                                                            - r2 * math.cos(q[0])]]))
    ref = sp.integrate(ref_sys, [0.7], [0.2], 0.01, 300)
    assert rel_diff(ref, sp.integrate(sys_, [0.7], [0.2], 0.01, 300)) <= 1e-12


def test_functions_of_time_errors():
    t = sy.Symbol("t")
    x = sy.Function("x")(t)
    with pytest.raises(ValueError, match="autonomous"):
        symbolic.system(x.diff(t) ** 2 / 2 - sy.cos(t) * x ** 2, [x])
    with pytest.raises(ValueError, match="already used"):
        symbolic.system(x.diff(t) ** 2 / 2 - sy.Symbol("x") * x ** 2, [x], params={"x": 1.0})
