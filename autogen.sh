#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Regenerates configure and the Makefile templates from a git checkout.
set -e
cd "$(dirname "$0")"
mkdir -p build-aux m4
autoreconf --install --force --warnings=all
echo "Now run ./configure (or mkdir build && cd build && ../configure)."
