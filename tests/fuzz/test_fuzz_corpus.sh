#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Every fuzz target's seed corpus (tests/fuzz/corpus/<target>/, and the
# contract parser's fixtures), replayed through the target without
# libFuzzer: a broken property aborts, and the valgrind and ASan passes of
# make check catch memory errors on the seeds.  Inputs found by
# `make fuzz-smoke` that once crashed codenib go into these directories, so
# they stay fixed.  The index seeds are real indexes: each must open.
. "$CN_SRCDIR/tests/cli/lib.sh"
corpus=$CN_SRCDIR/tests/fuzz/corpus
CODENIB_SKILLS_PATH=; export CODENIB_SKILLS_PATH

replay() {  # replay TARGET DIR...: one point per target
  t=$1; shift
  # shellcheck disable=SC2086
  if $CN_RUN "$CN_BUILDDIR/tests/fuzz/replay_$t" "$@" >"$OUT" 2>"$ERR"; then
    n=$(grep -c '^ok ' "$OUT")
    if [ "$n" -gt 0 ]; then pass "fuzz target $t: $n seed(s) replayed"; else fail "fuzz target $t: no seeds"; fi
  else
    fail "fuzz target $t: a seed broke it (exit $?)"
  fi
}

replay contract "$corpus/contract" "$CN_SRCDIR/tests/fixtures/contract"
replay yaml "$corpus/yaml" "$CN_SRCDIR"/skills/*/config.yaml
replay harness "$corpus/harness"
replay types "$corpus/types"
replay jsonrpc "$corpus/jsonrpc"
CN_FUZZ_EXPECT_OPEN=1 replay index "$corpus/index"
[ -d "$corpus/index-crashes" ] && replay index "$corpus/index-crashes"

# The replay driver itself: a missing file is a failed point, not a pass.
if "$CN_BUILDDIR/tests/fuzz/replay_types" "$TMPBASE/missing" >"$OUT" 2>"$ERR"; then
  fail "a replay of a missing seed fails"
else
  check "a replay of a missing seed fails" grep -q '^not ok 1 ' "$OUT"
fi
done_testing
