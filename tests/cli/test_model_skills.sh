#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The model-backed skills -- llm_rerank, crossencoder_rerank and
# extract_keywords -- against the loopback OpenAI-compatible server
# tests/llm/fake_openai: the exact requests they send (read back from the
# server's log), how they read scripted answers, and their errors.
. "$CN_SRCDIR/tests/cli/lib.sh"
unset CODENIB_SKILLS_PATH CODENIB_MODEL CODENIB_RERANK_MODEL CODENIB_BASE_URL CODENIB_RERANK_BASE_URL
unset OPENAI_BASE_URL OPENAI_API_KEY CODENIB_API_KEY

if [ ! -f "$CN_BUILDDIR/_plugins/lang-python/lang_python.so" ]; then
  echo "1..0 # SKIP the python backend was not built (run scripts/fetch-grammars.sh, then configure)"
  exit 0
fi

# One server at a time; the EXIT trap stops it and still removes $TMPBASE
# (lib.sh's own trap is replaced here, so it is repeated).
server_pid=
n_server=0
stop_server() {
  if [ -n "$server_pid" ]; then
    kill "$server_pid" 2>/dev/null
    wait "$server_pid" 2>/dev/null
    server_pid=
  fi
}
trap 'stop_server; rm -rf "$TMPBASE"' EXIT

# start_server SCRIPT: a fresh server answering SCRIPT (JSON Lines, may be
# empty); its log is $LOG and its base URL $URL.
start_server() {
  stop_server
  n_server=$((n_server + 1))
  LOG=$TMPBASE/server$n_server.log
  pf=$TMPBASE/server$n_server.port
  "$CN_FAKE_OPENAI" --port-file "$pf" --script "$1" --log "$LOG" &
  server_pid=$!
  # The port file appears (atomically) once the server accepts
  # connections; give up if the server died instead.
  while [ ! -s "$pf" ]; do
    kill -0 "$server_pid" 2>/dev/null || { echo "Bail out! fake_openai did not start"; exit 1; }
    sleep 0.05
  done
  URL=http://127.0.0.1:$(cat "$pf")/v1
  : > "$LOG"   # exists before the first request
}

script() { cat > "$TMPBASE/script.jsonl"; }

out_is() { [ "$(cat "$OUT")" = "$1" ]; }
# Requests in the log for an endpoint (chat, rerank).
requests() { grep -c -F "\"endpoint\":\"$1\"" "$LOG"; }
requests_are() { [ "$(requests "$1")" -eq "$2" ]; }
# req_has N TEXT: the N-th request logged holds TEXT (JSON-escaped, so a
# newline inside a message is written \n).
req_has() { sed -n "$1p" "$LOG" | grep -q -F -- "$2"; }
req_lacks() { ! req_has "$@"; }
no_violations() { [ -s "$LOG" ] && ! grep -v -F '"violations":[]' "$LOG" | grep -q .; }
statuses_are() { [ "$(sed 's/.*"status":\([0-9]*\).*/\1/' "$LOG" | tr '\n' ' ')" = "$1" ]; }
# ids_are "3 4 5": the node ids of the result, in order.
ids_are() { [ "$(grep -o '"node_id":[0-9]*' "$OUT" | cut -d: -f2 | tr '\n' ' ')" = "$1 " ]; }
# kept_order N: exit 0 with N results, each saying the rerank failed.
kept_order() { [ "$rc" -eq 0 ] && [ "$(grep -o '"rerank_error":' "$OUT" | wc -l)" -eq "$1" ]; }

# ---- the repository ---------------------------------------------------------
repo=$TMPBASE/repo
cache=$TMPBASE/cache
mkdir -p "$repo/app"
cat > "$repo/app/cli.py" <<'PY'
def main(argv):
    """Parse the command line and start the server."""
    return 0
PY
cat > "$repo/app/pool.py" <<'PY'
class Pool:
    def acquire(self, timeout):
        """Take a connection from the pool, waiting up to timeout."""
        return self._wait(timeout)

    def release(self, conn):
        """Give a connection back to the pool."""
        self._free.append(conn)


def make_pool(size):
    """Create a pool of the given size."""
    return Pool()
