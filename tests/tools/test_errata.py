"""docs/errata.md stays true: one row per flag of symplectic/papers.py, every
"ours" value recomputed, every citation of it pointing at a section that
exists, no citation of a file outside the repository; and the two formula
corrections it says were checked, checked here with an independent NumPy
implementation of the paper's 3n-unknown Simpson step."""
import math
import pathlib
import re

import numpy as np
import pytest

import symplectic as sp
from symplectic import papers, reproduce

ROOT = pathlib.Path(__file__).resolve().parents[2]
ERRATA = ROOT / "docs" / "errata.md"
pytestmark = pytest.mark.skipif(not ERRATA.exists(), reason="needs the repository's docs/")


def _text():
    return ERRATA.read_text(encoding="utf-8")


def flagged_rows():
    """{key: {column: cell}} of the table under '## Flagged published values'."""
    section = _text().split("## Flagged published values", 1)[1].split("\n## ", 1)[0]
    lines = [ln for ln in section.splitlines() if ln.startswith("|")]
    header = [c.strip() for c in lines[0].strip("|").split("|")]
    assert header == ["key", "paper, table", "entry", "printed", "ours", "why"], header
    rows = {}
    for ln in lines[2:]:
        cells = [c.strip() for c in ln.strip().strip("|").split("|")]
        assert len(cells) == len(header), ln
        m = re.fullmatch(r"`([^`]+)`", cells[0])
        assert m, f"the key column must hold a `key`: {ln}"
        assert m.group(1) not in rows, f"two rows for {m.group(1)}"
        rows[m.group(1)] = dict(zip(header, cells))
    return rows


def test_every_flag_has_exactly_one_row_and_every_row_a_flag():
    rows, flags = flagged_rows(), papers.flags()
    assert set(flags) - set(rows) == set(), "flags without an errata row"
    assert set(rows) - set(flags) == set(), "errata rows without a flag in papers.py"
    for key, row in rows.items():
        assert row["printed"] and row["ours"] and row["why"], key


def _first_number(cell):
    m = re.search(r"[-+]?\d+(?:\.\d+)?(?:e[-+]?\d+)?", cell.replace("−", "-"))
    assert m, cell
    return float(m.group(0))


def test_ours_column_is_what_the_code_computes():
    """Each 'ours' value, recomputed (FVCA Table 1, AXIOMS Table 2 at T = 1 and 10,
    the TOP rod length and nutation period), to the digits written."""
    pytest.importorskip("scipy")
    computed = {}
    for r in reproduce.fvca_table1():
        computed[papers.flag_key("fvca-t1", (r["method"], r["quantity"], r["N"]))] = r["value"]
    for r in reproduce.axioms_table2(horizons=(1, 10)):
        computed[papers.flag_key("axioms-t2", (r["T"], r["method"], r["quantity"], r["N"]))] = \
            r["value"]
    computed["top-t1/l"] = 9.81 / (2 * math.pi) ** 2
    P = papers.TOP_TABLE3
    top = sp.systems.lagrange_top(P["m"], P["I"], P["I3"], P["l"], P["g"])
    q0 = np.array(P["q0"])
    computed["top-t3/nutation-period"] = sp.exact.lagrange_top_period(
        q0, top.mass(q0) @ np.array(P["qdot0"]), P["m"], P["I"], P["I3"], P["l"], P["g"])
    assert papers.TOP_TABLE1["l"] == pytest.approx(computed["top-t1/l"], rel=1e-15)
    for key, row in flagged_rows().items():
        ours = _first_number(row["ours"])
        digits = len(re.sub(r"[^0-9]", "", row["ours"].split("e")[0].lstrip("0.").split()[0]))
        assert computed[key] == pytest.approx(ours, rel=0.6 * 10.0 ** (1 - digits)), (key, ours)


def _slug(heading):
    """GitHub's anchor of a Markdown heading."""
    s = heading.strip().lower()
    s = re.sub(r"[^\w\- ]", "", s)
    return s.replace(" ", "-")


def _repository_text_files():
    skip = {".git", "build", "dist", "__pycache__", ".pytest_cache", ".ipynb_checkpoints"}
    for path in ROOT.rglob("*"):
        rel = path.relative_to(ROOT)
        if any(part in skip or part.endswith(".egg-info") or part.endswith("-venv")
               for part in rel.parts):
            continue
        if path.is_file() and path.suffix in {".py", ".c", ".h", ".md", ".ipynb", ".toml",
                                              ".cfg", ".txt", ".sh"}:
            yield rel, path.read_text(encoding="utf-8", errors="replace")
        elif path.is_file() and rel.parts[0] == ".ci":
            yield rel, path.read_text(encoding="utf-8", errors="replace")


def test_citations_point_into_docs_errata():
    """No file cites the papers folder's ERRATA.md (outside the repository); every
    docs/errata.md#anchor cited anywhere names a section that exists."""
    anchors = {_slug(m) for m in re.findall(r"^#+ (.+)$", _text(), flags=re.M)}
    stale, dangling, cited = [], [], 0
    for rel, text in _repository_text_files():
        if rel.name == "test_errata.py":
            continue
        if "ERRATA.md" in text or re.search(r"\bERRATA\b", text):
            stale.append(str(rel))
        for anchor in re.findall(r"errata\.md#([\w\-]+)", text):
            cited += 1
            if anchor not in anchors:
                dangling.append(f"{rel}: #{anchor}")
    assert stale == [], f"files citing ERRATA.md / ERRATA instead of docs/errata.md: {stale}"
    assert dangling == [], dangling
    assert cited >= 5


