#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# `codenib compile` and `codenib status` on a small repository made here:
# what gets indexed, incremental rebuilds (one edited file is parsed, and
# the index bytes equal a full rebuild's), the lock, corrupt indexes, a
# compile killed with SIGKILL, and bm25_search on the result.
. "$CN_SRCDIR/tests/cli/lib.sh"
unset CODENIB_SKILLS_PATH

if [ ! -f "$CN_BUILDDIR/_plugins/lang-python/lang_python.so" ] || [ ! -f "$CN_BUILDDIR/_plugins/lang-c/lang_c.so" ]; then
  echo "1..0 # SKIP the python and c backends were not built (run scripts/fetch-grammars.sh, then configure)"
  exit 0
fi

repo=$TMPBASE/repo
cache=$TMPBASE/cache
mkdir -p "$repo/pkg" "$repo/tests" "$repo/src" "$repo/node_modules/dep" "$repo/build" "$repo/docs"
cat > "$repo/pkg/__init__.py" <<'PY'
from .pool import ConnectionPool
PY
cat > "$repo/pkg/pool.py" <<'PY'
"""Connection pooling."""
import time


class PoolExhausted(Exception):
    pass


class ConnectionPool:
    def __init__(self, size):
        self.size = size
        self.free = []

    def acquire(self, timeout=None):
        if not self.free:
            raise PoolExhausted("no free connection")
        return self.free.pop()

    def release(self, conn):
        self.free.append(conn)


def make_pool(size=4):
    return ConnectionPool(size)
PY
cat > "$repo/tests/test_pool.py" <<'PY'
from pkg.pool import make_pool


def test_acquire_empty():
    pool = make_pool(0)
    assert pool.size == 0
PY
cat > "$repo/src/ring.c" <<'C'
#include "ring.h"

static int ring_index(const struct ring *r, int i)
{
    return (r->head + i) % r->cap;
}

int ring_push(struct ring *r, int v)
{
    if (r->len == r->cap)
        return -1;
    r->data[ring_index(r, r->len++)] = v;
    return 0;
}
C
cat > "$repo/src/ring.h" <<'C'
struct ring {
    int head, len, cap;
    int *data;
};
int ring_push(struct ring *r, int v);
C
printf 'ignored = True\n' > "$repo/node_modules/dep/index.py"
printf 'ignored = True\n' > "$repo/build/gen.py"
printf 'def helper():\n    pass\n' > "$repo/docs/conf.py"
printf '\000\001binary' > "$repo/pkg/blob.py"
printf 'name = "caf\351"\n' > "$repo/pkg/latin1.py"
printf '#!/usr/bin/env python3\nprint("hi")\n' > "$repo/run-me"
# symbolic links, to a file and to a directory outside: not followed
mkdir -p "$TMPBASE/outside"
printf 'def outside_secret():\n    pass\n' > "$TMPBASE/outside/secret.py"
ln -s "$TMPBASE/outside/secret.py" "$repo/pkg/alias.py"
ln -s "$TMPBASE/outside" "$repo/outdir"

cn compile "$repo" --cache-dir "$cache" --json --exclude-dir docs
check "compile exits 0" rc_is 0
check "python files parsed" out_has '"python": {'
check "c files parsed" out_has '"c": {'
check "parsed: 3 python files + 1 python shebang script + 2 c files (no symbolic link)" out_has '"parsed": 6'
check "symbolic links are not listed at all" sh -c '! grep -q "alias.py\|outdir\|secret" "$0"' "$OUT"
check "binary file skipped and counted" out_has '"binary": 1'
check "undecodable (not UTF-8) file skipped and counted" out_has '"undecodable": 1'
check "the manifest names the left-out files and why" sh -c 'tr -d " \n" < "$0" | grep -q "\"left_out\":\[{\"path\":\"pkg/blob.py\",\"reason\":\"binary\",\"unchanged\":false},{\"path\":\"pkg/latin1.py\",\"reason\":\"undecodable\",\"unchanged\":false}\]"' "$OUT"
check "test file classified" out_has '"tests": 1'
check "--exclude-dir recorded in the manifest" out_has '"exclude_dirs": ['
check "manifest has a source fingerprint" out_has '"source_fingerprint": "'
check "manifest lists the bm25 index" out_has '"type": "bm25"'
check "nothing written into the repository" sh -c '[ -z "$(find "$0" -newer "$0/pkg/pool.py" -name "*.bin")" ] && [ ! -e "$0/.codenib" ]' "$repo"
gen1=$(readlink "$cache/current")
check "a generation is published" test -f "$cache/$gen1/nodes.bin"

