#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Localization benchmark: `codenib eval` (offline planner) on the SWE-bench
# Lite development set, scored next to the shipped reference predictions
# (plain BM25, LocAgent + Claude-3.5), then the published reference rows.
# Python files only (--languages python), as the dataset's rule and the
# references index: its gold never leaves them.
#
#   bench/localization.sh [--build DIR] [--mirrors DIR] [--out DIR] [--jobs N]
#
#   --build DIR    the build directory holding core/codenib (default _build)
#   --mirrors DIR  bare mirrors, DIR/<owner>+<name>/repo (default /work/.mirror)
#   --out DIR      predictions, metrics.json, report.md (default
#                  DIR_OF_BUILD/bench-localization); a stopped run continues
#   --jobs N       instances at a time (default 2)
#
# The dataset directory is $CODENIB_BENCH_DIR, else ../shared/bench next to
# the repository root: swe_lite_dev.jsonl, ref_bm25_dev.jsonl,
# ref_locagent_claude35_dev.jsonl and README.md (whose "Reference rows"
# table is printed at the end, read from it at run time).
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
    *) echo "localization.sh: unknown argument '$1'" >&2; usage ;;
  esac
done
bench=${CODENIB_BENCH_DIR:-$root/../shared/bench}
codenib=$build/core/codenib
out=${out:-$build/bench-localization}
[ -x "$codenib" ] || { echo "localization.sh: no codenib in $build (build first)" >&2; exit 1; }
for f in swe_lite_dev.jsonl ref_bm25_dev.jsonl ref_locagent_claude35_dev.jsonl README.md; do
  [ -f "$bench/$f" ] || { echo "localization.sh: $bench/$f is missing (set CODENIB_BENCH_DIR)" >&2; exit 1; }
done
[ -d "$mirrors" ] || { echo "localization.sh: no mirrors at $mirrors (give --mirrors DIR)" >&2; exit 1; }
bench=$(cd "$bench" && pwd)

start=$(date +%s)
status=0
"$codenib" eval --dataset "$bench/swe_lite_dev.jsonl" --mirrors "$mirrors" --out "$out" \
  --policy offline --jobs "$jobs" --languages python \
  --reference bm25="$bench/ref_bm25_dev.jsonl" \
  --reference locagent-claude35="$bench/ref_locagent_claude35_dev.jsonl" || status=$?
[ "$status" -eq 0 ] || exit "$status"
echo "wall time: $(( $(date +%s) - start )) s (this invocation)"
echo
echo "Reference rows (published, all 274 instances, %; from $bench/README.md):"
echo
# the Markdown table under the "Reference rows" heading, up to the next blank line
awk '/^## Reference rows/ { on = 1; next }
     on && /^\|/ { print; seen = 1; next }
     on && seen { exit }' "$bench/README.md"
