"""Time spans, output times, thinned output, events, progress, run counts.

Numbers against the exact pendulum (Jacobi elliptic functions,
symplectic.exact, from the FVCA paper's annex) at 3 rad amplitude, where the
motion is strongly nonlinear (period 2.57 s against 1 s for small swings).
"""
import math
import tracemalloc

import numpy as np
import pytest

import symplectic as sp
from support.models import fitted_order
from symplectic._run import _progress

pytest.importorskip("scipy")
from symplectic import exact  # noqa: E402

PEND = sp.systems.pendulum()           # m = 1, omega = 2 pi
Q0 = 3.0
T = exact.pendulum_period(Q0, 0.0)      # 2.5712339... s


def crossing(t, q, p):
    """q = 0, downward: the pendulum passing the vertical going left."""
    return q[0]


crossing.direction = -1


def stop_at_crossing(t, q, p):
    return q[0]


stop_at_crossing.direction = -1
stop_at_crossing.terminal = True


# ---------------------------------------------------------------- events
@pytest.mark.parametrize("method, order, Ns", [("simpson", 4, (40, 80, 160, 320)),
                                               ("midpoint", 2, (160, 320, 640, 1280)),
                                               ("lobatto4", 6, (40, 80, 160))])
def test_event_spacing_is_the_exact_period_to_the_scheme_order(method, order, Ns):
    hs, errs = [], []
    for N in Ns:
        tr = sp.integrate(PEND, [Q0], [0.0], T / N * 1.001, t_span=(0.0, 4 * T),
                          events=crossing, method=method)
        te = tr.t_events[0]
        assert len(te) == 4                    # one downward crossing per period
        # the first crossing of the exact motion: a quarter period from the turning point
        assert abs(te[0] - T / 4) < 50 * (T / N) ** order
        hs.append(tr.h)
        errs.append(np.max(np.abs(np.diff(te) - T)))
        # the event state is on the zero: q = 0 (to the Brent tolerance times |qdot|)
        assert np.all(np.abs(tr.q_events[0][:, 0]) < 1e-10)
        assert np.all(tr.p_events[0][:, 0] < 0)
    assert abs(fitted_order(hs, errs) - order) < 0.15, (hs, errs)


def test_terminal_event_stops_at_the_first_crossing():
    h = T / 200
    tr = sp.integrate(PEND, [Q0], [0.0], h, t_span=(0.0, 3 * T), events=stop_at_crossing)
    (te,), (qe,), (pe,) = tr.t_events[0], tr.q_events[0], tr.p_events[0]
    assert tr.status == 1 and "terminal event 0 (stop_at_crossing)" in tr.message
    assert abs(te - T / 4) < 1e-7                       # Simpson's O(h^4) at h = T/200
    # the trajectory ends at the end of the step that contains the event
    assert tr.t[-2] < te <= tr.t[-1] and tr.t[-1] - tr.t[-2] == pytest.approx(h)
    assert tr.q[-2, 0] > 0 >= tr.q[-1, 0]
    _, p_ex = exact.pendulum(np.array([T / 4]), Q0, 0.0)
    assert abs(pe[0] - p_ex[0]) < 1e-5 and abs(qe[0]) < 1e-12
    # and it is the same state as the full run's dense output at that time
    full = sp.integrate(PEND, [Q0], [0.0], h, t_span=(0.0, 3 * T))
    ds = full.dense_state(te)
    assert np.allclose(ds.q, qe, atol=1e-14) and np.allclose(ds.p, pe, rtol=1e-13)
    assert np.array_equal(full.q[:len(tr.q)], tr.q)     # the steps are the same steps


def test_event_location_is_a_root_of_the_dense_polynomial_to_1e_12():
    full = sp.integrate(PEND, [Q0], [0.0], 0.05, 200)
    tr = sp.integrate(PEND, [Q0], [0.0], 0.05, 200, events=crossing)
    for te in tr.t_events[0]:
        # the dense q changes sign within 1e-12 of the reported time
        qa, qb = full.dense_state(te - 1e-12).q[0], full.dense_state(te + 1e-12).q[0]
        assert qa > 0 > qb, (te, qa, qb)


