#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The configuration layer as a user meets it: the system file, the user's
# file, the environment and flags, later ones winning; `codenib config
# show` says where each value came from; a malformed file is an error with
# file:line, never a crash; indexes go to the XDG cache unless ~/.codenib
# already holds them.
. "$CN_SRCDIR/tests/cli/lib.sh"
unset CODENIB_SKILLS_PATH CODENIB_MODEL OPENAI_BASE_URL CODENIB_BASE_URL CODENIB_API_KEY OPENAI_API_KEY

sys=$CODENIB_SYSCONFDIR/codenib/config.yaml
user=$XDG_CONFIG_HOME/codenib/config.yaml
mkdir -p "$(dirname "$sys")" "$(dirname "$user")"

cn config show
check "config show works with no file" rc_is 0
check "defaults say so" sh -c 'grep "^vector_store" "$0" | grep -q "vec-flat.*(default)"' "$OUT"
check "no model is set: offline" sh -c 'grep "^model" "$0" | grep -q "(not set)"' "$OUT"
check "no file read" out_has "files read: none"

cat > "$sys" <<'YAML'
model: sys-model
base_url: http://127.0.0.1:9/sys
embedder: embed-local
skills:
  bm25_search:
    top_k: 3
YAML
cat > "$user" <<'YAML'
# the user's own
base_url: http://127.0.0.1:9/user
api_key_env: MY_TEAM_KEY
skills:
  bm25_search: {top_k: 2}
YAML
cn config show
check "the system file's model" sh -c 'grep "^model" "$0" | grep -q "sys-model .*($1:1)"' "$OUT" "$sys"
check "the user's file wins over the system's" sh -c 'grep "^base_url" "$0" | grep -q "/user .*($1:2)"' "$OUT" "$user"
check "per-skill defaults, the user's winning" sh -c 'grep "^skills.bm25_search.top_k" "$0" | grep -q "2 .*($1:5)"' "$OUT" "$user"
check "both files listed in order" sh -c 'grep -A2 "^files read:" "$0" | tr -d " \n" | grep -q "^filesread:$1$2$"' "$OUT" "$sys" "$user"

CODENIB_MODEL=env-model CODENIB_BASE_URL=http://127.0.0.1:9/env cn config show --json
check "config show --json" rc_is 0
check "the environment wins over the files" grep -q '"value": *"env-model"' "$OUT"
check "and says it came from the environment" grep -q '"source": *"environment CODENIB_MODEL"' "$OUT"
check "base URL from CODENIB_BASE_URL" grep -q '"source": *"environment CODENIB_BASE_URL"' "$OUT"
check "the JSON is valid" sh -c 'python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert d[\"skills\"][\"bm25_search\"][\"top_k\"][\"value\"] == 2" "$0" 2>/dev/null || ! command -v python3 >/dev/null' "$OUT"

# The model setting reaches a command: query goes to the model the file
# names (the fake endpoint), the key from the variable api_key_env names.
mkdir -p "$TMPBASE/repo"
printf 'def area(w, h):\n    return w * h\n' > "$TMPBASE/repo/geo.py"
if [ -x "${CN_FAKE_OPENAI:-}" ] && [ -f "$CN_BUILDDIR/_plugins/lang-python/lang_python.so" ]; then
  printf '%s\n' '{"endpoint": "chat", "body": {"role": "assistant", "content": "Files: geo.py\nSymbols: geo.py:area\nLocations: geo.py:1-2"}}' > "$TMPBASE/script.jsonl"
  start_fake_openai "$TMPBASE/script.jsonl"
  printf 'model: file-model\nbase_url: http://127.0.0.1:%s/v1\napi_key_env: MY_TEAM_KEY\n' "$port" > "$user"
  MY_TEAM_KEY=sekrit-from-file cn query --repo "$TMPBASE/repo" --cache-dir "$TMPBASE/cache" --quiet "where is the area computed"
  check "query uses the model from config.yaml" sh -c 'grep -q "\"model\": *\"file-model\"" "$0"' "$TMPBASE/log.jsonl"
  check "with the key from the variable api_key_env names" grep -q "sekrit-from-file" "$TMPBASE/log.jsonl"
  cn query --repo "$TMPBASE/repo" --cache-dir "$TMPBASE/cache" --offline --json "where is the area computed"
  check "a flag (--offline) wins over the file" grep -q '"mode": *"offline"' "$OUT"
