#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Counts the test results the automake TAP driver recorded under DIR:
#   ci-summary.sh DIR   ->  prints "PASSED FAILED" (each TAP test point;
#                           FAIL, XPASS and ERROR count as failed)
set -eu
dir=$1
find "$dir" -name '*.trs' -exec cat {} + 2>/dev/null | awk '
  $1 == ":test-result:" {
    if ($2 == "PASS" || $2 == "XFAIL" || $2 == "SKIP") p++; else f++
  }
  END { printf "%d %d\n", p + 0, f + 0 }'
