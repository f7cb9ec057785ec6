#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# `codenib mcp` answering while tool calls run: tools/call on worker
# threads (--workers), ping and tools/list answered at once,
# notifications/cancelled stopping a running or queued call (and no
# response sent for it), a timed-out bash call answered with isError, and
# the end of input waiting for the calls under way.  The client is a shell
# feeding the real server through a FIFO, with pauses between messages.
. "$CN_SRCDIR/tests/cli/lib.sh"
unset CODENIB_SKILLS_PATH CODENIB_MODEL CODENIB_RERANK_MODEL OPENAI_BASE_URL CODENIB_BASE_URL

repo=$TMPBASE/repo
cache=$TMPBASE/cache
mkdir -p "$repo"
echo 'print("hello")' > "$repo/main.py"
fifo=$TMPBASE/fifo
mkfifo "$fifo"

init='{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"sh","version":"1"}}}'
bash_call() { # ID COMMAND [TIMEOUT_MS]
  if [ -n "${3-}" ]; then
    printf '{"jsonrpc":"2.0","id":%s,"method":"tools/call","params":{"name":"bash","arguments":{"command":"%s","timeout":%s}}}\n' "$1" "$2" "$3"
  else
    printf '{"jsonrpc":"2.0","id":%s,"method":"tools/call","params":{"name":"bash","arguments":{"command":"%s"}}}\n' "$1" "$2"
  fi
}
cancel() { printf '{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":%s,"reason":"test"}}\n' "$1"; }
# line ID: the number of the output line answering request ID (empty if none)
line() { grep -n "^{\"jsonrpc\":\"2.0\",\"id\":$1," "$OUT" | cut -d: -f1; }
now() { date +%s; }

# ---- usage -----------------------------------------------------------------------
cn mcp --repo "$repo" --workers 0 </dev/null
check "--workers 0: exit 2, named" sh -c '[ '"$rc"' -eq 2 ] && grep -q -- "--workers" "$0"' "$ERR"
cn mcp --repo "$repo" --workers 65 </dev/null
check "--workers 65: exit 2" rc_is 2
cn mcp --repo "$repo" --workers two </dev/null
check "--workers two: exit 2" rc_is 2

# ---- ping and tools/list answered while a slow call runs ---------------------------
{
  echo "$init"
  bash_call 2 'sleep 3; echo slow-done'
  sleep 0.5
  echo '{"jsonrpc":"2.0","id":3,"method":"ping"}'
  echo '{"jsonrpc":"2.0","id":4,"method":"tools/list"}'
} > "$fifo" &
start=$(now)
cn mcp --repo "$repo" --cache-dir "$cache" --enable-bash < "$fifo"
took=$(( $(now) - start ))
check "end of input: exit 0" rc_is 0
check "ping is answered before the slow bash call ends" \
  sh -c '[ -n "$0" ] && [ -n "$1" ] && [ "$0" -lt "$1" ]' "$(line 3)" "$(line 2)"
check "so is tools/list" sh -c '[ -n "$0" ] && [ "$0" -lt "$1" ]' "$(line 4)" "$(line 2)"
check "the end of input waits for the call under way: it is answered" \
  sh -c 'grep "^{\"jsonrpc\":\"2.0\",\"id\":2," "$0" | grep -q "slow-done"' "$OUT"
check "four responses, each a whole JSON-RPC line" \
  sh -c '[ "$(wc -l < "$0")" -eq 4 ] && ! grep -v "^{\"jsonrpc\":\"2.0\",\"id\":.*}$" "$0"' "$OUT"
check "... and the slow call was not cut short (${took}s)" test "$took" -ge 3

# ---- two calls at once ------------------------------------------------------------
# each command notes when it started: side by side they start together,
# one after the other 3 s apart
{
  bash_call 5 "date +%s > $TMPBASE/start5; sleep 3; echo five"
  bash_call 6 "date +%s > $TMPBASE/start6; sleep 3; echo six"
} > "$fifo" &
cn mcp --repo "$repo" --cache-dir "$cache" --enable-bash --workers 2 < "$fifo"
check "--workers 2: two 3 s calls both answered" sh -c '[ -n "$0" ] && [ -n "$1" ]' "$(line 5)" "$(line 6)"
check "... side by side (started within 2 s of each other)" \
  sh -c 'a=$(cat "$0") b=$(cat "$1"); d=$((a - b)); [ "${d#-}" -lt 2 ]' "$TMPBASE/start5" "$TMPBASE/start6"

# ---- a cancelled call -------------------------------------------------------------
pidfile=$TMPBASE/sleeper.pid
{
  echo "$init"
  bash_call 7 "echo \$\$ > $pidfile; exec sleep 60"
  # cancelled once it runs (however slowly the server started)
  n=0; while [ ! -s "$pidfile" ] && [ $n -lt 200 ]; do sleep 0.1; n=$((n + 1)); done
  sleep 0.2
  cancel 7
  echo '{"jsonrpc":"2.0","id":8,"method":"ping"}'
} > "$fifo" &
start=$(now)
cn mcp --repo "$repo" --cache-dir "$cache" --enable-bash < "$fifo"
took=$(( $(now) - start ))
check "cancelled: exit 0" rc_is 0
check "no response for the cancelled request (MCP: the receiver should not respond)" test -z "$(line 7)"
check "the requests after it are answered" test -n "$(line 8)"
check "the cancelled command was stopped, not waited for (${took}s)" test "$took" -lt 20
check "its process is gone (the process group was killed)" \
  sh -c '[ -s "$0" ] && ! kill -0 "$(cat "$0")" 2>/dev/null' "$pidfile"

# ---- a queued call cancelled before it runs ----------------------------------------
marker=$TMPBASE/ran
{
  bash_call 9 'sleep 2; echo nine'
  bash_call 10 "touch $marker; echo ten"
  sleep 0.5
  cancel 10
} > "$fifo" &
cn mcp --repo "$repo" --cache-dir "$cache" --enable-bash --workers 1 < "$fifo"
check "--workers 1: the running call is answered" test -n "$(line 9)"
check "the queued call cancelled before it ran: no response" test -z "$(line 10)"
check "... and it never ran" test ! -e "$marker"

# an unknown or finished request id is ignored
{
  cancel 99
  cancel '"nope"'
  echo '{"jsonrpc":"2.0","id":11,"method":"ping"}'
} > "$fifo" &
cn mcp --repo "$repo" --cache-dir "$cache" < "$fifo"
check "cancelling an unknown request: nothing sent, the session goes on" \
  sh -c '[ '"$rc"' -eq 0 ] && [ "$(wc -l < "$0")" -eq 1 ]' "$OUT"

# ---- a timed-out call --------------------------------------------------------------
{
  bash_call 12 'echo started; sleep 20' 300
} > "$fifo" &
cn mcp --repo "$repo" --cache-dir "$cache" --enable-bash < "$fifo"
check "a bash call past its time limit: isError true" \
  sh -c 'grep "^{\"jsonrpc\":\"2.0\",\"id\":12," "$0" | grep -q "\"isError\":true"' "$OUT"
check "... with its output so far and the time limit" \
  sh -c 'grep "^{\"jsonrpc\":\"2.0\",\"id\":12," "$0" | grep "started" | grep -q "timed out after 300 ms"' "$OUT"

done_testing