def test_events_both_directions_counts_and_terminal_count():
    def up_or_down(t, q, p):
        return q[0]

    tr = sp.integrate(PEND, [Q0], [0.0], T / 100, t_span=(0.0, 2 * T), events=up_or_down)
    assert len(tr.t_events[0]) == 4                     # 2 zeros per period
    up_or_down.direction = 1
    tr = sp.integrate(PEND, [Q0], [0.0], T / 100, t_span=(0.0, 2 * T), events=up_or_down)
    assert len(tr.t_events[0]) == 2 and np.all(tr.p_events[0] > 0)
    up_or_down.terminal = 2                               # stop at the second occurrence
    tr = sp.integrate(PEND, [Q0], [0.0], T / 100, t_span=(0.0, 2 * T), events=up_or_down)
    assert len(tr.t_events[0]) == 2 and tr.status == 1 and tr.t[-1] < 2 * T


def test_events_with_thinned_output_and_backward_in_time():
    thin = sp.integrate(PEND, [Q0], [0.0], T / 100, t_span=(0.0, 3 * T), events=crossing,
                        store_every=25)
    full = sp.integrate(PEND, [Q0], [0.0], T / 100, t_span=(0.0, 3 * T), events=crossing)
    assert np.array_equal(thin.t_events[0], full.t_events[0])
    assert np.array_equal(thin.q, full.q[::25]) and len(thin.t) == 13
    back = sp.integrate(PEND, [Q0], [0.0], -T / 100, t_span=(0.0, -3 * T), events=crossing)
    # backward from the turning point: the exact downward crossings (in forward time:
    # q decreasing through 0) lie at -3T/4, -7T/4, ...; seen backward they are upward
    up = lambda t, q, p: q[0]                                       # noqa: E731
    up.direction = 1
    back_up = sp.integrate(PEND, [Q0], [0.0], -T / 100, t_span=(0.0, -3 * T), events=up)
    assert len(back.t_events[0]) == 3 and len(back_up.t_events[0]) == 3
    assert abs(back.t_events[0][0] + T / 4) < 1e-6 and abs(back_up.t_events[0][0] + 3 * T / 4) < 1e-6


def test_event_function_exception_keeps_the_partial_trajectory():
    def bad(t, q, p):
        if t > 0.5:
            raise ZeroDivisionError("from the event")
        return q[0]

    with pytest.raises(ZeroDivisionError, match="from the event") as info:
        sp.integrate(PEND, [Q0], [0.0], 0.01, 100, events=bad)
    tr = info.value.trajectory
    assert tr.status == -1 and 0.5 <= tr.t[-1] <= 0.52
    ref = sp.integrate(PEND, [Q0], [0.0], 0.01, 100)
    assert np.array_equal(tr.q, ref.q[:len(tr.q)])


# ---------------------------------------------------------------- t_eval
@pytest.mark.parametrize("method, q_order, p_order, Ns", [
    ("simpson", 4, 3, (40, 80, 160, 320)),
    ("midpoint", 2, 2, (160, 320, 640, 1280)),
    ("lobatto4", 5, 4, (40, 80, 160, 320)),
    ("lobatto5", 6, 5, (40, 80, 160)),
])
def test_t_eval_states_agree_with_exact_pendulum_to_the_dense_order(method, q_order, p_order,
                                                                    Ns):
    # 4000 times over one period: every step is sampled at many positions, so the
    # maxima are the dense output's over whole steps
    te = np.linspace(0.0, T, 4001)[1:]
    q_ex, p_ex = exact.pendulum(te, Q0, 0.0)
    hs, eq, ep, ev = [], [], [], []
    for N in Ns:
        tr = sp.integrate(PEND, [Q0], [0.0], T / N, t_span=(0.0, T), t_eval=te, method=method)
        assert np.array_equal(tr.t, te) and tr.q.shape == (4000, 1)
        hs.append(tr.h)
        eq.append(np.max(np.abs(tr.q[:, 0] - q_ex)))
        ep.append(np.max(np.abs(tr.p[:, 0] - p_ex)))
        ev.append(np.max(np.abs(tr.qdot[:, 0] - p_ex)))         # m = 1: qdot = p exactly
        assert np.allclose(tr.qdot, tr.p, rtol=1e-14, atol=1e-14)   # p = M(q) qdot, M = 1
    assert abs(fitted_order(hs, eq) - q_order) < 0.2, eq
    assert abs(fitted_order(hs, ep) - p_order) < 0.35, ep
    assert abs(fitted_order(hs, ev) - p_order) < 0.35, ev


