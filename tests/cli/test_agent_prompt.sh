#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# What the model receives in agent mode, against tests/llm/fake_openai: the
# default system prompt (the Files/Symbols/Locations contract, a workflow
# naming only offered tools, the environment block), compile-table
# selection by stack trace and by language, the warnings of options that
# would do nothing, and the harness edges (--model wins, bash in
# default_tool_ids, seed policy case, 0 for seed limit/top_k).
. "$CN_SRCDIR/tests/cli/lib.sh"
unset CODENIB_SKILLS_PATH CODENIB_MODEL CODENIB_RERANK_MODEL CODENIB_BASE_URL CODENIB_RERANK_BASE_URL
unset OPENAI_BASE_URL OPENAI_API_KEY CODENIB_API_KEY

need_python_backend

repo=$TMPBASE/repo
cache=$TMPBASE/cache
LOG=$TMPBASE/log.jsonl
S=$TMPBASE/script.jsonl
H=$TMPBASE/harness.yaml
cp -R "$CN_SRCDIR/tests/fixtures/graph/python" "$repo"
q='ConnectionPool.get fails in _check when size is an int'
trace='Why does this fail?
Traceback (most recent call last):
  File "pkg/pool.py", line 13, in _check
    raise ValueError(size)
ValueError: 3'
ANSWER='{"endpoint":"chat","body":{"role":"assistant","content":"Files: pkg/pool.py\nSymbols: pkg/pool.py:ConnectionPool._check\nLocations: pkg/pool.py:12-13"}}'
printf '%s\n' "$ANSWER" >"$S"

# ask ARGS...: one agent run (stderr kept: warnings are checked there).
ask() {
  start_fake_openai "$S"
  CODENIB_API_KEY=k cn query --repo "$repo" --cache-dir "$cache" --model fake-chat \
    --base-url "http://127.0.0.1:$port/v1" "$@"
}
req1_has() { sed -n 1p "$LOG" | grep -q -F -- "$1"; }
req1_lacks() { ! req1_has "$1"; }
tools1() { sed -n 1p "$LOG" | grep -o '"function":{"name":"[a-z0-9_]*","description"' | cut -d'"' -f6 | tr '\n' ' '; }
offers() { tools1 | grep -q -w -- "$1"; }
only_offers() { [ "$(tools1)" = "$1 " ]; }
# json_is KEY VALUE: --json output has "KEY": "VALUE" (pretty-printed or not).
json_is() { grep -q "\"$1\": *\"$2\"" "$OUT"; }

cn compile "$repo" --cache-dir "$cache" --quiet
check "the fixture repository compiles" rc_is 0

# ---- the default prompt ----------------------------------------------------------
ask --json "$q"
check "a default run answers" rc_is 0
check "the prompt asks for the Files line" req1_has 'Files: path/a.ext'
check "and the Symbols and Locations lines" sh -c 'sed -n 1p "$0" | grep -q -F "Symbols: path/a.ext:" && sed -n 1p "$0" | grep -q -F "Locations: path/a.ext:START-END"' "$LOG"
check "it gives the workflow" req1_has '# Workflow'
check "orienting with codenib_context, offered" sh -c 'sed -n 1p "$0" | grep -q "Orient: .*codenib_context"' "$LOG"
check "verifying with read" req1_has 'Verify: open each candidate with `read`'
check "expanding through the graph" sh -c 'sed -n 1p "$0" | grep -q "Expand: .*find_callers"' "$LOG"
check "bash, not offered, is not mentioned" req1_lacks '`bash`'
check "the environment names the primary language" req1_has 'Primary language: python'
check "the repository size in files and symbols (the index's)" \
  sh -c 'sed -n 1p "$0" | grep -q "Repository size: [1-9][0-9]* files, [1-9][0-9]* symbols (small)"' "$LOG"
check "and the top-level entries" sh -c 'sed -n 1p "$0" | grep -q "Top-level entries:.* pkg/"' "$LOG"
check "--json reports the contract" out_has '"Files:'

# only the offered tools are named
printf 'default_tool_ids: [read]\n' >"$H"
ask --quiet --skills bm25_search --harness "$H" "$q"
check "a narrowed run answers" rc_is 0
check "it offers bm25_search and read only" only_offers "bm25_search read"
check "its prompt orients with bm25_search" sh -c 'sed -n 1p "$0" | grep -q "Orient: .*bm25_search"' "$LOG"
check "and names no tool that is not offered" \
  sh -c '! sed -n 1p "$0" | grep -q -e "codenib_context" -e "find_callers" -e "\`grep\`" -e "Expand:"' "$LOG"

# ---- compile tables: stack trace, language, default ------------------------------
cat >"$H" <<'YAML'
compile_table:
  "python:stacktrace": [find_callers]
  "python:no_stacktrace": [bm25_search]
  default: [hybrid_search]
