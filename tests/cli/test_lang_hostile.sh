#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Hostile input for every built language backend: no input may crash a
# backend (a crash takes a whole `codenib compile` down with it).  Covers
# what makes libtree-sitter 0.20's 16-bit child counts overflow (long runs
# of unary operators, junk or unfinished right-recursive constructs, deep
# brackets and #if blocks, a 70,000-long else-if chain left broken), the
# densest such runs the guard lets through unwatched, and
# what is merely odd (a 5 MB line, NUL bytes, random bytes).  Each input
# gets each backend's first extension; one test per (input, backend) pair
# checks that tests/lang/lang_dump exits with status 0.  Under valgrind
# (CN_VALGRIND set) the test is skipped: it would take ten minutes there,
# and the AddressSanitizer build (make check-asan) runs it in full, which
# is what catches memory errors on these inputs.
. "$CN_SRCDIR/tests/cli/lib.sh"
if [ -n "${CN_VALGRIND-}" ]; then
  echo "1..0 # SKIP too slow under valgrind; make check-asan runs it with AddressSanitizer"
  exit 0
fi
dump=$CN_BUILDDIR/tests/lang/lang_dump
gen=$TMPBASE/gen
# These inputs must parse to the end (cut where the guard says), not run
# out of time: under AddressSanitizer on a loaded machine the guarded
# parses of random bytes take seconds.  The last test sets its own time.
CODENIB_PARSE_TIMEOUT_SCALE=10
export CODENIB_PARSE_TIMEOUT_SCALE
mkdir -p "$gen"

# rep N STRING: STRING N times, no newline
rep() { awk -v n="$1" -v s="$2" 'BEGIN { for (i = 0; i < n; i++) printf "%s", s }'; }

# The inputs, language-neutral; the name is the test's label.
{ printf 'x = '; rep 100000 '- '; } > "$gen/unary_minus"
{ rep 100000 '!'; printf ';'; } > "$gen/bangs"
rep 100000 'x = ' > "$gen/assign_chain"
rep 200000 '(' > "$gen/open_parens"
rep 200000 '{' > "$gen/open_braces"
rep 100000 '}' > "$gen/stray_closers"
rep 70000 '#if X\n' > "$gen/unclosed_ifs"
# the same runs at the guard's token bound (32,767), spread over 128-256 KB
# with blanks: parsed unguarded, they must not crash either
{ printf 'x = '; rep 32000 '-       '; } > "$gen/unary_minus_sparse"
{ rep 32000 '!       '; printf ';'; } > "$gen/bangs_sparse"
rep 16000 'x   =   ' > "$gen/assign_chain_sparse"
{
  printf 'int f(int x)\n{\n    if (x) {}'
  rep 70000 ' else if(x){}'
  printf ' else )\n'
} > "$gen/else_if_chain"
# one 5 MB line of statements, each with a 1,000-byte string
rep 5200 "x = \"$(rep 1000 a)\"; " > "$gen/long_line_5mb"
if [ -n "${CN_VALGRIND-}" ]; then odd=1; else odd=4; fi
# NUL bytes: runs of them, and inside what would otherwise be code
{
  printf 'int a;\n'
  rep 20000 'Z'
  printf '\nx = f(Z, "Z");\n'
  rep $((odd * 1250)) 'def Z(ZZ): return Z\n'
} | tr 'Z' '\000' > "$gen/nul_bytes"
# random bytes (1 to 255; NULs are above), the same on every run
LC_ALL=C awk -v n=$((odd * 25000)) \
  'BEGIN { srand(1); for (i = 0; i < n; i++) printf "%c", 1 + int(rand() * 255) }' > "$gen/random_bytes"

