#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The graph navigation skills find_callers, find_callees and trace on the
# fixture repositories of tests/fixtures/graph (their *.expected files list
# every edge): exact results with the 1-based lines a user sees, symbol
# resolution (qualified, fuzzy, ambiguous, not found, unresolved names),
# containment never leaking in, depth, paths and their limits, bad
# arguments and an index compiled without its graph.
. "$CN_SRCDIR/tests/cli/lib.sh"
unset CODENIB_SKILLS_PATH

if [ ! -f "$CN_BUILDDIR/_plugins/lang-python/lang_python.so" ] || [ ! -f "$CN_BUILDDIR/_plugins/lang-c/lang_c.so" ]; then
  echo "1..0 # SKIP the python and c backends were not built (run scripts/fetch-grammars.sh, then configure)"
  exit 0
fi

out_lacks() { ! grep -q -F -- "$1" "$OUT"; }

py=$TMPBASE/py
c=$TMPBASE/c
cp -R "$CN_SRCDIR/tests/fixtures/graph/python" "$py"
cp -R "$CN_SRCDIR/tests/fixtures/graph/c" "$c"
chmod -R u+w "$py" "$c"

cn compile "$py" --cache-dir "$TMPBASE/pyc" --quiet
check "the python fixture compiles" rc_is 0
cn compile "$c" --cache-dir "$TMPBASE/cc" --quiet
check "the c fixture compiles" rc_is 0

pyrun() { cn run "$1" --repo "$py" --cache-dir "$TMPBASE/pyc" --args "$2"; }
crun() { cn run "$1" --repo "$c" --cache-dir "$TMPBASE/cc" --args "$2"; }

# Node objects as results print them (lines 1-based).
n_release='"node_name":"pkg/base.py:Base.release","type":"method","file":"pkg/base.py","start_line":2,"node_id":4,"end_line":3'
n_close='"node_name":"pkg/base.py:Base.close","type":"method","file":"pkg/base.py","start_line":5,"node_id":5,"end_line":6'
n_get='"node_name":"pkg/pool.py:ConnectionPool.get","type":"method","file":"pkg/pool.py","start_line":8,"node_id":15,"end_line":10'
n_check='"node_name":"pkg/pool.py:ConnectionPool._check","type":"method","file":"pkg/pool.py","start_line":12,"node_id":16,"end_line":13'
n_pool='"node_name":"pkg/pool.py:ConnectionPool","type":"class","file":"pkg/pool.py","start_line":4,"node_id":13,"end_line":13'
n_save='"node_name":"pkg/models.py:User.save","type":"method","file":"pkg/models.py","start_line":5,"node_id":9,"end_line":6'
n_load='"node_name":"pkg/models.py:User.load","type":"method","file":"pkg/models.py","start_line":8,"node_id":10,"end_line":10'
n_run='"node_name":"pkg/service.py:run","type":"function","file":"pkg/service.py","start_line":7,"node_id":19,"end_line":13'
n_helper='"node_name":"pkg/util.py:helper","type":"function","file":"pkg/util.py","start_line":4,"node_id":22,"end_line":9'
n_inner='"node_name":"pkg/util.py:helper.inner","type":"function","file":"pkg/util.py","start_line":5,"node_id":23,"end_line":6'
n_base='"node_name":"pkg/base.py:Base","type":"class","file":"pkg/base.py","start_line":1,"node_id":3,"end_line":6'

# ---- find_callers / find_callees on a unique symbol ----------------------
pyrun find_callers '{"symbol": "Base.release"}'
check "find_callers: a qualified name resolves" out_has '"status":"ok","symbol":{'"$n_release"'},"match":"qualified"'
check "find_callers: both callers with their call lines (6 and 9)" \
  out_has '"results":[{'"$n_close"',"resolved":true,"edge":"calls","line":6,"depth":1},{'"$n_get"',"resolved":true,"edge":"calls","line":9,"depth":1}],"total":2,"truncated":false}'

