"""MkDocs hook: run every script in ``examples/`` at build time and build the gallery from them.

Each example is run with the Python that runs MkDocs, in a fresh temporary folder given as its
only argument; the PNGs it writes there become ``examples/<name>.png`` in the built site, and the
gallery page (``examples/index.md``) shows per example its docstring, its figures and its
source. A failing example fails the build. Nothing generated is written into the repository.
"""

from __future__ import annotations

import ast
import logging
import os
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from mkdocs.exceptions import PluginError
from mkdocs.structure.files import File

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
TIMEOUT = 120  # seconds per example

_tmp: tempfile.TemporaryDirectory | None = None
log = logging.getLogger("mkdocs.hooks.examples")


def _run(script: Path, out: Path) -> tuple[Path, list[Path], str, float]:
    out.mkdir(parents=True)
    env = dict(os.environ, MPLBACKEND="Agg", OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
    if env.get("PYTHONPATH"):  # the script runs in its own folder: keep e.g. PYTHONPATH=src pointing at src
        env["PYTHONPATH"] = os.pathsep.join(str(Path(p).resolve()) for p in env["PYTHONPATH"].split(os.pathsep) if p)
    t0 = time.perf_counter()
    try:
        res = subprocess.run(
            [sys.executable, str(script), str(out)],
            cwd=out,
            env=env,
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise PluginError(f"example {script.name} ran longer than {TIMEOUT} s") from None
    if res.returncode != 0:
        raise PluginError(f"example {script.name} failed (exit {res.returncode}):\n{res.stderr[-3000:]}")
    pngs = sorted(out.glob("*.png"))
    if not pngs:
        raise PluginError(f"example {script.name} wrote no PNG")
    return script, pngs, res.stdout, time.perf_counter() - t0


def _page(results: list[tuple[Path, list[Path], str, float]]) -> str:
    parts = [
        "# Examples",
        "",
        (
            "Short scripts in the repository's `examples/` folder, using only the built-in procedural "
            "humanoid (`jointlimits.motion.procedural`), so they run anywhere. Each figure below was made "
            "by running the script beside it when this site was built: "
            "`python examples/NAME.py OUT_DIR` writes its PNGs to `OUT_DIR` (default: the current folder)."
        ),
        "",
    ]
    for script, pngs, stdout, _seconds in results:
        doc = ast.get_docstring(ast.parse(script.read_text())) or ""
        parts += [f"## {script.stem.replace('_', ' ').capitalize()}", "", doc, ""]
        parts += [f"![{png.stem}]({script.stem}/{png.name})" + "\n" for png in pngs]
        if stdout.strip():
            parts += ["It prints:", "", "```text", stdout.rstrip(), "```", ""]
        parts += [f'```python title="examples/{script.name}"', script.read_text().rstrip(), "```", ""]
    return "\n".join(parts)


def on_files(files, config):
    global _tmp
    scripts = sorted(EXAMPLES.glob("*.py"))
    if not scripts:
        raise PluginError(f"no example scripts in {EXAMPLES}")
    _tmp = tempfile.TemporaryDirectory(prefix="jl-examples-")
    base = Path(_tmp.name)
    with ThreadPoolExecutor(max_workers=max(1, min(len(scripts), os.cpu_count() or 1))) as pool:
        results = list(pool.map(lambda s: _run(s, base / s.stem), scripts))
    log.info("examples: " + ", ".join(f"{s.name} {t:.1f} s" for s, _, _, t in results))
    for script, pngs, _, _ in results:
        for png in pngs:
            files.append(File.generated(config, f"examples/{script.stem}/{png.name}", abs_src_path=str(png)))
    files.append(File.generated(config, "examples/index.md", content=_page(results)))
    return files


def on_post_build(config):
    global _tmp
    if _tmp is not None:
        _tmp.cleanup()
        _tmp = None
