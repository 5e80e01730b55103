"""The entry point: :func:`system` and the :class:`SymbolicSystem` it returns.

``system()`` checks the input (``_lagrangian.spec``), takes the shared model
of M and V (``_model.model_for``) and makes a :class:`symplectic.System` that
evaluates it: compiled C when asked for or when ``compile="auto"`` finds a
working compiler, else NumPy.  Parameter values are run-time data, so
:meth:`SymbolicSystem.with_params` and pickling rebuild a system from the
same model without deriving or compiling again.
"""
import ctypes
import warnings

import types

import numpy as np

from .._model._system import System
from . import _forces
from ._ccache import CompilerError
from ._inputs import finite_value
from . import _constraints
from ._lagrangian import _test_point, check_mass_at, spec as _spec
from ._model import model_for


class CompileWarning(RuntimeWarning):
    """``compile="auto"`` could not compile and fell back to NumPy."""


class SymbolicSystem(System):
    """A :class:`symplectic.System` built from SymPy expressions by :func:`system`.

    Extra attributes: ``backend`` (``"c"`` or ``"numpy"``), ``library`` (path
    of the compiled module, or None), ``c_source`` (the generated C),
    ``coordinates`` and ``velocities`` (the symbols), ``parameters``
    ({Symbol: value}), ``mass_matrix`` and ``potential_energy`` (SymPy, in the
    user's symbols), ``generalized_forces`` (the total non-conservative force
    as n SymPy expressions, or None) and ``force`` (its
    :class:`symplectic.forces.Force`, included in every run); ``with_params``
    makes a copy with other parameter values (no new compilation).
    """

    @property
    def expressions(self):
        """The SymPy description the system was built from, read-only: the
        coordinates ``"q"``, velocities ``"qdot"``, mass matrix ``"M"`` and
        potential ``"V"`` (in the system's own symbols, parameters as
        symbols: their values are :attr:`parameters`), and when given
        ``"forces"`` and ``"constraints"``.  (What an exact derivative of
        higher order, e.g. the control module's Hessian, differentiates.)"""
        return types.MappingProxyType(self._spec)

    def derived(self, key, make):
        """A value derived from the system's :attr:`expressions`, made once
        (``make(self)``) and kept on the system under ``key`` (what a tool
        generates from them, e.g. the control module's third derivatives of
        L, whose SymPy derivation takes tenths of a second)."""
        store = self.__dict__.setdefault("_derived", {})
        if key not in store:
            store[key] = make(self)
        return store[key]

    @property
    def c_source(self):
        """The generated C source of the flat eval callback."""
        return self._model.source()

    @property
    def constraint_c_source(self):
        """The generated C source of the constraint callback (None without constraints)."""
        cm = getattr(self, "_cmodel", None)
        return None if cm is None else cm.source()

    def with_params(self, params=None, **by_name):
        """The same system with some parameter values changed (by Symbol or by name).

        The new values are checked as :func:`system` checks the first ones:
        finite, and M positive definite at the test point (the constructor's
        ``test_point``), evaluated by the new system itself.

        Raises
        ------
        ValueError
            For a name that is not a parameter, a value that is not finite,
            or values that make M not positive definite or singular at the
            test point (the constructor's message, with the parameter values:
            e.g. a negative mass).
        TypeError
            For a value that is not a real number.
        """
        new = dict(self.parameters)
        names = {s.name: s for s in new}
        for k, v in list((params or {}).items()) + list(by_name.items()):
            s = names.get(k) if isinstance(k, str) else k
            if s not in new:
                raise ValueError(f"{k} is not a parameter of this system "
                                 f"(parameters: {', '.join(names)})")
            new[s] = v
        obj = _make(self._spec, new, self._options)
        spec = self._spec
        test_q = np.asarray(spec["test_q"]) if "test_q" in spec else _test_point(None, obj.n)
        check_mass_at(spec["M"], spec["q"], {s: obj.parameters[s] for s in spec["param_order"]},
                      test_q, spec["names"], obj.mass)
        return obj

    def __reduce__(self):
        return (_rebuild_symbolic, (self._spec, self.parameters, self._options))

    def __repr__(self):
        label = f" {self._name!r}" if self._name else ""
        how = "compiled C" if self.backend == "c" else "NumPy"
        return f"<symplectic.System{label} n={self.n}, from SymPy ({how})>"


def _rebuild_symbolic(spec, params, options):
    return _make(spec, params, options)


