#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# `codenib eval` beyond Python: a repository in C, Go, JavaScript, Rust and
# Java with tests and docs in each language's places, mirrored bare as
# acme/poly, and one holding no source file at all (acme/docs); a dataset
# with range gold (gold_functions, changed_lines, language).  Checks which
# files are indexed, found_locations, the range scores (by hand, with the
# half-overlap boundary), the failure of an instance with nothing to index,
# --languages, and the per-language tables.
. "$CN_SRCDIR/tests/cli/lib.sh"
unset CODENIB_SKILLS_PATH CODENIB_MODEL OPENAI_BASE_URL CODENIB_BASE_URL

for lang in c go javascript rust java; do
  if [ ! -f "$CN_BUILDDIR/_plugins/lang-$lang/lang_$lang.so" ]; then
    echo "1..0 # SKIP the $lang backend was not built"
    exit 0
  fi
done
if ! command -v git >/dev/null 2>&1; then
  echo "1..0 # SKIP git is not installed"
  exit 0
fi

# ---- the repositories ---------------------------------------------------------------
src=$TMPBASE/poly
mkdir -p "$src/src" "$src/tests" "$src/server/testdata" "$src/lib" "$src/__tests__" "$src/docs" "$src/doc" \
  "$src/src/main/java/com/acme" "$src/src/test/java/com/acme" "$src/man"
cat > "$src/src/header.c" <<'EOF2'
#include "header.h"

/* Parses one header line of a request. */
int parse_header_line(const char *line, struct header *out)
{
    const char *colon = strchr(line, ':');
    if (colon == NULL)
        return -1;
    out->name_len = colon - line;
    out->value = colon + 1;
    return 0;
}
EOF2
cat > "$src/src/header.h" <<'EOF2'
struct header { long name_len; const char *value; };
int parse_header_line(const char *line, struct header *out);
EOF2
printf 'int main(void) { return parse_header_line("a", 0); }\n' > "$src/src/header_test.c"
printf 'int test_main(void) { return 0; }\n' > "$src/tests/check_header.c"
cat > "$src/server/server.go" <<'EOF2'
package server

// GracefulStop stops the server once the pending streams are done.
func GracefulStop(pending int) int {
	for pending > 0 {
		pending--
	}
	return pending
}
EOF2
printf 'package server\n\nfunc TestGracefulStop() {}\n' > "$src/server/server_test.go"
printf 'package testdata\n\nfunc Fixture() {}\n' > "$src/server/testdata/fixture.go"
printf 'function route(path) {\n  return path.split("/");\n}\nmodule.exports = route;\n' > "$src/lib/router.js"
printf 'test("route", () => {});\n' > "$src/lib/router.test.js"
printf 'it("works", () => {});\n' > "$src/__tests__/router.js"
printf 'module.exports = { title: "docs" };\n' > "$src/docs/conf.js"
printf 'pub fn walk_directory(depth: usize) -> usize {\n    depth + 1\n}\n' > "$src/src/lib.rs"
printf 'fn walk() {}\n' > "$src/src/walk_tests.rs"
printf 'fn it_walks() {}\n' > "$src/tests/walk.rs"
printf 'package com.acme;\n\npublic class Reader {\n    public int readToken() { return 1; }\n}\n' \
  > "$src/src/main/java/com/acme/Reader.java"
printf 'package com.acme;\n\npublic class ReaderTest {}\n' > "$src/src/main/java/com/acme/ReaderTest.java"
printf 'package com.acme;\n\npublic class Helper {}\n' > "$src/src/test/java/com/acme/Helper.java"
printf 'int manpage(void) { return 0; }\n' > "$src/man/gen.c"
printf '# Guide\n' > "$src/doc/guide.md"
printf '# poly\n' > "$src/README.md"
git -C "$src" init -q && git -C "$src" add -A &&
  git -C "$src" -c user.name=t -c user.email=t@example.org -c commit.gpgsign=false commit -q -m one ||
  { echo "1..0 # SKIP git cannot commit here"; exit 0; }
c1=$(git -C "$src" rev-parse HEAD)
docs=$TMPBASE/docsrepo
mkdir -p "$docs/docs"
printf '# only words\n' > "$docs/README.md"
printf 'int in_docs(void) { return 0; }\n' > "$docs/docs/example.c"
git -C "$docs" init -q && git -C "$docs" add -A &&
  git -C "$docs" -c user.name=t -c user.email=t@example.org -c commit.gpgsign=false commit -q -m one
c2=$(git -C "$docs" rev-parse HEAD)
mirrors=$TMPBASE/mirrors
mkdir -p "$mirrors/acme+poly" "$mirrors/acme+docs"
git clone -q --bare "$src" "$mirrors/acme+poly/repo"
git clone -q --bare "$docs" "$mirrors/acme+docs/repo"

