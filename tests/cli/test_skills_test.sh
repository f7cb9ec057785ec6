#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# `codenib skills test DIR`: one package checked on its own -- config, shared
# object, executor and its declared examples -- as a plugin author or a
# packager runs it.  Broken packages fail with the reason, hostile example
# paths are refused, and nothing else on the search path is loaded.
. "$CN_SRCDIR/tests/cli/lib.sh"
need_python_backend

skills=$CN_BUILDDIR/_skills
fx=$CN_FIXTURES/all

cn skills test "$skills/bm25_search"
check "a shipped skill with an example: exit 0" rc_is 0
check "... config, shared object, executor and the example pass" out_has "4 passed, 0 failed"
check "... the example ran against a compiled repository of its files" \
  out_has 'ok    example 1 "a function found by the words of its body"'
check "... the shared object's ABI is named" out_has "built for ABI 1.2 (codenib 1.2)"
cn skills test --json "$skills/find_callers"
check "--json: one object with the checks" \
  sh -c 'grep -q "\"skill_id\":\"find_callers\"" "$0" && grep -q "\"passed\":4,\"failed\":0" "$0"' "$OUT"

all_ok=yes
for d in "$skills"/*/; do
  cn skills test "$d"
  [ "$rc" -eq 0 ] || { all_ok=no; echo "# failed: $d"; }
done
check "every built skill passes its own test" [ "$all_ok" = yes ]

# in isolation: broken packages on the search path are not loaded
CODENIB_SKILLS_PATH=$fx cn skills test "$skills/bm25_search"
check "broken packages on the search path do not matter" rc_is 0
check "... and are not mentioned" sh -c '! grep -q "fx_" "$0"' "$OUT"

# broken packages: exit 1 with the reason
cn skills test "$fx/fx_bad_yaml"
check "malformed config.yaml: exit 1" rc_is 1
check "... FAIL with file:line" sh -c 'grep -q "^FAIL  config.yaml: .*config.yaml:[0-9]*" "$0"' "$OUT"
cn skills test "$fx/fx_missing_so"
check "a missing shared object: exit 1" rc_is 1
check "... named" sh -c 'grep -q "^FAIL  shared object: .*missing" "$0"' "$OUT"
cn skills test "$fx/fx_abi_minor"
check "a newer ABI: exit 1" rc_is 1
check "... the loader's reason" out_has "newer SDK"
cn skills test "$fx/fx_create_fails"
check "create_executor failing: exit 1" rc_is 1
check "... FAIL executor" sh -c 'grep -q "^FAIL  executor" "$0"' "$OUT"

# a failing example, and a wrong expectation of an error
pkg=$TMPBASE/pkg
cp -R "$skills/bm25_search" "$pkg"
sed 's/shop\/cart.py:total_price/shop\/users.py:nowhere/' "$skills/bm25_search/config.yaml" > "$pkg/config.yaml"
cn skills test "$pkg"
check "an example whose expectation fails: exit 1" rc_is 1
check "... saying which string the result lacks" out_has "the result lacks '\"node_name\":\"shop/users.py:nowhere\"'"
sed 's/      contains: .*/      error: true/' "$skills/bm25_search/config.yaml" > "$pkg/config.yaml"
cn skills test "$pkg"
check "an error expected but a result came: exit 1" rc_is 1
check "... said" out_has "expected an error, got a result"

# hostile example paths are refused before anything is written
for bad in "../escape.py" "/tmp/abs.py" "a//b.py" "x/../../y.py"; do
  { sed '/^examples:/,$d' "$skills/bm25_search/config.yaml"
    printf 'examples:\n  - args: {query: x}\n    files:\n      "%s": "x = 1\\n"\n' "$bad"; } > "$pkg/config.yaml"
  cn skills test "$pkg"
  check "example file '$bad': refused (exit 1)" rc_is 1
  check "... in config.yaml, naming it" out_has "file '$bad': a path inside the example repository"
done
check "nothing escaped the example repository" sh -c '[ ! -e "$0/escape.py" ] && [ ! -e /tmp/abs.py ]' "$TMPBASE"
printf 'examples:\n  - args: {query: x}\n    expect: {contains: x}\n' > "$TMPBASE/tail"
{ sed '/^examples:/,$d' "$skills/bm25_search/config.yaml"; cat "$TMPBASE/tail"; } > "$pkg/config.yaml"
cn skills test "$pkg"
check "expect.contains that is not a list: refused" out_has "expect.contains must be a list of strings"

# usage
cn skills test
check "no directory: exit 2" rc_is 2
cn skills test "$skills/bm25_search" "$skills/trace"
check "two directories: exit 2" rc_is 2
cn skills test --bogus "$skills/bm25_search"
check "an unknown option: exit 2" rc_is 2
cn skills test "$TMPBASE/nowhere"
check "not a directory: exit 1" rc_is 1
check "... said" err_has "is not a directory"
cn skills test --help
check "--help explains examples" out_has "examples:"

done_testing
