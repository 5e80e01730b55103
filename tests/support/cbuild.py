"""The tests' own C code: the one C-compiler finder, the one compile-a-shared-library helper,
and the session's cache of object files (ObjectCache) for the tests that build programs from
the C core, csrc/core/ (tests/c_core/test_c_core.py, test_lu_kernels.py; conftest.py's
``c_objects``).

(symplectic.symbolic has its own compiler search, for its module cache; ``sympy_compiles``
asks that one, since the SymPy tests depend on what the package finds.)
"""
import concurrent.futures
import ctypes
import hashlib
import os
import pathlib
import shutil
import subprocess
import sysconfig
import threading

import pytest

NO_COMPILER = "no C compiler on this machine"


def find_compiler():
    """The path of a C compiler, or None: the one Python was built with first (a library loaded
    into this process is best built by the interpreter's compiler), then cc, gcc, clang."""
    cc_var = sysconfig.get_config_var("CC")
    return ((shutil.which(cc_var.split()[0]) if cc_var else None) or shutil.which("cc")
            or shutil.which("gcc") or shutil.which("clang"))


def compiler_or_skip():
    """find_compiler(), skipping the calling test without one."""
    cc = find_compiler()
    if cc is None:
        pytest.skip(NO_COMPILER)
    return cc


def build_shared(source, directory, name, flags=("-O2",)):
    """Compile C ``source`` into ``directory``/lib<name>.so and load it with ctypes; None
    without a C compiler.  ``flags`` come before -shared -fPIC (optimisation, -std)."""
    cc = find_compiler()
    if cc is None:
        return None
    src, lib = directory / f"{name}.c", directory / f"lib{name}.so"
    src.write_text(source)
    subprocess.run([cc, *flags, "-shared", "-fPIC", str(src), "-o", str(lib), "-lm"], check=True)
    return ctypes.CDLL(str(lib))


def shared_or_skip(source, directory, name, flags=("-O2",)):
    """build_shared, skipping the calling test (or fixture) without a C compiler."""
    lib = build_shared(source, directory, name, flags)
    if lib is None:
        pytest.skip(NO_COMPILER)
    return lib


def sympy_compiles():
    """Whether symplectic.symbolic finds a C compiler for its compiled modules."""
    from symplectic.symbolic import _ccache
    try:
        _ccache.compiler_command()
        return True
    except _ccache.CompilerError:
        return False


def needs_sympy_cc():
    """A skipif mark for the tests of SymPy systems compiled to C."""
    return pytest.mark.skipif(not sympy_compiles(), reason=NO_COMPILER)


# ---------------------------------------------------------- csrc/core/ compiled once per session
#: The flags of the standalone builds of csrc/core/ (test_c_core.py, test_lu_kernels.py): C99, -O2 as
#: the tests' claims about the optimised build need, and the warnings test_c_core.py asserts
#: absent.  Warning options change no generated code (GCC, clang; gcc 12 writes the same bytes
#: for sym_linalg.c and sym_lu_small.c with and without them), so one object file serves the
#: test that reads the warnings and the tests that only link it.
CORE_FLAGS = ("-std=c99", "-O2", "-Wall", "-Wextra", "-Wpedantic")

#: The sources that take most of the compile time (the unrolled fixed-size kernels,
#: sym_unroll.h): started first, so that two compilers finish together.  An order only.
SLOW_FIRST = ("sym_lu_small.c", "sym_galerkin_kernels.c")


def csrc_flags(csrc, *defines):
    """CORE_FLAGS, the ``defines`` (-D...) and -I``csrc``: the compile flags of a standalone build
    of the sources in ``csrc`` (csrc/core/, or a copy of it: the core includes only its own
    headers)."""
    return [*CORE_FLAGS, *defines, f"-I{csrc}"]


class Compiled:
    """One compilation: the object file, the compiler's exit status and messages (stderr)."""

    def __init__(self, obj, returncode, messages, command):
        self.obj, self.returncode, self.messages, self.command = obj, returncode, messages, command

    def checked(self):
        """The object file; fails the calling test when the compilation failed."""
        assert self.returncode == 0, f"{' '.join(self.command)}\n{self.messages}"
        return self.obj


class ObjectCache:
    """C sources compiled to object files once per session and shared by every test that links
    them: a (source, flags) pair is compiled once, whoever asks first, at most ``workers``
    compilers at a time (default: two, or one on a single CPU).  ``submit`` returns a future
    (of Compiled), so that a test module can start every compilation it needs at once."""

    def __init__(self, directory, cc, workers=None):
        self.directory, self.cc = pathlib.Path(directory), cc
        self._pool = concurrent.futures.ThreadPoolExecutor(
            workers or max(1, min(2, os.cpu_count() or 1)), thread_name_prefix="cc")
        self._jobs, self._lock = {}, threading.Lock()

    def submit(self, source, flags=CORE_FLAGS):
        """Future of Compiled for ``source`` (a path) compiled with ``flags`` (-c -o added)."""
        source = pathlib.Path(source).resolve()
        key = (str(source), tuple(flags))
        with self._lock:
            if key not in self._jobs:
                tag = hashlib.sha1(repr(key).encode()).hexdigest()[:12]
                obj = self.directory / f"{source.stem}-{tag}.o"
                self._jobs[key] = self._pool.submit(self._compile, source, tuple(flags), obj)
            return self._jobs[key]

    def submit_text(self, name, text, flags=CORE_FLAGS):
        """``submit`` for C source text (a test's driver), written once under its content's hash."""
        tag = hashlib.sha1(text.encode()).hexdigest()[:12]
        path = self.directory / f"{name}-{tag}.c"
        with self._lock:
            if not path.exists():
                path.write_text(text)
        return self.submit(path, flags)

    def submit_all(self, sources, flags=CORE_FLAGS):
        """``submit`` for several sources, SLOW_FIRST first, then the larger files first; the
        futures in the order of ``sources``."""
        sources = [pathlib.Path(s) for s in sources]
        order = sorted(sources, key=lambda s: (s.name not in SLOW_FIRST,
                                               SLOW_FIRST.index(s.name) if s.name in SLOW_FIRST
                                               else -s.stat().st_size))
        futures = {s: self.submit(s, flags) for s in order}
        return [futures[s] for s in sources]

    def _compile(self, source, flags, obj):
        cmd = [self.cc, *flags, "-c", str(source), "-o", str(obj)]
        res = subprocess.run(cmd, capture_output=True, text=True)
        return Compiled(obj, res.returncode, res.stderr, cmd)

    def link(self, objects, exe, flags=()):
        """Link object files (paths) into ``exe`` with -lm; the CompletedProcess (not checked:
        a caller may retry without a linker option)."""
        cmd = [self.cc, *map(str, objects), "-o", str(exe), *flags, "-lm"]
        return subprocess.run(cmd, capture_output=True, text=True)

    def close(self):
        self._pool.shutdown(wait=True, cancel_futures=True)
