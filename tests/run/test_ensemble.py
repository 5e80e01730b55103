"""Ensembles on all cores, chord Newton, pickling, and a Dask sweep."""
import math
import os
import pickle
import signal
import threading
import time

import numpy as np
import pytest

import symplectic as sp
from support.models import L_DP, dp_callables


def ics(K, seed=0):
    rng = np.random.default_rng(seed)
    return np.column_stack([rng.uniform(-1.2, 1.2, K), rng.uniform(-1.2, 1.2, K)]), np.zeros((K, 2))


@pytest.mark.parametrize("method", ["simpson", "rk4"])
def test_ensemble_equals_sequential_bitwise(method):
    dp = sp.systems.double_pendulum(l1=L_DP, l2=L_DP)
    Q0, P0 = ics(40)
    one = sp.integrate_many(dp, Q0, P0, 0.01, 300, method=method, threads=1)
    two = sp.integrate_many(dp, Q0, P0, 0.01, 300, method=method, threads=2)
    assert one.q.shape == (40, 301, 2)
    assert np.array_equal(one.q, two.q) and np.array_equal(one.p, two.p)
    assert np.array_equal(one.newton_iterations, two.newton_iterations)
    for k in (0, 17, 39):
        tr = sp.integrate(dp, Q0[k], P0[k], 0.01, 300, method=method)
        assert np.array_equal(tr.q, one.q[k]) and np.array_equal(tr.p, one.p[k])
    assert np.array_equal(one.t, tr.t)


def test_ensemble_store_options_and_parameter_sweeps():
    masses = [0.5, 1.0, 2.0]
    systems = [sp.systems.double_pendulum(m2=m, l1=L_DP, l2=L_DP) for m in masses]
    ens = sp.integrate_many(systems, [0.5, 0.3], [0, 0], 0.01, 100, store=30)
    assert ens.t.tolist() == pytest.approx([0.0, 0.3, 0.6, 0.9, 1.0])
    assert ens.q.shape == (3, 5, 2) and ens.newton_iterations is None
    for k, sys in enumerate(systems):
        tr = sp.integrate(sys, [0.5, 0.3], [0, 0], 0.01, 100)
        assert np.array_equal(ens.q[k], tr.q[[0, 30, 60, 90, 100]])
    fin = sp.integrate_many(systems, [0.5, 0.3], [0, 0], 0.01, 100, store="final")
    assert fin.q.shape == (3, 1, 2) and np.array_equal(fin.q[:, 0], ens.q[:, -1])
    with pytest.raises(ValueError, match="2 systems for 3"):
        sp.integrate_many(systems[:2], np.zeros((3, 2)), np.zeros((3, 2)), 0.01, 10)
    with pytest.raises(ValueError, match=r"shape \(K, 2\)"):
        sp.integrate_many(systems[0], np.zeros((3, 3)), np.zeros((3, 2)), 0.01, 10)


def blowup():
    return sp.System(1, np.eye(1), lambda q: -q[0] ** 4, potential_grad=lambda q: -4 * q ** 3,
                     potential_hess=lambda q: np.array([[-12 * q[0] ** 2]]))


def test_ensemble_failures():
    sys = blowup()
    Q0 = np.array([[0.01], [1.0], [0.02]])
    with pytest.raises(sp.ConvergenceError, match="member 1"):
        sp.integrate_many(sys, Q0, np.zeros((3, 1)), 0.05, 100)
    ens = sp.integrate_many(sys, Q0, np.zeros((3, 1)), 0.05, 100, errors="mark")
    assert ens.failed.tolist() == [False, True, False]
    k = ens.errors[1].step
    assert np.all(np.isfinite(ens.q[1, :k + 1])) and np.all(np.isnan(ens.q[1, k + 1:]))
    assert np.all(np.isfinite(ens.q[[0, 2]]))


def test_ensemble_ctrl_c_stops_workers():
    """SIGINT during a threaded ensemble raises KeyboardInterrupt promptly."""
    chain = sp.systems.pendulum_chain(8)
    Q0 = np.tile(np.linspace(0.1, 0.5, 8), (8, 1))
    timer = threading.Timer(0.3, lambda: os.kill(os.getpid(), signal.SIGINT))
    start = time.perf_counter()
    timer.start()
    with pytest.raises(KeyboardInterrupt):
        sp.integrate_many(chain, Q0, np.zeros((8, 8)), 1e-3, 10 ** 6, threads=2, store="final")
    assert time.perf_counter() - start < 2.0


