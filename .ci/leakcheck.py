"""Leak check of the C extension under LeakSanitizer (run by .ci/sanitize).

    python .ci/leakcheck.py --python VENV_PY --src SANITIZED_TREE --work DIR --preload LIBS

The driver (this process, without the sanitizer) starts two children with the ASan
runtime preloaded, ASAN_OPTIONS detect_leaks=1 and PYTHONMALLOC=malloc (every Python
object its own malloc, so LSan sees objects, not pymalloc arenas):

  * the canary: integrates once and leaks one reference to an output array that our
    extension allocated (ctypes Py_IncRef -- a stand-in for a missing Py_DECREF).  The
    check is trusted only if that leak is reported with a stack through csrc/ that names
    py_run_integrate (the binding's run of an integration: sp.integrate reaches it through
    Work.integrate, _core.integrate through mod_integrate).
  * the real run: a loop over many calls of the public API on success and error paths
    (scenarios below), each scenario repeated ROUNDS times.

LSan reports at exit.  CPython and NumPy keep interpreter-lifetime allocations (interned
strings, type caches, module state) that LSan reports as leaks too, so the report is
post-filtered: a leak counts only if its allocation stack reaches a frame in our extension (a
source file under csrc/core/ or csrc/binding/, or the symplectic/_core*.so) before any Python eval-loop frame,
i.e. our C code made the allocation, directly or through NumPy/CPython API calls.
Everything else is interpreter noise and only counted.  Stacks need the slow unwinder
(fast_unwind_on_malloc=0): CPython and NumPy are built without frame pointers, so the
fast one stops a frame or two above malloc and would never reach our code.  (A suppressions file cannot express "report only
these": LSan suppressions drop a leak when any frame matches, which is the opposite.)

Leaked references to GC-tracked objects (tuples, lists, dicts, exceptions) stay linked
into the collector's lists, so LSan sees them as reachable.  For those the child also
compares len(gc.get_objects()) between round 2 and the last round of each scenario (after
a gc.collect()): a per-call leak grows it by at least ROUNDS - 2.

Exit status 0: canary caught, no leak through our code, no growth; 1 otherwise.
"""
import argparse
import os
import re
import subprocess
import sys
import textwrap

ROUNDS = 4
OURS = re.compile(r"(\bcsrc/(?:core|binding)/\w+\.[ch]:|/symplectic/_core[^ /()]*\.so)")
PYEVAL = re.compile(r"\b_PyEval_EvalFrameDefault\b")


def is_ours(block):
    """Was this allocation made by our extension?  Walk the allocation stack from the
    allocation site outwards: a frame in csrc/ (or in the _core .so) before the first
    Python eval-loop frame means our C code allocated it.  An eval-loop frame first
    means Python code allocated it -- possibly a user callback called from our C code,
    whose objects (caches, interned names) are the interpreter's business."""
    for line in block.splitlines():
        if not re.match(r"\s*#\d+ ", line):
            continue
        if OURS.search(line):
            return True
        if PYEVAL.search(line):
            return False
    return False


