"""Compatibility name: ``jointlimits.phased`` is :mod:`jointlimits.limits._kernels.phased` (the same module object)."""

import importlib
import sys

sys.modules[__name__] = importlib.import_module("jointlimits.limits._kernels.phased")