cn status "$repo" --cache-dir "$cache"
check "status: fresh after a compile (the files left out are known, not new)" sh -c '[ '"$rc"' -eq 0 ] && grep -q ": fresh" "$0"' "$OUT"
check "status: names the files left out" out_has "left out: 1 undecodable (pkg/latin1.py), 1 binary (pkg/blob.py)"

cn run bm25_search --repo "$repo" --args '{"query": "acquire free connection", "top_k": 3, "names_only": true}'
check "bm25_search without the default cache: says the repository is not compiled" sh -c '[ '"$rc"' -eq 1 ] && grep -q "needs a compiled index" "$0"' "$ERR"

# Compile again into the default cache so `run --repo` finds it.
cn compile "$repo" --quiet --exclude-dir docs
check "compile into the default cache" rc_is 0
cn run bm25_search --repo "$repo" --args '{"query": "acquire free connection", "top_k": 3, "names_only": true}'
check "bm25_search finds the method" out_has '"node_name":"pkg/pool.py:ConnectionPool.acquire","type":"method","file":"pkg/pool.py","start_line":14'
cn run bm25_search --repo "$repo" --args '{"query": "pool size", "filter_test": true, "return_content": false}'
check "filter_test leaves tests out" sh -c '! grep -q "tests/test_pool.py" "$0"' "$OUT"
cn run bm25_search --repo "$repo" --args '{"query": "ring push", "kinds": ["function"], "return_content": false}'
check "kinds filter" sh -c 'grep -q "src/ring.c:ring_push" "$0" && ! grep -q "\"type\":\"file\"" "$0"' "$OUT"
cn run bm25_search --repo "$repo" --args '{"query": "ignored"}'
check "default exclusions (node_modules, build) are not indexed" sh -c 'grep -q "^\[\]$" "$0"' "$OUT"
cn run bm25_search --repo "$repo" --args '{"query": "ring_index", "top_k": 1, "wrap_with_line_numbers": true}'
check "content with a line-number gutter" out_has '     3\tstatic int ring_index'

# Incremental: edit one file; exactly one is parsed; bytes equal a rebuild.
sleep 1
printf '\n\ndef drain(pool):\n    pool.free.clear()\n' >> "$repo/pkg/pool.py"
cn status "$repo" --cache-dir "$cache"
check "status: stale after an edit" sh -c '[ '"$rc"' -eq 3 ] && grep -q "1 file(s) changed" "$0"' "$OUT"
cn compile "$repo" --cache-dir "$cache" --json --exclude-dir docs
check "incremental compile parses exactly the edited file" sh -c 'grep -q "\"parsed\": 1," "$0" && grep -q "\"reused\": 5," "$0"' "$OUT"
check "... and leaves the unchanged binary and undecodable files out as before" out_has '"left_unchanged": 2,'
gen2=$(readlink "$cache/current")
check "a new generation replaced the old one (kept until the next compile)" sh -c '[ "$0" != "$1" ] && [ -d "$2/$0" ]' "$gen1" "$gen2" "$cache"
cp "$cache/$gen2/nodes.bin" "$TMPBASE/nodes.incremental"
cp "$cache/$gen2/bm25.bin" "$TMPBASE/bm25.incremental"
cn compile "$repo" --cache-dir "$cache" --json --rebuild --exclude-dir docs
check "--rebuild parses everything" out_has '"parsed": 6,'
gen3=$(readlink "$cache/current")
check "incremental nodes.bin equals the full rebuild's" cmp -s "$TMPBASE/nodes.incremental" "$cache/$gen3/nodes.bin"
check "incremental bm25.bin equals the full rebuild's" cmp -s "$TMPBASE/bm25.incremental" "$cache/$gen3/bm25.bin"
cn status "$repo" --cache-dir "$cache" --exclude-dir docs
check "status rejects unknown options" rc_is 2