pyrun find_callees '{"symbol": "pkg/pool.py:ConnectionPool.get"}'
check "find_callees: a full node_name resolves exactly" out_has '"symbol":{'"$n_get"'},"match":"qualname"'
check "find_callees: callees in reading order, use-site lines 9 and 10" \
  out_has '"results":[{'"$n_release"',"resolved":true,"edge":"calls","line":9,"depth":1},{'"$n_check"',"resolved":true,"edge":"calls","line":10,"depth":1}],"total":2'

pyrun find_callees '{"symbol": "run"}'
check "find_callees run: calls, references and an unresolved call, by line" \
  out_has '"results":[{'"$n_pool"',"resolved":true,"edge":"calls","line":8,"depth":1},{'"$n_helper"',"resolved":true,"edge":"calls","line":9,"depth":1},{'"$n_save"',"resolved":true,"edge":"references","line":10,"depth":1},{'"$n_close"',"resolved":true,"edge":"calls","line":11,"depth":1},{"resolved":false,"name":"obj.save","edge":"calls","line":12,"depth":1},{'"$n_base"',"resolved":true,"edge":"references","line":13,"depth":1}],"total":6'

# ---- calls only vs references --------------------------------------------
pyrun find_callers '{"symbol": "User.save"}'
check "find_callers with references: the two references on line 10" \
  out_has '"results":[{'"$n_load"',"resolved":true,"edge":"references","line":10,"depth":1},{'"$n_run"',"resolved":true,"edge":"references","line":10,"depth":1}]'
pyrun find_callers '{"symbol": "User.save", "include_references": false}'
check "find_callers calls only: User.save is never called" out_has '"results":[],"total":0,"truncated":false'
pyrun find_callees '{"symbol": "run", "include_references": false}'
check "find_callees calls only: no reference edge" out_lacks '"edge":"references"'
check "find_callees calls only: the four calls remain" out_has '"total":4'

# ---- depth ----------------------------------------------------------------
pyrun find_callers '{"symbol": "Base.release", "depth": 2, "include_references": false}'
check "depth 2: callers of the callers, each saying its depth and via" \
  out_has '"results":[{'"$n_close"',"resolved":true,"edge":"calls","line":6,"depth":1},{'"$n_get"',"resolved":true,"edge":"calls","line":9,"depth":1},{'"$n_save"',"resolved":true,"edge":"calls","line":6,"depth":2,"via":"pkg/base.py:Base.close"},{'"$n_run"',"resolved":true,"edge":"calls","line":11,"depth":2,"via":"pkg/base.py:Base.close"}],"total":4'
pyrun find_callees '{"symbol": "run", "include_references": false, "depth": 2}'
check "depth 2 callees: an unresolved call below a callee" \
  out_has '{"resolved":false,"name":"json.loads","edge":"calls","line":9,"depth":2,"via":"pkg/util.py:helper"}'
check "depth 2 callees: a callee of a callee" \
  out_has '{'"$n_release"',"resolved":true,"edge":"calls","line":6,"depth":2,"via":"pkg/base.py:Base.close"}'
pyrun find_callers '{"symbol": "helper", "depth": 3}'
check "a reference cycle (inner names helper) does not come back to the symbol" \
  out_has '"results":[{'"$n_run"',"resolved":true,"edge":"calls","line":9,"depth":1},{'"$n_inner"',"resolved":true,"edge":"references","line":6,"depth":1}],"total":2'

# ---- containment never counts --------------------------------------------
pyrun find_callers '{"symbol": "ConnectionPool.get"}'
check "the class containing a method is not its caller" out_has '"results":[],"total":0'
pyrun find_callees '{"symbol": "ConnectionPool"}'
check "the methods of a class are not its callees" out_has '"symbol":{'"$n_pool"'},"match":"name","results":[],"total":0'
pyrun find_callees '{"symbol": "Base", "depth": 3}'
check "no contains edge at any depth" out_lacks '"contains"'

# ---- unresolved names ------------------------------------------------------
pyrun find_callees '{"symbol": "helper"}'
check "find_callees lists a library call as an unresolved entry" \
  out_has '"results":[{'"$n_inner"',"resolved":true,"edge":"calls","line":8,"depth":1},{"resolved":false,"name":"json.loads","edge":"calls","line":9,"depth":1}]'
