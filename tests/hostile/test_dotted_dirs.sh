#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Python files under directories whose names have dots (".conan/build.py",
# "a.b.c/d.e/f.py", "v1.2.3/..."): a module name then has more dots than
# its path has slashes.  The symbol graph once sized its table of module
# suffixes by the slashes and filled it by the dots, overrunning the heap
# (issue 19, item 8).  Compile and query must succeed, and the relative
# imports between such files resolve.
. "$CN_SRCDIR/tests/hostile/lib.sh"
need_python_backend

repo=$TMPBASE/repo
cache=$TMPBASE/cache
mkdir -p "$repo/.conan/test_package" "$repo/a.b.c/d.e" "$repo/pkg"
cat >"$repo/.conan/build.py" <<'PY'
from .helpers import conan_tool


def build_package():
    return conan_tool()
PY
cat >"$repo/.conan/helpers.py" <<'PY'
def conan_tool():
    return "built"
PY
cat >"$repo/.conan/test_package/conanfile.py" <<'PY'
from ..helpers import conan_tool


def test_package():
    return conan_tool()
PY
cat >"$repo/a.b.c/d.e/f.py" <<'PY'
from . import g
from .g import dotted_helper


def dotted_caller():
    return dotted_helper() + g.dotted_helper()
PY
cat >"$repo/a.b.c/d.e/g.py" <<'PY'
def dotted_helper():
    return 2
PY
cat >"$repo/a.b.c/__init__.py" <<'PY'
from .d.e.f import dotted_caller
PY
# deep names: every directory dotted, many dots each, and file names with
# dots of their own (not importable, but they are parsed); each deep
# file imports its neighbour relatively
deep=$repo
for i in 1 2 3 4 5 6 7 8; do
  deep=$deep/v$i.0.$i.rc.$i.post.$i.dev
  mkdir -p "$deep"
  printf 'from .x%s_%s import deep_%s\n\n\ndef deep_caller_%s():\n    return deep_%s()\n' \
    "$i" "$i" "$i" "$i" "$i" >"$deep/m$i.py"
  printf 'def deep_%s():\n    return %s\n' "$i" "$i" >"$deep/x${i}_$i.py"
done
n=0
while [ $n -lt 40 ]; do
  printf 'def many_dots_%s():\n    return %s\n' "$n" "$n" >"$repo/pkg/mod.$n.a.b.c.d.e.f.g.h.py"
  n=$((n + 1))
done
printf 'def top_level_dotted():\n    return 0\n' >"$repo/top.level.name.py"
mkdir -p "$repo/...hidden..dir..."
printf 'def hidden_dots():\n    return 0\n' >"$repo/...hidden..dir.../m.py"
printf 'def stub() -> int: ...\n' >"$repo/.conan/helpers.pyi"
if have_git; then
  (cd "$repo" && git init -q && git add -A && git commit -qm init) >/dev/null 2>&1
fi

cn_t 120 compile "$repo" --cache-dir "$cache" --json
check "compile of a repository with dotted directories exits 0" rc_is 0
check "... and parses every Python file" out_has '"parsed": 65,'

cn_t 60 run find_callers --repo "$repo" --cache-dir "$cache" --args '{"symbol": "conan_tool"}'
check "a relative import inside .conan/ resolves (build_package calls conan_tool)" \
  sh -c '[ '"$rc"' -eq 0 ] && grep -q "\"node_name\":\".conan/build.py:build_package\"[^}]*\"resolved\":true" "$0"' "$OUT"
check "a '..' import from .conan/test_package/ resolves" \
  sh -c 'grep -q "\"node_name\":\".conan/test_package/conanfile.py:test_package\"[^}]*\"resolved\":true" "$0"' "$OUT"

cn_t 60 run find_callers --repo "$repo" --cache-dir "$cache" --args '{"symbol": "dotted_helper"}'
check "a relative import inside a.b.c/d.e/ resolves" \
  sh -c '[ '"$rc"' -eq 0 ] && grep -q "\"node_name\":\"a.b.c/d.e/f.py:dotted_caller\"[^}]*\"resolved\":true" "$0"' "$OUT"

cn_t 60 run find_callers --repo "$repo" --cache-dir "$cache" --args '{"symbol": "deep_8"}'
check "a relative import eight dotted directories down resolves" \
  sh -c '[ '"$rc"' -eq 0 ] && grep -q "/m8.py:deep_caller_8\"[^}]*\"resolved\":true" "$0"' "$OUT"

cn_t 120 query --repo "$repo" --cache-dir "$cache" --offline "where is the conan build package step"
check "query over the dotted repository exits 0" rc_is 0
check "... and names a file under .conan/" out_has 'Files: .conan/'

# an incremental compile reuses the records and builds the graph again
printf '\n\ndef conan_extra():\n    return conan_tool()\n' >>"$repo/.conan/build.py"
cn_t 120 compile "$repo" --cache-dir "$cache" --json
check "an incremental compile of it exits 0" rc_is 0

no_sentinels "nothing ran"
done_testing
