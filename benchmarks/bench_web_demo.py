"""The web demo (docs/demo, issue 37) in headless Chromium: the page's IK + limits + skinning loop,
its load time, the WebAssembly core's size, and the JS API's speed in the page beside the same calls
under Node (the same .wasm, measured in the same run).

    python -m benchmarks.bench_web_demo [--quick]

Needs node, web/node_modules (npm ci in web/) and Debian's /usr/bin/chromium; skips with one
reason otherwise. The page is served by a local static server; Chromium runs with --disable-gpu
(software WebGL), so the rendered frame rate is the software renderer's, not a GPU's.
"""

from __future__ import annotations

import functools
import http.server
import json
import shutil
import subprocess
import threading
from pathlib import Path

from ._common import main_single, record, skipped

BENCH = "web_demo"
ROOT = Path(__file__).resolve().parents[1]
WEB = ROOT / "web"
DEMO = ROOT / "docs" / "demo"

_PAGE = """
await new Promise((r) => setTimeout(r, 200));
const out = { readyAt: jlDemo.state.readyAt, marks: jlDemo.state.marks };
out.loop = jlDemo.benchmark(MS);
out.render = await jlDemo.renderRate(MS);
const s = document.createElement("script");
s.src = "cases.js";
await new Promise((ok) => { s.onload = ok; document.head.appendChild(s); });
const t0 = performance.now();
let n = 0;
while (performance.now() - t0 < MS) { jlCases.runCases(jlDemo.state.jl, JL_DEMO_DATA); n++; }
out.casesRate = (n * 1000) / (performance.now() - t0);
return out;
"""

_NODE = """
const path = require("path"), fs = require("fs"), vm = require("vm");
const ctx = { globalThis: {} };
vm.runInNewContext(fs.readFileSync(process.argv[1], "utf8"), ctx);
const { runCases } = require(path.join(process.cwd(), "test", "cases.js"));
require(path.join(process.cwd(), "jointlimits.js")).load().then((jl) => {
  const MS = Number(process.argv[2]);
  runCases(jl, ctx.globalThis.JL_DEMO_DATA);
  const t0 = performance.now();
  let n = 0;
  while (performance.now() - t0 < MS) { runCases(jl, ctx.globalThis.JL_DEMO_DATA); n++; }
  process.stdout.write(JSON.stringify({ casesRate: (n * 1000) / (performance.now() - t0) }));
});
"""


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *a: object) -> None:
        pass

    def translate_path(self, path: str) -> str:  # cases.js beside the page, from web/test
        if path.split("?")[0] == "/cases.js":
            return str(WEB / "test" / "cases.js")
        return super().translate_path(path)


def _missing() -> str | None:
    if shutil.which("node") is None:
        return "node not found"
    if not (WEB / "node_modules" / "playwright-core").is_dir():
        return "web/node_modules/playwright-core not installed (cd web && npm ci)"
    if not Path("/usr/bin/chromium").is_file():
        return "/usr/bin/chromium not found (apt-get install chromium)"
    if not (DEMO / "index.html").is_file():
        return "docs/demo/index.html not built (python scripts/build_wasm.py)"
    return None


def run(quick: bool) -> list[dict]:
    why = _missing()
    if why:
        return [skipped(BENCH, "page loop", why)]
    ms = 1000 if quick else 3000
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Quiet, directory=str(DEMO)))
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{httpd.server_address[1]}/index.html"
        r = subprocess.run(
            ["node", str(WEB / "test" / "page_eval.cjs"), url, "1000x700"],
            input=_PAGE.replace("MS", str(ms)),
            capture_output=True,
            text=True,
            timeout=300,
            cwd=WEB,
            check=True,
        )
        page = json.loads(r.stdout)["result"]
    finally:
        httpd.shutdown()
    r = subprocess.run(
        ["node", "-e", _NODE, str(DEMO / "data.js"), str(ms)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=WEB,
        check=True,
    )
    node = json.loads(r.stdout)
    loop = page["loop"]
    data = f"built-in humanoid ({loop['joints']} joints, {loop['vertices']} skinned vertices), {ms} ms"
    return [
        record(
            BENCH,
            "page: IK + look-at + limits + skinning loop",
            loop["rate"],
            "updates/s",
            kind="rate",
            data=data,
            target=60.0,
            note="two-bone, CCD and look-at solves, the pose's limits, FK, the limit drawings, bone matrices "
            "and every vertex skinned on the CPU, per update",
        ),
        record(
            BENCH,
            "page: ready after navigation start",
            page["readyAt"],
            "ms",
            data="local static server",
            target=2000.0,
        ),
        record(
            BENCH,
            "page: rendered frames (software WebGL)",
            page["render"],
            "frames/s",
            kind="rate",
            data=data,
            note="headless Chromium with --disable-gpu: the software renderer",
        ),
        record(
            BENCH,
            "JS API cases in the page",
            page["casesRate"],
            "runs/s",
            kind="rate",
            data="web/test/cases.js: every API function once",
            anchor="the same cases under Node, same run",
            anchor_value=node["casesRate"],
        ),
        record(
            BENCH,
            "jlcore.wasm size",
            float((DEMO / "jlcore.wasm").stat().st_size),
            "bytes",
            kind="memory",
            data="emcc -O2 (scripts/build_wasm.py)",
            target=1_000_000.0,
        ),
    ]


if __name__ == "__main__":
    main_single(BENCH, run)
