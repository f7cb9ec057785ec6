#!/bin/sh
# Golden tests of the language backends: every fixture file under
# tests/fixtures/lang/<language>/ against its .expected dump.  A backend that
# was not built (its grammar not fetched) is skipped, saying so.
set -u
total_plan=0
why=
for lang in python c cpp javascript typescript go java rust; do
  plugin="$CN_BUILDDIR/_plugins/lang-$lang/lang_$lang.so"
  runner="$CN_SRCDIR/tests/fixtures/lang/$lang/run.sh"
  if [ ! -f "$plugin" ]; then
    why="$why lang-$lang was not built;"
    continue
  fi
  if [ ! -f "$runner" ]; then
    why="$why no golden fixtures for $lang;"
    continue
  fi
  # Renumber each runner's TAP lines into one stream.
  out=$(LANG_DUMP="$CN_BUILDDIR/tests/lang/lang_dump" LANG_PLUGIN="$plugin" \
        LANG_PLUGIN_TSX="$CN_BUILDDIR/_plugins/lang-tsx/lang_tsx.so" sh "$runner" 2>&1)
  printf '%s\n' "$out" | awk -v base="$total_plan" -v lang="$lang" '
    /^1\.\./ { next }
    /^(not )?ok [0-9]+/ {
      neg = ($1 == "not"); n = neg ? $3 : $2
      sub(/^(not )?ok [0-9]+( -)?/, "")
      printf "%sok %d - [%s]%s\n", neg ? "not " : "", base + n, lang, $0
      next
    }
    { print }'
  count=$(printf '%s\n' "$out" | grep -cE '^(not )?ok [0-9]+')
  total_plan=$((total_plan + count))
done
[ -z "$why" ] || echo "#$why"
if [ "$total_plan" -eq 0 ]; then
  echo "1..0 # SKIP${why:- nothing to check}"
else
  echo "1..$total_plan"
fi