PY
cn compile "$repo" --cache-dir "$cache"
check "the repository compiles" rc_is 0
# Node ids (checked by the skills against node_name): 0 app/cli.py,
# 1 main, 2 app/pool.py, 3 Pool, 4 Pool.acquire, 5 Pool.release, 6 make_pool.
run() { skill=$1; shift; cn run "$skill" --repo "$repo" --cache-dir "$cache" "$@"; }
chat() { run "$@" --model m-chat --base-url "$URL"; }
three='[{"node_id":3,"node_name":"app/pool.py:Pool"},{"node_id":4,"node_name":"app/pool.py:Pool.acquire"},{"node_id":5,"node_name":"app/pool.py:Pool.release"}]'
POOL='{"node_name":"app/pool.py:Pool","type":"class","file":"app/pool.py","start_line":1,"node_id":3,"end_line":8'
ACQ='{"node_name":"app/pool.py:Pool.acquire","type":"method","file":"app/pool.py","start_line":2,"node_id":4,"end_line":4'
REL='{"node_name":"app/pool.py:Pool.release","type":"method","file":"app/pool.py","start_line":6,"node_id":5,"end_line":8'

# ---- llm_rerank, structured -------------------------------------------------
script <<'EOF'
{"endpoint":"chat","body":{"role":"assistant","content":"{\"ranking\":[{\"index\":3,\"score\":0.75},{\"index\":1,\"score\":0.5},{\"index\":2,\"score\":0.25}]}"}}
EOF
start_server "$TMPBASE/script.jsonl"
chat llm_rerank --args "{\"query\":\"connection goes back to the pool\",\"nodes\":$three}"
check "llm_rerank structured: runs" rc_is 0
check "the model's order and scores, lines 1-based" out_is "[$REL,\"score\":0.75},$POOL,\"score\":0.5},$ACQ,\"score\":0.25}]"
check "one chat request" requests_are chat 1
check "the request is a protocol-clean chat completion" no_violations
check "with the configured model" req_has 1 '"model":"m-chat"'
check "temperature 0" req_has 1 '"temperature":0'
check "response_format is a json_schema" req_has 1 '"response_format":{"type":"json_schema","json_schema":{"name":"passage_ranking","strict":true'
check "the schema asks for ranking[{index, score}]" req_has 1 '"required":["index","score"]'
check "a system message first" req_has 1 '"messages":[{"role":"system","content":"You help find where'
check "the query is in the user message" req_has 1 '{"role":"user","content":"Request:\nconnection goes back to the pool\n'
check "passage 1 is headed with file, kind, name and lines" req_has 1 '[1] file app/pool.py, class Pool, lines 1-8\nclass Pool:\n'
check "passage 2" req_has 1 '[2] file app/pool.py, method Pool.acquire, lines 2-4\n    def acquire(self, timeout):'
check "passage 3" req_has 1 '[3] file app/pool.py, method Pool.release, lines 6-8\n    def release(self, conn):'
check "no passage 4" req_lacks 1 '[4]'

# top_k, return_content, content given by the caller, max_chars_per_node
script <<'EOF'
{"endpoint":"chat","body":{"role":"assistant","content":"```json\n{\"ranking\":[{\"index\":2,\"score\":1},{\"index\":1,\"score\":0}]}\n```"}}
EOF
start_server "$TMPBASE/script.jsonl"
chat llm_rerank --args '{"query":"q","nodes":[{"node_id":1,"content":"def main(): pass"},{"node_id":6,"content":"ABCDEFGHIJ"}],"top_k":1,"return_content":true,"max_chars_per_node":4}'
check "a fenced JSON answer is read; top_k 1 keeps the best" out_is '[{"node_name":"app/pool.py:make_pool","type":"function","file":"app/pool.py","start_line":11,"node_id":6,"end_line":13,"score":1.0,"content":"ABCDEFGHIJ"}]'
check "the caller's content is what the model reads, cut to 4 characters" req_has 1 '[2] file app/pool.py, function make_pool, lines 11-13\nABCD\n[... cut]'
check "the whole given content is not sent" req_lacks 1 'ABCDE'
check "passage 1 is the given content, cut too" req_has 1 '[1] file app/cli.py, function main, lines 1-3\ndef\n[... cut]'

