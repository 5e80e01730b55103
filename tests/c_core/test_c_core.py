"""The C core on its own, driven by its registries.

tests/c/test_schemes.c is compiled with csrc/core/sym_*.c (the C core: no Python binding) by the system's C
compiler and run; it integrates every built-in system with every method of the registry
(sym_method_at / sym_builtin_at, so a new row is picked up without a change to any test) and
prints fitted convergence orders against exact solutions (the pendulum over one period, its
energy, the linear oscillator's modal solution) and self-convergence orders for each built-in's
example, and the allocator calls made inside sym_step (malloc/calloc/realloc/free wrapped at
link time) for the n-link chain up to n = 300, where every implicit method's Newton system is
larger than 512 (the blocked LU; n = 513 for the 2-node schemes). Skipped without a C compiler or without csrc/core/ next to the
tests (a run against an installed package).

The object files come from the session's cache (conftest.py's ``c_objects``,
support.cbuild.ObjectCache): each source is compiled once, two at a time, and the objects of
csrc/core/ are shared with test_lu_kernels.py (the same command) and with the copy of the sources
that test_new_rows_are_picked_up changes (its unchanged files are csrc/core/'s, byte for byte).
"""
import concurrent.futures
import math
import pathlib
import shutil
import subprocess
import threading

import pytest

from support.cbuild import compiler_or_skip, csrc_flags

TESTS = pathlib.Path(__file__).resolve().parents[1]
CSRC = TESTS.parent / "csrc" / "core"                # the C core, no Python
PROGRAM = TESTS / "c" / "test_schemes.c"
COUNT = ["-DSYM_COUNT_ALLOC"]                     # test_schemes.c's allocator wrappers
WRAP = ["-Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc,--wrap=free"]
KINDS_EXACT = ("pendulum", "energy", "linear")

# compiles the C sources on its own (independent of the installed package and
# of NumPy): the README's run covers it; .ci/run's run of the installed wheel (NumPy 1.24)
# and the sanitizer run leave it out
pytestmark = pytest.mark.cbuild


def tolerance(order):
    """How far a fitted order may be from the registered one: 0.25, or 6 % for orders above 4
    (the asymptotic range above rounding narrows as the order grows)."""
    return max(0.25, 0.06 * order)


def compiler():
    cc = compiler_or_skip()
    if not (CSRC / "symplectic.h").is_file() or not PROGRAM.is_file():
        pytest.skip("the C sources are not next to the tests (installed-package run)")
    return cc


def headers(csrc):
    """The headers test_schemes.c and csrc/core/sym_*.c include, by name, with their bytes."""
    return {h.name: h.read_bytes() for h in [*csrc.glob("sym_*.h"), csrc / "symplectic.h"]
            if h.is_file()}


def compilations(c_objects, csrc, count):
    """The futures of the compilations of csrc/core/sym_*.c and test_schemes.c (with
    -DSYM_COUNT_ALLOC when ``count``), in link order.  In a copy of csrc/core/ with its headers,
    a source that is csrc/core/'s byte for byte is compiled as csrc/core/'s: the same object
    file."""
    shared = headers(csrc) == headers(CSRC)

    def origin(f):
        same = shared and (CSRC / f.name).is_file() and f.read_bytes() == (CSRC / f.name).read_bytes()
        return CSRC if same else csrc

    where = {f: origin(f) for f in sorted(csrc.glob("sym_*.c"))}
    jobs = {}
    for d in dict.fromkeys(where.values()):                  # csrc/core/'s own objects, then the copy's
        group = [f for f in where if where[f] == d]
        jobs.update(zip(group, c_objects.submit_all([d / f.name for f in group], csrc_flags(d))))
    program = c_objects.submit(PROGRAM, csrc_flags(CSRC if shared else csrc,
                                                   *(COUNT if count else [])))
    return [jobs[f] for f in where] + [program]


