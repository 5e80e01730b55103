"""Reading a trajectory file and checking it against its layout, before
anything is made of it: the first half of :func:`symplectic.load` (through
:func:`symplectic._run._io.read`).

Two refusals, each a ValueError that names the file:

- not a trajectory file at all -- an empty file, a single ``.npy`` array, a
  text file, a pickle, a damaged or truncated zip, an ``.npz`` without the
  ``format`` key (or with another format), a member that holds pickled Python
  objects, is damaged or is not a NumPy array: "'<file>' is not a symplectic
  trajectory file: <why>" (NumPy's own errors are not passed on);
- a trajectory file whose fields break the layout of :func:`symplectic.load`
  (:func:`check` lists the rules): "'<file>' is not a valid symplectic
  trajectory file: field '<key>' <what it is>, but <what it should be>".

A file that does not exist is FileNotFoundError (and a file that cannot be
opened the OSError of ``open``), as before.
"""
import contextlib
import json
import os
import re

import numpy as np

from .. import _engine
from .._model import _registry

#: The ``format`` key of every trajectory file.
FORMAT = "symplectic.Trajectory"

#: The layout's version (``format_version``): bumped when a key changes
#: meaning; a reader refuses a file of a newer version.
FORMAT_VERSION = 1

#: The values of ``system_kind``.
SYSTEM_KINDS = ("builtin", "sympy", "callables", "combined", "vectorized", "cfunc", "none")

#: dtype kinds (``np.dtype.kind``) of each kind of field, and how a message names them.
_KINDS = {"str": ("U", "a string (dtype <U...)"), "int": ("iu", "an integer dtype"),
          "float": ("f", "a real floating dtype (float64)"), "bool": ("b", "bool")}

_ZIP = (b"PK\x03\x04", b"PK\x05\x06")      # a zip's first bytes (an empty zip: the second)
_NPY = b"\x93NUMPY"
_EVENT_KEY = re.compile(r"^([tqp])_events_(\d+)$")


# ---------------------------------------------------------------- the file
def label(path):
    """How messages name ``path``: the file name, or an open file's ``name``."""
    if isinstance(path, (str, bytes, os.PathLike)):
        return os.fsdecode(path)
    name = getattr(path, "name", None)
    return name if isinstance(name, str) else repr(path)


def arrays(path):
    """The arrays of the trajectory file ``path`` (a file name or an open
    binary file), ``{key: ndarray}``, after :func:`check`: a ValueError for
    a file that is not a trajectory file or breaks its layout."""
    name = label(path)
    a = _read(path, name)
    check(a, name)
    return a


def _foreign(name, why):
    return ValueError(f"{name!r} is not a symplectic trajectory file: {why}")


def _read(path, name):
    """Every member of the ``.npz`` file ``path``, read without pickle."""
    with contextlib.ExitStack() as stack:
        if isinstance(path, (str, bytes, os.PathLike)):
            fid = stack.enter_context(open(path, "rb"))   # FileNotFoundError as open's
        else:
            fid = path
        head = fid.read(64)
        if not isinstance(head, bytes):
            raise TypeError(f"symplectic.load reads a file name or a binary file (opened "
                            f"'rb'); {name!r} gives {type(head).__name__}")
        fid.seek(-len(head), 1)
        if not head.startswith(_ZIP):
            raise _foreign(name, _not_zip(head))
        try:
            z = np.load(fid, allow_pickle=False)
        except MemoryError:
            raise
        except Exception as exc:        # noqa: BLE001 (whatever zipfile says: damaged)
            raise _foreign(name, f"it is a damaged or truncated .npz (zip) archive "
                                 f"({type(exc).__name__}: {exc})") from None
        with z:
            if "format" not in z.files:
                keys = ", ".join(repr(k) for k in sorted(z.files)[:8])
                more = ", ..." if len(z.files) > 8 else ""
                raise _foreign(name, f"it has no {'format'!r} key (an .npz of other arrays: "
                                     f"{keys or 'none'}{more})")
            a = {"format": _member(z, "format", name)}
            f = a["format"]
            if f.shape != () or f.dtype.kind != "U" or str(f) != FORMAT:
                found = (repr(str(f)) if f.shape == () and f.dtype.kind == "U"
                         else f"an array of shape {f.shape} and dtype {f.dtype}")
                raise _foreign(name, f"its 'format' is {found}, not {FORMAT!r}")
            for k in z.files:
                a[k] = _member(z, k, name)
    return a


