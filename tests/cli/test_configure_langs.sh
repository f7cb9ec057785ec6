#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# configure and the language backends: a language that cannot be built (its
# grammar not fetched) fails configure, saying how to get the grammar and
# how to leave the language out; --enable-lang-X keeps X enabled (an
# AC_ARG_ENABLE variable-name slip once made it disable X); --disable-lang-X
# leaves X out.  And scripts/fetch-grammars.sh --from refuses a grammar
# tarball whose contents do not match the pins.
#
# configure is slow: this is one of CN_LONG_TESTS, and it runs only in the
# plain suite (not again under valgrind or the sanitizers, where configure
# is the same shell script).
. "$CN_SRCDIR/tests/cli/lib.sh"

case "${CN_RUN:-} ${CN_TEST_CFLAGS:-}" in
  *valgrind*|*sanitize*) echo "1..0 # SKIP configure runs once, in the plain suite"; exit 0 ;;
esac
[ -x "$CN_SRCDIR/configure" ] || { echo "1..0 # SKIP no configure script in $CN_SRCDIR"; exit 0; }

others="c cpp javascript typescript tsx go java rust"
disable_others=
for l in $others; do disable_others="$disable_others --disable-lang-$l"; done

# run_configure DIR ARGS...: configures in a fresh directory DIR (output in
# $OUT and $ERR, status in $rc)
run_configure() {
  d=$1; shift
  rm -rf "$d" && mkdir -p "$d" || exit 1
  (cd "$d" && "$CN_SRCDIR/configure" ${CC:+CC="$CC"} "$@") >"$OUT" 2>"$ERR"
  rc=$?
}

# ---- the grammar location is an empty directory -------------------------------
empty=$TMPBASE/no-grammars
mkdir -p "$empty"
CODENIB_GRAMMARS_DIR=$empty run_configure "$TMPBASE/b1"
check "configure fails when the default languages' grammars are missing" sh -c '[ '"$rc"' -ne 0 ]'
check "naming each language that cannot be built" sh -c \
  'for l in python c cpp javascript typescript tsx go java rust; do grep -q "^    $l: grammar tree-sitter-" "$0" || exit 1; done' "$ERR"
check "and where the grammar was looked for" err_has "$empty/tree-sitter-python-"
check "saying how to get the grammars" err_has "sh scripts/fetch-grammars.sh"
check "offline too" err_has "sh scripts/fetch-grammars.sh --from"
check "and how to leave a language out" err_has "--disable-lang-LANGUAGE"

# ---- --enable-lang-python asks for python: still enabled, so still an error ----
# shellcheck disable=SC2086
run_configure "$TMPBASE/b2" --with-grammars="$empty" --enable-lang-python $disable_others
check "--enable-lang-python without its grammar fails" sh -c '[ '"$rc"' -ne 0 ]'
check "naming python" sh -c 'grep -q "^    python: grammar tree-sitter-python-" "$0"' "$ERR"
check "and no language that was disabled" sh -c '! grep -q "^    \(c\|rust\|go\): " "$0"' "$ERR"

# ---- with the grammar there, --enable-lang-python builds python ---------------
grammars=$TMPBASE/grammars
pkg=$(awk '$1 == "python" { print $2 "-" $3 }' "$CN_SRCDIR/scripts/grammars.txt")
mkdir -p "$grammars/$pkg/src" && : > "$grammars/$pkg/src/parser.c"
# shellcheck disable=SC2086
run_configure "$TMPBASE/b3" --with-grammars="$grammars" --enable-lang-python $disable_others
check "--enable-lang-python with its grammar: configure succeeds" rc_is 0
check "and python is built" sh -c 'grep -q "languages built: python$" "$0"' "$OUT"
check "the others are left out, each saying why" sh -c \
  'for l in $1; do grep -q "^ *$l (--disable-lang-$l)" "$0" || exit 1; done' "$OUT" "$others"
check "the Makefile builds the python backend and not the rust one" sh -c 'grep -q "S\\[\"BUILD_LANG_PYTHON_TRUE\"\\]=\"\"" "$0" && grep -q "S\\[\"BUILD_LANG_RUST_TRUE\"\\]=\"#\"" "$0"' "$TMPBASE/b3/config.status"
# shellcheck disable=SC2086
run_configure "$TMPBASE/b4" --with-grammars="$grammars" --disable-lang-python $disable_others
check "--disable-lang-python leaves python out without an error" sh -c '[ '"$rc"' -eq 0 ] && grep -q "python (--disable-lang-python)" "$0"' "$OUT"

# ---- fetch-grammars.sh --from: offline, checked against the pins ---------------
mkdir -p "$TMPBASE/t/codenib-grammars"
cp "$CN_SRCDIR/scripts/grammars.txt" "$TMPBASE/t/codenib-grammars/"
echo "not the grammar" > "$TMPBASE/t/codenib-grammars/$pkg.tgz"
(cd "$TMPBASE/t" && tar -czf "$TMPBASE/bad.tar.gz" codenib-grammars)
sh "$CN_SRCDIR/scripts/fetch-grammars.sh" --from "$TMPBASE/bad.tar.gz" "$TMPBASE/unpacked" >"$OUT" 2>"$ERR"
rc=$?
check "--from refuses a grammar that does not match its pinned sha512" sh -c '[ '"$rc"' -ne 0 ] && grep -q "does not match its pinned sha512" "$0"' "$ERR"
check "and unpacks nothing of it" test ! -e "$TMPBASE/unpacked/$pkg"
(cd "$TMPBASE/t" && tar -czf "$TMPBASE/other.tar.gz" codenib-grammars/grammars.txt)
sh "$CN_SRCDIR/scripts/fetch-grammars.sh" --from "$TMPBASE/other.tar.gz" "$TMPBASE/unpacked" >"$OUT" 2>"$ERR"
rc=$?
check "--from a tarball lacking a pinned grammar says so" sh -c '[ '"$rc"' -ne 0 ] && grep -q "lacks tree-sitter-" "$0"' "$ERR"
sh "$CN_SRCDIR/scripts/fetch-grammars.sh" --from "$TMPBASE/nope.tar.gz" >"$OUT" 2>"$ERR"
rc=$?
check "--from a missing file fails" sh -c '[ '"$rc"' -ne 0 ] && grep -q "no such file" "$0"' "$ERR"

done_testing
