"""Non-conservative forces from SymPy: generalized forces, Rayleigh dissipation,
applied point forces and torques -> one generalized force F(t, q, qdot) with
its Jacobians, compiled to C (or evaluated with NumPy).

* ``forces``: n expressions, the generalized forces themselves;
* ``dissipation``: a Rayleigh function R(q, qdot), F = -dR/dqdot
  (R = 1/2 qdot^T D qdot gives the linear damping -D qdot);
* ``applied``: :class:`PointForce` (a force vector acting at a point r(q))
  and :class:`Torque` (a torque vector acting on a body of angular velocity
  omega(q, qdot)), turned into generalized forces by their virtual work,
  F_k = force . dr/dq_k and F_k = torque . d omega/d qdot_k.

The total F, dF/dq and dF/dqdot are derived symbolically; the C code is the
flat force callback of sym_force_api.h (``sym_force_fn``), compiled through the
same on-disk cache as the Lagrangian's module, and becomes a term of a
:class:`symplectic.forces.Force` with its Jacobians (no Python in the loop).
Without a compiler the NumPy functions are a Python term with its Jacobian.
"""
import hashlib
import threading

import numpy as np
import sympy as _sy

from .. import forces as _forces
from . import _ccache
from ._codegen import CODEGEN_VERSION, ModelCache, _CPrinter, _NumPyPrinter, library_once
from ._inputs import as_list, coordinates, parameters


class PointForce:
    """A force vector ``force`` (expressions in q, qdot, t) acting at the point
    ``point`` = r(q) (2 or 3 components, the same frame): virtual work
    force . delta r, i.e. the generalized force F_k = force . dr/dq_k."""

    def __init__(self, point, force):
        self.point = as_list(point, "point")
        self.force = as_list(force, "force")
        if len(self.point) != len(self.force):
            raise ValueError(f"PointForce: the point has {len(self.point)} components and the "
                             f"force {len(self.force)}")


class Torque:
    """A torque vector ``torque`` acting on a body whose angular velocity is
    ``angular_velocity`` = omega(q, qdot) (linear in qdot; e.g. from
    :func:`symplectic.symbolic.angular_velocity`, same frame as the torque):
    virtual work torque . delta theta, F_k = torque . d omega/d qdot_k."""

    def __init__(self, angular_velocity, torque):
        self.angular_velocity = as_list(angular_velocity, "angular_velocity")
        self.torque = as_list(torque, "torque")
        if len(self.angular_velocity) != len(self.torque):
            raise ValueError(f"Torque: the angular velocity has {len(self.angular_velocity)} "
                             f"components and the torque {len(self.torque)}")


def generalized_forces(applied, q, qdot):
    """The generalized forces (a list of len(q) expressions) of ``applied``
    point forces and torques (:class:`PointForce`, :class:`Torque`) in the
    coordinates ``q`` with velocities ``qdot`` (plain Symbols)."""
    q, qdot = list(q), list(qdot)
    out = [_sy.S.Zero] * len(q)
    for a in applied:
        if isinstance(a, PointForce):
            for k, qk in enumerate(q):
                out[k] += sum((f * _sy.diff(r, qk) for f, r in zip(a.force, a.point)), _sy.S.Zero)
        elif isinstance(a, Torque):
            for k, vk in enumerate(qdot):
                w = [_sy.diff(c, vk) for c in a.angular_velocity]
                for c, wc in zip(a.angular_velocity, w):
                    if any(_sy.diff(wc, v) != 0 for v in qdot):
                        raise ValueError(f"Torque: the angular velocity must be linear in the "
                                         f"velocities (component {c})")
                out[k] += sum((t * wc for t, wc in zip(a.torque, w)), _sy.S.Zero)
        else:
            raise TypeError(f"applied must hold PointForce and Torque objects, got "
                            f"{type(a).__name__}")
    return out