# --------------------------------------------------------------------------------------
# the child: scenarios
# --------------------------------------------------------------------------------------
def scenarios():
    import _thread
    import gc  # noqa: F401
    import signal
    import threading
    import time

    import numpy as np

    import symplectic as sp
    from symplectic import _core, linear

    Q0, P0 = np.array([0.5, 0.2]), np.array([0.1, -0.3])
    dp = sp.systems.double_pendulum()
    builtins = [sp.systems.pendulum(), dp, sp.systems.lagrange_top(),
                sp.systems.pendulum_chain(4), sp.systems.linear(np.eye(2) * 2, np.eye(2))]
    methods = list(sp.methods())

    def expect(exc, f, *a, **k):
        try:
            f(*a, **k)
        except exc as e:
            return e
        raise AssertionError(f"{f} did not raise {exc}")

    # --- Python-callable double pendulum (the paper's model)
    k = 0.25

    def mass(q):
        c = np.cos(q[0] - q[1])
        return np.array([[2 * k * k, k * k * c], [k * k * c, k * k]])

    def mass_grad(q):
        s = np.sin(q[0] - q[1])
        T = np.zeros((2, 2, 2))
        T[0, 0, 1] = T[0, 1, 0] = -k * k * s
        T[1, 0, 1] = T[1, 1, 0] = k * k * s
        return T

    def potential(q):
        return -2 * 9.81 * k * np.cos(q[0]) - 9.81 * k * np.cos(q[1])

    def potential_grad(q):
        return np.array([2 * 9.81 * k * np.sin(q[0]), 9.81 * k * np.sin(q[1])])

    def py_system(**over):
        m = over.pop("mass", mass)
        kw = dict(mass_grad=mass_grad, potential_grad=potential_grad)
        kw.update(over)
        return sp.System(2, m, potential, **kw)

    def combined(q, M, dM, dV, d2M, d2V):
        M[...] = mass(q)
        dM[...] = mass_grad(q)
        c = k * k * np.cos(q[0] - q[1])          # the Hessians (checked on first use)
        d2M[0, 0, 0, 1] = d2M[0, 0, 1, 0] = d2M[1, 1, 0, 1] = d2M[1, 1, 1, 0] = -c
        d2M[0, 1, 0, 1] = d2M[0, 1, 1, 0] = d2M[1, 0, 0, 1] = d2M[1, 0, 1, 0] = c
        dV[...] = potential_grad(q)
        d2V[0, 0], d2V[1, 1] = 2 * 9.81 * k * np.cos(q[0]), 9.81 * k * np.cos(q[1])
        return potential(q)

    def vectorized(Q):
        return dict(mass=np.array([mass(q) for q in Q]),
                    mass_grad=np.array([mass_grad(q) for q in Q]),
                    potential=np.array([potential(q) for q in Q]),
                    potential_grad=np.array([potential_grad(q) for q in Q]))

    def s_builtins():
        for s in builtins:
            n = s.n
            q0, p0 = np.linspace(0.5, 0.7, n), np.linspace(-1e-3, 1e-3, n)
            if s.builtin == "lagrange_top":    # spinning (TOP Table 3): a top at rest falls
                q0 = np.array([0.0, np.pi / 3, 0.0])    # through theta = pi and is refused
                p0 = s.momentum(q0, np.array([9.2, 0.0, 252.0]))
            for m in methods:
                t = sp.integrate(s, q0, p0, 0.01, 5, m)
                t.energy
                sp.step(s, q0, p0, 0.01, m)
                _core.step_tangent(s, q0, p0, 0.01, m)
            s.energy(q0, p0)
            s.energy(np.tile(q0, (3, 1)), np.tile(p0, (3, 1)))
            s.energy(np.full(n, 1.0), np.full(n, 1e200))              # overflow: inf
            s._eval(q0, p0, 63)
            _core.newton_system(s, q0, p0, 0.01, np.zeros(2 * n), "simpson")
        sp.integrate(builtins[-1], [0.1, 0.2], [0.0, 0.1], 0.1, 20, closed_form=True)

    def s_builtin_errors():
        expect(ValueError, sp.integrate, dp, [1.0], P0, 0.01, 5)
        expect(ValueError, sp.integrate, dp, Q0, P0, 0.01, 5, method="euler")
        expect(ValueError, sp.integrate, dp, Q0, P0, 0.0, 5)
        expect(ValueError, sp.integrate, dp, Q0, P0, 0.01, -1)
        expect((ValueError, sp.ConvergenceError), sp.integrate, dp, [np.nan, 0], P0, 0.01, 5)
        expect(ValueError, sp.systems.linear, [[1.0, 2.0], [0.0, 1.0]], np.eye(2))
        expect(ValueError, sp.System, 46341, mass, potential)
        e = expect(sp.ConvergenceError, sp.integrate, dp, Q0, [50.0, -80.0], 5.0, 3, max_iter=2)
        assert e.trajectory is not None
        expect(MemoryError, sp.step, sp.System(23171, lambda q: None, lambda q: 0.0,
                                               potential_grad=lambda q: q,
                                               mass_dir=lambda q, g: None),
               np.zeros(23171), np.zeros(23171), 0.1, check=False)   # dummy callbacks
        expect(TypeError, _core.integrate, object(), Q0, P0, 0.1, 2)
        _core.methods()
        _core.builtins()

    def s_python_systems():
        for s in (py_system(), py_system(mass_grad=None), py_system(potential_grad=None),
                  sp.System(2, np.diag([2.0, 1.0]), potential, potential_grad=potential_grad),
                  sp.System.combined(2, combined), sp.System.vectorized(2, vectorized)):
            for m in ("simpson", "midpoint", "rk4", "lobatto4"):
                sp.integrate(s, Q0, P0, 0.01, 3, m)
            sp.step(s, Q0, P0, 0.01)
            _core.step_tangent(s, Q0, P0, 0.01)
            s.energy(Q0, P0)

    def s_python_errors():
        calls = [0]

        def raises_after(q):
            calls[0] += 1
            if calls[0] > 40:
                raise ZeroDivisionError("boom")
            return potential_grad(q)

        calls[0] = 0
        e = expect(ZeroDivisionError, sp.integrate, py_system(potential_grad=raises_after),
                   Q0, P0, 0.01, 50)
        assert getattr(e, "trajectory", None) is not None
        bad = [lambda q: np.zeros(3), lambda q: np.full(2, np.nan), lambda q: None,
               lambda q: "abc", lambda q: np.array([1j, 0]), lambda q: [1.0, None],
               lambda q: np.array([object(), 1.0])]
        for f in bad:
            expect((ValueError, TypeError), sp.integrate, py_system(potential_grad=f),
                   Q0, P0, 0.01, 3)
        for f in (lambda q: np.eye(3), lambda q: np.array([[1.0, 2.0], [0.0, 1.0]]),
                  lambda q: None, lambda q: np.full((2, 2), np.inf)):
            expect((ValueError, TypeError), sp.integrate, py_system(mass=f), Q0, P0, 0.01, 3)
        expect((ValueError, TypeError), sp.integrate, py_system(mass_grad=lambda q: np.zeros(2)),
               Q0, P0, 0.01, 3)
        # mass losing positive definiteness mid-run: ConvergenceError with a partial trajectory
        s = sp.System(1, lambda q: np.array([[1.0 - q[0]]]), lambda q: 0.0,
                      mass_grad=lambda q: np.array([[[-1.0]]]), potential_grad=lambda q: np.zeros(1))
        e = expect(sp.ConvergenceError, sp.integrate, s, [0.0], [1.0], 0.05, 100)
        assert e.trajectory is not None
        # a failed __init__ followed by a good one (the re-init path)
        # (fresh callables each round: a reference kept to them is then a growing
        # number of live objects)
        obj = _core.System.__new__(_core.System)
        expect(TypeError, _core.System.__init__, obj, 2, lambda q: mass(q),
               lambda q: potential(q), potential_grad=lambda q: potential_grad(q))
        _core.System.__init__(obj, 2, lambda q: mass(q), potential, mass_grad=mass_grad,
                              potential_grad=potential_grad)
        expect(TypeError, _core.System.__init__, obj, 2, lambda q: mass(q), potential)
        obj = _core.System.__new__(_core.System)
        expect(TypeError, _core.System.__init__, obj, 2, combined=3)
        _core.System.__init__(obj, 1, builtin="pendulum", params=[1.0, 2.0])

    def s_combined_vectorized_errors():
        def comb_bad(kind):
            def f(q, M, dM, dV, d2M, d2V):
                combined(q, M, dM, dV, d2M, d2V)
                if kind == "raise":
                    raise KeyError("inside")
                if kind == "nan":
                    dV[0] = np.nan
                if kind == "resize":
                    dM.resize((1,), refcheck=False)
                if kind == "reshape":
                    M.shape = (4,)
                if kind == "dtype":
                    d2V.dtype = np.float32
                return {"none": None, "str": "x", "array": np.zeros(2)}.get(kind, potential(q))
            return sp.System.combined(2, f)
        for kind in ("raise", "nan", "resize", "reshape", "dtype", "none", "str", "array"):
            expect((ValueError, TypeError, KeyError), sp.integrate, comb_bad(kind), Q0, P0, 0.01, 3)

        depth = [0]

        def nested(q, M, dM, dV, d2M, d2V):                   # re-enters the same system
            if depth[0] == 0:
                depth[0] += 1
                try:
                    sp.step(outer, Q0, P0, 0.01)
                finally:
                    depth[0] -= 1
            return combined(q, M, dM, dV, d2M, d2V)
        outer = sp.System.combined(2, nested)
        sp.step(outer, Q0, P0, 0.01)

        def vec_bad(kind):
            def f(Q):
                d = vectorized(Q)
                if kind == "missing":
                    del d["mass"]
                elif kind == "none":
                    d["potential_grad"] = None
                elif kind == "shape":
                    d["mass"] = np.zeros((len(Q), 3, 3))
                elif kind == "str":
                    d["potential_grad"] = "abc"
                elif kind == "raise":
                    raise RuntimeError("vec")
                elif kind == "notdict":
                    return [1, 2]
                return d
            return sp.System.vectorized(2, f)
        for kind in ("missing", "none", "shape", "str", "raise", "notdict"):
            expect((ValueError, TypeError, KeyError, RuntimeError), sp.integrate, vec_bad(kind),
                   Q0, P0, 0.01, 3)

    def s_ensembles():
        q0 = np.array([[0.5, 0.2], [0.3, 0.1], [1.0, -0.5]])
        p0 = np.zeros((3, 2))
        sp.integrate_many(dp, q0, p0, 0.01, 20, threads=2)
        sp.integrate_many(dp, q0, p0, 0.01, 20, threads=2, store="final")
        sp.integrate_many([sp.systems.double_pendulum(m2=m) for m in (0.5, 1, 2)], q0, p0,
                          0.01, 10, threads=2, store=5)
        sp.integrate_many(py_system(), q0, p0, 0.01, 5)
        bad = np.array([[0.5, 0.2], [0.3, 0.1], [0.0, 0.0]])
        badp = np.array([[0.0, 0.0], [0.0, 0.0], [50.0, -80.0]])
        ens = sp.integrate_many(dp, bad, badp, 5.0, 3, threads=2, errors="mark", max_iter=2)
        assert ens.failed.any()
        expect(sp.ConvergenceError, sp.integrate_many, dp, bad, badp, 5.0, 3, threads=2,
               max_iter=2)

    def s_interrupt():
        # KeyboardInterrupt on the C path (GIL released, signal checked between steps)
        # One interrupt 0.2 s into a run of about a second (more under ASan); retried when it
        # landed in the Python before the run (no trajectory: a loaded machine).  The interrupt
        # of an attempt, if still pending when it ends, lands in its drain, not later.
        # Python's own SIGINT handler is installed for the scenario: a process started in the
        # background (`cmd &` in a script, as .ci/run's lanes are) starts with SIGINT ignored,
        # Python then installs no handler, and interrupt_main does nothing (tests/conftest.py
        # does the same for the suite).
        chain = sp.systems.pendulum_chain(12)
        sigint = signal.signal(signal.SIGINT, signal.default_int_handler)

        def interrupted_run(timer):
            timer.start()
            try:
                sp.integrate(chain, np.full(12, 0.3), np.zeros(12), 0.001, 10**5)
            except KeyboardInterrupt as e:
                return getattr(e, "trajectory", None) is not None
            return False

        caught = False
        for attempt in range(5):
            timer = threading.Timer(0.2, _thread.interrupt_main)
            try:
                caught = interrupted_run(timer)
            except KeyboardInterrupt:
                caught = False
            for _ in range(3):
                try:
                    timer.cancel()
                    timer.join()
                    for _ in range(20):
                        time.sleep(0.001)
                    break
                except KeyboardInterrupt:
                    pass
            if caught:
                break
        signal.signal(signal.SIGINT, sigint)
        assert caught, "no interrupt landed in the C loop in 5 attempts"

        # ... and from a Python callback
        def kb(q):
            raise KeyboardInterrupt
        expect(KeyboardInterrupt, sp.integrate, py_system(potential_grad=kb), Q0, P0, 0.01, 3)

    def s_sympy():
        try:
            import sympy as sy
        except ImportError:
            return
        th, thd = sy.symbols("theta thetadot")
        L = sy.Rational(1, 2) * thd ** 2 + sy.cos(th)
        s = sp.System.from_sympy(L, [th], [thd], compile="auto")
        sp.integrate(s, [0.3], [0.0], 0.01, 20)
        s.energy(np.array([0.3]), np.array([0.1]))
        sp.integrate_many(s, np.array([[0.1], [0.2]]), np.zeros((2, 1)), 0.01, 10, threads=2)

    def s_constraints():
        # holonomic constraints: built-ins on every variational method, the
        # Python and SymPy forms, multipliers, and the error paths
        cp = sp.systems.pendulum_cartesian(l=1.0)
        q, p = np.array([np.sin(1.0), -np.cos(1.0)]), np.zeros(2)
        for name, d in sp.methods(details=True).items():
            if d.get("constrained"):
                sp.integrate(cp, q, p, 0.01, 5, method=name)
                sp.step(cp, q, p, 0.01, method=name)
        fb = sp.systems.four_bar()
        q3 = fb.project([0.4, 0.6, 1.6])
        sp.integrate(fb, q3, np.zeros(3), 0.01, 5, method="lobatto4")
        expect(ValueError, sp.integrate, cp, q, p, 0.01, 3, method="rk4")
        expect(ValueError, sp.integrate, cp, [1.1, 0.0], p, 0.01, 3)
        cons = dict(constraint=lambda x: np.array([0.5 * (x @ x - 1.0)]),
                    constraint_jac=lambda x: x[None, :].copy())

        def csys(**over):
            c = dict(cons)
            c.update(over)
            return sp.System(2, np.eye(2), lambda x: 9.81 * x[1],
                             potential_grad=lambda x: np.array([0.0, 9.81]), **c)
        sp.integrate(csys(), q, p, 0.01, 5, method="simpson")
        # with the time-span words: thinned multipliers, events, t_eval
        sp.integrate(cp, q, p, 0.01, 23, method="lobatto4", store_every=5)
        sp.integrate(cp, q, p, 0.01, 30, events=lambda t, x, v: x[0])
        sp.integrate(cp, q, p, 0.01, t_span=(0, 0.2), t_eval=[0.05, 0.15])
        calls = [0]

        def later(x):
            calls[0] += 1
            if calls[0] > 30:
                raise RuntimeError("boom")
            return np.array([0.5 * (x @ x - 1.0)])
        e = expect(RuntimeError, sp.integrate, csys(constraint=later), q, p, 0.01, 50)
        assert e.trajectory is not None
        expect(ValueError, sp.integrate, csys(constraint_jac=lambda x: np.zeros((1, 3))),
               q, p, 0.01, 3)
        expect(ValueError, sp.integrate, csys(constraint=lambda x: np.array([np.nan])),
               q, p, 0.01, 3)
        try:
            import sympy as sy
        except ImportError:
            return
        x, y, xd, yd = sy.symbols("x y xd yd")
        s = sp.System.from_sympy((xd ** 2 + yd ** 2) / 2 - 9.81 * y, [x, y], [xd, yd],
                                 constraints=[(x ** 2 + y ** 2 - 1) / 2], compile="auto")
        sp.integrate(s, q, p, 0.01, 5, method="lobatto4")

    def s_forces():
        # force= (issue 16): every form, success and error paths
        from symplectic import forces
        fd = lambda t, q, v: -0.3 * v + np.array([np.cos(t), 0.0])   # noqa: E731
        jac = lambda t, q, v: (np.zeros((2, 2)), -0.3 * np.eye(2))   # noqa: E731
        for m in methods:
            sp.integrate(dp, Q0, P0, 0.01, 5, m, force=fd)
            sp.integrate(dp, Q0, P0, 0.01, 5, m, force=fd, force_jac=jac)
            sp.integrate(dp, Q0, P0, 0.01, 5, m, force=np.ones((5, 2)))
            sp.integrate(sp.systems.double_pendulum(damping=(0.2, 0.1)), Q0, P0, 0.01, 5, m)
            sp.step(dp, Q0, P0, 0.01, m, force=fd, t=0.3)
            _core.step_tangent(dp, Q0, P0, 0.01, m,
                               force=forces.from_callable(fd, jac).spec(2), t=0.3)
        top = sp.systems.lagrange_top(damping=1e-4)
        tq0 = np.array([0.0, 1.0, 0.0])
        sp.integrate(top, tq0, top.mass(tq0) @ np.array([9.2, 0.0, 252.0]), 0.002, 5)
        q0 = np.array([[0.5, 0.2], [0.3, 0.1]])
        sp.integrate_many(dp, q0, np.zeros((2, 2)), 0.01, 5, threads=2,
                          force=np.ones((2, 5, 2)))
        sp.integrate_many(dp, q0, np.zeros((2, 2)), 0.01, 5, force=[None, fd])
        nanF = np.zeros((5, 2))
        nanF[3, 0] = np.nan
        expect(ValueError, sp.integrate, dp, Q0, P0, 0.01, 5, force=nanF)
        expect(ValueError, sp.integrate, dp, Q0, P0, 0.01, 5, force=np.zeros((4, 2)))
        expect(TypeError, sp.integrate, dp, Q0, P0, 0.01, 5, force="x")
        for m in ("simpson", "rk4", "midpoint"):
            expect(ValueError, sp.integrate, dp, Q0, P0, 0.01, 5, m,
                   force=lambda t, q, v: np.zeros(3))
            expect(TypeError, sp.integrate, dp, Q0, P0, 0.01, 5, m, force=lambda t, q, v: None)
            expect(ValueError, sp.integrate, dp, Q0, P0, 0.01, 5, m,
                   force=lambda t, q, v: np.array([np.nan if t > 0.02 else 0.0, 0.0]))
            expect(KeyError, sp.integrate, dp, Q0, P0, 0.01, 5, m,
                   force=lambda t, q, v: {}["boom"])
            if m != "rk4":          # (rk4 does not call force_jac)
                expect(ValueError, sp.integrate, dp, Q0, P0, 0.01, 5, m, force=fd,
                       force_jac=lambda t, q, v: (np.zeros((2, 2)), np.zeros((3, 3))))
        expect(ValueError, sp.integrate_many, dp, q0, np.zeros((2, 2)), 0.01, 5,
               force=[fd, lambda t, q, v: np.zeros(3)])
        try:
            import sympy as sy
        except ImportError:
            return
        th, thd, t = sy.symbols("theta thetadot t")
        L = sy.Rational(1, 2) * thd ** 2 + sy.cos(th)
        s = sp.System.from_sympy(L, [th], [thd], dissipation=thd ** 2 / 10,
                                 forces=[sy.cos(t)], time=t)
        sp.integrate(s, [0.3], [0.0], 0.01, 20)

        # forces with the per-step hook (events), a time span, output times and thinning
        pend = sp.systems.pendulum(damping=0.1)
        g = lambda t, q, p: q[0]                                     # noqa: E731
        g.terminal = 2
        sp.integrate(pend, [2.0], [0.0], 0.05, 40, events=g, force=lambda t, q, v: 0.1 * v)
        sp.integrate_many(pend, [[1.0], [2.0]], [[0.0], [0.0]], 0.05, t_span=(0, 1), events=g,
                          store_every=3, force=np.ones((20, 1)), threads=2)
        sp.integrate(pend, [2.0], [0.0], 0.05, 30, t_eval=[0.5, 1.02])
        for m in ("simpson", "midpoint", "lobatto4", "rk4"):
            sp.integrate(pend, [2.0], [0.0], 0.05, 30, m, store_every=4,
                         force=lambda t, q, v: 0.1 * v)
            sp.integrate(pend, [2.0], [0.0], 0.05, method=m, t_span=(0, 1), t_eval=[0.33, 0.9],
                         force=np.ones((20, 1)))
        expect(ValueError, sp.integrate, pend, [2.0], [0.0], 0.05, 30, store_every=4,
               force=np.ones((7, 1)))

    def s_timespans():
        # the per-step hook (events, t_eval), the thinned C loop, the progress report
        import io
        import contextlib
        from symplectic._run import _progress
        pend = sp.systems.pendulum()

        def g(t, q, p):
            return q[0]
        g.direction = -1
        stop = lambda t, q, p: q[0]                                   # noqa: E731
        stop.terminal = True
        py = py_system()
        with contextlib.redirect_stderr(io.StringIO()):
            for s, q0, p0 in ((pend, [2.0], [0.0]), (dp, Q0, P0), (py, Q0, P0)):
                for m in ("simpson", "midpoint", "lobatto4", "rk4"):
                    sp.integrate(s, q0, p0, 0.05, 30, m, events=[g, stop])
                    sp.integrate(s, q0, p0, 0.05, t_span=(0, 1), t_eval=[0.1, 0.33, 0.9], method=m)
                    sp.integrate(s, q0, p0, 0.05, 31, m, store_every=4, progress=True)
            sp.integrate_many(pend, [[1.0], [2.0]], [[0.0], [0.0]], 0.05, 30, events=g,
                              store_every=3, threads=2, progress=True)
            sp.integrate_many(pend, [[1.0], [2.0]], [[0.0], [0.0]], 0.05, t_span=(0, 1),
                              t_eval=[0.5], threads=2)
            expect(ValueError, sp.integrate, pend, [2.0], [0.0], 0.05, 30,
                   events=lambda t, q, p: float("nan"))
            expect(TypeError, sp.integrate, pend, [2.0], [0.0], 0.05, 30,
                   events=lambda t, q, p: [1.0, 2.0])

            def boom(t, q, p):
                if t > 0.5:
                    raise ZeroDivisionError
                return q[0]
            expect(ZeroDivisionError, sp.integrate, pend, [2.0], [0.0], 0.05, 30, events=boom)
            old = _progress.PLAIN_INTERVAL
            _progress.PLAIN_INTERVAL = 0.0
            try:
                sp.integrate(pend, [2.0], [0.0], 0.05, 30, progress=True)
            finally:
                _progress.PLAIN_INTERVAL = old

    def s_integrator():
        # a run kept as an object: its Work (workspace, force, call record) made and freed,
        # pieces, steps, failures, a callback's exception, a cycle through a force closure
        pend = sp.systems.pendulum()
        py = py_system()
        for s, q0, p0 in ((pend, [2.0], [0.0]), (dp, Q0, P0), (py, Q0, P0)):
            for m in ("simpson", "lobatto4", "rk4"):
                it = sp.Integrator(s, 0.05, q0, p0, method=m)
                it.propagate(n_steps=7)
                it.step()
                it.propagate(n_steps=9, store_every=4)
                it.reset(q0, p0)
                it.counts
        held = sp.Integrator(dp, 0.05, Q0, P0, force=np.ones((3, 2)))
        held.propagate(n_steps=3)
        expect(ValueError, held.step)
        damped = sp.Integrator(dp, 0.05, Q0, P0, force=sp.forces.linear_damping(np.eye(2)))
        damped.propagate(n_steps=5)
        damped.step()

        def boom(t, q, v):
            if t > 0.1:
                raise ZeroDivisionError
            return np.zeros(2)
        expect(ZeroDivisionError, sp.Integrator(dp, 0.05, Q0, P0, force=boom).propagate, 10)
        blow = sp.System(1, np.eye(1), lambda q: -q[0] ** 4,
                         potential_grad=lambda q: -4 * q ** 3,
                         potential_hess=lambda q: np.array([[-12 * q[0] ** 2]]))
        expect(sp.ConvergenceError, sp.Integrator(blow, 0.05, [1.0], [0.0]).propagate, 100)
        expect(TypeError, sp.Integrator, dp, 0.05, Q0, P0, method="rk4", rtol=1e-9)
        box = []

        def closure(t, q, v):                  # the force refers back to its Integrator:
            return np.zeros(2) if box else np.ones(2)   # a cycle only the collector frees
        box.append(sp.Integrator(dp, 0.05, Q0, P0, force=closure))
        box[0].propagate(n_steps=2)              # (freed by the collector when this returns)

    def s_closed_form():
        # the linear closed form's workspace (sym_work_new_linear): runs, steps, an overflow,
        # refused matrices and step sizes
        lin = sp.systems.linear_double_pendulum()
        for m in ("simpson", "midpoint"):
            sp.integrate(lin, Q0, P0, 0.05, 20, m, store_every=3)
            sp.step(lin, Q0, P0, 0.05, m)
            it = sp.Integrator(lin, 0.05, Q0, P0, method=m)
            it.propagate(n_steps=5, events=lambda t, q, p: q[0])
        big = sp.systems.linear(np.eye(1), np.eye(1))
        expect(sp.ConvergenceError, sp.integrate, big, [1.0], [0.0], 5.0, 2000)
        D, A = linear.step_matrices(lin.params["M"], lin.params["K"], 0.05, "simpson")
        w = _core.work(lin, Q0, P0, "simpson", linear=(0.05, D, A))
        expect(ValueError, w.step, Q0, P0, 0.1)
        expect(ValueError, _core.work, lin, Q0, P0, "simpson", linear=(0.05, D, None))
        expect(ValueError, _core.work, lin, Q0, P0, "simpson", linear=(0.05, D[:2], A))
        expect(TypeError, _core.work, lin, Q0, P0, "simpson", linear=(0.05, D))

    def s_control():
        # the runs of the control transcription: each step's derivatives with the force
        # points' states (sym_run.deriv.points) and the derivative in h and t, unconstrained
        # and constrained (sym_gcon_time_tangent), and the refusals of wrong arguments --
        # through the core's own entry points (_core.integrate, _core.shoot); then the
        # transcription's own path, its kept workspace (Work.shoot, Work.set_hold), through
        # a problem's constraints and Jacobian at two points, fixed and free duration
        from symplectic import control
        for free in (None, (0.5, 2.0)):
            pb = control.Problem(sp.systems.double_pendulum(damping=(0.2, 0.1)), 1.0, 3,
                                 inputs="all", start={"q": [0.4, -0.2], "qdot": [0.0, 0.0]},
                                 end={"q": [0.5, 0.0]}, free_duration=free,
                                 cost=control.effort() + control.duration() if free
                                 else control.effort())
            z = pb.guess()
            for z_k in (z, z + 0.01):
                pb.constraints(z_k)
                pb.jac_values(z_k)
        cases = ((sp.systems.double_pendulum(damping=(0.2, 0.1)), [0.4, -0.2], [0.3, 0.1]),
                 (sp.systems.pendulum_cartesian(), [0.6, -0.8], [0.24, 0.18]))
        for system, q, p in cases:
            q, p = np.array(q), np.array(p)
            for name in ("simpson", "lobatto4", "gauss2"):
                P = len(sp.methods(details=True)[name]["force_points"])
                force = (sp.forces.at_points(np.full((1, P, 2), 0.1)) + system.force).spec(2)
                cols = (2 + P) * 2
                _core.integrate(system, q, p, 0.05, 1, method=name, force=force,
                                jacobians=np.empty((1, 4, cols)),
                                h_jacobians=np.empty((1, 2, 4)),
                                points=np.empty((1, P, 4, 3 + cols)))
                expect(ValueError, _core.integrate, system, q, p, 0.05, 1, method=name,
                       force=force, jacobians=np.empty((1, 4, cols)),
                       points=np.empty((1, P, 4, cols)))
        expect(ValueError, _core.integrate, cases[0][0], np.array(cases[0][1]),
               np.array(cases[0][2]), 0.05, 1, method="rk4", jacobians=np.empty((1, 4, 4)),
               points=np.empty((1, 4, 4, 5)))
        # shoot (py_shoot.c): the items' runs with every output, a failed item, the
        # refusals, a callback's exception
        for system, q, p in cases:
            B = 4
            Q, Pm = np.tile(q, (B, 1)), np.tile(p, (B, 1))
            force = (sp.forces.at_points(np.full((B, 3, 2), 0.1)) + system.force).spec(2)
            _core.shoot(system, Q, Pm, np.arange(B), np.full(B, 0.05), force=force,
                        jacobians=np.empty((B, 4, 10)), h_jacobians=np.empty((B, 2, 4)),
                        points=np.empty((B, 3, 4, 13)))
            expect(ValueError, _core.shoot, system, Q, Pm, np.arange(B), np.full(B, 0.05),
                   force=force, jacobians=np.empty((B, 4, 10)),
                   points=np.empty((B, 3, 4, 12)))
            expect(ValueError, _core.shoot, system, Q, Pm, np.arange(B), np.zeros(B),
                   force=force, jacobians=np.empty((B, 4, 10)))
        pend = sp.systems.pendulum()
        _core.shoot(pend, np.zeros((3, 1)), np.array([[0.0], [1e3], [0.0]]), np.arange(3),
                    np.array([0.05, 2.0, 0.05]), max_iter=3,
                    force=sp.forces.at_points(np.zeros((3, 3, 1))).spec(1),
                    jacobians=np.empty((3, 2, 5)))
        expect(ValueError, _core.shoot, pend, np.zeros((2, 1)), np.zeros((3, 1)), [0.0, 1.0],
               [0.1, 0.1])
        calls = []

        def dV(q):
            calls.append(1)
            if len(calls) > 20:
                raise RuntimeError("dV gave up")
            return np.array([9.81 * np.sin(q[0])])
        py = sp.System(1, lambda q: np.array([[1.0]]), lambda q: -9.81 * np.cos(q[0]),
                       mass_grad=lambda q: np.zeros((1, 1, 1)), potential_grad=dV,
                       potential_hess=lambda q: np.array([[9.81 * np.cos(q[0])]]),
                       derivative_check=False)
        expect(RuntimeError, _core.shoot, py, np.full((30, 1), 0.3), np.zeros((30, 1)),
               np.arange(30), np.full(30, 0.05),
               force=sp.forces.at_points(np.zeros((30, 3, 1))).spec(1),
               jacobians=np.empty((30, 2, 5)))

    return [s_builtins, s_builtin_errors, s_python_systems, s_python_errors,
            s_combined_vectorized_errors, s_ensembles, s_interrupt, s_sympy, s_forces,
            s_timespans, s_constraints, s_integrator, s_closed_form, s_control]


