"""Search and timing across horizons and targets (sections 8 and 10).

A *method* has a grid of settings from cheap to expensive (a step size h for ours, a tolerance for
the adaptive peers), ``measure(prm, T)`` -> dict(status, e_H, steps, wall, ...) (one run over
[0, T] with e_H = max |H - H0| / |H0| over every step, outside any timed region where the method
allows) and ``timer(prm, T)`` -> a function returning (wall, cpu) of one timed run.

For each horizon (ascending) and target (loosest first) the search walks the grid from the setting
chosen for the same target at the shorter horizon (e_H over [0, T'] >= e_H over [0, T] for T' > T:
the shorter run is a prefix of the longer) and takes the first setting that reaches the target
*and whose next finer setting reaches it too* (no lucky coarse step).  A run projected to last
longer than the cap is not started.  The chosen settings of one horizon are then timed in
interleaved rounds; ratios are taken round by round against our methods and their medians reported.
"""
import math

from .common import fmt_e, fmt_t, interleave, med, say, summarize

INF, NAN = float("inf"), float("nan")


class Method:
    """Base of the methods compared; subclasses set kind/grid and implement measure and timer."""
    kind = "tol"          # "h": fixed step size (ours); "tol": adaptive
    ours = False
    max_T = INF           # longest horizon at which the method is run at all

    def __init__(self, name, label, family, grid):
        self.name, self.label, self.family, self.grid = name, label, family, list(grid)

    def param_str(self, prm):
        return f"h={prm:.4g}" if self.kind == "h" else f"tol={prm:.3g}"

    def steps_hint(self, prm, T):
        """Relative work of (prm, T) (for projecting run times): T/h or T."""
        return T / prm if self.kind == "h" else T

    def extra(self, prm):
        """Extra columns of the result rows for this setting (e.g. heyoka's compile time)."""
        return {}


class Search:
    """The search of one method over all horizons and targets; its measurements are cached."""

    def __init__(self, method, horizons, targets, cap, log=True):
        self.m, self.horizons, self.targets, self.cap, self.log = method, horizons, sorted(targets)[::-1], cap, log
        self.points = {}          # (grid index, T) -> measurement
        self.picks = {}           # (T, target) -> grid index, or a string saying why none
        self.notes = {}           # (T, target) -> remark on a pick ("unconfirmed": no finer setting run)

    def projected(self, i, T):
        """The run time of (grid[i], T) projected from the nearest measured run: the longest measured
        horizon T' <= T, there the finest measured setting j <= i, scaled by the work ratio (a lower
        bound: finer settings cost more; the nearest run, not a short noisy one blown up by T/T')."""
        m = self.m
        known = [(T2, j) for (j, T2), r in self.points.items()
                 if j <= i and T2 <= T and math.isfinite(r.get("wall", NAN))]
        if not known:
            return 0.0
        T2, j = max(known)
        return self.points[(j, T2)]["wall"] * m.steps_hint(m.grid[i], T) / m.steps_hint(m.grid[j], T2)

    def measure(self, i, T):
        if (i, T) not in self.points:
            r = self.m.measure(self.m.grid[i], T)
            r.setdefault("wall", NAN)
            self.points[(i, T)] = r
            if self.log:
                say(f"    {self.m.label:34s} T={T:<7g} {self.m.param_str(self.m.grid[i]):14s} "
                    f"e_H={fmt_e(r.get('e_H', INF)):9s} {fmt_t(r['wall'])} {r.get('status', '')}")
        return self.points[(i, T)]

    def _ok(self, i, T, tgt):
        r = self.measure(i, T)
        return r.get("status") == "ok" and r["e_H"] <= tgt

    def _walk(self, i, T, tgt):
        """First index >= i that reaches tgt with its successor; (index or None, why not)."""
        fails = 0
        while i < len(self.m.grid):
            if self.projected(i, T) > self.cap:
                return None, f"cost: a run > {self.cap:g} s"
            r = self.measure(i, T)
            if r.get("status") != "ok":
                fails += 1
                if fails >= 3 and self.m.kind == "tol":
                    return None, f"failed ({r.get('status')})"
            elif r["e_H"] <= tgt:
                if i + 1 >= len(self.m.grid) or self.projected(i + 1, T) > self.cap:
                    return i, "unconfirmed"
                if self._ok(i + 1, T, tgt):
                    return i, ""
            i += 1
        return None, "grid end"

    def run(self):
        start = {tgt: 0 for tgt in self.targets}
        for T in self.horizons:
            if T > self.m.max_T:
                for tgt in self.targets:
                    self.picks[(T, tgt)] = f"not run beyond T = {self.m.max_T:g} s (cost)"
                continue
            i, blocked = 0, None
            for tgt in self.targets:
                i = max(i, start[tgt])
                pick, why = (None, blocked) if blocked else self._walk(i, T, tgt)
                if pick is None:
                    best = min((r["e_H"] for (j, T2), r in self.points.items()
                                if T2 == T and r.get("status") == "ok"), default=INF)
                    self.picks[(T, tgt)] = (f"not reached ({why}; best e_H {fmt_e(best)})" if best < INF
                                            else f"not reached ({why})")
                    blocked = why           # a tighter target is not reached either
                    continue
                self.picks[(T, tgt)], self.notes[(T, tgt)] = pick, why
                start[tgt], i = pick, pick
        return self

    def pick(self, T, tgt):
        p = self.picks.get((T, tgt), "not run")
        return (p, None) if isinstance(p, str) else (None, p)


