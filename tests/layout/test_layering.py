"""The package's layers, read from the source (the package is not imported).

``LAYERS`` below is the one definition of the layers (docs/architecture.md
shows the same table).  Checked:

- only ``symplectic._engine`` imports the C extension ``symplectic._core``, and
  it hands on exactly the names of the binding that the package uses;
- no circle of module-level imports among the package's modules;
- no module imports a module of a higher layer -- an import inside a function
  (made on first use) counts as a dependency too, unless ``UPWARD`` names it,
  with its reason;
- the C files stand in two folders: the core (``csrc/core/``: C99, no Python)
  and its CPython/NumPy binding (``csrc/binding/``); every C file of csrc/ is
  in one of them, and nothing in ``csrc/core/`` includes ``Python.h`` or
  NumPy's headers, directly or through a header (of either folder); and
  docs/architecture.md names every C file;
- every module of the package has a layer, and every name in the table is a
  module (a new module without a layer fails here);
- every private module stands in the folder of its layer (``FOLDERS``),
  except those that ``LOOSE`` names, with the reason;
- ``benchmarks/`` imports no private module of the package, except those
  that ``BENCH_PRIVATE`` names, with the reason;
- inside ``symplectic/control/`` no module reads another object's underscore
  member (``x._name`` with x not ``self`` or ``cls``; ``_name`` as a name
  imported from a module): each object's seams there are public, so that
  what one part uses of another shows in its code;
- the tests' folders: each test module's file name is unique (pytest imports
  them by name: the folders have no ``__init__.py``), helpers live in
  ``tests/support/``, and no test module imports ``conftest`` or another test
  module.
"""
import ast
import pathlib
import re

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
PKG = ROOT / "symplectic"
CSRC = ROOT / "csrc"
CORE, BINDING = CSRC / "core", CSRC / "binding"   # the C core; its CPython/NumPy binding
BENCH = ROOT / "benchmarks"
TESTS = pathlib.Path(__file__).resolve().parents[1]

#: The layers, lowest first.  A module may import modules of its own layer
#: and of the layers below it, never one above.  Names are the package's
#: top-level modules and subpackages, never a dotted name: ``__init__`` is the
#: package face, and a subpackage's name covers every module in it, so that a
#: module's layer is the layer of the folder it stands in.  (docs/architecture.md,
#: "Layers", mirrors this table.)
LAYERS = [
    ("engine", ["_engine", "_version"]), # the one importer of the C extension _core;
                                         # the package's version
    ("model", [                          # what is integrated, and the checks of it
        "_model", "forces", "systems", "linear", "symbolic"]),
    ("run", [                            # runs and their results
        "_run"]),
    ("tools", [                          # analysis, references, plots, the papers
        "analysis", "_choose", "_measures", "_structure", "_studies", "sensitivity", "control", "exact",
        "plot", "_optional", "papers", "_paper_tables", "_paper_figures", "reproduce",
        "multibody"]),
    ("face", ["__init__"]),              # the public names: import symplectic as sp
    ("cli", ["__main__"]),               # python -m symplectic: a user of the face
]

#: The folder of a layer's private modules.  Every private module of these
#: layers stands in its layer's folder (its public modules keep their public
#: names beside it), unless ``LOOSE`` names it.  The other layers have no
#: folder: the engine is one module, the face and the command line one each, and
#: the tools' few private helpers stand beside the public tools they serve.
FOLDERS = {"model": "_model", "run": "_run"}

#: Private modules of a layer with a folder that stand outside it, each with
#: its reason.  module: reason.
LOOSE = {}

#: Imports that run up a layer, each made inside a function (never at module
#: level) and each with its reason.  (importer, imported): reason.
UPWARD = {
    ("_model._system", "__init__"): "System.from_sympy reaches symbolic through the face "
                                    "(symplectic.__getattr__), so that _system never "
                                    "imports symbolic (tests/model/test_symbolic.py::"
                                    "test_system_does_not_import_symbolic)",
}

