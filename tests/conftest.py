"""pytest fixtures and hooks shared by the test modules.

The helpers they are built on, and every helper a test module imports, live in the support
package (support/__init__.py lists its modules); test modules import from there, never from
this file.  The independent models (support.models) never call the C core.
"""
import pytest

import symplectic as sp
from support import cbuild, clibs
from support.cases import system_of_kind
from support.forms_dp import compile_library
from support.models import TOP, TOP_Q0, TOP_QDOT0


@pytest.fixture
def top_state():
    top = sp.systems.lagrange_top(**TOP)
    return top, TOP_Q0.copy(), top.mass(TOP_Q0) @ TOP_QDOT0


# ---------------------------------------------------------------- compiled C callbacks
# module scope: each requesting module compiles its own copy once (as when each module had
# its own fixture)
@pytest.fixture(scope="module")
def force_lib(tmp_path_factory):
    """The compiled forces of support.clibs.FORCE (test_forces.py, test_inputs_forces.py)."""
    return clibs.force_library(tmp_path_factory.mktemp("force_cfunc"))


@pytest.fixture(scope="module")
def pendulum_lib(tmp_path_factory):
    """The compiled pendulum of support.clibs.PENDULUM (test_messages.py,
    test_mass_validation.py)."""
    return clibs.pendulum_library(tmp_path_factory.mktemp("msgs"))


@pytest.fixture(scope="module")
def compiled_lib(tmp_path_factory):
    """support.forms_dp's compiled double pendulum; None without a C compiler (the compiled
    kind of system_of then skips)."""
    return compile_library(tmp_path_factory.mktemp("identity_cfunc"))


@pytest.fixture
def system_of(compiled_lib, tmp_path_factory):
    """kind -> (system, closed_form) for the kinds of support.cases.KINDS (test_identity.py,
    test_integrator.py)."""
    def make(kind):
        return system_of_kind(kind, compiled_lib, tmp_path_factory)
    return make


# ---------------------------------------------------------------- csrc/core/ built standalone
@pytest.fixture(scope="session")
def c_objects(tmp_path_factory):
    """support.cbuild.ObjectCache: object files of csrc/core/ and of the tests' C drivers, each
    (source, flags) compiled once per session and linked by every test that needs it
    (test_c_core.py, test_lu_kernels.py); skips without a C compiler."""
    cache = cbuild.ObjectCache(tmp_path_factory.mktemp("c_objects"), cbuild.compiler_or_skip())
    yield cache
    cache.close()


# ---------------------------------------------------------------- SymPy module cache
@pytest.fixture(scope="module")
def sympy_module_cache(tmp_path_factory):
    """A private SymPy module cache for the requesting test module: compiled once, reused by
    its tests (test_symbolic.py, test_mass_validation.py)."""
    d = tmp_path_factory.mktemp("symcache")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("SYMPLECTIC_CACHE", str(d))
        yield d


# ---------------------------------------------------------------- Ctrl-C
@pytest.fixture(autouse=True)
def _python_sigint_handler():
    """Every test sees Python's own SIGINT handler (KeyboardInterrupt).

    A shell that starts the suite as a background job without job control
    (``cmd &`` in a script, nohup) starts Python with SIGINT ignored, and
    Python then installs no handler: the Ctrl-C tests' SIGINT would be dropped
    and they would fail for a reason that has nothing to do with the code.
    """
    import signal
    import threading
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    old = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, old)
