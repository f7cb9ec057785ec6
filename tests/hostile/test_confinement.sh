#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Confinement that cannot be raced (issue #19, items 3 and 4).
#  - read and grep, asked over MCP while a directory of the repository is
#    swapped again and again for a symbolic link to a directory outside,
#    never show the outside file;
#  - a git index crafted to list a file through a symbolic link to a
#    directory outside does not get that file indexed.
. "$CN_SRCDIR/tests/hostile/lib.sh"
need_python_backend

# ---- the race ---------------------------------------------------------------
repo=$TMPBASE/repo
outside=$TMPBASE/outside
mkdir -p "$repo/d" "$outside"
printf 'inside line\n' > "$repo/d/f.txt"
printf 'OUTSIDE_SECRET line\n' > "$outside/f.txt"
ln -s "$outside" "$TMPBASE/spare"

# Swaps repo/d for a link to $outside and back, as fast as it goes: with
# python3, two rename(2) calls a swap and no process started; else with mv.
if command -v python3 >/dev/null 2>&1; then
  python3 -c '
import os, sys
d, real, link = sys.argv[1], sys.argv[2], sys.argv[3]
open(sys.argv[4], "w").close()
while True:
    try:
        os.rename(d, real); os.rename(link, d); os.rename(d, link); os.rename(real, d)
    except OSError:
        pass
' "$repo/d" "$TMPBASE/real_d" "$TMPBASE/spare" "$TMPBASE/swapping" &
else
  (
    while :; do
      mv -T "$repo/d" "$TMPBASE/real_d" 2>/dev/null
      mv -T "$TMPBASE/spare" "$repo/d" 2>/dev/null
      mv -T "$repo/d" "$TMPBASE/spare" 2>/dev/null
      mv -T "$TMPBASE/real_d" "$repo/d" 2>/dev/null
    done
  ) &
  : > "$TMPBASE/swapping"
fi
swapper=$!
trap 'kill $swapper 2>/dev/null; rm -rf "$TMPBASE"' EXIT
# the calls start once the swapping has (python3 may take a while to start)
n=0
while [ ! -e "$TMPBASE/swapping" ] && [ $n -lt 300 ]; do sleep 0.1; n=$((n + 1)); done

calls=1500
[ -n "${CN_VALGRIND-}" ] && calls=150
msgs=$TMPBASE/msgs
{
  echo '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"sh","version":"1"}}}'
  i=1
  while [ $i -le $calls ]; do
    echo '{"jsonrpc":"2.0","id":'$i',"method":"tools/call","params":{"name":"read","arguments":{"path":"d/f.txt"}}}'
    echo '{"jsonrpc":"2.0","id":"g'$i'","method":"tools/call","params":{"name":"grep","arguments":{"pattern":"line","path":"d"}}}'
    echo '{"jsonrpc":"2.0","id":"r'$i'","method":"tools/call","params":{"name":"grep","arguments":{"pattern":"line"}}}'
    i=$((i + 1))
  done
} > "$msgs"
cn_t 120 mcp --repo "$repo" --cache-dir "$TMPBASE/cache" --quiet < "$msgs"
kill $swapper 2>/dev/null
wait $swapper 2>/dev/null
check "the MCP session ran to its end" rc_is 0
check "read and grep found the inside file at times (the race was run)" out_has "inside line"
if grep -q OUTSIDE_SECRET "$OUT"; then
  echo "# $(grep -c OUTSIDE_SECRET "$OUT") answers showed the outside file"
  fail "no read or grep showed the file outside the repository"
else
  pass "no read or grep showed the file outside the repository"
fi

# ---- a crafted git index ----------------------------------------------------
if have_git; then
  g=$TMPBASE/gitrepo
  mkdir -p "$g" "$TMPBASE/gout"
  printf 'def leaked_outside_function():\n    return 1\n' > "$TMPBASE/gout/secret.py"
  printf 'def inside_function():\n    return 2\n' > "$g/inside.py"
  (
    cd "$g" && git init -q && git add inside.py && git commit -qm init &&
    ln -s ../gout linkdir &&
    sha=$(git hash-object -w ../gout/secret.py) &&
    git update-index --add --cacheinfo "100644,$sha,linkdir/secret.py"
  ) >/dev/null 2>&1
  check "git lists the file behind the link (the index is crafted)" \
    sh -c 'git -C "$0" ls-files | grep -q "^linkdir/secret.py$"' "$g"
  cn_t 60 compile "$g" --cache-dir "$TMPBASE/gcache"
  check "compile succeeds" rc_is 0
  check "compile says why it left the path out" err_has "linkdir/secret.py', which leads outside the repository"
  cn_t 60 run bm25_search --repo "$g" --cache-dir "$TMPBASE/gcache" --args '{"query": "leaked_outside_function"}'
  check "the outside file is not in the index" sh -c '! grep -q leaked_outside_function "$0"' "$OUT"
  cn_t 60 run bm25_search --repo "$g" --cache-dir "$TMPBASE/gcache" --args '{"query": "inside_function"}'
  check "the inside file is" out_has "inside_function"
fi

no_sentinels "nothing ran"
done_testing
