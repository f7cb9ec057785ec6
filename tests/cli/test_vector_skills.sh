#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The vector index and the skills over it: `codenib compile --index
# ...,vector` with embed-local (LSA learned from the repository) and
# embed-openai (against the loopback server tests/llm/fake_openai), what it
# writes (manifest, status, stage timing), embedding_search (exact top
# results, a query sharing no word with its answer, filters), hybrid_search
# (reciprocal rank fusion recomputed here from the two retrievers' own
# outputs), incremental rebuilds (byte-identical to a full one for
# embed-local; only changed texts re-embedded for embed-openai), int8
# vectors, and the errors a user meets.
. "$CN_SRCDIR/tests/cli/lib.sh"
unset CODENIB_SKILLS_PATH CODENIB_PLUGINS_PATH CODENIB_BASE_URL OPENAI_BASE_URL OPENAI_API_KEY CODENIB_API_KEY
unset CODENIB_EMBED_MODEL

for so in lang-python/lang_python embed-local/embed_local vec-flat/vec_flat embed-openai/embed_openai; do
  if [ ! -f "$CN_BUILDDIR/_plugins/$so.so" ]; then
    echo "1..0 # SKIP the python, embed-local, vec-flat or embed-openai backends were not built"
    exit 0
  fi
done

server_pid=
stop_server() {
  if [ -n "$server_pid" ]; then
    kill "$server_pid" 2>/dev/null
    wait "$server_pid" 2>/dev/null
    server_pid=
  fi
}
trap 'stop_server; rm -rf "$TMPBASE"' EXIT

# start_server: fake_openai answering embeddings with hashed bags of words;
# its log is $LOG, its base URL $URL.
start_server() {
  LOG=$TMPBASE/server.log
  pf=$TMPBASE/server.port
  "$CN_FAKE_OPENAI" --port-file "$pf" --log "$LOG" &
  server_pid=$!
  while [ ! -s "$pf" ]; do
    kill -0 "$server_pid" 2>/dev/null || { echo "Bail out! fake_openai did not start"; exit 1; }
    sleep 0.05
  done
  URL=http://127.0.0.1:$(cat "$pf")/v1
}

# The texts of each logged embeddings request, one request a line, as the
# number of inputs it held.  (The repository below has no "]}" in its text,
# so the input array ends at the first "]}".)
inputs_per_request() {
  grep -F '"endpoint":"embeddings"' "$LOG" | awk '{
    s = substr($0, index($0, "\"input\":[") + 9); s = substr(s, 1, index(s, "]}") - 1)
    print gsub(/","/, "&", s) + 1 }'
}

# Node ids of a result list, in order; the name of the first result.
ids() { grep -o '"node_id":[0-9]*' "$1" | cut -d: -f2 | tr '\n' ' '; }
first_name() { grep -o '"node_name":"[^"]*"' "$OUT" | head -n 1 | cut -d'"' -f4; }

repo=$TMPBASE/repo
cache=$TMPBASE/cache
mkdir -p "$repo/shop" "$repo/net" "$repo/media" "$repo/tests"
cat > "$repo/shop/pricing.py" <<'PY'
"""Prices of the shop."""


def apply_tax(invoice, rate):
    """Add the sales tax to an invoice."""
    invoice.tax = invoice.subtotal * rate
    invoice.total = invoice.subtotal + invoice.tax
    return invoice


def apply_discount(invoice, coupon):
    """Lower the invoice subtotal with a coupon."""
    invoice.subtotal -= coupon.amount
    return invoice
PY
cat > "$repo/net/http_client.py" <<'PY'
"""Fetching pages from remote servers."""
import socket
import time


def fetch_with_retry(url, attempts):
    """Download a page, retrying when the connection times out."""
    for attempt in range(attempts):
        try:
            return download(url)
        except socket.timeout:
            time.sleep(2 ** attempt)
    raise ConnectionError(url)