def system(expr, q, qdot=None, params=None, *, constraints=None, compile="auto",
           simplify=False, name=None, test_point=None, cache_dir=None, forces=None,
           dissipation=None, applied=None, time=None, inputs=None):
    """A :class:`SymbolicSystem` from a SymPy Lagrangian or from (M, V).

    Parameters
    ----------
    expr
        The Lagrangian L(q, qdot) = 1/2 qdot^T M(q) qdot - V(q) (a SymPy
        expression), or a pair ``(M, V)``: the mass matrix (n x n, any
        matrix-like of expressions in q) and the potential.
    q, qdot
        The coordinates and velocities as SymPy Symbols (qdot only with a
        Lagrangian).  Functions of time ``q_i(t)`` (e.g. from
        ``sympy.physics.mechanics.dynamicsymbols``) are accepted too, with
        qdot defaulting to their time derivatives.
    params
        ``{Symbol or name: value}`` for every other symbol in the expressions.
        The values are used at run time; they are not compiled in.
    constraints
        Holonomic constraints: a sequence of expressions g_k(q) (each meaning
        g_k(q) = 0; an ``Eq(lhs, rhs)`` is read as lhs - rhs), in the same
        coordinates, at most n - 1 of them, without velocities.  Their
        Jacobian G = dg/dq and the contraction sum_k mu_k d^2 g_k/dq^2 are
        derived and compiled (or evaluated with NumPy) like M and V; the
        system then carries the constraints (see :class:`symplectic.System`,
        ``constraint=``), ``system.constraints`` holds the expressions.
    compile
        ``"auto"`` (default): compiled C when a C compiler works, else NumPy
        with a :class:`CompileWarning`.  ``True``: compiled C or
        :class:`CompilerError`.  ``False``: NumPy.
    simplify
        ``True`` passes every entry of M and V through ``sympy.trigsimp``
        before differentiating (helps with M from positions or rotation
        matrices; can be slow for large systems); a callable is applied to
        each entry instead.
    name
        Label for ``repr``.
    test_point
        Configuration at which M is checked numerically (default: a fixed
        generic point); change it when M is singular only at special points.
    cache_dir
        Directory of compiled modules (default ``$SYMPLECTIC_CACHE``, else
        ``~/.cache/symplectic``).
    forces, dissipation, applied, time
        Non-conservative forces of the system (``System.force``, included in
        every run), summed: ``forces`` n generalized forces (expressions in
        q, qdot, the time symbol ``time`` and parameters); ``dissipation`` a
        Rayleigh function R(q, qdot), giving F = -dR/dqdot; ``applied`` a
        list of :class:`PointForce` (a force vector at a point r(q)) and
        :class:`Torque` (a torque on a body of angular velocity
        omega(q, qdot)), turned into generalized forces by their virtual
        work.  F, dF/dq and dF/dqdot are derived symbolically and compiled
        like M and V (NumPy without a compiler).  With (M, V) instead of a
        Lagrangian, pass ``qdot`` for velocity-dependent forces.  ``time``
        defaults to the variable of functions of time q(t), else a symbol
        named ``t``.
    inputs
        Control inputs: SymPy Symbols u_1..u_m that appear in ``forces`` or
        ``applied`` (e.g. a thrust along a body's axis), linearly, with
        coefficients in q only: F = F0 + B(q) u.  The system's own force is
        then F0 (u = 0), and ``system.input_matrix(q)`` (n, m) and
        ``system.input_matrix_jac(q)`` (n, m, n) give B and dB/dq, which
        :class:`symplectic.control.Problem` takes by default
        (``system.inputs`` lists the symbols).

    Raises
    ------
    ValueError
        When L is not of the form 1/2 qdot^T M qdot - V (terms linear in
        qdot, or not quadratic), when M is not symmetric, is singular
        (identically, or at the test point) or is not positive definite, or
        when a symbol has no value.
    """
    if compile not in ("auto", True, False):
        raise ValueError(f'compile must be "auto", True or False, got {compile!r}')
    # with (M, V), qdot is only for the forces
    pair = isinstance(expr, (tuple, list)) and len(expr) == 2
    forced = forces is not None or dissipation is not None or bool(applied)
    qd = None if pair and forced else qdot
    spec = _spec(expr, q, qd, params, simplify, test_point)
    if constraints is not None:
        spec = _constraints.add_constraints(spec, constraints, q, qd, params)
    spec["forces"] = _forces.spec(q, qdot, spec, forces, dissipation, applied, time, params,
                                  inputs)
    options = dict(compile=compile, name=name, cache_dir=cache_dir)
    allp = dict(spec["params"])
    if spec["forces"] is not None:
        allp.update(spec["forces"]["params"])
    return _make(spec, allp, options)


