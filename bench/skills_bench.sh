#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Skill call latency on a real repository (default: the Python standard
# library), with bench/skills_bench:
#
#   bench/skills_bench.sh BUILD_DIR [REPO] [RUNS]
#
# Compiles REPO with every index (bm25, graph, vector with embed-local) into
# a temporary cache, then prints p50/p99 per skill and each p50 as a ratio
# of bm25_search's, measured side by side in the same process.  The
# embed-local training time is printed from the compile's stage timings.
set -eu
build=${1:?usage: skills_bench.sh BUILD_DIR [REPO] [RUNS]}
repo=${2:-/usr/lib/python3.11}
runs=${3:-200}
here=$(cd "$(dirname "$0")" && pwd)
codenib="$build/core/codenib"
[ -x "$codenib" ] || { echo "no codenib in $build (build first)" >&2; exit 1; }
make -s -C "$build" bench/skills_bench >/dev/null
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export CODENIB_HOME="$work/home"

echo "== $repo"
"$codenib" compile "$repo" --cache-dir "$work/cache" --index bm25,graph,vector --json --quiet > "$work/m.json"
tr -d ' \n' < "$work/m.json" | sed -n 's/.*"stage_seconds":{\([^}]*\)}.*/  compile stages (s): \1\n/p'
"$build/bench/skills_bench" "$repo" "$work/cache" "$here/queries.txt" "$runs"