def open_socket(host, port):
    """Open a socket connection to a remote host."""
    return socket.create_connection((host, port), timeout=5)
PY
cat > "$repo/media/thumbnails.py" <<'PY'
"""Image thumbnails."""


def make_thumbnail(image, width):
    """Resize an image to a thumbnail of the given width, keeping its aspect."""
    height = image.height * width // image.width
    return image.resize(width, height)


def rotate_image(image, degrees):
    """Rotate the pixels of an image."""
    return image.rotate(degrees)
PY
# The only place where "refund" and "receipt" occur: next to invoice, tax
# and subtotal, the vocabulary of apply_tax.
cat > "$repo/tests/test_pricing.py" <<'PY'
from shop.pricing import apply_tax


def test_receipt_after_refund():
    """A refund issues a receipt; the invoice keeps its tax and subtotal."""
    receipt = refund(invoice_with_tax())
    assert receipt.invoice.tax == receipt.invoice.subtotal * 0.2
PY

# ---- compile with embed-local -------------------------------------------------
cn compile "$repo" --cache-dir "$cache" --index bm25,graph,vector --embedder-config '{"dim": 8}' --json
check "compile --index bm25,graph,vector exits 0" rc_is 0
check "the manifest lists the vector index" out_has '"type": "vector"'
check "built by embed-local into vec-flat" out_has '"builder": "embed-local+vec-flat"'
check "with the model and its dimension" sh -c 'grep -q "\"model\": \"embed-local/lsa-8\"" "$0" && grep -q "\"dim\": 8," "$0"' "$OUT"
nodes=$(sed -n '/"nodes": {/,/}/s/.*"count": \([0-9]*\).*/\1/p' "$OUT")
check "one vector per node ($nodes nodes)" sh -c '[ -n "$1" ] && sed -n "/\"vector\": {/,/}/p" "$0" | grep -q "\"count\": $1,"' "$OUT" "$nodes"
check "every node embedded, none reused on a first build" sh -c 'sed -n "/\"vector\": {/,/}/p" "$0" | grep -q "\"embedded\": $1," && sed -n "/\"vector\": {/,/}/p" "$0" | grep -q "\"reused\": 0,"' "$OUT" "$nodes"
check "--json times the vectors stage" sh -c 'sed -n "/\"stage_seconds\"/,/}/p" "$0" | grep -q "\"vectors\": [0-9]"' "$OUT"
gen=$cache/$(readlink "$cache/current")
check "vectors/ holds vectors.json, the embedder's state and the store" sh -c 'test -s "$0/vectors/vectors.json" && test -s "$0/vectors/embedder.bin" && [ -n "$(ls "$0/vectors/store")" ]' "$gen"
check "vectors.json records the embedder, its config and the store" sh -c 'grep -q "\"embedder\": \"embed-local\"" "$0" && grep -q "\"dim\": 8" "$0" && grep -q "\"store\": \"vec-flat\"" "$0"' "$gen/vectors/vectors.json"
check "an embedder with learned state keeps no reuse file" test ! -e "$gen/vectors/reuse.bin"

cn status "$repo" --cache-dir "$cache"
check "status: fresh" sh -c '[ '"$rc"' -eq 0 ] && grep -q ": fresh" "$0"' "$OUT"
check "status reports the vector index and its model" out_has "vectors: embed-local/lsa-8, $nodes nodes x 8 dimensions by embed-local in vec-flat"
cn status "$repo" --cache-dir "$cache" --json
check "status --json: vectors present, usable, with the model" sh -c 'grep -q "\"present\": true" "$0" && grep -q "\"usable\": true" "$0" && grep -q "\"model\": \"embed-local/lsa-8\"" "$0"' "$OUT"

