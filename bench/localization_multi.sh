#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Multilingual localization benchmark: `codenib eval` (offline planner) on
# the Multi-SWE-bench development set (157 real issues in C, C++, Go, Java,
# JavaScript, Rust and TypeScript), scored by line ranges next to the
# shipped BM25 floor: the tables overall and per language, the wall time
# and the median time an instance took (compile included).
#
#   bench/localization_multi.sh [--build DIR] [--mirrors DIR] [--out DIR] [--jobs N]
#
#   --build DIR    the build directory holding core/codenib (default _build)
#   --mirrors DIR  bare mirrors, DIR/<owner>+<name>/repo (default /work/.mirror)
#   --out DIR      predictions, metrics.json, report.md (default
#                  DIR_OF_BUILD/bench-localization-multi); a stopped run continues
#   --jobs N       instances at a time (default 2)
#
# The dataset directory is $CODENIB_BENCH_DIR/multi, else ../shared/bench/multi
# next to the repository root: dev.jsonl and ref_bm25_dev.jsonl (its
# README.md and mlocscore.py define the metrics; mlocscore.py run on
# OUT/predictions.jsonl gives the same numbers).
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
build=$root/_build
mirrors=/work/.mirror
out=
jobs=2
usage() { sed -n '8,14p' "$0" | sed 's/^# \{0,1\}//' >&2; exit "${1:-2}"; }
while [ $# -gt 0 ]; do
  case $1 in
    --build) [ $# -ge 2 ] || usage; build=$2; shift 2 ;;
    --mirrors) [ $# -ge 2 ] || usage; mirrors=$2; shift 2 ;;
    --out) [ $# -ge 2 ] || usage; out=$2; shift 2 ;;
    --jobs) [ $# -ge 2 ] || usage; jobs=$2; shift 2 ;;
    -h|--help) usage 0 ;;
    *) echo "localization_multi.sh: unknown argument '$1'" >&2; usage ;;
  esac
done
bench=${CODENIB_BENCH_DIR:-$root/../shared/bench}/multi
codenib=$build/core/codenib
out=${out:-$build/bench-localization-multi}
[ -x "$codenib" ] || { echo "localization_multi.sh: no codenib in $build (build first)" >&2; exit 1; }
for f in dev.jsonl ref_bm25_dev.jsonl; do
  [ -f "$bench/$f" ] || { echo "localization_multi.sh: $bench/$f is missing (set CODENIB_BENCH_DIR)" >&2; exit 1; }
done
[ -d "$mirrors" ] || { echo "localization_multi.sh: no mirrors at $mirrors (give --mirrors DIR)" >&2; exit 1; }
bench=$(cd "$bench" && pwd)

start=$(date +%s)
status=0
"$codenib" eval --dataset "$bench/dev.jsonl" --mirrors "$mirrors" --out "$out" \
  --policy offline --jobs "$jobs" --reference bm25="$bench/ref_bm25_dev.jsonl" || status=$?
[ "$status" -eq 0 ] || exit "$status"
echo "wall time: $(( $(date +%s) - start )) s (this invocation, --jobs $jobs)"
# the median of the rows' elapsed_s (each instance's own wall time, compile
# included; the rows of earlier invocations count too)
sed -n 's/.*"elapsed_s": *\([0-9.]*\).*/\1/p' "$out/predictions.jsonl" | sort -n |
  awk '{ v[NR] = $1 } END { if (NR == 0) exit; m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2;
        printf "median per instance: %.2f s (%d rows)\n", m, NR }'