# ---------------------------------------------------------------- the paper's 3n formulation

M1 = M2 = 1.0
G = 9.81
L = G / (2 * math.pi) ** 2


def _mass(q):
    c = M2 * L * L * math.cos(q[0] - q[1])
    return np.array([[(M1 + M2) * L * L, c], [c, M2 * L * L]])


def _dmass_vv(q, v):
    """k -> v^T (dM/dq_k) v for the double pendulum."""
    s = M2 * L * L * math.sin(q[0] - q[1])
    return np.array([-2 * s * v[0] * v[1], 2 * s * v[0] * v[1]])


def _grad_v(q):
    return np.array([(M1 + M2) * G * L * math.sin(q[0]), M2 * G * L * math.sin(q[1])])


def _energy(q, p):
    return (0.5 * p @ np.linalg.solve(_mass(q), p)
            - (M1 + M2) * G * L * math.cos(q[0]) - M2 * G * L * math.cos(q[1]))


def _residual(x, qj, pj, h, printed):
    """TOP eqs. (18ara), (18arb) and (18arc) in the unknowns (q_m, p, q) -- (18arc)
    with the correction terms as printed (doubled) or corrected."""
    n = len(qj)
    qm, p, q = x[:n], x[n:2 * n], x[2 * n:]
    gl, gm, gr = (-3 * qj + 4 * qm - q) / h, (q - qj) / h, (qj - 4 * qm + 3 * q) / h
    f_qm = _mass(q) @ gr - _mass(qj) @ gl - h / 2 * _dmass_vv(qm, gm) + h * _grad_v(qm)
    f_p = (p - pj + h / 6 * _grad_v(qj) + 2 * h / 3 * _grad_v(qm) + h / 6 * _grad_v(q)
           - h / 12 * _dmass_vv(qj, gl) - h / 3 * _dmass_vv(qm, gm) - h / 12 * _dmass_vv(q, gr))
    c = 2.0 if printed else 1.0
    f_q = (_mass(qj) @ gl / 6 + 2 / 3 * _mass(qm) @ gm + _mass(q) @ gr / 6 - (p + pj) / 2
           - c * h / 24 * _dmass_vv(qj, gl) + c * h / 24 * _dmass_vv(q, gr)
           + c * h / 12 * _grad_v(qj) - c * h / 12 * _grad_v(q))
    return np.concatenate([f_qm, f_p, f_q])


def _step_3n(qj, pj, h, printed=False):
    """Newton on the 3n unknowns, finite-difference Jacobian, started from (q_j, p_j, q_j)."""
    x = np.concatenate([qj, pj, qj])
    for _ in range(50):
        r = _residual(x, qj, pj, h, printed)
        J = np.empty((x.size, x.size))
        for k in range(x.size):
            d = np.zeros(x.size)
            d[k] = 1e-7
            J[:, k] = (_residual(x + d, qj, pj, h, printed)
                       - _residual(x - d, qj, pj, h, printed)) / 2e-7
        dx = np.linalg.solve(J, -r)
        x = x + dx
        if np.max(np.abs(dx)) < 1e-15:
            break
    n = len(qj)
    return x[2 * n:], x[n:2 * n]


Q0 = np.array([math.pi / 4, math.pi / 3])


def test_three_n_formulation_gives_the_same_step():
    """docs/errata.md#simpson-newton-on-2n-unknowns: the library solves 2n equations;
    the paper's 3n system (corrected) has the same solution."""
    dp = sp.systems.double_pendulum(M1, M2, L, L, G)
    for q0, p0, h in ((Q0, np.zeros(2), 0.1), (Q0, np.array([0.3, -0.2]), 0.05),
                      (np.array([2.0, -1.0]), np.array([0.1, 0.4]), 0.01)):
        q1, p1 = _step_3n(q0, p0, h)
        Q1, P1 = sp.step(dp, q0, p0, h, method="simpson")
        assert np.max(np.abs(q1 - Q1)) <= 1e-14 and np.max(np.abs(p1 - P1)) <= 1e-14


def test_printed_eq_18arc_is_second_order():
    """docs/errata.md#top-appendix-a: with (18arc) as printed the relative energy
    error of the double pendulum over 1 s converges with order 2; corrected, 4."""
    hs = [0.1, 0.05, 0.025, 0.0125]
    orders = {}
    for printed in (True, False):
        errs = []
        for h in hs:
            q, p = Q0.copy(), np.zeros(2)
            H0, e = _energy(q, p), 0.0
            for _ in range(round(1.0 / h)):
                q, p = _step_3n(q, p, h, printed)
                e = max(e, abs(_energy(q, p) - H0) / abs(H0))
            errs.append(e)
        orders[printed] = np.polyfit(np.log(hs), np.log(errs), 1)[0]
    assert orders[True] == pytest.approx(2.0, abs=0.15)
    assert orders[False] == pytest.approx(4.0, abs=0.2)