def _not_zip(head):
    """Why a file that begins with ``head`` is not an ``.npz``, briefly."""
    if not head:
        return "the file is empty"
    if head.startswith(_NPY):
        return "it is a single NumPy array (an .npy file), not an .npz archive"
    if head[:1] == b"\x80":
        return "it is a Python pickle, not an .npz archive (which is a zip file)"
    try:
        text = head.decode("utf-8")
    except UnicodeDecodeError as exc:   # a character cut at the end of ``head`` is text too
        text = head[:exc.start].decode("utf-8") if exc.start >= len(head) - 3 else None
    if text and all(ch.isprintable() or ch in "\t\r\n" for ch in text):
        return f"it is a text file (it begins {text[:24]!r}), not an .npz archive"
    return f"it is not an .npz archive (a zip file; it begins {head[:8]!r})"


def _member(z, k, name):
    """Member ``k`` of the NpzFile ``z`` as an array, or a ValueError saying why not."""
    try:
        v = z[k]
    except ValueError as exc:
        if "pickle" in str(exc):        # NumPy's "... allow_pickle=False": an object array
            raise _foreign(name, f"its field {k!r} is an array of Python objects (pickled "
                                 f"data), which a trajectory file never holds") from None
        raise _foreign(name, f"its field {k!r} cannot be read ({exc})") from None
    except MemoryError:
        raise
    except Exception as exc:            # noqa: BLE001 (a damaged member: bad CRC, zlib, EOF)
        raise _foreign(name, f"its field {k!r} is damaged ({type(exc).__name__}: "
                             f"{exc})") from None
    if not isinstance(v, np.ndarray):
        raise _foreign(name, f"its member {k!r} is not a NumPy array")
    if v.dtype.hasobject:               # cannot happen without pickle; never let one through
        raise _foreign(name, f"its field {k!r} is an array of Python objects")
    return v


# ---------------------------------------------------------------- the layout
class _Layout:
    """The checks of one file's arrays ``a`` (named ``name`` in messages)."""

    def __init__(self, a, name):
        self.a, self.name = a, name

    def fail(self, text):
        raise ValueError(f"{self.name!r} is not a valid symplectic trajectory file: {text}")

    def _kind(self, key, v, kind):
        kinds, words = _KINDS[kind]
        if v.dtype.kind not in kinds:
            self.fail(f"field {key!r} has dtype {v.dtype}, but it must be {words}")

    def scalar(self, key, kind, required=True):
        """The 0-d field ``key`` of ``kind`` as a Python value (None when absent
        and not ``required``)."""
        if key not in self.a:
            if required:
                self.fail(f"the required field {key!r} is missing")
            return None
        v = self.a[key]
        if v.shape != ():
            self.fail(f"field {key!r} has shape {v.shape}, but it must be a scalar (shape ())")
        self._kind(key, v, kind)
        return v.item()

    def array(self, key, kind, layout, dims, required=False):
        """The field ``key`` of ``kind``, ``len(dims)``-d, checked axis by axis
        (None when absent and not ``required``).  ``layout``: its shape as the
        layout writes it; ``dims``: for each axis (size, why) -- size None for
        any, or (None, minimum) -- whose ``why`` ends the message of a mismatch."""
        if key not in self.a:
            if required:
                self.fail(f"the required field {key!r} is missing")
            return None
        v = self.a[key]
        if v.ndim != len(dims):
            self.fail(f"field {key!r} has shape {v.shape}, but it must be {layout} "
                      f"({len(dims)}-d)")
        self._kind(key, v, kind)
        for axis, (size, why) in enumerate(dims):
            found = v.shape[axis]
            wrong = found < size[1] if isinstance(size, tuple) else (
                size is not None and found != size)
            if wrong:
                what = (f"{found} row{'' if found == 1 else 's'}" if axis == 0
                        else f"shape {v.shape} (layout {layout})")
                self.fail(f"field {key!r} has {what}, but {why}")
        return v

    def absent(self, key, why):
        if key in self.a:
            self.fail(f"field {key!r} is present, but {why}")


