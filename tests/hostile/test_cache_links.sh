#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# A cache directory with entries codenib did not make: generations, build
# directories and the lock as symbolic links (or hard links) to files and
# directories outside it, another user's generation.  Compile must neither
# delete nor truncate nor write anything outside the cache, refuse with an
# error naming the entry, and readers must not read an index through them.
. "$CN_SRCDIR/tests/hostile/lib.sh"
need_python_backend

repo=$TMPBASE/repo
py_repo "$repo"
outside=$TMPBASE/outside
mkdir -p "$outside/dir/sub"
printf 'keep me\n' >"$outside/dir/sentinel"
printf 'keep me too\n' >"$outside/dir/sub/deep"
printf 'precious\n' >"$outside/file"

# whole: nothing outside the cache was removed or changed
whole() {
  [ "$(cat "$outside/dir/sentinel" 2>/dev/null)" = "keep me" ] &&
    [ "$(cat "$outside/dir/sub/deep" 2>/dev/null)" = "keep me too" ] &&
    [ "$(cat "$outside/file" 2>/dev/null)" = "precious" ]
}

# fresh_cache NAME: $NAME, a cache with one good compile in it
fresh_cache() {
  c=$TMPBASE/$1
  eval "$1=\$c"
  cn compile "$repo" --cache-dir "$c" --quiet
  [ "$rc" -eq 0 ] || fail "compile into $c"
}

# ---- a gen-* symlink to a directory outside -------------------------------------
fresh_cache c1
ln -s "$outside/dir" "$c1/gen-1-2-3"
cn compile "$repo" --cache-dir "$c1" --quiet --rebuild
check "a gen-* link: compile refuses (exit 1)" rc_is 1
check "... naming the entry and that it is a link" sh -c 'grep -q "gen-1-2-3 is a symbolic link" "$0" && grep -q "remove or move it yourself" "$0"' "$ERR"
check "... and nothing under its target is deleted" whole
check "... the link itself is left" test -L "$c1/gen-1-2-3"
check "... the index served before still serves" test -f "$c1/current/nodes.bin"
rm "$c1/gen-1-2-3"
cn compile "$repo" --cache-dir "$c1" --quiet
check "with the link gone, compile works again" rc_is 0

# the same named as an interrupted build's directory
ln -s "$outside/dir" "$c1/gen-7-8-9.tmp"
cn compile "$repo" --cache-dir "$c1" --quiet
check "a gen-*.tmp link: refused" sh -c '[ '"$rc"' -eq 1 ] && grep -q "gen-7-8-9.tmp is a symbolic link" "$0"' "$ERR"
check "... nothing under its target deleted" whole
rm "$c1/gen-7-8-9.tmp"

# a link to a file, named as a generation
ln -s "$outside/file" "$c1/gen-5-5-5"
cn compile "$repo" --cache-dir "$c1" --quiet
check "a gen-* link to a file: refused, the file kept" sh -c '[ '"$rc"' -eq 1 ] && [ "$(cat "$0")" = precious ]' "$outside/file"
rm "$c1/gen-5-5-5"

# a generation directory holding links: removing it removes the links only
fresh_cache c2
mkdir "$c2/gen-1-1-1"
ln -s "$outside/dir" "$c2/gen-1-1-1/vectors"
ln -s "$outside/file" "$c2/gen-1-1-1/nodes.bin"
ln "$outside/dir/sentinel" "$c2/gen-1-1-1/hard" 2>/dev/null
cn compile "$repo" --cache-dir "$c2" --quiet
check "an old generation holding links is collected" sh -c '[ '"$rc"' -eq 0 ] && ! test -e "$0/gen-1-1-1" && ! test -L "$0/gen-1-1-1"' "$c2"
check "... without touching what the links point to" whole