# Unchanged files are known by their stamp (size, mtime, ctime, inode) and
# not read, once they are older than the build that recorded them by 2 s;
# an edit that keeps the size and puts the mtime back still changes the
# ctime, so it is parsed.
sleep 3
cn compile "$repo" --cache-dir "$cache" --json --exclude-dir docs
check "nothing changed: nothing parsed" sh -c 'grep -q "\"parsed\": 0," "$0"' "$OUT"
cn compile "$repo" --cache-dir "$cache" --json --exclude-dir docs
check "then known by their stamps, not read" sh -c 'grep -q "\"parsed\": 0," "$0" && grep -q "\"unread\": 6," "$0"' "$OUT"
cp -p "$repo/pkg/pool.py" "$TMPBASE/pool.ref"
sed 's/drain/DRAIN/' "$TMPBASE/pool.ref" > "$repo/pkg/pool.py"
touch -r "$TMPBASE/pool.ref" "$repo/pkg/pool.py"
cn compile "$repo" --cache-dir "$cache" --json --exclude-dir docs
check "same size, mtime put back: parsed all the same" sh -c 'grep -q "\"parsed\": 1," "$0" && grep -q "\"unread\": 5," "$0"' "$OUT"
cn run bm25_search --repo "$repo" --cache-dir "$cache" --args '{"query": "DRAIN", "return_content": false}'
check "and its new content is in the index" out_has "pkg/pool.py:DRAIN"

# Incremental builds equal full rebuilds, byte for byte, whatever the edit:
# an early file that gains nodes (every later document moves), a file
# added, one removed, and two changed at once.
# (--index bm25,graph: a compile without --index builds what the last one
# recorded, and one of those below builds the graph alone)
same_as_rebuild() { # LABEL
  cn compile "$repo" --cache-dir "$cache" --json --exclude-dir docs --index bm25,graph
  cp "$OUT" "$TMPBASE/inc.json"
  inc=$(readlink "$cache/current")
  cn compile "$repo" --cache-dir "$TMPBASE/full" --json --rebuild --exclude-dir docs
  full=$(readlink "$TMPBASE/full/current")
  for f in nodes.bin bm25.bin graph.bin; do
    check "$1: incremental $f equals a full rebuild's" cmp -s "$cache/$inc/$f" "$TMPBASE/full/$full/$f"
  done
}
printf '\n\ndef early_one():\n    return make_pool()\n\n\nclass Early:\n    def go(self):\n        early_one()\n' >> "$repo/pkg/__init__.py"
same_as_rebuild "nodes added to the first file"
printf 'def fresh(x):\n    return x.acquire()\n' > "$repo/pkg/fresh.py"
same_as_rebuild "a file added"
rm "$repo/pkg/fresh.py"
same_as_rebuild "a file removed"
printf '\ndef later():\n    pass\n' >> "$repo/pkg/pool.py"
printf '\nint ring_extra(void) { return 0; }\n' >> "$repo/src/ring.c"
same_as_rebuild "two files changed"
check "definitions changed: the graph is resolved in full" sh -c \
  'tr -d " \n" < "$0" | grep -q "\"updated_from_previous\":{\"bm25\":true,\"graph\":false,\"graph_patched\":false}"' "$TMPBASE/inc.json"
# bodies only (calls added, lines moved): the other files' edges are kept
sed 's/return ConnectionPool(size)/time.sleep(0)\n    return ConnectionPool(size)/' "$repo/pkg/pool.py" > "$TMPBASE/pool.new"
cp "$TMPBASE/pool.new" "$repo/pkg/pool.py"
sed 's/return (r->head + i) % r->cap;/ring_extra();\n    return (r->head + i) % r->cap;/' "$repo/src/ring.c" > "$TMPBASE/ring.new"
cp "$TMPBASE/ring.new" "$repo/src/ring.c"
same_as_rebuild "bodies changed"
check "bodies changed: the graph kept the other files' edges (calls added: assembled, not patched)" sh -c \
  'tr -d " \n" < "$0" | grep -q "\"updated_from_previous\":{\"bm25\":true,\"graph\":true,\"graph_patched\":false}"' "$TMPBASE/inc.json"