inputs=
for f in "$gen"/*; do
  size=$(wc -c < "$f")
  if [ -n "${CN_VALGRIND-}" ] && [ "$size" -gt 1000000 ]; then
    echo "# $(basename "$f"): $size bytes, left out under valgrind"
    continue
  fi
  inputs="$inputs $(basename "$f")"
done

for yaml in "$CN_BUILDDIR"/_plugins/*/plugin.yaml; do
  [ -f "$yaml" ] || continue
  grep -q '^kind:[[:space:]]*language' "$yaml" || continue
  lang=$(sed -n 's/^language:[[:space:]]*//p' "$yaml")
  lib=$(sed -n 's/^library:[[:space:]]*//p' "$yaml")
  ext=$(sed -n 's/^extensions:[[:space:]]*\[\(.*\)\]/\1/p' "$yaml" | tr ',' '\n' | tr -d ' "' | sed -n 1p)
  plugin=$(dirname "$yaml")/$lib.so
  if [ -z "$lang" ] || [ -z "$ext" ] || [ ! -f "$plugin" ]; then
    : > "$OUT"; : > "$ERR"
    fail "$yaml names a language, an extension and a built library"
    continue
  fi
  dir=$TMPBASE/$lang
  mkdir -p "$dir"
  for name in $inputs; do
    file=$dir/$name$ext
    ln "$gen/$name" "$file" 2>/dev/null || cp "$gen/$name" "$file"
    # the dump of junk says nothing; stderr says why it failed
    ${CN_RUN-} "$dump" "$plugin" "$lang" "$file" > /dev/null 2> "$ERR"
    rc=$?
    if [ "$rc" -eq 0 ]; then
      pass "[$lang] $name$ext"
    elif [ "$rc" -eq 97 ]; then
      fail "[$lang] $name$ext: valgrind found memory errors"
    elif [ "$rc" -gt 128 ]; then
      fail "[$lang] $name$ext: killed by signal $((rc - 128))"
    else
      fail "[$lang] $name$ext: exit status $rc"
    fi
    rm -f "$file"
  done
done

# Input whose error recovery is worse than quadratic (24 KB of "1a 1a ..."
# takes libtree-sitter 0.20 seconds, 96 KB minutes): the parse is given up
# after its time, the file is reported as failed, naming it and why, and the
# compile goes on.  The time is scaled down here (a 1 s parse).
if [ -f "$CN_BUILDDIR/_plugins/lang-python/lang_python.so" ]; then
  repo=$TMPBASE/slowrepo
  mkdir -p "$repo"
  rep 8000 '1a ' > "$repo/slow.py"
  printf 'def quick_parse():\n    return 1\n' > "$repo/fine.py"
  start=$(date +%s)
  CODENIB_PARSE_TIMEOUT_SCALE=0.1 cn compile "$repo" --cache-dir "$TMPBASE/slowcache"
  took=$(( $(date +%s) - start ))
  check "a parse that overruns its time: the compile succeeds" rc_is 0
  check "in about the time it was given (1 s; $took s)" test "$took" -le 3
  check "naming the file that failed and why" out_has "failed: slow.py: lang-python: parsing gave up after"
  cn run bm25_search --repo "$repo" --cache-dir "$TMPBASE/slowcache" --args '{"query": "quick parse", "top_k": 1, "names_only": true}'
  check "the other files are indexed" out_has "fine.py:quick_parse"
  # The failure is kept with the file's content: unchanged, it is not
  # parsed again (which would cost its whole time at every compile), and the
  # index is not stale for it.
  cn status "$repo" --cache-dir "$TMPBASE/slowcache"
  check "status: fresh, the failed file is known" sh -c '[ '"$rc"' -eq 0 ] && grep -q ": fresh" "$0" && grep -q "left out: 1 failed (slow.py)" "$0"' "$OUT"
  CODENIB_PARSE_TIMEOUT_SCALE=0.1 cn compile "$repo" --cache-dir "$TMPBASE/slowcache" --json --quiet
  check "a re-compile takes the unchanged file's failure as it was, without parsing it" sh -c 'tr -d " \n" < "$0" | grep -q "\"failed_files\":\[{\"path\":\"slow.py\",\"error\":\"lang-python:parsinggaveupafter[^}]*\"unchanged\":true}\]"' "$OUT"
  check "... and counts it" sh -c 'tr -d " \n" < "$0" | grep -q "\"failed\":1,\"left_unchanged\":1,"' "$OUT"
  cn compile "$repo" --cache-dir "$TMPBASE/slowcache"
  check "the summary says it was not tried again" out_has "failed (last compile; unchanged since): slow.py:"
  printf '1a \n' >> "$repo/slow.py"
  CODENIB_PARSE_TIMEOUT_SCALE=0.1 cn compile "$repo" --cache-dir "$TMPBASE/slowcache" --json --quiet
  check "edited, it is parsed again" sh -c 'tr -d " \n" < "$0" | grep -q "\"failed_files\":\[{\"path\":\"slow.py\",[^}]*\"unchanged\":false}\]"' "$OUT"
  CODENIB_PARSE_TIMEOUT_SCALE=0.1 cn compile "$repo" --cache-dir "$TMPBASE/slowcache" --rebuild --json --quiet
  check "--json lists it under failed_files" sh -c 'tr -d " \n" < "$0" | grep -q "\"failed_files\":\[{\"path\":\"slow.py\",\"error\":\"lang-python:parsinggaveupafter"' "$OUT"
fi

[ "$tap_n" -gt 0 ] || { echo "1..0 # SKIP no language backend was built"; exit 0; }
done_testing