def test_t_eval_at_the_nodes_gives_the_node_states():
    full = sp.integrate(PEND, [Q0], [0.0], 0.01, 100)
    tr = sp.integrate(PEND, [Q0], [0.0], 0.01, 100, t_eval=full.t[::10])
    assert np.allclose(tr.q, full.q[::10], rtol=0, atol=1e-14)
    assert np.allclose(tr.p, full.p[::10], rtol=0, atol=1e-13)
    assert tr.store_every is None and tr.newton_iterations is None
    with pytest.raises(ValueError, match="needs every step"):
        tr.dense(0.5)


def test_t_eval_on_a_variable_mass_system_keeps_p_equal_M_qdot():
    dp = sp.systems.double_pendulum()
    q0 = [math.pi / 4, math.pi / 3]
    te = np.linspace(0.0, 1.0, 37)
    tr = sp.integrate(dp, q0, [0.0, 0.0], 0.01, t_span=(0, 1), t_eval=te)
    for q, p, v in zip(tr.q, tr.p, tr.qdot):
        assert np.allclose(dp.mass(q) @ v, p, rtol=1e-13, atol=1e-13)
    full = sp.integrate(dp, q0, [0.0, 0.0], 0.01, t_span=(0, 1))
    ds = full.dense_state(te)
    assert np.allclose(ds.q, tr.q, rtol=0, atol=1e-14) and np.allclose(ds.p, tr.p, atol=1e-12)
    # backward compatible: dense() still returns q only (the Lagrange polynomial)
    assert full.dense(te).shape == (37, 2)


# ---------------------------------------------------------------- t_span
def test_t_span_with_h_that_does_not_divide_ends_exactly_at_the_end():
    for tf, h in ((1.0, 0.03), (10.0, 0.07), (math.pi, 0.01), (2.5, 0.1)):
        tr = sp.integrate(PEND, [Q0], [0.0], h, t_span=(0.0, tf))
        assert tr.t[-1] == tf                               # exactly
        N = tr.counts.steps
        assert tr.h <= h and N == math.ceil(tf / h - 1e-9) and tr.h == tf / N
        assert np.allclose(np.diff(tr.t), tr.h, rtol=1e-12)
        if tr.h != h:
            assert "adjusted from h = " in tr.message
    back = sp.integrate(PEND, [Q0], [0.0], -0.03, t_span=(1.0, 0.0))
    assert back.t[0] == 1.0 and back.t[-1] == 0.0 and back.h < 0
    # n_steps instead of h; both when they agree
    a = sp.integrate(PEND, [Q0], [0.0], t_span=(0.0, 1.0), n_steps=40)
    b = sp.integrate(PEND, [Q0], [0.0], 0.025, 40, t_span=(0.0, 1.0))
    c = sp.integrate(PEND, [Q0], [0.0], 0.025, 40)
    assert a.h == 0.025 and np.array_equal(a.q, c.q) and np.array_equal(b.q, c.q)


# ---------------------------------------------------------------- store_every
@pytest.mark.parametrize("system, q0, method", [
    (PEND, [Q0], "simpson"), (PEND, [Q0], "lobatto4"), (PEND, [Q0], "rk4"),
    (sp.systems.linear(np.eye(2), np.diag([1.0, 4.0])), [1.0, 0.5], "simpson"),   # closed form
    (sp.systems.linear(np.eye(2), np.diag([1.0, 4.0])), [1.0, 0.5], "midpoint"),
])
def test_store_every_rows_are_bitwise_the_full_runs(system, q0, method):
    p0 = np.zeros(len(q0))
    full = sp.integrate(system, q0, p0, 0.01, 1003, method=method)
    for k in (1, 7, 10, 1003, 5000):
        thin = sp.integrate(system, q0, p0, 0.01, 1003, method=method, store_every=k)
        idx = np.unique(np.r_[np.arange(0, 1004, k), 1003])
        assert np.array_equal(thin.t, full.t[idx]) and np.array_equal(thin.q, full.q[idx])
        assert np.array_equal(thin.p, full.p[idx])
        sums = np.add.reduceat(full.newton_iterations, idx[:-1])
        assert np.array_equal(thin.newton_iterations, sums)
        assert (thin.q_mid is None) == (k > 1 or full.q_mid is None)
        assert thin.n_steps == 1003


