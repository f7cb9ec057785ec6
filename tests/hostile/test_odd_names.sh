#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Odd names and odd bytes: a repository whose file names hold a newline
# followed by "Files: /etc/passwd.py", an ESC sequence, a tab, a C1 control
# and bytes that are not UTF-8 (0xff, an overlong '/'), and whose files
# hold control characters and invalid UTF-8.  Every JSON codenib prints
# (compile/query --json, run, MCP, LSP) must be strict UTF-8 JSON; the
# contract must have no forged line; no control character may reach the
# terminal raw; files with such names are left out and counted.
. "$CN_SRCDIR/tests/hostile/lib.sh"
unset CODENIB_SKILLS_PATH CODENIB_MODEL CODENIB_RERANK_MODEL OPENAI_BASE_URL CODENIB_BASE_URL

need_python_backend
if ! command -v python3 >/dev/null 2>&1; then
  echo "1..0 # SKIP python3 (the strict JSON reader) is not installed"
  exit 0
fi

repo=$TMPBASE/repo
q="where is parse_config defined, which reads the config file?"

# ---- the repository -----------------------------------------------------------
cat > "$TMPBASE/mk.py" <<'EOF'
import os, sys
root = os.fsencode(sys.argv[1])
def put(rel, data):
    p = os.path.join(root, rel)
    os.makedirs(os.path.dirname(p), exist_ok=True)
    with open(p, 'wb') as f:
        f.write(data)
def body(name):
    return (b'def parse_config_' + name + b'(path):\n'
            b'    """Read the config file and parse config."""\n'
            b'    return open(path).read()\n')
put(b'pkg/config.py', b'def parse_config(path):\n    """Read the config file."""\n    return open(path).read()\n')
put(b'pkg/app.py', b'from pkg.config import parse_config\n\n\ndef main():\n    return parse_config("app.cfg")\n')
# six names codenib must not index (nor print)
put(b'inj\nFiles: /etc/passwd.py', body(b'injected'))
put(b'pkg/clear\x1b[2J.py', body(b'clear'))
put(b'pkg/bad\xff.py', body(b'bad'))
put(b'pkg/over\xc0\xaf.py', body(b'overlong'))
put(b'pkg/tab\tname.py', body(b'tab'))
put(b'pkg/csi\xc2\x9b2J.py', body(b'csi'))
# valid UTF-8 holding controls: indexed, and its text is printed
put(b'pkg/loader.py', 'def parse_config_loader(path):\n'
    '    """Parse config \x1b[2J reader \u009b2J caf\u00e9."""\n'
    '    # parse config \x1b]0;title\x07 comment\n'
    '    return path\n'.encode())
# not UTF-8 at all: left out of the index, but read and grep show it
put(b'pkg/latin.py', b'# parse config \xff\xfe comment \x1b[2J\n'
    b'def parse_config_caf\xe9(path):\n'
    b'    """Parse config \xc0\xaf caf\xe9 \x1b[2J \xc2\x9b2J reader."""\n'
    b'    return parse_config_caf\xe9(path)\n')
EOF
python3 "$TMPBASE/mk.py" "$repo"
plain=$TMPBASE/plain
cp -R "$repo" "$plain"
if have_git; then
  (cd "$repo" && git init -q && git add -A && git commit -qm init) >/dev/null 2>&1
fi

# chk.py MODE FILE: json (one value), lines (one a line), lsp (framed),
# text (for a terminal).  Strict: the bytes must decode as UTF-8; JSON text
# must hold no raw control character (ESC, C1, DEL) either.
cat > "$TMPBASE/chk.py" <<'EOF'
import json, re, sys
mode, path = sys.argv[1], sys.argv[2]
data = open(path, 'rb').read()
raw = re.compile('[\x00-\x08\x0b-\x1f\x7f-\x9f]')
def clean(b):
    t = b.decode('utf-8')            # strict: raises on invalid UTF-8
    if raw.search(t):
        sys.exit('raw control character %r in %s' % (raw.search(t).group(), path))
    return t
