"""Section 6: an ensemble of double-pendulum initial conditions on 1 and 2 threads."""
import gc

import numpy as np

import symplectic as sp
import models as M

from .common import foreign_load, med, say, summarize, fmt_t


def _is_quiet(x):
    """A run is quiet when other processes used < 5 % of one CPU during it."""
    return x["other"] < 0.05 * x["wall"]


def _bitwise(run, dp, Q0, P0, h, N):
    """(2 threads == 1 thread, every member == its own sp.integrate run), bitwise."""
    e1, e2 = run(1), run(2)
    same_threads = bool(np.array_equal(e1.q, e2.q) and np.array_equal(e1.p, e2.p))
    for k in range(len(Q0)):
        tr = sp.integrate(dp, Q0[k], P0[k], h, N)
        if not (np.array_equal(tr.q[-1], e2.q[k, -1]) and np.array_equal(tr.p[-1], e2.p[k, -1])):
            return same_threads, False
    return same_threads, True


def _rounds(cfg, run):
    """Interleaved rounds; /proc/stat tells how much CPU other processes took during each run, so
    rounds where the second vCPU was busy elsewhere can be told apart (shared machine).  More
    rounds (up to ens_max_rounds) while fewer than ens_quiet rounds were free of other load."""
    rec = {1: [], 2: []}
    r = 0
    while r < cfg["ens_rounds"] or (
            r < cfg["ens_max_rounds"]
            and sum(_is_quiet(a) and _is_quiet(b) for a, b in zip(rec[1], rec[2])) < cfg["ens_quiet"]):
        for th in ((1, 2) if r % 2 == 0 else (2, 1)):
            gc.collect()
            _, w, c, other = foreign_load(lambda: run(th))
            rec[th].append(dict(wall=w, cpu=c, other=other))
        r += 1
    return rec


def section_ensemble(cfg):
    say("== 6. ensemble of double-pendulum initial conditions")
    K, N, h = cfg["ens_K"], cfg["ens_steps"], 0.01
    rng = np.random.default_rng(2026)
    Q0 = M.DP_Q0 + rng.uniform(-0.3, 0.3, (K, 2))
    P0 = rng.uniform(-0.2, 0.2, (K, 2))
    dp = M.dp_system()

    def run(th):
        return sp.integrate_many(dp, Q0, P0, h, N, threads=th, store="final")

    same_threads, same_seq = _bitwise(run, dp, Q0, P0, h, N)
    rec = _rounds(cfg, run)
    t1 = summarize([(x["wall"], x["cpu"]) for x in rec[1]])
    t2 = summarize([(x["wall"], x["cpu"]) for x in rec[2]])
    ratios = [a["wall"] / b["wall"] for a, b in zip(rec[1], rec[2])]
    quiet = [a["wall"] / b["wall"] for a, b in zip(rec[1], rec[2]) if _is_quiet(a) and _is_quiet(b)]
    other_frac = med([x["other"] / x["wall"] for x in rec[1] + rec[2]])
    row = dict(K=K, steps=N, h=h, method="simpson", wall_1=t1["wall"], wall_2=t2["wall"],
               wall_1_min=t1["wall_min"], wall_2_min=t2["wall_min"], wall_1_max=t1["wall_max"],
               wall_2_max=t2["wall_max"], speedup=t1["wall"] / t2["wall"],
               speedup_round_median=med(ratios), speedup_pairs_min=min(ratios),
               speedup_pairs_max=max(ratios), quiet_rounds=len(quiet),
               speedup_quiet=med(quiet) if quiet else float("nan"),
               other_load_cpus=other_frac, cpu_2=t2["cpu"],
               parallelism_2=med([x["cpu"] / x["wall"] for x in rec[2]]),
               bitwise_threads=same_threads, bitwise_sequential=same_seq,
               samples=t1["samples"], us_per_step_1=t1["wall"] / (K * N) * 1e6)
    say(f"  K={K}, {N} steps: 1 thread {fmt_t(t1['wall'])}, 2 threads {fmt_t(t2['wall'])}, "
        f"speed-up {row['speedup']:.2f} (rounds {min(ratios):.2f}–{max(ratios):.2f}; "
        f"{len(quiet)} quiet rounds: {row['speedup_quiet']:.2f}; other load {other_frac:.2f} CPU); "
        f"bitwise equal: threads {same_threads}, sequential {same_seq}")
    return row
