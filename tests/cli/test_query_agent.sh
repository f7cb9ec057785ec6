#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# `codenib query` with a model, against the loopback server
# tests/llm/fake_openai: the skills that call a model get the run's chat
# model and, when one is configured, the rerank endpoint; a rerank that
# fails keeps the first-stage order and says so; a stale index keeps its
# skills and the system prompt says it is stale; a skill asked for without
# its index (or its model) is an error naming it; read takes the
# reference's file_path.
. "$CN_SRCDIR/tests/cli/lib.sh"
unset CODENIB_SKILLS_PATH CODENIB_MODEL CODENIB_RERANK_MODEL CODENIB_BASE_URL CODENIB_RERANK_BASE_URL
unset OPENAI_BASE_URL OPENAI_API_KEY CODENIB_API_KEY

need_python_backend

repo=$TMPBASE/repo
cache=$TMPBASE/cache
LOG=$TMPBASE/log.jsonl
S=$TMPBASE/script.jsonl
cp -R "$CN_SRCDIR/tests/fixtures/graph/python" "$repo"
q='ConnectionPool.get fails in _check when size is an int'
ANSWER='{"endpoint":"chat","body":{"role":"assistant","content":"Files: pkg/pool.py\nSymbols: pkg/pool.py:ConnectionPool._check\nLocations: pkg/pool.py:12-13"}}'

