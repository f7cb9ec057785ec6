#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# A repository in the middle of a merge: git lists each conflicted file
# once per stage (three times).  Each file is indexed once, and compiling
# again and again while the conflict is being resolved works.
. "$CN_SRCDIR/tests/hostile/lib.sh"
unset CODENIB_SKILLS_PATH CODENIB_MODEL OPENAI_BASE_URL CODENIB_BASE_URL

need_python_backend
if ! have_git; then echo "1..0 # SKIP git is not installed"; exit 0; fi

repo=$TMPBASE/repo
cache=$TMPBASE/cache
py_repo "$repo"
g() { git -C "$repo" "$@"; }
for i in 1 2 3 4 5; do printf 'def helper_%s():\n    return %s\n' "$i" "$i" >"$repo/pkg/mod$i.py"; done
g add -A && g commit -qm base
g checkout -qb theirs
for i in 1 2 3 4 5; do printf 'def helper_%s():\n    return "theirs %s"\n' "$i" "$i" >"$repo/pkg/mod$i.py"; done
printf 'def parse_config(path):\n    return "theirs"\n' >"$repo/pkg/config.py"
g commit -qam theirs
g checkout -q -
for i in 1 2 3 4 5; do printf 'def helper_%s():\n    return "ours %s"\n' "$i" "$i" >"$repo/pkg/mod$i.py"; done
printf 'def parse_config(path):\n    return "ours"\n' >"$repo/pkg/config.py"
g commit -qam ours
g merge -q theirs >/dev/null 2>&1
unmerged=$(g ls-files -u | wc -l)
check "the merge left six files in conflict (18 index entries)" test "$unmerged" -eq 18

cn_t 120 compile "$repo" --cache-dir "$cache" --json
check "compile during the merge: exit 0" rc_is 0
# pkg/app.py, pkg/config.py, pkg/mod1..5.py
check "each file listed once (7), not once per stage" out_has '"listed": 7,'
check "and parsed once" out_has '"parsed": 7,'
cn_t 60 run bm25_search --repo "$repo" --cache-dir "$cache" --args '{"query": "helper_3", "names_only": true}'
check "a conflicted file's symbols are found once" \
  sh -c '[ '"$rc"' -eq 0 ] && [ "$(grep -o "\"pkg/mod3.py:helper_3\"" "$0" | wc -l)" -eq 1 ]' "$OUT"

# resolving the conflict file by file, compiling after each step
ok_all=1
for i in 1 2 3 4 5; do
  printf 'def helper_%s():\n    return "merged %s"\n\n\ndef merged_%s():\n    return %s\n' "$i" "$i" "$i" "$i" \
    >"$repo/pkg/mod$i.py"
  [ "$i" -le 2 ] && g add "pkg/mod$i.py"
  cn_t 120 compile "$repo" --cache-dir "$cache" --json
  if [ "$rc" -ne 0 ] || ! out_has '"parsed": 1,' || ! out_has '"listed": 7,'; then
    ok_all=0
    fail "incremental compile $i during the merge"
  fi
done
check "five incremental compiles during the merge: each parses the one edited file" test "$ok_all" -eq 1
cn_t 60 status "$repo" --cache-dir "$cache"
check "status after them: fresh" sh -c '[ '"$rc"' -eq 0 ] && grep -q ": fresh" "$0"' "$OUT"
cn_t 60 run bm25_search --repo "$repo" --cache-dir "$cache" --args '{"query": "merged_4", "names_only": true}'
check "the edits are in the index" sh -c '[ '"$rc"' -eq 0 ] && grep -q "pkg/mod4.py" "$0"' "$OUT"

# the merge concluded
printf 'def parse_config(path):\n    return "merged"\n' >"$repo/pkg/config.py"
g add -A && g commit -qm merged
cn_t 120 compile "$repo" --cache-dir "$cache" --json
check "compile after the merge is committed: exit 0, 7 files" sh -c '[ '"$rc"' -eq 0 ] && grep -q "\"listed\": 7," "$0"' "$OUT"
cn_t 60 status "$repo" --cache-dir "$cache"
check "status: fresh" sh -c '[ '"$rc"' -eq 0 ] && grep -q ": fresh" "$0"' "$OUT"

no_sentinels "nothing ran"
done_testing
