#!/usr/bin/env bash
# The compiled core's limits-file reader and projection built with AddressSanitizer and
# UndefinedBehaviorSanitizer, run on every file of the limits fuzz (scripts/fuzz_limits.py: the
# seeds of every shape, the targeted cases of issue #25 and N random mutations), each with poses
# that are random, NaN, huge and of the wrong cover, with and without softening. Any sanitizer
# report, crash, exit status other than 0 (read and projected) or 2 (refused with one line), or a
# run over 10 s fails.
#
#   bash scripts/sanitize_core.sh [PYTHON] [N]        (N mutations, default 2000)
#
# Took 15 minutes wall (2.4 CPU minutes) on the shared, loaded 2-core machine, most of it building the
# sanitized harness and starting 2,088 sanitized processes: too slow for the CI run, which may call it
# when time allows.
set -euo pipefail
PY=${1:-python3}
N=${2:-2000}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
CXX=${CXX:-g++}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

cat > "$WORK/harness.cpp" <<'CPP'
// Read a limits file, then project poses that are random, NaN, huge and past pi, with and without
// softening. Exit 0 (read and projected), 2 (refused: LimitsFileError, one line).
#include <jointlimits/limits_file.hpp>

#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

int main(int argc, char** argv) {
    jointlimits::LimitsFile lf;
    try {
        lf = jointlimits::read_limits_file(argv[1]);
    } catch (const jointlimits::LimitsFileError& e) {
        std::fprintf(stderr, "error: %s\n", e.what());
        return 2;
    }
    const std::size_t J = lf.names.size();
    std::mt19937_64 rng(1);
    std::normal_distribution<double> g(0.0, 1.0);
    std::vector<double> pose(4 * J), out(4 * J);
    for (int k = 0; k < 64; ++k) {
        for (std::size_t i = 0; i < 4 * J; ++i) pose[i] = g(rng);
        for (std::size_t j = 0; j < J; ++j) {
            double n = 0;
            for (int c = 0; c < 4; ++c) n += pose[4 * j + c] * pose[4 * j + c];
            for (int c = 0; c < 4; ++c) pose[4 * j + c] /= std::sqrt(n);
        }
        if (k == 1) pose[0] = NAN;
        if (k == 2) pose[4 * (J - 1)] = 1e308;
        if (k == 3) for (std::size_t i = 0; i < 4 * J; ++i) pose[i] = (i % 4 == 0) ? -1e-300 : 0.0;
        const bool soften = k % 2 == 1;
        lf.limits.project(pose.data(), 1, soften, 0.3, 0.2, out.data());
        for (double v : out)
            if (!std::isfinite(v) && k > 3) {
                std::fprintf(stderr, "non-finite projection of a finite unit pose\n");
                return 3;
            }
    }
    return 0;
}
CPP

echo "building the sanitized harness..."
"$CXX" -std=c++17 -O1 -g -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer \
    -I "$ROOT/cpp/include" "$WORK/harness.cpp" -o "$WORK/harness"

echo "writing the fuzz files..."
PYTHONPATH="$ROOT/src" "$PY" "$ROOT/scripts/fuzz_limits.py" --n "$N" --dump "$WORK/files" --dump-only

export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:exitcode=99
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1:exitcode=98
ok=0 refused=0 bad=0
for f in "$WORK"/files/*.json; do
    set +e
    timeout 10 "$WORK/harness" "$f" > /dev/null 2> "$WORK/err"
    rc=$?
    set -e
    if [ $rc -eq 0 ] && ! grep -q "runtime error\|Sanitizer" "$WORK/err"; then
        ok=$((ok + 1))
    elif [ $rc -eq 2 ] && [ "$(wc -l < "$WORK/err")" -eq 1 ]; then
        refused=$((refused + 1))
    else
        bad=$((bad + 1))
        echo "FAIL ($rc) $(basename "$f"):" >&2
        head -5 "$WORK/err" >&2
    fi
done
mkfifo "$WORK/fifo"
for f in "$WORK/fifo" /dev/zero "$WORK"; do
    set +e
    timeout 10 "$WORK/harness" "$f" > /dev/null 2> "$WORK/err"
    rc=$?
    set -e
    if [ $rc -eq 2 ]; then refused=$((refused + 1)); else bad=$((bad + 1)); echo "FAIL ($rc) $f" >&2; fi
done
echo "sanitized C++ limits reader (ASan+UBSan): $((ok + refused + bad)) files: $ok read and projected, $refused refused with one line, $bad failures"
[ $bad -eq 0 ]