@pytest.mark.parametrize("n", [4, 16])
def test_chord_newton_matches_full(n):
    chain = sp.systems.pendulum_chain(n, l=1.0 / n)
    q0 = 0.3 + 0.01 * np.arange(n)
    full = sp.integrate(chain, q0, np.zeros(n), 1e-3, 400)
    chord = sp.integrate(chain, q0, np.zeros(n), 1e-3, 400, newton="chord")
    assert np.max(np.abs(full.q - chord.q)) <= 1e-12 * np.max(np.abs(full.q))
    assert np.max(np.abs(full.p - chord.p)) <= 1e-12 * np.max(np.abs(full.p))
    # more (cheap) iterations in exchange for far fewer factorisations
    assert chord.newton_iterations.mean() > full.newton_iterations.mean()
    with pytest.raises(ValueError, match="newton"):
        sp.integrate(chain, q0, np.zeros(n), 1e-3, 4, newton="broyden")


def test_chord_newton_recovers_when_the_stale_matrix_stops_contracting():
    """Regression: on a stiff 64-link chain a chord update with a matrix from an earlier
    step once increased the residual and Newton diverged (ConvergenceError at step 341).
    The safeguard restarts the step from the predictor with a fresh factorisation."""
    n = 64
    chain = sp.systems.pendulum_chain(n)
    q0 = 0.5 * np.sin(1.3 * np.arange(n))
    chord = sp.integrate(chain, q0, np.zeros(n), 0.01, 400, newton="chord")
    full = sp.integrate(chain, q0, np.zeros(n), 0.01, 100)
    # same solution of the same discrete equations while the chaotic chain has not yet
    # amplified rounding differences
    assert np.max(np.abs(full.q - chord.q[:101])) <= 1e-11 * np.max(np.abs(full.q))
    assert np.max(np.abs(full.p - chord.p[:101])) <= 1e-11 * np.max(np.abs(full.p))
    e = chord.energy
    assert np.max(np.abs(e - e[0])) <= 1e-3 * abs(e[0])


# ---------------------------------------------------------------- pickling and Dask
def potential(q):                      # module-level: picklable
    return dp_callables()["potential"](q)


def test_pickle_round_trips():
    for sys in (sp.systems.double_pendulum(m2=2.0), sp.systems.linear(np.eye(2), np.diag([1.0, 4.0])),
                sp.systems.pendulum_chain(3, m=[1, 2, 3])):
        clone = pickle.loads(pickle.dumps(sys))
        assert clone.builtin == sys.builtin and clone.n == sys.n
        a = sp.integrate(sys, 0.3 * np.ones(sys.n), np.zeros(sys.n), 0.01, 50)
        b = sp.integrate(clone, 0.3 * np.ones(sys.n), np.zeros(sys.n), 0.01, 50)
        assert np.array_equal(a.q, b.q)
    py = sp.System(1, np.eye(1), np.sum)          # picklable callables (FD gradient rebuilt)
    assert pickle.loads(pickle.dumps(py)).n == 1
    with pytest.raises(Exception):
        pickle.dumps(sp.System(1, np.eye(1), lambda q: 0.0))


def run_member(m2):
    """What a Dask worker runs: build the system there, return the final energy error."""
    dp = sp.systems.double_pendulum(m2=m2, l1=L_DP, l2=L_DP)
    tr = sp.integrate(dp, [math.pi / 4, math.pi / 3], [0, 0], 0.01, 1000)
    return float(np.max(np.abs(tr.energy / tr.energy[0] - 1)))


def test_dask_local_cluster_sweep():
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        masses = [0.5, 1.0, 1.5, 2.0]
        futures = client.map(run_member, masses)
        remote = client.gather(futures)
        # systems themselves travel too (pickled by their parameters)
        sys = sp.systems.double_pendulum(m2=1.5, l1=L_DP, l2=L_DP)
        fut = client.submit(sp.integrate, sys, [0.2, 0.1], [0, 0], 0.01, 100)
        tr = fut.result()
    assert remote == [run_member(m) for m in masses]
    assert np.array_equal(tr.q, sp.integrate(sys, [0.2, 0.1], [0, 0], 0.01, 100).q)
