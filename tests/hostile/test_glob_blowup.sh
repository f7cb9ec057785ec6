#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# A glob pattern cannot hold the MCP server (issue #19, item 9): `**/`
# repeated 28 times against a deep tree took 101 s with the backtracking
# matcher, and the server answers one call at a time.  The matcher is now
# polynomial and every tool call has a deadline.
. "$CN_SRCDIR/tests/hostile/lib.sh"

repo=$TMPBASE/repo
deep=$repo
i=0
while [ $i -lt 40 ]; do deep=$deep/a; i=$((i + 1)); done
mkdir -p "$deep"
printf 'x = 1\n' > "$deep/x.py"

stars=
i=0
while [ $i -lt 28 ]; do stars="$stars**/"; i=$((i + 1)); done

msgs=$TMPBASE/msgs
{
  echo '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"sh","version":"1"}}}'
  echo '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"glob","arguments":{"pattern":"'"$stars"'nothing.py"}}}'
  echo '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"glob","arguments":{"pattern":"'"$stars"'x.py"}}}'
  echo '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"grep","arguments":{"pattern":"x","glob":"'"$stars"'nothing.py"}}}'
  echo '{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"read","arguments":{"path":"'"${deep#$repo/}"'/x.py"}}}'
} > "$msgs"

# A few seconds are plenty for four calls; the old matcher needed minutes.
cn_t 15 mcp --repo "$repo" --cache-dir "$TMPBASE/cache" --quiet < "$msgs"
check "the session ends well within its time limit (the matcher is not exponential)" rc_is 0
check "the glob that matches nothing says so" sh -c \
  'grep "\"id\":1," "$0" | grep -q "No files matched"' "$OUT"
check "the glob that matches finds the deep file" sh -c \
  'grep "\"id\":2," "$0" | grep -q "a/a/x.py"' "$OUT"
check "grep with the same glob answers" sh -c \
  'grep "\"id\":3," "$0" | grep -q "No matches found"' "$OUT"
check "and the server goes on answering" sh -c \
  'grep "\"id\":4," "$0" | grep -q "x = 1"' "$OUT"

# The deadline applies to the server's calls: a tree of 4000 files cannot
# be listed in 1 ms, so glob answers with what it found and says so.
wide=$TMPBASE/wide
for d in $(seq -w 0 39); do
  mkdir -p "$wide/d$d"
  (cd "$wide/d$d" && seq -w 0 99 | sed 's/^/f/; s/$/.txt/' | xargs touch)
done
echo '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"glob","arguments":{"pattern":"**/*.txt"}}}' > "$msgs"
cn_t 15 mcp --repo "$wide" --cache-dir "$TMPBASE/cache2" --quiet --tool-timeout 1 < "$msgs"
check "with --tool-timeout 1, glob answers in time" rc_is 0
check "and says its answer is partial" out_has "time limit of 1 ms reached: the result is partial"

no_sentinels "nothing ran"
done_testing
