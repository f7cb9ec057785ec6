#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Ablation of the offline planner on the localization development set: one
# `codenib eval` with every signal, then one per signal with that signal
# switched off (`--without`), all scored side by side in one table.  The
# checkouts and indexes of the first run are kept and reused by the others,
# so only the first run compiles.
#
#   bench/ablation.sh [--build DIR] [--mirrors DIR] [--out DIR] [--jobs N] [--signals LIST]
#
#   --build DIR     the build directory holding core/codenib (default _build)
#   --mirrors DIR   bare mirrors, DIR/<owner>+<name>/repo (default /work/.mirror)
#   --out DIR       all runs, DIR/all and DIR/without-<signal> (default
#                   DIR_OF_BUILD/bench-ablation); stopped runs continue
#   --jobs N        instances at a time (default 2)
#   --signals LIST  the signals to switch off one at a time (default: all;
#                   `codenib query --help` names them)
#
# The dataset is $CODENIB_BENCH_DIR/swe_lite_dev.jsonl (default
# ../shared/bench next to the repository root).
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
build=$root/_build
mirrors=/work/.mirror
out=
jobs=2
signals="route bm25 bm25-seeds bm25-errors title hybrid names literals expand seed-bonus paths file-weight short-seeds aside"
usage() { sed -n '7,16p' "$0" | sed 's/^# \{0,1\}//' >&2; exit "${1:-2}"; }
while [ $# -gt 0 ]; do
  case $1 in
    --build) [ $# -ge 2 ] || usage; build=$2; shift 2 ;;
    --mirrors) [ $# -ge 2 ] || usage; mirrors=$2; shift 2 ;;
    --out) [ $# -ge 2 ] || usage; out=$2; shift 2 ;;
    --jobs) [ $# -ge 2 ] || usage; jobs=$2; shift 2 ;;
    --signals) [ $# -ge 2 ] || usage; signals=$(echo "$2" | tr ',' ' '); shift 2 ;;
    -h|--help) usage 0 ;;
    *) echo "ablation.sh: unknown argument '$1'" >&2; usage ;;
  esac
done
bench=${CODENIB_BENCH_DIR:-$root/../shared/bench}
codenib=$build/core/codenib
out=${out:-$build/bench-ablation}
data=$bench/swe_lite_dev.jsonl
[ -x "$codenib" ] || { echo "ablation.sh: no codenib in $build (build first)" >&2; exit 1; }
[ -f "$data" ] || { echo "ablation.sh: $data is missing (set CODENIB_BENCH_DIR)" >&2; exit 1; }
[ -d "$mirrors" ] || { echo "ablation.sh: no mirrors at $mirrors (give --mirrors DIR)" >&2; exit 1; }

run() { # OUT [--without SIGNAL]
  dir=$1
  shift
  echo "== $(basename "$dir")" >&2
  "$codenib" eval --dataset "$data" --mirrors "$mirrors" --out "$dir" --work "$out/work" --keep-work \
    --policy offline --jobs "$jobs" --quiet "$@" >/dev/null
}

start=$(date +%s)
run "$out/all"
refs=
for s in $signals; do
  run "$out/without-$s" --without "$s"
  refs="$refs --reference -$s=$out/without-$s/predictions.jsonl"
done
echo "wall time: $(( $(date +%s) - start )) s" >&2
echo
echo "codenib offline with every signal, then without one (\"-names\": names switched off):"
# shellcheck disable=SC2086
"$codenib" eval --dataset "$data" --out "$out/all" --score-only $refs