# ---- the lock -------------------------------------------------------------------
fresh_cache c3
rm -f "$c3/lock"
ln -s "$outside/file" "$c3/lock"
cn compile "$repo" --cache-dir "$c3" --quiet
check "a lock link: compile refuses (exit 1)" rc_is 1
check "... naming the lock" err_has "$c3/lock is a symbolic link"
check "... and its target is not truncated" whole
rm "$c3/lock"
ln -s "$TMPBASE/nowhere" "$c3/lock"
cn compile "$repo" --cache-dir "$c3" --quiet
check "a dangling lock link: refused, nothing created at its target" sh -c '[ '"$rc"' -eq 1 ] && ! test -e "$0"' "$TMPBASE/nowhere"
rm "$c3/lock"
ln "$outside/file" "$c3/lock"
cn compile "$repo" --cache-dir "$c3" --quiet
check "a lock hard-linked to an outside file: refused, not truncated" sh -c '[ '"$rc"' -eq 1 ] && grep -q "hard links" "$0"' "$ERR"
check "... the outside file intact" whole
rm "$c3/lock"
mkfifo "$c3/lock"
cn_t 60 compile "$repo" --cache-dir "$c3" --quiet
check "a FIFO for a lock: refused, no hang" sh -c '[ '"$rc"' -eq 1 ] && grep -q "lock is not a regular file" "$0"' "$ERR"
rm "$c3/lock"
cn compile "$repo" --cache-dir "$c3" --quiet
check "the lock gone: compile makes its own" sh -c '[ '"$rc"' -eq 0 ] && test -f "$0/lock" && ! test -L "$0/lock"' "$c3"

# ---- `current` and the index read through links ---------------------------------
fresh_cache c4
mkdir -p "$outside/fake"
cp "$c4/current/"* "$outside/fake/"
rm "$c4/current"
ln -s "$outside/fake" "$c4/gen-9-9-9"
ln -s gen-9-9-9 "$c4/current"
cn run bm25_search --repo "$repo" --cache-dir "$c4" --args '{"query": "parse_config"}'
check "current -> a gen-* link: readers refuse it" sh -c '[ '"$rc"' -eq 1 ] && grep -q "gen-9-9-9 is a symbolic link" "$0"' "$ERR"
cn status "$repo" --cache-dir "$c4"
check "... status too (exit 1, named)" sh -c '[ '"$rc"' -eq 1 ] && grep -q "gen-9-9-9 is a symbolic link" "$0"' "$ERR"
rm "$c4/current" "$c4/gen-9-9-9"
ln -s .. "$c4/current"
cn status "$repo" --cache-dir "$c4"
check "current -> ..: refused, not read as an index" sh -c '[ '"$rc"' -eq 1 ] && grep -q "not a generation of the cache" "$0"' "$ERR"
cn compile "$repo" --cache-dir "$c4" --quiet
check "... and compile replaces that link" sh -c '[ '"$rc"' -eq 0 ] && case "$(readlink "$0/current")" in gen-*) true;; *) false;; esac' "$c4"
check "... the fake index outside kept" test -f "$outside/fake/nodes.bin"
gen=$c4/$(readlink "$c4/current")
mv "$gen/nodes.bin" "$outside/nodes.bin"
ln -s "$outside/nodes.bin" "$gen/nodes.bin"
cn run bm25_search --repo "$repo" --cache-dir "$c4" --args '{"query": "parse_config"}'
check "an index file that is a link is not followed" sh -c '[ '"$rc"' -eq 1 ] && grep -q "nodes.bin: a symbolic link" "$0"' "$ERR"

# ---- another user's generation (only root can make one) -------------------------
if [ "$(id -u)" -eq 0 ] && id nobody >/dev/null 2>&1; then
  fresh_cache c5
  mkdir "$c5/gen-4-4-4"
  printf 'theirs\n' >"$c5/gen-4-4-4/file"
  chown -R nobody "$c5/gen-4-4-4"
  cn compile "$repo" --cache-dir "$c5" --quiet
  check "another user's gen-* directory: refused, kept" sh -c '[ '"$rc"' -eq 1 ] && grep -q "owned by user" "$0" && test -f "$1/gen-4-4-4/file"' "$ERR" "$c5"
else
  pass "# SKIP another user's generation needs root"
fi

# a --cache-dir that is itself a link is the user's choice, and works
mkdir -p "$TMPBASE/real-cache"
ln -s "$TMPBASE/real-cache" "$TMPBASE/cache-link"
cn compile "$repo" --cache-dir "$TMPBASE/cache-link" --quiet
check "a --cache-dir given as a link is used" sh -c '[ '"$rc"' -eq 0 ] && test -L "$0/current"' "$TMPBASE/real-cache"
cn compile "$repo" --cache-dir "$TMPBASE/cache-link" --quiet
check "... again, collecting its own generations" sh -c '[ '"$rc"' -eq 0 ] && [ "$(ls -d "$0"/gen-* | wc -l)" -le 2 ]' "$TMPBASE/real-cache"

check "nothing outside any cache was changed" whole
no_sentinels "no hostile command ran"
done_testing