# ---- embedding_search ----------------------------------------------------------
es() { cn run embedding_search --repo "$repo" --cache-dir "$cache" --args "$1"; }
es '{"query": "invoice tax", "top_k": 1, "names_only": true}'
check "embedding_search: the tax function for 'invoice tax'" sh -c '[ "$(cat "$0")" = "[{\"node_name\":\"shop/pricing.py:apply_tax\",\"type\":\"function\",\"file\":\"shop/pricing.py\",\"start_line\":4}]" ]' "$OUT"
es '{"query": "download page retry", "top_k": 1, "return_content": false}'
check "the retrying download for 'download page retry'" out_has '"node_name":"net/http_client.py:fetch_with_retry","type":"function","file":"net/http_client.py","start_line":6,"node_id":'
check "with its 1-based end line and a cosine score" sh -c 'grep -q "\"end_line\":13,\"score\":0\.[0-9]" "$0"' "$OUT"
es '{"query": "socket timeout", "top_k": 1, "names_only": true}'
check "the socket opener for 'socket timeout'" test "$(first_name)" = "net/http_client.py:open_socket"
es '{"query": "resize image pixels", "top_k": 3, "names_only": true}'
check "the three best for 'resize image pixels' are all in media/" sh -c '[ "$(grep -o "\"file\":\"[^\"]*\"" "$0" | sort -u)" = "\"file\":\"media/thumbnails.py\"" ] && [ $(grep -o "node_name" "$0" | wc -l) -eq 3 ]' "$OUT"
# No word of the query is in the pricing functions; only the test file ties
# "refund" and "receipt" to their vocabulary (invoice, tax, subtotal).  With
# as many latent dimensions as the repository has topics (billing, network,
# images), LSA puts the query with the billing code.
check "(the pricing functions hold neither 'refund' nor 'receipt')" sh -c '! grep -q -i -e refund -e receipt "$0"' "$repo/shop/pricing.py"
cn compile "$repo" --cache-dir "$TMPBASE/topics" --index vector --embedder-config '{"dim": 3}' --quiet
cn run embedding_search --repo "$repo" --cache-dir "$TMPBASE/topics" --args '{"query": "refund receipt", "top_k": 3, "filter_test": true, "kinds": ["function"], "return_content": false}'
top2=$(grep -o '"node_name":"[^"]*"' "$OUT" | head -n 2 | cut -d'"' -f4 | sort | tr '\n' ' ')
check "a query sharing no word with its answer finds it through co-occurring words" test "$top2" = "shop/pricing.py:apply_discount shop/pricing.py:apply_tax "
check "(both close to the query, the next result far from it)" sh -c '[ $(grep -o "\"score\":[-0-9.e]*" "$0" | cut -d: -f2 | awk "NR <= 2 && \$1 > 0.9 { n++ } NR == 3 && \$1 < 0.5 { n++ } END { print n + 0 }") -eq 3 ]' "$OUT"
es '{"query": "refund receipt", "top_k": 2, "names_only": true}'
check "without the filter, the test that uses those words comes first" test "$(first_name)" = "tests/test_pricing.py:test_receipt_after_refund"
es '{"query": "invoice refund receipt tax", "top_k": 20, "filter_test": true, "names_only": true}'
check "filter_test leaves tests out" sh -c '[ -s "$0" ] && ! grep -q "tests/" "$0"' "$OUT"
es '{"query": "invoice tax image socket", "top_k": 20, "path_prefix": "media/", "names_only": true}'
check "path_prefix keeps only that directory" sh -c '[ $(grep -o "\"file\":\"media/thumbnails.py\"" "$0" | wc -l) -eq $(grep -o "\"file\":" "$0" | wc -l) ] && grep -q media "$0"' "$OUT"
es '{"query": "invoice tax image socket", "top_k": 20, "kinds": ["file"], "names_only": true}'
check "kinds keeps only those kinds" sh -c '[ $(grep -o "\"type\":\"file\"" "$0" | wc -l) -eq 4 ] && ! grep -q "\"type\":\"function\"" "$0"' "$OUT"
es '{"query": "apply tax invoice", "top_k": 1, "wrap_with_line_numbers": true}'
check "content with a 1-based line gutter" out_has '     4\tdef apply_tax(invoice, rate):'
es '{"query": "zebra quantum"}'
check "a query of words the repository never uses finds nothing" sh -c '[ '"$rc"' -eq 0 ] && [ "$(cat "$0")" = "[]" ]' "$OUT"
es '{"query": "invoice", "kinds": ["gizmo"]}'
check "an unknown kind is refused, naming it" sh -c '[ '"$rc"' -eq 1 ] && grep -q "gizmo" "$0"' "$ERR"

