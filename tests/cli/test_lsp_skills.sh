#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The LSP-shaped skills (lsp_definition, lsp_references, lsp_route) and
# codenib_context over the lsp-static provider, on copies of the graph
# fixtures (tests/fixtures/graph/*.expected list their use sites: lines
# there are 1-based, columns 0-based, as the skills show them).
. "$CN_SRCDIR/tests/cli/lib.sh"
unset CODENIB_SKILLS_PATH CODENIB_LSP_PROVIDER

if [ ! -f "$CN_BUILDDIR/_plugins/lang-python/lang_python.so" ] || [ ! -f "$CN_BUILDDIR/_plugins/lang-c/lang_c.so" ]; then
  echo "1..0 # SKIP the python and c backends were not built (run scripts/fetch-grammars.sh, then configure)"
  exit 0
fi

py=$TMPBASE/py
c=$TMPBASE/c
cp -R "$CN_SRCDIR/tests/fixtures/graph/python" "$py"
cp -R "$CN_SRCDIR/tests/fixtures/graph/c" "$c"
cn compile "$py" --cache-dir "$TMPBASE/py-cache" --quiet
check "compile the python fixture" rc_is 0
cn compile "$c" --cache-dir "$TMPBASE/c-cache" --quiet
check "compile the c fixture" rc_is 0

# run SKILL REPO ARGS: one skill call on a compiled fixture
pyrun() { cn run "$1" --repo "$py" --cache-dir "$TMPBASE/py-cache" --args "$2"; }
crun() { cn run "$1" --repo "$c" --cache-dir "$TMPBASE/c-cache" --args "$2"; }
# the node_name of every result node, in order, space-separated
names() { grep -o '"node_name":"[^"]*"' "$OUT" | sed 's/^"node_name":"//; s/"$//' | tr '\n' ' '; }
names_are() { [ "$(names)" = "$1" ]; }
# the node_id of the result named $1
id_of() { grep -o '"node_id":[0-9]*,"node_name":"'"$1"'"' "$OUT" | head -n 1 | sed 's/^"node_id":\([0-9]*\),.*/\1/'; }
meta_head='"metadata":{"provider":"lsp-static"'

# ---- lsp_definition ------------------------------------------------------
pyrun lsp_definition '{"symbol": "helper"}'
check "definition by name: the one helper" names_are "pkg/util.py:helper "
check "definition: 1-based lines as the user sees them" out_has '"node_name":"pkg/util.py:helper","type":"function","file":"pkg/util.py","start_line":4,"end_line":9,"score"'
check "definition metadata (name request)" out_has "$meta_head"',"capability":"definition","status":"ok","lsp_method":"textDocument/definition","fallback_reason":null,"behavior_contract":"static-symbol-graph","position_granularity":"line","index_snapshot":"nodes-24-'

pyrun lsp_definition '{"symbol": "ConnectionPool.get"}'
check "definition by dotted suffix" out_has '"node_name":"pkg/pool.py:ConnectionPool.get","type":"method","file":"pkg/pool.py","start_line":8,"end_line":10'
check "... and only that" names_are "pkg/pool.py:ConnectionPool.get "
pyrun lsp_definition '{"symbol": "pkg.base.Base"}'
check "definition by module-dotted name" names_are "pkg/base.py:Base "
pyrun lsp_definition '{"symbol": "`pkg/pool.py:ConnectionPool._check()`"}'
check "definition by qualified name, backticks and () stripped, exact score" out_has '"node_name":"pkg/pool.py:ConnectionPool._check","type":"method","file":"pkg/pool.py","start_line":12,"end_line":13,"score":1'
pyrun lsp_definition '{"symbol": "User.close"}'
check "an inherited method is found through the base class" names_are "pkg/base.py:Base.close "
pyrun lsp_definition '{"symbol": "connectionpool"}'
check "no exact match: the name ignoring case, said so" sh -c 'grep -q "\"node_name\":\"pkg/pool.py:ConnectionPool\",\"type\":\"class\",\"file\":\"pkg/pool.py\",\"start_line\":4,\"end_line\":13,\"score\":0.75}" "$0" && grep -q "\"fallback_reason\":\"fuzzy_name_match\"" "$0"' "$OUT"
pyrun lsp_definition '{"symbol": "connection"}'
check "... or by prefix" names_are "pkg/pool.py:ConnectionPool "
pyrun lsp_definition '{"symbol": "pkg/util.py"}'
check "definition of a path: the file" out_has '"node_name":"pkg/util.py","type":"file","file":"pkg/util.py","start_line":1,"end_line":9'
pyrun lsp_definition '{"symbol": "nothing_like_this_anywhere"}'
check "an unknown name: no nodes, symbol_not_found" sh -c 'grep -q "^{\"nodes\":\[\]," "$0" && grep -q "\"fallback_reason\":\"symbol_not_found\"" "$0"' "$OUT"