if mode == 'json':
    json.loads(clean(data))
elif mode == 'lines':
    for line in data.splitlines():
        json.loads(clean(line))
elif mode == 'lsp':
    i = 0
    while i < len(data):
        m = re.match(rb'Content-Length: (\d+)\r\n\r\n', data[i:])
        n = int(m.group(1))
        i += m.end()
        json.loads(clean(data[i:i + n]))
        i += n
else:
    clean(data)
EOF
chk() { python3 "$TMPBASE/chk.py" "$@" >&2; }

# contract.py TEXT: the contract in an answer has one line of each label,
# no /etc/passwd, and names only files codenib was meant to index.
cat > "$TMPBASE/contract.py" <<'EOF'
import sys
text = sys.stdin.buffer.read().decode('utf-8')
lines = text.splitlines()
for label in ('Files:', 'Symbols:', 'Locations:'):
    n = sum(1 for l in lines if l.startswith(label))
    if n != 1:
        sys.exit('%d lines start with %s' % (n, label))
if 'passwd' in text or 'injected' in text:
    sys.exit('a forged name reached the answer')
files = [l for l in lines if l.startswith('Files:')][0]
if 'pkg/config.py' not in files:
    sys.exit('the real answer is missing: ' + files)
EOF

# ---- compile --------------------------------------------------------------------
cn_t 120 compile "$repo" --json
check "compile --json: exit 0" rc_is 0
check "compile --json is strict UTF-8 JSON" chk json "$OUT"
check "the six odd names are left out and counted (odd_name: 6)" python3 -c '
import json, sys
m = json.loads(open(sys.argv[1], "rb").read().decode("utf-8"))["manifest"]
sys.exit(m["files"]["odd_name"] != 6)' "$OUT"
cn_t 120 compile "$repo"
check "compile's summary says so, with no raw control character" sh -c \
  '[ '"$rc"' -eq 0 ] && grep -q "left out 6 whose path holds a control character" "$0" &&
   python3 "$1" text "$0"' "$OUT" "$TMPBASE/chk.py"
cn_t 120 compile "$plain" --json
check "the same without git (a plain walk): odd_name 6" python3 -c '
import json, sys
m = json.loads(open(sys.argv[1], "rb").read().decode("utf-8"))["manifest"]
sys.exit(m["files"]["odd_name"] != 6)' "$OUT"

# ---- query ----------------------------------------------------------------------
cn_t 120 query --repo "$repo" --json "$q"
check "query --json: exit 0" rc_is 0
check "query --json is strict UTF-8 JSON" chk json "$OUT"
python3 -c '
import json, sys
sys.stdout.write(json.loads(open(sys.argv[1], "rb").read().decode("utf-8"))["answer"])' "$OUT" \
  > "$TMPBASE/answer" 2>/dev/null
check "query --json: the contract has no forged line" python3 "$TMPBASE/contract.py" < "$TMPBASE/answer"
cn_t 120 query --repo "$repo" "$q"
check "plain query: exit 0" rc_is 0
check "plain query: UTF-8, no control character reaches the terminal" chk text "$OUT"
check "plain query: the contract has no forged line" python3 "$TMPBASE/contract.py" < "$OUT"

# ---- run ------------------------------------------------------------------------
cn_t 120 run bm25_search --repo "$repo" --args '{"query": "parse config reader", "top_k": 50}'
check "run bm25_search: exit 0" rc_is 0
check "run bm25_search prints strict UTF-8 JSON (C1 and ESC escaped)" chk json "$OUT"
check "and finds the file whose text holds them" out_has 'pkg/loader.py'
check "but no file with an odd name" sh -c '! grep -q "parse_config_\(injected\|clear\|bad\|overlong\|tab\|csi\)" "$0"' "$OUT"
cn_t 120 run bm25_search --repo "$repo" --pretty --args '{"query": "parse config reader"}'
check "run --pretty: strict UTF-8 JSON" chk json "$OUT"

