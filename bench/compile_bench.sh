#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Compile benchmark, run side by side with universal-ctags on the same files
# (ctags only extracts definitions; codenib parses, resolves and indexes):
#
#   bench/compile_bench.sh BUILD_DIR REPO [REPO...]
#
# For each repository it prints, as medians of RUNS runs (default 3):
#   - wall time and peak RSS of `codenib compile --rebuild` and of
#     `ctags -R --fields=+ne` over the same files, and their ratio;
#   - the re-compile after a one-file edit (a comment appended; a line
#     inserted at the top, which moves the rest), as a share of the full
#     compile;
#   - BM25 top-20 latency p50/p99 over 1,000 queries (bench/bm25_bench);
#   - a cold `codenib run bm25_search` process (start, open, query, print);
#   - for Python files, the floor: libtree-sitter alone (bench/parse_floor).
# Numbers are ratios against a peer measured in the same run, because the
# machine is shared and noisy.  Needs GNU time (/usr/bin/time).
set -eu
build=${1:?usage: compile_bench.sh BUILD_DIR REPO [REPO...]}
shift
[ $# -gt 0 ] || { echo "usage: compile_bench.sh BUILD_DIR REPO [REPO...]" >&2; exit 2; }
runs=${RUNS:-3}
codenib="$build/core/codenib"
[ -x "$codenib" ] || { echo "no codenib in $build (build first)" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "needs GNU time: apt-get install time" >&2; exit 1; }
command -v ctags >/dev/null || { echo "needs universal-ctags: apt-get install universal-ctags" >&2; exit 1; }
make -s -C "$build" bench/bm25_bench >/dev/null
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export CODENIB_HOME="$work/home"

median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
# measure CMD...: prints "seconds kilobytes" (GNU time)
measure() { /usr/bin/time -f '%e %M' -o "$work/time" "$@" >/dev/null 2>&1; cat "$work/time"; }

for repo in "$@"; do
  name=$(basename "$repo")
  echo "== $repo"
  # the files codenib indexes, for ctags to index too
  "$codenib" compile "$repo" --cache-dir "$work/c0" --json --quiet > "$work/m.json"
  find "$repo" -type f \( -name '*.py' -o -name '*.[ch]' \) > "$work/files"
  files=$(wc -l < "$work/files")
  lines=$(xargs cat < "$work/files" | wc -l)
  echo "   $files files, $lines lines"
  : > "$work/cn_t"; : > "$work/cn_m"; : > "$work/ct_t"; : > "$work/ct_m"
  i=0
  while [ $i -lt "$runs" ]; do
    set -- $(measure "$codenib" compile "$repo" --cache-dir "$work/c1" --rebuild --quiet)
    echo "$1" >> "$work/cn_t"; echo "$2" >> "$work/cn_m"
    set -- $(measure ctags --fields=+ne -f "$work/tags" -L "$work/files")
    echo "$1" >> "$work/ct_t"; echo "$2" >> "$work/ct_m"
    i=$((i + 1))
  done
  cn_t=$(median < "$work/cn_t"); cn_m=$(median < "$work/cn_m")
  ct_t=$(median < "$work/ct_t"); ct_m=$(median < "$work/ct_m")
  awk -v a="$cn_t" -v b="$ct_t" -v m="$cn_m" -v n="$ct_m" 'BEGIN {
    printf "   compile    codenib %.2f s, %d MB   ctags %.2f s, %d MB   time ratio %.1fx\n", a, m/1024, b, n/1024, (b > 0 ? a/b : 0) }'
  # the floor: libtree-sitter alone (parse + one cursor walk per file, one thread)
  if grep -q '\.py$' "$work/files" && make -s -C "$build" bench/parse_floor >/dev/null 2>&1; then
    grep '\.py$' "$work/files" > "$work/pyfiles"
    "$build/bench/parse_floor" "$work/pyfiles" | sed -n 's/^parse + one cursor walk, one thread: best of 3/   tree-sitter floor (python files, parse + one walk, one thread):/p'
  fi

  # re-compile after editing one file, on a copy
  cp -R "$repo" "$work/copy"
  # as in a checkout, the files are older than the build that indexes them
  # (by more than the 2 s in which a stamp is not trusted)
  sleep 3
  "$codenib" compile "$work/copy" --cache-dir "$work/c2" --quiet
  # the full compiles above leave megabytes to write back, which the
  # re-compile's fsyncs would wait behind
  sync
  target=$(head -n 1 "$work/files" | sed "s|^$repo|$work/copy|")
  case $target in *.py) comment='#' ;; *) comment='//' ;; esac
  # two edits: a comment appended (nothing else in the file moves) and a
  # comment line inserted at the top (every line below moves by one)
  for edit in append insert; do
    : > "$work/inc_t"
    i=0
    while [ $i -lt "$runs" ]; do
      if [ $edit = append ]; then printf '\n%s edit %s\n' "$comment" "$i" >> "$target"
      else sed -i "1a $comment edit $i" "$target"; fi
      # GNU time's 10 ms steps are a fifth of a re-compile: the clock instead
      s=$(date +%s%N)
      "$codenib" compile "$work/copy" --cache-dir "$work/c2" --quiet
      e=$(date +%s%N)
      awk -v d=$((e - s)) 'BEGIN { printf "%.4f\n", d / 1e9 }' >> "$work/inc_t"
      i=$((i + 1))
    done
    inc=$(median < "$work/inc_t")
    awk -v a="$inc" -v b="$cn_t" -v e="$edit" 'BEGIN {
      printf "   re-compile after a one-file edit (%s) %.3f s = %.1f%% of a full compile\n", (e == "append" ? "comment appended" : "line inserted at the top"), a, (b > 0 ? 100*a/b : 0) }'
  done
  rm -rf "$work/copy"

  # BM25 latency and a cold query process
  idx=$(readlink -f "$work/c1/current")
  here=$(cd "$(dirname "$0")" && pwd)
  "$build/bench/bm25_bench" "$idx/bm25.bin" "$here/queries.txt" | sed 's/^/   bm25 /'
  : > "$work/cold"
  i=0
  while [ $i -lt 20 ]; do
    s=$(date +%s%N)
    CODENIB_SKILLS_PATH= "$codenib" run bm25_search --repo "$repo" --cache-dir "$work/c1" \
      --args '{"query": "parse header value", "top_k": 20, "return_content": false}' >/dev/null
    e=$(date +%s%N)
    echo $(( (e - s) / 1000 )) >> "$work/cold"
    i=$((i + 1))
  done
  echo "   cold query process (start, open, top-20, print): p50 $(median < "$work/cold") us"
done