crun lsp_definition '{"symbol": "helper"}'
check "ambiguous name: every definition, bodies before the prototype" names_are "list.c:helper main.c:helper util.c:helper other.c:helper "
crun lsp_definition '{"symbol": "dup", "top_k": 2}'
check "top_k caps the candidates" names_are "dup.c:dup old/legacy.c:dup "
crun lsp_definition '{"symbol": "helper", "file_path": "util.c"}'
check "file_path ranks that file's definition first" sh -c 'names() { grep -o "\"node_name\":\"[^\"]*\"" "$0" | head -n 1; }; [ "$(names)" = "\"node_name\":\"util.c:helper\"" ]' "$OUT"

pyrun lsp_definition '{"file_path": "pkg/service.py", "line": 9, "character": 6}'
check "position on a call site: its callee" names_are "pkg/util.py:helper "
check "position metadata: character granularity, position contract" out_has '"fallback_reason":null,"behavior_contract":"static-symbol-graph-position","position_granularity":"character"'
pyrun lsp_definition '{"file_path": "pkg/service.py", "line": 11, "character": 18}'
check "position on models.User.close: the inherited Base.close" names_are "pkg/base.py:Base.close "
pyrun lsp_definition '{"file_path": "pkg/pool.py", "line": 4, "character": 8}'
check "position on a definition's own name: that definition" out_has '"node_name":"pkg/pool.py:ConnectionPool","type":"class","file":"pkg/pool.py","start_line":4,"end_line":13,"score":1'
pyrun lsp_definition '{"file_path": "pkg/pool.py", "line": 4, "character": 21}'
check "position on a base class: the base" names_are "pkg/base.py:Base "
pyrun lsp_definition '{"file_path": "pkg/service.py", "line": 12, "character": 8}'
check "unresolved call obj.save: definitions by its name" names_are "pkg/models.py:User.save "
check "... marked as a name match" out_has '"fallback_reason":"unresolved_use_site_name_match"'
pyrun lsp_definition '{"file_path": "pkg/util.py", "line": 9, "character": 14}'
check "unresolved external call (json.loads): nothing, and why" sh -c 'grep -q "^{\"nodes\":\[\]," "$0" && grep -q "unresolved_use_site_name_match" "$0"' "$OUT"
pyrun lsp_definition '{"file_path": "pkg/service.py", "line": 6, "character": 0}'
check "a blank position: no nodes, no_symbol_at_position" sh -c 'grep -q "^{\"nodes\":\[\]," "$0" && grep -q "\"fallback_reason\":\"no_symbol_at_position\"" "$0"' "$OUT"
crun lsp_definition '{"file_path": "other.c", "line": 10, "character": 5}'
check "a call resolved to two definitions gives both" names_are "dup.c:dup old/legacy.c:dup "
crun lsp_definition '{"file_path": "other.c", "line": 2, "character": 6}'
check "position on a prototype: the definition (not the static helpers of other files)" names_are "util.c:helper "
check "... found by the declared name" out_has '"fallback_reason":"declaration_name_match"'
crun lsp_definition '{"file_path": "main.c", "line": 8, "character": 12}'
check "an identifier the graph has no use site for: by name, marked" names_are "util.c:counter "
check "... as identifier_name_match" out_has '"fallback_reason":"identifier_name_match"'
crun lsp_definition '{"file_path": "main.c", "line": 20}'
check "a whole line (no character): what it uses" names_are "list.h:list_len util.c:counter "
check "... with line granularity" out_has '"behavior_contract":"static-symbol-graph","position_granularity":"line"'
pyrun lsp_definition '{"symbol": "ConnectionPool._check", "return_content": true, "wrap_with_line_numbers": true}'
check "return_content with a line-number gutter" out_has '"content":"    12\t    def _check(self):\n    13\t        return len(self.size)\n"'

