#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# FIFOs where codenib expects files: in the repository (where a compiled
# file was, as a .gitignore git reads, untracked), in a skill directory.
# Opening a FIFO waits for a writer that never comes: compile, status,
# skills list and the language server must answer instead.
. "$CN_SRCDIR/tests/hostile/lib.sh"
unset CODENIB_SKILLS_PATH CODENIB_MODEL OPENAI_BASE_URL CODENIB_BASE_URL

need_python_backend
if ! mkfifo "$TMPBASE/probe" 2>/dev/null; then echo "1..0 # SKIP no FIFOs here"; exit 0; fi

repo=$TMPBASE/repo
cache=$TMPBASE/cache
py_repo "$repo"
mkfifo "$repo/pipe.py" "$repo/pkg/run"   # untracked; one without an extension (sniffed)

# ---- the language server, on an index whose file became a FIFO ------------------
cn_t 120 compile "$repo" --cache-dir "$cache" --json
check "compile with untracked FIFOs: exit 0" rc_is 0
check "the FIFOs are not indexed" sh -c '! grep -q "pipe.py" "$0"' "$cache/current/repo_manifest.json"
rm "$repo/pkg/config.py" && mkfifo "$repo/pkg/config.py"
frame() { printf 'Content-Length: %d\r\n\r\n%s' "$(printf '%s' "$1" | wc -c)" "$1"; }
uri="file://$repo/pkg/config.py"
{ frame '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"rootUri":"file://'"$repo"'","capabilities":{}}}'
  frame '{"jsonrpc":"2.0","method":"initialized","params":{}}'
  frame '{"jsonrpc":"2.0","id":2,"method":"textDocument/documentSymbol","params":{"textDocument":{"uri":"'"$uri"'"}}}'
  frame '{"jsonrpc":"2.0","id":3,"method":"textDocument/definition","params":{"textDocument":{"uri":"file://'"$repo"'/pkg/app.py"},"position":{"line":4,"character":12}}}'
  frame '{"jsonrpc":"2.0","id":4,"method":"shutdown"}'
  frame '{"jsonrpc":"2.0","method":"exit"}'; } >"$TMPBASE/msgs"
cn_t 60 lsp --cache-dir "$cache" --no-compile <"$TMPBASE/msgs"
check "lsp: documentSymbol and definition into a FIFO answer, and the server exits 0" \
  sh -c '[ '"$rc"' -eq 0 ] && grep -q "\"id\":2" "$0" && grep -q "\"id\":3" "$0" && grep -q "\"id\":4" "$0"' "$OUT"

cn_t 60 status "$repo" --cache-dir "$cache"
check "status with an indexed file now a FIFO: answers (stale)" \
  sh -c '[ '"$rc"' -ne 124 ] && grep -q "stale" "$0"' "$OUT"
cn_t 120 compile "$repo" --cache-dir "$cache" --json
check "compile again: exit 0, the FIFO left out" sh -c '[ '"$rc"' -eq 0 ] && grep -q "\"parsed\": 0," "$0"' "$OUT"

# ---- a FIFO git opens: a .gitignore --------------------------------------------
if have_git; then
  grepo=$TMPBASE/grepo
  py_repo "$grepo"
  mkfifo "$grepo/.gitignore"
  CODENIB_GIT_TIMEOUT=2; export CODENIB_GIT_TIMEOUT
  cn_t 120 compile "$grepo" --cache-dir "$TMPBASE/gcache" --json
  check "a FIFO .gitignore (git hangs on it): compile still ends, exit 0" rc_is 0
  check "having listed the directory itself" sh -c 'grep -q "\"used_git\": false" "$0" && grep -q "\"parsed\": 2," "$0"' "$OUT"
  check "and said why, naming git's command and the repository" \
    sh -c 'grep -q "git ls-files in $1 took longer than 2.0 s" "$0"' "$ERR" "$grepo"
  check "the identity: HEAD known" grep -q '"git_head": "[0-9a-f]\{40\}"' "$TMPBASE/gcache/current/repo_manifest.json"
  cn_t 60 status "$grepo" --cache-dir "$TMPBASE/gcache"
  check "status: answers" sh -c '[ '"$rc"' -eq 0 ] && grep -q ": fresh" "$0"' "$OUT"
  unset CODENIB_GIT_TIMEOUT
fi

# ---- skills: a skill directory with FIFOs for files -------------------------------
mkdir -p "$repo/skills/fifo_config" "$repo/skills/fifo_doc"
mkfifo "$repo/skills/fifo_config/config.yaml" "$repo/skills/fifo_doc/skill.md"
cp "$CN_BUILDDIR/_skills/bm25_search/config.yaml" "$repo/skills/fifo_doc/config.yaml"
CODENIB_SKILLS_PATH=$repo/skills; export CODENIB_SKILLS_PATH
cn_t 60 skills list
check "skills list with FIFO config.yaml and skill.md: answers, exit 1 (those packages failed)" rc_is 1
check "the FIFO is named as not a regular file" sh -c 'grep -q "not a regular file" "$0" "$1"' "$OUT" "$ERR"
unset CODENIB_SKILLS_PATH

no_sentinels "nothing ran"
done_testing
