#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Fetches the pinned tree-sitter grammars from the npm registry, checks each
# tarball against its pinned sha512, and unpacks it outside the source tree:
#   scripts/fetch-grammars.sh [DIR]
# DIR defaults to $CODENIB_GRAMMARS_DIR, else ${XDG_CACHE_HOME:-~/.cache}/codenib/grammars.
# Each grammar lands in DIR/<package>-<version>/ (with src/parser.c); one
# already there and verified is not fetched again.  configure finds DIR by
# the same rule (or --with-grammars=DIR).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
dir=${1:-${CODENIB_GRAMMARS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/codenib/grammars}}
mkdir -p "$dir"
command -v npm >/dev/null 2>&1 || { echo "fetch-grammars: npm not found (scripts/setup.sh installs it)" >&2; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

hex_of_integrity() {  # sha512-<base64> -> hex
  printf '%s' "${1#sha512-}" | base64 -d | od -An -v -tx1 | tr -d ' \n'
}

status=0
grep -v '^[[:space:]]*#' "$here/grammars.txt" | while read -r lang pkg version integrity; do
  [ -n "${lang:-}" ] || continue
  dest="$dir/$pkg-$version"
  want=$(hex_of_integrity "$integrity")
  if [ -f "$dest/.verified" ] && [ "$(cat "$dest/.verified")" = "$want" ] && [ -f "$dest/package.json" ]; then
    echo "fetch-grammars: $pkg $version already present"
    continue
  fi
  echo "fetch-grammars: fetching $pkg@$version"
  (cd "$tmp" && npm pack --silent "$pkg@$version" >/dev/null) || { echo "fetch-grammars: npm pack $pkg@$version failed" >&2; exit 1; }
  tgz="$tmp/$pkg-$version.tgz"
  got=$(sha512sum "$tgz" | cut -d' ' -f1)
  if [ "$got" != "$want" ]; then
    echo "fetch-grammars: $pkg-$version.tgz does not match its pinned sha512 (got $got); refusing it" >&2
    exit 1
  fi
  rm -rf "$dest" "$tmp/package"
  tar -xzf "$tgz" -C "$tmp"
  mv "$tmp/package" "$dest"
  echo "$want" > "$dest/.verified"
  rm -f "$tgz"
done || status=$?
exit $status
