"""Build the WebAssembly core and the web demo's assets (issue 37).

    python scripts/build_wasm.py            # emcc + three.js + the docs page (docs/demo/)
    python scripts/build_wasm.py --page     # only the docs page, from the package's files

1. ``emcc`` (Debian's emscripten) compiles cpp/wasm/jl_wasm.cpp over the headers in cpp/include into
   src/jointlimits/viz/demo_page/jlcore.{js,wasm}: the package's page assets (what ``jointlimits
   view --demo`` writes out), the one copy in the tree, linked from the npm package's web/dist/ and
   from docs/demo/. Without emcc this step prints one line and is skipped: the committed files stay.
2. three.js: three's own ES module build (three.module.min.js, MIT, from web/node_modules or
   tests/js/node_modules) rewritten as a classic script that sets ``globalThis.THREE`` (module
   scripts do not load from file://), with its licence header kept. Skipped when three is absent.
3. The JS API is src/jointlimits/viz/demo_page/jointlimits.js (web/jointlimits.js links to it), and
   docs/demo/ is written by the same
   function as the CLI (jointlimits.viz.demo.write_demo: the built-in humanoid, limits fitted on its
   range-of-motion clip and an over-rotated copy of that clip to scrub).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ASSETS = ROOT / "src" / "jointlimits" / "viz" / "demo_page"
DIST = ROOT / "web" / "dist"

EMCC_FLAGS = [
    "-O2",
    "-std=c++17",
    "-fexceptions",
    "-sMODULARIZE=1",
    "-sEXPORT_NAME=createJLCore",
    "-sALLOW_MEMORY_GROWTH=1",
    "-sENVIRONMENT=web,node",
    "-sEXPORTED_FUNCTIONS=_malloc,_free",
    "-sEXPORTED_RUNTIME_METHODS=UTF8ToString",
]


def build_core() -> bool:
    emcc = shutil.which("emcc")
    if emcc is None:
        print("build_wasm: emcc not found (apt-get install emscripten); WebAssembly build skipped")
        return False
    DIST.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ)
    # Debian's emcc runs its JS optimiser with node; a node outside Debian's does not search
    # /usr/share/nodejs, where node-acorn (its dependency) lives.
    env["NODE_PATH"] = os.pathsep.join(p for p in (env.get("NODE_PATH", ""), "/usr/share/nodejs") if p)
    cmd = [emcc, *EMCC_FLAGS, f"-I{ROOT / 'cpp' / 'include'}", str(ROOT / "cpp" / "wasm" / "jl_wasm.cpp")]
    # written once, into the package's page assets; web/dist/ and docs/demo/ link to them
    subprocess.run([*cmd, "-o", str(ASSETS / "jlcore.js")], check=True, env=env)
    print(f"build_wasm: {ASSETS / 'jlcore.wasm'} ({(ASSETS / 'jlcore.wasm').stat().st_size} bytes)")
    return True


def three_classic(src: str) -> str:
    """three.module.min.js as a classic script: its one ``export{a as B,...}`` becomes ``globalThis.THREE``."""
    m = re.search(r"export\{([^}]*)\};?\s*$", src)
    if m is None or re.search(r"^\s*import\b|\bimport\{", src[: m.start()], re.M):
        raise SystemExit("build_wasm: three.module.min.js has an unexpected form (imports, or no final export list)")
    pairs = []
    for item in m.group(1).split(","):
        local, _, name = item.strip().partition(" as ")
        pairs.append(f"{name or local}:{local}")
    body = src[: m.start()]
    return "(function(){" + body + "\nglobalThis.THREE={" + ",".join(pairs) + "};})();\n"


def _names(block: str) -> str:
    """``a, b as c`` (an import or export list) as object pattern / literal entries ``a, c: b`` or ``a, b: c``."""
    out = []
    for item in block.split(","):
        item = item.strip()
        if item:
            local, _, name = item.partition(" as ")
            out.append(f"{local}: {name}" if name else local)
    return ", ".join(out)


def classic_module(src: str, imports: dict[str, str], name: str) -> str:
    """One of three's example modules (examples/jsm) as a classic script: its imports read from
    globals (``imports``: module path -> global), its exports set on ``globalThis[name]``."""

    def imp(m: re.Match[str]) -> str:
        if m.group(2) not in imports:
            raise SystemExit(f"build_wasm: unexpected import from {m.group(2)} in a three.js module")
        return f"const {{ {_names(m.group(1))} }} = globalThis.{imports[m.group(2)]};"

    src = re.sub(r"import\s*\{([^}]*)\}\s*from\s*'([^']+)';", imp, src)
    m = re.search(r"export\s*\{([^}]*)\};?\s*$", src)
    if m is None:
        raise SystemExit("build_wasm: a three.js module without a final export list")
    exported = [e.strip().partition(" as ") for e in m.group(1).split(",") if e.strip()]
    body = re.sub(r"^export (function|const|class) ", r"\1 ", src[: m.start()], flags=re.M)
    if re.search(r"^\s*(import|export)\b", body, re.M):
        raise SystemExit("build_wasm: a three.js module with imports or exports left after rewriting")
    ret = ", ".join(f"{n or loc}: {loc}" for loc, _, n in exported)
    return f"globalThis.{name} = (function () {{\n{body}\nreturn {{ {ret} }};\n}})();\n"


def build_three() -> bool:
    for base in (ROOT / "web" / "node_modules", ROOT / "tests" / "js" / "node_modules"):
        f = base / "three" / "build" / "three.module.min.js"
        if f.is_file():
            src = f.read_text(encoding="utf-8")
            lic = src[: src.index("*/") + 2] if src.startswith("/**") else ""
            (ASSETS / "three.min.js").write_text(lic + "\n" + three_classic(src), encoding="utf-8")
            # GLTFLoader (for dropped glTF clips) and the one helper it imports
            jsm = base / "three" / "examples" / "jsm"
            bgu = classic_module(
                (jsm / "utils" / "BufferGeometryUtils.js").read_text(encoding="utf-8"), {"three": "THREE"}, "THREE_BGU"
            )
            gl = classic_module(
                (jsm / "loaders" / "GLTFLoader.js").read_text(encoding="utf-8"),
                {"three": "THREE", "../utils/BufferGeometryUtils.js": "THREE_BGU"},
                "THREE_GLTF",
            )
            note = "// three.js r170 examples/jsm (MIT, Copyright 2010-2024 Three.js Authors), as classic scripts\n"
            (ASSETS / "three-gltf.js").write_text(note + bgu + gl, encoding="utf-8")
            print(f"build_wasm: three.js from {f}")
            return True
    print("build_wasm: three.js not installed (npm install in web/); the committed three.min.js stays")
    return False


def main() -> int:
    if "--page" not in sys.argv[1:]:
        build_core()
        build_three()
    sys.path.insert(0, str(ROOT / "src"))
    import tempfile

    from jointlimits.viz.demo import STATIC_FILES, write_demo

    # docs/demo/ links to the package's static files (one copy in the tree); what the page
    # writer makes for this page (the built-in humanoid's data, the core as base64) is copied
    docs = ROOT / "docs" / "demo"
    with tempfile.TemporaryDirectory() as tmp:
        page = Path(tmp) / "demo"
        write_demo(page, overwrite=True)
        docs.mkdir(parents=True, exist_ok=True)
        for f in sorted(page.iterdir()):
            if f.name in STATIC_FILES:
                link = docs / f.name
                if not link.is_symlink():
                    link.unlink(missing_ok=True)
                    link.symlink_to(Path("../../src/jointlimits/viz/demo_page") / f.name)
            else:
                shutil.copyfile(f, docs / f.name)
    print(f"build_wasm: wrote {docs}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
