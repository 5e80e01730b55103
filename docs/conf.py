"""Sphinx configuration of the documentation site.

Build (from the repository root; warnings are errors):

    pip install -e ".[docs]" && sphinx-build -W --keep-going -c docs -b html . build/docs

The source directory is the *repository root*, not docs/: the site is made of
files that live where they belong -- docs/*.md, the notebooks in notebooks/
(executed at build time by myst-nb), benchmarks/RESULTS.md, and README.md (the front
page, docs/index.md, pulls it in by ``{include}``: it is not a page of its own) --
so that nothing is copied and nothing can drift, and the relative links those files already carry (``../docs/errata.md``
in the notebooks, ``results/*.png`` in the benchmark reports) resolve as they do
on GitHub.  ``include_patterns`` below lists exactly what is read.
"""
import inspect
import os
import pathlib
import re

# autodoc and the notebooks import the *installed* package (`pip install -e ".[docs]"`
# builds the C extension in place), not a path added here: a checkout without its
# built extension would shadow a working installation.

# The notebooks rely on matplotlib's inline backend (a figure is shown at the end
# of its cell).  A backend forced through the environment (MPLBACKEND=Agg, as the
# test suite sets) would reach the kernels and silently drop every figure.
os.environ.pop("MPLBACKEND", None)

import symplectic  # noqa: E402

project = "symplectic"
author = "the symplectic authors"
copyright = "the symplectic authors, MIT licence"
release = symplectic.__version__
version = release

extensions = [
    "myst_nb",                      # Markdown (MyST) pages and executed notebooks
    "sphinx.ext.autodoc",           # the API reference, from the docstrings
    "sphinx.ext.napoleon",          # ... written in numpydoc style
    "sphinx.ext.mathjax",
    "sphinx.ext.viewcode",
]

root_doc = "docs/index"
include_patterns = [
    "docs/**.md",
    "notebooks/*.ipynb",
    "benchmarks/RESULTS.md",
]
exclude_patterns = [
    "build", "dist", ".git", "**/.ipynb_checkpoints", "**/_build", "**/*-venv", "venv", ".venv",
    "**/jupyter_execute",
]
templates_path = ["_templates"]          # relative to this directory
# The site's entry page is docs/index.html; index.html at the top redirects there.
html_additional_pages = {"index": "redirect.html"}

# --------------------------------------------------------------------- MyST / notebooks
myst_enable_extensions = ["dollarmath", "amsmath", "colon_fence", "deflist"]
# GitHub-style anchors (docs/errata.md#fvca-table-1) for the links the Markdown files
# and notebooks already use.
myst_heading_anchors = 3
# The notebooks are committed without outputs: every one runs at every build, and a
# cell that raises fails the build.
nb_execution_mode = "force"
nb_execution_raise_on_error = True
nb_execution_timeout = 600
nb_execution_show_tb = True
nb_merge_streams = True

# --------------------------------------------------------------------- math
# MathJax from the site itself, so that the formulas render without a network (a local
# build, CI's headless browser): MathJax 2.7 as shipped by the jupyter-server-mathjax
# package (a dependency of the docs extra), copied into _static/mathjax.  Without that
# package, Sphinx's default (MathJax 3 from a CDN) is used.
try:
    import jupyter_server_mathjax as _jsm
    MATHJAX_DIR = pathlib.Path(_jsm.__file__).resolve().parent / "static"
except ImportError:                                   # pragma: no cover
    MATHJAX_DIR = None
if MATHJAX_DIR is not None and (MATHJAX_DIR / "MathJax.js").is_file():
    mathjax_path = "mathjax/MathJax.js?config=TeX-AMS-MML_HTMLorMML-full"
    # MyST marks its pages tex2jax_ignore and the math tex2jax_process (a MathJax 3
    # setting it writes itself): the same classes for MathJax 2.
    myst_update_mathjax = False
    mathjax2_config = {"tex2jax": {"processEscapes": True,
                                   "processClass": "tex2jax_process|mathjax_process|math|output_area",
                                   "ignoreClass": "tex2jax_ignore|mathjax_ignore|document"},
                       # the package ships the STIX-Web fonts only
                       "HTML-CSS": {"availableFonts": [], "webFont": "STIX-Web",
                                    "imageFont": None, "preferredFont": None},
                       "SVG": {"font": "STIX-Web"},
                       "showMathMenu": False, "messageStyle": "none"}
else:
    MATHJAX_DIR = None


def _copy_mathjax(app, exception):
    if exception is None and MATHJAX_DIR is not None and app.builder.format == "html":
        import shutil
        shutil.copytree(MATHJAX_DIR, pathlib.Path(app.outdir) / "_static" / "mathjax",
                        dirs_exist_ok=True)