# ---- llm_rerank, rankgpt ----------------------------------------------------
script <<'EOF'
{"endpoint":"chat","body":{"role":"assistant","content":"Ranking: [3] > [3] > [7] > [0] > [1]"}}
EOF
start_server "$TMPBASE/script.jsonl"
chat llm_rerank --args "{\"query\":\"give the connection back\",\"nodes\":$three,\"format\":\"rankgpt\"}"
check "rankgpt: runs" rc_is 0
check "repeats and ids out of range ignored, the missing one appended; scores from rank" \
  out_is "[$REL,\"score\":1.0},$POOL,\"score\":0.66666666666666663},$ACQ,\"score\":0.33333333333333331}]"
check "no response_format with rankgpt" req_lacks 1 'response_format'
check "the rankgpt instruction asks for [2] > [1] > [3]" req_has 1 'for example [2] > [1] > [3]'
check "rankgpt request is protocol-clean" no_violations

script <<'EOF'
{"endpoint":"chat","body":{"role":"assistant","content":"3, then 1"}}
{"endpoint":"chat","body":{"role":"assistant","content":"[1]"}}
EOF
start_server "$TMPBASE/script.jsonl"
chat llm_rerank --args "{\"query\":\"pool\",\"nodes\":$three,\"format\":\"rankgpt\"}"
check "rankgpt: bare numbers count when no [n] is written" \
  out_is "[$REL,\"score\":1.0},$POOL,\"score\":0.66666666666666663},$ACQ,\"score\":0.33333333333333331}]"
chat llm_rerank --args '{"query":"pool","format":"rankgpt","max_chars_per_node":2,"nodes":[{"node_id":1,"content":" \n\t "},{"node_id":6,"content":"ééé"}]}'
check "a node without content is left out" out_is '[{"node_name":"app/pool.py:make_pool","type":"function","file":"app/pool.py","start_line":11,"node_id":6,"end_line":13,"score":1.0}]'
check "and not shown to the model" req_has 2 'There is 1 passage.\n\n[1] file app/pool.py, function make_pool'
check "a cut counts characters, not bytes" req_has 2 'make_pool, lines 11-13\néé\n[... cut]'

# ---- sliding windows ----------------------------------------------------------
script <<'EOF'
{"endpoint":"chat","body":{"role":"assistant","content":"{\"ranking\":[{\"index\":1,\"score\":0.25},{\"index\":2,\"score\":0.75}]}"}}
{"endpoint":"chat","body":{"role":"assistant","content":"{\"ranking\":[{\"index\":2,\"score\":1.0},{\"index\":1,\"score\":0.25}]}"}}
EOF
start_server "$TMPBASE/script.jsonl"
chat llm_rerank --args "{\"query\":\"pool\",\"nodes\":$three,\"window_size\":2,\"window_step\":1}"
check "windows: runs" rc_is 0
check "window_size 2, step 1 over 3 nodes: two full windows" requests_are chat 2
check "window 1 holds Pool and acquire" sh -c 'sed -n 1p "$0" | grep -q -F "[1] file app/pool.py, class Pool" && sed -n 1p "$0" | grep -q -F "[2] file app/pool.py, method Pool.acquire" && ! sed -n 1p "$0" | grep -q -F "[3]"' "$LOG"
check "window 2 holds acquire and release" sh -c 'sed -n 2p "$0" | grep -q -F "[1] file app/pool.py, method Pool.acquire" && sed -n 2p "$0" | grep -q -F "[2] file app/pool.py, method Pool.release"' "$LOG"
check "scores averaged over windows: release 1, acquire (0.75+0.25)/2, Pool 0.25" \
  out_is "[$REL,\"score\":1.0},$ACQ,\"score\":0.5},$POOL,\"score\":0.25}]"

script <<'EOF'
{"endpoint":"chat","body":{"role":"assistant","content":"[2] > [1]"}}
{"endpoint":"chat","body":{"role":"assistant","content":"[1] > [2]"}}
EOF
start_server "$TMPBASE/script.jsonl"
chat llm_rerank --args "{\"query\":\"pool\",\"nodes\":$three,\"window_size\":2,\"format\":\"rankgpt\"}"
check "window_size 2 without a step over 3 nodes: windows at 0 and at the tail" requests_are chat 2
check "rankgpt windows: acquire 1, then Pool and release tied at 0.5 in their original order" \
  out_is "[$ACQ,\"score\":1.0},$POOL,\"score\":0.5},$REL,\"score\":0.5}]"

