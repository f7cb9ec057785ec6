#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The pinned tree-sitter grammars of codenib's language backends
# (scripts/grammars.txt), each checked against its pinned sha512 and
# unpacked outside the source tree:
#
#   scripts/fetch-grammars.sh [DIR]
#       fetches them from the npm registry (`npm pack`) and unpacks them
#   scripts/fetch-grammars.sh --dist [TARBALL]
#       fetches them from the npm registry and writes the grammar source
#       tarball TARBALL (default: codenib-grammars.tar.gz in the current
#       directory) -- for a distribution, which builds from it offline
#   scripts/fetch-grammars.sh --from TARBALL [DIR]
#       unpacks them from such a tarball: no network, no npm
#
# The tarball holds codenib-grammars/grammars.txt (the pins it was made for)
# and codenib-grammars/<package>-<version>.tgz, each exactly as the npm
# registry serves it, so --from checks every one against the pinned sha512
# just as a fetch does.
#
# DIR defaults to $CODENIB_GRAMMARS_DIR, else ${XDG_CACHE_HOME:-~/.cache}/codenib/grammars.
# Each grammar lands in DIR/<package>-<version>/ (with src/parser.c); one
# already there and verified is not unpacked again.  configure finds DIR by
# the same rule (or --with-grammars=DIR).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
usage() {
  echo "usage: fetch-grammars.sh [DIR] | --dist [TARBALL] | --from TARBALL [DIR]" >&2
  exit 2
}
mode=fetch
tarball=
case "${1:-}" in
  --dist) mode=dist; tarball=${2:-codenib-grammars.tar.gz}; [ $# -le 2 ] || usage ;;
  --from) mode=from; [ $# -ge 2 ] && [ $# -le 3 ] || usage; tarball=$2; shift 2 ;;
  -h|--help) usage ;;
  -*) usage ;;
  *) [ $# -le 1 ] || usage ;;
esac
default_dir=${CODENIB_GRAMMARS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/codenib/grammars}
dir=${1:-$default_dir}
[ "$mode" != dist ] || dir=$default_dir

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/pack"

if [ "$mode" = from ]; then
  [ -f "$tarball" ] || { echo "fetch-grammars: $tarball: no such file" >&2; exit 1; }
  tar -xzf "$tarball" -C "$tmp" || { echo "fetch-grammars: $tarball is not a gzip'd tar" >&2; exit 1; }
  [ -d "$tmp/codenib-grammars" ] || { echo "fetch-grammars: $tarball has no codenib-grammars/ directory (make it with --dist)" >&2; exit 1; }
else
  command -v npm >/dev/null 2>&1 || { echo "fetch-grammars: npm not found (scripts/setup.sh installs it; offline, use --from TARBALL)" >&2; exit 1; }
fi

hex_of_integrity() {  # sha512-<base64> -> hex
  printf '%s' "${1#sha512-}" | base64 -d | od -An -v -tx1 | tr -d ' \n'
}

# get PKG VERSION: the package's tarball into $tmp/pack, checked
get() {
  tgz="$tmp/pack/$1-$2.tgz"
  if [ "$mode" = from ]; then
    [ -f "$tmp/codenib-grammars/$1-$2.tgz" ] || {
      echo "fetch-grammars: $tarball lacks $1-$2.tgz (made for other pins? make it again with --dist)" >&2
      return 1
    }
    cp "$tmp/codenib-grammars/$1-$2.tgz" "$tgz"
  else
    echo "fetch-grammars: fetching $1@$2"
    (cd "$tmp/pack" && npm pack --silent "$1@$2" >/dev/null) || { echo "fetch-grammars: npm pack $1@$2 failed" >&2; return 1; }
  fi
  got=$(sha512sum "$tgz" | cut -d' ' -f1)
  if [ "$got" != "$3" ]; then
    echo "fetch-grammars: $1-$2.tgz does not match its pinned sha512 (got $got); refusing it" >&2
    return 1
  fi
}

[ "$mode" = dist ] || mkdir -p "$dir"
status=0
grep -v '^[[:space:]]*#' "$here/grammars.txt" | while read -r lang pkg version integrity; do
  [ -n "${lang:-}" ] || continue
  dest="$dir/$pkg-$version"
  want=$(hex_of_integrity "$integrity")
  if [ "$mode" = dist ]; then
    # typescript and tsx share a package: one copy
    [ -f "$tmp/pack/$pkg-$version.tgz" ] || get "$pkg" "$version" "$want" || exit 1
    continue
  fi
  if [ -f "$dest/.verified" ] && [ "$(cat "$dest/.verified")" = "$want" ] && [ -f "$dest/package.json" ]; then
    echo "fetch-grammars: $pkg $version already present"
    continue
  fi
  get "$pkg" "$version" "$want" || exit 1
  rm -rf "$dest" "$tmp/package"
  tar -xzf "$tgz" -C "$tmp"
  mv "$tmp/package" "$dest"
  echo "$want" > "$dest/.verified"
  rm -f "$tgz"
  echo "fetch-grammars: $pkg $version unpacked into $dest"
done || status=$?
[ "$status" -eq 0 ] || exit "$status"

if [ "$mode" = dist ]; then
  mv "$tmp/pack" "$tmp/codenib-grammars"
  cp "$here/grammars.txt" "$tmp/codenib-grammars/grammars.txt"
  case "$tarball" in /*) out=$tarball ;; *) out=$(pwd)/$tarball ;; esac
  # reproducible: sorted names, fixed owner and times
  (cd "$tmp" && find codenib-grammars -type f | LC_ALL=C sort |
     tar --owner=0 --group=0 --numeric-owner --mtime=@0 -cf - -T - | gzip -n -9 > "$out.part") &&
    mv "$out.part" "$out" || { rm -f "$out.part"; echo "fetch-grammars: writing $out failed" >&2; exit 1; }
  echo "fetch-grammars: wrote $out"
fi
exit 0