def _make(spec, params, options):
    """The system of ``spec`` with the parameter values ``params`` ({Symbol: value})."""
    model = model_for(spec)
    order = spec["param_order"]
    cmodel = _constraints.model_for(spec) if spec.get("constraints") else None
    corder = spec["cparam_order"] if cmodel else ()
    allorder = tuple(order) + tuple(s for s in corder if s not in order)
    values = {}
    for s in allorder:
        if s not in params:
            raise ValueError(f"no value for parameter {s}")
        values[s] = finite_value(s, params[s])
    data = model.data([values[s] for s in order])
    cdata = cmodel.data([values[s] for s in corder]) if cmodel else None
    obj = None
    if options["compile"] is not False:
        obj = _compiled(model, data, options, cmodel, cdata)
    if obj is None:
        cons = cmodel.numpy_callables(cdata) if cmodel else {}
        obj = SymbolicSystem.vectorized(model.n, model.numpy_function()(data), name=options["name"],
                                        **cons)
        obj.backend = "numpy"
        obj.library = None
    obj._model = model
    obj._cmodel = cmodel
    obj._spec = spec
    obj._options = dict(options)
    obj.parameters = {s: values[s] for s in allorder}
    obj._params = {s.name: values[s] for s in allorder}
    obj.constraints = list(spec["constraints"]) if cmodel else None
    obj.coordinates = spec["q"]
    obj.velocities = spec["qdot"] or None
    obj.mass_matrix = spec["M"]
    obj.potential_energy = spec["V"]
    obj.generalized_forces = None
    obj.inputs = obj.input_matrix = obj.input_matrix_jac = None
    fs = spec.get("forces")
    if fs is not None and fs.get("inputs"):
        _input_matrix(obj, fs, params)
    if fs is not None:
        fvalues = []
        for s in fs["param_order"]:
            if s not in params:
                raise ValueError(f"no value for parameter {s}")
            fvalues.append(finite_value(s, params[s]))
        if any(e != 0 for e in fs["F"]):        # (only the inputs' terms: no force of its own)
            force, obj.force_backend = _forces.model_for(fs).force(
                fvalues, options["compile"], options["cache_dir"])
            obj._force = force
            obj.generalized_forces = list(fs["F"])
        obj.parameters.update(zip(fs["param_order"], fvalues))
        obj._params.update({s.name: v for s, v in zip(fs["param_order"], fvalues)})
    return obj


def _input_matrix(obj, fs, params):
    """system.inputs, input_matrix(q) = B (n, m) and input_matrix_jac(q) =
    dB/dq (n, m, n), NumPy functions of the inputs' matrix at these
    parameter values."""
    import numpy as np
    import sympy as sy
    q = list(fs["q"])
    n, m = len(q), len(fs["inputs"])
    Bm = sy.Matrix(fs["B"]).xreplace({s: params[s] for s in fs["param_order"] if s in params})
    dB = [[[sy.diff(Bm[c, j], ql) for ql in q] for j in range(m)] for c in range(n)]
    fB, fdB = sy.lambdify([q], Bm, "numpy"), sy.lambdify([q], dB, "numpy")

    def input_matrix(qv):
        """B(q) (n, m): the generalized force of the inputs is B(q) u."""
        return np.array(fB(np.asarray(qv, dtype=float)), dtype=float).reshape(n, m)

    def input_matrix_jac(qv):
        """dB/dq (n, m, n), [c, j, l] = dB_cj/dq_l."""
        return np.array(fdB(np.asarray(qv, dtype=float)), dtype=float).reshape(n, m, n)
    obj.inputs = list(fs["inputs"])
    obj.input_matrix, obj.input_matrix_jac = input_matrix, input_matrix_jac


def _compiled(model, data, options, cmodel=None, cdata=None):
    """The system over the compiled module (and the constraints' module);
    None (with a CompileWarning) when ``compile="auto"`` cannot compile."""
    try:
        lib, path = model.library(options["cache_dir"])
        clib = cmodel.library(options["cache_dir"])[0] if cmodel else None
    except (CompilerError, OSError) as exc:         # OSError: e.g. an unwritable cache
        if options["compile"] is True:
            raise
        # stacklevel=4: the caller of system() or of with_params()
        warnings.warn(f"symplectic.symbolic: cannot compile ({exc}); using the NumPy "
                      f"evaluation instead (slower).  Install a C compiler or set $CC, or "
                      f"pass compile=False to silence this warning.", CompileWarning,
                      stacklevel=4)
        return None
    arr = (ctypes.c_double * max(1, len(data)))(*data)
    cons, keep = {}, (lib, arr, model)
    if cmodel is not None:
        carr = (ctypes.c_double * max(1, len(cdata)))(*cdata)
        cons = dict(constraint=clib.symplectic_constraint, constraint_data=ctypes.addressof(carr),
                    n_constraints=cmodel.m)
        keep += (clib, carr, cmodel)
    obj = SymbolicSystem.from_cfunc(model.n, lib.symplectic_eval, ctypes.addressof(arr),
                                    keepalive=keep, name=options["name"], **cons)
    obj.backend = "c"
    obj.library = str(path)
    return obj
