#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# valgrind_run.sh LIBTOOL VALGRIND [--OPTION...] PROGRAM [ARG...]
# What check-valgrind runs each test program and each codenib process
# under: VALGRIND with its options on PROGRAM.  A program that is an ELF
# file (every check program and codenib: they are linked -no-install) is
# run under valgrind directly; anything else, such as a libtool wrapper
# script, through `LIBTOOL --mode=execute`, which puts valgrind on the
# real program.  The same valgrind on the same binary either way; going
# straight saves starting libtool's script, a fifth of a second of CPU,
# for each of the suite's many hundreds of processes.
libtool=$1
shift
n=1
for a in "$@"; do
  [ $n -gt 1 ] && case $a in -*) ;; *) break ;; esac
  n=$((n + 1))
done
# $n: the position of PROGRAM (the first argument after VALGRIND that is
# not an option)
eval "prog=\${$n-}"
if [ -f "$prog" ] && [ "$(head -c 4 "$prog" 2>/dev/null | od -An -c | tr -d ' ')" = '177ELF' ]; then
  exec "$@"
fi
exec "$libtool" --mode=execute "$@"
