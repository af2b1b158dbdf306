"""Compatibility name: ``jointlimits.model`` is :mod:`jointlimits.limits.model` (the same module object)."""

import importlib
import sys

sys.modules[__name__] = importlib.import_module("jointlimits.limits.model")