#: Private modules that benchmarks import, with the reason; every other
#: benchmark uses the public API only.  (file under benchmarks/, module named
#: relative to the package): reason.
BENCH_PRIVATE = {
    ("suite/plausibility.py", "_core"): "the binding's newton_system (residual and Jacobian of "
                                        "the Newton system at a state): no public function has it",
    ("suite/derivcheck.py", "_model._derivcheck"): "measures the first-use check itself "
                                                   "(_derivcheck.ensure, what integrate() "
                                                   "runs)",
    ("suite/progress.py", "_run._progress"): "measures one report of the progress bar "
                                             "(_progress.Bar.report) apart from a run",
}

_ENGINE, _CORE, _FACE = "_engine", "_core", "__init__"


def _modules():
    """{module name relative to the package: path} for every .py of the package."""
    mods = {}
    for path in sorted(PKG.rglob("*.py")):
        parts = list(path.relative_to(PKG).with_suffix("").parts)
        if parts[-1] == "__init__" and len(parts) > 1:
            parts = parts[:-1]
        mods[".".join(parts)] = path
    return mods


MODULES = _modules()


def _package_of(name):
    """The package a module's relative imports start from ('' = symplectic)."""
    if name == _FACE:
        return ""
    if MODULES[name].name == "__init__.py":
        return name
    return name.rpartition(".")[0]


def _target(dotted):
    """A module named relative to the package (dotted, '' = the package) as a
    key of MODULES, the extension _core, or the face."""
    if dotted == "":
        return _FACE
    return dotted


def _resolve_from(name, node):
    """The modules a ``from X import a, b`` in module ``name`` depends on."""
    if node.level:
        base = _package_of(name).split(".") if _package_of(name) else []
        base = base[:len(base) - (node.level - 1)] if node.level > 1 else base
        mod = ".".join(base + ([node.module] if node.module else []))
    elif node.module == "symplectic" or (node.module or "").startswith("symplectic."):
        mod = node.module[len("symplectic."):] if "." in node.module else ""
    else:
        return []
    out = []
    for alias in node.names:
        sub = f"{mod}.{alias.name}" if mod else alias.name
        if sub in MODULES or alias.name == _CORE:
            out.append(sub)
        else:
            out.append(_target(mod))
    return out


def _resolve_dynamic(name, call):
    """importlib.import_module("...") / __import__("...") with a literal name."""
    func = call.func
    fname = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
    if fname not in ("import_module", "__import__") or not call.args:
        return []
    arg = call.args[0]
    if not (isinstance(arg, ast.Constant) and isinstance(arg.value, str)):
        return []
    text = arg.value
    if text.startswith("."):
        pkg = _package_of(name)
        rel = text.lstrip(".")
        return [f"{pkg}.{rel}" if pkg else rel]
    if text == "symplectic" or text.startswith("symplectic."):
        return [_target(text[len("symplectic."):] if "." in text else "")]
    return []


def imports(name):
    """[(imported module, line, lazy)] of one module of the package: every
    import of a module of the package (or of _core); lazy = made inside a
    function."""
    tree = ast.parse(MODULES[name].read_text(), filename=str(MODULES[name]))
    found = []

    def visit(node, lazy):
        for child in ast.iter_child_nodes(node):
            inner = lazy or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef,
                                               ast.Lambda))
            targets = []
            if isinstance(child, ast.Import):
                for alias in child.names:
                    if alias.name == "symplectic":
                        targets.append(_FACE)
                    elif alias.name.startswith("symplectic."):
                        targets.append(alias.name[len("symplectic."):])
            elif isinstance(child, ast.ImportFrom):
                targets = _resolve_from(name, child)
            elif isinstance(child, ast.Call):
                targets = _resolve_dynamic(name, child)
            for t in targets:
                if t != name:
                    found.append((t, child.lineno, inner))
            visit(child, inner)

    visit(tree, False)
    return found


GRAPH = {name: imports(name) for name in MODULES}


def _layer_table():
    table = {}
    for rank, (layer, names) in enumerate(LAYERS):
        for n in names:
            table.setdefault(n, []).append((rank, layer))
    return table


def layer_of(name):
    """(rank, layer name) of a module: its own row, else its package's."""
    table = _layer_table()
    parts = name.split(".")
    for k in range(len(parts), 0, -1):
        key = ".".join(parts[:k])
        if key in table:
            return table[key][0]
    return None


def _where(name, line):
    return f"{MODULES[name].relative_to(ROOT)}:{line}"


# ---------------------------------------------------------------- the engine