# ---- BM25 candidates ----------------------------------------------------------
script <<'EOF'
{"endpoint":"chat","body":{"role":"assistant","content":"[2] > [1]"}}
EOF
start_server "$TMPBASE/script.jsonl"
run bm25_search --args '{"query":"connection pool timeout","top_k":2,"names_only":true}'
check "bm25_search: acquire then release for the query" out_is '[{"node_name":"app/pool.py:Pool.acquire","type":"method","file":"app/pool.py","start_line":2},{"node_name":"app/pool.py:Pool.release","type":"method","file":"app/pool.py","start_line":6}]'
chat llm_rerank --args '{"query":"connection pool timeout","candidates":2,"format":"rankgpt"}'
check "without nodes: the BM25 top 2 are reranked" out_is "[$REL,\"score\":1.0},$ACQ,\"score\":0.5}]"
check "they are numbered in BM25 order" req_has 1 'There are 2 passages.\n\n[1] file app/pool.py, method Pool.acquire'

start_server /dev/null
chat llm_rerank --args '{"query":"   ","nodes":[{"node_id":3}]}'
check "a blank query gives [] ..." out_is '[]'
check "... without asking the model" requests_are chat 0
chat llm_rerank --args '{"query":"pool","nodes":[]}'
check "an empty node list gives [] without a request" sh -c '[ "$(cat "$0")" = "[]" ] && [ ! -s "$1" ]' "$OUT" "$LOG"
chat llm_rerank --args '{"query":"pool","nodes":[{"node_name":"app/pool.py:Pool"}]}'
check "a node without node_id: exit 1" rc_is 1
check "says which item and what it needs" err_has "argument 'nodes': item 0 has no integer node_id"
chat llm_rerank --args '{"query":"pool","nodes":[{"node_id":4,"node_name":"app/pool.py:Pool.release"}]}'
check "a node_id that names another node is refused" err_has "item 0 names 'app/pool.py:Pool.release' but node_id 4 is 'app/pool.py:Pool.acquire'"
chat llm_rerank --args '{"query":"pool","nodes":[{"node_id":999}]}'
check "a node_id out of the index is refused" err_has "node_id 999 is not in this repository's index"

script <<'EOF'
{"endpoint":"chat","body":{"role":"assistant","content":"[1]"}}
EOF
start_server "$TMPBASE/script.jsonl"
export CODENIB_MODEL=m-env CODENIB_BASE_URL="$URL"
run llm_rerank --args '{"query":"pool","format":"rankgpt","nodes":[{"node_id":3}]}'
unset CODENIB_MODEL CODENIB_BASE_URL
check "the chat model can come from CODENIB_MODEL and CODENIB_BASE_URL" sh -c '[ '"$rc"' -eq 0 ] && grep -q -F "\"model\":\"m-env\"" "$0"' "$LOG"

# ---- errors ------------------------------------------------------------------
run llm_rerank --args '{"query":"pool"}'
check "llm_rerank without a model: exit 1" rc_is 1
check "the error says to set --model" err_has "skill 'llm_rerank' needs a chat model (pass --model M"
cn run extract_keywords --args '{"problem_statement":"x"}'
check "extract_keywords without a model: exit 1, says --model" sh -c '[ '"$rc"' -eq 1 ] && grep -q -F -- "a chat model (pass --model M" "$0"' "$ERR"
run crossencoder_rerank --args '{"query":"pool"}'
check "crossencoder_rerank without a rerank endpoint says --rerank-model" err_has "needs a rerank endpoint (pass --rerank-model M"

# A rerank that fails -- an answer that is no ranking, a refusal, garbage
# from the server -- keeps the candidates in their first-stage order, each
# saying why it was not reranked, and warns on standard error: the list is
# still worth having (the reference keeps it too).
script <<'EOF'
{"endpoint":"chat","body":{"role":"assistant","content":"Passage two looks best."}}
EOF
start_server "$TMPBASE/script.jsonl"
chat llm_rerank --args "{\"query\":\"pool\",\"nodes\":$three}"
check "an answer that is no ranking: the first-stage order is kept (exit 0)" kept_order 3
check "in the given order" ids_are "3 4 5"
check "without a score the caller did not give" sh -c '! grep -q "\"score\"" "$0"' "$OUT"
check "each result says why" out_has '"rerank_error":"the chat model'"'"'s answer is not a ranking object {\"ranking\":[{\"index\",\"score\"}]}: \"Passage two looks best.\""'
check "the failure is a warning on standard error" err_has "warning: the rerank failed, so the 3 candidates keep the first-stage order: the chat model's answer is not a ranking object"

