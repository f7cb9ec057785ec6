#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Calls through typed receivers in Python (tests/fixtures/graph/receivers):
# find_callers and trace see calls on parameters with annotations, locals
# assigned from a constructor and self.x = Cls() attributes; a receiver
# of unknown type gives an unresolved candidate edge listing the methods
# it may call, and trace falls back through such guessed calls (marked)
# only when no path of resolved calls exists.
. "$CN_SRCDIR/tests/cli/lib.sh"
unset CODENIB_SKILLS_PATH

if [ ! -f "$CN_BUILDDIR/_plugins/lang-python/lang_python.so" ]; then
  echo "1..0 # SKIP the python backend was not built (run scripts/fetch-grammars.sh, then configure)"
  exit 0
fi

out_lacks() { ! grep -q -F -- "$1" "$OUT"; }

repo=$TMPBASE/repo
cp -R "$CN_SRCDIR/tests/fixtures/graph/receivers" "$repo"
chmod -R u+w "$repo"
cn compile "$repo" --cache-dir "$TMPBASE/cache" --quiet
check "the receivers fixture compiles" rc_is 0
run() { cn run "$1" --repo "$repo" --cache-dir "$TMPBASE/cache" --args "$2"; }

n_send='"node_name":"pkg/sessions.py:Session.send","type":"method","file":"pkg/sessions.py","start_line":21,"node_id":16,"end_line":23'
n_build='"node_name":"pkg/sessions.py:Session.build","type":"method","file":"pkg/sessions.py","start_line":25,"node_id":17,"end_line":28'
n_maybe='"node_name":"pkg/sessions.py:Session.maybe","type":"method","file":"pkg/sessions.py","start_line":30,"node_id":18,"end_line":31'
n_unknown='"node_name":"pkg/sessions.py:Session.unknown","type":"method","file":"pkg/sessions.py","start_line":33,"node_id":19,"end_line":34'
n_resend='"node_name":"pkg/sessions.py:Session.resend","type":"method","file":"pkg/sessions.py","start_line":36,"node_id":20,"end_line":37'
n_shadow='"node_name":"pkg/sessions.py:Session.shadow","type":"method","file":"pkg/sessions.py","start_line":39,"node_id":21,"end_line":40'
n_mixed='"node_name":"pkg/sessions.py:Session.mixed","type":"method","file":"pkg/sessions.py","start_line":42,"node_id":22,"end_line":46'
n_asend='"node_name":"pkg/sessions.py:Adapter.send","type":"method","file":"pkg/sessions.py","start_line":12,"node_id":13,"end_line":13'
n_len='"node_name":"pkg/sessions.py:super_len","type":"function","file":"pkg/sessions.py","start_line":7,"node_id":11,"end_line":8'
cands_prepare='"candidates":["pkg/models.py:PreparedRequest.prepare","pkg/models.py:Other.prepare","pkg/models.py:Third.prepare"]'

# ---- find_callers through typed receivers ---------------------------------
run find_callers '{"symbol": "PreparedRequest.prepare"}'
check "find_callers: a call on an annotated parameter (request: PreparedRequest)" \
  out_has '{'"$n_send"',"resolved":true,"edge":"calls","line":22,"depth":1}'
check "find_callers: a call on a local assigned from the constructor (p = PreparedRequest())" \
  out_has '{'"$n_build"',"resolved":true,"edge":"calls","line":27,"depth":1}'
check "find_callers: Optional[\"models.PreparedRequest\"] names the class too" \
  out_has '{'"$n_maybe"',"resolved":true,"edge":"calls","line":31,"depth":1}'
check "find_callers: an untyped parameter's call is an unresolved candidate with the methods it may be" \
  out_has '{'"$n_unknown"',"resolved":false,"name":"thing.prepare",'"$cands_prepare"',"edge":"calls","line":34,"depth":1}'
check "find_callers: a parameter shadowing the class name is not taken for the class" \
  out_has '{'"$n_shadow"',"resolved":false,"name":"PreparedRequest.prepare",'
check "find_callers: a local bound to two classes stays a candidate (q.prepare)" \
  out_has '{'"$n_mixed"',"resolved":false,"name":"q.prepare",'
check "find_callers: resolved callers first, 6 in all, 3 of them unresolved" \
  out_has '"results":[{'"$n_send"',"resolved":true'
check "find_callers: totals" out_has '"total":6,"unresolved":3,"truncated":false}'

run find_callers '{"symbol": "PreparedRequest.prepare", "include_unresolved": false}'
check "find_callers include_unresolved false: only the 3 resolved calls" out_has '"total":3,"truncated":false}'
check "find_callers include_unresolved false: no candidate" out_lacks '"resolved":false'

run find_callers '{"symbol": "Other.prepare"}'
check "find_callers: a typed call to another class is not a candidate of Other.prepare" out_lacks "$n_send"
check "find_callers: Other.prepare gets the three unknown receivers only" out_has '"total":3,"unresolved":3,'

run find_callers '{"symbol": "Adapter.send"}'
check "find_callers: self.adapter = Adapter() types self.adapter.send in another method" \
  out_has '"results":[{'"$n_send"',"resolved":true,"edge":"calls","line":23,"depth":1},{'"$n_resend"',"resolved":false,"name":"adapter.send","candidates":["pkg/sessions.py:Adapter.send","pkg/sessions.py:Session.send"],"edge":"calls","line":37,"depth":1}],"total":2,"unresolved":1'

run find_callees '{"symbol": "Session.unknown"}'
check "find_callees: an unresolved callee on a receiver lists its candidates" \
  out_has '{"resolved":false,"name":"thing.prepare",'"$cands_prepare"',"edge":"calls","line":34,"depth":1}'

# ---- trace ------------------------------------------------------------------
run trace '{"source": "Session.send", "target": "super_len"}'
check "trace: Session.send -> Adapter.send -> super_len through self.adapter, nothing guessed" \
  out_has '"paths":[{"length":2,"nodes":[{'"$n_send"',"edge":"calls","line":23},{'"$n_asend"',"edge":"calls","line":13},{'"$n_len"'}]}],"truncated":false}'
check "trace: a resolved path is not marked guessed" out_lacks '"guessed"'

run trace '{"source": "Session.resend", "target": "super_len"}'
check "trace: no resolved path, so it falls back through adapter.send, the hop marked guessed" \
  out_has '"paths":[{"length":2,"nodes":[{'"$n_resend"',"edge":"calls","line":37,"guessed":true},{'"$n_asend"',"edge":"calls","line":13},{'"$n_len"'}]},'
check "trace: the result says the paths are guessed" out_has '"truncated":false,"guessed":true,"note":"no path of resolved calls exists'

run trace '{"source": "super_len", "target": "Session.resend", "direction": "up"}'
check "trace up: the same guessed path, callers first, the guessed call marked on resend" \
  out_has '"paths":[{"length":2,"nodes":[{'"$n_resend"',"edge":"calls","line":37,"guessed":true},{'"$n_asend"',"edge":"calls","line":13},{'"$n_len"'}]},'

run trace '{"source": "Session.resend", "target": "super_len", "guess": false}'
check "trace guess false: no path" out_has '"paths":[],"truncated":false}'

done_testing
