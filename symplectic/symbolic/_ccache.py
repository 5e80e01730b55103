"""Compile generated C into shared libraries, cached on disk.

Used by :mod:`symplectic.symbolic` (and usable for any generated callback):
``build(source)`` returns the path of a shared library compiled from
``source``, compiling it only when the cache has no valid copy.

Cache layout: one directory (``$SYMPLECTIC_CACHE``, else
``$XDG_CACHE_HOME/symplectic``, else ``~/.cache/symplectic``) holding, per
entry, ``<key>.c`` (the source, for reading), ``<key>.so`` (the library) and
``<key>.sha256`` (the library's checksum).  The key is a SHA-256 over the
full source, the compiler (resolved path and ``--version`` banner), the
flags and the ABI (platform, machine, pointer size, cache format), so two
different sources never share an entry and a new compiler means a new entry.

Safety: every file is written to a temporary name in the cache directory and
renamed into place (atomic on POSIX), under an advisory lock where the
platform has ``fcntl``; an entry whose library is missing, does not match its
stored checksum, or fails to load is rebuilt.  Files in the cache are never
modified in place, so a library already loaded by a running process is never
changed under it.
"""
import ctypes
import functools
import hashlib
import os
import pathlib
import platform
import shlex
import shutil
import struct
import subprocess
import sys
import sysconfig
import tempfile

try:                                   # POSIX advisory locks; elsewhere best effort
    import fcntl
except ImportError:                    # pragma: no cover - Windows
    fcntl = None

#: Bump when the layout of cache entries or the build procedure changes.
CACHE_FORMAT = 1

#: Flags for every build.  -O2 is what the built-in systems use;
#: -fno-math-errno lets sqrt and friends inline (errno is never read).
CFLAGS = ("-O2", "-std=c99", "-fPIC", "-fno-math-errno")
LDFLAGS = ("-shared",)
LIBS = ("-lm",)


class CompilerError(RuntimeError):
    """No usable C compiler, or the compiler rejected the generated source."""


def cache_dir(override=None):
    """The cache directory (created on first use)."""
    if override is not None:
        return pathlib.Path(override).expanduser()
    env = os.environ.get("SYMPLECTIC_CACHE")
    if env:
        return pathlib.Path(env).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = pathlib.Path(xdg).expanduser() if xdg else pathlib.Path.home() / ".cache"
    return base / "symplectic"


def compiler_command():
    """The compiler as an argument list: ``$CC`` if set, else the compiler
    Python was built with, else ``cc``.  Raises CompilerError when the
    program cannot be found."""
    env = os.environ.get("CC")
    if env is not None and env.strip():
        cmd = shlex.split(env)
        exe = shutil.which(cmd[0])
        if exe is None:
            raise CompilerError(f"the C compiler $CC = {env!r} was not found")
        return [exe] + cmd[1:]
    candidates = []
    conf = sysconfig.get_config_var("CC")
    if conf:
        candidates.append(shlex.split(conf))
    candidates += [["cc"], ["gcc"], ["clang"]]
    for cmd in candidates:
        exe = shutil.which(cmd[0])
        if exe is not None:
            return [exe] + cmd[1:]
    raise CompilerError("no C compiler found (tried $CC, Python's CC, cc, gcc, clang)")


@functools.lru_cache(maxsize=16)
def _compiler_identity(cmd):
    """Resolved path and version banner of the compiler (cached per process)."""
    try:
        out = subprocess.run(list(cmd) + ["--version"], capture_output=True, text=True,
                             timeout=60)
    except (OSError, subprocess.SubprocessError) as exc:
        raise CompilerError(f"the C compiler {cmd[0]!r} cannot be run: {exc}") from None
    banner = (out.stdout or out.stderr).strip()
    if out.returncode != 0:
        raise CompilerError(f"{' '.join(cmd)} --version failed (exit {out.returncode}): {banner[:300]}")
    real = os.path.realpath(cmd[0])
    return f"{real}\n{banner}"


def abi_tag():
    """What a compiled library must match besides its source and compiler."""
    return (f"format={CACHE_FORMAT};platform={sys.platform};machine={platform.machine()};"
            f"pointer={struct.calcsize('P')}")


def _suffix():
    return ".dylib" if sys.platform == "darwin" else (".dll" if os.name == "nt" else ".so")