pyrun find_callers '{"symbol": "json.loads"}'
check "find_callers of a library function finds its use site" \
  out_has '{"status":"ok","symbol":{"name":"json.loads","resolved":false},"match":"unresolved","results":[{'"$n_helper"',"resolved":true,"name":"json.loads","edge":"calls","line":9,"depth":1}]'
pyrun find_callers '{"symbol": "loads"}'
check "find_callers by the last component of the written name (not fuzzy 'load')" \
  out_has '"match":"unresolved","results":[{'"$n_helper"
pyrun find_callees '{"symbol": "json.loads"}'
check "find_callees of a library function: not found, with a hint" \
  out_has '"status":"not_found","symbol":"json.loads","suggestions":[],"hint":"'"'"'json.loads'"'"' is not defined in the repository; it is used at 1 place(s)'
crun find_callers '{"symbol": "malloc"}'
check "C: callers of malloc (line 12 of list.c)" \
  out_has '"results":[{"node_name":"list.c:list_push","type":"function","file":"list.c","start_line":10,"node_id":8,"end_line":19,"resolved":true,"name":"malloc","edge":"calls","line":12,"depth":1}]'

# ---- fuzzy, ambiguous, not found ------------------------------------------
pyrun find_callers '{"symbol": "relase"}'
check "a misspelt name resolves fuzzily and says so" out_has '"symbol":{'"$n_release"'},"match":"fuzzy"'
pyrun find_callees '{"symbol": "connectionpool.GET"}'
check "case does not matter to the fuzzy match" out_has '"symbol":{'"$n_get"'},"match":"fuzzy"'
pyrun find_callers '{"symbol": "releas_all"}'
check "not found: status and the closest name, exit 0" \
  sh -c '[ '"$rc"' -eq 0 ] && grep -q -F "{\"status\":\"not_found\",\"symbol\":\"releas_all\",\"suggestions\":[\"pkg/base.py:Base.release\"]" "$0"' "$OUT"
pyrun find_callers '{"symbol": "frobnicate"}'
check "not found with nothing close: empty suggestions" out_has '"status":"not_found","symbol":"frobnicate","suggestions":[]'
crun find_callers '{"symbol": "helper"}'
check "ambiguous: the three definitions, not the prototype in other.c" \
  out_has '{"status":"ambiguous","symbol":"helper","candidates":[{"node_name":"list.c:helper","type":"function","file":"list.c","start_line":5,"node_id":7,"end_line":8},{"node_name":"main.c:helper","type":"function","file":"main.c","start_line":10,"node_id":18,"end_line":13},{"node_name":"util.c:helper","type":"function","file":"util.c","start_line":3,"node_id":31,"end_line":6}],"total_candidates":3,"hint":'
check "ambiguous: the hint says how to choose" out_has 'no guess was made'
crun find_callers '{"symbol": "helper", "file_path": "util.c"}'
check "file_path picks one: other.c calls util.c:helper on line 8" \
  out_has '"symbol":{"node_name":"util.c:helper","type":"function","file":"util.c","start_line":3,"node_id":31,"end_line":6},"match":"name","results":[{"node_name":"other.c:other","type":"function","file":"other.c","start_line":6,"node_id":26,"end_line":12,"resolved":true,"edge":"calls","line":8,"depth":1}]'
crun find_callers '{"symbol": "list_len"}'
check "a prototype next to its definition is no ambiguity" \
  out_has '"symbol":{"node_name":"list.h:list_len","type":"function","file":"list.h","start_line":13,"node_id":14,"end_line":16},"match":"name"'
check "recursion is a caller (line 15), then main (20) and x (7)" \
  out_has '"results":[{"node_name":"list.h:list_len","type":"function","file":"list.h","start_line":13,"node_id":14,"end_line":16,"resolved":true,"edge":"calls","line":15,"depth":1},{"node_name":"main.c:main","type":"function","file":"main.c","start_line":15,"node_id":19,"end_line":24,"resolved":true,"edge":"calls","line":20,"depth":1},{"node_name":"sub/x.c:x","type":"function","file":"sub/x.c","start_line":4,"node_id":28,"end_line":8,"resolved":true,"edge":"calls","line":7,"depth":1}]'