# ---------------------------------------------------------------------- input
def spec(q_arg, qdot_arg, lag_spec, forces, dissipation, applied, time, params, inputs=None):
    """The total generalized force in plain symbols, with its parameters:
    a dict (F, q, qdot, time, params, param_order, names, and with
    ``inputs`` the control inputs u and B = dF/du: F(u) = F(0) + B(q) u,
    F holding F(0)), or None when no force is given."""
    if forces is None and dissipation is None and not applied:
        if time is not None:
            raise ValueError("time= is only used with forces=, dissipation= or applied=")
        if inputs is not None:
            raise ValueError("inputs= names the control inputs in forces= or applied=; give "
                             "the forces they drive there")
        return None
    n = len(lag_spec["q"])
    qs = list(lag_spec["q"])
    qds = list(lag_spec["qdot"])
    repl, tvar = {}, None
    fun = [isinstance(x, _sy.core.function.AppliedUndef) for x in as_list(q_arg, "q")]
    if all(fun):
        # functions of time: the same replacement as the Lagrangian's; their
        # variable is the time of the forces
        _qs, qds, repl = coordinates(q_arg, qdot_arg, True)
        tvar = next(iter(as_list(q_arg, "q")[0].args))
    elif not qds:
        if qdot_arg is None:
            if dissipation is not None:
                raise ValueError("dissipation= needs the velocity symbols: pass qdot=")
            qds = [_sy.Dummy(f"v_{i}") for i in range(n)]
        else:
            qds = as_list(qdot_arg, "qdot")
            if len(qds) != n or not all(isinstance(v, _sy.Symbol) for v in qds):
                raise ValueError(f"qdot must be {n} SymPy Symbols")
    if time is not None and not isinstance(time, _sy.Symbol):
        raise TypeError(f"time must be a SymPy Symbol, got {time!r}")
    tsym = time if time is not None else (tvar if tvar is not None else _sy.Symbol("t"))

    def norm(e):
        e = _sy.sympify(e)
        if repl:
            ders = {k: v for k, v in repl.items() if isinstance(k, _sy.Derivative)}
            funcs = {k: v for k, v in repl.items() if not isinstance(k, _sy.Derivative)}
            e = e.xreplace(ders).xreplace(funcs)
            if e.atoms(_sy.Derivative):
                raise ValueError(f"a force depends on higher derivatives of the coordinates: {e}")
        return e

    total = [_sy.S.Zero] * n
    if forces is not None:
        fl = [norm(e) for e in as_list(forces, "forces")]
        if len(fl) != n:
            raise ValueError(f"forces must hold {n} generalized forces (one per coordinate), "
                             f"got {len(fl)}")
        total = [a + b for a, b in zip(total, fl)]
    if dissipation is not None:
        R = norm(dissipation)
        if isinstance(R, _sy.MatrixBase):
            raise TypeError("dissipation must be a scalar expression R(q, qdot)")
        total = [a - _sy.diff(R, v) for a, v in zip(total, qds)]
    if applied:
        ap = []
        for a in applied:
            if isinstance(a, PointForce):
                ap.append(PointForce([norm(x) for x in a.point], [norm(x) for x in a.force]))
            elif isinstance(a, Torque):
                ap.append(Torque([norm(x) for x in a.angular_velocity],
                                 [norm(x) for x in a.torque]))
            else:
                raise TypeError(f"applied must hold PointForce and Torque objects, got "
                                f"{type(a).__name__}")
        total = [a + b for a, b in zip(total, generalized_forces(ap, qs, qds))]
    if tvar is not None and time is not None:
        total = [e.xreplace({tvar: time}) for e in total]
    us, B = (), ()
    if inputs is not None:
        us, B, total = _split_inputs(inputs, total, qs, qds, tsym)
    known = qs + qds + [tsym]
    pvals = parameters(params, total + [b for row in B for b in row], known)
    return dict(F=tuple(total), q=tuple(qs), qdot=tuple(qds), time=tsym, params=pvals,
                param_order=tuple(pvals), names=tuple(s.name for s in qs), inputs=us, B=B)


