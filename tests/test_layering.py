"""The package's layers: a module imports only from its own layer and the layers below it.

Read from the source with ``ast`` (every import, including those inside functions), so a breach
fails here whether or not the import runs."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "jointlimits"

#: Bottom to top. A module's layer is its first package under ``jointlimits`` (or its own name at
#: the top level); it may import its own layer and any layer listed before it.
LAYERS: list[set[str]] = [
    {"errors", "_atomic", "_budget", "_names", "_native", "_optional", "_core"},
    {"motion"},
    {"io"},
    {"limits"},
    {"ik"},
    {"cleanup"},
    {"export"},
    {"viz"},
    {"integrations"},
    {"_diff", "torch", "jax"},
    {"corpus"},
    {"studio"},
    {"cli", "__main__"},
]
#: The package root re-exports the public names; it sits above everything.
TOP = {"__init__"}


def layer_of(part: str) -> int:
    if part in TOP:
        return len(LAYERS)
    for i, names in enumerate(LAYERS):
        if part in names:
            return i
    raise KeyError(part)


def module_name(path: Path) -> list[str]:
    parts = list(path.relative_to(PACKAGE).with_suffix("").parts)
    return parts


def imported(path: Path, text: str | None = None) -> list[tuple[int, str]]:
    """(line, first package under jointlimits) of every jointlimits import in ``path`` (or in
    ``text``, read as that module's source)."""
    own = module_name(path)
    pkg = own[:-1]  # the package a relative import starts from (also for __init__)
    out = []
    for node in ast.walk(ast.parse(path.read_text() if text is None else text)):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = pkg[: len(pkg) - (node.level - 1)]
                target = base + (node.module.split(".") if node.module else [])
                if not target:  # from . import x, at the top level
                    out += [(node.lineno, a.name) for a in node.names]
                    continue
                out.append((node.lineno, target[0]))
            elif node.module and node.module.split(".")[0] == "jointlimits":
                parts = node.module.split(".")[1:]
                if parts:
                    out.append((node.lineno, parts[0]))
                else:
                    out += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.Import):
            for a in node.names:
                parts = a.name.split(".")
                if parts[0] == "jointlimits" and len(parts) > 1:
                    out.append((node.lineno, parts[1]))
    return out


SOURCES = sorted(PACKAGE.rglob("*.py"))


def test_every_top_level_name_has_a_layer():
    for p in PACKAGE.iterdir():
        if p.suffix == ".py" or (p.is_dir() and (p / "__init__.py").exists()):
            layer_of(p.stem if p.suffix == ".py" else p.name)


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_imports_go_down(path: Path):
    own = module_name(path)
    mine = layer_of(own[0])
    breaches = [
        f"line {line}: imports jointlimits.{target} (layer {layer_of(target)} above layer {mine})"
        for line, target in imported(path)
        if layer_of(target) > mine
    ]
    assert not breaches, f"{path.relative_to(PACKAGE)}: " + "; ".join(breaches)


def test_the_check_sees_a_breach():
    # the rule reads lazy imports too: a limits module importing cleanup inside a function
    probe = PACKAGE / "limits" / "_layering_probe.py"  # read as source text, never written
    targets = [t for _, t in imported(probe, "def f():\n    from ..cleanup import tracking\n")]
    assert targets == ["cleanup"] and layer_of("cleanup") > layer_of("limits")


def test_no_compatibility_shims():
    # the old top-level aliases are gone; the package imports its real modules
    for name in ("model", "fused", "phased", "reach", "quat", "skeleton", "springs", "tracking"):
        assert not (PACKAGE / f"{name}.py").exists(), name


def _module_graph() -> dict[str, set[str]]:
    names = set()
    for p in PACKAGE.rglob("*.py"):
        n = ".".join(p.relative_to(PACKAGE.parent).with_suffix("").parts)
        names.add(n[:-9] if n.endswith(".__init__") else n)
    names.add("jointlimits._core")  # the compiled extension module: a leaf, imports nothing of ours
    graph: dict[str, set[str]] = {}
    for p in PACKAGE.rglob("*.py"):
        n = ".".join(p.relative_to(PACKAGE.parent).with_suffix("").parts)
        is_pkg = n.endswith(".__init__")
        name = n[:-9] if is_pkg else n
        pkg = name if is_pkg else name.rsplit(".", 1)[0]
        deps = set()
        for node in ast.walk(ast.parse(p.read_text())):  # function-level imports count too
            if isinstance(node, ast.ImportFrom):
                base = pkg.split(".")[: len(pkg.split(".")) - node.level + 1] if node.level else []
                m = ".".join(base + ([node.module] if node.module else [])) if node.level else (node.module or "")
                subs = [f"{m}.{a.name}" for a in node.names]
                deps.update(subs if all(s in names for s in subs) else [m])
            elif isinstance(node, ast.Import):
                deps.update(a.name for a in node.names)
        graph[name] = {d for d in deps if d in names and d != name}
    graph["jointlimits._core"] = set()
    return graph


def test_no_import_circles():
    graph = _module_graph()
    state: dict[str, int] = {}
    cycles = []

    def visit(u: str, stack: list[str]) -> None:
        state[u] = 1
        for v in graph[u]:
            if state.get(v) == 1:
                cycles.append(stack[stack.index(v) :] + [v])
            elif not state.get(v):
                visit(v, stack + [v])
        state[u] = 2

    for m in graph:
        if not state.get(m):
            visit(m, [m])
    assert not cycles, " ; ".join(" -> ".join(c) for c in cycles)