# ---- the dataset ----------------------------------------------------------------------
data=$TMPBASE/dataset.jsonl
{
  printf '{"instance_id": "acme__poly-1", "repo": "acme/poly", "base_commit": "%s", "language": "C", "problem_statement": "parse_header_line crashes on a header line without a colon", "gold_files": ["src/header.c"], "gold_functions": [{"file": "src/header.c", "name": "parse_header_line", "kind": "function", "start": 4, "end": 12}], "changed_lines": {"src/header.c": [7]}, "gt_file_changes": [{"file": "src/header.c", "changes": {"edited_entities": ["src/header.c:parse_header_line"]}}]}\n' "$c1"
  printf '{"instance_id": "acme__poly-2", "repo": "acme/poly", "base_commit": "%s", "language": "Go", "problem_statement": "GracefulStop never returns while streams are pending", "gold_files": ["server/server.go"], "gold_functions": [{"file": "server/server.go", "name": "GracefulStop", "kind": "function", "start": 4, "end": 9}], "changed_lines": {"server/server.go": [5]}, "gt_file_changes": [{"file": "server/server.go", "changes": {"edited_entities": ["server/server.go:GracefulStop"]}}]}\n' "$c1"
  printf '{"instance_id": "acme__docs-1", "repo": "acme/docs", "base_commit": "%s", "language": "C", "problem_statement": "in_docs is wrong", "gold_files": ["docs/example.c"], "gold_functions": [], "changed_lines": {"docs/example.c": [1]}, "gt_file_changes": [{"file": "docs/example.c", "changes": {"edited_entities": []}}]}\n' "$c2"
} > "$data"
row_of() { grep "\"instance_id\": *\"$2\"" "$1" | tail -n 1; }

# ---- a run over every language ---------------------------------------------------------
out=$TMPBASE/run1
cn eval --dataset "$data" --mirrors "$mirrors" --out "$out" --keep-work
check "the eval exits 0" rc_is 0
tree=$out/work/trees/acme+poly/$c1
( cd "$tree" 2>/dev/null && find . -type f | sed 's|^\./||' | sort ) > "$TMPBASE/written"
cat > "$TMPBASE/want" <<'EOF2'
lib/router.js
server/server.go
src/header.c
src/header.h
src/lib.rs
src/main/java/com/acme/Reader.java
EOF2
check "every language's source is written, its tests and docs left out" cmp -s "$TMPBASE/want" "$TMPBASE/written"
[ -s "$TMPBASE/written" ] || cat "$TMPBASE/written" >&2
check "the C issue ranks src/header.c first" sh -c \
  'echo "$0" | grep -q "\"found_files\": *\[ *\"src/header.c\""' "$(row_of "$out/predictions.jsonl" acme__poly-1)"
check "rows carry found_locations" sh -c \
  'test "$(grep -c "\"found_locations\": *\[ *\"" "$0")" -eq 2' "$out/predictions.jsonl"
# every location is path:START-END with 1 <= START <= END, on a file the row lists
bad=$(sed -n 's/.*"found_locations": *\[\([^]]*\)\].*/\1/p' "$out/predictions.jsonl" | tr ',' '\n' |
  tr -d ' "' | grep -v '^$' | awk -F: '{ n = split($NF, r, "-"); if (n != 2 || r[1] !~ /^[0-9]+$/ ||
  r[2] !~ /^[0-9]+$/ || r[1] < 1 || r[1] + 0 > r[2] + 0) print }')
check "found_locations are path:START-END, 1 <= START <= END" test -z "$bad"
check "the C issue's first location is parse_header_line's range" sh -c \
  'echo "$0" | grep -q "\"found_locations\": *\[ *\"src/header.c:4-12\""' "$(row_of "$out/predictions.jsonl" acme__poly-1)"

# ---- nothing to index: a failure with its reason ----------------------------------------
check "a commit without a source file: its row is an error" sh -c \
  'echo "$0" | grep -q "\"error\": *\"[^\"]*no indexable file at $1: 2 files, none in a language with a backend ([^\"]*c, [^\"]*)"' \
  "$(row_of "$out/predictions.jsonl" acme__docs-1)" "$c2"
check "counted as failed" out_has "3 instances: 3 run now, 1 failed"
check "metrics.json lists it" sh -c 'tr -d " \n" < "$0" | grep -q "\"failed\":\[\"acme__docs-1\"\]"' "$out/metrics.json"
check "the range scores count it as failed" sh -c \
  'tr -d " \n" < "$0" | grep -q "\"localization\":{\"overall\":{\"instances\":3,\"failed\":1"' "$out/metrics.json"

