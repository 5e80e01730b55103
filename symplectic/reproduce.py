"""Reproduce the papers' published tables on the built-in systems.

``python -m symplectic reproduce [--out DIR]`` prints every table side by
side with the printed values and the relative difference, and writes CSV
files and PNG figures into DIR.  A printed value that we do not reproduce, for
a known reason, is flagged with a note and a key (``errata fvca-t1/...``):
``docs/errata.md`` in the repository explains each key (:func:`symplectic.papers.flags`).
The tables are computed in ``symplectic._paper_tables``, the figures drawn in
``symplectic._paper_figures``; their functions are offered here.
"""
import os

from . import papers
from ._paper_figures import axioms_figures, fvca_figures, plotting, top_dp_figures, top_figures
from ._paper_tables import (axioms_table2, fitted_order, fvca_table1, top_dp_table2, top_note,
                            top_table6_convergence, top_tables45, write_csv)

__all__ = ["run", "TASKS", "ERRATA_LINE", "format_table", "write_csv", "fitted_order",
           "fvca_table1", "axioms_table2", "top_dp_table2", "top_tables45",
           "top_table6_convergence", "fvca_figures", "axioms_figures", "top_dp_figures",
           "top_figures"]

#: The line printed before the tables: where the flagged values are explained.
ERRATA_LINE = ("Values flagged [note; errata KEY] differ from the printed ones for a known reason; "
               "docs/errata.md in the symplectic repository explains each KEY.")


def format_table(title, rows, conventions=""):
    """Plain-text table: ours next to the paper's printed value."""
    lines = [title]
    if conventions:
        lines.append(f"  ({conventions})")
    has_T = bool(rows) and "T" in rows[0]
    head = f"  {'T':>5} " if has_T else "  "
    lines.append(f"{head}{'method':<9} {'quantity':<16} {'N':>6} {'ours':>11} {'paper':>9} "
                 f"{'diff':>8}")
    for r in rows:
        lead = f"  {r['T']:>5} " if has_T else "  "
        if r.get("paper") is None:
            val = f"{r['value']:>11.3f}" if r["N"] == "order" else f"{r['value']:>11.4e}"
            lines.append(f"{lead}{r['method']:<9} {r['quantity']:<16} {r['N']:>6} {val} "
                         f"{'-':>9} {'-':>8}")
        elif r["N"] == "order":
            note = f"  [{r['note']}]" if r.get("note") else ""
            lines.append(f"{lead}{r['method']:<9} {r['quantity']:<16} {'order':>6} "
                         f"{r['value']:>11.3f} {r['paper']:>9.2f} {r['rel_diff']:>+8.3f}{note}")
        else:
            note = f"  [{r['note']}]" if r["note"] else ""
            lines.append(f"{lead}{r['method']:<9} {r['quantity']:<16} {r['N']:>6} "
                         f"{r['value']:>11.4e} {r['paper']:>9.3g} {100 * r['rel_diff']:>+7.2f}%"
                         f"{note}")
    return "\n".join(lines)


def _fvca_table_task(ctx):
    rows = fvca_table1()
    ctx.table("FVCA 2023, Table 1 -- nonlinear pendulum, errors in the max norm", rows,
              papers.FVCA_TABLE1["conventions"], "fvca_table1.csv")
    worst = max(abs(r["rel_diff"]) for r in rows if r["N"] != "order")
    ctx.say(f"  largest relative difference from the printed values: {100 * worst:.2f}%")
    return rows


def _axioms_table_task(ctx):
    rows = axioms_table2()
    ctx.table("AXIOMS 2024, Table 2 -- linearised double pendulum, ||e||_inf of p and q "
              "(T in t_bar = 1 s)", rows, papers.AXIOMS_TABLE2["conventions"], "axioms_table2.csv")
    skip = papers.AXIOMS_TABLE2["not_targets"]
    kept = [r for r in rows if (r["T"], r["method"], r["quantity"], r["N"]) not in skip]
    worst = max(abs(r["rel_diff"]) for r in kept if r["N"] != "order")
    worst_o = max(abs(r["rel_diff"]) for r in kept if r["N"] == "order")
    ctx.say(f"  largest relative difference (all but the 5 RK4 entries and the 2 orders built "
            f"on them, flagged above): {100 * worst:.2f}%; largest order difference "
            f"{worst_o:.3f}")
    return rows


def _top_dp_table_task(ctx):
    rows = top_dp_table2()
    ctx.table("TOP 2025, Table 2 -- nonlinear double pendulum, ||e_H||_inf (T in s; the paper "
              "prints this table as an image: ours only)", rows,
              "m1 = m2 = 1, l = g/omega0^2 [" + top_note("top-t1", "l")
              + "], q(0) = (pi/4, pi/3), p(0) = 0; h = 0.1, 0.05, 0.025 s",
              "top_table2_dp_energy.csv")
    return rows