def test_store_every_beyond_the_step_count_keeps_the_first_and_last_state():
    # any k >= n_steps is k = n_steps (no overflow of the C loop's index for a huge k)
    for n in (0, 1, 10):
        ref = sp.integrate(PEND, [Q0], [0.0], 0.1, n)
        tr = sp.integrate(PEND, [Q0], [0.0], 0.1, n, store_every=10 ** 30)
        assert np.array_equal(tr.t, ref.t[[0, -1]] if n else ref.t)
        assert np.array_equal(tr.q, ref.q[[0, -1]] if n else ref.q)
        assert list(tr.newton_iterations) == ([int(ref.newton_iterations.sum())] if n else [])
    for kw in (dict(store=10 ** 30), dict(store_every=10 ** 30)):
        ens = sp.integrate_many(PEND, [[1.0], [2.0]], [[0.0], [0.0]], 0.1, 10, **kw)
        assert ens.t.tolist() == [0.0, 1.0] and ens.q.shape == (2, 2, 1)


def test_store_every_memory_is_that_of_the_kept_states():
    """10^7 steps with store_every=10: the arrays of 10^6 + 1 states, measured."""
    n_steps, k = 10 ** 7, 10
    rows = n_steps // k + 1
    kept = rows * 8 * 3 + (rows - 1) * 4          # t, q, p (n = 1) and the iteration sums
    full = (n_steps + 1) * 8 * 3 + n_steps * 8 + n_steps * 4   # ... and q_mid, every step
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        tr = sp.integrate(PEND, [1.0], [0.0], 1e-3, n_steps, store_every=k)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(tr.t) == rows and tr.t[-1] == pytest.approx(1e4)
    assert kept <= peak < 1.05 * kept + 2 ** 20, (peak, kept)
    assert peak < full / 9


# ---------------------------------------------------------------- counts, y
def test_counts_of_a_run():
    dp = sp.systems.double_pendulum()
    q0 = [math.pi / 4, math.pi / 3]
    tr = sp.integrate(dp, q0, [0.0, 0.0], 0.05, 300, branch_check="never")
    c = tr.counts
    assert c.steps == 300 and c.newton_iterations == tr.newton_iterations.sum()
    assert c.factorizations == c.newton_iterations          # full Newton: one LU per iteration
    assert c.branch_checks == c.branch_fixes == 0
    # three nodes evaluated per Newton iteration (Lobatto: points = nodes), plus
    # the left node and the Taylor predictor when a step cannot reuse them
    assert 3 * c.newton_iterations <= c.evaluations <= 3 * c.newton_iterations + 2 * c.steps + 2
    assert tr.nfev == c.evaluations and tr.nlu == c.factorizations
    ch = sp.integrate(dp, q0, [0.0, 0.0], 0.05, 300, newton="chord").counts
    assert ch.factorizations < ch.newton_iterations
    rk = sp.integrate(dp, q0, [0.0, 0.0], 0.05, 300, method="rk4").counts
    assert rk == (300, 8 * 300, 0, 0, 0, 0)                 # 4 stages x (M, grad V) + A
    # the default checks the suspicious roots by continuation in h: their
    # solves are counted with the rest (tests/c_core/test_branches.py)
    auto = sp.integrate(dp, q0, [0.0, 0.0], 0.05, 300).counts
    assert auto.newton_iterations == c.newton_iterations and auto.branch_fixes == 0
    assert auto.factorizations - c.factorizations >= 3 * auto.branch_checks
    assert tr.y.shape == (301, 4) and np.array_equal(tr.y, np.hstack([tr.q, tr.p]))
    assert tr.status == 0 and tr.message.startswith("completed")


# ---------------------------------------------------------------- integrate_many
def test_integrate_many_takes_the_same_words():
    Q0 = np.array([[3.0], [2.0], [1.0]])
    P0 = np.zeros((3, 1))
    ens = sp.integrate_many(PEND, Q0, P0, 0.03, t_span=(0.0, 2.0), store_every=7,
                            events=stop_at_crossing)
    assert list(ens.status) == [1, 1, 1]
    for k in range(3):
        tr = sp.integrate(PEND, Q0[k], [0.0], 0.03, t_span=(0.0, 2.0), store_every=7,
                          events=stop_at_crossing)
        assert np.array_equal(ens.t_events[k][0], tr.t_events[0])
        m = int(np.sum(~np.isnan(ens.q[k, :, 0])))
        assert m >= 1 and np.array_equal(ens.q[k, :m], tr.q[:m])
    te = [0.5, 1.0, 1.5]
    ens = sp.integrate_many(PEND, Q0, P0, 0.01, t_span=(0.0, 2.0), t_eval=te)
    for k in range(3):
        tr = sp.integrate(PEND, Q0[k], [0.0], 0.01, t_span=(0.0, 2.0), t_eval=te)
        assert np.array_equal(ens.q[k], tr.q) and np.array_equal(ens.p[k], tr.p)
    assert ens.t.tolist() == te
    a = sp.integrate_many(PEND, Q0, P0, 0.01, 100, store_every=9)
    b = sp.integrate_many(PEND, Q0, P0, 0.01, 100, store=9)
    assert np.array_equal(a.q, b.q) and np.array_equal(a.t, b.t)


