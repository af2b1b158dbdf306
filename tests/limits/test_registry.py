"""The shape registry: every registered class implements the Shape interface; the seed's
functions at ``jointlimits.limits``; unknown names list the choices."""

from __future__ import annotations

import numpy as np
import pytest


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


def test_seed_functions_at_the_package():
    from jointlimits import limits as L
    from jointlimits.limits import model

    for name in ("fit_box", "project_ellipsoid", "project_kdop", "soften", "subsample", "kdop_axes", "contains_box"):
        assert callable(getattr(L, name))
    assert model.SHAPES[:4] == ("box", "oriented-box", "ellipsoid", "kdop")
    shape = model.Shape("box", lo=[-1, -1, -1], hi=[1, 1, 1])
    assert type(shape).__name__ == "Box"
    np.testing.assert_array_equal(shape.project(np.array([[2.0, 0, 0]])), [[1.0, 0, 0]])


def test_unknown_shape_names_the_choices():
    from jointlimits.errors import LimitsError
    from jointlimits.limits import Shape

    with pytest.raises(LimitsError, match="implicit"):
        Shape("sphere")