script <<'EOF'
{"endpoint":"chat","body":{"role":"assistant","content":"{\"ranking\":[{\"index\":0,\"score\":1},{\"index\":2,\"score\":\"high\"}]}"}}
{"endpoint":"chat","body":{"role":"assistant","content":null,"refusal":"I will not rank code."}}
EOF
start_server "$TMPBASE/script.jsonl"
chat llm_rerank --args '{"query":"pool","window_size":2,"top_k":2,"nodes":[{"node_id":5,"score":7.5},{"node_id":3,"score":2},{"node_id":4,"score":0.5}]}'
check "a ranking without one usable entry: the first-stage order, cut to top_k" kept_order 2
check "the caller's order and scores" sh -c 'grep -q -F "\"node_id\":5,\"end_line\":8,\"score\":7.5," "$0" && grep -q -F "\"node_id\":3,\"end_line\":8,\"score\":2.0," "$0"' "$OUT"
check "the reason names the window" out_has 'answer for window 1 of 2 (candidates 1-2) scores no passage: it has no entry with a passage number in range and a numeric score'
check "only the first window was asked" requests_are chat 1
chat llm_rerank --args "{\"query\":\"pool\",\"nodes\":$three}"
check "a refusal: the order kept, the refusal reported" sh -c '[ '"$rc"' -eq 0 ] && grep -q -F "the chat model refused to rank: I will not rank code." "$0"' "$OUT"

script <<'EOF'
{"endpoint":"chat","body":{"role":"assistant","content":"I cannot rank these."}}
EOF
start_server "$TMPBASE/script.jsonl"
chat llm_rerank --args '{"query":"connection pool timeout","candidates":2,"format":"rankgpt"}'
check "a rankgpt answer naming no passage: the BM25 order kept" kept_order 2
check "acquire then release, as bm25_search ranks them" ids_are "4 5"
check "with their BM25 scores" sh -c '[ "$(grep -o "\"score\":[0-9.]*" "$0" | wc -l)" -eq 2 ]' "$OUT"
check "and the reason" out_has 'is not a RankGPT ranking such as [2] > [1] > [3]: \"I cannot rank these.\"'

script <<'EOF'
{"endpoint":"chat","status":200,"raw":"<html><body>502 Bad Gateway</body></html>","headers":{"Content-Type":"text/html"}}
EOF
start_server "$TMPBASE/script.jsonl"
chat llm_rerank --args "{\"query\":\"pool\",\"nodes\":$three}"
check "a server answering garbage: the order kept, no crash" kept_order 3
check "the reason names the endpoint and the problem" sh -c 'grep -q -F "the chat/completions response from http://127.0.0.1:" "$0" && grep -q -F "is not valid JSON" "$0"' "$OUT"
check "the warning names the skill" err_has "[llm_rerank] warning: the rerank failed"

script <<'EOF'
{"endpoint":"chat","status":500,"body":{"error":{"message":"try again","type":"server_error"}}}
{"endpoint":"chat","body":{"role":"assistant","content":"{\"ranking\":[{\"index\":1,\"score\":0.5},{\"index\":2,\"score\":0.25},{\"index\":3,\"score\":0}]}"}}
EOF
start_server "$TMPBASE/script.jsonl"
chat llm_rerank --args "{\"query\":\"pool\",\"nodes\":$three}"
check "a 500 then a good answer: the skill succeeds (the client retried)" out_is "[$POOL,\"score\":0.5},$ACQ,\"score\":0.25},$REL,\"score\":0.0}]"
check "two requests: 500 then 200" statuses_are "500 200 "