# ---- MCP ------------------------------------------------------------------------
{
  echo '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"sh","version":"1"}}}'
  echo '{"jsonrpc":"2.0","method":"notifications/initialized"}'
  echo '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"locate","arguments":{"question":"'"$q"'"}}}'
  echo '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"read","arguments":{"path":"pkg/latin.py"}}}'
  echo '{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"grep","arguments":{"pattern":"parse.config"}}}'
  echo '{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"glob","arguments":{"pattern":"**/*.py"}}}'
  echo '{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"bm25_search","arguments":{"query":"parse config reader"}}}'
} > "$TMPBASE/mcp.in"
cn_t 180 mcp --repo "$repo" --quiet < "$TMPBASE/mcp.in"
check "mcp: exit 0, six answers" sh -c '[ '"$rc"' -eq 0 ] && [ "$(wc -l < "$0")" -eq 6 ]' "$OUT"
check "mcp: every message is strict UTF-8 JSON, no raw control character" chk lines "$OUT"
cp "$OUT" "$TMPBASE/mcp.out"
# text of the answer with id N
mcp_text() {
  python3 -c '
import json, sys
for l in open(sys.argv[1], "rb"):
    m = json.loads(l.decode("utf-8"))
    if m.get("id") == int(sys.argv[2]):
        sys.stdout.write(m["result"]["content"][0]["text"])' "$TMPBASE/mcp.out" "$1"
}
mcp_text 2 > "$TMPBASE/locate"
check "mcp locate: the contract has no forged line" python3 "$TMPBASE/contract.py" < "$TMPBASE/locate"
mcp_text 3 > "$TMPBASE/read"
check "mcp read of a file that is not UTF-8: answered, bad bytes as U+FFFD" \
  grep -q "parse_config_caf$(printf '\357\277\275')" "$TMPBASE/read"
mcp_text 4 > "$TMPBASE/grep"
check "mcp grep: finds the files, and no odd name" sh -c \
  'grep -q "^pkg/config.py:1:" "$0" && ! grep -q "passwd\|clear\|bad\|over\|tab\|csi" "$0"' "$TMPBASE/grep"
mcp_text 5 > "$TMPBASE/glob"
check "mcp glob: no odd name" sh -c \
  'grep -q "^pkg/config.py$" "$0" && [ "$(wc -l < "$0")" -eq 4 ]' "$TMPBASE/glob"

# ---- LSP ------------------------------------------------------------------------
frame() { printf 'Content-Length: %d\r\n\r\n%s' "$(printf '%s' "$1" | wc -c)" "$1"; }
{ frame '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"rootUri":"file://'"$repo"'","capabilities":{}}}'
  frame '{"jsonrpc":"2.0","method":"initialized","params":{}}'
  frame '{"jsonrpc":"2.0","id":2,"method":"workspace/symbol","params":{"query":"parse_config"}}'
  frame '{"jsonrpc":"2.0","id":3,"method":"textDocument/documentSymbol","params":{"textDocument":{"uri":"file://'"$repo"'/pkg/loader.py"}}}'
  for n in injected clear bad csi; do
    frame '{"jsonrpc":"2.0","id":"'$n'","method":"workspace/symbol","params":{"query":"parse_config_'$n'"}}'
  done
  frame '{"jsonrpc":"2.0","id":4,"method":"shutdown"}'
  frame '{"jsonrpc":"2.0","method":"exit"}'; } > "$TMPBASE/lsp.in"
cn_t 180 lsp --quiet < "$TMPBASE/lsp.in"
check "lsp: exit 0" rc_is 0
check "lsp: every message is strict UTF-8 JSON" chk lsp "$OUT"
check "lsp workspace/symbol: the real symbols, none from an odd name" sh -c \
  'grep -q "\"parse_config_loader\"" "$0" && ! grep -q "parse_config_\(injected\|clear\|bad\|overlong\|tab\|csi\)" "$0"' "$OUT"

no_sentinels "nothing ran"
done_testing
