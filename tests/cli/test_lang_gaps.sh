#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Index gaps found on real issues (issue 20), each on a small repository
# compiled and asked through the CLI:
#  - JavaScript methods defined by assignment (express's res.send), and
#    the same rules in TypeScript and TSX;
#  - a C function whose header #ifdef branches split (jq's main);
#  - C++ headers named .h (fmt): C++ by their content or by the
#    repository's other sources, alike in a full and an incremental compile;
#  - C++ under deep dotted directories (Catch2's layout) compiles and answers.
. "$CN_SRCDIR/tests/hostile/lib.sh"
plug=$CN_BUILDDIR/_plugins
has() { [ -f "$plug/lang-$1/lang_$1.so" ]; }
langs_of() { # the manifest's file count per language, as "c=1 cpp=2"
  tr -d ' \n' <"$OUT" | sed -n 's/.*"languages":{\(.*\)},"indexes".*/\1/p' |
    grep -o '"[a-z]*":{"files":[0-9]*' | sed 's/"\([a-z]*\)":{"files":/\1=/' | tr '\n' ' '
}

if has javascript; then
  r=$TMPBASE/js
  mkdir -p "$r/lib"
  cat >"$r/lib/response.js" <<'JS'
var res = Object.create(null);

res.send = function send(body) {
  this.end(body);
  return this;
};

res.json = function json(obj) {
  return this.send(JSON.stringify(obj));
};

res.jsonp = (obj) => {
  return res.send(obj);
};

module.exports = res;
JS
  mkdir -p "$r/api"
  # a module that is one anonymous function (a route handler)
  cat >"$r/api/index.js" <<'JS'
const res = require("../lib/response");

module.exports = async (req, reply) => {
  return res.json(req.query);
};
JS
  cn_t 120 compile "$r" --cache-dir "$TMPBASE/cjs" --json
  check "[js] compile exits 0" rc_is 0
  cn_t 60 run find_callers --repo "$r" --cache-dir "$TMPBASE/cjs" --args '{"symbol": "res.send"}'
  check "[js] res.send = function is the method res.send, lines 3-6" \
    out_has '"symbol":{"node_name":"lib/response.js:res.send","type":"method","file":"lib/response.js","start_line":3,'
  cn_t 60 run find_callees --repo "$r" --cache-dir "$TMPBASE/cjs" --args '{"symbol": "res.jsonp"}'
  check "[js] res.jsonp = (obj) => ... is a method, and the call in it is its own" \
    out_has '"type":"method","file":"lib/response.js","start_line":12,'
  check "[js] ... (the call to res.send on line 13)" out_has '"line":13,'
  cn_t 60 run find_callees --repo "$r" --cache-dir "$TMPBASE/cjs" --args '{"symbol": "api/index.js:module.exports"}'
  check "[js] module.exports = async (req, reply) => ... is the function module.exports, lines 3-5" \
    out_has '"node_name":"api/index.js:module.exports","type":"function","file":"api/index.js","start_line":3,'
fi

# the same assignment and object-literal rules in TypeScript and TSX
for ts in typescript tsx; do
  has "$ts" || continue
  ext=ts; [ "$ts" = tsx ] && ext=tsx
  r=$TMPBASE/$ts
  mkdir -p "$r/src"
  cat >"$r/src/app.$ext" <<'TS'
const app: any = {};
app.handle = function (req: string): number {
  return req.length;
};
proto.render = (x: number) => x * 2;
export const helpers = {
  wrap(text: string) { return text; },
  clip: (t: string) => t.slice(0, 3),
};
TS
  cn_t 120 compile "$r" --cache-dir "$TMPBASE/c$ts" --json
  check "[$ts] compiles" rc_is 0
  for sym in app.handle proto.render helpers.wrap helpers.clip; do
    cn_t 60 run lsp_definition --repo "$r" --cache-dir "$TMPBASE/c$ts" --args "{\"symbol\": \"$sym\"}"
    check "[$ts] $sym is a method of src/app.$ext" out_has "\"node_name\":\"src/app.$ext:$sym\",\"type\":\"method\""
  done
done

if has c; then
  r=$TMPBASE/c
  mkdir -p "$r/src"
  cat >"$r/src/main.c" <<'C'
#include "util.h"

#ifdef WIN32
int umain(int argc, char *argv[]);

int wmain(int argc, wchar_t *wargv[]) {
  return umain(argc, convert(wargv));
}