# ---------------------------------------------------------------- progress
def test_progress_plain_line_and_tqdm(capsys, monkeypatch):
    ref = sp.integrate(PEND, [Q0], [0.0], 1e-3, 20000)
    monkeypatch.setattr(_progress, "_tqdm", lambda: None)
    monkeypatch.setattr(_progress, "PLAIN_INTERVAL", 0.0)
    tr = sp.integrate(PEND, [Q0], [0.0], 1e-3, 20000, progress=True)
    err = capsys.readouterr().err
    assert np.array_equal(tr.q, ref.q)                      # progress changes no number
    last = err.rstrip("\n").split("\r")[-1]
    assert last.startswith("integrate (simpson): 100.0% 2e+04/2e+04 steps"), last
    assert "steps/s" in last and "left 00:00" in last
    monkeypatch.undo()
    pytest.importorskip("tqdm")
    sp.integrate(PEND, [Q0], [0.0], 1e-3, 20000, progress=True)
    err = capsys.readouterr().err
    assert "integrate (simpson)" in err and "100%" in err
    sp.integrate_many(PEND, [[1.0], [2.0]], [[0.0], [0.0]], 1e-3, 5000, progress=True)
    assert "10.0k/10.0k" in capsys.readouterr().err
    sp.integrate(PEND, [Q0], [0.0], 1e-3, 20000)
    assert capsys.readouterr().err == ""                   # off by default


# ---------------------------------------------------------------- bad inputs
BAD = [
    (dict(t_span=5.0), TypeError, r"t_span must be a pair \(t0, tf\)"),
    (dict(t_span=(0.0, 1.0, 2.0)), TypeError, r"t_span must be a pair"),
    (dict(t_span="ab"), TypeError, r"t_span must be a pair"),
    (dict(t_span=(0.0, "1")), TypeError, r"t_span\[1\] must be a real number"),
    (dict(t_span=(0.0, math.nan)), ValueError, r"t_span\[1\] must be finite"),
    (dict(t_span=(1.0, 1.0)), ValueError, "t_span must have t0 != tf"),
    (dict(h=-0.1, t_span=(0.0, 1.0)), ValueError, "runs the other way than t_span"),
    (dict(n_steps=30, t_span=(0.0, 1.0)), ValueError, "30 steps of h = 0.1 span"),
    (dict(n_steps=0, h=None, t_span=(0.0, 1.0)), ValueError, "n_steps must be >= 1"),
    (dict(h=None, n_steps=None, t_span=(0.0, 1.0)), TypeError, "give the step h"),
    (dict(t0=0.5, t_span=(0.0, 1.0)), ValueError, "t0 = 0.5 disagrees with t_span"),
    (dict(t_eval=[0.5, 2.0]), ValueError, r"t_eval\[1\] = 2.0 is outside"),
    (dict(t_eval=[-0.1]), ValueError, r"t_eval must lie within the integrated interval"),
    (dict(t_eval=[0.5, 0.2]), ValueError, r"t_eval must be sorted, increasing"),
    (dict(t_eval=[0.5, math.nan]), ValueError, "t_eval contains non-finite values"),
    (dict(t_eval=[[0.1, 0.2]]), ValueError, "t_eval must be 1-d"),
    (dict(t_eval=["a"]), TypeError, "t_eval must be a 1-d array of real numbers"),
    (dict(t_eval=[0.1], store_every=2), TypeError, "give t_eval .* or store_every"),
    (dict(store_every=0), ValueError, "store_every must be >= 1, got 0"),
    (dict(store_every=2.0), TypeError, "store_every must be an int"),
    (dict(store_every=True), TypeError, "store_every must be an int"),
    (dict(events=3), TypeError, "events must be a callable g"),
    (dict(events=[crossing, "x"]), TypeError, r"events\[1\] must be a callable"),
    (dict(progress=1), TypeError, "progress must be True or False, got 1"),
    (dict(progress="yes"), TypeError, "progress must be True or False"),
]