def test_only_engine_imports_core():
    bad = [f"{_where(name, line)} imports symplectic._core"
           for name, deps in GRAPH.items() if name != _ENGINE
           for target, line, _lazy in deps if target == _CORE]
    assert not bad, ("only symplectic._engine imports the C extension; import _engine "
                     "(and add the name to its exports if it is new):\n  " + "\n  ".join(bad))
    assert any(t == _CORE for t, _, _ in GRAPH[_ENGINE]), "_engine does not import _core"


def _engine_exports():
    tree = ast.parse(MODULES[_ENGINE].read_text())
    exported, taken = None, set()
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "__all__"
                                                for t in node.targets):
            exported = set(ast.literal_eval(node.value))
        if isinstance(node, ast.ImportFrom) and node.module == _CORE:
            taken |= {a.asname or a.name for a in node.names}
    return exported, taken


def _engine_uses():
    """{name: [where]} of every ``_engine.NAME`` and ``from ._engine import NAME``."""
    used = {}
    for name, path in MODULES.items():
        if name == _ENGINE:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                    and node.value.id == _ENGINE):
                used.setdefault(node.attr, []).append(_where(name, node.lineno))
            elif (isinstance(node, ast.ImportFrom) and node.module
                  and node.module.rpartition(".")[2] == _ENGINE):
                for a in node.names:
                    used.setdefault(a.name, []).append(_where(name, node.lineno))
    return used


def test_engine_exports_what_the_package_uses():
    exported, taken = _engine_exports()
    assert exported is not None, "_engine has no __all__"
    assert exported == taken, (f"_engine's __all__ and its import from _core differ: "
                               f"{sorted(exported ^ taken)}")
    used = _engine_uses()
    missing = sorted(set(used) - exported)
    unused = sorted(exported - set(used))
    assert not missing, ("the package uses names that _engine does not export: "
                         + ", ".join(f"{n} ({used[n][0]})" for n in missing))
    assert not unused, (f"_engine exports names that no module of the package uses "
                        f"(drop them, or use them): {unused}")


# ---------------------------------------------------------------- circles

