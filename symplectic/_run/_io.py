"""Trajectory files: :meth:`symplectic.Trajectory.save` and the reading half
of :func:`symplectic.load` (which makes the Trajectory, in ``_trajectory``).

A file is a NumPy ``.npz`` archive of plain arrays -- numbers and strings,
no pickled objects -- so that ``np.load(path)`` reads it anywhere, without
symplectic and with ``allow_pickle=False``.  The layout is in
:func:`symplectic.load`'s docstring and in docs/saving.md; ``_iofile`` reads
a file and checks it against the layout before :func:`read` uses it.
"""
import json
import warnings

import numpy as np

from .. import _engine, forces
from .._version import __version__
from .._model import _registry
from . import _iofile
from ._iofile import FORMAT, FORMAT_VERSION     # the format key and the layout's version

_COUNTS = ("steps", "evaluations", "newton_iterations", "factorizations")
_PARAM = "system_param_"


# ---------------------------------------------------------------- writing
def save(traj, path, derived=True):
    """Write ``traj`` to ``path`` (see :meth:`Trajectory.save`)."""
    a = {"format": np.array(FORMAT), "format_version": np.array(FORMAT_VERSION, np.int64),
         "symplectic_version": np.array(__version__), "method": np.array(traj.method),
         "h": np.array(traj.h, np.float64),
         "t0": np.array(np.nan if traj.t0 is None else traj.t0, np.float64),
         "status": np.array(traj.status, np.int64), "message": np.array(str(traj.message)),
         "store_every": np.array(traj.store_every or 0, np.int64),
         "t": traj.t, "q": traj.q, "p": traj.p}
    if traj.counts is not None:
        a["counts"] = np.array(tuple(traj.counts), np.int64)
    if derived and traj.system is not None:
        for name in ("energy", "qdot"):     # computed now (and kept on traj)
            getattr(traj, name)
    optional = dict(qdot=traj._qdot, energy=traj._energy, q_mid=traj.q_mid,
                    newton_iterations=traj.newton_iterations, multipliers=traj.multipliers,
                    work=traj._work, impulse=traj._impulse, tangent=traj.tangent)
    a.update({k: v for k, v in optional.items() if v is not None})
    if traj.t_events is not None:
        a["n_events"] = np.array(len(traj.t_events), np.int64)
        for i, (te, qe, pe) in enumerate(zip(traj.t_events, traj.q_events, traj.p_events)):
            a[f"t_events_{i}"], a[f"q_events_{i}"], a[f"p_events_{i}"] = te, qe, pe
    # a loaded trajectory without its system (or force) keeps the file's description of it
    kept = getattr(traj, "_saved_arrays", None) or {}
    a.update({k: v for k, v in kept.items() if k.startswith("system_")} if traj.system is None
             and kept else _system_arrays(traj.system, traj.q.shape[1]))
    a.update({k: v for k, v in kept.items() if k.startswith("force_")} if traj.force is None
             and kept else _force_arrays(traj.force, traj.system))
    np.savez(path, **{k: np.asarray(v) for k, v in a.items()})


def _kind(system):
    if system is None:
        return "none"
    if system.builtin is not None:
        return "builtin"
    if hasattr(system, "_spec"):
        return "sympy"
    c = getattr(system, "_callables", None) or {}
    return next((k for k in ("cfunc", "combined", "vectorized") if k in c), "callables")


def _system_arrays(system, n):
    kind = _kind(system)
    a = {"system_kind": np.array(kind), "system_n": np.array(n, np.int64),
         "system_name": np.array((system.name if system is not None else None) or ""),
         "system_repr": np.array(repr(system) if system is not None else "")}
    if kind == "builtin":
        a["system_builtin"] = np.array(system.builtin)
        a["system_flat"] = system._flat
    if kind in ("builtin", "sympy"):
        for k, v in system.params.items():
            a[_PARAM + k] = np.asarray(v)
    if kind == "sympy":
        from ..symbolic import _spectext
        try:
            a["system_text"] = np.array(_spectext.dumps(system))
        except TypeError:       # an object the text cannot hold: load will say it
            pass                # cannot rebuild the system
    elif kind not in ("builtin", "none"):
        a["system_text"] = np.array(json.dumps(
            {k: _describe(v, k) for k, v in system._callables.items()
             if v is not None and v is not True}))
    return a


def _describe(f, key=None):
    """A callable (or what stands in its slot ``key``) as text: "module.qualname"."""
    if key == "n_constraints":
        return int(f)
    if isinstance(f, (int, np.integer)):
        return "an address (compiled code or its data)"
    if isinstance(f, np.ndarray):
        return f"a constant array of shape {f.shape}"
    name = getattr(f, "__qualname__", None) or type(f).__qualname__
    return f"{getattr(f, '__module__', None) or '?'}.{name}"


def _force_arrays(force, system):
    if force is None:
        return {}
    a = {"force_repr": np.array(repr(force)),
         "force_own": np.array(system is not None and force is system.force),
         "force_terms": np.array(json.dumps([_term(t) for t in force.terms]))}
    if force.damping is not None:
        a["force_damping"] = force.damping
    if force.hold is not None:
        a["force_hold"] = force.hold
    return a


def _term(t):
    if isinstance(t, forces._BuiltinTerm):
        return {"kind": "builtin", "name": t.name, "params": t.params.tolist(), "n": t.n}
    if getattr(t, "recipe", None) is not None:
        return {"kind": "sympy"}
    if isinstance(t, forces._PythonTerm):
        return {"kind": "python", "callable": _describe(t.f), "jacobian": t.jac is not None}
    return {"kind": "compiled"}


