#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Huge lines (issue #19): a generated or minified file of one line of
# megabytes is no reason to fail, to answer late, or to flood a client.
# The compiler parses what is under its size limit and leaves the rest out,
# said so; read and grep answer with a bounded line, not the megabytes.
. "$CN_SRCDIR/tests/hostile/lib.sh"
need_python_backend

repo=$TMPBASE/repo
mkdir -p "$repo/pkg"
# a 1.5 MB line of Python (under the 2 MiB limit: parsed), a 2.8 MB line
# of JavaScript (over it: left out), 8 MB of text on one line
python3 - "$repo" <<'EOF'
import sys
r = sys.argv[1]
open(r + '/pkg/wide.py', 'w').write('def wide_function(): return ' + '+'.join('v%d' % i for i in range(200000))
                                    + '\n\ndef after_wide():\n    return 1\n')
open(r + '/pkg/minified.js', 'w').write('function minifiedEntry(){' + 'a=1;' * 700000 + '}\n')
open(r + '/notes.txt', 'w').write('needle ' + 'x' * (8 * 1024 * 1024) + '\n')
open(r + '/pkg/ok.py', 'w').write('def parse_config(p):\n    return p\n')
EOF

cn_t 120 compile "$repo" --cache-dir "$TMPBASE/cache" --json
check "compile succeeds" rc_is 0
check "the file over the size limit is left out and counted" sh -c \
  'python3 -c "import json,sys; j=json.load(open(sys.argv[1])); assert j[\"manifest\"][\"files\"][\"too_large\"] == 1, j[\"manifest\"][\"files\"]" "$0"' "$OUT"

cn_t 60 query --repo "$repo" --cache-dir "$TMPBASE/cache" --quiet "where is after_wide defined?"
check "query answers" rc_is 0
check "... with the function after the huge line, at its line" out_has "pkg/wide.py:3-4"

msgs=$TMPBASE/msgs
{
  echo '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"sh","version":"1"}}}'
  echo '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read","arguments":{"path":"pkg/wide.py"}}}'
  echo '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"grep","arguments":{"pattern":"needle"}}}'
  echo '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"read","arguments":{"path":"notes.txt"}}}'
  echo '{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"read","arguments":{"path":"pkg/minified.js"}}}'
} >"$msgs"
cn_t 60 mcp --repo "$repo" --cache-dir "$TMPBASE/cache" --quiet <"$msgs"
check "mcp: the session ends, five answers" sh -c '[ '"$rc"' -eq 0 ] && [ "$(wc -l <"$0")" -eq 5 ]' "$OUT"
# every answer is well under the megabytes of the lines it shows
check "mcp: no answer is longer than 64 KB" sh -c '! awk "length(\$0) > 65536 { bad = 1 } END { exit !bad }" "$0"' "$OUT"
check "mcp: read shows the huge line's start" sh -c 'grep "\"id\":1," "$0" | grep -q "def wide_function(): return v0+v1"' "$OUT"
check "mcp: ... and the lines after it" sh -c 'grep "\"id\":1," "$0" | grep -q "after_wide"' "$OUT"
check "mcp: grep finds the 8 MB line" sh -c 'grep "\"id\":2," "$0" | grep -q "notes.txt:1:needle"' "$OUT"
check "mcp: read of the 8 MB line answers" sh -c 'grep "\"id\":3," "$0" | grep -q "needle xxx"' "$OUT"
check "mcp: read of the file the index left out answers" sh -c 'grep "\"id\":4," "$0" | grep -q "function minifiedEntry"' "$OUT"

no_sentinels "nothing ran"
done_testing