def _top_tables45_task(ctx, periods):
    rows4, rows5 = top_tables45(periods)
    tag = "_".join(str(p) for p in periods)
    conv = ("TOP Table 3 top, t_bar = exact nutation period 1.8472390 s ["
            + top_note("top-t3", "nutation period")
            + "], h = t_bar/N, N = 40, 80, 160 per period; N column = total steps")
    ctx.table("TOP 2025, Table 4 -- Lagrange top, relative nutation error (T in periods; "
              "printed as an image: ours only)", rows4, conv, f"top_table4_nutation_{tag}.csv")
    ctx.table("TOP 2025, Table 5 -- Lagrange top, relative energy error (T in periods; "
              "printed as an image: ours only)", rows5, conv, f"top_table5_energy_{tag}.csv")
    return rows4, rows5


def _top_table6_task(ctx):
    rows = top_table6_convergence()
    ctx.table("TOP 2025, Figure 14 -- reduced top (Table 6): max |theta_Simpson(complete) - "
              "theta_RK4(reduced)| over [0, 1 s] at equal h", rows,
              "I = 1, I3 = 2, m g l = 4 pi^2, q0 = (0, pi/6, 0), qdot0 = (0, 0, 2 pi); "
              "h = 0.1 / 2^k", "top_fig14_reduced_convergence.csv")
    return rows


class _Context:
    """Where a reproduction task prints and writes."""

    def __init__(self, out, stream, quick=False):
        self.out = out
        self.stream = stream
        self.quick = quick

    def say(self, text=""):
        print(text, file=self.stream)

    def table(self, title, rows, conventions, csv_name):
        self.say()
        self.say(format_table(title, rows, conventions))
        if self.out:
            write_csv(os.path.join(self.out, csv_name), rows)


#: (name, function, is_figure, in --quick): the reproduction tasks in order.
TASKS = [
    ("FVCA Table 1", _fvca_table_task, False, True),
    ("AXIOMS Table 2", _axioms_table_task, False, True),
    ("FVCA Figures 1-2", lambda ctx: fvca_figures(ctx.out), True, True),
    ("AXIOMS Figures 2-8", lambda ctx: axioms_figures(ctx.out), True, True),
    ("TOP Table 2", _top_dp_table_task, False, False),
    ("TOP Figures 2-5", lambda ctx: top_dp_figures(ctx.out), True, True),
    ("TOP Tables 4-5 (short horizons)", lambda ctx: _top_tables45_task(ctx, (1, 10)), False, True),
    ("TOP Tables 4-5 (100 and 1000 periods)",
     lambda ctx: _top_tables45_task(ctx, (100, 1000)), False, False),
    ("TOP Figure 14 data (Table 6)", _top_table6_task, False, True),
    ("TOP Figures 7-14", lambda ctx: top_figures(ctx.out, ctx.quick), True, True),
]


def run(out=None, quick=False, stream=None, progress=None):
    """Run every reproduction; print the tables; write CSVs and PNGs into ``out``.

    ``quick`` runs the short-horizon subset.  ``progress``: None (default)
    writes a line per task to stderr, a stream writes them there, True shows
    a progress bar over the tasks with the rate and the time left (tqdm when
    installed, else a line on stderr), False nothing.  Figures need
    matplotlib and ``out``; without matplotlib they are skipped with a
    message and the tables are still produced.  Returns {task name: result}.
    """
    import io
    import sys
    import time

    from ._run import _progress
    stream = stream or sys.stdout
    bar = None
    if progress is True or progress is False:
        tasks_n = sum(1 for t in TASKS if t[3] or not quick)
        bar = _progress.bar(progress, tasks_n, "reproduce", unit="task")
        progress = io.StringIO()               # the per-task lines go nowhere
    progress = progress or sys.stderr
    if out:
        os.makedirs(out, exist_ok=True)
    ctx = _Context(out, stream, quick)
    ctx.say(ERRATA_LINE)
    tasks = [t for t in TASKS if t[3] or not quick]
    results = {}
    t_start = time.perf_counter()
    for k, (name, fn, is_figure, _) in enumerate(tasks, 1):
        if is_figure and not out:
            if bar:
                bar.advance()
            continue
        if is_figure:
            try:
                plotting()._plt()
            except ImportError as exc:
                print(f"[{k}/{len(tasks)}] {name}: skipped ({exc})", file=progress)
                if bar:
                    bar.advance()
                continue
        print(f"[{k}/{len(tasks)}] {name} ...", file=progress, flush=True)
        t0 = time.perf_counter()
        results[name] = fn(ctx)
        print(f"[{k}/{len(tasks)}] {name} done in {time.perf_counter() - t0:.1f} s",
              file=progress, flush=True)
        if bar:
            bar.advance()
    if bar:
        bar.close()
    if out:
        files = sorted(os.listdir(out))
        ctx.say(f"\nwrote {len(files)} files into {out}: {', '.join(files)}")
    print(f"reproduce: finished in {time.perf_counter() - t_start:.1f} s", file=progress)
    return results