# ---------------------------------------------------------------- reading
def read(path, system=None, *, rebuild=True):
    """The contents of a trajectory file as :func:`symplectic.load` describes
    them: ``(args, attrs)`` -- the arguments of the Trajectory to make
    (``counts`` as a tuple) and the attributes to set on it (``_energy``,
    ``_saved_arrays``, ``saved``).  :func:`symplectic._run._trajectory.load` makes
    the Trajectory, so that this module never imports the class.  The file is
    read and checked against its layout first (:mod:`symplectic._run._iofile`:
    a ValueError for a file that is not a trajectory file or breaks it), so
    that nothing below meets an array of another shape or dtype."""
    a = _iofile.arrays(path)
    version = int(a["format_version"])
    info = _system_info(a)
    system = _attach(system, info, a) if system is not None else (
        _rebuild(info, a) if rebuild else None)
    force_info = None
    if "force_repr" in a:
        force_info = {"repr": str(a["force_repr"]), "own": bool(a["force_own"]),
                      "terms": json.loads(str(a["force_terms"]))}
    events = None
    if "n_events" in a:
        k = range(int(a["n_events"]))
        events = tuple([a[f"{x}_events_{i}"] for i in k] for x in "tqp")
    counts = a.get("counts")
    t0 = float(a["t0"])
    args = dict(
        system=system, method=str(a["method"]), h=float(a["h"]), t=a["t"], q=a["q"], p=a["p"],
        q_mid=a.get("q_mid"), newton_iterations=a.get("newton_iterations"),
        status=int(a["status"]), message=str(a["message"]),
        counts=None if counts is None else tuple(int(c) for c in counts),
        store_every=int(a["store_every"]) or None, events=events, qdot=a.get("qdot"),
        work=a.get("work"), impulse=a.get("impulse"),
        force=_force(force_info, a, system), multipliers=a.get("multipliers"),
        t0=None if np.isnan(t0) else t0, tangent=a.get("tangent"))
    attrs = dict(_energy=a.get("energy"),
                 _saved_arrays={k: v for k, v in a.items() if k.startswith(("system_", "force_"))},
                 saved={"format_version": version,
                        "symplectic_version": str(a["symplectic_version"]),
                        "system": info, "force": force_info})
    return args, attrs


def _system_info(a):
    info = {"kind": str(a["system_kind"]), "n": int(a["system_n"]),
            "name": str(a["system_name"]) or None, "repr": str(a["system_repr"]),
            "params": {k[len(_PARAM):]: _value(v) for k, v in a.items() if k.startswith(_PARAM)},
            "text": str(a["system_text"]) if "system_text" in a else None}
    if info["kind"] == "builtin":
        info["builtin"] = str(a["system_builtin"])
    return info


def _value(v):
    """A parameter as the factory took it: a Python number for a 0-d array."""
    return v.item() if v.ndim == 0 else v


def _attach(system, info, a):
    if not isinstance(system, _engine.System):
        raise TypeError(f"system must be a symplectic.System, got {type(system).__name__}")
    if system.n != info["n"]:
        raise ValueError(f"system has n = {system.n}, the saved trajectory n = {info['n']}")
    return system


def _rebuild(info, a):
    """The saved system made again, or None (with a RuntimeWarning when it
    should have been possible)."""
    kind = info["kind"]
    try:
        if kind == "builtin":
            system = _registry.builtin_factory(info["builtin"])(**info["params"])
            if not _same_bits(system._flat, a["system_flat"]):
                raise ValueError("its factory gives other C parameters than the saved ones")
            # a built-in's own constraints come back with it; Python constraint callables
            # attached to one (a tree's loop closure: System._from_builtin(constraints=...))
            # are not saved: the run's multipliers say how many there were (a run stored at
            # t_eval keeps none: then the saved description, which names them)
            m = np.shape(a["multipliers"])[-1] if "multipliers" in a else None
            if (m is not None and (system.n_constraints or 0) != m) or \
                    "constraint callables" in info["repr"] or "(Python)" in info["repr"]:
                raise ValueError(f"the run's system had holonomic constraints given as "
                                 f"Python callables ({m if m is not None else 'some'}), which "
                                 f"are not saved: made again from the built-in's parameters "
                                 f"it would have {system.n_constraints or 0}")
        elif kind == "sympy":
            from ..symbolic import _spectext
            system = _spectext.rebuild(info["text"])
        else:
            return None
        if system.n != info["n"]:
            raise ValueError(f"it has n = {system.n}, the file {info['n']}")
    except Exception as exc:        # noqa: BLE001 (any failure: the arrays still load)
        warnings.warn(f"symplectic.load: the saved system ({info['repr']}) was not rebuilt "
                      f"({type(exc).__name__}: {exc}); the trajectory has no system: attach "
                      f"one with load(path, system=S)", RuntimeWarning, stacklevel=3)
        return None
    return system


def _same_bits(x, y):
    x, y = np.asarray(x, np.float64), np.asarray(y, np.float64)
    return x.shape == y.shape and x.tobytes() == y.tobytes()


def _force(info, a, system):
    """The saved force when it can be had again (see load), else None."""
    if info is None:
        return None
    if info["own"] and system is not None and system.force is not None:
        return system.force
    if not all(t["kind"] == "builtin" for t in info["terms"]):
        return None
    terms = [forces._BuiltinTerm(t["name"], t["params"], t["n"]) for t in info["terms"]]
    return forces.Force(a.get("force_damping"), a.get("force_hold"), terms)
