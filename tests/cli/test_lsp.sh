#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# `codenib lsp`: the language server as an editor sees it -- a real process
# on stdin/stdout with Content-Length framing, the log on stderr; usage
# errors; broken framing; exit statuses.
. "$CN_SRCDIR/tests/cli/lib.sh"
unset CODENIB_SKILLS_PATH CODENIB_MODEL

need_python_backend

repo=$TMPBASE/repo
cache=$TMPBASE/cache
cp -R "$CN_SRCDIR/tests/fixtures/graph/python" "$repo"
msgs=$TMPBASE/msgs
# frame BODY: one LSP message
frame() { printf 'Content-Length: %d\r\n\r\n%s' "$(printf '%s' "$1" | wc -c)" "$1"; }
init='{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"rootUri":"file://'"$repo"'","capabilities":{}}}'
def='{"jsonrpc":"2.0","id":2,"method":"textDocument/definition","params":{"textDocument":{"uri":"file://'"$repo"'/pkg/pool.py"},"position":{"line":8,"character":15}}}'
shutdown='{"jsonrpc":"2.0","id":3,"method":"shutdown"}'
exit_n='{"jsonrpc":"2.0","method":"exit"}'

# ---- usage ----------------------------------------------------------------------
cn lsp --help
check "--help: exit 0, naming what it serves" sh -c '[ '"$rc"' -eq 0 ] && grep -q "go to" "$0"' "$OUT"
cn lsp --bogus
check "an unknown option: exit 2, named" sh -c '[ '"$rc"' -eq 2 ] && grep -q -- "--bogus" "$0"' "$ERR"
cn lsp --index nodes,bm26
check "--index with an unknown index: exit 2, named" sh -c '[ '"$rc"' -eq 2 ] && grep -q "bm26" "$0"' "$ERR"
cn lsp --repo "$TMPBASE/nowhere" </dev/null
check "a missing repository: exit 1, named" sh -c '[ '"$rc"' -eq 1 ] && grep -q "nowhere" "$0"' "$ERR"

# ---- a session ------------------------------------------------------------------
{ frame "$init"; frame '{"jsonrpc":"2.0","method":"initialized","params":{}}'; frame "$def"
  frame 'not json'; frame "$shutdown"; frame "$exit_n"; } > "$msgs"
cn lsp --stdio --cache-dir "$cache" < "$msgs"
check "shutdown then exit: exit 0 (--stdio accepted)" rc_is 0
check "one framed answer per request and per unreadable body (4)" \
  sh -c '[ "$(grep -o "Content-Length: " "$0" | wc -l)" -eq 4 ]' "$OUT"
check "definition of self.release() answers pkg/base.py" out_has "/pkg/base.py\",\"range\":{\"start\":{\"line\":1,\"character\":8}"
check "a body that is not JSON: a parse error, and the session goes on" out_has '"id":null,"error":{"code":-32700'
check "shutdown: a null result" out_has '{"jsonrpc":"2.0","id":3,"result":null}'
check "the repository came from rootUri, and was compiled" err_has "compiled $repo"

# each Content-Length matches its body
cat > "$TMPBASE/frames.awk" <<'AWK'
BEGIN { RS = "Content-Length: " }
NR > 1 {
  i = index($0, "\r\n\r\n"); n = substr($0, 1, i - 1) + 0
  if (i == 0 || length(substr($0, i + 4)) != n) bad = 1
  seen++
}
END { exit (bad || seen != 4) }
AWK
check "every Content-Length is its body's length in bytes" \
  env LC_ALL=C awk -f "$TMPBASE/frames.awk" "$OUT"

# ---- endings --------------------------------------------------------------------
{ frame "$init"; frame "$exit_n"; } > "$msgs"
cn lsp --repo "$repo" --cache-dir "$cache" < "$msgs"
check "exit without shutdown: exit 1" rc_is 1
frame "$init" > "$msgs"
cn lsp --repo "$repo" --cache-dir "$cache" < "$msgs"
check "end of input without shutdown: exit 1, said on stderr" sh -c \
  '[ '"$rc"' -eq 1 ] && grep -q "ended without shutdown" "$0"' "$ERR"
{ frame "$init"; frame "$shutdown"; } > "$msgs"
cn lsp --repo "$repo" --cache-dir "$cache" --quiet < "$msgs"
check "end of input after shutdown: exit 0, --quiet says nothing" sh -c '[ '"$rc"' -eq 0 ] && [ ! -s "$0" ]' "$ERR"

# ---- broken framing -------------------------------------------------------------
printf 'hello there\r\n\r\n{}' > "$msgs"
cn lsp --repo "$repo" --cache-dir "$cache" < "$msgs"
check "a line that is not a header: exit 1, saying so" sh -c \
  '[ '"$rc"' -eq 1 ] && grep -q "message 1: .hello there. is not a header" "$0"' "$ERR"
printf 'Content-Type: application/vscode-jsonrpc\r\n\r\n{}' > "$msgs"
cn lsp --repo "$repo" --cache-dir "$cache" < "$msgs"
check "no Content-Length: exit 1, saying so" sh -c '[ '"$rc"' -eq 1 ] && grep -q "no Content-Length" "$0"' "$ERR"
printf 'Content-Length: -5\r\n\r\n' > "$msgs"
cn lsp --repo "$repo" --cache-dir "$cache" < "$msgs"
check "a negative Content-Length: exit 1" sh -c '[ '"$rc"' -eq 1 ] && grep -q "is not a number" "$0"' "$ERR"
{ frame "$init"; printf 'Content-Length: 100\r\n\r\n{"jsonrpc":'; } > "$msgs"
cn lsp --repo "$repo" --cache-dir "$cache" < "$msgs"
check "input that ends inside a body: exit 1, saying where" sh -c \
  '[ '"$rc"' -eq 1 ] && grep -q "message 2: the input ends 11 bytes into a body of 100" "$0"' "$ERR"
check "... after answering the complete message before it" out_has '"id":1,"result"'

if [ -z "$CN_VALGRIND" ]; then
  { frame "$init"; printf 'Content-Length: 70000000\r\n\r\n'; head -c 70000000 /dev/zero | tr '\0' ' '
    frame "$shutdown"; } > "$msgs"
  cn lsp --repo "$repo" --cache-dir "$cache" --quiet < "$msgs"
  check "a 70 MB body: skipped with a parse error, the session goes on to shutdown" sh -c \
    '[ '"$rc"' -eq 0 ] && grep -q "over 64 MiB" "$0" && grep -q "\"id\":3,\"result\":null" "$0"' "$OUT"
  rm -f "$msgs"
else
  echo "# a 70 MB body: left out under valgrind"
fi

done_testing