def _split_inputs(inputs, total, qs, qds, tsym):
    """(u, B, F(0)) of forces F(u) = F(0) + B(q) u in the input symbols u:
    B = dF/du, which must not depend on u (the inputs enter linearly), the
    velocities or the time."""
    us = tuple(as_list(inputs, "inputs"))
    if not us or not all(isinstance(u, _sy.Symbol) for u in us) or len(set(us)) != len(us):
        raise ValueError(f"inputs must be distinct SymPy Symbols (the control inputs), got "
                         f"{list(us)}")
    taken = set(us) & (set(qs) | set(qds) | {tsym})
    if taken:
        raise ValueError(f"inputs {sorted(map(str, taken))} are coordinates, velocities or the "
                         f"time")
    B = tuple(tuple(_sy.diff(e, u) for u in us) for e in total)
    for row in B:
        for b in row:
            if any(_sy.diff(b, u) != 0 for u in us):
                raise ValueError(f"the inputs must enter the forces linearly, F = F0 + B(q) u; "
                                 f"dF/du = {b} depends on them")
            if b.free_symbols & (set(qds) | {tsym}):
                raise ValueError(f"the inputs' matrix B = dF/du may depend on q only (control "
                                 f"inputs B(q) u), not on the velocities or the time: {b}")
    zero = {u: 0 for u in us}
    return us, B, [_sy.expand(e.xreplace(zero)) if e.has(*us) else e for e in total]


# ---------------------------------------------------------------------- model
_MODELS = ModelCache()


def model_for(fs):
    key = (fs["F"], fs["q"], fs["qdot"], fs["time"], fs["param_order"])
    return _MODELS.get(key, lambda: ForceModel(fs))


class ForceModel:
    """F(t, q, qdot) in internal symbols (t, q_i, v_i, p_k), its Jacobians and
    the code generated from them (built once)."""

    def __init__(self, fs):
        n = len(fs["q"])
        self.n = n
        self.qi = [_sy.Symbol(f"q_{i}") for i in range(n)]
        self.vi = [_sy.Symbol(f"v_{i}") for i in range(n)]
        self.t = _sy.Symbol("t_")
        self.pi = [_sy.Symbol(f"p_{k}") for k in range(len(fs["param_order"]))]
        self.names = fs["names"]
        self.spec = fs                  # what a pickled force is compiled again from
        sub = dict(zip(fs["q"], self.qi))
        sub.update(zip(fs["qdot"], self.vi))
        sub[fs["time"]] = self.t
        sub.update(zip(fs["param_order"], self.pi))
        self.F = [_sy.sympify(e).xreplace(sub) for e in fs["F"]]
        self.Fq = [[_sy.diff(e, x) for x in self.qi] for e in self.F]
        self.Fv = [[_sy.diff(e, x) for x in self.vi] for e in self.F]
        self.flags = ((0 if any(e != 0 for row in self.Fq for e in row) else _forces.NO_Q)
                      | (0 if any(e != 0 for row in self.Fv for e in row) else _forces.NO_V))
        self._source = None
        self._libs = {}
        self._numpy = None
        self._lock = threading.Lock()

    # ------------------------------------------------------------ C
    def source(self):
        if self._source is None:
            self._source = _c_source(self)
        return self._source

    def library(self, cache_dir):
        """(ctypes library, path), compiled once per cache directory."""
        return library_once(self, cache_dir, "symplectic_force_module_id", _ID_MARK)

    # ------------------------------------------------------------ NumPy
    def numpy_functions(self):
        """(F, jac) factories taking the parameter values."""
        if self._numpy is None:
            args = [self.t] + self.qi + self.vi + self.pi
            fF = _sy.lambdify(args, self.F, modules="numpy", printer=_NumPyPrinter)
            fJ = _sy.lambdify(args, [self.Fq, self.Fv], modules="numpy", printer=_NumPyPrinter)
            self._numpy = (fF, fJ)
        return self._numpy

    def force(self, values, compile, cache_dir):
        """(the Force with these parameter values, its backend): a compiled
        term ("c"), or a NumPy term ("numpy") with ``compile=False`` or when
        compiling fails and compile is "auto".  Either term pickles: it
        carries the recipe (:func:`_rebuilt_term`) that derives and compiles
        it again from the SymPy expressions in the unpickling process."""
        force, backend = self._force(values, compile, cache_dir)
        force.terms[0].recipe = (_rebuilt_term, (self.spec, tuple(values), compile, cache_dir))
        return force, backend

    def _force(self, values, compile, cache_dir):
        data = np.array([float(v) for v in values] or [0.0], dtype=float)
        if compile is not False:
            try:
                lib, _path = self.library(cache_dir)
            except (_ccache.CompilerError, OSError):
                if compile is True:
                    raise
            else:
                return _forces.from_cfunc(lib.symplectic_force, data, n=self.n, jacobian=True,
                                          depends_on=self._depends(),
                                          keepalive=(lib, self)), "c"
        fF, fJ = self.numpy_functions()
        pv = [float(v) for v in values]
        n = self.n

        def force(t, q, qdot):
            return np.array(fF(t, *q, *qdot, *pv), dtype=float).reshape(n)

        def jac(t, q, qdot):
            Fq, Fv = fJ(t, *q, *qdot, *pv)
            return (np.array(Fq, dtype=float).reshape(n, n),
                    np.array(Fv, dtype=float).reshape(n, n))

        return _forces.from_callable(force, jac, depends_on=self._depends()), "numpy"

    def _depends(self):
        return ("" if self.flags & _forces.NO_Q else "q") + ("" if self.flags & _forces.NO_V else "v")


