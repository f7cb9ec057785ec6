#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Model replies built to break codenib, served by the loopback server
# tests/llm/fake_openai: members of the wrong type (tool_calls null, a
# string, an object, a number; arguments that are not a string or not JSON;
# no message, no choices; content a number; usage fields of any type),
# truncated or non-JSON bodies, HTML with HTTP 200, replies too big or with
# too many values -- for chat (`query` and `run llm_rerank`), embeddings
# (`compile` with embed-openai) and rerank (`run crossencoder_rerank`).
# Each must end in a clear error that names what was wrong, or in a retried
# turn, or -- for the rerank skills -- in the first-stage order kept with
# that reason; never in a crash (an exit status of 128 or more).  Also: an agent
# run that uses up its turns says so and fails, and `--` ends the options
# of every subcommand.
. "$CN_SRCDIR/tests/hostile/lib.sh"
unset CODENIB_SKILLS_PATH CODENIB_MODEL OPENAI_BASE_URL CODENIB_BASE_URL CODENIB_API_KEY \
  OPENAI_API_KEY CODENIB_MAX_RESPONSE_MB CODENIB_RERANK_BASE_URL CODENIB_RERANK_MODEL

need_python_backend

repo=$TMPBASE/repo
cache=$TMPBASE/cache
py_repo "$repo"
cn_t 120 compile "$repo" --cache-dir "$cache" --quiet
check "the repository compiles" rc_is 0

# serve FILE: (re)starts fake_openai with FILE's replies; $URL is its base.
serve() {
  start_fake_openai "$1"
  URL=http://127.0.0.1:$port/v1
}
S=$TMPBASE/script.jsonl

ask() {
  cn_t 60 query --repo "$repo" --cache-dir "$cache" --model m-chat --base-url "$URL" --quiet "$@" \
    "where is the config file read?"
}
no_crash() { [ "$rc" -lt 128 ]; }
# failed_with TEXT: exit 1 (no crash), and standard error says TEXT.
failed_with() { [ "$rc" -eq 1 ] && err_has "$1"; }
# kept_with TEXT: a rerank skill whose model answered nonsense keeps the
# first-stage order (exit 0, each result with its rerank_error) and warns
# with TEXT on standard error.
kept_with() { [ "$rc" -eq 0 ] && grep -q -F '"rerank_error":' "$OUT" && err_has "$1"; }

READ='{"id":"c1","type":"function","function":{"name":"read","arguments":"{\"path\":\"pkg/config.py\"}"}}'
ANSWER='{"endpoint":"chat","body":{"role":"assistant","content":"Files: pkg/config.py"}}'

# ---- chat: one malformed reply each ------------------------------------------------
# Each line: description | the reply (one script line) | what stderr must say.
while IFS='|' read -r what reply says; do
  [ -n "$what" ] || continue
  printf '%s\n' "$reply" >"$S"
  serve "$S"
  ask </dev/null
  check "chat, $what: no crash" no_crash
  check "chat, $what: a clear error" failed_with "$says"