# ---- content, top_k ---------------------------------------------------------
pyrun find_callers '{"symbol": "Base.close", "top_k": 1, "return_content": true, "wrap_with_line_numbers": true}'
check "top_k cuts and says so" out_has '"total":2,"truncated":true'
check "content with a 1-based gutter" \
  out_has '"content":"     5\t    def save(self):\n     6\t        return self.close()\n","resolved":true,"edge":"calls","line":6,"depth":1}]'

# ---- trace -----------------------------------------------------------------
pyrun trace '{"source": "run", "target": "Base.release"}'
check "trace: the exact path run -> Base.close -> Base.release" \
  out_has '{"status":"ok","direction":"down","source":{'"$n_run"'},"target":{'"$n_release"'},"paths":[{"length":2,"nodes":[{'"$n_run"',"edge":"calls","line":11},{'"$n_close"',"edge":"calls","line":6},{'"$n_release"'}]}],"truncated":false}'
pyrun trace '{"source": "run", "target": "Base.release", "include_references": true}'
check "trace with references: the longer path through the reference to User.save comes second" \
  out_has '{"length":3,"nodes":[{'"$n_run"',"edge":"references","line":10},{'"$n_save"',"edge":"calls","line":6},{'"$n_close"',"edge":"calls","line":6},{'"$n_release"'}]}],"truncated":false'
pyrun trace '{"source": "Base.release"}'
check "trace up: three entry points, shortest first, in call order" \
  out_has '"direction":"up","source":{'"$n_release"'},"target":null,"paths":[{"length":1,"nodes":[{'"$n_get"',"edge":"calls","line":9},{'"$n_release"'}]},{"length":2,"nodes":[{'"$n_save"',"edge":"calls","line":6},{'"$n_close"',"edge":"calls","line":6},{'"$n_release"'}]},{"length":2,"nodes":[{'"$n_run"',"edge":"calls","line":11},{'"$n_close"',"edge":"calls","line":6},{'"$n_release"'}]}],"truncated":false}'
pyrun trace '{"source": "Base.release", "max_paths": 1}'
check "max_paths cuts: one path, truncated" out_has '"paths":[{"length":1,"nodes":[{'"$n_get"',"edge":"calls","line":9},{'"$n_release"'}]}],"truncated":true}'
pyrun trace '{"source": "run", "target": "Base.release", "max_depth": 1}'
check "max_depth too short: no path, truncated, the shortest length given" \
  out_has '"paths":[],"truncated":true,"shortest_length":2}'
pyrun trace '{"source": "Base.release", "max_depth": 1}'
check "max_depth cuts the walk up: only the direct entry point, truncated" \
  out_has '"paths":[{"length":1,"nodes":[{'"$n_get"',"edge":"calls","line":9},{'"$n_release"'}]}],"truncated":true}'
pyrun trace '{"source": "Base.release", "target": "run"}'
check "no path (release calls nothing): status ok, no paths, not truncated" \
  sh -c '[ '"$rc"' -eq 0 ] && grep -q -F "\"paths\":[],\"truncated\":false}" "$0"' "$OUT"
pyrun trace '{"source": "Base.release", "target": "run", "direction": "up"}'
check "the same pair going up: run calls ... Base.release" \
  out_has '"direction":"up","source":{'"$n_release"'},"target":{'"$n_run"'},"paths":[{"length":2,"nodes":[{'"$n_run"',"edge":"calls","line":11},{'"$n_close"',"edge":"calls","line":6},{'"$n_release"'}]}]'
pyrun trace '{"source": "run", "target": "json.loads"}'
check "trace to a library function ends in the unresolved name" \
  out_has '"target":{"name":"json.loads","resolved":false},"paths":[{"length":2,"nodes":[{'"$n_run"',"edge":"calls","line":9},{'"$n_helper"',"edge":"calls","line":9},{"resolved":false,"name":"json.loads"}]}]'
