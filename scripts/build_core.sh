#!/usr/bin/env bash
# Developer build of jointlimits._core next to the sources (src/jointlimits/_core*.so), for working
# with PYTHONPATH=src and no install: bash scripts/build_core.sh [python]. pip install builds it too.
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${1:-python3}"
cmake -S . -B build/dev -G Ninja -DPython_EXECUTABLE="$("$PY" -c 'import sys; print(sys.executable)')" \
      -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build/dev
cp -f build/dev/_core*.so src/jointlimits/
