#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Re-compiles of a repository of thousands of files, with many parser
# threads: the workers take over the previous build's records (unchanged
# by their stamp, or by their content) while the others look records up in
# the same table.  An ASan build crashed in 6 of 8 such re-compiles of a
# 100,000-file repository (issue 19, item 7); `make check-tsan` runs this
# test under ThreadSanitizer.  Every incremental index must equal a
# --rebuild's, byte for byte.
. "$CN_SRCDIR/tests/hostile/lib.sh"
need_python_backend

# valgrind runs one thread at a time, ten times slower: a smaller repository
if [ -n "${CN_VALGRIND-}" ]; then dirs=6; per=50; rounds=2; else dirs=40; per=75; rounds=4; fi
repo=$TMPBASE/repo
cache=$TMPBASE/cache
jobs=8   # more threads than cores: more interleavings

# d<k>/m<i>.py: each calls the previous module of its package and one of
# another package, so the graph links files across the whole repository
k=0
while [ $k -lt $dirs ]; do
  mkdir -p "$repo/d$k"
  printf '"""Package %s."""\n' "$k" >"$repo/d$k/__init__.py"
  i=0
  while [ $i -lt $per ]; do
    {
      if [ $i -gt 0 ]; then printf 'from .m%s import f%s_%s\n' $((i - 1)) "$k" $((i - 1)); fi
      printf 'from d%s.m%s import f%s_%s as other\n\n\n' $(((k + 1) % dirs)) "$i" $(((k + 1) % dirs)) "$i"
      printf 'def f%s_%s(x):\n    """Step %s of package %s."""\n' "$k" "$i" "$i" "$k"
      if [ $i -gt 0 ]; then printf '    return f%s_%s(x) + 1\n' "$k" $((i - 1)); else printf '    return x\n'; fi
      printf '\n\nclass Worker%s_%s:\n    def run(self, x):\n        return other(f%s_%s(x))\n' "$k" "$i" "$k" "$i"
    } >"$repo/d$k/m$i.py"
    i=$((i + 1))
  done
  k=$((k + 1))
done
# files left out (binary, not UTF-8) are taken over from the previous build too
printf '\000\001binary' >"$repo/d0/blob.py"
printf 'name = "caf\351"\n' >"$repo/d1/latin1.py"
# older than any build by more than a stamp's margin: known by their stamp
find "$repo" -type f -exec touch -d '2020-01-01' {} +
total=$((dirs * per + dirs))

cn_t 300 compile "$repo" --cache-dir "$cache" --jobs $jobs --quiet
check "the first compile of $total files exits 0" rc_is 0

round=1
while [ $round -le $rounds ]; do
  # edit a spread of files, touch another spread (same bytes, new stamp:
  # read and known by their content), add one file and remove the last one
  edited=0
  k=0
  while [ $k -lt $dirs ]; do
    i=$(((k * 7 + round * 13) % per))
    if [ $((k % 3)) -eq 0 ]; then
      printf '\n\ndef added_%s_%s_%s():\n    return f%s_%s(%s)\n' "$round" "$k" "$i" "$k" "$i" "$round" >>"$repo/d$k/m$i.py"
      edited=$((edited + 1))
    else
      touch "$repo/d$k/m$i.py"
    fi
    k=$((k + 1))
  done
  rm -f "$repo/d0/new$((round - 1)).py"
  printf 'from d0.m0 import f0_0\n\n\ndef new_%s():\n    return f0_0(%s)\n' "$round" "$round" >"$repo/d0/new$round.py"
  edited=$((edited + 1))

  cn_t 300 compile "$repo" --cache-dir "$cache" --jobs $jobs --json
  check "round $round: the incremental compile exits 0" rc_is 0
  check "round $round: exactly the $edited edited or added files are parsed" out_has "\"parsed\": $edited,"
  check "round $round: the binary and undecodable files are taken over" out_has '"left_unchanged": 2,'
  inc=$cache/$(readlink "$cache/current")
  cn_t 300 compile "$repo" --cache-dir "$TMPBASE/full" --jobs $jobs --rebuild --quiet
  full=$TMPBASE/full/$(readlink "$TMPBASE/full/current")
  same=true
  for f in nodes.bin bm25.bin graph.bin; do
    cmp -s "$inc/$f" "$full/$f" || { echo "# round $round: $f differs from a --rebuild's"; same=false; }
  done
  for f in "$full"/records-*.bin; do
    cmp -s "$inc/${f##*/}" "$f" || { echo "# round $round: ${f##*/} differs from a --rebuild's"; same=false; }
  done
  check "round $round: the incremental index equals a --rebuild's" $same
  round=$((round + 1))
done

cn_t 60 run find_callers --repo "$repo" --cache-dir "$cache" --args '{"symbol": "f0_0"}'
check "the graph still links across packages after the re-compiles" out_has '"resolved":true'
no_sentinels "nothing ran"
done_testing