# ---- lsp_references ------------------------------------------------------
pyrun lsp_references '{"symbol": "User.save"}'
check "references: declaration first, resolved uses, then name matches" names_are "pkg/models.py:User.save pkg/models.py:User.load pkg/service.py:run pkg/service.py:run "
check "the declaration: where the name is written" out_has '"line":5,"character":8,"edge":"declaration","resolved":true,"written_as":null,"target":"pkg/models.py:User.save"'
check "a reference from User.load (cls.save)" out_has '"line":10,"character":15,"edge":"references","resolved":true,"written_as":"cls.save","target":"pkg/models.py:User.save"'
check "a reference from run (models.User.save)" out_has '"line":10,"character":12,"edge":"references","resolved":true,"written_as":"models.User.save"'
check "the unresolved call obj.save, marked" out_has '"line":12,"character":4,"edge":"calls","resolved":false,"written_as":"obj.save"'
check "references metadata" out_has "$meta_head"',"capability":"references","status":"ok","lsp_method":"textDocument/references","fallback_reason":"unresolved_use_site_name_match","behavior_contract":"static-symbol-graph","position_granularity":"line"'

pyrun lsp_references '{"symbol": "helper", "include_declaration": false}'
check "references without the declaration" names_are "pkg/service.py:run pkg/util.py:helper.inner "
check "... the call u.helper()" out_has '"line":9,"character":4,"edge":"calls","resolved":true,"written_as":"u.helper","target":"pkg/util.py:helper"'
check "... nothing guessed: no fallback" out_has '"fallback_reason":null'

pyrun lsp_references '{"symbol": "Base"}'
check "references of a class: imports, subclasses, uses" names_are "pkg/base.py:Base pkg/models.py:<block:1> pkg/models.py:User pkg/pool.py:<block:1> pkg/pool.py:ConnectionPool pkg/service.py:run "
check "... a subclass by inherits" out_has '"line":4,"character":21,"edge":"inherits","resolved":true,"written_as":"Base","target":"pkg/base.py:Base"'
check "... an import" out_has '"line":1,"character":18,"edge":"imports","resolved":true,"written_as":".base.Base"'

pyrun lsp_references '{"file_path": "pkg/util.py", "line": 4, "character": 5}'
check "references by position on the definition" names_are "pkg/util.py:helper pkg/service.py:run pkg/util.py:helper.inner "
check "... position granularity" out_has '"behavior_contract":"static-symbol-graph-position","position_granularity":"character"'
pyrun lsp_references '{"file_path": "pkg/service.py", "line": 9, "character": 6, "include_declaration": false}'
check "references by position on a use site" names_are "pkg/service.py:run pkg/util.py:helper.inner "
crun lsp_references '{"symbol": "util.c:counter", "top_k": 2}'
check "top_k caps references" names_are "util.c:counter main.c:main "