cn run find_callees --repo "$repo" --cache-dir "$cache" --args '{"symbol": "make_pool"}'
check "and the new call is in it" out_has "sleep"
# a module-level block is named by its line: a line added above one moves
# it, which changes nothing for the other files' edges
printf '\nDEFAULT_POOL = make_pool()\n' >> "$repo/pkg/pool.py"
same_as_rebuild "a module-level block added"
sed 's/        self.size = size/        time.sleep(0)\n        self.size = size/' "$repo/pkg/pool.py" > "$TMPBASE/pool.new"
cp "$TMPBASE/pool.new" "$repo/pkg/pool.py"
same_as_rebuild "a line added above a block"
check "a line added above a block: the graph kept the other files' edges" sh -c \
  'tr -d " \n" < "$0" | grep -q "\"updated_from_previous\":{\"bm25\":true,\"graph\":true,"' "$TMPBASE/inc.json"
# Lines moved and nothing else (comments added above the calls): the
# previous graph's sections are written again with the moved edges' lines,
# and its in-edges re-ordered where a moved call now comes after another
# file's call to the same function (caller_a's call passes caller_b's).
printf 'from pkg.pool import make_pool\n\ndef first():\n    return make_pool()\n' > "$repo/pkg/caller_a.py"
printf 'from pkg.pool import make_pool\n\n\n\n\ndef second():\n    return make_pool()\n' > "$repo/pkg/caller_b.py"
same_as_rebuild "two callers added"
{ printf '# one\n# two\n# three\n# four\n# five\n'; cat "$repo/pkg/caller_a.py"; } > "$TMPBASE/a.new"
cp "$TMPBASE/a.new" "$repo/pkg/caller_a.py"
same_as_rebuild "comment lines added above a call"
check "lines moved only: the previous graph is patched" sh -c \
  'tr -d " \n" < "$0" | grep -q "\"updated_from_previous\":{\"bm25\":true,\"graph\":true,\"graph_patched\":true}"' "$TMPBASE/inc.json"
cn run find_callers --repo "$repo" --cache-dir "$cache" --args '{"symbol": "make_pool"}'
check "... and the call is found on its new line" out_has '"node_name":"pkg/caller_a.py:first","type":"function","file":"pkg/caller_a.py","start_line":8,"node_id":7,"end_line":9,"resolved":true,"edge":"calls","line":9,'
printf '# the end\n' >> "$repo/pkg/caller_a.py"
same_as_rebuild "a comment appended"
check "nothing moved: the previous graph is written as it was" sh -c \
  'tr -d " \n" < "$0" | grep -q "\"graph\":true,\"graph_patched\":true}"' "$TMPBASE/inc.json"
printf '\ndef third():\n    return make_pool()\n' >> "$repo/pkg/caller_a.py"
same_as_rebuild "a function added to a caller"
rm "$repo/pkg/caller_a.py" "$repo/pkg/caller_b.py"
same_as_rebuild "the callers removed"

# The parse records do not keep the files' BM25 terms (the previous
# bm25.bin has them): after a build without a BM25 index, or with one that
# is damaged, nothing is reused and the next build still equals a rebuild.
cn compile "$repo" --cache-dir "$cache" --json --index graph --exclude-dir docs
check "--index graph alone: unchanged files reused" sh -c 'grep -q "\"parsed\": 0," "$0"' "$OUT"
printf '\ndef after_graph():\n    pass\n' >> "$repo/pkg/pool.py"
same_as_rebuild "after a build without BM25"
check "after a build without BM25: every file parsed" sh -c 'grep -q "\"reused\": 0," "$0"' "$TMPBASE/inc.json"
cur=$cache/$(readlink "$cache/current")
printf 'garbage' | dd of="$cur/bm25.bin" bs=1 seek=300 conv=notrunc 2>/dev/null
printf '\ndef after_damage():\n    pass\n' >> "$repo/pkg/pool.py"
same_as_rebuild "after a damaged BM25 index"
check "after a damaged BM25 index: every file parsed" sh -c 'grep -q "\"reused\": 0," "$0"' "$TMPBASE/inc.json"

# The parse records are split in shards of 32 to 64 files: a one-file edit
# writes its file's shard and links the others from the previous build.
many=$TMPBASE/many
mkdir -p "$many"
i=0
while [ $i -lt 100 ]; do
  printf 'def f%d(x):\n    return g%d(x)\n\n\ndef g%d(x):\n    return x + %d\n' $i $i $i $i > "$many/m$i.py"
  i=$((i + 1))
