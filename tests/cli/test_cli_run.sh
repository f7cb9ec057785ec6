#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# `codenib run`: invoking skills directly, argument coercion and errors.
. "$CN_SRCDIR/tests/cli/lib.sh"
export CODENIB_SKILLS_PATH="$CN_FIXTURES/all"

trace='Traceback (most recent call last):
  File "app/server.py", line 88, in handle_request
    conn = pool.acquire_connection(timeout)
  File "app/db/pool.py", line 42, in acquire_connection
    raise PoolExhaustedError("pool '"'"'primary'"'"' is empty")
app.db.pool.PoolExhaustedError: pool '"'"'primary'"'"' is empty'
args=$(printf '%s' "$trace" | awk 'BEGIN{ORS=""} {gsub(/\\/,"\\\\"); gsub(/"/,"\\\""); if (NR>1) print "\\n"; print}')
cn run code_to_query --args "{\"code\": \"$args\"}"
check "code_to_query runs" rc_is 0
check "query starts with the innermost frame function" out_has '"query":"acquire_connection handle_request PoolExhaustedError'
check "frames are 1-based as in the trace" out_has '{"file":"app/db/pool.py","line":42,"function":"acquire_connection"}'
check "the exception is reported" out_has '"type":"PoolExhaustedError","message":"pool '"'"'primary'"'"' is empty"'
check "quoted words become identifiers" out_has '"primary"'
check "paths are found" out_has '"paths":["app/server.py","app/db/pool.py"]'

printf '{"code": "static int parse_header(struct buf *b) { return read_u32(b); }", "max_terms": "3"}' > "$TMPBASE/args.json"
$CN_RUN "$CODENIB" run code_to_query --args - < "$TMPBASE/args.json" >"$OUT" 2>"$ERR"; rc=$?
check "--args - reads standard input" rc_is 0
check "max_terms given as a string is coerced and applied" out_has '"query":"parse_header read_u32 buf"'

printf 'src/io/reader.c:120:9: error: implicit declaration of function '"'"'fetch_block'"'"'\n' > "$TMPBASE/cc.txt"
args=$(awk 'BEGIN{ORS=""} {gsub(/"/,"\\\""); print}' "$TMPBASE/cc.txt")
cn run code_to_query --args "{\"code\": \"$args\"}"
check "compiler diagnostics give a frame" out_has '{"file":"src/io/reader.c","line":120,"function":null}'
check "and the error" out_has '"type":"error","message":"implicit declaration of function '"'"'fetch_block'"'"'"'
check "quoted identifier reaches the query" out_has 'fetch_block'

cn run code_to_query --args '{"code": "x", "max_terms": "lots"}'
check "a bad argument type: exit 1" rc_is 1
check "names argument, value and type" err_has "argument 'max_terms': expected int, got \"lots\""
cn run code_to_query --args '{}'
check "missing required argument: exit 1" rc_is 1
check "names the missing argument" err_has "missing required argument 'code'"
cn run code_to_query --args '{"code": "x", "colour": "red"}'
check "unknown argument refused" err_has "unknown argument 'colour' (it takes: code, max_terms, include_paths)"
cn run code_to_query --args '{"code": '
check "malformed JSON refused" sh -c '[ '"$rc"' -eq 1 ] && grep -q "arguments is not valid JSON" "$0"' "$ERR"
cn run code_to_query --args '{"code": "x", "max_terms": 0}'
check "a bound of the schema enforced before the skill runs" err_has "skill 'code_to_query': argument 'max_terms' must be between 1 and 1000, got 0"
cn run no_such_skill
check "unknown skill: exit 1" sh -c '[ '"$rc"' -eq 1 ] && grep -q "no skill '"'"'no_such_skill'"'"'" "$0"' "$ERR"
cn run
check "run without an id: exit 2" rc_is 2
cn run code_to_query --args
check "--args without a value: exit 2" rc_is 2

# The line-number boundary, observed through the echo fixture.
cn run fx_good --args '{"text": "t", "line": 5}'
check "fx_good runs" rc_is 0
check "a 1-based line arrives 0-based in the skill" out_has '"line_in":4'
check "and leaves 1-based again" out_has '"start_line":5'
check "config defaults apply (count 2)" out_has '"count":2'
cn run fx_good --args '{"text": "t"}' --params '{"count": 7}'
check "caller parameters override config defaults" out_has '"count":7'
cn run fx_good --args '{"text": "t", "count": 9}' --params '{"count": 7}'
check "model arguments override caller parameters" out_has '"count":9'
cn run fx_good --args '{"text": "t"}' --params '{"line": 3}'
check "caller line numbers are 1-based too" out_has '"line_in":2'
cn run fx_good --args '{"text": "t", "line": 0}'
check "line 0 refused" err_has "line numbers start at 1, got 0"
cn run fx_good --args '{"text": "t", "mode": "medium"}'
check "enum values checked" err_has "argument 'mode'"
cn run fx_good --args '{"text": "t", "tags": "one"}'
check "a scalar becomes a one-element list" out_has '"tags":["one"]'

mkdir -p "$TMPBASE/repo/sub"
printf 'hello repository\n' > "$TMPBASE/repo/sub/a.txt"
ln -s /etc/hostname "$TMPBASE/repo/escape"
cn run fx_good --repo "$TMPBASE/repo" --args '{"text": "t", "file": "sub/a.txt"}'
check "a skill reads a repository file through the host" out_has '"file_head":"hello repository'
cn run fx_good --repo "$TMPBASE/repo" --args '{"text": "t", "file": "../repo/sub/a.txt"}'
check "'..' refused" err_has "'..' is refused"
cn run fx_good --repo "$TMPBASE/repo" --args '{"text": "t", "file": "escape"}'
check "a symlink out of the repository refused" err_has "symbolic link"
cn run fx_good --repo "$TMPBASE/repo" --args '{"text": "t", "file": "/etc/hostname"}'
check "absolute paths refused" err_has "absolute paths are refused"
cn run fx_good --args '{"text": "t", "file": "sub/a.txt"}'
check "no repository: the skill says what it needs" err_has "needs a repository (pass --repo DIR)"
cn run fx_good --repo "$TMPBASE/nowhere" --args '{"text": "t"}'
check "a missing repository is named" err_has "repository $TMPBASE/nowhere: No such file or directory"

cn run fx_abi_major --args '{"text": "t"}'
check "a broken plugin fails with its reason" sh -c '[ '"$rc"' -eq 1 ] && grep -q "skill ABI 99\." "$0"' "$ERR"
cn run fx_good --args '{"text": "t", "garbage": true}'
check "garbage from a skill is an error, not a crash" sh -c '[ '"$rc"' -eq 1 ] && grep -q "returned invalid JSON" "$0"' "$ERR"
cn run fx_good --pretty --args '{"text": "t"}'
check "--pretty indents" sh -c 'grep -q "^  \"tag\": \"plain\"" "$0"' "$OUT"

done_testing