def key(source, cmd=None):
    """Cache key of ``source`` built with the compiler ``cmd`` (default: the
    current compiler)."""
    cmd = tuple(cmd or compiler_command())
    h = hashlib.sha256()
    for part in (abi_tag(), _compiler_identity(cmd), " ".join(cmd), " ".join(CFLAGS + LDFLAGS + LIBS),
                 source):
        data = part.encode("utf-8")
        h.update(struct.pack("<Q", len(data)))
        h.update(data)
    return h.hexdigest()


def _sha256_file(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 16), b""):
            h.update(chunk)
    return h.hexdigest()


def _write_atomic(path, data):
    """Write bytes to ``path`` through a temporary file and a rename."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name + ".", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        _unlink(tmp)
        raise


def _unlink(path):
    try:
        os.unlink(path)
    except OSError:
        pass


class _Lock:
    """An advisory exclusive lock on ``<dir>/<key>.lock`` (no-op without fcntl)."""

    def __init__(self, path):
        self.path = path
        self.f = None

    def __enter__(self):
        if fcntl is not None:
            self.f = open(self.path, "a+b")
            fcntl.flock(self.f.fileno(), fcntl.LOCK_EX)
        return self

    def __exit__(self, *exc):
        if self.f is not None:
            fcntl.flock(self.f.fileno(), fcntl.LOCK_UN)
            self.f.close()


def entry_paths(k, directory):
    """(source, library, checksum) paths of the cache entry ``k``."""
    d = pathlib.Path(directory)
    return d / f"{k}.c", d / f"{k}{_suffix()}", d / f"{k}.sha256"


def is_valid(k, directory):
    """True when the entry's library exists and matches its stored checksum."""
    _, lib, chk = entry_paths(k, directory)
    try:
        stored = chk.read_text(encoding="ascii").strip()
        return len(stored) == 64 and _sha256_file(lib) == stored
    except OSError:
        return False


def _compile(source, k, directory, cmd):
    """Compile into the cache (the caller holds the lock)."""
    src, lib, chk = entry_paths(k, directory)
    _write_atomic(src, source.encode("utf-8"))
    # Compile to a temporary name in the same directory, then rename: a
    # reader never sees a half-written library.
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=lib.name + ".", suffix=".tmp")
    os.close(fd)
    try:
        args = list(cmd) + list(CFLAGS) + list(LDFLAGS) + [str(src), "-o", tmp] + list(LIBS)
        try:
            out = subprocess.run(args, capture_output=True, text=True, timeout=600)
        except (OSError, subprocess.SubprocessError) as exc:
            raise CompilerError(f"running the C compiler failed: {exc}") from None
        if out.returncode != 0:
            msg = (out.stderr or out.stdout).strip()
            raise CompilerError(f"the C compiler failed (exit {out.returncode}) on {src}:\n"
                                f"{' '.join(args)}\n{msg[:4000]}")
        digest = _sha256_file(tmp)
        os.chmod(tmp, 0o755)
        os.replace(tmp, lib)
    except BaseException:
        _unlink(tmp)
        raise
    _write_atomic(chk, (digest + "\n").encode("ascii"))


def build(source, directory=None, *, force=False):
    """Path of a shared library compiled from ``source``, from the cache when
    a valid entry exists (``force`` rebuilds).  Raises CompilerError."""
    cmd = compiler_command()
    k = key(source, cmd)
    d = cache_dir(directory)
    if not force and is_valid(k, d):
        return entry_paths(k, d)[1]
    d.mkdir(parents=True, exist_ok=True)
    with _Lock(d / f"{k}.lock"):
        if force or not is_valid(k, d):          # another process may have built it
            _compile(source, k, d, cmd)
    return entry_paths(k, d)[1]


def load(source, directory=None, check=None):
    """Build (or find) the library for ``source`` and load it with ctypes.

    ``check(lib)`` (optional) inspects the loaded library and raises
    OSError/ValueError when it is not the expected module.  A library that
    fails to load or fails ``check`` is rebuilt once.  Returns (CDLL, path).
    """
    path = build(source, directory)
    for attempt in (0, 1):
        # The retry loads the rebuilt file under a different spelling of its
        # path: the dynamic loader matches already-loaded objects by name, and
        # would otherwise hand back the rejected one.
        name = str(path) if attempt == 0 else os.path.join(str(path.parent), ".", path.name)
        try:
            lib = ctypes.CDLL(name)
            if check is not None:
                check(lib)
            return lib, path
        except (OSError, ValueError, AttributeError) as exc:
            if attempt:
                raise CompilerError(f"the compiled module {path} cannot be loaded: {exc}") from None
            path = build(source, directory, force=True)
    raise AssertionError("unreachable")  # pragma: no cover
