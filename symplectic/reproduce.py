"""Reproduce the papers' published tables on the built-in systems.

``python -m symplectic reproduce [--out DIR]`` prints every table side by
side with the printed values and the relative difference, and writes CSV
files and PNG figures into DIR.  A printed value that we do not reproduce, for
a known reason, is flagged with a note and a key (``errata fvca-t1/...``):
``docs/errata.md`` in the repository explains each key (:func:`symplectic.papers.flags`).
With ``--docs FILE`` it also writes the tables as a Markdown page (:func:`markdown_page`):
the repository's ``docs/results.md`` is that page, with the date, commit and machine of its run.
The tables are computed in ``symplectic._paper_tables``, the figures drawn in
``symplectic._paper_figures``; their functions are offered here.
"""
import datetime
import os
import platform
import subprocess

from . import papers
from ._paper_figures import axioms_figures, fvca_figures, plotting, top_dp_figures, top_figures
from ._paper_tables import (axioms_table2, fitted_order, fvca_table1, top_dp_table2, top_note,
                            top_table6_convergence, top_tables45, write_csv)

__all__ = ["run", "TASKS", "ERRATA_LINE", "format_table", "markdown_page", "write_csv",
           "fitted_order",
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


# ------------------------------------------------------------------ the Markdown page
def _machine():
    """The CPU, its count, the OS and the versions that matter, on one line."""
    import numpy
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            cpu = next(ln.split(":", 1)[1].strip() for ln in fh if ln.startswith("model name"))
    except (OSError, StopIteration):
        pass
    return (f"{cpu}, {os.cpu_count()} logical CPUs, {platform.system()} {platform.release()}; "
            f"Python {platform.python_version()}, NumPy {numpy.__version__}")


def _commit():
    """The short hash of the checkout the package runs from, or a sentence saying there is none."""
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    try:
        git = ["git", "-C", here]
        head = subprocess.run(git + ["rev-parse", "--short", "HEAD"], capture_output=True,
                              text=True, timeout=10, check=True).stdout.strip()
        dirty = subprocess.run(git + ["status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "an installed package (not a git checkout)"
    return f"commit {head}" + (" with uncommitted changes" if dirty else "")


def _cell(r, fmt):
    """Ours, then the printed value in parentheses; a dagger marks a flagged entry."""
    mark = "†" if r.get("note") else ""
    return f"{r['value']:{fmt}} ({r['paper']:g}{mark})"


def _flag_list(rows):
    out = [f"- † {r.get('T', '') and str(r['T']) + ' t̄, '}{r['method']} {r['quantity']}, "
           + ("the order" if r["N"] == "order" else f"N = {r['N']}")
           + f": {r['note'].replace('; errata ', ' (errata `')}`)" for r in rows if r.get("note")]
    return "\n".join(out)


def _grid(head, rows, key, fmt, order_fmt=".2f"):
    """A Markdown table: one line per key(row), one column per N and the fitted order."""
    lines, index = {}, []
    for r in rows:
        k = key(r)
        if k not in lines:
            lines[k] = []
            index.append(k)
        lines[k].append(_cell(r, order_fmt if r["N"] == "order" else fmt)
                        if r.get("paper") is not None else
                        f"{r['value']:{order_fmt if r['N'] == 'order' else fmt}}")
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    out += ["| " + " | ".join(list(k) + cells) + " |" for k, cells in ((k, lines[k]) for k in index)]
    return "\n".join(out)


def _fvca_section(rows):
    P = papers.FVCA_TABLE1
    worst = max(abs(r["rel_diff"]) for r in rows if r["N"] != "order")
    head = ["method", "quantity"] + [f"N = {n}" for n in P["meshes"]] + ["order"]
    return (f"## FVCA 2023, Table 1: the nonlinear pendulum\n\n{P['conventions']}.\n\n"
            + _grid(head, rows, lambda r: (r["method"], r["quantity"]), ".4e", ".3f")
            + f"\n\nLargest relative difference from the printed values: {100 * worst:.2f} %.\n\n"
            + _flag_list(rows) + "\n")


def _axioms_section(rows):
    P = papers.AXIOMS_TABLE2
    kept = [r for r in rows if (r["T"], r["method"], r["quantity"], r["N"]) not in P["not_targets"]]
    worst = max(abs(r["rel_diff"]) for r in kept if r["N"] != "order")
    worst_o = max(abs(r["rel_diff"]) for r in kept if r["N"] == "order")
    head = ["T [t̄]", "method", "quantity", "N₁", "N₂", "N₃", "order"]
    return ("## AXIOMS 2024, Table 2: the linearised double pendulum\n\n"
            f"{P['conventions']}; N₁, N₂, N₃ steps over T, i.e. h = 0.1, 0.05, 0.025 t̄.\n\n"
            + _grid(head, rows, lambda r: (str(r["T"]), r["method"], r["quantity"]), ".3g")
            + f"\n\nEvery entry not flagged agrees within {100 * worst:.2f} % of the printed "
            f"value, every order within {worst_o:.3f}.\n\n" + _flag_list(rows) + "\n")


def _ours_section(title, text, rows, head, unit, fmt=".2e"):
    orders = {}
    for r in rows:
        if r["N"] == "order":
            orders.setdefault(r["method"], []).append(f"{r['value']:.2f}")
    horizons = ", ".join(dict.fromkeys(str(r["T"]) for r in rows))
    summary = "; ".join(f"{m} {', '.join(o)}" for m, o in orders.items())
    return (f"## {title}\n\n{text}\n\n"
            + _grid(head, rows, lambda r: (str(r.get("T", "")), r["method"]), fmt)
            + f"\n\nThe fitted orders over T = {horizons} {unit}: {summary}.\n")


def _top_sections(results):
    out = []
    if "TOP Table 2" in results:
        out.append(_ours_section(
            "TOP 2025, Table 2: the nonlinear double pendulum's energy error",
            "Max over the run of |H_n − H_0|/|H_0|; m₁ = m₂ = 1, l = g/ω₀² (the paper prints g/ω₀, "
            "errata `top-t1/l`), q(0) = (π/4, π/3), p(0) = 0; the paper prints this table as an "
            "image, so ours only.", results["TOP Table 2"],
            ["T [s]", "method", "h = 0.1 s", "h = 0.05 s", "h = 0.025 s", "order"], "s"))
    rows4, rows5 = [], []
    for name in ("TOP Tables 4-5 (short horizons)", "TOP Tables 4-5 (100 and 1000 periods)"):
        if name in results:
            rows4 += results[name][0]
            rows5 += results[name][1]
    head = ["T [t̄]", "method", "N = 40", "N = 80", "N = 160", "order"]
    conv = ("The Table 3 top; t̄ = 1.8472390 s, the exact nutation period of the printed "
            "parameters (the paper prints 1.84671 s, errata `top-t3/nutation-period`); "
            "h = t̄/N; printed as images in the paper, so ours only.")
    if rows4:
        out.append(_ours_section("TOP 2025, Table 4: the Lagrange top's relative nutation error",
                                 conv, rows4, head, "t̄"))
        out.append(_ours_section("TOP 2025, Table 5: the Lagrange top's relative energy error",
                                 conv, rows5, head, "t̄"))
    if "TOP Figure 14 data (Table 6)" in results:
        rows = results["TOP Figure 14 data (Table 6)"]
        cells = " | ".join(f"{r['value']:.2e}" for r in rows[:-1])
        out.append("## TOP 2025, Table 6 and Figure 14: the reduced top\n\n"
                   "Max over [0, 1 s] of |θ_Simpson(complete top) − θ_RK4(reduced top)| at equal "
                   "h = 0.1/2^k.\n\n| " + " | ".join(f"N = {r['N']}" for r in rows[:-1])
                   + " | order |\n|" + "---|" * len(rows) + f"\n| {cells} | "
                   f"{rows[-1]['value']:.2f} |\n")
    return out


#: The figures the page shows when they lie beside it (copies of reproduce's output).
PAGE_FIGURES = [("axioms_fig6_energy.png", "AXIOMS Figure 6 reproduced: energy error against time"),
                ("top_fig11_top_convergence.png", "TOP Figure 11 reproduced: the top's convergence")]


def markdown_page(results, seconds, quick=False, path="results.md"):
    """The tables of a run of :func:`run` (its ``results``, which took ``seconds``) as a
    Markdown page to be written at ``path``, headed by the run's date, commit and machine; the
    figures of :data:`PAGE_FIGURES` found beside ``path`` are shown."""
    where = os.path.dirname(os.path.abspath(path))
    cmd = "python -m symplectic reproduce" + (" --quick" if quick else "") + f" --docs {path}"
    parts = [
        "# Results: the papers' tables reproduced\n\n"
        f"<!-- written by `{cmd}`: do not edit by hand -->\n\n"
        f"Generated by `{cmd}` on {datetime.date.today().isoformat()}, at {_commit()}, on "
        f"{_machine()}; the run took {seconds:.0f} s. Each of our values is followed by the "
        "value the paper prints, in parentheses; † marks a printed value we do not reproduce, "
        "for the reason given below its table, with its key in the "
        "[errata](errata.md#flagged-published-values).\n"]
    if "FVCA Table 1" in results:
        parts.append(_fvca_section(results["FVCA Table 1"]))
    if "AXIOMS Table 2" in results:
        parts.append(_axioms_section(results["AXIOMS Table 2"]))
    parts += _top_sections(results)
    if quick:
        parts.append("(A `--quick` run: the 100- and 1000-period horizons are left out.)\n")
    shown = [f"![{alt}]({name})" for name, alt in PAGE_FIGURES
             if os.path.isfile(os.path.join(where, name))]
    if shown:
        parts.append("## Figures\n\nCopies of `reproduce`'s output of the same names.\n\n"
                     + "\n\n".join(shown) + "\n")
    return "\n".join(parts)


def run(out=None, quick=False, stream=None, progress=None, docs=None):
    """Run every reproduction; print the tables; write CSVs and PNGs into ``out``.

    ``quick`` runs the short-horizon subset.  ``progress``: None (default)
    writes a line per task to stderr, a stream writes them there, True shows
    a progress bar over the tasks with the rate and the time left (tqdm when
    installed, else a line on stderr), False nothing.  ``docs``: a path to
    write the tables to as a Markdown page (:func:`markdown_page`).  Figures need
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
    seconds = time.perf_counter() - t_start
    if docs:
        page = markdown_page(results, seconds, quick, docs)
        with open(docs, "w", encoding="utf-8") as fh:
            fh.write(page)
        ctx.say(f"wrote the tables into {docs}")
    print(f"reproduce: finished in {seconds:.1f} s", file=progress)
    return results