YAML
ask --quiet --json --harness "$H" "$trace"
check "a Python traceback selects python:stacktrace" json_is scenario 'python:stacktrace'
check "which offers find_callers" only_offers "find_callers read grep glob"
ask --quiet --json --harness "$H" "$q"
check "no stack trace selects python:no_stacktrace" json_is scenario 'python:no_stacktrace'
check "which offers bm25_search" only_offers "bm25_search read grep glob"
cat >"$H" <<'YAML'
compile_table:
  "go:no_stacktrace": [find_callers]
  "any:stacktrace": [trace]
  default: [codenib_context]
YAML
ask --quiet --json --harness "$H" "$q"
check "another language's key is passed over for default" json_is scenario 'default'
check "which offers codenib_context" only_offers "codenib_context read grep glob"
jtrace='Exception in thread "main" java.lang.NullPointerException
	at com.acme.Pool.check(Pool.java:42)
	at com.acme.Main.main(Main.java:7)'
ask --quiet --json --harness "$H" "$jtrace"
check "Java frames count as a stack trace (any:stacktrace)" json_is scenario 'any:stacktrace'
gtrace='panic: runtime error
goroutine 1 [running]:
main.main()
	/src/main.go:12 +0x1d'
ask --quiet --json --harness "$H" "$gtrace"
check "so do Go frames" json_is scenario 'any:stacktrace'
rtrace="thread 'main' panicked at src/main.rs:4:5"
ask --quiet --json --harness "$H" "$rtrace"
check "and a Rust panic" json_is scenario 'any:stacktrace'
ctrace='#0  0x00007f3a in pool_check (p=0x0) at pool.c:12'
ask --quiet --json --harness "$H" "$ctrace"
check "and C/C++ debugger frames" json_is scenario 'any:stacktrace'
ask --quiet --json --harness "$H" 'the default pool size at pool.py line 12'
check "a file and line in prose is no stack trace" json_is scenario 'default'

cat >"$H" <<'YAML'
compile_table:
  default: [no_such_skill, nor_this]
YAML
ask --json --harness "$H" "$q"
check "a table naming unknown skills still runs" rc_is 0
check "it warns on stderr" err_has 'compile table names "no_such_skill", which is no loaded skill'
check "and in --json" out_has 'which is no loaded skill'
check "the skills are not left at zero" offers bm25_search

# ---- harness edges ---------------------------------------------------------------
printf 'model: harness-model\n' >"$H"
ask --quiet --json --harness "$H" "$q"
check "--model wins over the harness's model" req1_has '"model":"fake-chat"'
check "--json reports the model used" json_is model fake-chat

printf 'default_tool_ids: [read, bash]\n' >"$H"
ask --json --harness "$H" "$q"
check "bash in default_tool_ids without enable_bash: the run goes on" rc_is 0
check "bash is not offered" sh -c '! { sed -n 1p "$0" | grep -o "\"name\":\"bash\"" | grep -q .; }' "$LOG"
check "and the warning says how to turn it on" err_has 'default_tool_ids names bash, but bash is disabled'
printf 'default_tool_ids: [bash]\nenable_bash: true\n' >"$H"
ask --quiet --json --harness "$H" "$q"
check "with enable_bash it is offered" offers bash

printf 'first_turn_tool_choice: no_such_tool\n' >"$H"
ask --harness "$H" "$q"
check "an unknown forced tool warns" err_has 'first_turn_tool_choice "no_such_tool" is not a tool offered'
check "and nothing is forced" req1_lacks '"tool_choice"'
printf 'allow_skills: []\n' >"$H"
ask --harness "$H" "$q"
check "an empty allow list warns" err_has 'allow_skills is an empty list'
printf 'allow_skills: [bm25_search, no_such_skill]\nexclude_skills: [nor_this]\n' >"$H"
ask --harness "$H" "$q"
check "an unknown allowed skill id warns" err_has 'allow_skills names "no_such_skill"'
check "an unknown excluded skill id warns" err_has 'exclude_skills names "nor_this"'

printf 'lsp_route_seed_policy: " Specific"\nlsp_route_seed_limit: 0\nlsp_route_top_k: 0\n' >"$H"
ask --quiet --harness "$H" "$q"
check "seed policy in any case, 0 for seed limit and top_k: accepted" rc_is 0
printf 'lsp_route_seed_policy: sometimes\n' >"$H"
ask --quiet --harness "$H" "$q"
check "an unknown seed policy is still an error" sh -c '[ "$0" -ne 0 ]' "$rc"
printf 'lsp_route_top_k: -1\n' >"$H"
ask --quiet --harness "$H" "$q"
check "a negative top_k is still an error" err_has 'lsp_route_top_k must be at least 1'

done_testing