done <<'EOF'
tool_calls a string|{"endpoint":"chat","body":{"role":"assistant","content":"x","tool_calls":"read"}}|choices[0].message.tool_calls is a string; expected an array or null
tool_calls an object|{"endpoint":"chat","body":{"role":"assistant","content":"x","tool_calls":{"id":"c1"}}}|choices[0].message.tool_calls is an object; expected an array or null
tool_calls a number|{"endpoint":"chat","body":{"role":"assistant","content":"x","tool_calls":7}}|choices[0].message.tool_calls is a number; expected an array or null
a tool call that is a number|{"endpoint":"chat","body":{"role":"assistant","content":null,"tool_calls":[5]}}|choices[0].message.tool_calls[0] is a number; expected an object
a tool call without id|{"endpoint":"chat","body":{"role":"assistant","content":null,"tool_calls":[{"type":"function","function":{"name":"read","arguments":"{}"}}]}}|tool_calls[0].id is null (or absent); expected a non-empty string
function a string|{"endpoint":"chat","body":{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":"read"}]}}|tool_calls[0].function is a string; expected an object
function.name a number|{"endpoint":"chat","body":{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":5,"arguments":"{}"}}]}}|tool_calls[0].function.name is a number; expected a string
function.arguments a number|{"endpoint":"chat","body":{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"read","arguments":5}}]}}|tool_calls[0].function.arguments is a number; expected a string of JSON
a call of another type|{"endpoint":"chat","body":{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"custom","function":{"name":"read","arguments":"{}"}}]}}|tool_calls[0].type is "custom"; only "function" calls are offered
content a number|{"endpoint":"chat","body":{"role":"assistant","content":42}}|choices[0].message.content is a number; expected a string or null
content an object|{"endpoint":"chat","body":{"role":"assistant","content":{"text":"hi"}}}|choices[0].message.content is an object; expected a string or null
role a number|{"endpoint":"chat","body":{"role":5,"content":"x"}}|choices[0].message.role is a number; expected a string
no message|{"endpoint":"chat","body":{"choices":[{"index":0,"finish_reason":"stop"}]}}|has no choices[0].message object
message a string|{"endpoint":"chat","body":{"choices":[{"index":0,"message":"Files: a.py"}]}}|has no choices[0].message object
choices empty|{"endpoint":"chat","body":{"choices":[]}}|has no choices ("choices" is empty or not an array)
choices not an array|{"endpoint":"chat","body":{"choices":{"0":{"message":{"content":"x"}}}}}|has no choices ("choices" is empty or not an array)
a choice that is a number|{"endpoint":"chat","body":{"choices":[7]}}|has no choices[0].message object
truncated JSON|{"endpoint":"chat","raw":"{\"choices\":[{\"message\":{\"role\":\"assistant\",\"content\":\"Files: pk"}|is not valid JSON
a body that is not JSON|{"endpoint":"chat","raw":"Files: pkg/config.py"}|is not valid JSON
HTML with HTTP 200|{"endpoint":"chat","raw":"<!DOCTYPE html><html><body><h1>Welcome to nginx!</h1></body></html>"}|is not valid JSON
an empty body|{"endpoint":"chat","raw":""}|with an empty body; expected JSON
JSON null|{"endpoint":"chat","raw":"null"}|is JSON null
a JSON array|{"endpoint":"chat","raw":"[{\"message\":{}}]"}|is not a JSON object
EOF

# ---- chat: malformed but usable, or answered by a retried turn -----------------------
# tool_calls null or [] mean "no calls" (exit 134 on the old code: a json-c
# assertion on json_object_array_length(NULL)).
for tc in null '[]'; do
  printf '{"endpoint":"chat","body":{"role":"assistant","content":"Files: pkg/config.py","tool_calls":%s}}\n' "$tc" >"$S"
  serve "$S"
  ask
  check "chat, tool_calls $tc: taken as no calls, the answer printed" sh -c '[ '"$rc"' -eq 0 ] && grep -q "^Files: pkg/config.py" "$0"' "$OUT"
done
# Arguments that are not JSON: the tool fails, the model is told why and
# tries again (a retried turn, not an error).
printf '%s\n' '{"endpoint":"chat","body":{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"read","arguments":"{path: pkg/config.py"}}]}}' "$ANSWER" >"$S"
serve "$S"
ask
check "chat, arguments not JSON: a retried turn that answers" sh -c '[ '"$rc"' -eq 0 ] && grep -q "^Files: pkg/config.py" "$0"' "$OUT"
check "and the model was told its arguments are not a JSON object" sh -c 'sed -n 2p "$0" | grep -q "the arguments of read are not a JSON object"' "$TMPBASE/log.jsonl"
# Arguments sent as an object (some servers do): run, and sent back as the
# string the protocol wants (the server checks, so no violation).
printf '%s\n' '{"endpoint":"chat","body":{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"read","arguments":{"path":"pkg/config.py"}}}]}}' "$ANSWER" >"$S"
serve "$S"
ask
check "chat, arguments an object: the tool runs, the run answers" sh -c '[ '"$rc"' -eq 0 ] && grep -q "^Files: pkg/config.py" "$0"' "$OUT"
check "and the conversation sent back is protocol-clean" sh -c '[ "$(grep -c "\"violations\":\[\]" "$0")" -eq 2 ] && grep -q "parse_config" "$0"' "$TMPBASE/log.jsonl"

# A message of 129 tool calls: each would run a tool and keep its output.
{ printf '{"endpoint":"chat","body":{"role":"assistant","content":null,"tool_calls":['
  i=0; while [ $i -lt 129 ]; do [ $i -gt 0 ] && printf ','; printf '%s' "$READ"; i=$((i + 1)); done
  printf ']}}\n'; } >"$S"
serve "$S"
ask
check "chat, 129 tool calls in one message: refused, saying the limit" failed_with "has 129 tool calls in one message; at most 128 are taken"

