#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The bound of a tool result on the command line (issue #22): `codenib run`
# and `codenib mcp` cut a result longer than --max-output (default 30000
# bytes), say so with the offset of the next page, and the next page is
# there; a bad --max-output is a usage error.
. "$CN_SRCDIR/tests/cli/lib.sh"
unset CODENIB_SKILLS_PATH CODENIB_MODEL CODENIB_RERANK_MODEL OPENAI_BASE_URL CODENIB_BASE_URL

need_python_backend

repo=$TMPBASE/repo
cache=$TMPBASE/cache
cp -R "$CN_SRCDIR/tests/fixtures/graph/python" "$repo"
# 600 callers of ConnectionPool.get: its references with their source are
# some 250 KB
i=0
{ echo "from pkg.pool import ConnectionPool"; echo
  while [ $i -lt 600 ]; do
    printf 'def use_%d(p):\n    """ConnectionPool use %d %0200d"""\n    return ConnectionPool.get(p)\n\n' $i $i 0
    i=$((i + 1))
  done; } > "$repo/pkg/many.py"
cn compile "$repo" --cache-dir "$cache"
check "the repository compiles" rc_is 0
big='{"symbol":"ConnectionPool.get","top_k":500,"return_content":true}'
size() { wc -c < "$1" | tr -d ' '; }

# ---- codenib run ------------------------------------------------------------------
cn run lsp_references --repo "$repo" --cache-dir "$cache" --args "$big"
check "run: a long result is still a success" rc_is 0
check "run: cut to the default bound (30000 bytes and the newline)" sh -c '[ "$(wc -c < "$0")" -le 30001 ]' "$OUT"
check "run: the JSON is whole (it ends its object)" sh -c 'tail -c 3 "$0" | grep -q "}}"' "$OUT"
check "run: a note on standard error says what was cut" err_has "result cut to fit 30000 bytes"
next=$(sed -n 's/.*offset=\([0-9]*\).*/\1/p' "$ERR")
check "run: ... and the offset of the next page" test -n "$next"
last=$(grep -o '"node_name":"[^"]*"' "$OUT" | tail -n 1)
cn run lsp_references --repo "$repo" --cache-dir "$cache" --max-output 0 \
  --args '{"symbol":"ConnectionPool.get","top_k":500}'
check "run --max-output 0: no bound, no note" sh -c '[ '"$rc"' -eq 0 ] && [ "$(wc -c < "$0")" -gt 30001 ] && ! grep -q "result cut" "$1"' "$OUT" "$ERR"
want=$(grep -o '"node_name":"[^"]*"' "$OUT" | sed -n "$((next + 1))p")
check "run: item $next of the whole list follows the last one shown" sh -c '[ -n "$0" ] && [ "$0" != "$1" ]' "$want" "$last"
cn run lsp_references --repo "$repo" --cache-dir "$cache" \
  --args "{\"symbol\":\"ConnectionPool.get\",\"top_k\":500,\"return_content\":true,\"offset\":${next:-0}}"
first=$(grep -o '"node_name":"[^"]*"' "$OUT" | head -n 1)
check "run: offset=$next starts the next page with it" sh -c '[ -n "$0" ] && [ "$0" = "$1" ]' "$first" "$want"
cn run lsp_references --repo "$repo" --cache-dir "$cache" --max-output 3000 --args "$big"
check "run --max-output 3000: cut to 3000 bytes" sh -c '[ '"$rc"' -eq 0 ] && [ "$(wc -c < "$0")" -le 3001 ]' "$OUT"
check "run --max-output 3000: the note names the bound" err_has "result cut to fit 3000 bytes"
cn run lsp_references --repo "$repo" --cache-dir "$cache" --max-output lots --args "$big"
check "run --max-output lots: a usage error, named" sh -c '[ '"$rc"' -eq 2 ] && grep -q "max-output" "$0"' "$ERR"

# ---- codenib mcp ------------------------------------------------------------------
msgs=$TMPBASE/msgs
printf '%s\n' "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"lsp_references\",\"arguments\":$big}}" > "$msgs"
cn mcp --repo "$repo" --cache-dir "$cache" --quiet < "$msgs"
check "mcp: a long result answered" sh -c '[ '"$rc"' -eq 0 ] && grep -q "\"isError\":false" "$0"' "$OUT"
check "mcp: cut to the default bound, said in the result" out_has 'result cut to fit 30000 bytes'
check "mcp: the answer is the bound plus the envelope, not the 250 KB" sh -c '[ "$(wc -c < "$0")" -lt 40000 ]' "$OUT"
cn mcp --repo "$repo" --cache-dir "$cache" --quiet --max-output 4000 < "$msgs"
check "mcp --max-output 4000: the bound is the one set" out_has 'result cut to fit 4000 bytes'
check "mcp --max-output 4000: the answer shrinks with it" sh -c '[ "$(wc -c < "$0")" -lt 6000 ]' "$OUT"
cn mcp --repo "$repo" --cache-dir "$cache" --max-output 0 < "$msgs"
check "mcp --max-output 0: a usage error, named" sh -c '[ '"$rc"' -eq 2 ] && grep -q "max-output" "$0"' "$ERR"

done_testing