# --------------------------------------------------------------------- autodoc
autodoc_default_options = {
    "members": True,
    "show-inheritance": True,
    "member-order": "bysource",
}
autodoc_typehints = "none"          # the docstrings state the types (numpydoc)
autoclass_content = "class"
napoleon_google_docstring = False
napoleon_numpy_docstring = True
napoleon_use_rtype = False
napoleon_use_ivar = True

# --------------------------------------------------------------------- HTML
html_theme = "furo"
html_title = f"symplectic {release}"
html_static_path = []
html_show_sourcelink = True


# --------------------------------------------------------------------- docstrings
# The package writes formulas in its docstrings as plain text, readable in help():
# |x| for an absolute value, ||x||_2 for a norm.  In reStructuredText |x| is a
# substitution reference, so docutils reports "Undefined substitution referenced".
# The bars are escaped here -- outside inline literals (``...``), literal blocks
# (after ::) and doctest blocks, where they are shown as written -- instead of
# wrapping every formula of the package in literal markup.  Every other docutils
# warning of a docstring still fails the build (-W).
def _escape_bars(line):
    parts = line.split("``")
    for k in range(0, len(parts), 2):          # even parts are outside ``...``
        parts[k] = parts[k].replace("|", "\\|")
    return "``".join(parts)


def _plain_text_math(app, what, name, obj, options, lines):
    literal_indent = None                      # indentation of the line ending with ::
    in_doctest = False
    for i, line in enumerate(lines):
        stripped = line.strip()
        indent = len(line) - len(line.lstrip())
        if literal_indent is not None:
            if not stripped or indent > literal_indent:
                continue
            literal_indent = None
        if in_doctest:
            if stripped:
                continue
            in_doctest = False
        if stripped.startswith(">>>"):
            in_doctest = True
            continue
        if "|" in line:
            lines[i] = _escape_bars(line)
        if stripped.endswith("::"):
            literal_indent = indent


_FIELD = re.compile(r"^(\w+(?:\s*,\s*\w+)+)\s*:\s*(.*)$")


def _split_attribute_fields(app, what, name, obj, options, lines):
    # numpydoc allows "q, p : ndarray (N+1, n)" for two attributes that share a type
    # and a description; napoleon renders that as one field named "p" of type "q,".
    # Runs before napoleon: such a field of an Attributes section becomes one field
    # per name, each with the shared type and description.
    out, i, in_attrs = [], 0, False
    while i < len(lines):
        line = lines[i]
        nxt = lines[i + 1] if i + 1 < len(lines) else ""
        if line.strip() and re.fullmatch(r"\s*-{3,}\s*", nxt):       # a section header
            in_attrs = line.strip() == "Attributes"
            out += [line, nxt]
            i += 2
            continue
        m = _FIELD.match(line) if in_attrs else None
        if not m:
            out.append(line)
            i += 1
            continue
        j = i + 1                                  # the description: the indented lines
        while j < len(lines) and (lines[j].startswith((" ", "\t")) or not lines[j].strip()):
            if not lines[j].strip() and not (j + 1 < len(lines) and lines[j + 1].startswith(" ")):
                break
            j += 1
        for field in (n.strip() for n in m.group(1).split(",")):
            out.append(f"{field} : {m.group(2)}".rstrip())
            out += lines[i + 1:j]
        i = j
    lines[:] = out


def _keep_public_functions(app, what, name, obj, skip, options):
    # A public function or class of a module is documented even without a docstring
    # (autodoc skips undocumented members by default); undocumented attributes of
    # classes stay out (dataclass fields are described in the class's docstring).
    if (what == "module" and skip and not name.startswith("_")
            and (inspect.isfunction(obj) or inspect.isclass(obj))
            and getattr(obj, "__module__", "").startswith("symplectic")):
        return False
    return None


def _public_bases(app, name, obj, options, bases):
    # Name base classes by their public names (symplectic.System, not its defining
    # module symplectic._model._system); drop the C type symplectic._core.System behind System.
    public = {id(getattr(symplectic, n)): f"symplectic.{n}" for n in symplectic.__all__
              if isinstance(getattr(symplectic, n, None), type)}
    out = []
    for b in bases:
        if getattr(b, "__module__", "") == "symplectic._core":
            continue
        out.append(f":py:class:`{public[id(b)]}`" if id(b) in public else b)
    bases[:] = out or [object]


def setup(app):
    app.connect("autodoc-process-docstring", _split_attribute_fields, priority=400)
    app.connect("autodoc-process-docstring", _plain_text_math)
    app.connect("autodoc-process-bases", _public_bases)
    app.connect("autodoc-skip-member", _keep_public_functions)
    app.connect("build-finished", _copy_mathjax)
