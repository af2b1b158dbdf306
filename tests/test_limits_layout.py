"""The limits package's layout: registry, old names, no import circles."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import numpy as np
import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "jointlimits"


def _module_graph() -> dict[str, set[str]]:
    names = set()
    for p in SRC.rglob("*.py"):
        n = ".".join(p.relative_to(SRC.parent).with_suffix("").parts)
        names.add(n[:-9] if n.endswith(".__init__") else n)
    names.add("jointlimits._core")  # the compiled core (a leaf: it imports nothing of ours)
    graph: dict[str, set[str]] = {}
    for p in SRC.rglob("*.py"):
        n = ".".join(p.relative_to(SRC.parent).with_suffix("").parts)
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
                cycles.append(stack[stack.index(v):] + [v])
            elif not state.get(v):
                visit(v, stack + [v])
        state[u] = 2

    for m in graph:
        if not state.get(m):
            visit(m, [m])
    assert not cycles, " ; ".join(" -> ".join(c) for c in cycles)


def test_registry_classes_implement_the_shape_interface():
    from jointlimits.limits import registry
    from jointlimits.limits.shape import Shape

    for kind in registry.SHAPES:
        cls = registry.shape_class(kind)
        assert issubclass(cls, Shape) and cls.kind == kind
        for name in ("fit", "project", "contains", "radius", "swing_section", "twist_interval", "to_dict"):
            impl, base = getattr(cls, name), getattr(Shape, name)
            assert getattr(impl, "__func__", impl) is not getattr(base, "__func__", base), (kind, name)
    for kind in registry.JOINT_LIMIT_CLASSES:
        assert registry.joint_limit_class(kind).kind == kind


def test_old_names_still_work():
    from jointlimits import limits as L
    from jointlimits import fused, model, phased, reach

    assert fused is importlib.import_module("jointlimits.limits._kernels.fused")
    assert phased is importlib.import_module("jointlimits.limits._kernels.phased")
    assert model is importlib.import_module("jointlimits.limits.model")
    assert reach is importlib.import_module("jointlimits.limits.reach")
    for name in ("fit_box", "project_ellipsoid", "project_kdop", "soften", "subsample", "kdop_axes", "contains_box"):
        assert callable(getattr(L, name))
    assert model.SHAPES[:4] == ("box", "oriented-box", "ellipsoid", "kdop")
    shape = model.Shape("box", lo=[-1, -1, -1], hi=[1, 1, 1])
    assert type(shape).__name__ == "Box"
    np.testing.assert_array_equal(shape.project(np.array([[2.0, 0, 0]])), [[1.0, 0, 0]])
    assert callable(fused.pack_limit) and callable(fused.project_fitted) and callable(phased.project_phased)


def test_unknown_shape_names_the_choices():
    from jointlimits.errors import LimitsError
    from jointlimits.limits import Shape

    with pytest.raises(LimitsError, match="implicit"):
        Shape("sphere")
