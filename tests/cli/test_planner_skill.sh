#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# A third-party retrieval skill joins the offline planner's answer: built
# out of tree against the SDK headers, its package says `planner:
# retrieval`, and its hits are fused with the built-in ones.  One that
# fails, returns garbage or names files the repository lacks is reported
# and left out; the answer still comes.  Without such a skill nothing
# changes.
. "$CN_SRCDIR/tests/cli/lib.sh"
unset CODENIB_SKILLS_PATH CODENIB_MODEL OPENAI_BASE_URL CODENIB_BASE_URL

need_python_backend

repo=$TMPBASE/repo
cache=$TMPBASE/cache
mkdir -p "$repo/pkg"
cat > "$repo/pkg/card.py" <<'PY'
def layout(c, lines):
    return c.border + c.width, c.title, c.padding * 2 + lines * c.height
PY
cat > "$repo/pkg/other.py" <<'PY'
def unrelated(x):
    return x + 1
PY
q='The card border is wrong: title and height overflow the width'

cn query --repo "$repo" --cache-dir "$cache" --json "$q"
check "query answers without a third-party skill" rc_is 0
cp "$OUT" "$TMPBASE/before.json"
check "and no retrieval-role step is taken" sh -c '! grep -q "\"role\"" "$0"' "$OUT"
cn query --repo "$repo" --cache-dir "$cache" "$q"
cp "$OUT" "$TMPBASE/before.txt"
check "BM25 alone does not find pkg/other.py" sh -c '! grep -q "other.py" "$0"' "$OUT"

# build each skill package out of tree: MODE 0 good, 1 fails, 2 garbage, 3 ghosts
skills=$TMPBASE/skills
build() {
  mkdir -p "$skills/$1"
  sed "s/@ID@/$1/" "$CN_SRCDIR/tests/fixtures/retrieval_skill/config.yaml.in" > "$skills/$1/config.yaml"
  # shellcheck disable=SC2086
  ${CC:-cc} ${CN_TEST_CFLAGS:--O2 -g} -shared -fPIC -fvisibility=hidden -DEXT_ID="$1" -DEXT_MODE="$2" \
    -I"$CN_BUILDDIR/sdk/include" -I"$CN_SRCDIR/sdk/include" \
    -o "$skills/$1/$1.so" "$CN_SRCDIR/tests/fixtures/retrieval_skill/ext_search.c" ${CN_TEST_LDFLAGS:-} >"$OUT" 2>"$ERR"
  rc=$?
  check "the out-of-tree skill $1 builds against the SDK" rc_is 0
}
build ext_good 0

export CODENIB_SKILLS_PATH="$skills"
cn skills show ext_good --json
check "its planner role is listed" grep -q '"planner": *"retrieval"' "$OUT"
cn skills show ext_good
check "skills show says the planner calls it" out_has "planner:   retrieval"
cn query --repo "$repo" --cache-dir "$cache" --json "$q"
check "query answers with it" rc_is 0
check "the planner called it with the question" grep -q '"skill": *"ext_good"' "$OUT"
check "as a retrieval-role step that succeeded" sh -c 'grep -A12 "\"skill\": *\"ext_good\"" "$0" | grep -q "\"status\": *\"ok\""' "$OUT"
check "its hit is fused into the ranking" out_has '"ext_good #1"'
cn query --repo "$repo" --cache-dir "$cache" "$q"
check "its file joins the answer" sh -c 'grep "^Files:" "$0" | grep -q "pkg/other.py"' "$OUT"
check "the built-in answer stays first" sh -c 'grep -q "^Files: pkg/card.py" "$0"' "$OUT"
check "nothing to warn about" sh -c '! grep -q warning "$0"' "$ERR"

# MCP locate answers through the same planner
{
  echo '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"sh","version":"1"}}}'
  echo '{"jsonrpc":"2.0","method":"notifications/initialized"}'
  echo '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"locate","arguments":{"question":"'"$q"'"}}}'
} > "$TMPBASE/msgs"
cn mcp --repo "$repo" --cache-dir "$cache" < "$TMPBASE/msgs"
check "MCP locate answers" rc_is 0
check "with the third-party skill's file" sh -c 'grep "\"id\":3," "$0" | grep -q "pkg/other.py"' "$OUT"

cn query --repo "$repo" --cache-dir "$cache" --skills ext_good --json "$q"
check "query --skills takes a third-party skill alone" rc_is 0
check "and answers from it" sh -c 'grep -q "\"ext_good #1\"" "$0" && ! grep -q "\"bm25 #" "$0"' "$OUT"

cn query --repo "$repo" --cache-dir "$cache" --skills ext_good,ext_nosuch "$q"
check "a skill --skills names that is not installed is named" sh -c '[ "$1" -eq 1 ] && grep -q "no skill .ext_nosuch. is installed" "$0"' "$ERR" "$rc"

build ext_fail 1
build ext_junk 2
build ext_ghost 3
cn query --repo "$repo" --cache-dir "$cache" "$q"
check "broken skills are not fatal" rc_is 0
check "the failing one is reported" err_has "retrieval skill 'ext_fail' left out: "
check "with its own reason" err_has "the search service is down"
check "the one returning garbage is reported" err_has "retrieval skill 'ext_junk' left out: its result holds no list of hits"
check "the one naming files the repository lacks is reported" err_has "retrieval skill 'ext_ghost' left out: none of its hits"
check "the good one still counts" sh -c 'grep "^Files:" "$0" | grep -q "pkg/other.py"' "$OUT"
check "no ghost file reaches the answer" sh -c '! grep -q nowhere.py "$0"' "$OUT"

# a package that asks for a role the planner does not give fails at load
mkdir -p "$skills/ext_badrole"
sed -e "s/@ID@/ext_badrole/" -e "s/^planner: retrieval/planner: everything/" \
  "$CN_SRCDIR/tests/fixtures/retrieval_skill/config.yaml.in" > "$skills/ext_badrole/config.yaml"
cn skills list
check "an unknown planner role is reported with its line" out_has "config.yaml:6:"

unset CODENIB_SKILLS_PATH
cn query --repo "$repo" --cache-dir "$cache" "$q"
check "without them the answer is as before" cmp -s "$OUT" "$TMPBASE/before.txt"

done_testing