done
touch -d '2020-01-01' "$many"/*.py   # older than the build by more than a stamp's margin
cn compile "$many" --cache-dir "$TMPBASE/many-cache" --quiet
printf '\n# edited\n' >> "$many/m7.py"
cn compile "$many" --cache-dir "$TMPBASE/many-cache" --json
check "100 files, one edited: one file parsed" sh -c 'grep -q "\"parsed\": 1," "$0"' "$OUT"
gen=$TMPBASE/many-cache/$(readlink "$TMPBASE/many-cache/current")
check "their records are in two shards" sh -c 'test -f "$0/records-01.bin" && ! test -f "$0/records-02.bin"' "$gen"
check "... one of them the previous build's file, linked" sh -c '[ "$(find "$0" -name "records-*.bin" -links 2 | wc -l)" -eq 1 ]' "$gen"
cn compile "$many" --cache-dir "$TMPBASE/many-full" --rebuild --quiet
full=$TMPBASE/many-full/$(readlink "$TMPBASE/many-full/current")
for f in records-00.bin records-01.bin nodes.bin bm25.bin graph.bin; do
  check "... and $f equals a full rebuild's" cmp -s "$gen/$f" "$full/$f"
done

# Another selection makes the index stale; removed files are reported.
rm "$repo/src/ring.h"
cn status "$repo" --cache-dir "$cache"
check "status: a removed file" out_has "1 file(s) removed"

# The lock: a held lock makes --no-wait fail, naming who holds it.  The
# holder keeps the lock until the compile has answered (a fixed hold ran
# out before a compile under valgrind on a loaded machine got to the lock).
printf 'pid 12345 since 0\n' > "$cache/lock"
( flock -x 9; : > "$TMPBASE/locked"; i=0
  while [ ! -e "$TMPBASE/unlock" ] && [ $i -lt 6000 ]; do sleep 0.05; i=$((i + 1)); done ) 9>>"$cache/lock" &
holder=$!
i=0; while [ ! -e "$TMPBASE/locked" ] && [ $i -lt 600 ]; do sleep 0.05; i=$((i + 1)); done
cn compile "$repo" --cache-dir "$cache" --no-wait --quiet
check "--no-wait fails while another compile holds the lock" sh -c '[ '"$rc"' -eq 1 ] && grep -q "another compile of this repository is running" "$0"' "$ERR"
: > "$TMPBASE/unlock"
wait $holder

# Corrupt indexes are refused with a clear error, not a crash.
cur=$cache/$(readlink "$cache/current")
cp "$cur/bm25.bin" "$TMPBASE/bm25.good"
head -c 1000 "$TMPBASE/bm25.good" > "$cur/bm25.bin"
cn run bm25_search --repo "$repo" --cache-dir "$cache" --args '{"query": "pool"}'
check "a truncated BM25 index is refused, naming the file" sh -c '[ '"$rc"' -eq 1 ] && grep -q "bm25.bin: corrupt index (truncated" "$0"' "$ERR"
cp "$TMPBASE/bm25.good" "$cur/bm25.bin"
printf 'garbage' | dd of="$cur/nodes.bin" bs=1 seek=200 conv=notrunc 2>/dev/null
cn run bm25_search --repo "$repo" --cache-dir "$cache" --args '{"query": "pool"}'
check "a damaged nodes index is refused (checksum)" sh -c '[ '"$rc"' -eq 1 ] && grep -q "nodes.bin: corrupt index (checksum mismatch)" "$0"' "$ERR"
cn compile "$repo" --cache-dir "$cache" --quiet --exclude-dir docs
check "a corrupt previous index does not stop a compile" rc_is 0

# SIGKILL at any moment leaves the previous index serving.  The standard
# library takes seconds to compile, so each kill lands in a different stage.
big=/usr/lib/python3.11
if [ -d "$big" ]; then
  "$CODENIB" compile "$big" --cache-dir "$TMPBASE/bigcache" --quiet
  check "compile of the standard library" test -L "$TMPBASE/bigcache/current"
  before=$(readlink "$TMPBASE/bigcache/current")
  for delay in 0.1 0.5 1.0 1.8 2.6; do
    "$CODENIB" compile "$big" --cache-dir "$TMPBASE/bigcache" --quiet --rebuild --jobs 1 &
    pid=$!
    sleep $delay
    kill -9 $pid 2>/dev/null
    wait $pid 2>/dev/null
    cur=$(readlink "$TMPBASE/bigcache/current")
    check "after SIGKILL at ${delay}s a complete generation is current" sh -c 'test -f "$0/$1/nodes.bin" && test -f "$0/$1/bm25.bin" && test -f "$0/$1/repo_manifest.json"' "$TMPBASE/bigcache" "$cur"
    CODENIB_SKILLS_PATH= $CN_RUN "$CODENIB" run bm25_search --repo "$big" --cache-dir "$TMPBASE/bigcache" --args '{"query": "json decoder", "top_k": 1, "names_only": true}' >"$OUT" 2>"$ERR"
    check "and it serves queries" out_has '"node_name":'
  done
  # once parsing is done (the build's own directory appears), the generation
  # being served must still be whole -- with --rebuild too.  The build is
  # stopped the moment its directory shows (what follows parsing takes a
  # tenth of a second); one that published before it could be stopped is
  # run again.
  attempt=0
  while [ $attempt -lt 5 ]; do
    attempt=$((attempt + 1))
    before=$(readlink "$TMPBASE/bigcache/current")
    "$CODENIB" compile "$big" --cache-dir "$TMPBASE/bigcache" --quiet --rebuild &
    pid=$!
    i=0
    while [ $i -lt 3000 ] && ! ls -d "$TMPBASE"/bigcache/gen-*-$pid-*.tmp >/dev/null 2>&1; do sleep 0.01; i=$((i + 1)); done
    kill -STOP $pid 2>/dev/null
    [ "$(readlink "$TMPBASE/bigcache/current")" = "$before" ] && kill -0 $pid 2>/dev/null && break
    echo "# attempt $attempt: the build published before it was stopped; again"
    kill -9 $pid 2>/dev/null
    wait $pid 2>/dev/null
  done
  check "a --rebuild past parsing: the served generation is whole" sh -c 'test -f "$0/$1/nodes.bin" && test -f "$0/$1/bm25.bin"' "$TMPBASE/bigcache" "$before"
  kill -9 $pid 2>/dev/null
  wait $pid 2>/dev/null
  check "and after SIGKILL there, it is still current" sh -c '[ "$(readlink "$0/current")" = "$1" ]' "$TMPBASE/bigcache" "$before"
  "$CODENIB" compile "$big" --cache-dir "$TMPBASE/bigcache" --quiet
  after=$(readlink "$TMPBASE/bigcache/current")
  check "the next compile cleans up after the killed ones, keeping the generation it replaced" sh -c \
    '[ "$(cd "$0" && ls -d gen-* | sort | tr "\n" " ")" = "$(printf "%s\n%s\n" "$1" "$2" | sort | tr "\n" " ")" ]' \
    "$TMPBASE/bigcache" "$before" "$after"
  "$CODENIB" compile "$big" --cache-dir "$TMPBASE/bigcache" --quiet
  check "which the compile after it removes" sh -c '[ ! -e "$0/$1" ] && [ -d "$0/$(readlink "$0/current")" ] && [ $(ls -d "$0"/gen-* | wc -l) -eq 2 ]' "$TMPBASE/bigcache" "$before"
else
  echo "# /usr/lib/python3.11 is absent: SIGKILL checks skipped"
fi

# Every language with a backend is indexed side by side.
poly=$TMPBASE/poly
mkdir -p "$poly/web" "$poly/cmd" "$poly/src" "$poly/lib"
printf 'export function renderCart(items) {\n  return items.map(formatLine);\n}\n' > "$poly/web/cart.js"
printf 'package main\n\nfunc serveHealth() string {\n\treturn "ok"\n}\n' > "$poly/cmd/main.go"
printf 'pub fn parse_manifest(text: &str) -> usize {\n    text.len()\n}\n' > "$poly/src/lib.rs"
printf 'public class Ledger {\n  void settleAccount() {}\n}\n' > "$poly/lib/Ledger.java"
printf 'class Matrix {\n public:\n  void invertInPlace();\n};\n' > "$poly/lib/matrix.hpp"
printf 'export interface Invoice { total(): number }\n' > "$poly/web/invoice.ts"
cn compile "$poly" --cache-dir "$TMPBASE/polycache" --json
check "a mixed repository compiles" rc_is 0
for l in javascript go rust java cpp typescript; do
  check "its $l files are indexed" out_has "\"$l\": {"
done
cn run bm25_search --repo "$poly" --cache-dir "$TMPBASE/polycache" --args '{"query": "serve health", "names_only": true, "kinds": ["function"]}'
check "a Go function is found by its words" out_has '"node_name":"cmd/main.go:serveHealth"'
cn run bm25_search --repo "$poly" --cache-dir "$TMPBASE/polycache" --args '{"query": "settle account", "names_only": true, "kinds": ["method"]}'
check "a Java method is found" out_has '"node_name":"lib/Ledger.java:Ledger.settleAccount"'

cn plugins list
check "plugins list: every built backend loads, exit 0" rc_is 0
check "plugins list shows the python backend" sh -c 'grep -q "^lang-python .*python .*loaded" "$0"' "$OUT"
cn plugins list --json
check "plugins list --json" out_has '"plugin_id":"lang-c","kind":"language","language":"c","state":"loaded"'
mkdir -p "$TMPBASE/badplugins/lang-zz"
printf 'plugin_id: lang-zz\nkind: language\nlanguage: zz\nlibrary: lang_zz\nabi: "1.0"\nextensions: [".zz"]\n' > "$TMPBASE/badplugins/lang-zz/plugin.yaml"
CODENIB_PLUGINS_PATH="$TMPBASE/badplugins" cn plugins list
check "a backend without its shared object is listed as failed, with the reason" sh -c 'grep -q "^lang-zz .*failed" "$0" && grep -q "reason: .*lang_zz.so" "$0"' "$OUT"
check "and plugins list exits 1 (the others still listed)" sh -c '[ '"$rc"' -eq 1 ] && grep -q "^lang-python .*loaded" "$0"' "$OUT"

# The repository's identity: git HEAD and the dirty flag, null outside git.
check "outside git the manifest's git_head and dirty are null" \
  sh -c 'grep -q "\"git_head\": null" "$0" && grep -q "\"dirty\": null" "$0"' "$cache/current/repo_manifest.json"
if command -v git >/dev/null 2>&1; then
  gr=$TMPBASE/gitrepo
  mkdir -p "$gr"
  printf 'def shipped():\n    return 1\n' > "$gr/app.py"
  ln -s "$TMPBASE/outside/secret.py" "$gr/alias.py"   # tracked: git lists it
  g() { git -C "$gr" -c user.name=t -c user.email=t@example.org -c commit.gpgsign=false "$@"; }
  if g init -q && g add -A && g commit -q -m one; then
    head=$(g rev-parse HEAD)
    cn compile "$gr" --cache-dir "$TMPBASE/gitcache" --json
    check "in a git checkout: a tracked symbolic link is listed and not followed" \
      sh -c 'grep -q "\"used_git\": true" "$0" && grep -q "\"listed\": 2," "$0" && grep -q "\"parsed\": 1," "$0"' "$OUT"
    check "in a git checkout: git_head is HEAD" sh -c 'grep -q "\"git_head\": \"$1\"" "$0"' \
      "$TMPBASE/gitcache/current/repo_manifest.json" "$head"
    check "and a clean checkout is not dirty" grep -q '"dirty": false' "$TMPBASE/gitcache/current/repo_manifest.json"
    printf '\n# changed\n' >> "$gr/app.py"
    cn compile "$gr" --cache-dir "$TMPBASE/gitcache" --quiet
    check "an edited tracked file makes it dirty" grep -q '"dirty": true' "$TMPBASE/gitcache/current/repo_manifest.json"
  else
    echo "# git cannot commit here: identity checks skipped"
  fi
fi

cn compile "$TMPBASE/nowhere"
check "a missing repository: exit 1, named" sh -c '[ '"$rc"' -eq 1 ] && grep -q "nowhere" "$0"' "$ERR"
cn compile
check "compile without a repository: exit 2" rc_is 2
cn compile "$repo" --index graphviz --cache-dir "$cache"
check "an unknown index is refused" err_has "unknown index 'graphviz'"
cn compile "$repo" --cache-dir "$repo/.cache"
check "a cache inside the repository is refused" err_has "is inside the repository"
cn compile "$repo" --languages cobol --cache-dir "$cache"
check "an unknown language is refused" err_has "no backend for language 'cobol'"

done_testing
