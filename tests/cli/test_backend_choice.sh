#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The backends a repository was compiled with stay chosen: the manifest
# records the indexes, the embedder, the vector store and their options,
# and every later build -- a plain `codenib compile`, the recompile of a
# stale index by `query`, the MCP server's refresh -- reuses them unless an
# option says otherwise.  The embedder is a test backend
# (tests/fixtures/backends: fxb-good, whose model id is fixture/counts-3),
# so no default can pass for it.
. "$CN_SRCDIR/tests/cli/lib.sh"
unset CODENIB_SKILLS_PATH CODENIB_MODEL CODENIB_RERANK_MODEL OPENAI_BASE_URL CODENIB_BASE_URL

need_python_backend
CODENIB_PLUGINS_PATH=$CN_FIXTURES/backends; export CODENIB_PLUGINS_PATH

repo=$TMPBASE/repo
cache=$TMPBASE/cache
mkdir -p "$repo/shop"
cat > "$repo/shop/pricing.py" <<'EOF'
def apply_tax(invoice, rate):
    return invoice * (1 + rate)
EOF
cat > "$repo/shop/cart.py" <<'EOF'
from shop.pricing import apply_tax


def total(items):
    return apply_tax(sum(items), 0.2)
EOF
manifest=$cache/current/repo_manifest.json
vjson=$cache/current/vectors/vectors.json

# the recorded choice, as one line: indexes embedder store precision, and the
# model the vectors were made by
choice() {
  awk '
    /"options": \{/ { inopt = 1 }
    inopt && /"indexes": \[/ { inidx = 1; next }
    inidx && /\]/ { inidx = 0 }
    inidx { gsub(/[ ",]/, ""); idx = idx (idx ? "," : "") $0 }
    inopt && /"embedder":/ { split($0, a, "\""); emb = a[4] }
    inopt && /"store":/ { split($0, a, "\""); st = a[4] }
    inopt && /"precision":/ { split($0, a, "\""); pr = (a[4] == "" ? "none" : a[4]) }
    END { print idx " " emb " " st " " pr }' "$manifest"
}
model() { sed -n 's/.*"model_id": "\([^"]*\)".*/\1/p' "$vjson"; }
chosen="nodes,bm25,graph,vector fxb-good vec-flat f16"

cn compile "$repo" --cache-dir "$cache" --index bm25,graph,vector --embedder fxb-good --vector-precision f16 --quiet
check "compile with the test embedder and f16 vectors" rc_is 0
check "the manifest records the indexes, embedder, store and precision" test "$(choice)" = "$chosen"
check "the vectors are the test embedder's" test "$(model)" = "fixture/counts-3"

# ---- a plain compile -----------------------------------------------------------
echo "    return 0" >> "$repo/shop/cart.py"
cn compile "$repo" --cache-dir "$cache"
check "a plain compile exits 0" rc_is 0
check "and keeps the recorded choice" test "$(choice)" = "$chosen"
check "saying so" out_has "options: as the previous compile recorded them (vectors by fxb-good+vec-flat"
check "the vectors are still the test embedder's" test "$(model)" = "fixture/counts-3"
check "with the recorded precision" sh -c 'sed -n "/\"store_config\"/,/}/p" "$0" | grep -q "\"precision\": \"f16\""' "$vjson"
cn compile "$repo" --cache-dir "$cache" --rebuild --quiet
check "--rebuild keeps it too" test "$rc:$(choice)" = "0:$chosen"

# ---- a query that finds the index stale ----------------------------------------
gen_before=$(readlink "$cache/current")
printf '\n\ndef refund(invoice):\n    return -invoice\n' >> "$repo/shop/pricing.py"
cn query --repo "$repo" --cache-dir "$cache" --offline "where is the tax applied to an invoice"
check "query on the edited repository exits 0" rc_is 0
check "and compiled it again" test "$(readlink "$cache/current")" != "$gen_before"
check "with the recorded choice" test "$(choice)" = "$chosen"
check "the vectors are the test embedder's" test "$(model)" = "fixture/counts-3"
cn run embedding_search --repo "$repo" --cache-dir "$cache" --args '{"query": "refund", "kinds": ["function"], "names_only": true, "top_k": 10}'
check "the new function is in the vector index" out_has '"node_name":"shop/pricing.py:refund"'

# ---- the MCP server's refresh ----------------------------------------------------
gen_before=$(readlink "$cache/current")
printf '\n\ndef discount(invoice):\n    return invoice * 0.9\n' >> "$repo/shop/pricing.py"
echo '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"bm25_search","arguments":{"query":"discount invoice","names_only":true}}}' > "$TMPBASE/msgs"
cn mcp --repo "$repo" --cache-dir "$cache" < "$TMPBASE/msgs"
check "the MCP server answers on the edited repository" sh -c '[ '"$rc"' -eq 0 ] && grep -q "shop/pricing.py:discount" "$0"' "$OUT"
check "after compiling it again" test "$(readlink "$cache/current")" != "$gen_before"
check "with the recorded choice" test "$(choice)" = "$chosen"
check "the vectors are the test embedder's" test "$(model)" = "fixture/counts-3"

# ---- an option given overrides the record ----------------------------------------
cn compile "$repo" --cache-dir "$cache" --index bm25,graph,vector --vector-precision f32 --quiet
check "--vector-precision f32 replaces the recorded f16, the embedder stays" test "$rc:$(choice)" = "0:nodes,bm25,graph,vector fxb-good vec-flat f32"
cn compile "$repo" --cache-dir "$TMPBASE/fresh" --json
check "a first compile records the defaults, taking nothing from a record" sh -c '[ '"$rc"' -eq 0 ] && grep -q "\"options_recorded\": false" "$0"' "$OUT"
cn compile "$repo" --cache-dir "$cache" --index bm25,graph,vector --embedder embed-local --embedder-config '{"dim": 2}' --quiet
check "--embedder embed-local replaces the recorded embedder" test "$rc:$(choice)" = "0:nodes,bm25,graph,vector embed-local vec-flat f32"
check "(its vectors)" test "$(model)" = "embed-local/lsa-2"
cn compile "$repo" --cache-dir "$cache" --index bm25,graph,vector --quiet
check "--index ...,vector alone keeps the recorded embedder and its configuration" sh -c '[ '"$rc"' -eq 0 ] && [ "$(sed -n "s/.*\"model_id\": \"\([^\"]*\)\".*/\1/p" "$0")" = embed-local/lsa-2 ]' "$vjson"
cn compile "$repo" --cache-dir "$cache" --index bm25,graph --quiet
check "--index bm25,graph drops the vectors" sh -c '[ '"$rc"' -eq 0 ] && [ ! -e "$0" ]' "$vjson"
check "and records that" test "$(choice)" = "nodes,bm25,graph   "
cn compile "$repo" --cache-dir "$cache" --quiet
check "the next plain compile builds no vectors either" sh -c '[ '"$rc"' -eq 0 ] && [ ! -e "$0" ]' "$vjson"

# ---- a key is never recorded -----------------------------------------------------
cn compile "$repo" --cache-dir "$TMPBASE/k" --index bm25,vector --embedder fxb-good --embedder-config '{"api_key": "sk-never-written", "note": "kept"}' --quiet
check "compile with a key in the embedder's configuration" rc_is 0
check "the manifest keeps the configuration without the key" sh -c 'grep -q "\"note\": \"kept\"" "$0/current/repo_manifest.json" && ! grep -r -q "sk-never-written" "$0"' "$TMPBASE/k"

done_testing