# call NAME ARGS: a chat reply calling the tool NAME with the JSON ARGS.
call() {
  args=$(printf '%s' "$2" | sed 's/\\/\\\\/g; s/"/\\"/g')
  printf '{"endpoint":"chat","body":{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"%s","arguments":"%s"}}]}}\n' "$1" "$args"
}
# ask ARGS...: the agent on $repo's index with the fake server's model.
ask() {
  CODENIB_API_KEY=k cn query --repo "$repo" --cache-dir "$cache" --model fake-chat \
    --base-url "http://127.0.0.1:$port/v1" --quiet "$@"
}
# req N: the N-th request the server logged (its body JSON-escaped once more
# inside the log line).
req() { sed -n "$1p" "$LOG"; }
req_has() { req "$1" | grep -q -F -- "$2"; }
req_lacks() { ! req_has "$@"; }
endpoints_are() { [ "$(grep -o '"endpoint":"[a-z]*"' "$LOG" | cut -d'"' -f4 | tr '\n' ' ')" = "$1 " ]; }
# tools_of N: the names of the tools offered in request N.
tools_of() { req "$1" | grep -o '"function":{"name":"[a-z0-9_]*","description"' | cut -d'"' -f6 | tr '\n' ' '; }
offers() { tools_of "$1" | grep -q -w -- "$2"; }
no_violations() { [ -s "$LOG" ] && ! grep -v -F '"violations":[]' "$LOG" | grep -q .; }
# escaped N MEMBER: the values of MEMBER in the JSON text of request N's
# messages (a tool result is a string there, so its quotes are escaped).
escaped() { req "$1" | grep -o "\\\\\"$2\\\\\":[0-9][0-9.]*" | sed 's/.*://' | tr '\n' ' '; }

cn compile "$repo" --cache-dir "$cache" --quiet
check "the fixture repository compiles" rc_is 0

# ---- llm_rerank gets the run's chat model --------------------------------------
{
  call llm_rerank '{"query":"connection pool size check","candidates":3}'
  printf '%s\n' '{"endpoint":"chat","body":{"role":"assistant","content":"{\"ranking\":[{\"index\":3,\"score\":0.75},{\"index\":1,\"score\":0.5},{\"index\":2,\"score\":0.25}]}"}}'
  printf '%s\n' "$ANSWER"
} >"$S"
start_fake_openai "$S"
ask --json "$q"
check "an agent run that calls llm_rerank answers" rc_is 0
check "three chat requests: the agent, the skill, the agent again" endpoints_are "chat chat chat"
check "llm_rerank was offered to the model" offers 1 llm_rerank
check "the skill's request reached the server with the run's model" \
  sh -c 'sed -n 2p "$0" | grep -q -F "\"model\":\"fake-chat\"" && sed -n 2p "$0" | grep -q -F "\"name\":\"passage_ranking\""' "$LOG"
check "with the BM25 candidates as passages" req_has 2 'There are 3 passages.'
check "the model's ranking is the tool result: 0.75 first, then 0.5, then 0.25" \
  [ "$(escaped 3 score)" = "0.75 0.5 0.25 " ]
check "no rerank failure in it" req_lacks 3 '\"rerank_error\":'
check "and no tool call failed" sh -c '! grep -q "\"error\": \"" "$0"' "$OUT"
check "every request was protocol-clean" no_violations

# extract_keywords too
{
  call extract_keywords '{"problem_statement":"ConnectionPool size check fails"}'
  printf '%s\n' '{"endpoint":"chat","body":{"role":"assistant","content":"{\"keywords\":[\"ConnectionPool\",\"_check\"]}"}}'
  printf '%s\n' "$ANSWER"
} >"$S"
start_fake_openai "$S"
ask "$q"
check "extract_keywords runs on the run's model" sh -c '[ '"$rc"' -eq 0 ] && sed -n 2p "$0" | grep -q -F "\"name\":\"keyword_extraction\""' "$LOG"
check "its keywords reach the model" req_has 3 'ConnectionPool'

# ---- crossencoder_rerank: only with a rerank endpoint --------------------------
printf '%s\n' "$ANSWER" >"$S"
start_fake_openai "$S"
ask "$q"
check "without a rerank endpoint the run answers" rc_is 0
check "and crossencoder_rerank is not offered" eval '! offers 1 crossencoder_rerank'
check "the system prompt says why" req_has 1 'skill crossencoder_rerank needs a rerank endpoint (--rerank-model M'
check "llm_rerank is offered" offers 1 llm_rerank
ask --skills bm25_search,crossencoder_rerank "$q"
check "asked for by name without an endpoint: exit 1" rc_is 1
check "the error names the skill and what it needs" err_has "skill crossencoder_rerank needs a rerank endpoint"

# A rerank endpoint that answers garbage: the first-stage order stays.
# (A tool result is a JSON string inside the logged request: its quotes
# are escaped, which tells it apart from the skills' descriptions.)
{
  call crossencoder_rerank '{"query":"connection pool size check","candidates":2}'
  printf '%s\n' '{"endpoint":"rerank","status":200,"raw":"<html>rerank is down</html>","headers":{"Content-Type":"text/html"}}'
  printf '%s\n' "$ANSWER"
} >"$S"
start_fake_openai "$S"
ask --rerank-model m-rerank "$q"
check "with --rerank-model the run answers" rc_is 0
check "crossencoder_rerank is offered" offers 1 crossencoder_rerank
check "its request goes to the rerank endpoint" endpoints_are "chat rerank chat"
check "with that model" req_has 2 '"model":"m-rerank"'
check "the model sees the two candidates, each with the failure" [ "$(escaped 3 node_id | wc -w)" -eq 2 ]
check "which names the endpoint and the problem" \
  sh -c 'sed -n 3p "$0" | grep -q -F "\\\"rerank_error\\\":\\\"the rerank response from http://127.0.0.1:" && sed -n 3p "$0" | grep -q -F "is not valid JSON"' "$LOG"
check "the failure is a warning on standard error" err_has "the rerank failed, so the 2 candidates keep the first-stage order"

# ---- read with the reference's argument name -----------------------------------
{
  call read '{"file_path":"pkg/pool.py","limit":3}'
  printf '%s\n' "$ANSWER"
} >"$S"
start_fake_openai "$S"
ask --trace "$TMPBASE/trace.jsonl" "$q"
check "read with file_path: the run answers" rc_is 0
check "the model sees the file, numbered" req_has 2 '     1\tfrom pkg.base import Base'
check "the trace's read event names the file" \
  sh -c 'grep "\"event\":\"read\"" "$0" | grep "\"path\":\"pkg/pool.py\"" | grep -q "\"status\":\"ok\""' "$TMPBASE/trace.jsonl"
check "read is offered with file_path" \
  req_has 1 '"properties":{"file_path":{"type":"string","description":"File path relative to the repository root"}'

# ---- a stale index keeps its skills --------------------------------------------
printf '\n\ndef brand_new_checker(pool):\n    return pool.size\n' >>"$repo/pkg/pool.py"
printf '%s\n' "$ANSWER" >"$S"
start_fake_openai "$S"
CODENIB_API_KEY=k cn query --manifest "$cache/current/repo_manifest.json" --model fake-chat \
  --base-url "http://127.0.0.1:$port/v1" --quiet "$q"
check "--manifest on a stale index: the run answers" rc_is 0
check "bm25_search is still offered" offers 1 bm25_search
check "and the graph skills" eval 'offers 1 find_callers && offers 1 lsp_route'
check "the system prompt says the index is stale, and why" \
  req_has 1 'The compiled index is stale (1 file(s) changed since the index was built): '
check "naming the skills that answer from it" req_has 1 'bm25_search'
check "and what to do" req_has 1 'confirm what they return with read or grep'

# ---- a skill asked for without its index ---------------------------------------
CODENIB_API_KEY=k cn query --manifest "$cache/current/repo_manifest.json" --model fake-chat \
  --base-url "http://127.0.0.1:$port/v1" --skills bm25_search,embedding_search --quiet "$q"
check "a skill asked for by name whose index is missing: exit 1" rc_is 1
check "the error names the skill and the index" err_has "skill embedding_search needs the vector index"
check "and how to build it" err_has "recompile with --index ...,vector"

done_testing
