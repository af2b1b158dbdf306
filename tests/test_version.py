"""The version is written once, as ``jointlimits.__version__``; the installed package's metadata
reads it from there (scikit-build-core's regex provider, pyproject.toml)."""

from __future__ import annotations

import importlib.metadata

import pytest

import jointlimits


def test_installed_version_is_the_package_version():
    try:
        installed = importlib.metadata.version("jointlimits")
    except importlib.metadata.PackageNotFoundError:
        pytest.skip("jointlimits is not installed (run from the sources with PYTHONPATH=src)")
    assert jointlimits.__version__ == installed
