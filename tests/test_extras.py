"""The default install stays light: packages that only one feature needs (the extras in
pyproject.toml, named in jointlimits._optional) are imported neither by ``import jointlimits`` nor
on ``jointlimits demo``'s path, and a feature used without its extra stops with the CLI's one-line
error naming the extra (exit 2, no traceback). Each check runs in a fresh interpreter."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from jointlimits._optional import EXTRAS

#: import names of the feature-only packages and of what they alone pull in
FEATURE_ONLY = sorted({top for top, _ in EXTRAS.values()} | {"trimesh", "mujoco"})


def _python(code: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], cwd=cwd, capture_output=True, text=True, timeout=300
    )


def test_import_and_demo_load_no_feature_only_package(tmp_path: Path):
    res = _python(
        f"""
        import sys
        FEATURE_ONLY = {FEATURE_ONLY!r}
        import jointlimits
        loaded = [m for m in FEATURE_ONLY if m in sys.modules]
        assert not loaded, f"import jointlimits imported {{loaded}}"
        from jointlimits.cli import main
        main(["demo", "--out", "demo", "-q"], standalone_mode=False)
        loaded = [m for m in FEATURE_ONLY if m in sys.modules]
        assert not loaded, f"jointlimits demo imported {{loaded}}"
        print("ok")
        """,
        tmp_path,
    )
    assert res.returncode == 0 and res.stdout.split() == ["ok"], res.stderr
    assert (tmp_path / "demo" / "limits.html").is_file()


def _without(extra: str, args: list[str], cwd: Path) -> str:
    """stderr of the CLI run with the extra's package made unimportable (as if not installed)."""
    top = EXTRAS[extra][0]
    res = _python(
        f"""
        import sys
        sys.modules[{top!r}] = None  # import {top} now raises ModuleNotFoundError
        from jointlimits.cli import main
        sys.argv = ["jointlimits", *{args!r}]
        main()
        """,
        cwd,
    )
    assert res.returncode == 2, (res.returncode, res.stdout, res.stderr)
    lines = [l for l in res.stderr.splitlines() if l.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), res.stderr
    assert f"jointlimits[{extra}]" in lines[0] and EXTRAS[extra][1] in lines[0], lines[0]
    return lines[0]


@pytest.mark.parametrize(
    "extra, args",
    [
        ("studio", ["studio", "--port", "1"]),
        ("gltf", ["info", "clip.glb"]),
        ("implicit-draw", ["demo", "--shape", "implicit", "--out", "d", "-q"]),
        ("usd", ["info", "clip.usda"]),
    ],
)
def test_missing_extra_is_one_line_naming_it(extra: str, args: list[str], tmp_path: Path):
    line = _without(extra, args, tmp_path)
    assert "not installed" in line
    # the check comes before any work: nothing written
    assert not any(tmp_path.iterdir())


def test_missing_extra_from_the_library_is_an_import_error(tmp_path: Path):
    res = _python(
        """
        import sys
        sys.modules["pygltflib"] = None
        from jointlimits import JointLimitsError
        from jointlimits.io import gltf
        try:
            gltf.load("clip.glb")
        except ImportError as e:
            assert isinstance(e, JointLimitsError) and "jointlimits[gltf]" in str(e), e
            print("ok")
        """,
        tmp_path,
    )
    assert res.returncode == 0 and res.stdout.split() == ["ok"], res.stderr