# ---- lsp_route ------------------------------------------------------------
pyrun lsp_route '{"symbols": ["ConnectionPool.get"]}'
check "route: the anchor, then its callees" names_are "pkg/pool.py:ConnectionPool.get pkg/base.py:Base.release pkg/pool.py:ConnectionPool._check "
check "the anchor names its seed" out_has '"node_name":"pkg/pool.py:ConnectionPool.get","type":"method","file":"pkg/pool.py","start_line":8,"end_line":10,"score":0.9375,"role":"anchor","seed":"ConnectionPool.get"}'
check "... role and seed" out_has '"role":"anchor","seed":"ConnectionPool.get"}'
a=$(id_of pkg/pool.py:ConnectionPool.get)
check "a neighbour says how it was reached (1-based use-site line)" out_has '"role":"neighbor","via":{"edge":"calls","direction":"out","from":'"$a"',"from_name":"pkg/pool.py:ConnectionPool.get","line":9}'
check "route metadata" out_has "$meta_head"',"capability":"route","status":"ok","lsp_method":"codenib/route","fallback_reason":null,"behavior_contract":"static-symbol-graph","position_granularity":"symbol","index_snapshot":"nodes-24-'
check "... with the unresolved seeds" out_has '"unresolved_seeds":[]}'

pyrun lsp_route '{"symbols": ["Base.release"]}'
a=$(id_of pkg/base.py:Base.release)
check "route: callers are neighbours in the in direction" names_are "pkg/base.py:Base.release pkg/base.py:Base.close pkg/pool.py:ConnectionPool.get "
check "... via an incoming call" out_has '"via":{"edge":"calls","direction":"in","from":'"$a"',"from_name":"pkg/base.py:Base.release","line":6}'

crun lsp_route '{"symbols": ["list_push"], "top_k": 4}'
check "route order: calls out by line, then calls in; capped at top_k" names_are "list.c:list_push list.h:LIST_EMPTY list.c:helper main.c:main "
crun lsp_route '{"symbols": ["list_push", "helper"], "top_k": 8}'
check "anchors in seed order; an ambiguous seed brings its definitions" names_are "list.c:list_push list.c:helper main.c:helper util.c:helper list.h:LIST_EMPTY main.c:main list.h:list other.c:other "
crun lsp_route '{"symbols": ["list_push"], "include_neighbors": false}'
check "include_neighbors false: anchors only (the definition, not the prototype)" names_are "list.c:list_push "

pyrun lsp_route '{"symbols": ["nothing_here"], "query": "connection pool check size", "top_k": 4}'
check "no seed resolves: BM25 over the query gives the anchors" sh -c 'grep -q "\"role\":\"anchor\",\"seed\":null" "$0" && grep -q "\"fallback_reason\":\"query_text_bm25\"" "$0"' "$OUT"
check "... the best BM25 hit first" sh -c 'grep -o "\"node_name\":\"[^\"]*\"" "$0" | head -n 1 | grep -q "ConnectionPool._check"' "$OUT"
check "... and the seed is listed as unresolved" out_has '"unresolved_seeds":["nothing_here"]'
pyrun lsp_route '{"symbols": ["nothing_here"]}'
check "no seed resolves and no query: empty, no_seed_resolved" sh -c 'grep -q "^{\"nodes\":\[\]," "$0" && grep -q "\"fallback_reason\":\"no_seed_resolved\"" "$0"' "$OUT"

# ---- the index snapshot ------------------------------------------------------
pyrun lsp_definition '{"symbol": "helper"}'
snap1=$(grep -o '"index_snapshot":"[^"]*"' "$OUT")
cp -R "$py" "$TMPBASE/py2"
cn compile "$TMPBASE/py2" --cache-dir "$TMPBASE/py2-cache" --quiet
cn run lsp_route --repo "$TMPBASE/py2" --cache-dir "$TMPBASE/py2-cache" --args '{"symbols": ["run"]}'
snap2=$(grep -o '"index_snapshot":"[^"]*"' "$OUT")
crun lsp_definition '{"symbol": "helper"}'
snap3=$(grep -o '"index_snapshot":"[^"]*"' "$OUT")
check "index_snapshot: equal for equal indexes, different for another" sh -c '[ -n "$0" ] && [ "$0" = "$1" ] && [ "$0" != "$2" ]' "$snap1" "$snap2" "$snap3"