# Usage and finish_reason of any type are ignored; counts that overflow
# saturate (the old code added them into a negative total, printed null).
big=9223372036854775807
cat >"$S" <<EOF
{"endpoint":"chat","body":{"choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[$READ]},"finish_reason":["tool_calls"]}],"usage":{"prompt_tokens":$big,"completion_tokens":"many","prompt_tokens_details":"none"}}}
{"endpoint":"chat","body":{"choices":[{"index":0,"message":{"role":"assistant","content":"Files: pkg/config.py"},"finish_reason":7}],"usage":{"prompt_tokens":$big,"completion_tokens":[1],"prompt_tokens_details":{"cached_tokens":true}}}}
EOF
serve "$S"
ask --json
check "chat, usage of wrong types and overflowing counts: answered" sh -c '[ '"$rc"' -eq 0 ] && grep -q "\"answer\": \"Files: pkg/config.py\"" "$0"' "$OUT"
# The run's totals: the member after "usage": {
check "the prompt tokens saturate instead of wrapping" sh -c 'grep -A1 "^  \"usage\": {" "$0" | grep -q "\"prompt_tokens\": $1"' "$OUT" "$big"
check "the completion tokens given as text count as unknown" sh -c 'grep -A2 "^  \"usage\": {" "$0" | grep -q "\"completion_tokens\": null"' "$OUT"

# ---- chat: replies too big ---------------------------------------------------------
# printf_big N: N bytes of 'x'.
xs() { head -c "$1" /dev/zero | tr '\0' x; }
{ printf '{"endpoint":"chat","body":{"role":"assistant","content":"Files: pkg/config.py\\n'; xs 20000000; printf '"}}\n'; } >"$S"
serve "$S"
ask
check "chat, a 20 MB reply: no crash" no_crash
check "refused past the default 16 MiB, saying how to raise it" failed_with "is larger than 16 MiB; refused (raise max_response_mb in the model configuration or CODENIB_MAX_RESPONSE_MB"
{ printf '{"endpoint":"chat","body":{"role":"assistant","content":"Files: pkg/config.py\\n'; xs 2000000; printf '"}}\n'; } >"$S"
serve "$S"
CODENIB_MAX_RESPONSE_MB=1 ask
check "the limit is settable: a 2 MB reply past CODENIB_MAX_RESPONSE_MB=1" failed_with "is larger than 1 MiB; refused"
serve "$S"
ask
check "and the same reply under the default limit is answered" sh -c '[ '"$rc"' -eq 0 ] && grep -q "^Files: pkg/config.py" "$0"' "$OUT"
CODENIB_MAX_RESPONSE_MB=lots ask
check "a limit that is no number is an error naming the variable" failed_with "CODENIB_MAX_RESPONSE_MB is 'lots'; give a number of MiB from 1 to 4096"
# 1.2 MB of "1,1,1,...": some 600,000 JSON values, about 40 MB once parsed.
{ printf '{"endpoint":"chat","body":{"role":"assistant","content":"Files: pkg/config.py","pad":['; head -c 600000 /dev/zero | tr '\0' 1 | sed 's/1/1,/g'; printf '1]}}\n'; } >"$S"
serve "$S"
CODENIB_MAX_RESPONSE_MB=2 ask
check "a reply of many small values is refused before it is parsed" failed_with "JSON values, more than the 262144 (one per 8 bytes of max_response_mb, 2 MiB) allowed; refused"

# ---- chat through a skill -------------------------------------------------------------
printf '%s\n' '{"endpoint":"chat","body":{"role":"assistant","content":null,"tool_calls":"rank"}}' >"$S"
serve "$S"
cn_t 60 run llm_rerank --repo "$repo" --cache-dir "$cache" --model m-chat --base-url "$URL" \
  --args '{"query":"read the config","candidates":2}'
check "llm_rerank, tool_calls a string: no crash" no_crash
check "llm_rerank: the first-stage order kept, with a clear reason" kept_with "choices[0].message.tool_calls is a string; expected an array or null"
printf '%s\n' '{"endpoint":"chat","body":{"role":"assistant","content":42}}' >"$S"
serve "$S"
cn_t 60 run llm_rerank --repo "$repo" --cache-dir "$cache" --model m-chat --base-url "$URL" \
  --args '{"query":"read the config","candidates":2}'
check "llm_rerank, content a number: the order kept, with a clear reason" kept_with "choices[0].message.content is a number; expected a string or null"

# ---- embeddings: compile with embed-openai -------------------------------------------
if [ -f "$CN_BUILDDIR/_plugins/embed-openai/embed_openai.so" ]; then
  n=0
  while IFS='|' read -r what reply says; do
    [ -n "$what" ] || continue
    n=$((n + 1))
    printf '%s\n' "$reply" >"$S"
    serve "$S"
    cn_t 120 compile "$repo" --cache-dir "$TMPBASE/ecache$n" --quiet --index bm25,graph,vector --embedder embed-openai \
      --embedder-config "{\"base_url\": \"$URL\", \"model\": \"e\", \"batch_size\": 1}" </dev/null
    check "embeddings, $what: no crash" no_crash
    check "embeddings, $what: a clear error" failed_with "$says"
  done <<'EOF'
data an object|{"endpoint":"embeddings","body":{"data":{"0":[0.5,0.5]}}}|has no "data" array
data missing|{"endpoint":"embeddings","body":{"object":"list"}}|has no "data" array
a vector of strings|{"endpoint":"embeddings","body":{"data":[{"index":0,"embedding":["0.5","0.5"]}]}}|embedding 0[0] is not a number
a vector that is a string|{"endpoint":"embeddings","body":{"data":[{"index":0,"embedding":"AAAAAAAA"}]}}|has no "embedding" array
an empty vector|{"endpoint":"embeddings","body":{"data":[{"index":0,"embedding":[]}]}}|has an empty embedding
index out of range|{"endpoint":"embeddings","body":{"data":[{"index":5,"embedding":[0.5,0.5]}]}}|data[0].index is 5; expected 0..0
index a string|{"endpoint":"embeddings","body":{"data":[{"index":"0","embedding":[0.5,0.5]}]}}|data[0].index is "0"; expected 0..0
two rows for one text|{"endpoint":"embeddings","body":{"data":[{"embedding":[1]},{"embedding":[1]}]}}|has 2 embeddings for 1 inputs
a row that is a number|{"endpoint":"embeddings","body":{"data":[3]}}|data[0] is not an object
dimensions that change|{"endpoint":"embeddings","body":{"data":[{"index":0,"embedding":[0.5,0.5]}]}}|returned 8 dimensions, earlier answers
HTML with HTTP 200|{"endpoint":"embeddings","raw":"<html><body>Bad gateway</body></html>"}|is not valid JSON
EOF
else
  pass "# SKIP embed-openai was not built"
fi

# ---- rerank: crossencoder_rerank ---------------------------------------------------------
while IFS='|' read -r what reply says; do
  [ -n "$what" ] || continue
  printf '%s\n' "$reply" >"$S"
  serve "$S"
  cn_t 60 run crossencoder_rerank --repo "$repo" --cache-dir "$cache" --rerank-model m-rerank \
    --rerank-base-url "$URL" --args '{"query":"read the config file","candidates":2}' </dev/null
  check "rerank, $what: no crash" no_crash
  check "rerank, $what: the first-stage order kept, with a clear reason" kept_with "$says"
done <<'EOF'
results a string|{"endpoint":"rerank","body":{"results":"0,1"}}|is neither a list of {index, score} (TEI) nor an object with a "results" list
results missing|{"endpoint":"rerank","body":{"data":[]}}|is neither a list of {index, score} (TEI) nor an object with a "results" list
index out of range|{"endpoint":"rerank","body":{"results":[{"index":99,"relevance_score":0.5}]}}|result 0 has index 99; 2 documents were sent
index negative|{"endpoint":"rerank","body":[{"index":-1,"score":0.5}]}|result 0 has index -1; 2 documents were sent
index a string|{"endpoint":"rerank","body":{"results":[{"index":"1","relevance_score":0.5}]}}|result 0 has no integer "index"
score a string|{"endpoint":"rerank","body":{"results":[{"index":1,"relevance_score":"high"}]}}|the score of result 0 is not a number
no score|{"endpoint":"rerank","body":{"results":[{"index":1}]}}|result 0 has neither "relevance_score" nor "score"
a document scored twice|{"endpoint":"rerank","body":{"results":[{"index":1,"score":0.5},{"index":1,"score":0.7}]}}|scores document 1 twice
more results than documents|{"endpoint":"rerank","body":[{"index":0,"score":1},{"index":1,"score":1},{"index":1,"score":1}]}|has 3 results for 2 documents
a result that is a string|{"endpoint":"rerank","body":{"results":["0"]}}|result 0 has no integer "index"
truncated JSON|{"endpoint":"rerank","raw":"{\"results\":[{\"index\":0,"}|is not valid JSON
EOF

# ---- an agent run that uses up its turns -------------------------------------------------
printf '%s\n' "{\"endpoint\":\"chat\",\"body\":{\"role\":\"assistant\",\"content\":\"Let me look.\",\"tool_calls\":[$READ]}}" >"$S"
serve "$S"
ask --max-turns 1
check "turns used up without an answer: exit 1 (it was 0, printing nothing)" rc_is 1
check "and it says so, and what to do" err_has "the agent used all 1 turn without answering (1 tool call, its last message has no Files:/Symbols:/Locations: contract); raise --max-turns, or set force_localization_contract"
check "nothing on standard output" test ! -s "$OUT"
# The salvage policy: with force_localization_contract the run asks for
# the contract once more and, when the model still gives none, answers
# with the files it read.
printf 'force_localization_contract: true\n' >"$TMPBASE/harness.yaml"
printf '%s\n' "{\"endpoint\":\"chat\",\"body\":{\"role\":\"assistant\",\"content\":null,\"tool_calls\":[$READ]}}" \
  '{"endpoint":"chat","body":{"role":"assistant","content":"Still searching."}}' >"$S"
serve "$S"
ask --max-turns 1 --harness "$TMPBASE/harness.yaml"
check "force_localization_contract: the salvaged contract of the files read, exit 0" \
  sh -c '[ '"$rc"' -eq 0 ] && grep -q "^Files: pkg/config.py" "$0"' "$OUT"
# Last words that carry the contract are an answer even out of turns.
printf '%s\n' "{\"endpoint\":\"chat\",\"body\":{\"role\":\"assistant\",\"content\":\"Files: pkg/config.py\\nSymbols: pkg/config.py:parse_config\\nLocations: pkg/config.py:1-3\",\"tool_calls\":[$READ]}}" >"$S"
serve "$S"
ask --max-turns 1
check "out of turns, last words with the contract: printed, exit 0" sh -c '[ '"$rc"' -eq 0 ] && grep -q "^Files: pkg/config.py" "$0"' "$OUT"

# ---- `--` ends the options -----------------------------------------------------------------
off() { cn_t 60 query --repo "$repo" --cache-dir "$cache" --offline --quiet "$@"; }
off -- "-x is ignored when the config file is read"
check "query -- \"-x ...\": a question (it was refused)" sh -c '[ '"$rc"' -eq 0 ] && grep -q "^Files: " "$0"' "$OUT"
off "-x is ignored when the config file is read"
check "query \"-x ...\" with spaces is a question, not an option" sh -c '[ '"$rc"' -eq 0 ] && grep -q "^Files: " "$0"' "$OUT"
off -- --json
check "query -- --json: --json is the question, not an option" sh -c '[ '"$rc"' -eq 0 ] && ! grep -q "\"mode\"" "$0" && grep -q "^Files: " "$0"' "$OUT"
off -x
check "query -x: still an unknown option, pointing at --" sh -c '[ '"$rc"' -eq 2 ] && grep -q "a question that starts with .-. goes after --" "$0"' "$ERR"
off -- "config" "and more"
check "query -- A B: one question at a time" rc_is 2
mkdir -p "$TMPBASE/d" && cp -R "$repo" "$TMPBASE/d/-repo"
cd "$TMPBASE/d" || exit 1
cn_t 120 compile --cache-dir "$TMPBASE/dashcache" --quiet -- -repo
check "compile -- -repo: a repository whose name starts with '-'" sh -c '[ '"$rc"' -eq 0 ] && [ -L "$0/current" ]' "$TMPBASE/dashcache"
cn_t 60 status --cache-dir "$TMPBASE/dashcache" -- -repo
check "status -- -repo" sh -c '[ '"$rc"' -eq 0 ] && grep -q "^-repo: fresh" "$0"' "$OUT"
cd "$TMPBASE" || exit 1
cn_t 60 run --repo "$repo" --cache-dir "$cache" --args '{"query":"config"}' -- bm25_search
check "run -- SKILL" sh -c '[ '"$rc"' -eq 0 ] && grep -q "pkg/config.py" "$0"' "$OUT"
cn_t 60 skills show -- bm25_search
check "skills show -- ID" rc_is 0
cn_t 60 skills list --
check "skills list --" rc_is 0
cn_t 60 skills list -- --json
check "skills list -- --json: an unexpected argument" rc_is 2
cn_t 60 plugins list --
check "plugins list --" rc_is 0
cn_t 60 lsp -- --repo
check "lsp -- --repo: an unexpected argument" rc_is 2
cn_t 60 mcp -- x
check "mcp -- x: an unexpected argument" rc_is 2
cn_t 60 eval -- --dataset
check "eval -- --dataset: an unexpected argument" rc_is 2

no_sentinels "nothing ran"
done_testing
