#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# `codenib query`: the localization contract, offline and with a model on a
# loopback server; where the index comes from (compiled on first use, a
# manifest, --no-compile); usage errors.
. "$CN_SRCDIR/tests/cli/lib.sh"
unset CODENIB_SKILLS_PATH CODENIB_MODEL OPENAI_BASE_URL CODENIB_BASE_URL

need_python_backend

repo=$TMPBASE/repo
cache=$TMPBASE/cache
cp -R "$CN_SRCDIR/tests/fixtures/graph/python" "$repo"
q='ConnectionPool.get fails in _check when size is an int: TypeError object of type int has no len()'

# ---- usage ----------------------------------------------------------------------
cn query
check "no question: exit 2" rc_is 2
check "and says what is missing" err_has "what is the question?"
cn query --repo "$repo" --manifest x.json "q"
check "--repo with --manifest: exit 2" rc_is 2
cn query --repo "$repo" --cache-dir "$cache" --max-turns 0 "q"
check "--max-turns 0 is refused" rc_is 2
cn query --repo "$repo" --cache-dir "$cache" "   "
check "a blank question is an error" sh -c '[ '"$rc"' -eq 1 ] && grep -q "the question is empty" "$0"' "$ERR"
cn query --repo "$repo" --cache-dir "$cache" --no-compile "$q"
check "--no-compile on a repository never compiled: exit 1" rc_is 1
check "and says how to compile it" err_has "run \`codenib compile $repo\` first"
cn query --help
check "--help explains the contract" out_has "Files: path/a.py, path/b.py"

# ---- offline: compiled on first use ---------------------------------------------
cn query --repo "$repo" --cache-dir "$cache" --quiet "$q"
check "offline query exits 0" rc_is 0
check "the answer carries Files:" sh -c 'grep -q "^Files: .*pkg/pool.py" "$0"' "$OUT"
check "Symbols:" sh -c 'grep -q "^Symbols: .*pkg/pool.py:ConnectionPool" "$0"' "$OUT"
check "and Locations: with line ranges" sh -c 'grep -Eq "^Locations: .*pkg/pool.py:[0-9]+-[0-9]+" "$0"' "$OUT"
check "the repository was compiled on first use" test -L "$cache/current"
cn query --repo "$repo" --cache-dir "$cache" --json "$q"
check "--json: offline mode" out_has '"mode": "offline"'
check "--json: the contract as lists" out_has '"files": ['
check "--json: the planner's steps" out_has '"steps": ['

# --without: the signals switched off are not run
cn query --repo "$repo" --cache-dir "$cache" --json --without bm25,bm25-seeds,bm25-errors,title "$q"
check "--without bm25,...: still answers from the route" sh -c '[ '"$rc"' -eq 0 ] && grep -q "pkg/pool.py" "$0"' "$OUT"
check "and no bm25_search step was run" sh -c '! grep -q "\"skill\": \"bm25_search\"" "$0"' "$OUT"
cn query --repo "$repo" --cache-dir "$cache" --json "$q"
check "without --without, bm25_search runs" out_has '"skill": "bm25_search"'
cn query --repo "$repo" --cache-dir "$cache" --without route,bm25,bm25-seeds,bm25-errors,title,hybrid "$q"
check "every retrieval switched off: exit 1, says so" sh -c \
  '[ '"$rc"' -eq 1 ] && grep -q "no retrieval skill could run (every retrieval signal is switched off)" "$0"' "$ERR"
cn query --repo "$repo" --cache-dir "$cache" --without names,nonsense "$q"
check "an unknown signal: exit 2, named, the known ones listed" sh -c \
  '[ '"$rc"' -eq 2 ] && grep -q "nonsense" "$0" && grep -q "known: route" "$0"' "$ERR"

# a stale index is brought up to date before answering
printf '\n\ndef brand_new_checker(pool):\n    return pool.size\n' >> "$repo/pkg/pool.py"
cn query --repo "$repo" --cache-dir "$cache" --quiet "where is brand_new_checker defined?"
check "an edited repository is recompiled and the new symbol found" out_has "pkg/pool.py:brand_new_checker"

# ---- a manifest instead of a repository -----------------------------------------
cn query --manifest "$cache/current/repo_manifest.json" --quiet "$q"
check "--manifest answers from that index" sh -c 'grep -q "^Files: .*pkg/pool.py" "$0"' "$OUT"
printf '{"schema_version": 1}' > "$TMPBASE/bad_manifest.json"
cn query --manifest "$TMPBASE/bad_manifest.json" "$q"
check "a file that is not a manifest is named" sh -c '[ '"$rc"' -eq 1 ] && grep -q "not a codenib manifest" "$0"' "$ERR"

# ---- with a model: the agent on a loopback OpenAI-compatible server ---------------
cat > "$TMPBASE/script.jsonl" <<'EOF'
{"endpoint": "chat", "body": {"role": "assistant", "content": null, "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "read", "arguments": "{\"path\": \"pkg/pool.py\"}"}}]}}
{"endpoint": "chat", "body": {"role": "assistant", "content": "The length check is wrong.\nFiles: pkg/pool.py\nSymbols: pkg/pool.py:ConnectionPool._check\nLocations: pkg/pool.py:12-13"}}
EOF
start_fake_openai "$TMPBASE/script.jsonl"
CODENIB_API_KEY=k cn query --repo "$repo" --cache-dir "$cache" --model fake-chat \
  --base-url "http://127.0.0.1:$port/v1" --trace "$TMPBASE/trace.jsonl" --json "$q"
check "agent query exits 0" rc_is 0
check "agent mode" out_has '"mode": "agent"'
check "the model's contract is the answer" out_has 'pkg/pool.py:ConnectionPool._check'
check "the model called read, and the tool ran" grep -q '"name": "read"' "$OUT"
check "the server saw two chat requests" test "$(grep -c '"endpoint":"chat"' "$TMPBASE/log.jsonl")" -eq 2
check "the second request carries the file, numbered" grep -q 'def _check' "$TMPBASE/log.jsonl"
check "no request broke the protocol" sh -c '! grep -q "\"violations\":\[\"" "$0"' "$TMPBASE/log.jsonl"
check "the trace was written" test -s "$TMPBASE/trace.jsonl"
kill $server 2>/dev/null

cn query --repo "$repo" --cache-dir "$cache" --model m --base-url "http://127.0.0.1:9/v1" "$q"
check "an unreachable model endpoint: exit 1, named" sh -c '[ '"$rc"' -eq 1 ] && grep -q "127.0.0.1:9" "$0"' "$ERR"

done_testing