crun trace '{"source": "list_len"}'
check "trace up through recursion: x (line 7) and main (line 20)" \
  out_has '"paths":[{"length":1,"nodes":[{"node_name":"sub/x.c:x","type":"function","file":"sub/x.c","start_line":4,"node_id":28,"end_line":8,"edge":"calls","line":7},{"node_name":"list.h:list_len","type":"function","file":"list.h","start_line":13,"node_id":14,"end_line":16}]},{"length":1,"nodes":[{"node_name":"main.c:main","type":"function","file":"main.c","start_line":15,"node_id":19,"end_line":24,"edge":"calls","line":20},{"node_name":"list.h:list_len","type":"function","file":"list.h","start_line":13,"node_id":14,"end_line":16}]}],"truncated":false}'
crun trace '{"source": "main", "target": "dup"}'
check "trace: an ambiguous target gives its candidates" \
  out_has '{"status":"ambiguous","target":"dup","candidates":[{"node_name":"dup.c:dup","type":"function","file":"dup.c","start_line":3,"node_id":1,"end_line":6},{"node_name":"old/legacy.c:dup","type":"function","file":"old/legacy.c","start_line":1,"node_id":21,"end_line":4}]'
crun trace '{"source": "main", "target": "dup.c:dup"}'
check "trace: the chosen candidate, one call on line 22" \
  out_has '"paths":[{"length":1,"nodes":[{"node_name":"main.c:main","type":"function","file":"main.c","start_line":15,"node_id":19,"end_line":24,"edge":"calls","line":22},{"node_name":"dup.c:dup","type":"function","file":"dup.c","start_line":3,"node_id":1,"end_line":6}]}]'
pyrun trace '{"source": "frobnicate"}'
check "trace: an unknown source is not_found" out_has '{"status":"not_found","source":"frobnicate"'

# ---- a dense graph: shortest paths first without exploring every prefix ---
# f0 .. f60, each calling the next ten: one path of 6 calls (by tens), then
# very many of 7 and more.
g=$TMPBASE/g
mkdir -p "$g"
i=0
while [ $i -le 60 ]; do
  echo "def f$i():"
  j=$((i + 1))
  while [ $j -le $((i + 10)) ] && [ $j -le 60 ]; do echo "    f$j()"; j=$((j + 1)); done
  printf '    return None\n\n\n'
  i=$((i + 1))
done > "$g/chain.py"
cn compile "$g" --cache-dir "$TMPBASE/gc" --quiet
check "the dense repository compiles" rc_is 0
cn run trace --repo "$g" --cache-dir "$TMPBASE/gc" --args '{"source": "f0", "target": "f60", "max_depth": 12, "max_paths": 2}'
names=$(sed 's/"paths":/\n/' "$OUT" | tail -n 1 | grep -o '"node_name":"[^"]*"' | sed 's/"node_name":"chain.py://; s/"$//' | tr '\n' ' ')
check "dense graph: the 6-call path, then the first 7-call one in use-site order" \
  test "$names" = "f0 f10 f20 f30 f40 f50 f60 f0 f1 f10 f20 f30 f40 f50 f60 "
check "dense graph: lengths 6 and 7, truncated (more exist)" \
  sh -c 'grep -q -F "\"length\":6," "$0" && grep -q -F "\"length\":7," "$0" && grep -q -F "\"truncated\":true}" "$0"' "$OUT"
cn run trace --repo "$g" --cache-dir "$TMPBASE/gc" --args '{"source": "f0", "target": "f60", "max_depth": 5}'
check "dense graph: max_depth 5 is one short of the shortest path" out_has '"paths":[],"truncated":true,"shortest_length":6}'

# ---- tests are left out on request ----------------------------------------
t=$TMPBASE/t
mkdir -p "$t/app" "$t/tests"
cat > "$t/app/core.py" <<'PY'
def parse(text):
    return text.strip()


def load(path):
    return parse(path)
PY
cat > "$t/tests/test_core.py" <<'PY'
from app.core import load


def test_load():
    assert load(" x ") == "x"


def run_all():
    test_load()
