"""The import graph of the package: no cycles between modules, and one-way layers.

Every module of dpaudit/, mechanisms/, algorithms/ and audits/ (installed as dpaudit, dpaudit.mechanisms,
dpaudit.algorithms, dpaudit.audits: `test_layout.module_files`) is parsed with `ast`, and each import of a
dpaudit module is an edge: module level or inside a function (a lazy import still runs), relative or
absolute.  `from package import name` is an edge to the submodule `package.name` when there is one, else
to the package's `__init__`.  The parent packages Python imports before a submodule are not edges (every
module would then depend on its package's `__init__`, and each `__init__` on its modules).

Layers, each importing only the ones below it: audits -> algorithms -> mechanisms -> core (dpaudit.*).

Exceptions, each with its reason:
- Imports under `if TYPE_CHECKING:` never run: they are checked against the layers (core may not even name
  an algorithm's type) but are not edges of the cycle check, so two modules may annotate with each other's
  types: the entry model (`dpaudit.entries`) runs entries with `dpaudit.entry_runner` into the records of
  `dpaudit.records`, and both name the model's types in their annotations.
- The front door's lazy names (`dpaudit.__getattr__`, `dpaudit._moved.forward`) import by name with
  `importlib`, not with an import statement: they are not edges, and name only modules of their own layer
  or below (checked in `test_front_door_and_forwards_name_no_higher_layer`).
"""

import ast
import pathlib

import pytest
from test_layout import MOVED, TOP_FOLDERS, module_files

MODULES = module_files()

#: The layer of each top-level package (a module is in the layer of the longest prefix it has).
LAYERS = {"dpaudit": 0, "dpaudit.mechanisms": 1, "dpaudit.algorithms": 2, "dpaudit.audits": 3}
assert set(LAYERS) == set(TOP_FOLDERS.values())


def layer(module: str) -> int:
    top = max((p for p in LAYERS if module == p or module.startswith(p + ".")), key=len)
    return LAYERS[top]


def _type_checking_nodes(tree: ast.AST) -> set[int]:
    """ids of the nodes inside `if TYPE_CHECKING:` blocks (`typing.TYPE_CHECKING` too)."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If):
            test = node.test
            name = test.id if isinstance(test, ast.Name) else test.attr if isinstance(test, ast.Attribute) else ""
            if name == "TYPE_CHECKING":
                out.update(id(n) for stmt in node.body for n in ast.walk(stmt))
    return out


def _resolve(name: str) -> str | None:
    """The module `name` is, or the package that defines it (a name imported from a package)."""
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def imports(module: str) -> list[tuple[str, bool]]:
    """(imported dpaudit module, whether the import runs) for every import statement of `module`."""
    path = MODULES[module]
    tree = ast.parse(path.read_text(), str(path))
    typing_only = _type_checking_nodes(tree)
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join(anchor + ([node.module] if node.module else []))
            names = [f"{base}.{a.name}" if f"{base}.{a.name}" in MODULES else base for a in node.names]
        else:
            continue
        for name in names:
            target = _resolve(name) if name == "dpaudit" or name.startswith("dpaudit.") else None
            if target is not None and target != module:
                out.append((target, id(node) not in typing_only))
    return out


GRAPH = {m: imports(m) for m in MODULES}


def _cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(edges[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return found


def test_the_graph_sees_the_package():
    """The parser finds the modules and their imports (a broken walk would pass every check below)."""
    assert len(MODULES) > 100
    assert ("dpaudit.audit.auditor", True) in GRAPH["dpaudit.audit"]
    assert ("dpaudit.registry", True) in GRAPH["dpaudit.audits.mab.entries"]
    assert ("dpaudit.entries", False) in GRAPH["dpaudit.entry_runner"]  # annotation-only, under TYPE_CHECKING


def test_no_import_cycles():
    edges = {m: {t for t, runs in GRAPH[m] if runs} for m in MODULES}
    assert _cycles(edges) == []


def test_cycle_detection_finds_a_cycle():
    """Twin: the check fails on a graph with a cycle (and sees through a longer loop)."""
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


@pytest.mark.parametrize("top", sorted(LAYERS))
def test_layers_import_only_downwards(top):
    """audits -> algorithms -> mechanisms -> core: no module imports a higher layer, not even for annotations."""
    upward = sorted(
        f"{m} -> {t}" for m in MODULES if layer(m) == LAYERS[top] for t, _ in GRAPH[m] if layer(t) > layer(m)
    )
    assert upward == []


def test_front_door_and_forwards_name_no_higher_layer():
    """The names imported with importlib (the front door's, and the moved names' forwards listed in
    `test_layout.MOVED`) stay in their layer or go below it."""
    import dpaudit

    for name, module in dpaudit._FRONT_DOOR.items():
        assert layer(module) == 0, name
    for old, names in MOVED.items():
        for name, new in names.items():
            assert new in MODULES and layer(new) <= layer(old), (old, name, new)


def test_the_old_cycle_is_gone():
    """Regression: dpaudit.audits.catalog, .run and .one_run imported each other (privately, inside
    functions); the entry model and its runner now live in core, and those modules only forward names."""
    for old in ("dpaudit.audits.catalog", "dpaudit.audits.run", "dpaudit.audits.one_run"):
        assert {t for t, _ in GRAPH[old]} == {"dpaudit._moved"}, old
    assert ("dpaudit.entry_runner", True) in GRAPH["dpaudit.entries"]
    assert all(not runs for t, runs in GRAPH["dpaudit.entry_runner"] if t == "dpaudit.entries")


def test_relative_imports_resolve(tmp_path: pathlib.Path):
    """`from . import x` and `from .x import y` become edges like their absolute spelling."""
    tree = ast.parse("from . import records\nfrom .audit import chunks\n")
    nodes = [n for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)]
    assert [(n.level, n.module) for n in nodes] == [(1, None), (1, "audit")]
    path = tmp_path / "probe.py"
    path.write_text("from . import records\nfrom .audit import chunks\nfrom .entries import Claim\n")
    MODULES["dpaudit._probe"] = path
    try:
        assert [t for t, _ in imports("dpaudit._probe")] == [
            "dpaudit.records",
            "dpaudit.audit.chunks",
            "dpaudit.entries",
        ]
    finally:
        del MODULES["dpaudit._probe"]


def test_no_test_module_imports_the_name_tests():
    """Our test modules import their helpers by their own names, never as `tests.…`: diffprivlib installs a
    top-level package `tests` that would shadow ours."""
    root = pathlib.Path(__file__).parent
    for path in root.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = (
                [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else [node.module or ""]
                if isinstance(node, ast.ImportFrom) and node.level == 0
                else []
            )
            assert not any(n == "tests" or n.startswith("tests.") for n in names), f"{path}:{node.lineno}"