def build_and_run(c_objects, csrc, tmp):
    """Compile test_schemes.c with csrc/core/sym_*.c, link and run; returns (parsed output, compiler
    messages, whether allocations are counted)."""
    exe = tmp / "test_schemes"
    done = [f.result() for f in compilations(c_objects, csrc, count=True)]
    res = c_objects.link([c.checked() for c in done], exe, WRAP)
    counting = res.returncode == 0
    if not counting:   # a linker without --wrap (not GNU ld / lld): no allocation counts
        done = [f.result() for f in compilations(c_objects, csrc, count=False)]
        res = c_objects.link([c.checked() for c in done], exe)
        assert res.returncode == 0, res.stderr
    out = subprocess.run([str(exe)], capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines and lines[-1] == "done", out.stdout[-2000:]
    assert not [ln for ln in lines if ln.startswith("error")], out.stdout
    parsed = {}
    for ln in lines:
        word, *rest = ln.split()
        parsed.setdefault(word, []).append(rest)
    return parsed, "".join(c.messages for c in done) + res.stderr, counting


class Programs:
    """The module's two programs, test_schemes.c built on csrc/core/ ("core") and on a copy of it
    with new rows ("new_rows"), each built and run once, side by side (a run is one thread: on
    two cores the two runs take the time of the longer)."""

    def __init__(self, c_objects, tmp_path_factory, pool):
        self.jobs = {"core": lambda: build_and_run(c_objects, CSRC,
                                                   tmp_path_factory.mktemp("c_core")),
                     "new_rows": lambda: build_new_rows(c_objects,
                                                        tmp_path_factory.mktemp("new_rows"))}
        self.pool, self.futures, self.lock = pool, {}, threading.Lock()

    def start(self, name):
        with self.lock:
            if name not in self.futures:
                self.futures[name] = self.pool.submit(self.jobs[name])
            return self.futures[name]

    def result(self, name):
        return self.start(name).result()


@pytest.fixture(scope="module")
def programs(request, c_objects, tmp_path_factory):
    compiler()
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        runs = Programs(c_objects, tmp_path_factory, pool)
        # start the runs this session's selection needs, both at once
        selected = {item.originalname for item in request.session.items
                    if getattr(item, "module", None) is request.module}
        if selected - {"test_new_rows_are_picked_up"}:
            runs.start("core")
        if "test_new_rows_are_picked_up" in selected:
            runs.start("new_rows")
        yield runs


@pytest.fixture(scope="module")
def core(programs):
    return programs.result("core")


def methods(parsed):
    return {m[0]: dict(order=int(m[1]), symplectic=int(m[2]), s=int(m[3]), n_mid=int(m[4]),
                       unknowns=int(m[5])) for m in parsed["method"]}


def orders(parsed):
    return {(kind, m, system): (int(reg), float(fit), int(pts))
            for kind, m, system, reg, fit, pts in parsed["order"]}


def test_core_compiles_without_warnings(core):
    _, messages, _ = core
    assert "warning" not in messages, messages


def test_registries_match_the_binding(core):
    sp = pytest.importorskip("symplectic")
    parsed, _, _ = core
    assert list(methods(parsed)) == [m[0] for m in sp._core.methods()]
    assert [b[0] for b in parsed["builtin"]] == list(sp.systems.available())
    for name, m in methods(parsed).items():
        implicit = m["unknowns"] > 0   # Newton on (s - 1) n unknowns; rk4: none
        assert m["n_mid"] == (m["s"] - 2 if implicit else 0), name
        assert m["unknowns"] == (m["s"] - 1 if implicit else 0), name


def test_every_method_on_every_problem(core):
    parsed, _, _ = core
    got = orders(parsed)
    refused = {(m, system): int(st) for m, system, st in parsed.get("refused", [])}
    constrained = {b[0] for b in parsed["builtin"] if int(b[2]) > 0}
    builtins = [b[0] for b in parsed["builtin"]]
    for name in methods(parsed):
        for kind in KINDS_EXACT:
            assert (kind, name, "pendulum" if kind != "linear" else "linear") in got
        for system in builtins:
            # a method without constraint support refuses a constrained system
            # (SYM_ENOTCONSTRAINED = -13); every other pair has its order
            assert ("self", name, system) in got or refused.get((name, system)) == -13
    assert all(system in constrained and not methods(parsed)[m]["symplectic"]
               for m, system in refused), refused


def test_fitted_orders_equal_the_registered_orders(core):
    """Every fit of the program (three points or more) within ``tolerance`` of the registered
    order -- up to order 8.  Above (lobatto6, lobatto7) the program's steps are in the
    pre-asymptotic range, where the error of an order-p method falls faster than h^p (the
    solution's harmonics; tests/validation/test_high_order.py's docstring, which fits their
    orders asymptotically): their fits against exact solutions must be at least p - 0.3
    (measured: lobatto6 9.73 .. 10.43, lobatto7 12.20 .. 13.83).  Their self-convergence
    fits (against the same method at h/2; four steps sqrt 2 apart between errors of 1e-5
    and the rounding floor: pre-asymptotic for these orders) are not judged here (9.3 ..
    13.8 on the built-ins; on the constrained Cartesian pendulum
    against its exact angle, Python, local orders lobatto6 9.6 .. 9.95, lobatto7 10.5 ..
    13.1 from 12 to 24 steps a period)."""
    parsed, _, _ = core
    got = orders(parsed)
    bad = {key: v for key, v in got.items() if v[0] <= 8
           and not (v[2] >= 3 and math.isfinite(v[1]) and abs(v[1] - v[0]) <= tolerance(v[0]))}
    assert not bad, bad
    high = {key: v for key, v in got.items() if v[0] > 8 and key[0] != "self"}
    assert {m for _, m, _ in high} == {"lobatto6", "lobatto7"}
    assert {kind for kind, _, _ in high} == {"energy", "linear", "pendulum"}
    low = {key: v for key, v in high.items()
           if not (v[2] >= 3 and math.isfinite(v[1]) and v[1] >= v[0] - 0.3)}
    assert not low, low


def test_energy_function_is_the_written_out_energy(core):
    parsed, _, _ = core
    (system, diff), = parsed["energy_fn"]
    assert float(diff) <= 1e-15


def test_no_allocation_inside_a_step(core):
    parsed, _, counting = core
    if not counting:
        pytest.skip("the linker cannot wrap malloc (no --wrap): allocations not counted")
    ms = methods(parsed)
    seen = {}
    for name, n, newton, work, steps, nsteps, iters in parsed["alloc"]:
        n, work, steps, nsteps, iters = map(int, (n, work, steps, nsteps, iters))
        assert steps == 0, (name, n, newton, steps)          # nothing allocated by sym_step
        assert work == 1, (name, n, newton, work)            # one block per workspace
        assert nsteps >= 2 and (iters >= nsteps if ms[name]["unknowns"] else iters == 0)
        seen.setdefault(name, set()).add((n, newton))
    for name, m in ms.items():
        sizes = {n for n, _ in seen[name]}
        assert {(n, nw) for n in sizes
                for nw in ("full", "chord", "step", "decoupled", "auto")} == seen[name]
        assert min(sizes) == 1 and max(sizes) >= 300
        if m["unknowns"]:   # the blocked LU with Newton systems beyond 512 unknowns
            assert m["unknowns"] * max(sizes) > 512


# A 6-node Lobatto row (order 10) and a second pendulum row, written into a copy of the
# sources as the recipes say (one row each): the registry-driven test must pick both up.
def lobatto6_row():
    r7 = math.sqrt(7.0)
    x = [-1.0, -math.sqrt(1 / 3 + 2 * r7 / 21), -math.sqrt(1 / 3 - 2 * r7 / 21)]
    x += [-v for v in reversed(x)]
    w = [1 / 15, (14 - r7) / 30, (14 + r7) / 30]
    w += list(reversed(w))
    c = ", ".join(repr((1 + v) / 2) for v in x)
    b = ", ".join(repr(v / 2) for v in w)
    return ('    {"lobatto6", "6-node Lobatto (test row)", 10, 1, 4,\n'
            f'     &(const sym_galerkin_table){{6, 6, {{{c}}}, {{{c}}}, {{{b}}}}}, 0,\n'
            '     &sym_galerkin_ops, 0.0},\n')


BUILTIN_ROW = ('    {"pendulum_again", "the pendulum once more (test row)", "m, omega", sym_sys_pendulum,\n'
               '     EXAMPLE(1, pendulum_ex, pendulum_q0, pendulum_p0)},\n')


def build_new_rows(c_objects, tmp):
    """build_and_run on a copy of the sources with lobatto6_row() and BUILTIN_ROW written in."""
    src = tmp / "core"
    src.mkdir()
    for f in list(CSRC.glob("sym_*.[ch]")) + [CSRC / "symplectic.h"]:
        shutil.copy(f, src)
    for name, marker, row in (("sym_methods.c", "static const sym_method registry[] = {\n",
                               lobatto6_row()),
                              ("sym_systems.c", "static const sym_builtin builtins[] = {\n",
                               BUILTIN_ROW)):
        text = (src / name).read_text()
        assert text.count(marker) == 1, (name, marker)
        (src / name).write_text(text.replace(marker, marker + row))
    return build_and_run(c_objects, src, tmp)


def test_new_rows_are_picked_up(programs):
    parsed, messages, counting = programs.result("new_rows")
    assert "warning" not in messages, messages
    assert methods(parsed)["lobatto6"] == dict(order=10, symplectic=1, s=6, n_mid=4, unknowns=5)
    assert "pendulum_again" in [b[0] for b in parsed["builtin"]]
    got = orders(parsed)
    for kind in KINDS_EXACT:
        reg, fit, pts = got[(kind, "lobatto6", "pendulum" if kind != "linear" else "linear")]
        assert pts >= 3 and abs(fit - 10) <= tolerance(10), (kind, fit)
    for system in [b[0] for b in parsed["builtin"]]:
        assert math.isfinite(got[("self", "lobatto6", system)][1])
        reg, fit, pts = got[("self", "simpson", system)]
        if system == "pendulum_again":
            assert pts >= 3 and abs(fit - 4) <= tolerance(4)
    if counting:
        rows = [a for a in parsed["alloc"] if a[0] == "lobatto6"]
        assert rows and all(int(a[4]) == 0 and int(a[3]) == 1 for a in rows)