def child(mode):
    import gc
    import warnings
    warnings.simplefilter("ignore")
    if mode == "canary":
        import ctypes

        import numpy as np

        import symplectic as sp
        t = sp.integrate(sp.systems.double_pendulum(), np.array([0.5, 0.2]), np.zeros(2), 0.01, 3)
        ctypes.pythonapi.Py_IncRef(ctypes.py_object(t.q))     # the "missing Py_DECREF"
        del t
        print("canary: leaked one reference to an array from an integration (py_run_integrate)")
        print("leakcheck-child: scenarios completed")
        return 0
    grew = []
    for f in scenarios():
        counts = []
        for r in range(ROUNDS):
            f()
            gc.collect()
            counts.append(len(gc.get_objects()))
        growth = counts[-1] - counts[1]
        print(f"  {f.__name__:32s} gc objects per round: {counts[1:]}")
        if growth >= ROUNDS - 2:
            grew.append((f.__name__, growth))
    for name, g in grew:
        print(f"leakcheck: GC-tracked objects grow in {name}: +{g} over {ROUNDS - 2} rounds")
    # LSan replaces the exit status (exitcode=23) when it reports anything, so the driver
    # cannot rely on it: this line says the scenarios all ran.
    print("leakcheck-child: scenarios completed" + (" (GC growth)" if grew else ""))
    return 1 if grew else 0


