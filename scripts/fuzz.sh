#!/usr/bin/env bash
# Builds fuzz/capture_fuzzer (clang, libFuzzer, AddressSanitizer, UndefinedBehaviorSanitizer) and runs
# the inputs that once crashed it (fuzz/regressions/), then fuzzes for a bounded time on a corpus
# seeded with the small real captures of tests/data plus copies with random bytes overwritten.
# Exit status: the fuzzer's (0: no finding). New crash inputs are left in build/fuzz/findings/
# ($FUSELENS_FUZZ_BUILD/findings/).
# The fuzzing is seeded (-seed=1), so a CI run repeats the same mutations as far as it gets.
# Usage: scripts/fuzz.sh [SECONDS] (default 60); FUSELENS_FUZZ_BUILD=DIR builds elsewhere than
# build/fuzz.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
build=${FUSELENS_FUZZ_BUILD:-build/fuzz}
CC=clang CXX=clang++ cmake -S fuzz -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" --target capture_fuzzer -j "$(nproc 2>/dev/null || echo 2)"
corpus=$build/corpus findings=$build/findings
rm -rf "$corpus" && mkdir -p "$corpus" "$findings"
# fuzz/seeds: a real capture holding the summary's stored aggregates (SummaryStore.h), so the
# fuzzer reaches their validation too.
for f in tests/data/cct_paths.sqlite tests/data/fusion_bench.sqlite tests/data/fusion_bench_schema_v1.sqlite \
  fuzz/seeds/*.sqlite; do
  cp "$f" "$corpus/"
done
# The hostile captures of issue 22 (cycles, a deep chain, NULL/TEXT times, sizes, views, two run
# rows, control characters, a 70 KB name, a WAL-mode file), generated next to each guard.
python3 fuzz/seeds/hostile_seeds.py tests/data "$corpus"
python3 - "$corpus" <<'PY'
import os, random, sys
corpus = sys.argv[1]
for name in sorted(os.listdir(corpus)):
    data = open(os.path.join(corpus, name), "rb").read()
    for seed in range(4):
        rng = random.Random(seed)
        b = bytearray(data)
        for _ in range(16):
            b[rng.randrange(100, len(b))] = rng.randrange(256)
        open(os.path.join(corpus, f"{name}.mut{seed}"), "wb").write(bytes(b))
PY
export ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
echo "[fuzz] regression inputs (fuzz/regressions)"
"$build/capture_fuzzer" fuzz/regressions/* 2>&1 | tail -n 3
echo "[fuzz] fuzzing for ${seconds} s"
# -rss_limit_mb: a capture may make the analyses allocate; 2 GiB is the budget for one input.
"$build/capture_fuzzer" "$corpus" -max_total_time="$seconds" -max_len=2097152 -rss_limit_mb=2048 \
  -seed=1 -artifact_prefix="$findings/" -print_final_stats=1 2>&1 | tail -n 25
