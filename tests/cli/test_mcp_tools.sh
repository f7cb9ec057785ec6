#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# `codenib mcp --tools` and `--profile`: which of the server's own tools
# (locate, read, grep, glob, bash) tools/list offers and tools/call runs;
# unknown names refused, named.  And grep and glob in a git checkout leave
# out what the index's walk leaves out: files ignored by nested .gitignore
# files and by .git/info/exclude.
. "$CN_SRCDIR/tests/cli/lib.sh"
unset CODENIB_SKILLS_PATH CODENIB_MODEL CODENIB_RERANK_MODEL OPENAI_BASE_URL CODENIB_BASE_URL

need_python_backend

repo=$TMPBASE/repo
cache=$TMPBASE/cache
cp -R "$CN_SRCDIR/tests/fixtures/graph/python" "$repo"
msgs=$TMPBASE/msgs
echo '{"jsonrpc":"2.0","id":1,"method":"tools/list"}' > "$msgs"
# the names tools/list offers, one a line, sorted
names() { grep -o '{"name":"[a-z0-9_]*"' "$OUT" | sed 's/{"name":"//; s/"$//' | sort | tr '\n' ' '; }
offers() { case " $(names)" in *" $1 "*) return 0 ;; esac; return 1; }
lacks() { ! offers "$1"; }

# ---- usage ------------------------------------------------------------------------
cn mcp --repo "$repo" --tools read,grep --profile full </dev/null
check "--tools and --profile together: exit 2" sh -c '[ '"$rc"' -eq 2 ] && grep -q -- "--profile" "$0"' "$ERR"
cn mcp --repo "$repo" --profile minimal </dev/null
check "an unknown profile: exit 2, named" sh -c '[ '"$rc"' -eq 2 ] && grep -q "minimal" "$0"' "$ERR"
cn mcp --repo "$repo" --cache-dir "$cache" --tools read,gerp,bm25_search </dev/null
check "unknown names in --tools: exit 1" rc_is 1
check "... each named" sh -c 'grep -q "'"'gerp'"'" "$0" && grep -q "'"'bm25_search'"'" "$0"' "$ERR"
check "... with the tools it takes, and where skills are chosen" \
  sh -c 'grep -q "locate, read, grep, glob, bash" "$0" && grep -q -- "--skills" "$0"' "$ERR"
cn mcp --repo "$repo" --cache-dir "$cache" --tools read,bash </dev/null
check "--tools bash without --enable-bash: exit 1, saying so" \
  sh -c '[ '"$rc"' -eq 1 ] && grep -q -- "--enable-bash" "$0"' "$ERR"

# ---- what tools/list offers ---------------------------------------------------------
cn mcp --repo "$repo" --cache-dir "$cache" --quiet < "$msgs"
check "default: locate, read, grep, glob and the skills" \
  sh -c 'for t in locate read grep glob bm25_search; do case " $0" in *" $t "*) ;; *) exit 1 ;; esac; done' "$(names)"
check "default: no bash" lacks bash
cn mcp --repo "$repo" --cache-dir "$cache" --quiet --profile full --enable-bash < "$msgs"
check "--profile full --enable-bash: bash too" offers bash
cn mcp --repo "$repo" --cache-dir "$cache" --quiet --profile skills-only --enable-bash < "$msgs"
check "--profile skills-only: locate and the skills" sh -c 'case " $0" in *" locate "*" bm25_search "*|*" bm25_search "*" locate "*) exit 0 ;; esac; exit 1' "$(names)"
check "... without read, grep, glob or bash" \
  sh -c 'for t in read grep glob bash; do case " $0" in *" $t "*) exit 1 ;; esac; done' "$(names)"
cn mcp --repo "$repo" --cache-dir "$cache" --quiet --tools " read , grep" < "$msgs"
check "--tools read,grep (blanks allowed): read and grep" sh -c 'case " $0" in *" grep "*" read "*) exit 0 ;; esac; exit 1' "$(names)"
check "... not locate nor glob" sh -c 'case " $0" in *" locate "*|*" glob "*) exit 1 ;; esac' "$(names)"
check "... the skills stay" offers find_callers

# a tool left out is not called either
{
  echo '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"glob","arguments":{"pattern":"**/*.py"}}}'
  echo '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"read","arguments":{"path":"pkg/pool.py"}}}'
} > "$msgs"
cn mcp --repo "$repo" --cache-dir "$cache" --quiet --tools read < "$msgs"
check "a call to a tool left out: invalid params, saying so" \
  sh -c 'grep "\"id\":2," "$0" | grep -q "\"code\":-32602.*not offered"' "$OUT"
check "a tool offered answers" sh -c 'grep "\"id\":3," "$0" | grep -q "class ConnectionPool"' "$OUT"

# ---- grep and glob honour .gitignore files and .git/info/exclude ---------------------
if command -v git >/dev/null 2>&1; then
  g=$TMPBASE/g
  mkdir -p "$g/src/gen" "$g/docs" "$g/notes"
  for f in src/keep.py src/gen/made.py src/local.py docs/guide.md notes/todo.txt; do
    echo "needle_token in $f" > "$g/$f"
  done
  (cd "$g" && git init -q) || true
  printf 'gen/\n' > "$g/src/.gitignore"        # a nested .gitignore
  printf 'local.py\n' >> "$g/src/.gitignore"
  printf 'notes/\n' >> "$g/.git/info/exclude"   # the repository's own exclude file
  {
    echo '{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"grep","arguments":{"pattern":"needle_token"}}}'
    echo '{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"glob","arguments":{"pattern":"**/*"}}}'
    echo '{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"grep","arguments":{"pattern":"needle_token","path":"src"}}}'
  } > "$msgs"
  cn mcp --repo "$g" --cache-dir "$TMPBASE/gcache" --quiet < "$msgs"
  check "grep finds the files git does not ignore" \
    sh -c 'grep "\"id\":4," "$0" | grep "src/keep.py" | grep -q "docs/guide.md"' "$OUT"
  check "grep leaves out what a nested .gitignore ignores" \
    sh -c '! grep "\"id\":4," "$0" | grep -q -e "src/gen/made.py" -e "src/local.py"' "$OUT"
  check "grep leaves out what .git/info/exclude ignores" sh -c '! grep "\"id\":4," "$0" | grep -q "notes/todo.txt"' "$OUT"
  check "glob finds the files git does not ignore" sh -c 'grep "\"id\":5," "$0" | grep -q "src/keep.py"' "$OUT"
  check "glob leaves out both kinds of ignored files" \
    sh -c '! grep "\"id\":5," "$0" | grep -q -e "src/gen/made.py" -e "src/local.py" -e "notes/todo.txt"' "$OUT"
  check "grep below a directory too" \
    sh -c 'grep "\"id\":6," "$0" | grep "src/keep.py" | grep -v -q "src/local.py"' "$OUT"
  # only what git ignores is left out: an ignore file is listed like any other
  echo '{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"glob","arguments":{"pattern":"**/.gitignore"}}}' > "$msgs"
  cn mcp --repo "$g" --cache-dir "$TMPBASE/gcache" --quiet < "$msgs"
  check "a .gitignore itself is a file like any (not ignored)" out_has 'src/.gitignore'
else
  echo "# git is not installed: the .gitignore checks are left out"
fi

done_testing