def check(a, name):
    """Check the arrays ``a`` of the trajectory file ``name`` (whose
    ``format`` is already checked) against the layout of
    :func:`symplectic.load`; a ValueError names the first field that breaks it.

    The rules (rows = len(t), n = system_n, k = store_every):

    - ``format_version``: an integer scalar, 1 up to :data:`FORMAT_VERSION`
      (a newer one is refused as such, before the layout is read).
    - Required scalars: ``symplectic_version``, ``method``, ``message``,
      ``system_kind`` (one of :data:`SYSTEM_KINDS`), ``system_name``,
      ``system_repr`` strings; ``h`` a finite nonzero float (the step, in the
      time unit of ``t``; negative: a backward run); ``t0`` a float, finite
      or nan (unknown); ``status`` an integer in {-1, 0, 1}; ``store_every``
      an integer >= 0 (0: ``t_eval`` rows); ``system_n`` an integer >= 1.
      Every scalar is 0-d.
    - ``t`` (rows,), ``q`` and ``p`` (rows, n), floats; rows >= 1 when
      k >= 1 (the initial state is a row).
    - ``counts`` (4,) or (6,) integers >= 0; when k >= 1, rows is the rows a
      run of ``counts[0]`` steps keeps with ``store_every`` k (k = 1: steps
      + 1; else every k-th state and the last).
    - ``qdot``, ``impulse`` (rows, n), ``energy``, ``work`` (rows,),
      ``tangent`` (rows, 2n, c) with c >= 1 columns, floats; each optional.
    - ``newton_iterations`` (rows - 1,) integers, ``multipliers``
      (rows - 1, s, m) floats with s the method's nodes and m >= 1: only when
      k >= 1 (absent for ``t_eval`` rows, as ``tangent`` is).
    - ``q_mid``: only when k = 1 and the method has internal nodes; floats,
      (rows - 1, n) for one internal node (or (rows - 1, 1, n)),
      (rows - 1, s - 2, n) for more (a method this version does not know:
      either form).
    - Events: ``n_events`` an integer >= 0, and for each i < n_events
      ``t_events_<i>`` (k_i,), ``q_events_<i>`` and ``p_events_<i>``
      (k_i, n), floats; no event key without ``n_events`` or beyond it.
    - System: ``system_builtin`` (string) and ``system_flat`` ((c,) floats)
      required for a built-in; ``system_text`` a string when present.
    - Force: with ``force_repr`` (string), ``force_own`` (bool) and
      ``force_terms`` (a string, a JSON list of objects with a ``kind``;
      ``builtin`` ones with a ``name``, numeric ``params`` and an integer or
      null ``n``) are required, ``force_damping`` is (n, n) floats and
      ``force_hold`` (r, n) or (r, P, n) floats; no ``force_*`` key without
      ``force_repr``.

    Keys the layout does not name are not checked (a reader ignores them),
    nor the values of ``system_param_<name>`` (any array: the factory that
    rebuilds the system checks them, and a refusal there is load's warning)."""
    c = _Layout(a, name)
    version = c.scalar("format_version", "int")
    if version > FORMAT_VERSION:
        raise ValueError(f"{name!r} has format_version {version}; this symplectic reads up to "
                         f"{FORMAT_VERSION} (a newer version wrote it)")
    if version < 1:
        c.fail(f"field 'format_version' is {version}, but versions start at 1")
    for key in ("symplectic_version", "method", "message", "system_name", "system_repr"):
        c.scalar(key, "str")
    kind = c.scalar("system_kind", "str")
    if kind not in SYSTEM_KINDS:
        c.fail(f"field 'system_kind' is {kind!r}, but it must be one of {', '.join(SYSTEM_KINDS)}")
    h = c.scalar("h", "float")
    if not np.isfinite(h) or h == 0.0:
        c.fail(f"field 'h' is {h!r}, but the step must be finite and nonzero")
    t0 = c.scalar("t0", "float")
    if np.isinf(t0):
        c.fail(f"field 't0' is {t0!r}, but it must be finite (or nan: unknown)")
    status = c.scalar("status", "int")
    if status not in (-1, 0, 1):
        c.fail(f"field 'status' is {status}, but it must be 0 (completed), 1 (stopped by an "
               f"event) or -1 (partial)")
    every = c.scalar("store_every", "int")
    if every < 0:
        c.fail(f"field 'store_every' is {every}, but it must be >= 0 (0: t_eval rows)")
    n = c.scalar("system_n", "int")
    if n < 1:
        c.fail(f"field 'system_n' is {n}, but a system has n >= 1 coordinates")
    rows = len(c.array("t", "float", "(rows,)", [(None, "")], required=True))
    if every >= 1 and rows == 0:
        c.fail(f"field 't' has 0 rows, but a run that stores steps (store_every {every}) "
               f"keeps at least its initial state")
    _rows(c, rows, n, every)
    _steps(c, rows, every, a["method"].item(), n)
    _events(c, n)
    _system(c, kind)
    _force(c, n)


