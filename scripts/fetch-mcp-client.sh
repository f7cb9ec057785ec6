#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Installs the official MCP TypeScript SDK's client, pinned with its
# dependencies in tests/interop/package-lock.json, outside the source tree
# for the interoperability test (tests/cli/test_mcp_interop.sh):
#   scripts/fetch-mcp-client.sh [DIR]
# DIR defaults to $CODENIB_MCP_CLIENT_DIR, else
# ${XDG_CACHE_HOME:-~/.cache}/codenib/mcp-client; the test finds it by the
# same rule.  An install whose lock file is unchanged is not done again.
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
dir=${1:-${CODENIB_MCP_CLIENT_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/codenib/mcp-client}}
command -v npm >/dev/null 2>&1 || { echo "fetch-mcp-client: npm not found (scripts/setup.sh installs it)" >&2; exit 1; }
major=$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)
if [ "$major" -lt 18 ]; then
  echo "fetch-mcp-client: the MCP SDK needs Node.js 18 or later (found: $(node --version 2>/dev/null || echo none))" >&2
  exit 1
fi
mkdir -p "$dir"
if [ -d "$dir/node_modules/@modelcontextprotocol/sdk" ] &&
   cmp -s "$here/tests/interop/package-lock.json" "$dir/package-lock.json"; then
  echo "fetch-mcp-client: the pinned MCP client is already in $dir"
  exit 0
fi
cp "$here/tests/interop/package.json" "$here/tests/interop/package-lock.json" "$dir/"
echo "fetch-mcp-client: installing the pinned MCP client into $dir"
# npm ci checks every package against the lock file's integrity hashes;
# no install scripts run
(cd "$dir" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error >/dev/null) || {
  rm -rf "$dir/node_modules"
  echo "fetch-mcp-client: npm ci failed in $dir" >&2
  exit 1
}