# ---- crossencoder_rerank -------------------------------------------------------
start_server /dev/null
rr() { run crossencoder_rerank --rerank-model m-rerank --rerank-base-url "$URL" "$@"; }
rr --args "{\"query\":\"take connection timeout\",\"nodes\":$three}"
check "crossencoder_rerank: runs" rc_is 0
# The server scores the share of the query's words in each document:
# acquire has all 3, Pool all 3 (it contains acquire), release 1 of 3.
check "ordered by the endpoint's score (ties in the given order)" \
  out_is "[$POOL,\"score\":1.0},$ACQ,\"score\":1.0},$REL,\"score\":0.33333333333333331}]"
check "one rerank request" requests_are rerank 1
check "protocol-clean" no_violations
check "the request carries the model and the query" req_has 1 '"model":"m-rerank","query":"take connection timeout"'
check "each document is the qualified name, then the source" req_has 1 '"documents":["app/pool.py:Pool\nclass Pool:\n    def acquire(self, timeout):'
check "three documents in the given order" sh -c 'sed -n 1p "$0" | grep -o "\"documents\":\[[^]]*\]" | grep -q -F "\"app/pool.py:Pool\n" && sed -n 1p "$0" | grep -o "\"documents\":\[[^]]*\]" | grep -o "\",\"app/pool.py:[A-Za-z.]*" | tr "\n" " " | grep -q -F "\",\"app/pool.py:Pool.acquire \",\"app/pool.py:Pool.release "' "$LOG"

rr --args '{"query":"give back the conn","candidates":3,"top_k":2,"return_content":true,"max_chars_per_node":30}'
# Cut to 30 characters, release's document keeps "conn" but loses "give"
# and "back": 1 of the 4 query words.
check "BM25 candidates, cut documents, top_k and the full content" \
  out_is "[$REL,\"score\":0.25,\"content\":\"    def release(self, conn):\\n        \\\"\\\"\\\"Give a connection back to the pool.\\\"\\\"\\\"\\n        self._free.append(conn)\\n\"},{\"node_name\":\"app/cli.py:main\",\"type\":\"function\",\"file\":\"app/cli.py\",\"start_line\":1,\"node_id\":1,\"end_line\":3,\"score\":0.0,\"content\":\"def main(argv):\\n    \\\"\\\"\\\"Parse the command line and start the server.\\\"\\\"\\\"\\n    return 0\\n\"}]"
check "the documents were cut" req_has 2 '"app/pool.py:Pool.release\n    def release(self, conn):\n ","app/cli.py:main\ndef main(argv):\n    \"\"\"Parse t","app/pool.py:make_pool\n'
check "nothing past the cut was sent" req_lacks 2 'Give a connection'
script <<'EOF'
{"endpoint":"rerank","body":{"results":[{"index":1,"relevance_score":0.5},{"index":0,"relevance_score":0.25}]}}
EOF
start_server "$TMPBASE/script.jsonl"
rr --args "{\"query\":\"pool\",\"nodes\":$three}"
check "a document the endpoint left out is dropped" out_is "[$ACQ,\"score\":0.5},$POOL,\"score\":0.25}]"
script <<'EOF'
{"endpoint":"rerank","status":200,"raw":"<html>rerank is down</html>","headers":{"Content-Type":"text/html"}}
EOF
start_server "$TMPBASE/script.jsonl"
rr --args '{"query":"connection pool timeout","candidates":2}'
check "a rerank endpoint answering garbage: the BM25 order kept (exit 0)" kept_order 2
check "acquire then release" ids_are "4 5"
check "the reason names the rerank endpoint" sh -c 'grep -q -F "\"rerank_error\":\"the rerank response from http://127.0.0.1:" "$0" && grep -q -F "is not valid JSON" "$0"' "$OUT"
check "and a warning says so" err_has "[crossencoder_rerank] warning: the rerank failed, so the 2 candidates keep the first-stage order"
rr --args '{"query":"pool","nodes":[{"node_id":999}]}'
check "a bad argument is still an error, not a fallback" sh -c '[ '"$rc"' -eq 1 ] && grep -q "node_id 999 is not in this repository" "$0"' "$ERR"

