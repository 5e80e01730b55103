"""Trajectory files: :meth:`symplectic.Trajectory.save` and :func:`load`.

A file is a NumPy ``.npz`` archive of plain arrays -- numbers and strings,
no pickled objects -- so that ``np.load(path)`` reads it anywhere, without
symplectic and with ``allow_pickle=False``.  The layout is in
:func:`load`'s docstring and in docs/saving.md.
"""
import json
import warnings

import numpy as np

from . import _engine, _registry, forces

#: The ``format`` key of every trajectory file.
FORMAT = "symplectic.Trajectory"

#: The layout's version (``format_version``): bumped when a key changes
#: meaning; a reader refuses a file of a newer version.
FORMAT_VERSION = 1

_COUNTS = ("steps", "evaluations", "newton_iterations", "factorizations")
_PARAM = "system_param_"


# ---------------------------------------------------------------- writing
def save(traj, path, derived=True):
    """Write ``traj`` to ``path`` (see :meth:`Trajectory.save`)."""
    a = {"format": np.array(FORMAT), "format_version": np.array(FORMAT_VERSION, np.int64),
         "symplectic_version": np.array(_version()), "method": np.array(traj.method),
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
                    work=traj._work, impulse=traj._impulse)
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


def _version():
    from . import __version__
    return __version__


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
        from .symbolic import _spectext
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
def load(path, system=None, *, rebuild=True):
    """A :class:`Trajectory` from a file written by :meth:`Trajectory.save`.

    Every array is the saved one, bitwise (and of the saved dtype).  The
    system is reattached when it can be: ``system=S`` attaches ``S`` (a
    :class:`System` with the saved n; nothing else is checked); otherwise,
    with ``rebuild=True``, a built-in system is made again from its name and
    parameters by its factory (checked to give the saved C parameter
    vector bitwise), and a SymPy system is derived again from the text of
    its expressions, which is read without evaluating it (a restricted
    parser: see :mod:`symplectic.symbolic._spectext`; needs SymPy, compiles
    with ``compile="auto"``, from the on-disk cache when it holds the
    module).  Python-callable and compiled-callback systems cannot be
    rebuilt from a file: ``system`` is then None (the file's
    ``system_text`` names their callables), and what needs it --
    ``energy`` and ``qdot`` when the file does not hold them,
    ``dense_state``, the Hermite ``dense`` -- raises a ValueError saying
    so.  A system that cannot be rebuilt for another reason (no SymPy, a
    text the parser refuses, a built-in this version does not have) gives
    a RuntimeWarning and ``system`` None.  ``rebuild=False`` never rebuilds
    (no SymPy, no compiler: the file alone).

    ``force`` is the saved force when it can be had again: the system's
    own (``force_own``) when a system is attached, or one made of linear
    damping, a held array and the C core's built-in terms; else None
    (``saved["force"]`` describes it; ``work`` and ``impulse`` are kept
    either way).  ``saved`` holds the file's settings (see
    :class:`Trajectory`).

    The layout (``format_version`` 1; every value a NumPy array, shapes for
    N steps kept, n coordinates)::

        key                  shape           dtype    meaning
        format               ()              str      "symplectic.Trajectory"
        format_version       ()              int64    1
        symplectic_version   ()              str      the writer's version
        method               ()              str      the method's name
        h                    ()              float64  the step used
        t0                   ()              float64  initial time of the run (nan: unknown)
        status               ()              int64    0 completed, 1 event, -1 partial
        message              ()              str      what status means for the run
        store_every          ()              int64    k; 0 for t_eval rows (None)
        counts               (6,)            int64    steps, evaluations,
                                                      newton_iterations, factorizations,
                                                      branch_checks, branch_fixes
                                                      (files of format 1 may hold
                                                      the first 4)
        t                    (N+1,)          float64  the rows' times
        q, p                 (N+1, n)        float64  coordinates, canonical momenta
        qdot                 (N+1, n)        float64  velocities        [when stored]
        energy               (N+1,)          float64  H(q, p)           [when stored]
        q_mid                (N, n) or (N, s-2, n)  float64  internal nodes [if any]
        newton_iterations    (N,)            int32    per step (C int)  [if any]
        multipliers          (N, s, m)       float64  constraints' lambda [if any]
        work                 (N+1,)          float64  work of the force [with a force]
        impulse              (N+1, n)        float64  its impulse       [with a force]
        n_events             ()              int64    event functions   [with events]
        t_events_<i>         (k_i,)          float64  crossings of event i
        q_events_<i>, p_events_<i>  (k_i, n) float64  the states there
        system_kind          ()              str      builtin, sympy, callables,
                                                      combined, vectorized, cfunc, none
        system_n             ()              int64    n
        system_name          ()              str      its label ("" for none)
        system_repr          ()              str      repr(system)
        system_builtin       ()              str      C built-in's name [builtin]
        system_flat          (k,)            float64  its C parameters [builtin]
        system_param_<name>  any             any      a parameter [builtin, sympy]
        system_text          ()              str      sympy: JSON of the expressions
                                                      (srepr); callables: JSON
                                                      {slot: "module.qualname"}
        force_repr           ()              str      repr(force)   [with a force]
        force_own            ()              bool     it is the system's own force
        force_terms          ()              str      JSON list of its terms
        force_damping        (n, n)          float64  its -D qdot part [if any]
        force_hold           (N, n)          float64  its held array   [if any]

    Raises ValueError for a file that is not a trajectory file or is of a
    newer ``format_version``, TypeError/ValueError for a ``system`` that is
    not a System of the saved n.
    """
    with np.load(path, allow_pickle=False) as z:
        a = {k: z[k] for k in z.files}
    if str(a.get("format", "")) != FORMAT:
        raise ValueError(f"{path!r} is not a symplectic trajectory file (no format key "
                         f"{FORMAT!r})")
    version = int(a["format_version"])
    if version > FORMAT_VERSION:
        raise ValueError(f"{path!r} has format_version {version}; this symplectic reads up to "
                         f"{FORMAT_VERSION} (a newer version wrote it)")
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
    from ._trajectory import Counts, Trajectory
    t0 = float(a["t0"])
    traj = Trajectory(
        system, str(a["method"]), float(a["h"]), a["t"], a["q"], a["p"], a.get("q_mid"),
        a.get("newton_iterations"), status=int(a["status"]), message=str(a["message"]),
        counts=None if counts is None else Counts(*(int(c) for c in counts)),
        store_every=int(a["store_every"]) or None, events=events, qdot=a.get("qdot"),
        work=a.get("work"), impulse=a.get("impulse"),
        force=_force(force_info, a, system), multipliers=a.get("multipliers"),
        t0=None if np.isnan(t0) else t0)
    traj._energy = a.get("energy")
    traj._saved_arrays = {k: v for k, v in a.items() if k.startswith(("system_", "force_"))}
    traj.saved = {"format_version": version, "symplectic_version": str(a["symplectic_version"]),
                  "system": info, "force": force_info}
    return traj


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
        elif kind == "sympy":
            from .symbolic import _spectext
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