# ---- the tables: range columns, per language --------------------------------------------
check "the table has the range columns" out_has "file@10  function@5  function@10  loc-hit@5"
check "and a line per language" sh -c 'grep -q "^C: codenib offline (2)" "$0" && grep -q "^Go: codenib offline (1)" "$0"' "$OUT"
check "report.md has a per-language table" grep -q "^## Per language" "$out/report.md"
check "metrics.json scores per language" sh -c \
  'tr -d " \n" < "$0" | grep -q "\"per_language\":{\"C\":{\"instances\":2"' "$out/metrics.json"

# ---- range scoring of a reference written by hand ---------------------------------------
# poly-1: gold [4,12] (9 lines), "8-20" overlaps 5 >= 4.5: a match; no changed line (7) in it.
# poly-2: gold [4,9] (6 lines), "7-30" overlaps 3 = half: a match; "1-4" first holds no
#   changed line 5 but "5-5" does, fourth of five: a loc-hit.
# docs-1: no gold function; no row: a miss.
ref=$TMPBASE/ref.jsonl
cat > "$ref" <<'EOF2'
{"instance_id": "acme__poly-1", "found_files": ["src/lib.rs", "src/header.c"], "found_locations": ["src/header.c:8-20"]}
{"instance_id": "acme__poly-2", "found_files": ["server/server.go"], "found_locations": ["server/server.go:1-4", "server/server.go:7-30", "lib/router.js:1-3", "server/server.go:5-5"]}
EOF2
cn eval --dataset "$data" --out "$out" --score-only --reference hand="$ref" --json
check "--score-only with a reference exits 0" rc_is 0
hand=$(tr -d ' \n' < "$out/metrics.json" | sed 's/.*"references":{"hand"://')
check "hand: file@1 = 1/3" sh -c 'echo "$0" | grep -q "\"file\":{\"n\":3,\"acc\":{\"1\":0.33333"' "$hand"
check "hand: file@3 = 2/3" sh -c 'echo "$0" | grep -q "\"3\":0.66666"' "$hand"
check "hand: function@5 = 2/2 (half the gold's length is enough)" sh -c \
  'echo "$0" | grep -Eq "\"function\":\{\"n\":2,\"acc\":\{\"5\":1(\.0)?,\"10\":1(\.0)?\}"' "$hand"
check "hand: loc-hit@5 = 1/3" sh -c 'echo "$0" | grep -q "\"loc\":{\"n\":3,\"hit\":{\"5\":0.33333"' "$hand"
sed 's/7-30/8-30/' "$ref" > "$TMPBASE/ref2.jsonl"
cn eval --dataset "$data" --out "$out" --score-only --reference hand="$TMPBASE/ref2.jsonl" --json
hand=$(tr -d ' \n' < "$out/metrics.json" | sed 's/.*"references":{"hand"://')
check "hand: one line less than half is no match" sh -c \
  'echo "$0" | grep -q "\"function\":{\"n\":2,\"acc\":{\"5\":0.5,\"10\":0.5}"' "$hand"

# ---- --languages ------------------------------------------------------------------------
out2=$TMPBASE/run2
cn eval --dataset "$data" --mirrors "$mirrors" --out "$out2" --keep-work --languages c,go --instances acme__poly-2
check "--languages c,go exits 0" rc_is 0
( cd "$out2/work/trees/acme+poly" && find . -type f | sed 's|^\./[^/]*/||' | sort ) > "$TMPBASE/written2"
printf 'server/server.go\nsrc/header.c\nsrc/header.h\n' > "$TMPBASE/want2"
check "only C and Go files are written" cmp -s "$TMPBASE/want2" "$TMPBASE/written2"
check "settings.json records the languages" grep -q '"languages": "c,go"' "$out2/settings.json"
cn eval --dataset "$data" --mirrors "$mirrors" --out "$TMPBASE/run3" --languages c,cobol
check "an unknown language: exit 2" rc_is 2
check "naming it and the known ones" sh -c 'grep -q "cobol" "$0" && grep -q "known: .*go" "$0"' "$ERR"
cn eval --dataset "$data" --mirrors "$mirrors" --out "$TMPBASE/run4" --languages java --instances acme__poly-1
check "--languages java: no C file is indexed, so none is found" sh -c \
  '[ '"$rc"' -eq 0 ] && echo "$0" | grep -q "\"found_files\"" && ! echo "$0" | grep -q "src/header"' \
  "$(row_of "$TMPBASE/run4/predictions.jsonl" acme__poly-1)"

done_testing
