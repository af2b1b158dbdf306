"""Compatibility name: ``jointlimits.reach`` is :mod:`jointlimits.limits.reach` (the same module object)."""

import importlib
import sys

sys.modules[__name__] = importlib.import_module("jointlimits.limits.reach")
