#!/usr/bin/env bash
# Regenerate src/jointlimits/_core.pyi, the type stub of the compiled core, with nanobind's stubgen:
# bash scripts/stubgen.sh [python]. Run it after any change to cpp/python (the bindings), with the core
# built next to the sources (bash scripts/build_core.sh); tests/test_core_stub.py fails
# while the committed stub differs from the one the built core gives.
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${1:-python3}"
PYTHONPATH="src${PYTHONPATH:+:$PYTHONPATH}" "$PY" -m nanobind.stubgen -q -m jointlimits._core -o src/jointlimits/_core.pyi
