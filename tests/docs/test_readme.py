"""The README is a front page: short, with the two set-up commands CI extracts, and links that
resolve to the pages of the documentation (its Python examples run in tests/docs/test_docs_pages.py)."""
import pathlib
import re
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
README = ROOT / "README.md"


def text():
    return README.read_text(encoding="utf-8")


def test_readme_is_a_front_page():
    """Under 20 KB and about 150-200 lines: the user guide lives in docs/guide/."""
    assert len(text().encode("utf-8")) < 20_000
    assert len(text().splitlines()) <= 200
    assert text().count("```python") >= 2          # a first example (run by test_docs_pages)


def test_the_two_set_up_commands():
    """Both commands, each under its comment line, as CI reads them (.ci/run extracts the line
    after "# 2. install and run the test suite")."""
    t = text()
    assert ("```bash\n# 1. install and reproduce the papers' published results on the built-in "
            "systems\npip install -e \".[all]\" && python -m symplectic reproduce --out results\n"
            "```") in t
    assert ("```bash\n# 2. install and run the test suite\npip install -e \".[test]\" && "
            "python -m pytest\n```") in t
    awk = subprocess.run(["awk", '/^# 2\\. install and run the test suite/{getline; print; exit}',
                          str(README)], capture_output=True, text=True)
    if awk.returncode == 0:
        assert awk.stdout.strip() == 'pip install -e ".[test]" && python -m pytest'


LINK = re.compile(r"\]\(([^)#\s]+)(#[^)\s]*)?\)")


def test_every_relative_link_resolves():
    """Every link to a file of the repository names a file that exists (GitHub shows the README
    with these links; the docs site rewrites those into docs/)."""
    links = [m.group(1) for m in LINK.finditer(text()) if "://" not in m.group(1)]
    assert links
    missing = [lk for lk in links if not (ROOT / lk).is_file()]
    if not (ROOT / "docs").is_dir():
        pytest.skip("docs/ is not in this tree")
    assert missing == []


def test_every_guide_page_is_linked():
    """The README's list of the guide names each page of docs/guide/ (the index aside)."""
    guide = ROOT / "docs" / "guide"
    if not guide.is_dir():
        pytest.skip("docs/ is not in this tree")
    pages = {f"docs/guide/{p.name}" for p in guide.glob("*.md") if p.name != "index.md"}
    linked = {m.group(1) for m in LINK.finditer(text())}
    assert pages and pages <= linked, sorted(pages - linked)
    for page in ("docs/performance.md", "docs/results.md", "docs/theory.md", "docs/errata.md"):
        assert page in linked, page
