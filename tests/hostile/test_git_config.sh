#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# A cloned repository's .git/config, hooks and .gitattributes name commands
# (an fsmonitor, clean/smudge/process filters, hooks, an external diff):
# compile, status, query, skills list and run must run none of them, and an
# fsmonitor that never ends must not hang them.  Inherited GIT_* variables
# must not point codenib's git elsewhere.
. "$CN_SRCDIR/tests/hostile/lib.sh"
unset CODENIB_SKILLS_PATH CODENIB_MODEL OPENAI_BASE_URL CODENIB_BASE_URL

need_python_backend
if ! have_git; then echo "1..0 # SKIP git is not installed"; exit 0; fi

# evil NAME: a shell command that leaves the sentinel NAME
evil() { printf 'touch %s/%s; cat' "$SENTINELS" "$1"; }

# ---- a repository whose config runs commands everywhere it can -----------------
repo=$TMPBASE/repo
cache=$TMPBASE/cache
py_repo "$repo"
printf '*.py filter=EviL\n*.txt filter=proc\n*.cfg filter=inc\n* diff=ext\n' >"$repo/.gitattributes"
echo notes >"$repo/notes.txt"
echo x=1 >"$repo/app.cfg"
git -C "$repo" add -A && git -C "$repo" commit -qm attrs
g() { git -C "$repo" config "$@"; }
g core.fsmonitor "$(evil fsmonitor); false"
g filter.EviL.clean "$(evil clean)"
g filter.EviL.smudge "$(evil smudge)"
g filter.EviL.required true
g filter.proc.process "$(evil process)"
g diff.ext.command "$(evil diffdriver)"
g diff.external "$(evil diffexternal)"
g core.pager "$(evil pager)"
g core.sshCommand "$(evil ssh)"
g core.untrackedCache true
# a driver named only in an included file
printf '[filter "inc"]\n\tclean = %s\n\tprocess = %s\n' "$(evil inc-clean)" "$(evil inc-process)" >"$repo/.git/extra.config"
g include.path extra.config
mkdir -p "$repo/.git/hooks" "$TMPBASE/hooks"
for h in post-index-change post-checkout pre-commit post-commit reference-transaction fsmonitor-watchman \
  pre-auto-gc post-rewrite; do
  printf '#!/bin/sh\ntouch %s/hook-%s\n' "$SENTINELS" "$h" >"$repo/.git/hooks/$h"
  cp "$repo/.git/hooks/$h" "$TMPBASE/hooks/$h"
  chmod +x "$repo/.git/hooks/$h" "$TMPBASE/hooks/$h"
done
g core.hooksPath "$TMPBASE/hooks"
# every tracked file stat-dirty, so that a status hashes them (and filters)
sleep 1
touch "$repo"/pkg/*.py "$repo/notes.txt" "$repo/app.cfg"

cn_t 120 compile "$repo" --cache-dir "$cache" --json
check "compile in the hostile repository: exit 0" rc_is 0
check "it listed the files with git" out_has '"used_git": true'
check "and the repository's identity is known (HEAD and not dirty)" \
  sh -c 'grep -q "\"git_head\": \"[0-9a-f]\{40\}\"" "$0" && grep -q "\"dirty\": false" "$0"' \
  "$cache/current/repo_manifest.json"
no_sentinels "compile ran no fsmonitor, filter, hook, pager or diff command"

printf '\ndef added_later():\n    return 2\n' >>"$repo/pkg/app.py"
cn_t 60 status "$repo" --cache-dir "$cache"
check "status: answers, stale" out_has "1 file(s) changed"
cn_t 120 compile "$repo" --cache-dir "$cache" --quiet
check "an incremental compile: exit 0" rc_is 0
check "an edited tracked file makes it dirty (status hashed it, unfiltered)" \
  grep -q '"dirty": true' "$cache/current/repo_manifest.json"
cn_t 120 query --repo "$repo" --cache-dir "$cache" --quiet "where is parse_config defined?"
check "query: exit 0 and the answer" sh -c '[ '"$rc"' -eq 0 ] && grep -q "pkg/config.py" "$0"' "$OUT"
cn_t 60 run bm25_search --repo "$repo" --cache-dir "$cache" --args '{"query": "parse config", "names_only": true}'
check "run bm25_search: exit 0" rc_is 0
cd "$repo" && cn_t 60 skills list
cd "$TMPBASE" || exit 1
check "skills list in the repository: exit 0" rc_is 0
no_sentinels "status, query, run and skills list ran none of them either"

# ---- an fsmonitor that never ends ---------------------------------------------
slow=$TMPBASE/slow
py_repo "$slow"
git -C "$slow" config core.fsmonitor "sleep 1000"
cn_t 60 compile "$slow" --cache-dir "$TMPBASE/slowcache" --json
check "core.fsmonitor = sleep 1000: compile does not hang" rc_is 0
check "and lists the files with git" out_has '"used_git": true'
cn_t 60 status "$slow" --cache-dir "$TMPBASE/slowcache"
check "nor does status" rc_is 0

# ---- GIT_* variables of the caller do not redirect codenib's git ---------------
other=$TMPBASE/other
mkdir -p "$other"
printf 'def only_in_other():\n    return 3\n' >"$other/elsewhere.py"
git -C "$other" init -q && git -C "$other" add -A && git -C "$other" commit -qm other
GIT_DIR=$other/.git GIT_WORK_TREE=$other GIT_INDEX_FILE=$other/.git/index \
  GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.fsmonitor GIT_CONFIG_VALUE_0="$(evil env-fsmonitor); false" \
  cn_t 120 compile "$repo" --cache-dir "$TMPBASE/envcache" --json
check "with GIT_DIR, GIT_WORK_TREE, GIT_INDEX_FILE set: exit 0" rc_is 0
cn_t 60 run bm25_search --repo "$repo" --cache-dir "$TMPBASE/envcache" --args '{"query": "parse config", "names_only": true}'
check "the files indexed are the repository's own, not GIT_DIR's" sh -c '[ '"$rc"' -eq 0 ] && grep -q "pkg/config.py" "$0"' "$OUT"
no_sentinels "GIT_CONFIG_* from the environment ran nothing"

# ---- core.worktree in the repository's config does not move the listing --------
wt=$TMPBASE/wt
py_repo "$wt"
mkdir -p "$TMPBASE/elsewhere"
for i in 1 2 3; do printf 'def elsewhere_%s():\n    return %s\n' "$i" "$i" >"$TMPBASE/elsewhere/e$i.py"; done
git -C "$wt" config core.worktree "$TMPBASE/elsewhere"
cn_t 120 compile "$wt" --cache-dir "$TMPBASE/wtcache" --json
check "core.worktree pointing elsewhere: the repository's own 2 files are listed, no other" \
  sh -c '[ '"$rc"' -eq 0 ] && grep -q "\"used_git\": true" "$0" && grep -q "\"listed\": 2," "$0"' "$OUT"

done_testing