PY
cn compile "$t" --cache-dir "$TMPBASE/tc" --quiet
check "a repository with tests compiles" rc_is 0
cn run find_callers --repo "$t" --cache-dir "$TMPBASE/tc" --args '{"symbol": "load"}'
check "the test calling load is a caller (line 5)" \
  out_has '"results":[{"node_name":"tests/test_core.py:test_load","type":"function","file":"tests/test_core.py","start_line":4,"node_id":5,"end_line":5,"resolved":true,"edge":"calls","line":5,"depth":1}],"total":1'
cn run find_callers --repo "$t" --cache-dir "$TMPBASE/tc" --args '{"symbol": "load", "filter_test": true}'
check "filter_test leaves it out" out_has '"results":[],"total":0'
cn run trace --repo "$t" --cache-dir "$TMPBASE/tc" --args '{"source": "parse"}'
check "trace up ends at the test function, though run_all calls it" \
  out_has '"paths":[{"length":2,"nodes":[{"node_name":"tests/test_core.py:test_load","type":"function","file":"tests/test_core.py","start_line":4,"node_id":5,"end_line":5,"edge":"calls","line":5},{"node_name":"app/core.py:load","type":"function","file":"app/core.py","start_line":5,"node_id":2,"end_line":6,"edge":"calls","line":6},{"node_name":"app/core.py:parse","type":"function","file":"app/core.py","start_line":1,"node_id":1,"end_line":2}]}],"truncated":false}'

# ---- bad arguments ----------------------------------------------------------
pyrun find_callers '{"symbol": "run", "top_k": 0}'
check "top_k 0: exit 1 and says the range" \
  sh -c '[ '"$rc"' -eq 1 ] && grep -q -F "argument '"'"'top_k'"'"' must be between 1 and 500, got 0" "$0"' "$ERR"
pyrun find_callees '{"symbol": "run", "depth": 9}'
check "depth 9: exit 1 and says the range" \
  sh -c '[ '"$rc"' -eq 1 ] && grep -q -F "argument '"'"'depth'"'"' must be between 1 and 3, got 9" "$0"' "$ERR"
pyrun find_callers '{"symbol": "  "}'
check "an empty symbol: exit 1, says what to pass" \
  sh -c '[ '"$rc"' -eq 1 ] && grep -q -F "the symbol to look up is empty" "$0"' "$ERR"
pyrun trace '{"source": "run", "max_depth": 13}'
check "trace max_depth 13: exit 1" \
  sh -c '[ '"$rc"' -eq 1 ] && grep -q -F "argument '"'"'max_depth'"'"' must be between 1 and 12, got 13" "$0"' "$ERR"
pyrun trace '{"source": "run", "max_paths": 0}'
check "trace max_paths 0: exit 1" err_has "argument 'max_paths' must be between 1 and 50, got 0"
pyrun trace '{"source": "run", "direction": "down"}'
check "trace down without a target: exit 1 and why" \
  sh -c '[ '"$rc"' -eq 1 ] && grep -q -F "direction '"'"'down'"'"' needs a target" "$0"' "$ERR"
pyrun trace '{"source": "run", "direction": "sideways"}'
check "trace with an unknown direction: refused" rc_is 1

# ---- an index without its graph --------------------------------------------
cn compile "$py" --cache-dir "$TMPBASE/pybm25" --index bm25 --quiet
check "compiles with bm25 only" rc_is 0
for s in find_callers find_callees; do
  cn run $s --repo "$py" --cache-dir "$TMPBASE/pybm25" --args '{"symbol": "run"}'
  check "$s without a graph: exit 1 and how to compile one" \
    sh -c '[ '"$rc"' -eq 1 ] && grep -q -F "has no symbol graph" "$0" && grep -q -F -- "--index bm25,graph" "$0"' "$ERR"
done
cn run trace --repo "$py" --cache-dir "$TMPBASE/pybm25" --args '{"source": "run"}'
check "trace without a graph: exit 1" sh -c '[ '"$rc"' -eq 1 ] && grep -q -F "has no symbol graph" "$0"' "$ERR"

done_testing
