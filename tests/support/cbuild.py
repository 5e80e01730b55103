"""The tests' own C code: the one C-compiler finder and the one compile-a-shared-library helper.

(symplectic.symbolic has its own compiler search, for its module cache; ``sympy_compiles``
asks that one, since the SymPy tests depend on what the package finds.)
"""
import ctypes
import shutil
import subprocess
import sysconfig

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