def _circles(graph):
    """The strongly connected components with more than one module (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []

    def strong(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            strong(v)
    return out


def test_no_circle_of_module_level_imports():
    # an import inside a function runs on first use, after every module has
    # loaded: it cannot close a circle at import time (it still counts for the
    # layers, below)
    graph = {name: sorted({t for t, _, lazy in deps if not lazy and t in MODULES})
             for name, deps in GRAPH.items()}
    circles = _circles(graph)
    text = []
    for comp in circles:
        ties = [f"{_where(a, line)} imports {b}" for a in comp
                for b, line, lazy in GRAPH[a] if not lazy and b in comp]
        text.append(" <-> ".join(comp) + ":\n    " + "\n    ".join(ties))
    assert not circles, "module-level imports form a circle:\n  " + "\n  ".join(text)


# ---------------------------------------------------------------- layers

def _upward():
    """{(importer, imported): [(line, lazy)]} of every import into a higher layer."""
    up = {}
    for name, deps in GRAPH.items():
        mine = layer_of(name)
        for target, line, lazy in deps:
            theirs = layer_of(target) if target in MODULES else None
            if mine is not None and theirs is not None and theirs[0] > mine[0]:
                up.setdefault((name, target), []).append((line, lazy))
    return up


def test_no_import_runs_up_a_layer():
    bad = []
    for (a, b), where in sorted(_upward().items()):
        for line, lazy in where:
            if (a, b) in UPWARD and lazy:
                continue
            how = "inside a function" if lazy else "at module level"
            bad.append(f"{_where(a, line)}: {a} ({layer_of(a)[1]}) imports {b} "
                       f"({layer_of(b)[1]}) {how}")
    assert not bad, ("an import runs up a layer (move what it needs down, or -- for an "
                     "import inside a function -- name it in UPWARD with the reason):\n  "
                     + "\n  ".join(bad))


def test_every_upward_exception_is_still_needed():
    up = _upward()
    stale = [f"{a} -> {b}" for (a, b) in UPWARD if not any(lazy for _, lazy in up.get((a, b), ()))]
    assert not stale, f"UPWARD names imports that no longer run up a layer: {stale}"
    assert all(reason.strip() for reason in UPWARD.values())


def test_every_module_has_one_layer():
    table = _layer_table()
    doubled = sorted(n for n, rows in table.items() if len(rows) > 1)
    assert not doubled, f"modules in more than one layer: {doubled}"
    none = sorted(n for n in MODULES if layer_of(n) is None)
    assert not none, (f"modules without a layer (add each to LAYERS in "
                      f"tests/layout/test_layering.py and to docs/architecture.md): {none}")
    ghosts = sorted(n for n in table if n not in MODULES)
    assert not ghosts, f"LAYERS names modules that do not exist: {ghosts}"


def _private(name):
    return any(part.startswith("_") and not part.startswith("__") for part in name.split("."))


def test_the_table_names_top_level_modules_only():
    # a dotted row would give one module of a folder a layer of its own
    dotted = sorted(n for _, names in LAYERS for n in names if "." in n)
    assert not dotted, (f"LAYERS names modules inside a folder {dotted}: the folder's row "
                        f"covers them (move the module to the folder of its layer)")


def test_each_private_module_stands_in_its_layers_folder():
    rank = {layer: k for k, (layer, _) in enumerate(LAYERS)}
    for layer, folder in FOLDERS.items():
        assert folder in dict(LAYERS)[layer], f"the folder {folder}/ is not in the row of {layer!r}"
        assert MODULES[folder].name == "__init__.py", f"{folder} is not a package"
    top = sorted(n for n in MODULES if "." not in n and _private(n))
    packages = sorted(n for n in top if MODULES[n].name == "__init__.py")
    stray = sorted(set(packages) - set(FOLDERS.values()))
    assert not stray, (f"private subpackages that are no layer's folder: {stray} (name each "
                       f"in FOLDERS, or move its modules into their layer's folder)")
    loose = []
    for name in top:
        mine = layer_of(name)
        if mine is None:            # test_every_module_has_one_layer names it
            continue
        folder = FOLDERS.get(mine[1])
        if folder and name != folder and name not in LOOSE:
            loose.append(f"{MODULES[name].relative_to(ROOT)} ({mine[1]}: belongs in "
                         f"symplectic/{folder}/)")
    assert not loose, ("private modules outside the folder of their layer (move them, or name "
                       "them in LOOSE with the reason):\n  " + "\n  ".join(loose))
    stale = sorted(n for n in LOOSE if n not in top or layer_of(n) is None
                   or layer_of(n)[1] not in FOLDERS)
    assert not stale, f"LOOSE names modules that are not loose: {stale}"
    assert all(reason.strip() for reason in LOOSE.values())
    # the folders read as the layers: lowest first
    assert [rank[layer] for layer in FOLDERS] == sorted(rank[layer] for layer in FOLDERS)


def test_the_layers_are_the_documented_ones():
    page = ROOT / "docs" / "architecture.md"
    if not page.is_file():       # the sanitizer run's copy of the tree has no docs/
        pytest.skip("docs/ is not next to the tests")
    doc = page.read_text()
    rows = {}
    for line in doc.splitlines():
        m = re.match(r"\|\s*\d+\s*\|\s*(\w+)\s*\|(.*?)\|", line)
        if m:
            rows[m.group(1)] = set(re.findall(r"`([\w.]+)`", m.group(2)))
    assert list(rows) == [layer for layer, _ in LAYERS], (
        f"docs/architecture.md's layer table has {list(rows)}")
    for layer, names in LAYERS:
        assert rows[layer] == set(names), (
            f"layer {layer!r}: docs/architecture.md differs from LAYERS by "
            f"{sorted(rows[layer] ^ set(names))}")


# ---------------------------------------------------------------- C includes

_INCLUDE = re.compile(r'^\s*#\s*include\s*[<"]([^>"]+)[>"]', re.M)


def _c_files():
    """Every C source and header under csrc/, at any depth (skips without the C sources next to
    the tests)."""
    if not CORE.is_dir():
        pytest.skip("the C sources are not next to the tests")
    return sorted(p for p in CSRC.rglob("*") if p.suffix in (".c", ".h") and p.is_file())


def _includes(files):
    """The #include targets of each file, by its name (the build searches csrc/binding/ and
    csrc/core/, so a quoted include names a file of either folder by its name)."""
    names = [p.name for p in files]
    assert len(names) == len(set(names)), "two C files of csrc/ share a name"
    return {p.name: _INCLUDE.findall(p.read_text()) for p in files}


def _reaches_python(name, inc, seen=None):
    """The chain by which a C file of csrc/ includes Python.h or a NumPy
    header, directly or through headers of csrc/ (None if it does not)."""
    seen = set() if seen is None else seen
    for h in inc.get(name, ()):
        if h == "Python.h" or h.startswith("numpy/"):
            return [name, h]
        if h in inc and h not in seen:
            seen.add(h)
            chain = _reaches_python(h, inc, seen)
            if chain:
                return [name] + chain
    return None


def test_every_c_file_is_in_the_core_or_the_binding():
    files = _c_files()
    assert files, "no C files under csrc/"
    stray = [str(p.relative_to(ROOT)) for p in files if p.parent not in (CORE, BINDING)]
    assert not stray, ("C files outside csrc/core/ (the core) and csrc/binding/ (its "
                       "binding):\n  " + "\n  ".join(stray))


def test_only_the_binding_includes_python():
    files = _c_files()
    inc = _includes(files)
    core = [p.name for p in files if p.parent == CORE]
    binding = [p.name for p in files if p.parent == BINDING]
    assert "symplectic.h" in core and "_coremodule.c" in binding   # the folders were read
    bad = [" -> ".join(chain) for f in core for chain in [_reaches_python(f, inc)] if chain]
    assert not bad, ("C of the core (csrc/core/) includes Python or NumPy:\n  "
                     + "\n  ".join(bad))
    # the check reads what it should: the binding's files do reach Python.h
    assert all(_reaches_python(f, inc) for f in binding if f.endswith(".c"))


def test_the_architecture_page_names_every_c_file():
    # docs/architecture.md's C section has a line for each file ("sym_x.c/.h": both)
    page = ROOT / "docs" / "architecture.md"
    if not page.is_file():   # a copy of the tree without docs/ (the sanitizer run's)
        pytest.skip("docs/architecture.md is not next to the tests")
    text = page.read_text()
    named = set(re.findall(r"\b(\w+\.[ch])\b", text))
    named |= {f"{stem}.h" for stem in re.findall(r"\b(\w+)\.c/\.h\b", text)}
    missing = [str(p.relative_to(ROOT)) for p in _c_files() if p.name not in named]
    assert not missing, "C files that docs/architecture.md does not name:\n  " + "\n  ".join(missing)


# ---------------------------------------------------------------- benchmarks

def _as_module(parts):
    """The module of the package (or _core) that a dotted path names: its
    longest leading part that is one -- else the whole path (no such module)."""
    for k in range(len(parts), 0, -1):
        key = ".".join(parts[:k])
        if key in MODULES or key == _CORE:
            return key
    return ".".join(parts)


def _private_imports(path):
    """[(module, line)] of the private modules of symplectic a file imports
    (``symplectic._x._y``, ``from symplectic._x import _y``, ``sp._x._y``),
    each named relative to the package."""
    tree = ast.parse(path.read_text())
    aliases, found = set(), []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                parts = a.name.split(".")
                if parts[0] == "symplectic":
                    if len(parts) == 1:
                        aliases.add(a.asname or a.name)
                    else:
                        found.append((_as_module(parts[1:]), node.lineno))
        elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "symplectic":
            parts = node.module.split(".")[1:]
            found += [(_as_module(parts + [a.name]), node.lineno) for a in node.names]
    inner = {id(node.value) for node in ast.walk(tree) if isinstance(node, ast.Attribute)}
    for node in ast.walk(tree):
        if not isinstance(node, ast.Attribute) or id(node) in inner:
            continue
        chain, base = [], node            # sp.a.b.c -> [a, b, c]
        while isinstance(base, ast.Attribute):
            chain.insert(0, base.attr)
            base = base.value
        if isinstance(base, ast.Name) and base.id in aliases:
            found.append((_as_module(chain), node.lineno))
    return [(mod, line) for mod, line in found if _private(mod)]


def test_benchmarks_use_the_public_api():
    if not BENCH.is_dir():       # the sdist ships no benchmarks/ (CI runs its tests too)
        pytest.skip("benchmarks/ is not next to the tests")
    seen, bad = set(), []
    for path in sorted(BENCH.rglob("*.py")):
        rel = path.relative_to(BENCH).as_posix()
        for mod, line in _private_imports(path):
            if (rel, mod) in BENCH_PRIVATE:
                seen.add((rel, mod))
            else:
                gone = "" if mod in MODULES or mod == _CORE else " (no such module)"
                bad.append(f"benchmarks/{rel}:{line} uses symplectic.{mod}{gone}")
    assert not bad, ("benchmarks measure the public API (or name the exception in "
                     "BENCH_PRIVATE):\n  " + "\n  ".join(bad))
    stale = sorted(set(BENCH_PRIVATE) - seen)
    assert not stale, f"BENCH_PRIVATE names uses that are gone: {stale}"


# ---------------------------------------------------------------- the tests' folders

def _imported_top_names(path):
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            names.add(node.module.split(".")[0])
    return names


#: The folders where no module reads another object's private member.
SEALED = ["control"]


def _private_reads(path):
    """(line, text) of each read of another object's underscore member in the
    module at ``path``: ``x._name`` (x not self or cls) and ``from m import
    _name``; private modules themselves (``from . import _costs``) are names
    of modules, not members, and pass."""
    out = []
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr.startswith("_") and \
                not node.attr.startswith("__"):
            if isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"):
                continue
            out.append((node.lineno, ast.unparse(node)))
        elif isinstance(node, ast.ImportFrom):
            where = path.parent
            for _ in range(max(node.level - 1, 0)):
                where = where.parent
            where = where.joinpath(*(node.module or "").split(".")) if node.module else where
            for alias in node.names:
                private = alias.name.startswith("_") and not alias.name.startswith("__")
                module = (where / f"{alias.name}.py").is_file() or (where / alias.name).is_dir()
                if private and not module:
                    out.append((node.lineno, f"from {'.' * node.level}{node.module or ''} "
                                             f"import {alias.name}"))
    return out


@pytest.mark.parametrize("folder", SEALED)
def test_no_module_reads_another_objects_private_member(folder):
    bad = [f"{p.relative_to(ROOT)}:{line}: {text}"
           for p in sorted((PKG / folder).rglob("*.py")) for line, text in _private_reads(p)]
    assert bad == []


def test_the_private_read_rule_catches_what_it_names(tmp_path):
    """The check sees an attribute of another object and an imported private name, and
    lets self, cls and private modules pass."""
    (tmp_path / "_costs.py").write_text("class _Term: pass\nclass Cost: pass\n", encoding="utf-8")
    path = tmp_path / "m.py"
    path.write_text("from . import _costs\nfrom ._costs import _Term, Cost\n"
                    "def f(pb, self, cls):\n    return pb._x, self._y, cls._z, _costs.Cost, "
                    "pb.__class__\n", encoding="utf-8")
    assert sorted(text for _, text in _private_reads(path)) == [
        "from ._costs import _Term", "pb._x"]


def test_the_tests_folders():
    files = sorted(p for p in TESTS.rglob("*.py") if "__pycache__" not in p.parts)
    rel = [p.relative_to(TESTS) for p in files]
    tests = [r for r in rel if r.name.startswith("test_")]
    assert len(tests) > 40, "the walk does not see the test modules"
    seen = {}
    for r in tests:
        seen.setdefault(r.name, []).append(r.as_posix())
    twice = {k: v for k, v in seen.items() if len(v) > 1}
    assert not twice, f"test modules of the same name in two folders: {twice}"
    loose = [r.as_posix() for r in tests if len(r.parts) == 1]
    assert not loose, f"test modules outside a folder of tests/: {loose}"
    inits = [r.as_posix() for r in rel if r.name == "__init__.py" and r.parts[0] != "support"]
    assert not inits, f"a test folder is a package (pytest then imports by package): {inits}"
    helpers = [r.as_posix() for r in rel if not r.name.startswith("test_")
               and r.as_posix() != "conftest.py" and r.parts[0] != "support"]
    assert not helpers, f"helpers outside tests/support/: {helpers}"
    mods = {r.stem for r in tests}
    bad = [f"tests/{r.as_posix()} imports {n}" for r, p in zip(rel, files)
           for n in sorted(_imported_top_names(p) & (mods | {"conftest"}))]
    assert not bad, ("a test module or helper imports conftest or a test module (import "
                     "helpers from tests/support/):\n  " + "\n  ".join(bad))