@pytest.mark.parametrize("kw, exc, msg", BAD)
def test_bad_inputs_of_the_new_arguments(kw, exc, msg):
    args = dict(h=0.1, n_steps=10)
    args.update(kw)
    with pytest.raises(exc, match=msg):
        sp.integrate(PEND, [1.0], [0.0], **args)


def test_bad_inputs_backward_t_eval_order():
    with pytest.raises(ValueError, match=r"decreasing \(the run goes backward in time\)"):
        sp.integrate(PEND, [1.0], [0.0], -0.1, t_span=(1.0, 0.0), t_eval=[0.2, 0.5])


def _event(ret, **attrs):
    def ev(t, q, p):
        return ret(t)

    for k, v in attrs.items():
        setattr(ev, k, v)
    return ev


@pytest.mark.parametrize("ev, exc, msg", [
    (_event(lambda t: np.array([1.0, 2.0])), TypeError,
     r"event function 0 \(ev\) must return a real scalar, got an array of shape \(2,\) at t = 0"),
    (_event(lambda t: [1.0]), TypeError, r"must return a real scalar, got an array of shape \(1,\)"),
    (_event(lambda t: None), TypeError, "must return a real scalar, got None"),
    (_event(lambda t: "0"), TypeError, "must return a real scalar, got '0'"),
    (_event(lambda t: 1.0 + 0j), TypeError, r"must return a real scalar, got \(1\+0j\)"),
    (_event(lambda t: math.nan), ValueError, r"event function 0 \(ev\) returned nan at t = 0.0"),
    (_event(lambda t: 1.0 if t < 0.35 else math.inf), ValueError,
     r"returned inf at t = 0.4\d*; it must be finite"),
    (_event(lambda t: 1.0, terminal="yes"), TypeError, r"events\[0\].terminal must be True"),
    (_event(lambda t: 1.0, terminal=-1), TypeError, r"events\[0\].terminal must be True"),
    (_event(lambda t: 1.0, direction="down"), TypeError,
     r"events\[0\].direction must be a real number"),
    (_event(lambda t: 1.0, direction=math.nan), TypeError, r"events\[0\].direction"),
])
def test_bad_event_functions(ev, exc, msg):
    with pytest.raises(exc, match=msg):
        sp.integrate(PEND, [1.0], [0.0], 0.1, 10, events=ev)


def test_bad_inputs_of_integrate_many_and_the_nan_inside_a_step():
    with pytest.raises(TypeError, match="give store= or store_every=, not both"):
        sp.integrate_many(PEND, [[1.0]], [[0.0]], 0.1, 10, store="final", store_every=2)
    with pytest.raises(TypeError, match="give t_eval"):
        sp.integrate_many(PEND, [[1.0]], [[0.0]], 0.1, 10, store=2, t_eval=[0.5])
    with pytest.raises(TypeError, match="progress must be True or False"):
        sp.integrate_many(PEND, [[1.0]], [[0.0]], 0.1, 10, progress=None)
    with pytest.raises(ValueError, match=r"t_eval\[0\] = 5.0 is outside"):
        sp.integrate_many(PEND, [[1.0]], [[0.0]], 0.1, 10, t_eval=[5.0])
    with pytest.raises(ValueError, match="t_eval must be sorted, increasing"):
        sp.integrate_many(PEND, [[1.0]], [[0.0]], 0.1, 10, t_eval=[0.5, 0.2])
    with pytest.raises(TypeError, match=r"t_span must be a pair \(t0, tf\)"):
        sp.integrate_many(PEND, [[1.0]], [[0.0]], 0.1, t_span=(0, 1, 2))
    with pytest.raises(ValueError, match="store_every must be >= 1, got 0"):
        sp.integrate_many(PEND, [[1.0]], [[0.0]], 0.1, 10, store_every=0)
    with pytest.raises(TypeError, match="events must be a callable g"):
        sp.integrate_many(PEND, [[1.0]], [[0.0]], 0.1, 10, events=3)
    with pytest.raises(ValueError, match=r"event function 0 \(<lambda>\) returned nan"):
        sp.integrate_many(PEND, [[1.0]], [[0.0]], 0.1, 10, events=lambda t, q, p: math.nan)
    with pytest.raises(TypeError, match=r"must return a real scalar, got an array of shape"):
        sp.integrate_many(PEND, [[1.0]], [[0.0]], 0.1, 10, events=lambda t, q, p: [1.0, 2.0])

    # nan only between the nodes: found while locating a sign change
    def sneaky(t, q, p):
        v = q[0] - 0.5
        return math.nan if abs(v) < 0.05 and abs(t / 0.1 - round(t / 0.1)) > 1e-9 else v

    with pytest.raises(ValueError, match="returned nan at t = "):
        sp.integrate(PEND, [1.0], [0.0], 0.1, 10, events=sneaky)


