#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Installs exactly the Debian packages codenib's build and tests need, then
# fetches the pinned tree-sitter grammars from the npm registry
# (scripts/fetch-grammars.sh).  Idempotent and non-interactive; run as root
# (or with sudo) on Debian 12.
set -eu

PACKAGES="
  build-essential autoconf automake libtool libltdl-dev pkg-config
  libjson-c-dev libyaml-dev libpcre2-dev libcurl4-openssl-dev libtree-sitter-dev
  valgrind universal-ctags git ca-certificates util-linux
  clang libclang-rt-dev
  libpython3.11-stdlib
"
# npm fetches the grammars; a machine with its own Node.js keeps its npm.
command -v npm >/dev/null 2>&1 || PACKAGES="$PACKAGES npm"

missing=
for p in $PACKAGES; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done

if [ -z "$missing" ]; then
  echo "setup: all build and test packages are installed"
else
  if [ "$(id -u)" -ne 0 ]; then
    SUDO=sudo
  else
    SUDO=
  fi
  echo "setup: installing:$missing"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  # shellcheck disable=SC2086
  $SUDO apt-get install -y -qq --no-install-recommends $missing
fi

sh "$(dirname "$0")/fetch-grammars.sh"
