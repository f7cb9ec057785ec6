#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# `codenib mcp` driven by the official MCP TypeScript SDK's client
# (tests/interop/mcp_client.mjs), installed outside the tree by
# scripts/fetch-mcp-client.sh.  Skipped when it is not installed, unless
# CN_REQUIRE_INTEROP=1 (scripts/test.sh sets it: CI must run it).
client=${CODENIB_MCP_CLIENT_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/codenib/mcp-client}
. "$CN_SRCDIR/tests/cli/lib.sh"
unset CODENIB_SKILLS_PATH CODENIB_MODEL CODENIB_RERANK_MODEL

missing=
command -v node >/dev/null 2>&1 || missing="Node.js is not installed"
[ -n "$missing" ] || [ -d "$client/node_modules/@modelcontextprotocol/sdk" ] ||
  missing="the MCP client is not in $client (run scripts/fetch-mcp-client.sh)"
[ -f "$CN_BUILDDIR/_plugins/lang-python/lang_python.so" ] || missing=${missing:-"the python backend was not built"}
if [ -n "$missing" ]; then
  if [ "${CN_REQUIRE_INTEROP:-}" = 1 ]; then echo "Bail out! $missing"; exit 1; fi
  echo "1..0 # SKIP $missing"
  exit 0
fi

repo=$TMPBASE/repo
cp -R "$CN_SRCDIR/tests/fixtures/graph/python" "$repo"
# the server's command: codenib, behind valgrind under check-valgrind
# shellcheck disable=SC2086
set -- $CN_RUN "$CODENIB"
exec node "$CN_SRCDIR/tests/interop/mcp_client.mjs" "$client" "$repo" "$TMPBASE/cache" -- "$@"