def test_reproduce_progress_bar(capsys, monkeypatch):
    from symplectic import reproduce
    monkeypatch.setattr(_progress, "_tqdm", lambda: None)
    monkeypatch.setattr(reproduce, "TASKS", [("a", lambda ctx: 1, False, True),
                                             ("b", lambda ctx: 2, False, True),
                                             ("fig", lambda ctx: 3, True, True)])
    res = reproduce.run(progress=True)
    err = capsys.readouterr().err
    assert res == {"a": 1, "b": 2}
    last = err.rstrip("\n").split("\r")[-1]
    assert last.startswith("reproduce: 100.0% 3/3 tasks") and "left" in last, err
    assert "[1/3]" not in err                     # the bar replaces the per-task lines
    reproduce.run()
    assert "[1/3] a ..." in capsys.readouterr().err


def test_ctrl_c_with_progress_and_thinning_keeps_the_completed_steps(capsys, monkeypatch):
    """progress=True leaves Ctrl-C as it is: KeyboardInterrupt, partial trajectory kept."""
    import os
    import signal
    import threading
    monkeypatch.setattr(_progress, "_tqdm", lambda: None)
    chain = sp.systems.pendulum_chain(16)
    q0 = np.linspace(0.1, 0.5, 16)
    timer = threading.Timer(0.3, lambda: os.kill(os.getpid(), signal.SIGINT))
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt) as info:
            sp.integrate(chain, q0, np.zeros(16), 1e-3, 1_000_000, progress=True,
                         store_every=10)
    finally:
        timer.cancel()
    part = info.value.trajectory
    assert part.status == -1 and len(part.t) > 1 and np.all(np.isfinite(part.q))
    ref = sp.integrate(chain, q0, np.zeros(16), 1e-3, 10 * min(len(part.t) - 1, 100),
                       store_every=10)
    np.testing.assert_array_equal(part.q[:len(ref.q) - 1], ref.q[:-1])
    assert "integrate (simpson):" in capsys.readouterr().err      # the bar was drawn


def test_step_takes_a_time_span():
    """step(..., t_span=(t, t1)) is the step of h = t1 - t from t: bitwise the
    same as h and t given (a driven force sees the span's start time); a
    disagreeing h, a t other than t_span[0] or an empty span is refused."""
    dp = sp.systems.double_pendulum()
    q0, p0 = np.array([0.7, -0.3]), np.array([0.1, 0.2])
    def drive(t, q, qd):
        return np.array([np.sin(3.0 * t), 0.0])
    a = sp.step(dp, q0, p0, 0.25, t=2.0, force=drive)
    b = sp.step(dp, q0, p0, t_span=(2.0, 2.25), force=drive)
    c = sp.step(dp, q0, p0, 0.25, t_span=(2.0, 2.25), force=drive)
    assert all(np.array_equal(x, y) for x, y in zip(a + a, b + c))
    back = sp.step(dp, q0, p0, t_span=(1.0, 0.9))
    assert np.array_equal(back[0], sp.step(dp, q0, p0, 0.9 - 1.0)[0])
    with pytest.raises(ValueError, match="n_steps = 1 steps of h = 0.2"):
        sp.step(dp, q0, p0, 0.2, t_span=(2.0, 2.25))
    with pytest.raises(ValueError, match="t0 = 1.0 disagrees with t_span"):
        sp.step(dp, q0, p0, t=1.0, t_span=(2.0, 2.25))
    with pytest.raises(ValueError, match="t0 != tf"):
        sp.step(dp, q0, p0, t_span=(2.0, 2.0))
    with pytest.raises(TypeError, match="t_span must be a pair"):
        sp.step(dp, q0, p0, t_span=2.0)
