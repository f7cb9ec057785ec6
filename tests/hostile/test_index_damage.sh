#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# A damaged index: each of its files deleted, truncated or with a bit
# flipped.  `status` must say it is damaged, naming the file (exit 3,
# --json "damaged": true); `query` rebuilds it and answers as a fresh index
# does; `run` fails naming the file; the MCP server rebuilds it.  Never an
# exit 0 with an answer made without a part of the index.
. "$CN_SRCDIR/tests/hostile/lib.sh"
unset CODENIB_SKILLS_PATH CODENIB_MODEL CODENIB_RERANK_MODEL OPENAI_BASE_URL CODENIB_BASE_URL
need_python_backend

repo=$TMPBASE/repo
cache=$TMPBASE/cache
cp -R "$CN_SRCDIR/tests/fixtures/graph/python" "$repo"
q='ConnectionPool.get fails in _check when size is an int: TypeError object of type int has no len()'

# the answer of a fresh index, the reference
cn query --repo "$repo" --cache-dir "$TMPBASE/ref-cache" --quiet "$q"
cp "$OUT" "$TMPBASE/ref"
check "a fresh index answers (the reference)" sh -c '[ '"$rc"' -eq 0 ] && grep -q "^Files: " "$0"' "$TMPBASE/ref"

cur() { echo "$cache/$(readlink "$cache/current")"; }

# flip FILE: inverts the low bit of the byte in the middle of FILE
flip() {
  size=$(wc -c <"$1")
  off=$((size / 2))
  b=$(od -An -tu1 -j "$off" -N1 "$1" | tr -d ' ')
  # shellcheck disable=SC2059
  printf "\\$(printf %o $((b ^ 1)))" | dd of="$1" bs=1 seek="$off" conv=notrunc 2>/dev/null
}

# damage HOW FILE: deletes, truncates to half or flips a bit of FILE
damage() {
  case $1 in
    delete) rm -f "$2" ;;
    truncate) size=$(wc -c <"$2"); head -c $((size / 2)) "$2" >"$2.half" && mv "$2.half" "$2" ;;
    flip) flip "$2" ;;
  esac
}

# Under valgrind (ten times slower) each file gets one kind of damage, in
# turn, instead of all three: every file and every kind are still met.
n_case=0
for file in graph.bin nodes.bin bm25.bin records.bin records-00.bin repo_manifest.json; do
  for how in delete truncate flip; do
    n_case=$((n_case + 1))
    # file f (0..5) with kind k (0..2) when k = f mod 3
    if [ -n "${CN_VALGRIND-}" ] && [ $(((n_case - 1) % 3)) -ne $(((n_case - 1) / 3 % 3)) ]; then continue; fi
    cn compile "$repo" --cache-dir "$cache" --quiet
    [ "$rc" -eq 0 ] || fail "compile before damaging $file"
    gen=$(cur)
    damage "$how" "$gen/$file"
    cn status "$repo" --cache-dir "$cache"
    check "$file ($how): status says damaged, exit 3" sh -c '[ '"$rc"' -eq 3 ] && grep -q ": damaged$" "$0"' "$OUT"
    check "$file ($how): ... naming the file" out_has "$file"
    cn status "$repo" --cache-dir "$cache" --json
    check "$file ($how): --json says damaged, not fresh" sh -c \
      'grep -q "\"damaged\": true" "$0" && grep -q "\"fresh\": false" "$0" && grep -q "\"damage\": \".*$1" "$0"' "$OUT" "$file"
    cn query --repo "$repo" --cache-dir "$cache" --quiet --no-compile "$q"
    check "$file ($how): query --no-compile fails, naming the file" sh -c \
      '[ '"$rc"' -eq 1 ] && grep -q "damaged" "$0" && grep -q "$1" "$0"' "$ERR" "$file"
    cn query --repo "$repo" --cache-dir "$cache" --quiet "$q"
    check "$file ($how): query rebuilds and answers as a fresh index" sh -c \
      '[ '"$rc"' -eq 0 ] && cmp -s "$0" "$1"' "$OUT" "$TMPBASE/ref"
    cn status "$repo" --cache-dir "$cache"
    check "$file ($how): fresh again after the query" sh -c '[ '"$rc"' -eq 0 ] && grep -q ": fresh$" "$0"' "$OUT"
  done
done

# the manifest losing a part's name (a bit flipped in the key) is damage too
cn compile "$repo" --cache-dir "$cache" --quiet
gen=$(cur)
sed 's/"graph": {/"grapi": {/' "$gen/repo_manifest.json" >"$TMPBASE/m" && cp "$TMPBASE/m" "$gen/repo_manifest.json"
cn status "$repo" --cache-dir "$cache"
check "a manifest that no longer lists graph.bin: damaged (its checksum)" sh -c \
  '[ '"$rc"' -eq 3 ] && grep -q "repo_manifest.json: checksum mismatch" "$0"' "$OUT"

# `run` opens the index as it is: a damaged one is an error naming the file
cn compile "$repo" --cache-dir "$cache" --quiet
gen=$(cur)
rm "$gen/graph.bin"
cn run bm25_search --repo "$repo" --cache-dir "$cache" --args '{"query": "pool"}'
check "run on an index without its graph: exit 1, naming graph.bin" sh -c \
  '[ '"$rc"' -eq 1 ] && grep -q "graph.bin: missing" "$0"' "$ERR"

# `current` naming a generation that is gone
rm -rf "$gen"
cn status "$repo" --cache-dir "$cache"
check "current naming a missing generation: damaged" sh -c '[ '"$rc"' -eq 3 ] && grep -q "names is missing" "$0"' "$OUT"
cn query --repo "$repo" --cache-dir "$cache" --quiet "$q"
check "... query rebuilds it and answers as a fresh index" sh -c '[ '"$rc"' -eq 0 ] && cmp -s "$0" "$1"' "$OUT" "$TMPBASE/ref"

# the MCP server rebuilds a damaged index before answering
gen=$(cur)
rm "$gen/graph.bin"
msgs=$TMPBASE/msgs
{
  echo '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"sh","version":"1"}}}'
  echo '{"jsonrpc":"2.0","method":"notifications/initialized"}'
  echo '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"find_callers","arguments":{"symbol":"ConnectionPool._check"}}}'
} >"$msgs"
cn_t 120 mcp --repo "$repo" --cache-dir "$cache" <"$msgs"
check "mcp: the damage is logged and the index rebuilt" sh -c \
  'grep -q "damaged" "$0" && grep -q "graph.bin" "$0" && grep -q "compiled " "$0"' "$ERR"
check "mcp: find_callers answers from the rebuilt graph" sh -c \
  'grep "\"id\":2," "$0" | grep -q "ConnectionPool.get"' "$OUT"
check "mcp: the served generation has its graph again" test -f "$(cur)/graph.bin"

no_sentinels "no hostile command ran"
done_testing
