#!/bin/sh
# Installs exactly the Debian packages codenib's build and tests need.
# Idempotent and non-interactive; run as root (or with sudo) on Debian 12.
#   scripts/setup.sh            build + test dependencies
set -eu

PACKAGES="
  build-essential autoconf automake libtool libltdl-dev pkg-config
  libjson-c-dev libyaml-dev libpcre2-dev libcurl4-openssl-dev
  valgrind universal-ctags git ca-certificates
"

missing=
for p in $PACKAGES; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done

if [ -z "$missing" ]; then
  echo "setup: all build and test packages are installed"
  exit 0
fi

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
