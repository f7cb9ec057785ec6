#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Retrieval quality of embed-local (embedding_search), hybrid_search and
# plain bm25_search on the localization dev set (Acc@k), with the embed-local
# training time:
#
#   bench/embed_bench.sh BUILD_DIR MIRRORS [DATASET]
#
# MIRRORS holds bare mirrors as <owner>+<name>/repo; DATASET defaults to
# ../shared/bench/swe_lite_dev.jsonl next to this checkout.  Needs python3
# and git.  See bench/embed_bench.py for what is measured.
set -eu
build=${1:?usage: embed_bench.sh BUILD_DIR MIRRORS [DATASET]}
mirrors=${2:?usage: embed_bench.sh BUILD_DIR MIRRORS [DATASET]}
here=$(cd "$(dirname "$0")" && pwd)
dataset=${3:-$here/../../shared/bench/swe_lite_dev.jsonl}
[ -f "$dataset" ] || { echo "no dataset at $dataset" >&2; exit 1; }
exec python3 "$here/embed_bench.py" --codenib "$build/core/codenib" --dataset "$dataset" \
  --mirrors "$mirrors" ${LIMIT:+--limit "$LIMIT"}
