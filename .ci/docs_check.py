"""Check a built documentation site (called by .ci/docs).

    python .ci/docs_check.py SITE_DIR [--screenshots DIR]

1. The API reference documents every public name: each name of the ``__all__`` of
   symplectic and of each documented submodule (for a module without ``__all__``:
   each public function and class defined in it) has its anchor on the module's page.
2. In headless Chromium (Debian's chromium + chromium-driver, driven by selenium;
   no network: every host name resolves to nothing), the pages render:
   - the front page: its figures are present and loaded (``complete`` and
     ``naturalWidth > 0`` in the DOM after scrolling each into view);
   - every tutorial (one page per notebook of notebooks/): it has executed output
     cells (the notebooks are committed without outputs, so any output comes from
     the build), at least one output figure, and every figure is loaded; the FVCA
     tutorial prints the exact pendulum period 1.1803405990 s (FVCA's T);
   - the page on the method: MathJax (served by the site itself) typeset its
     formulas, with no "Math Processing Error".
Exit status 0 when every check passes, 1 otherwise (each failure is printed).
"""
import argparse
import importlib
import inspect
import pathlib
import re
import sys

MODULE_PAGES = {                     # module -> page of the API reference
    "symplectic": "docs/api/symplectic.html",
    "symplectic.systems": "docs/api/systems.html",
    "symplectic.exact": "docs/api/exact.html",
    "symplectic.linear": "docs/api/linear.html",
    "symplectic.analysis": "docs/api/analysis.html",
    "symplectic.forces": "docs/api/forces.html",
    "symplectic.plot": "docs/api/plot.html",
    "symplectic.symbolic": "docs/api/symbolic.html",
    "symplectic.papers": "docs/api/papers.html",
    "symplectic.reproduce": "docs/api/reproduce.html",
}
NOTEBOOKS = sorted(p.stem for p in (pathlib.Path(__file__).resolve().parent.parent
                                    / "notebooks").glob("*.ipynb"))
FVCA_PERIOD = "exact nonlinear period T = 1.1803405990 s"

failures = []


def check(cond, what):
    print(("ok    " if cond else "FAIL  ") + what)
    if not cond:
        failures.append(what)
    return cond


def public_names(modname):
    mod = importlib.import_module(modname)
    if hasattr(mod, "__all__"):
        names = [n for n in mod.__all__ if n != "__version__"]
    else:
        names = [n for n, v in vars(mod).items() if not n.startswith("_")
                 and (inspect.isfunction(v) or inspect.isclass(v))
                 and getattr(v, "__module__", None) == modname]
    # submodules have their own pages; data are documented when they carry a doc comment
    return [n for n in names if not inspect.ismodule(getattr(mod, n))
            and (callable(getattr(mod, n)) or inspect.isclass(getattr(mod, n)))]


def check_api(site):
    for modname, page in MODULE_PAGES.items():
        path = site / page
        if not check(path.is_file(), f"API page {page} exists"):
            continue
        ids = set(re.findall(r'id="([^"]+)"', path.read_text(encoding="utf-8")))
        names = public_names(modname)
        missing = [n for n in names if f"{modname}.{n}" not in ids]
        check(names and not missing,
              f"{page}: all {len(names)} public names of {modname} documented"
              + (f" (missing: {missing})" if missing else ""))


JS_IMAGES = """
const imgs = Array.from(document.querySelectorAll(arguments[0]));
return imgs.map(i => ({src: i.getAttribute('src'), complete: i.complete,
                       w: i.naturalWidth, h: i.naturalHeight,
                       shown: i.getBoundingClientRect().width}));
"""


def loaded_images(driver, selector):
    """The images matching selector, each scrolled into view and waited for."""
    from selenium.webdriver.support.ui import WebDriverWait
    for el in driver.find_elements("css selector", selector):
        driver.execute_script("arguments[0].scrollIntoView();", el)
    WebDriverWait(driver, 30).until(lambda d: d.execute_script(
        "return Array.from(document.querySelectorAll(arguments[0])).every(i => i.complete);",
        selector))
    return driver.execute_script(JS_IMAGES, selector)


def check_images(page, imgs, minimum):
    check(len(imgs) >= minimum, f"{page}: {len(imgs)} figure(s), at least {minimum}")
    bad = [i["src"] for i in imgs if not (i["complete"] and i["w"] > 0 and i["h"] > 0
                                          and i["shown"] > 0)]
    check(not bad, f"{page}: every figure loaded (naturalWidth > 0) and shown"
          + (f" (not: {bad})" if bad else ""))


def check_browser(site, shots):
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    opts = webdriver.ChromeOptions()
    opts.binary_location = "/usr/bin/chromium"
    for a in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
              "--window-size=1280,1600", "--host-resolver-rules=MAP * ~NOTFOUND"):
        opts.add_argument(a)
    driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=opts)
    driver.set_page_load_timeout(60)
    try:
        def load(page):
            driver.get((site / page).resolve().as_uri())
            return driver.find_element("tag name", "body").text

        # the front page
        text = load("docs/index.html")
        check("A first example" in text and "Set-up" in text,
              "docs/index.html: the README's opening (set-up, first example) is shown")
        imgs = loaded_images(driver, "article img")
        check_images("docs/index.html", imgs, 1)
        check(any("axioms_fig6_energy" in (i["src"] or "") for i in imgs),
              "docs/index.html: the energy-error figure is among them")
        if shots:
            driver.save_screenshot(str(shots / "index.png"))

        # the tutorials, executed at build time
        check(len(NOTEBOOKS) >= 2, f"{len(NOTEBOOKS)} notebooks in notebooks/")
        for nb in NOTEBOOKS:
            page = f"notebooks/{nb}.html"
            if not check((site / page).is_file(), f"{page} exists"):
                continue
            text = load(page)
            n_out = len(driver.find_elements("css selector", "div.cell_output"))
            check(n_out >= 1, f"{page}: {n_out} executed output cell(s)")
            check_images(page, loaded_images(driver, "div.cell_output img"), 1)
            if nb == "fvca_pendulum":
                check(FVCA_PERIOD in text, f"{page}: prints {FVCA_PERIOD!r}")
                if shots:
                    driver.save_screenshot(str(shots / "fvca_pendulum.png"))

        # the method: formulas typeset by the site's own MathJax
        load("docs/theory.html")
        driver.set_script_timeout(60)
        ready = driver.execute_async_script(
            "const done = arguments[arguments.length - 1];"
            "if (!window.MathJax || !MathJax.Hub) { done(false); return; }"
            "MathJax.Hub.Queue(() => done(true));")
        check(ready, "docs/theory.html: MathJax loaded from the site")
        n_math = len(driver.find_elements("css selector", ".MathJax, .MathJax_Display"))
        text = driver.find_element("tag name", "body").text
        check(n_math >= 50, f"docs/theory.html: {n_math} formulas typeset")
        check("Math Processing Error" not in text, "docs/theory.html: no Math Processing Error")
        if shots:
            driver.save_screenshot(str(shots / "theory.png"))
    finally:
        driver.quit()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("site", type=pathlib.Path)
    ap.add_argument("--screenshots", type=pathlib.Path)
    args = ap.parse_args()
    if args.screenshots:
        args.screenshots.mkdir(parents=True, exist_ok=True)
    check_api(args.site)
    check_browser(args.site, args.screenshots)
    print(f"docs check: {len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