def _rows(c, rows, n, every):
    """The fields of one row per stored time (and ``counts``)."""
    by_t = f"'t' has {rows} (one row per stored time)"
    by_n = f"'system_n' is {n} (one column per coordinate)"
    for key in ("q", "p", "qdot", "impulse"):
        c.array(key, "float", "(rows, n)", [(rows, by_t), (n, by_n)], required=key in "qp")
    for key in ("energy", "work"):
        c.array(key, "float", "(rows,)", [(rows, by_t)])
    counts = c.array("counts", "int", "(6,)", [(None, "")])
    if counts is None:
        return
    if len(counts) not in (4, 6):
        c.fail(f"field 'counts' has shape {counts.shape}, but it must be (6,) (or (4,): "
               f"steps, evaluations, newton_iterations, factorizations)")
    if (counts < 0).any():
        c.fail(f"field 'counts' is {counts.tolist()}, but counts are >= 0")
    if every >= 1:
        steps = int(counts[0])
        kept = _engine.stored_rows(steps, every)
        how = ("the initial state and one row a step" if every == 1 else
               f"the initial state, the state every {every} steps and the last")
        if kept != rows:
            c.fail(f"field 't' has {rows} rows, but 'counts' gives {steps} steps, of which "
                   f"store_every {every} keeps {kept} rows ({how})")


def _steps(c, rows, every, method, n):
    """The fields of the rows of a run of steps (store_every >= 1), absent
    with t_eval rows: tangent (one a row); newton_iterations, multipliers and
    q_mid (one a step between consecutive rows)."""
    if every == 0:
        for key in ("newton_iterations", "q_mid", "multipliers", "tangent"):
            c.absent(key, "a file of t_eval rows (store_every 0) has none (its rows are not "
                          "steps)")
        return
    by_t = (f"'t' has {rows} rows, and there is one entry per interval between consecutive "
            f"rows ({rows - 1})")
    c.array("tangent", "float", "(rows, 2n, c)",
            [(rows, f"'t' has {rows} (one row per stored time)"),
             (2 * n, f"'system_n' is {n} (rows and columns ordered (q, p): 2n = {2 * n})"),
             ((None, 1), "it needs a column")])
    c.array("newton_iterations", "int", "(rows - 1,)", [(rows - 1, by_t)])
    m = _registry.METHODS.get(method)
    s = None if m is None else len(m.nodes)
    by_s = (f"method {method!r} has {s} nodes a step (ends included)" if m is not None
            else "")
    c.array("multipliers", "float", "(rows - 1, s, m)",
            [(rows - 1, by_t), (s if s is not None else (None, 2), by_s or "s >= 2"),
             ((None, 1), "it needs a constraint")])
    if "q_mid" not in c.a:
        return
    if every != 1:
        c.absent("q_mid", f"it is stored only when every step is a row (store_every 1, not "
                          f"{every})")
    by_n = f"'system_n' is {n} (one column per coordinate)"
    inner = None if m is None else m.n_mid
    if inner == 0:
        c.absent("q_mid", f"method {method!r} has no internal nodes")
    if inner in (None, 1) and c.a["q_mid"].ndim == 2:
        c.array("q_mid", "float", "(rows - 1, n)", [(rows - 1, by_t), (n, by_n)])
        return
    nodes, why = ((None, 1), "it needs an internal node") if inner is None else (
        inner, f"method {method!r} has {inner} internal node{'s' if inner > 1 else ''} a step")
    c.array("q_mid", "float", "(rows - 1, s - 2, n)", [(rows - 1, by_t), (nodes, why), (n, by_n)])


