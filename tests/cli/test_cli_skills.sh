#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# `codenib --version/--help` and `codenib skills ...` as a user runs them.
. "$CN_SRCDIR/tests/cli/lib.sh"

cn --version
check "--version exits 0" rc_is 0
check "--version names version and ABI" out_has "codenib 0.1.0 (skill ABI 1.2)"
cn --help
check "--help exits 0 and lists commands" sh -c '[ '"$rc"' -eq 0 ] && grep -q "skills " "$0"' "$OUT"
cn frobnicate
check "unknown command: exit 2" rc_is 2
check "unknown command is named" err_has "'frobnicate' is not a command"
cn
check "no command: exit 2 with usage" sh -c '[ '"$rc"' -eq 2 ] && grep -q "usage: codenib" "$0"' "$ERR"

export CODENIB_SKILLS_PATH=
cn skills list
check "skills list exits 0" rc_is 0
check "the build tree's code_to_query is listed" out_has "code_to_query"
check "from the build tree" sh -c 'grep "^code_to_query" "$0" | grep -q "build tree"' "$OUT"
n_built=$(ls -d "$CN_BUILDDIR"/_skills/*/ | wc -l)
check "every built skill is usable ($n_built)" out_has "$n_built usable, 0 not usable"
cn skills list --verbose
check "--verbose shows the search path" out_has "Search path (first hit of an id wins):"
check "--verbose names the user directory" out_has "$CODENIB_HOME/skills"
check "--verbose shows each skill's ABI: built for, declared, and codenib's" \
  sh -c 'grep -A3 "^bm25_search " "$0" | grep -q "abi: built for 1\.[0-9]*, declares 1\.[0-9]*; codenib speaks 1\.2"' "$OUT"
check "make check leaves the installed directories out (CODENIB_IGNORE_SYSTEM_DIRS)" \
  sh -c '! grep -q "^  installed " "$0"' "$OUT"
export CODENIB_IGNORE_SYSTEM_DIRS=0
cn skills list --verbose
export CODENIB_IGNORE_SYSTEM_DIRS=1
check "... which 0 turns off: the installed directory is searched" out_has "  installed "
cn skills list --json
check "--json gives each skill's ABI" sh -c 'grep -q "\"abi\":\"1\.[0-9]*\",\"abi_declared\":\"1\.[0-9]*\"" "$0"' "$OUT"
cn skills list --bogus
check "skills list rejects unknown options" rc_is 2
cn skills
check "skills without a subcommand: exit 2" rc_is 2
cn skills help-me
check "unknown skills subcommand: exit 2" rc_is 2

export CODENIB_SKILLS_PATH="$CN_FIXTURES/all"
cn skills list
check "broken packages do not stop the listing, but make the exit status 1" sh -c '[ '"$rc"' -eq 1 ] && grep -q "^code_to_query " "$0"' "$OUT"
check "saying how many failed" err_has "skill packages failed to load"
check "ABI major mismatch listed with reason" out_has "was built for skill ABI 99."
check "newer minor listed with reason" out_has "was built against a newer SDK (ABI 1.3) than this codenib (1.2)"
check "missing symbol listed" out_has "does not export cn_skill_descriptor_fx_no_symbol"
check "id mismatch listed" out_has "skill id mismatch"
check "missing .so listed" out_has "fx_missing_so.so is missing"
check "malformed YAML listed with file:line" out_has "fx_bad_yaml/config.yaml:"
check "duplicate listed" sh -c 'grep -q "^fx_dup .*duplicate" "$0"' "$OUT"
check "collision listed" out_has "collides with the default tool 'grep'"
check "failed state shown" sh -c 'grep -q "^fx_abi_major .*failed" "$0"' "$OUT"
cn skills list --json
check "--json exits 1 too (a package failed)" rc_is 1
check "--json is one JSON array" sh -c 'head -c1 "$0" | grep -q "\[" && [ $(wc -l < "$0") -eq 1 ]' "$OUT"
check "--json carries states" out_has '"skill_id":"fx_abi_major","state":"failed"'
check "--json carries error codes" out_has '"error":"CN_EABI"'
check "--json carries the build tree skill" out_has '"skill_id":"code_to_query","state":"discovered"'

cn skills show code_to_query
check "skills show exits 0" rc_is 0
check "show lists inputs" out_has "max_terms"
check "show prints skill.md" out_has "Turns a code snippet"
cn skills show code_to_query --json
check "show --json has metadata" out_has '"operator": "text.code_to_query"'
cn skills show nope
check "show of an unknown skill: exit 1" rc_is 1
check "show names the unknown skill" err_has "no skill 'nope'"
cn skills show
check "show without an id: exit 2" rc_is 2
cn skills show fx_create_fails
check "show of a failing skill explains" out_has "reason:"

cn skills schema
check "schema exits 0" rc_is 0
check "schema has a function tool per usable skill" out_has '"name": "code_to_query"'
check "schema leaves failed skills out" sh -c '! grep -q "fx_abi_major" "$0"' "$OUT"
check "schema marks required inputs" out_has '"required": ['
cn skills schema --allow code_to_query,fx_good --exclude fx_good
check "allow then exclude" sh -c 'grep -q "\"name\": \"code_to_query\"" "$0" && ! grep -q "\"name\": \"fx_good\"" "$0"' "$OUT"
cn skills schema --allow ghost
check "allowing an unknown skill warns" err_has "--allow names 'ghost', which is not a skill"
check "and gives no tools" sh -c '[ "$(tr -d " \n" < "$0")" = "[]" ]' "$OUT"

cn skills check-flow code_to_query fx_good
check "check-flow mismatch: exit 1" rc_is 1
check "check-flow explains" err_has "the output of code_to_query (Dict[str, Any]) fits no input of fx_good"
cn skills check-flow code_to_query
check "check-flow needs two ids" rc_is 2

# Backends of the other kinds: listed from plugin.yaml with their state.
CODENIB_PLUGINS_PATH="$CN_FIXTURES/backends" cn plugins list
check "plugins list lists backends by kind" out_has "fxb-good         embedder     loaded"
check "plugins list exits 1 when a backend failed to load, the listing printed" sh -c '[ '"$rc"' -eq 1 ] && grep -q "^lang-python " "$0"' "$OUT"
check "saying how many failed" err_has "plugins failed to load (see the reasons above)"
check "a broken backend says why" out_has "does not export cn_backend_descriptor_fxb_nosym"
check "a kind mismatch is reported" out_has "plugin.yaml says kind vector-store but the library is of kind embedder"
check "an unreadable package is listed as broken" out_has "unknown plugin kind 'teleporter'"
CODENIB_PLUGINS_PATH="$CN_FIXTURES/backends" cn plugins list --json
check "plugins list --json gives the kind" out_has '"plugin_id":"fxb-abi","kind":"embedder","state":"failed"'
check "plugins list --json exits 1 too" rc_is 1
check "plugins list --json gives a loaded backend's ABI" out_has '"plugin_id":"fxb-good","kind":"embedder","state":"loaded","abi":"1.'
CODENIB_PLUGINS_PATH="$CN_FIXTURES/backends" cn plugins list --verbose
check "plugins list --verbose shows the ABI each plugin was built for" \
  sh -c 'grep -A3 "^fxb-good " "$0" | grep -q "abi: built for 1\.[0-9]*; codenib speaks 1\.2"' "$OUT"

done_testing
