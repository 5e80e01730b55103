"""Robustness of a run as a whole: Ctrl-C on the C path, thread safety, and no
reference leaks on the success and error paths.  (Bad input, misbehaving
callbacks and failures mid-run: tests/test_inputs_*.py, tests/run/test_failures.py.)"""
import gc
import os
import signal
import sys
import threading
import time

import numpy as np
import pytest

import symplectic as sp
from support.cases import Boom, dp_with
from support.models import dp_callables

DP = sp.systems.double_pendulum()
Q0, P0 = [0.5, 0.2], [0.0, 0.0]


def test_ctrl_c_interrupts_a_long_builtin_run_promptly():
    chain = sp.systems.pendulum_chain(32)
    q0 = np.linspace(0.1, 0.5, 32)
    fired = {}

    def fire():
        fired["t"] = time.perf_counter()
        os.kill(os.getpid(), signal.SIGINT)

    timer = threading.Timer(0.3, fire)
    timer.start()
    with pytest.raises(KeyboardInterrupt):
        sp.integrate(chain, q0, np.zeros(32), 1e-3, 300_000)     # ~10 s uninterrupted
    assert time.perf_counter() - fired["t"] < 0.5


def test_threads_integrating_builtin_systems_match_sequential_runs():
    systems = [sp.systems.double_pendulum(m2=1 + 0.1 * k) for k in range(4)]
    seq = [sp.integrate(s, Q0, P0, 0.01, 20_000).q for s in systems]
    out = [None] * 4

    def work(k):
        out[k] = sp.integrate(systems[k], Q0, P0, 0.01, 20_000).q

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for a, b in zip(seq, out):
        np.testing.assert_array_equal(a, b)


def test_no_reference_leaks_on_success_and_error_paths():
    c = dp_callables()
    q0 = np.array(Q0)
    p0 = np.array(P0)
    fail = {"n": 0}

    def bad_grad(q):
        fail["n"] += 1
        if fail["n"] % 5 == 0:
            raise Boom()
        return c["potential_grad"](q)

    good = sp.System(2, **c)
    bad = dp_with("potential_grad", bad_grad)
    objs = [q0, p0, good, bad, bad_grad, c["mass"], DP]

    def run():
        sp.integrate(good, q0, p0, 0.01, 20)
        sp.integrate(DP, q0, p0, 0.01, 20)
        sp.step(good, q0, p0, 0.01)
        for call in (lambda: sp.integrate(bad, q0, p0, 0.01, 20),
                     lambda: sp.integrate(DP, q0, p0, 0.0, 20),
                     lambda: sp.integrate(DP, q0[:1], p0, 0.01, 20)):
            try:
                call()
            except (Boom, ValueError):
                pass

    run()
    gc.collect()
    before = [sys.getrefcount(o) for o in objs]
    for _ in range(200):
        run()
    gc.collect()
    after = [sys.getrefcount(o) for o in objs]
    assert after == before
