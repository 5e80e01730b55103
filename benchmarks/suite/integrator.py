"""Section 14: a closed loop of 100 steps, ``sp.Integrator.step()`` against ``sp.step``, in one run;
then a PD controller's loop of 300 steps, ``Integrator.step(force=u)`` against ``sp.step(..., force=u)``.

A sampled controller advances its plant one control period at a time.  With ``sp.step`` every call
checks its inputs, resolves the method and options and builds a C workspace; an ``sp.Integrator``
does that once and keeps the workspace (and the predictor history) across its ``step()`` calls,
whose states are bitwise those of one ``sp.integrate`` call (checked here; a loop of ``sp.step``
starts every step's Newton from a Taylor predictor instead, and agrees with them to the Newton
tolerance: the largest difference is reported).  Each round times, interleaved, a loop of 100
``sp.step`` calls, a loop of 100 ``Integrator.step()`` calls (the Integrator made inside the timed
region) and 100 steps as one ``sp.integrate`` call, the floor of the per-step cost.

The second table closes the loop: u_k = -K_p (q_k - q_ref) - K_d p_k computed from the state before
each step and held over it.  ``Integrator.step(force=u)`` points the kept run's held force at u (no
new workspace, no force parsed again); ``sp.step(..., force=u)`` does a whole call each step.  The
Integrator's states are checked bitwise against one ``sp.integrate`` with the recorded inputs as its
held force rows.
"""
import numpy as np

import symplectic as sp

from .common import md_table, med, timed_rounds

N = 100


def cases():
    dp = sp.systems.double_pendulum()
    chain = sp.systems.pendulum_chain(8)
    q8 = 0.5 * np.sin(1.3 * np.arange(8))
    return [("double pendulum, simpson", dp, np.array([1.0, 0.5]), np.zeros(2), "simpson"),
            ("double pendulum, lobatto5", dp, np.array([1.0, 0.5]), np.zeros(2), "lobatto5"),
            ("8-link chain, simpson", chain, q8, np.zeros(8), "simpson")]


def loop_step(system, q0, p0, method):
    q, p = q0, p0
    for _ in range(N):
        q, p = sp.step(system, q, p, 0.01, method)
    return q


def loop_integrator(system, q0, p0, method):
    it = sp.Integrator(system, 0.01, q0, p0, method=method)
    for _ in range(N):
        q, _p = it.step()
    return q


def one_call(system, q0, p0, method):
    return sp.integrate(system, q0, p0, 0.01, N, method).q[-1]


N_PD = 300


def pd(q, p):
    return -5.0 * (q - 0.2) - 0.8 * p


def pd_step(system, q0, p0, method):
    q, p = q0, p0
    for _ in range(N_PD):
        q, p = sp.step(system, q, p, 0.01, method, force=pd(q, p))
    return q


def pd_integrator(system, q0, p0, method, inputs=None):
    it = sp.Integrator(system, 0.01, q0, p0, method=method)
    for _ in range(N_PD):
        u = pd(it.q, it.p)
        if inputs is not None:
            inputs.append(u)
        it.step(force=u)
    return it.q


def pd_rows(cfg):
    rows = []
    for name, system, q0, p0, method in cases():
        fns = {f.__name__: (lambda f=f: f(system, q0, p0, method)) for f in (pd_integrator, pd_step)}
        U = []
        end = pd_integrator(system, q0, p0, method, U)
        ref = sp.integrate(system, q0, p0, 0.01, N_PD, method, force=np.array(U)).q[-1]
        diff = float(np.max(np.abs(fns["pd_step"]() - end)))
        t, paired = timed_rounds(fns, cfg["integ_rounds"])
        a, b = (1e3 * t[k]["wall"] for k in ("pd_step", "pd_integrator"))
        rows.append([name, f"{a:.3f}", f"{b:.3f}", f"{med(paired['pd_step']):.2f}",
                     "bitwise" if np.array_equal(end, ref) else "DIFFERENT", f"{diff:.1e}"])
    return rows


def run_section(cfg, ctx):
    rows = []
    for name, system, q0, p0, method in cases():
        fns = {f.__name__: (lambda f=f: f(system, q0, p0, method)) for f in (loop_integrator, loop_step, one_call)}
        ends = {k: fn() for k, fn in fns.items()}                       # warm-up, and the check
        t, paired = timed_rounds(fns, cfg["integ_rounds"])
        a, b, c = (1e3 * t[k]["wall"] for k in ("loop_step", "loop_integrator", "one_call"))
        same = np.array_equal(ends["loop_integrator"], ends["one_call"])
        diff = float(np.max(np.abs(ends["loop_step"] - ends["loop_integrator"])))
        rows.append([name, f"{a:.3f}", f"{b:.3f}", f"{c:.3f}", f"{med(paired['loop_step']):.2f}",
                     "bitwise" if same else "DIFFERENT", f"{diff:.1e}"])
    return "\n".join([
        f"h = 0.01; wall time of the whole loop (the Integrator made inside it), median of {cfg['integ_rounds']} "
        "interleaved rounds; the ratio is the median of the rounds' paired ratios.\n",
        md_table(["case", "100 × sp.step (ms)", "100 × Integrator.step() (ms)", "one integrate call, 100 steps "
                  "(ms)", "sp.step / Integrator.step (paired)", "Integrator = integrate",
                  "largest q difference, sp.step loop"], rows),
        f"\nA PD loop of {N_PD} steps (u = -5 (q - 0.2) - 0.8 p held over each step; the "
        "Integrator made inside the timed loop), same rounds and ratio:\n",
        md_table(["case", f"{N_PD} × sp.step(force=u) (ms)", f"{N_PD} × Integrator.step(force=u) (ms)",
                  "sp.step / Integrator.step (paired)", "Integrator = integrate(force=inputs)",
                  "largest q difference, sp.step loop"], pd_rows(cfg))]) + "\n"
