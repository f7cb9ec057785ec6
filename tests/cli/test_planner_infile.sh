#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The offline planner's in-file function ranking (infile): once the
# answer's files are chosen, their functions are ranked by BM25 among
# themselves, so a function of the file the question names that matches
# only a few of its words still reaches Symbols when many functions
# elsewhere match those words better.  --without infile switches it off.
. "$CN_SRCDIR/tests/cli/lib.sh"
unset CODENIB_SKILLS_PATH CODENIB_MODEL OPENAI_BASE_URL CODENIB_BASE_URL

need_python_backend

repo=$TMPBASE/repo
cache=$TMPBASE/cache
mkdir -p "$repo/pkg" "$repo/noise"
cat > "$repo/pkg/output.py" <<'PY'
def render_card(card):
    return [draw(card), colour(card)]


def draw(card):
    return card.svg


def clamp(text, box):
    # long words wrap so the text stays inside the box
    return text if len(text) < box.columns else text[: box.columns]


def colour(card):
    return card.theme
PY
# sixty functions elsewhere, each matching the question better, by name
# and by text, than the one that needs the change
i=0
while [ $i -lt 60 ]; do
  printf 'def text_leaves_box_%d(line):\n    """the text leaves the box when long words do not wrap"""\n    return line.wrap(%d)\n' \
    $i $i > "$repo/noise/m$i.py"
  i=$((i + 1))
done
q='render_card: long words do not wrap, the text leaves the box'

cn query --repo "$repo" --cache-dir "$cache" --quiet "$q"
check "query answers" rc_is 0
check "the file of the function the question names comes first" sh -c 'grep -q "^Files: pkg/output.py" "$0"' "$OUT"
check "its function that keeps text in the box is among the symbols" \
  sh -c 'grep "^Symbols:" "$0" | grep -q "pkg/output.py:clamp"' "$OUT"
cn query --repo "$repo" --cache-dir "$cache" --json "$q"
check "the in-file rank is in the symbol's why" out_has '"in-file bm25 #'

cn query --repo "$repo" --cache-dir "$cache" --quiet --without infile "$q"
check "--without infile: the repository-wide searches alone miss it" \
  sh -c '[ '"$rc"' -eq 0 ] && ! grep "^Symbols:" "$0" | grep -q "clamp"' "$OUT"
cn query --repo "$repo" --cache-dir "$cache" --json --without infile "$q"
check "--without infile: no in-file rank in the evidence" sh -c '! grep -q "in-file bm25" "$0"' "$OUT"

done_testing