else
  pass "# SKIP no fake OpenAI server or python backend"
fi

# per-skill defaults reach the skill
printf 'skills:\n  bm25_search:\n    top_k: 1\n' > "$user"
if [ -f "$CN_BUILDDIR/_plugins/lang-python/lang_python.so" ]; then
  printf 'def area_two(w):\n    return w * 2\n' > "$TMPBASE/repo/geo2.py"
  cn compile "$TMPBASE/repo" --cache-dir "$TMPBASE/cache" --quiet
  cn run bm25_search --repo "$TMPBASE/repo" --cache-dir "$TMPBASE/cache" --args '{"query": "area"}'
  check "run with a per-skill default" rc_is 0
  check "the skill got top_k 1 from config.yaml" sh -c '[ "$(grep -o "\"node_name\"" "$0" | wc -l)" -eq 1 ]' "$OUT"
  cn run bm25_search --repo "$TMPBASE/repo" --cache-dir "$TMPBASE/cache" --args '{"query": "area", "top_k": 5}'
  check "an argument still wins" sh -c '[ "$(grep -o "\"node_name\"" "$0" | wc -l)" -gt 1 ]' "$OUT"
fi
# the default backends reach a vector index build without --embedder
if [ -f "$CN_BUILDDIR/_plugins/lang-python/lang_python.so" ]; then
  printf 'embedder: no-such-embedder\n' > "$user"
  cn compile "$TMPBASE/repo" --cache-dir "$TMPBASE/cache2" --index vector --quiet
  check "the configured embedder is the default" sh -c '[ "$1" -ne 0 ] && grep -q "no-such-embedder" "$0"' "$ERR" "$rc"
  cn compile "$TMPBASE/repo" --cache-dir "$TMPBASE/cache2" --index vector --embedder embed-local --quiet
  check "--embedder wins over it" rc_is 0
fi
printf 'skills:\n  bm25_search:\n    top_k: lots\n' > "$user"
cn run bm25_search --repo "$TMPBASE/repo" --cache-dir "$TMPBASE/cache" --args '{"query": "area"}'
check "a per-skill default of the wrong type is an error naming it" sh -c '[ "$1" -ne 0 ] && grep -q "codenib configuration" "$0"' "$ERR" "$rc"

# malformed files: clear errors with file:line, for every command
printf 'model: [unclosed\n' > "$user"
cn config show
check "malformed YAML fails" rc_is 1
check "naming file:line" err_has "$user:2:"
cn skills list
check "other commands refuse it too" sh -c '[ "$1" -eq 1 ] && grep -q "config.yaml:2:" "$0"' "$ERR" "$rc"
printf 'model: 12\n' > "$user"
cn config show
check "a number where a string belongs" err_has "$user:1:8: model must be a string, not int"
printf -- '- a\n- b\n' > "$user"
cn config show
check "a list where a mapping belongs" err_has "$user:1:1: the configuration must be a mapping"
printf 'skills: [a]\n' > "$user"
cn config show
check "skills that are no mapping" err_has "skills must be a mapping"
printf '\001\377\000garbage' > "$user"
cn config show
check "binary garbage is an error, not a crash" sh -c '[ "$1" -eq 1 ] && grep -q "$2" "$0"' "$ERR" "$rc" "$user"
printf 'modle: x\n' > "$user"
cn config show
check "an unknown setting is a warning" sh -c '[ "$1" -eq 0 ] && grep -q "warning: .*unknown setting '"'"'modle'"'"'" "$0"' "$ERR" "$rc"
rm -f "$user" "$sys"
cn --version
check "--version does not read the configuration" rc_is 0

# where indexes live
unset CODENIB_HOME
cn config show --json
check "indexes under XDG_CACHE_HOME without CODENIB_HOME" grep -q "\"value\": *\"$XDG_CACHE_HOME/codenib\"" "$OUT"
mkdir -p "$HOME/.codenib/repositories"
cn config show --json
check "an older ~/.codenib with indexes keeps being read" grep -q "\"value\": *\"$HOME/.codenib\"" "$OUT"
rm -rf "$HOME/.codenib"
if [ -f "$CN_BUILDDIR/_plugins/lang-python/lang_python.so" ]; then
  cn compile "$TMPBASE/repo" --quiet
  check "a compile without --cache-dir writes under the XDG cache" sh -c 'ls -d "$0"/codenib/repositories/repo-* >/dev/null' "$XDG_CACHE_HOME"
fi

done_testing