def _per_round(a, b):
    """Median over rounds of a_j / b_j (both lists of (wall, cpu) in round order)."""
    k = min(len(a), len(b))
    return med([a[j][0] / b[j][0] for j in range(k)]) if k else NAN


def time_horizon(searches, T, targets, rounds, min_rounds, budget):
    """Interleaved timing of every chosen setting at horizon T: {(method name, grid index): samples}."""
    configs = {}
    for s in searches:
        for tgt in targets:
            _, i = s.pick(T, tgt)
            if i is not None and (s.m.name, i) not in configs:
                configs[(s.m.name, i)] = s.m.timer(s.m.grid[i], T)
    say(f"  T = {T:g} s: timing {len(configs)} chosen settings in interleaved rounds")
    return interleave(configs, rounds, budget, min_rounds=min_rounds)


def _row(s, T, tgt, samples):
    why, i = s.pick(T, tgt)
    base = dict(T=T, target=tgt, method=s.m.name, label=s.m.label, family=s.m.family, ours=s.m.ours)
    if i is None:
        return dict(base, reached=False, note=why)
    r = s.points[(i, T)]
    t = summarize(samples[(s.m.name, i)])
    return dict(base, reached=True, param=s.m.param_str(s.m.grid[i]), prm=s.m.grid[i], steps=r.get("steps"),
                e_H=r["e_H"], newton=r.get("newton"), note=s.notes.get((T, tgt), ""), **t,
                **s.m.extra(s.m.grid[i]))


def rows_for(searches, T, targets, samples, refs=("lobatto5",)):
    """Result rows of horizon T with per-round ratios: vs each method in refs and vs the best of ours
    (the one of ours with the lowest median at that target)."""
    out = []
    for tgt in targets:
        rows = [_row(s, T, tgt, samples) for s in searches]
        ours = [r for r in rows if r["ours"] and r["reached"]]
        best = min(ours, key=lambda r: r["wall"]) if ours else None
        for r in rows:
            r["best_ours"] = best["method"] if best else ""
            if not r["reached"]:
                continue
            mine = samples[(r["method"], _index(searches, r))]
            for ref in refs + ("best",):
                ref_row = best if ref == "best" else next((x for x in ours if x["method"] == ref), None)
                r[f"vs_{ref}"] = (_per_round(mine, samples[(ref_row["method"], _index(searches, ref_row))])
                                  if ref_row else NAN)
        out += rows
    return out


def _index(searches, row):
    s = next(s for s in searches if s.m.name == row["method"])
    return s.m.grid.index(row["prm"])


def search_points(searches):
    """Every measurement of every search, as rows for a CSV."""
    rows = []
    for s in searches:
        for (i, T), r in sorted(s.points.items(), key=lambda kv: (kv[0][1], kv[0][0])):
            rows.append(dict(method=s.m.name, label=s.m.label, T=T, param=s.m.param_str(s.m.grid[i]),
                             status=r.get("status"), e_H=r.get("e_H"), steps=r.get("steps"),
                             newton=r.get("newton"), wall=r.get("wall")))
    return rows


def run_all(methods, horizons, targets, cap, rounds, min_rounds, budget, refs=("lobatto5",)):
    """Search every method, then time each horizon's chosen settings; (rows, searches)."""
    searches = []
    for m in methods:
        say(f"  search: {m.label}")
        searches.append(Search(m, horizons, targets, cap).run())
    rows = []
    for T in horizons:
        samples = time_horizon(searches, T, targets, rounds, min_rounds, budget)
        rows += rows_for(searches, T, targets, samples, refs)
    return rows, searches
