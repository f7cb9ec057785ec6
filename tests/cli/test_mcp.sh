#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# `codenib mcp`: the MCP server as a client sees it -- a real process on
# stdin/stdout, one JSON-RPC message a line, the log on stderr; usage
# errors; what happens at the end of input and when stdout is gone.
. "$CN_SRCDIR/tests/cli/lib.sh"
unset CODENIB_SKILLS_PATH CODENIB_MODEL CODENIB_RERANK_MODEL OPENAI_BASE_URL CODENIB_BASE_URL

need_python_backend

repo=$TMPBASE/repo
cache=$TMPBASE/cache
cp -R "$CN_SRCDIR/tests/fixtures/graph/python" "$repo"
msgs=$TMPBASE/msgs

# ---- usage ----------------------------------------------------------------------
cn mcp --help
check "--help: exit 0" rc_is 0
check "--help shows a client configuration" out_has '"mcpServers"'
cn mcp --bogus
check "an unknown option: exit 2" rc_is 2
check "... named" err_has "--bogus"
cn mcp "$repo"
check "a repository without --repo: exit 2, saying where it goes" sh -c \
  '[ '"$rc"' -eq 2 ] && grep -q "the repository goes after --repo" "$0"' "$ERR"
cn mcp --repo "$repo" --index bm25,vectors
check "--index with an unknown index: exit 2, named" sh -c '[ '"$rc"' -eq 2 ] && grep -q "vectors" "$0"' "$ERR"
cn mcp --repo "$TMPBASE/nowhere" </dev/null
check "a missing repository: exit 1, named" sh -c '[ '"$rc"' -eq 1 ] && grep -q "nowhere" "$0"' "$ERR"
cn mcp --repo "$repo" --skills bm25_serach </dev/null
check "a misspelt skill: exit 1, named" sh -c '[ '"$rc"' -eq 1 ] && grep -q "bm25_serach" "$0"' "$ERR"

# ---- a session ------------------------------------------------------------------
{
  echo '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"sh","version":"1"}}}'
  echo '{"jsonrpc":"2.0","method":"notifications/initialized"}'
  echo
  echo '{"jsonrpc":"2.0","id":2,"method":"tools/list"}'
  printf '%s\r\n' '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"locate","arguments":{"question":"ConnectionPool.get fails in _check when size is an int"}}}'
  echo 'not json at all'
  echo '{"jsonrpc":"2.0","id":"last","method":"tools/call","params":{"name":"grep","arguments":{"pattern":"def _check"}}}'
} > "$msgs"
cn mcp --repo "$repo" --cache-dir "$cache" < "$msgs"
check "end of input: exit 0" rc_is 0
check "one line out per request (5), none for the notification or the blank line" \
  sh -c '[ "$(wc -l < "$0")" -eq 5 ]' "$OUT"
check "standard output holds nothing but JSON-RPC messages" \
  sh -c '! grep -v "^{\"jsonrpc\":\"2.0\",\"id\":.*}$" "$0"' "$OUT"
check "initialize is answered with the version asked for" out_has '"protocolVersion":"2025-06-18"'
check "tools/list offers locate" out_has '{"name":"locate",'
check "and the skills" out_has '{"name":"bm25_search",'
check "a CRLF line is read like any: locate answers" sh -c \
  'grep "^{\"jsonrpc\":\"2.0\",\"id\":3," "$0" | grep -q "Files: pkg/pool.py"' "$OUT"
check "a line that is not JSON: a parse error with a null id" out_has '"id":null,"error":{"code":-32700'
check "and the session goes on: grep answers the last request" sh -c \
  'grep "\"id\":\"last\"" "$0" | grep -q "pkg/pool.py"' "$OUT"
check "the log on standard error says the repository was compiled" err_has "compiled $repo"
check "the index landed in --cache-dir" test -L "$cache/current"

# a second session on the compiled index: nothing to compile
echo '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"find_callers","arguments":{"symbol":"ConnectionPool._check"}}}' > "$msgs"
cn mcp --repo "$repo" --cache-dir "$cache" < "$msgs"
check "a fresh index is served as it is (no compile logged)" sh -c '[ '"$rc"' -eq 0 ] && ! grep -q "compiling" "$0"' "$ERR"
check "find_callers answers through MCP" out_has 'ConnectionPool.get'
cn mcp --repo "$repo" --cache-dir "$cache" --quiet < "$msgs"
check "--quiet: nothing on standard error" sh -c '[ '"$rc"' -eq 0 ] && [ ! -s "$0" ]' "$ERR"

# ---- standard output gone -------------------------------------------------------
$CN_RUN "$CODENIB" mcp --repo "$repo" --cache-dir "$cache" < "$msgs" >&- 2>"$ERR"
rc=$?
check "standard output closed: exit 1 (no crash)" rc_is 1
check "... saying standard output could not be used" err_has "standard output"

# ---- a message too long to read -------------------------------------------------
if [ -z "$CN_VALGRIND" ]; then
  { head -c 70000000 /dev/zero | tr '\0' 'a'; echo
    echo '{"jsonrpc":"2.0","id":5,"method":"ping"}'; } > "$msgs"
  cn mcp --repo "$repo" --cache-dir "$cache" --quiet < "$msgs"
  check "a 70 MB line: refused with a parse error" out_has 'the message is over 64 MiB'
  check "and the next message is answered" out_has '{"jsonrpc":"2.0","id":5,"result":{}}'
  rm -f "$msgs"
else
  echo "# a 70 MB line: left out under valgrind"
fi

done_testing