def _events(c, n):
    count = c.scalar("n_events", "int", required=False)
    if count is not None and count < 0:
        c.fail(f"field 'n_events' is {count}, but it must be >= 0")
    for key in c.a:
        hit = _EVENT_KEY.match(key)
        if hit and (count is None or int(hit.group(2)) >= count):
            c.fail(f"field {key!r} is present, but " + (
                "the file has no 'n_events'" if count is None else
                f"'n_events' is {count} (event functions 0 to {count - 1})" if count else
                "'n_events' is 0"))
    for i in range(count or 0):
        found = len(c.array(f"t_events_{i}", "float", "(k,)", [(None, "")], required=True))
        by_t = f"'t_events_{i}' has {found} (one row per crossing)"
        by_n = f"'system_n' is {n} (one column per coordinate)"
        for x in "qp":
            c.array(f"{x}_events_{i}", "float", "(k, n)", [(found, by_t), (n, by_n)],
                    required=True)


def _system(c, kind):
    builtin = kind == "builtin"
    c.scalar("system_builtin", "str", required=builtin)
    c.array("system_flat", "float", "(c,)", [(None, "")], required=builtin)
    c.scalar("system_text", "str", required=False)


def _force(c, n):
    if c.scalar("force_repr", "str", required=False) is None:
        for key in c.a:
            if key.startswith("force_"):
                c.absent(key, "the file has no 'force_repr' (the run had no force)")
        return
    c.scalar("force_own", "bool")
    text = c.scalar("force_terms", "str")
    try:
        terms = json.loads(text)
    except ValueError as exc:
        c.fail(f"field 'force_terms' is not JSON ({exc})")
    if not isinstance(terms, list) or not all(
            isinstance(t, dict) and isinstance(t.get("kind"), str) for t in terms):
        c.fail("field 'force_terms' must be a JSON list of terms, each an object with a "
               "'kind'")
    for i, t in enumerate(terms):
        if t["kind"] != "builtin":
            continue
        params = t.get("params")
        good = (isinstance(t.get("name"), str) and isinstance(params, list)
                and all(_number(x) for x in params)
                and (t.get("n") is None or _integer(t.get("n"))))
        if not good:
            c.fail(f"field 'force_terms': term {i} is a built-in term, but it needs a 'name' "
                   f"(string), 'params' (a list of numbers) and 'n' (an integer or null); "
                   f"found {t!r}")
    by_n = f"'system_n' is {n}"
    c.array("force_damping", "float", "(n, n)", [(n, by_n), (n, by_n)])
    hold = c.a.get("force_hold")
    if hold is not None and hold.ndim == 3:
        c.array("force_hold", "float", "(r, P, n)",
                [(None, ""), ((None, 1), "it needs a force point"), (n, by_n)])
    else:
        c.array("force_hold", "float", "(r, n)", [(None, ""), (n, by_n)])


def _number(x):
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def _integer(x):
    return isinstance(x, int) and not isinstance(x, bool)
