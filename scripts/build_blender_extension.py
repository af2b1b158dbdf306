"""Build the Blender extension zip: the add-on (blender/jointlimits_blender), the project's wheel
built from this checkout, and scipy's wheel for Blender's Python (3.11), listed in the manifest.

    python scripts/build_blender_extension.py [-o dist/] [--wheel WHEEL] [--scipy-wheel WHEEL]

Without --wheel it runs ``pip wheel . --no-deps`` (compiles the core, about a minute); without
--scipy-wheel it runs ``pip download scipy`` for CPython 3.11 on the platform below. Blender
provides numpy; the other dependencies of the wheel (click, matplotlib, plotly, tqdm) are only
used by the command line and the figures, never by the add-on's operators.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ADDON = ROOT / "blender" / "jointlimits_blender"
#: Blender platform -> pip platform tag of the scipy wheel
PLATFORMS = {"linux-x64": "manylinux2014_x86_64"}
SCIPY = "scipy>=1.11,<1.17"  # 1.17 needs numpy>=2 at run time; Blender 4.5 ships numpy 1.26


def wheel_from_tree(out_dir: Path) -> Path:
    """A wheel of the jointlimits package as it is importable here (its compiled core included),
    without building: for tests, where compiling again would cost a minute."""
    import jointlimits
    from jointlimits._native import _core

    pkg = Path(jointlimits.__file__).parent
    # an editable install keeps the compiled core in its build folder, not beside the sources
    core = Path(_core.__file__)
    tag = core.name.split(".")[1]  # e.g. cpython-311-x86_64-linux-gnu
    py = "cp" + tag.split("-")[1]
    name = f"jointlimits-{jointlimits.__version__}-{py}-{py}-linux_x86_64.whl"
    info = f"jointlimits-{jointlimits.__version__}.dist-info"
    out = out_dir / name
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
        for f in sorted(pkg.rglob("*")):
            if f.is_file() and "__pycache__" not in f.parts and not (f.name.startswith("_core.") and f.suffix == ".so"):
                z.write(f, f"jointlimits/{f.relative_to(pkg).as_posix()}")
        z.write(core, f"jointlimits/{core.name}")
        z.writestr(
            f"{info}/METADATA", f"Metadata-Version: 2.1\nName: jointlimits\nVersion: {jointlimits.__version__}\n"
        )
        z.writestr(
            f"{info}/WHEEL",
            f"Wheel-Version: 1.0\nGenerator: jointlimits\nRoot-Is-Purelib: false\nTag: {py}-{py}-linux_x86_64\n",
        )
        z.writestr(f"{info}/RECORD", "")
    return out


def build(
    out_dir: Path, wheel: Path | None, scipy_wheel: Path | None, platform: str = "linux-x64", scipy: bool = True
) -> Path:
    """The extension zip in ``out_dir``; ``wheel="tree"`` packs the importable package
    (:func:`wheel_from_tree`); ``scipy=False`` leaves scipy out (Blender's Python has it)."""
    with tempfile.TemporaryDirectory(prefix="jl-ext-") as tmp:
        wheels = Path(tmp) / "wheels"
        wheels.mkdir()
        if str(wheel) == "tree":
            wheel = wheel_from_tree(wheels)
        if wheel is None:
            subprocess.run(
                [sys.executable, "-m", "pip", "wheel", str(ROOT), "--no-deps", "-q", "-w", str(wheels)], check=True
            )
            (wheel,) = wheels.glob("jointlimits-*.whl")
        if scipy_wheel is None and scipy:
            subprocess.run(
                [sys.executable, "-m", "pip", "download", SCIPY, "--only-binary=:all:", "--no-deps", "-q",
                 "--python-version", "3.11", "--platform", PLATFORMS[platform], "-d", str(wheels)],
                check=True,
            )  # fmt: skip
            (scipy_wheel,) = wheels.glob("scipy-*.whl")
        manifest = (ADDON / "blender_manifest.toml").read_text()
        bundled = [w for w in (wheel, scipy_wheel) if w is not None]
        listed = ", ".join(f'"./wheels/{w.name}"' for w in bundled)
        manifest = re.sub(r"(?m)^wheels = \[.*\]$", f"wheels = [{listed}]", manifest)
        manifest = re.sub(r"(?m)^platforms = \[.*\]$", f'platforms = ["{platform}"]', manifest)
        version = re.search(r'(?m)^version = "([^"]+)"', manifest).group(1)  # type: ignore[union-attr]
        out_dir.mkdir(parents=True, exist_ok=True)
        out = out_dir / f"jointlimits_blender-{version}-{platform}.zip"
        with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
            z.writestr("blender_manifest.toml", manifest)
            for f in sorted(ADDON.glob("*.py")):
                z.write(f, f.name)
            for w in bundled:
                z.write(w, f"wheels/{w.name}", compress_type=zipfile.ZIP_STORED)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-o", "--out", type=Path, default=ROOT / "dist")
    ap.add_argument(
        "--wheel", type=Path, help="the project's wheel (default: build it; 'tree': pack the importable package)"
    )
    ap.add_argument("--no-scipy", action="store_true", help="do not bundle scipy (the Python running Blender has it)")
    ap.add_argument("--scipy-wheel", type=Path, help="scipy's wheel for CPython 3.11 (default: download it)")
    ap.add_argument("--platform", default="linux-x64", choices=sorted(PLATFORMS))
    a = ap.parse_args(argv)
    print(build(a.out, a.wheel, a.scipy_wheel, a.platform, scipy=not a.no_scipy))
    return 0


if __name__ == "__main__":
    sys.exit(main())