# ---- codenib_context -------------------------------------------------------
q='Why does `ConnectionPool.get` call release? It breaks run() in pkg/service.py'
pyrun codenib_context '{"query": "'"$q"'"}'
check "context: seeds from backticks, func() and a path" out_has '{"seeds":["ConnectionPool.get","run","pkg/service.py"],"items":[{"node_name":"pkg/pool.py:ConnectionPool.get"'
check "... the first item is the route anchor with its gutter" out_has '"source":"route","seed":"ConnectionPool.get","content":"     8\t    def get(self):\n     9\t        self.release()\n'
check "... BM25 hits and neighbours follow" sh -c 'grep -q "\"source\":\"bm25\"" "$0" && grep -q "\"source\":\"neighbor\"" "$0"' "$OUT"
check "... sources in rank order: route, then bm25, then neighbor" sh -c '[ "$(grep -o "\"source\":\"[a-z0-9]*\"" "$0" | uniq | tr -d "\n")" = "\"source\":\"route\"\"source\":\"bm25\"\"source\":\"neighbor\"" ]' "$OUT"
check "... no node twice" sh -c '[ -z "$(grep -o "\"node_name\":\"[^\"]*\"" "$0" | sort | uniq -d)" ]' "$OUT"
check "... no file the seeds did not name (pkg/service.py is covered by run)" sh -c '! grep -q "\"type\":\"file\"" "$0"' "$OUT"
check "... everything fit" out_has '"truncated":false'

pyrun codenib_context '{"query": "'"$q"'", "max_tokens": 60}'
used=$(grep -o '"used_tokens":[0-9]*' "$OUT" | sed 's/.*://')
check "a small budget is respected" sh -c '[ -n "$0" ] && [ "$0" -le 60 ] && [ "$0" -gt 0 ]' "$used"
check "... and the pack says it was cut" out_has '"truncated":true}'
check "... a node cut at a line boundary, with a marker" out_has '\n[... truncated: lines '
pyrun codenib_context '{"query": "'"$q"'", "max_nodes": 2, "include_neighbors": false}'
check "max_nodes caps the items" names_are "pkg/pool.py:ConnectionPool.get pkg/service.py:run "
pyrun codenib_context '{"query": "where is the pool", "seeds": ["Base.release"], "max_nodes": 1}'
check "explicit seeds come first" out_has '{"seeds":["Base.release"],"items":[{"node_name":"pkg/base.py:Base.release"'

# ---- bad arguments -----------------------------------------------------------
pyrun lsp_definition '{"file_path": "pkg/nope.py", "line": 3}'
check "a file not in the index: a clear error" sh -c '[ '"$rc"' -eq 1 ] && grep -q "file_path '"'"'pkg/nope.py'"'"' is not in the compiled index" "$0"' "$ERR"
pyrun lsp_references '{"file_path": "pkg/pool.py", "line": -2}'
check "a negative line is refused" sh -c '[ '"$rc"' -eq 1 ] && grep -q "argument '"'"'line'"'"': line numbers start at 1, got -2" "$0"' "$ERR"
pyrun lsp_definition '{"file_path": "pkg/pool.py", "line": 400}'
check "a line past the end of the file" sh -c '[ '"$rc"' -eq 1 ] && grep -q "line 400 is past the end of pkg/pool.py, which has 13 lines" "$0"' "$ERR"
pyrun lsp_definition '{"line": 3}'
check "a line without a file" sh -c '[ '"$rc"' -eq 1 ] && grep -q "'"'"'line'"'"' needs '"'"'file_path'"'"'" "$0"' "$ERR"
pyrun lsp_definition '{}'
check "neither symbol nor position" sh -c '[ '"$rc"' -eq 1 ] && grep -q "give '"'"'symbol'"'"'" "$0"' "$ERR"
pyrun lsp_definition '{"symbol": "helper", "top_k": 0}'
check "top_k out of range" sh -c '[ '"$rc"' -eq 1 ] && grep -q "top_k" "$0"' "$ERR"
pyrun lsp_route '{"symbols": []}'
check "route with nothing to start from" sh -c '[ '"$rc"' -eq 1 ] && grep -q "give '"'"'symbols'"'"'" "$0"' "$ERR"
pyrun codenib_context '{"query": "x", "max_tokens": 0}'
check "context budget out of range" sh -c '[ '"$rc"' -eq 1 ] && grep -q "max_tokens" "$0"' "$ERR"
cn run lsp_definition --args '{"symbol": "helper"}'
check "no repository: says a compiled index is needed" sh -c '[ '"$rc"' -eq 1 ] && grep -q "compiled index" "$0"' "$ERR"