# --------------------------------------------------------------------------------------
# the driver
# --------------------------------------------------------------------------------------
def leak_blocks(text):
    """Split an LSan report into its 'Direct/Indirect leak of ...' blocks."""
    blocks, cur = [], None
    for line in text.splitlines():
        if re.match(r"(Direct|Indirect) leak of", line.strip()):
            cur = [line]
            blocks.append(cur)
        elif cur is not None:
            if line.strip() == "" or line.startswith("SUMMARY"):
                cur = None
            else:
                cur.append(line)
    return ["\n".join(b) for b in blocks]


def run_child(args, mode):
    logdir = os.path.join(args.work, mode)
    os.makedirs(logdir, exist_ok=True)
    env = dict(os.environ)
    env.update(
        LD_PRELOAD=args.preload,
        PYTHONMALLOC="malloc",
        PYTHONPATH=args.src,
        SYMPLECTIC_CACHE=os.path.join(args.work, "cache"),
        ASAN_OPTIONS=":".join([
            "detect_leaks=1", "allocator_may_return_null=1", "malloc_context_size=40",
            "fast_unwind_on_malloc=0",
            f"log_path={logdir}/lsan", "exitcode=23"]),
        LSAN_OPTIONS="report_objects=0:use_unaligned=1",
        UBSAN_OPTIONS=f"print_stacktrace=1:halt_on_error=1:log_path={logdir}/ubsan",
    )
    proc = subprocess.run([args.python, os.path.abspath(__file__), "--child", mode],
                          cwd=args.work, env=env, text=True, capture_output=True)
    sys.stdout.write(proc.stdout)
    reports = ""
    for name in sorted(os.listdir(logdir)):
        with open(os.path.join(logdir, name)) as fh:
            reports += fh.read()
    ours, other = [], 0
    for b in leak_blocks(reports):
        if is_ours(b):
            ours.append(b)
        else:
            other += 1
    non_leak = [ln for ln in reports.splitlines()
                if re.search(r"ERROR: AddressSanitizer|runtime error:", ln)]
    return proc, ours, other, non_leak, reports


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--child")
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument("--src")
    ap.add_argument("--work")
    ap.add_argument("--preload")
    args = ap.parse_args()
    if args.child:
        sys.exit(child(args.child))
    os.makedirs(args.work, exist_ok=True)

    proc, ours, other, non_leak, reports = run_child(args, "canary")
    if proc.returncode not in (0, 23) or "leakcheck-child: scenarios completed" not in proc.stdout \
            or not ours or "py_run_integrate" not in "\n".join(ours):
        sys.stderr.write(proc.stderr[-3000:] + reports[-6000:])
        print("leakcheck: the canary's leak was NOT reported through csrc/: the leak check "
              "is blind (sanitizer not active, or stacks do not reach our frames)")
        return 1
    print(f"leakcheck: canary caught ({len(ours)} leak report(s) through csrc/, "
          f"{other} interpreter-lifetime ones ignored)")

    proc, ours, other, non_leak, reports = run_child(args, "run")
    status = 0
    if proc.returncode not in (0, 23) or \
            "leakcheck-child: scenarios completed\n" not in proc.stdout:
        sys.stderr.write(proc.stderr[-5000:])
        print(f"leakcheck: the scenarios failed (exit {proc.returncode})")
        status = 1
    if non_leak:
        sys.stderr.write(reports[-8000:])
        print("leakcheck: sanitizer errors other than leaks (above)")
        status = 1
    for b in ours:
        print(textwrap.indent(b, "    "))
    if ours:
        print(f"leakcheck: {len(ours)} leak(s) with a stack through our extension (above)")
        status = 1
    if status == 0:
        print(f"leakcheck: clean (no leak through csrc/; {other} interpreter-lifetime "
              f"allocations ignored)")
    return status


if __name__ == "__main__":
    sys.exit(main())