# ---- extract_keywords ----------------------------------------------------------
script <<'EOF'
{"endpoint":"chat","body":{"role":"assistant","content":"{\"keywords\":[\"  separability_matrix \",\"`separable.py`\",\"Separability_Matrix\",\"\",42,\"   \",\"CompoundModel\",\"nested\"]}"}}
EOF
start_server "$TMPBASE/script.jsonl"
cn run extract_keywords --model m-chat --base-url "$URL" --args '{"problem_statement":"separability_matrix in astropy/modeling/separable.py is wrong for nested CompoundModels","max_keywords":3}'
check "extract_keywords: trimmed, repeats/blanks/non-strings dropped, capped at 3" out_is '{"keywords":["separability_matrix","separable.py","CompoundModel"]}'
check "one chat request, protocol-clean" sh -c '[ "$(grep -c . "$0")" -eq 1 ] && ! grep -v -F "\"violations\":[]" "$0" | grep -q .' "$LOG"
check "structured output: response_format json_schema keywords" req_has 1 '"response_format":{"type":"json_schema","json_schema":{"name":"keyword_extraction","strict":true,"schema":{"type":"object","properties":{"keywords":{"type":"array","items":{"type":"string"}'
check "temperature 0" req_has 1 '"temperature":0'
check "the statement and the cap are in the prompt" req_has 1 'Give at most 3 terms.\n\nProblem statement:\nseparability_matrix in astropy/modeling/separable.py is wrong'

script <<'EOF'
{"endpoint":"chat","body":{"role":"assistant","content":"separability_matrix, separable.py"}}
EOF
start_server "$TMPBASE/script.jsonl"
cn run extract_keywords --model m-chat --base-url "$URL" --args '{"problem_statement":"x y"}'
check "a keyword answer without structure: exit 1 with a clear error" sh -c '[ '"$rc"' -eq 1 ] && grep -q -F "the chat model'"'"'s answer is not a keyword object {\"keywords\": [...]}: \"separability_matrix, separable.py\"" "$0"' "$ERR"
cn run extract_keywords --model m-chat --base-url "$URL" --args '{"problem_statement":"  "}'
check "a blank statement gives no keywords without a request" sh -c '[ "$(cat "$0")" = "{\"keywords\":[]}" ] && [ "$(grep -c . "$1")" -eq 1 ]' "$OUT" "$LOG"
cn run extract_keywords --model m-chat --base-url "$URL" --args '{"problem_statement":"x","max_keywords":0}'
check "max_keywords 0 refused" err_has "argument 'max_keywords' must be between 1 and 200, got 0"

# libcurl is loaded on the first request: one that cannot be loaded is an
# error naming the file, not a crash; a process that makes no request
# never loads it.
CODENIB_LIBCURL=$TMPBASE/no-such-libcurl.so.4 cn run extract_keywords --model m-chat --base-url "$URL" --args '{"problem_statement":"pool size"}'
check "an unloadable libcurl: exit 1, naming the file and the fix" sh -c '[ '"$rc"' -eq 1 ] && grep -q -F "cannot load $1 (" "$0" && grep -q "install libcurl4, or point CODENIB_LIBCURL at it" "$0"' "$ERR" "$TMPBASE/no-such-libcurl.so.4"
CODENIB_LIBCURL=/bin/sh cn run extract_keywords --model m-chat --base-url "$URL" --args '{"problem_statement":"pool size"}'
check "a file that is not a library: exit 1, naming it" sh -c '[ '"$rc"' -eq 1 ] && grep -q -F "cannot load /bin/sh (" "$0"' "$ERR"
CODENIB_LIBCURL=libc.so.6 cn run extract_keywords --model m-chat --base-url "$URL" --args '{"problem_statement":"pool size"}'
check "a library without libcurl's functions: exit 1, naming the one missing" sh -c '[ '"$rc"' -eq 1 ] && grep -q -F "libc.so.6 has no curl_global_init" "$0"' "$ERR"
CODENIB_LIBCURL=$TMPBASE/no-such-libcurl.so.4 run bm25_search --args '{"query":"pool","top_k":1,"names_only":true}'
check "an offline skill does not need libcurl" sh -c '[ '"$rc"' -eq 0 ] && grep -q "app/pool.py" "$0"' "$OUT"
check "the codenib command does not link libcurl" sh -c \
  'libs=$(LD_TRACE_LOADED_OBJECTS=1 "$0" 2>/dev/null); echo "$libs" | grep -q "libc\.so" && ! echo "$libs" | grep -q libcurl' "$CODENIB"

stop_server
done_testing
