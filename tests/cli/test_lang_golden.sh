#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Golden tests of the language backends.  Every X.expected under
# tests/fixtures/lang/ holds exactly what tests/lang/lang_dump prints for
# the source X (run from its language directory, so paths print relative).
# The backend for X is the built plugin whose plugin.yaml lists X's
# extension; a fixture whose backend was not built is skipped, saying so.
# Per backend, one more test runs the driver over all of its fixtures at
# once (one parser, many parses) and checks that nothing is INVALID.
. "$CN_SRCDIR/tests/cli/lib.sh"
fixtures=$CN_SRCDIR/tests/fixtures/lang
dump=$CN_BUILDDIR/tests/lang/lang_dump

# "ext language library" lines for every built backend
: > "$TMPBASE/exts"
for yaml in "$CN_BUILDDIR"/_plugins/*/plugin.yaml; do
  [ -f "$yaml" ] || continue
  lang=$(sed -n 's/^language:[[:space:]]*//p' "$yaml")
  lib=$(sed -n 's/^library:[[:space:]]*//p' "$yaml")
  sed -n 's/^extensions:[[:space:]]*\[\(.*\)\]/\1/p' "$yaml" | tr ',' '\n' | tr -d ' "' |
    while read -r ext; do
      [ -n "$ext" ] && echo "$ext $lang $(dirname "$yaml")/$lib.so"
    done >> "$TMPBASE/exts"
done

skipped=
for e in $(cd "$fixtures" && find . -name '*.expected' | sed 's|^\./||' | LC_ALL=C sort); do
  dir=${e%%/*}
  src=${e#*/}
  src=${src%.expected}
  ext=".${src##*.}"
  set -- $(awk -v x="$ext" '$1 == x { print $2, $3; exit }' "$TMPBASE/exts")
  if [ $# -lt 2 ]; then
    skipped="$skipped $dir/$src"
    continue
  fi
  lang=$1 plugin=$2
  echo "$src" >> "$TMPBASE/sources.$dir.$lang"
  echo "$plugin" > "$TMPBASE/plugin.$dir.$lang"
  (cd "$fixtures/$dir" && ${CN_RUN-} "$dump" "$plugin" "$lang" "$src") >"$OUT" 2>"$ERR"
  rc=$?
  if [ "$rc" -eq 0 ] && diff -u "$fixtures/$e" "$OUT" > "$TMPBASE/diff" 2>&1; then
    pass "[$lang] $dir/$src"
  else
    sed 's/^/#   /' "$TMPBASE/diff" | head -n 40
    fail "[$lang] $dir/$src (exit $rc)"
  fi
done

for list in "$TMPBASE"/sources.*; do
  [ -f "$list" ] || continue
  key=${list#"$TMPBASE"/sources.}
  dir=${key%%.*} lang=${key#*.}
  plugin=$(cat "$TMPBASE/plugin.$key")
  # shellcheck disable=SC2046
  (cd "$fixtures/$dir" && ${CN_RUN-} "$dump" "$plugin" "$lang" $(cat "$list")) >"$OUT" 2>"$ERR"
  rc=$?
  if [ "$rc" -eq 0 ] && ! grep -q ' INVALID$' "$OUT"; then
    pass "[$lang] all of $dir in one run, nothing INVALID"
  else
    grep ' INVALID$' "$OUT" | sed 's/^/#   /'
    fail "[$lang] all of $dir in one run, nothing INVALID (exit $rc)"
  fi
done

[ -z "$skipped" ] || echo "# no backend built for:$skipped (run scripts/fetch-grammars.sh, then configure)"
[ "$tap_n" -gt 0 ] || { echo "1..0 # SKIP no language backend was built"; exit 0; }
done_testing