int umain(int argc, char *argv[]) {
#else /*}*/
int main(int argc, char *argv[]) {
#endif
  int ret = run_filter(argc, argv);
  return ret;
}
C
  printf 'int run_filter(int argc, char **argv);\n' >"$r/src/util.h"
  printf '#include "util.h"\nint run_filter(int argc, char **argv) { return argc; }\n' >"$r/src/util.c"
  cn_t 120 compile "$r" --cache-dir "$TMPBASE/cc" --json
  check "[c] compile exits 0" rc_is 0
  cn_t 60 run find_callees --repo "$r" --cache-dir "$TMPBASE/cc" --args '{"symbol": "src/main.c:main"}'
  check "[c] main, its header split by #ifdef, is a function over its whole body (12-16)" \
    out_has '"symbol":{"node_name":"src/main.c:main","type":"function","file":"src/main.c","start_line":12,"node_id":'
  check "[c] ... ending at its closing brace" out_has '"end_line":16}'
  check "[c] ... and its call inside is its own" out_has '"node_name":"src/util.c:run_filter"'
fi

if has c && has cpp; then
  # C++ sources only: every .h is C++
  r=$TMPBASE/cpponly
  mkdir -p "$r/include/w" "$r/src"
  printf '#pragma once\nint paint(int x);\nstruct Widget { int draw() { return paint(1); } };\n' >"$r/include/w/widget.h"
  printf '#include "w/widget.h"\nint paint(int x) { return x; }\n' >"$r/src/widget.cc"
  cn_t 120 compile "$r" --cache-dir "$TMPBASE/c1" --json
  check "[h] a repository with C++ sources and no C: its .h is C++" [ "$(langs_of)" = "cpp=2 " ]
  # C and C++ sources: each .h by its own text
  r=$TMPBASE/mixed
  mkdir -p "$r/include/fmt" "$r/c"
  cat >"$r/include/fmt/core.h" <<'H'
// C++ header named .h, as fmt's
#ifndef FMT_CORE_H_
#define FMT_CORE_H_
#include <string>
namespace fmt {
template <typename T> class buffer {
 public:
  void push_back(const T &value) { grow(1); }
};
}  // namespace fmt
#endif
H
  cat >"$r/c/api.h" <<'H'
/* a C header with C++ guards: still C */
#ifndef API_H
#define API_H
#ifdef __cplusplus
extern "C" {
namespace api_cpp { class Handle; }
#endif
int api_open(const char *path); /* class Foo { public: }; in a comment */
#ifdef __cplusplus
}
#endif
#endif
H
  printf '#include "api.h"\nint api_open(const char *path) { return 0; }\n' >"$r/c/api.c"
  printf '#include "fmt/core.h"\nint main() { return 0; }\n' >"$r/main.cc"
  cn_t 120 compile "$r" --cache-dir "$TMPBASE/c2" --json
  check "[h] mixed repository: core.h (a namespace) is C++, api.h (extern \"C\" guards) C" \
    [ "$(langs_of)" = "c=2 cpp=2 " ]
  cn_t 60 run find_callees --repo "$r" --cache-dir "$TMPBASE/c2" --args '{"symbol": "buffer.push_back"}'
  check "[h] ... so fmt::buffer::push_back is a method" \
    out_has '"node_name":"include/fmt/core.h:fmt.buffer.push_back","type":"method"'
  # an incremental compile after only core.h changed chooses alike
  printf '// changed\n' >>"$r/include/fmt/core.h"
  cn_t 120 compile "$r" --cache-dir "$TMPBASE/c2" --json
  check "[h] an incremental compile after core.h changed keeps each .h's language" \
    [ "$(langs_of)" = "c=2 cpp=2 " ]
  printf '// changed\n' >>"$r/c/api.c"
  cn_t 120 compile "$r" --cache-dir "$TMPBASE/c2" --json
  check "[h] ... and after only a C source changed" [ "$(langs_of)" = "c=2 cpp=2 " ]
  cn_t 120 compile "$r" --cache-dir "$TMPBASE/c3" --json --rebuild
  check "[h] ... as a full rebuild does" [ "$(langs_of)" = "c=2 cpp=2 " ]
  cn_t 120 compile "$r" --cache-dir "$TMPBASE/c4" --json --languages c
  check "[h] with --languages c, the C++ header is left out" [ "$(langs_of)" = "c=2 " ]
fi

if has cpp; then
  # Catch2's layout: deep dotted directories holding C++ and a Python script
  r=$TMPBASE/catch
  d=$r/extras/a.b.c/v3.4.0.rc.1/single.include.d
  mkdir -p "$d" "$r/src/catch2.internal"
  printf 'namespace Catch {\nint run_session(int n);\n}\n' >"$d/catch.hpp"
  printf '#include "catch.hpp"\nnamespace Catch {\nint run_session(int n) { return report(n); }\n}\n' >"$d/catch.cpp"
  printf 'namespace Catch {\nint report(int n) { return n; }\n}\n' >"$r/src/catch2.internal/catch.report.cpp"
  printf 'def generate():\n    return 1\n' >"$d/gen.single.include.py"
  if have_git; then (cd "$r" && git init -q && git add -A && git commit -qm init) >/dev/null 2>&1; fi
  cn_t 120 compile "$r" --cache-dir "$TMPBASE/c5" --json
  check "[cpp] C++ under deep dotted directories (and a .py there) compiles" rc_is 0
  cn_t 60 run find_callers --repo "$r" --cache-dir "$TMPBASE/c5" --args '{"symbol": "report"}'
  check "[cpp] ... and answers: run_session calls report across the dotted directories" \
    out_has 'catch.cpp:Catch.run_session'
  cn_t 120 query --repo "$r" --cache-dir "$TMPBASE/c5" --offline "where does the session report run"
  check "[cpp] ... and a query over it exits 0" rc_is 0
fi

[ "$tap_n" -gt 0 ] || { echo "1..0 # SKIP no javascript, c or cpp backend was built"; exit 0; }
no_sentinels "nothing ran"
done_testing