# ---- hybrid_search: reciprocal rank fusion ---------------------------------------
q='invoice tax subtotal'
cn run bm25_search --repo "$repo" --cache-dir "$cache" --args "{\"query\": \"$q\", \"top_k\": 6, \"return_content\": false}"
bm25_ids=$(ids "$OUT")
cn run embedding_search --repo "$repo" --cache-dir "$cache" --args "{\"query\": \"$q\", \"top_k\": 6, \"return_content\": false}"
emb_ids=$(ids "$OUT")
cn run hybrid_search --repo "$repo" --cache-dir "$cache" --args "{\"query\": \"$q\", \"top_k\": 12, \"candidates\": 6, \"return_content\": false}"
check "hybrid_search exits 0" rc_is 0
# Recompute the fusion with the default weights (BM25 1, embedding 0.5):
# score = 1/(60 + bm25 rank) + 0.5/(60 + embedding rank),
# best first, ties by node id; print "id score bm25_rank embedding_rank".
expected=$(printf '%s\n%s\n' "$bm25_ids" "$emb_ids" | awk '
  NR == 1 { for (i = 1; i <= NF; i++) { b[$i] = i; seen[$i] = 1 } }
  NR == 2 { for (i = 1; i <= NF; i++) { e[$i] = i; seen[$i] = 1 } }
  END {
    for (n in seen) {
      s = 0
      if (n in b) s += 1 / (60 + b[n])
      if (n in e) s += 0.5 / (60 + e[n])
      printf "%.17g %d %s %s\n", s, n, (n in b) ? b[n] : "null", (n in e) ? e[n] : "null"
    }
  }' | sort -k1,1gr -k2,2n | awk '{ print $2, $1, $3, $4 }')
got=$(sed 's/},{/}\n{/g' "$OUT" | sed -n 's/.*"node_id":\([0-9]*\).*"score":\([^,]*\),"bm25_rank":\([^,]*\),"embedding_rank":\([^}]*\)}.*/\1 \2 \3 \4/p')
check "both retrievers returned something to fuse" sh -c '[ -n "$0" ] && [ -n "$1" ]' "$bm25_ids" "$emb_ids"
check "hybrid ranks, scores and per-retriever ranks equal RRF computed by hand" sh -c '[ "$0" = "$1" ]' "$expected" "$got"
if [ "$expected" != "$got" ]; then printf '# expected:\n%s\n# got:\n%s\n' "$expected" "$got" | sed 's/^/# /'; fi
check "a node only one retriever found has a null rank for the other" sh -c 'echo "$0" | grep -q " null"' "$got"
cn run hybrid_search --repo "$repo" --cache-dir "$cache" --args '{"query": "invoice tax", "top_k": 1, "rrf_k": 0, "bm25_weight": 2, "embedding_weight": 1, "return_content": false}'
check "ranked first by both with rrf_k 0: score 2/1 + 1/1 = 3" out_has '"node_name":"shop/pricing.py:apply_tax","type":"function","file":"shop/pricing.py","start_line":4,"node_id":'
check "(and its ranks are 1 and 1)" out_has '"end_line":8,"score":3.0,"bm25_rank":1,"embedding_rank":1}'
cn run bm25_search --repo "$repo" --cache-dir "$cache" --args '{"query": "socket connection", "top_k": 5, "return_content": false}'
bm25_only=$(ids "$OUT")
cn run hybrid_search --repo "$repo" --cache-dir "$cache" --args '{"query": "socket connection", "top_k": 5, "embedding_weight": 0, "return_content": false}'
check "embedding_weight 0: the BM25 order" test "$(ids "$OUT")" = "$bm25_only"
check "(without embedding ranks)" sh -c '[ -s "$0" ] && ! grep -q "\"embedding_rank\":[0-9]" "$0"' "$OUT"
cn run hybrid_search --repo "$repo" --cache-dir "$cache" --args '{"query": "tax", "bm25_weight": 0, "embedding_weight": 0}'
check "both weights 0 is refused" sh -c '[ '"$rc"' -eq 1 ] && grep -q "both 0" "$0"' "$ERR"
cn run hybrid_search --repo "$repo" --cache-dir "$cache" --args '{"query": "invoice tax refund", "filter_test": true, "names_only": true}'
check "hybrid filters apply to both retrievers" sh -c '[ -s "$0" ] && ! grep -q "tests/" "$0"' "$OUT"

# ---- incremental rebuild ---------------------------------------------------------
sleep 1
cat >> "$repo/net/http_client.py" <<'PY'


def close_socket(sock):
    """Close the socket connection and forget the remote host."""
    sock.shutdown()
    sock.close()
PY
cn compile "$repo" --cache-dir "$cache" --index bm25,graph,vector --embedder-config '{"dim": 8}' --json
check "incremental compile with vectors exits 0 and parses one file" sh -c '[ '"$rc"' -eq 0 ] && grep -q "\"parsed\": 1," "$0"' "$OUT"
check "embed-local is refitted: every node embedded again" sh -c 'sed -n "/\"vector\": {/,/}/p" "$0" | grep -q "\"reused\": 0,"' "$OUT"
es '{"query": "close socket shutdown", "top_k": 1, "names_only": true}'
check "the new function is in the vector index" test "$(first_name)" = "net/http_client.py:close_socket"
inc=$cache/$(readlink "$cache/current")
rm -rf "$TMPBASE/inc" && cp -R "$inc/vectors" "$TMPBASE/inc"
cn compile "$repo" --cache-dir "$cache" --index bm25,graph,vector --embedder-config '{"dim": 8}' --rebuild --quiet
full=$cache/$(readlink "$cache/current")
check "incremental embedder.bin equals the full rebuild's" cmp -s "$TMPBASE/inc/embedder.bin" "$full/vectors/embedder.bin"
check "incremental store files equal the full rebuild's" diff -r "$TMPBASE/inc/store" "$full/vectors/store"
check "vectors.json equal but for the build time" sh -c '[ "$(grep -v build_seconds "$0")" = "$(grep -v build_seconds "$1")" ]' "$TMPBASE/inc/vectors.json" "$full/vectors/vectors.json"
cn compile "$repo" --cache-dir "$cache" --quiet
check "a plain compile keeps the recorded vector index: same embedder, its configuration, same store" sh -c '[ '"$rc"' -eq 0 ] && grep -q "\"embedder\": \"embed-local\"" "$0" && grep -q "\"dim\": 8" "$0" && grep -q "\"store\": \"vec-flat\"" "$0"' "$cache/current/vectors/vectors.json"
es '{"query": "invoice tax", "top_k": 1, "names_only": true}'
check "and embedding_search still answers from it" test "$rc:$(first_name)" = "0:shop/pricing.py:apply_tax"
cn compile "$repo" --cache-dir "$cache" --index bm25,graph --quiet
cn run embedding_search --repo "$repo" --cache-dir "$cache" --args '{"query": "invoice tax"}'
check "a compile with --index bm25,graph drops the vectors" sh -c '[ '"$rc"' -eq 1 ] && grep -q "index vector" "$0"' "$ERR"

# ---- int8 vectors ----------------------------------------------------------------
cn compile "$repo" --cache-dir "$TMPBASE/c8" --index bm25,graph,vector --embedder-config '{"dim": 8}' --vector-precision int8 --quiet
check "--vector-precision int8 compiles" rc_is 0
g8=$TMPBASE/c8/$(readlink "$TMPBASE/c8/current")
check "the precision is passed to the store and recorded" sh -c 'sed -n "/\"store_config\"/,/}/p" "$0" | grep -q "\"precision\": \"int8\""' "$g8/vectors/vectors.json"
cn run embedding_search --repo "$repo" --cache-dir "$TMPBASE/c8" --args '{"query": "invoice tax", "top_k": 1, "names_only": true}'
check "int8 vectors find the same answer" test "$(first_name)" = "shop/pricing.py:apply_tax"
cn compile "$repo" --cache-dir "$TMPBASE/c8" --index vector --vector-precision f64
check "an unknown precision is a usage error" sh -c '[ '"$rc"' -eq 2 ] && grep -q "f32, f16 or int8" "$0"' "$ERR"

# ---- embed-openai against the loopback server ---------------------------------------
start_server
ocache=$TMPBASE/ocache
ocfg="{\"base_url\": \"$URL\", \"model\": \"fake-embed\", \"batch_size\": 2, \"api_key\": \"sk-test-secret-42\"}"
cn compile "$repo" --cache-dir "$ocache" --index bm25,graph,vector --embedder embed-openai --embedder-config "$ocfg" --json
check "compile with embed-openai exits 0" rc_is 0
check "model openai/fake-embed, 8 dimensions" sh -c 'sed -n "/\"vector\": {/,/}/p" "$0" | grep -q "\"model\": \"openai/fake-embed\"" && sed -n "/\"vector\": {/,/}/p" "$0" | grep -q "\"dim\": 8,"' "$OUT"
onodes=$(sed -n '/"nodes": {/,/}/s/.*"count": \([0-9]*\).*/\1/p' "$OUT")
# The first text goes alone (it tells the dimension), the rest by twos.
check "texts sent in batches of batch_size: 1 + ($onodes - 1) / 2 rounded up requests" test "$(inputs_per_request | wc -l)" -eq $((1 + onodes / 2))
check "no request holds more than 2 texts" test "$(inputs_per_request | sort -n | tail -n 1)" -le 2
check "all $onodes texts were sent, each once" test "$(inputs_per_request | awk '{ s += $1 } END { print s }')" -eq "$onodes"
check "the API key reached the server" sh -c 'grep -q "\"authorization\":\"Bearer sk-test-secret-42\"" "$0"' "$LOG"
check "and is written nowhere in the index" sh -c '! grep -r -q "sk-test-secret" "$0"' "$ocache"
og=$ocache/$(readlink "$ocache/current")
check "an embedder without learned state keeps a reuse file and no state" sh -c 'test -s "$0/vectors/reuse.bin" && test ! -e "$0/vectors/embedder.bin"' "$og"
cn run embedding_search --repo "$repo" --cache-dir "$ocache" --args '{"query": "rotate image degrees", "top_k": 1, "names_only": true}'
check "embedding_search embeds the query through the endpoint" test "$(first_name)" = "media/thumbnails.py:rotate_image"
check "(one request with the query as its only input)" test "$(grep -c -F '"input":["rotate image degrees"]' "$LOG")" -eq 1
sleep 1
printf '\n\ndef flip_image(image):\n    """Mirror an image left to right."""\n    return image.flip()\n' >> "$repo/media/thumbnails.py"
: > "$LOG"
cn compile "$repo" --cache-dir "$ocache" --index bm25,graph,vector --embedder embed-openai --embedder-config "$ocfg" --json
check "re-compile after a one-file edit exits 0" rc_is 0
check "only the changed texts were embedded: two of them" test "$(inputs_per_request | awk '{ s += $1 } END { print s }')" -eq 2
check "the edited file's text" test "$(grep -c -F '"input":["\"\"\"Image thumbnails.' "$LOG")" -eq 1
check "and the new function's" test "$(grep -c -F '"input":["def flip_image(image):' "$LOG")" -eq 1
check "the manifest counts 2 embedded, the rest reused" sh -c 'sed -n "/\"vector\": {/,/}/p" "$0" | grep -q "\"embedded\": 2," && sed -n "/\"vector\": {/,/}/p" "$0" | grep -q "\"reused\": $(($1 - 1)),"' "$OUT" "$onodes"
cn run embedding_search --repo "$repo" --cache-dir "$ocache" --args '{"query": "flip mirror image", "top_k": 1, "names_only": true}'
check "the re-embedded function is found" test "$(first_name)" = "media/thumbnails.py:flip_image"
cn status "$repo" --cache-dir "$ocache"
check "status names the openai model" out_has "vectors: openai/fake-embed"
# Longer vectors ("dimensions", which the server honours) show what int8 saves.
for p in f32 int8; do
  cn compile "$repo" --cache-dir "$TMPBASE/o$p" --index vector --embedder embed-openai --vector-precision $p \
    --embedder-config "{\"base_url\": \"$URL\", \"model\": \"fake-embed\", \"dimensions\": 64}" --quiet
done
check "64 dimensions asked for and recorded" sh -c 'grep -q "\"model_id\": \"openai/fake-embed@64\"" "$0"/current/vectors/vectors.json && grep -q "\"dim\": 64," "$0"/current/vectors/vectors.json' "$TMPBASE/oint8"
check "int8 vectors take less than half the room of f32 ones" sh -c '[ $(($(cat "$0"/current/vectors/store/* | wc -c) * 2)) -lt $(cat "$1"/current/vectors/store/* | wc -c) ]' "$TMPBASE/oint8" "$TMPBASE/of32"
for p in f32 int8; do
  cn run embedding_search --repo "$repo" --cache-dir "$TMPBASE/o$p" --args '{"query": "socket connection remote host", "top_k": 3, "names_only": true}'
  cp "$OUT" "$TMPBASE/answer.$p"
done
check "and rank the same nodes" sh -c '[ -s "$0" ] && cmp -s "$0" "$1"' "$TMPBASE/answer.f32" "$TMPBASE/answer.int8"
stop_server
cn run embedding_search --repo "$repo" --cache-dir "$ocache" --args '{"query": "flip mirror image"}'
check "with the endpoint down the query fails, saying which embedder" sh -c '[ '"$rc"' -eq 1 ] && grep -q "embedding the query with embedder .embed-openai." "$0"' "$ERR"

# ---- errors ----------------------------------------------------------------------------
cn compile "$repo" --cache-dir "$TMPBASE/cx" --index bm25,vector --embedder embed-nope
check "an unknown embedder fails before parsing, listing the installed ones" sh -c '[ '"$rc"' -eq 1 ] && grep -q "embed-nope: no embedder backend of that name is installed (known: embed-local, embed-openai" "$0" && [ ! -e "$1/current" ]' "$ERR" "$TMPBASE/cx"
cn compile "$repo" --cache-dir "$TMPBASE/cx" --index vector --vector-store vec-nope
check "an unknown vector store fails too" err_has "no vector-store backend of that name is installed"
cn compile "$repo" --cache-dir "$TMPBASE/cx" --index vector --embedder-config '{"dim": 8'
check "a malformed --embedder-config is refused" err_has "--embedder-config is not valid JSON"
cn compile "$repo" --cache-dir "$TMPBASE/cx" --index vector --embedder-config '{"dimm": 8}'
check "an option the embedder does not know is refused by it" sh -c '[ '"$rc"' -eq 1 ] && grep -q "dimm" "$0"' "$ERR"
cn compile "$repo" --cache-dir "$TMPBASE/cx" --embedder embed-local
check "--embedder without --index vector is a usage error" sh -c '[ '"$rc"' -eq 2 ] && grep -q "add --index bm25,graph,vector" "$0"' "$ERR"
cn compile "$repo" --cache-dir "$TMPBASE/cx" --index bm25,vectors
check "an unknown index is a usage error listing the valid ones" sh -c '[ '"$rc"' -eq 2 ] && grep -q "unknown index .vectors. (valid: nodes, bm25, graph, vector)" "$0"' "$ERR"

cn compile "$repo" --cache-dir "$cache" --index bm25,graph,vector --embedder-config '{"dim": 8}' --quiet
cur=$cache/$(readlink "$cache/current")
cp "$cur/vectors/embedder.bin" "$TMPBASE/embedder.good"
printf 'X' | dd of="$cur/vectors/embedder.bin" bs=1 seek=100 conv=notrunc 2>/dev/null
es '{"query": "invoice tax"}'
check "a damaged embedder state: a clear error naming the file" sh -c '[ '"$rc"' -eq 1 ] && grep -q "embedder.bin: corrupt index (checksum mismatch)" "$0"' "$ERR"
check "... and saying how to rebuild" err_has "--index bm25,graph,vector --rebuild"
cp "$TMPBASE/embedder.good" "$cur/vectors/embedder.bin"
store_file=$(ls "$cur/vectors/store" | head -n 1)
printf 'X' | dd of="$cur/vectors/store/$store_file" bs=1 seek=70 conv=notrunc 2>/dev/null
es '{"query": "invoice tax"}'
check "a damaged store file: a clear error naming it" sh -c '[ '"$rc"' -eq 1 ] && grep -q "$1" "$0"' "$ERR" "$store_file"
sed -i 's/"embedder": "embed-local"/"embedder": "embed-gone"/' "$cur/vectors/vectors.json"
cn status "$repo" --cache-dir "$cache"
check "status: stale when the embedder is not installed" sh -c '[ '"$rc"' -eq 3 ] && grep -q "the embedder .embed-gone. that built the vector index is not installed" "$0"' "$OUT"
es '{"query": "invoice tax"}'
check "and embedding_search says which embedder is missing" sh -c '[ '"$rc"' -eq 1 ] && grep -q "no embedder backend .embed-gone. is installed" "$0"' "$ERR"
cn run bm25_search --repo "$repo" --cache-dir "$cache" --args '{"query": "invoice tax", "top_k": 1, "names_only": true}'
check "other skills are not affected by a broken vector index" test "$rc:$(first_name)" = "0:shop/pricing.py:apply_tax"

plain=$TMPBASE/plain
cn compile "$repo" --cache-dir "$plain" --quiet
cn run embedding_search --repo "$repo" --cache-dir "$plain" --args '{"query": "invoice tax"}'
check "embedding_search on a repository compiled without vectors says --index vector" sh -c '[ '"$rc"' -eq 1 ] && grep -q "needs a vector index (run .codenib compile REPO --index vector.)" "$0"' "$ERR"
cn run hybrid_search --repo "$repo" --cache-dir "$plain" --args '{"query": "invoice tax"}'
check "hybrid_search too" sh -c '[ '"$rc"' -eq 1 ] && grep -q "index vector" "$0"' "$ERR"
cn status "$repo" --cache-dir "$plain"
check "status says there are no vectors and how to build them" out_has "vectors: none (compile with --index bm25,graph,vector to build them)"

# A repository of one small file: too few documents for embed-local's
# default document-frequency thresholds, which then keep every term.
tiny=$TMPBASE/tiny
mkdir -p "$tiny"
printf 'def add_numbers(a, b):\n    return a + b\n' > "$tiny/calc.py"
cn compile "$tiny" --cache-dir "$TMPBASE/tinycache" --index bm25,vector --quiet
check "a one-file repository compiles with vectors" rc_is 0
cn run embedding_search --repo "$tiny" --cache-dir "$TMPBASE/tinycache" --args '{"query": "add numbers", "top_k": 1, "kinds": ["function"]}'
check "and embedding_search finds its function" out_has '"node_name":"calc.py:add_numbers"'

done_testing