def _rebuilt_term(fs, values, compile, cache_dir):
    """The force term of the force specification ``fs`` with these parameter
    values, derived and compiled (or made NumPy) in this process: what an
    unpickled SymPy force term is.  The compiled module comes from the
    on-disk cache when it holds it (the same source: the same code)."""
    return model_for(fs).force(values, compile, cache_dir)[0].terms[0]


_ID_MARK = 'symplectic_force_module_id(void) { return "'

_C_HEAD = """\
#include <math.h>

#if defined(_WIN32)
#define SYMPLECTIC_EXPORT __declspec(dllexport)
#else
#define SYMPLECTIC_EXPORT __attribute__((visibility("default")))
#endif

SYMPLECTIC_EXPORT const char *symplectic_force_module_id(void) { return "@ID@"; }
SYMPLECTIC_EXPORT int symplectic_force_module_n(void) { return @N@; }

SYMPLECTIC_EXPORT int symplectic_force(double t, long k, const double *q, const double *v,
                                       unsigned need, double *F, double *Fq, double *Fv,
                                       void *user_data)
{
    const double *data = (const double *)user_data;
    (void)t; (void)k; (void)q; (void)v; (void)data; (void)F; (void)Fq; (void)Fv;"""


def _block(targets, exprs, pr, tag):
    """C lines computing exprs into targets, common subexpressions shared."""
    temps, reduced = _sy.cse(list(exprs), symbols=_sy.numbered_symbols(f"{tag}_"),
                             order="canonical")
    lines = [f"        const double {s} = {pr.doprint(e)};" for s, e in temps]
    lines += [f"        {tg} = {pr.doprint(e)};" for tg, e in zip(targets, reduced)]
    return lines


def _c_source(m):
    """The flat force callback (sym_force_fn of sym_force_api.h) as C source."""
    n = m.n
    pr = _CPrinter()
    lines = [f"/* Generated by symplectic.symbolic (code generator version {CODEGEN_VERSION}); "
             f"do not edit.",
             f" * generalized force F(t, q, qdot), n = {n}; coordinates: {', '.join(m.names)}",
             f" * run-time data (user_data): {len(m.pi)} parameters",
             " * Contract: sym_force_fn of sym_force_api.h. */",
             _C_HEAD.replace("@N@", str(n))]
    lines.append("    const double t_ = t;")
    lines += [f"    const double q_{i} = q[{i}];" for i in range(n)]
    lines += [f"    const double v_{i} = v[{i}];" for i in range(n)]
    lines += [f"    const double p_{k} = data[{k}];" for k in range(len(m.pi))]
    lines += ["    (void)t_;"] + [f"    (void)q_{i}; (void)v_{i};" for i in range(n)]
    lines += [f"    (void)p_{k};" for k in range(len(m.pi))]
    lines.append("    if (need & 1u) {")
    lines += _block([f"F[{c}]" for c in range(n)], m.F, pr, "f")
    lines.append("    }")
    lines.append("    if (need & 2u) {")
    lines += _block([f"Fq[{c * n + d}]" for c in range(n) for d in range(n)],
                    [m.Fq[c][d] for c in range(n) for d in range(n)], pr, "a")
    lines.append("    }")
    lines.append("    if (need & 4u) {")
    lines += _block([f"Fv[{c * n + d}]" for c in range(n) for d in range(n)],
                    [m.Fv[c][d] for c in range(n) for d in range(n)], pr, "b")
    lines.append("    }")
    lines += ["    return 0;", "}"]
    src = "\n".join(lines) + "\n"
    return src.replace("@ID@", hashlib.sha256(src.encode("utf-8")).hexdigest())