# ---- an index without a symbol graph ----------------------------------------
cn compile "$py" --cache-dir "$TMPBASE/bm25-cache" --index bm25 --quiet
check "compile with --index bm25 only" rc_is 0
cn run lsp_route --repo "$py" --cache-dir "$TMPBASE/bm25-cache" --args '{"symbols": ["helper"]}'
check "no graph: route is unavailable, and says why" out_has '{"nodes":[],"metadata":{"provider":"lsp-static","capability":"route","status":"unavailable","lsp_method":"codenib/route","fallback_reason":"symbol_graph_unavailable"'
cn run lsp_references --repo "$py" --cache-dir "$TMPBASE/bm25-cache" --args '{"symbol": "helper"}'
check "no graph: references are unavailable" out_has '{"nodes":[],"metadata":{"provider":"lsp-static","capability":"references","status":"unavailable","lsp_method":"textDocument/references","fallback_reason":"symbol_graph_unavailable"'
cn run lsp_definition --repo "$py" --cache-dir "$TMPBASE/bm25-cache" --args '{"symbol": "helper"}'
check "no graph: definition by name still works from the nodes" out_has '"node_name":"pkg/util.py:helper","type":"function","file":"pkg/util.py","start_line":4,"end_line":9'
check "... saying so" out_has '"status":"ok","lsp_method":"textDocument/definition","fallback_reason":"symbol_graph_unavailable","behavior_contract":"static-node-names"'
cn run codenib_context --repo "$py" --cache-dir "$TMPBASE/bm25-cache" --args '{"query": "`helper` json"}'
check "no graph: the context pack falls back to BM25 and warns" sh -c 'grep -q "\"source\":\"bm25\"" "$0" && grep -q "\"warnings\":\[\"lsp route: unavailable (symbol_graph_unavailable)" "$0"' "$OUT"

# ---- the provider is configurable --------------------------------------------
CODENIB_LSP_PROVIDER=nope; export CODENIB_LSP_PROVIDER
cn run lsp_definition --repo "$py" --cache-dir "$TMPBASE/py-cache" --args '{"symbol": "helper"}'
check "an unknown provider: a clear error naming it" sh -c '[ '"$rc"' -eq 1 ] && grep -q "the LSP provider '"'"'nope'"'"' (CODENIB_LSP_PROVIDER) cannot be used: no lsp backend '"'"'nope'"'"' is installed (known: lsp-static" "$0" && grep -q "codenib plugins list" "$0"' "$ERR"
CODENIB_LSP_PROVIDER=lsp-static
cn run lsp_definition --repo "$py" --cache-dir "$TMPBASE/py-cache" --args '{"symbol": "helper"}'
check "naming the default provider explicitly works" names_are "pkg/util.py:helper "
unset CODENIB_LSP_PROVIDER

done_testing
