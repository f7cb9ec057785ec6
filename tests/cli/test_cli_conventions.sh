#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Conventions every command follows: --option=value as well as --option
# value, `codenib help CMD` = `codenib CMD --help`, `CMD --version`, the man
# page generated from --help, and bash/zsh completion built from the same
# help texts.
. "$CN_SRCDIR/tests/cli/lib.sh"
need_python_backend

repo=$TMPBASE/repo
mkdir -p "$repo/shop"
printf 'def total_price(cart):\n    return sum(i.price for i in cart.items)\n' > "$repo/shop/cart.py"
printf 'def login(user):\n    return user.ok\n' > "$repo/shop/users.py"

cn compile --cache-dir="$TMPBASE/cache" --quiet "$repo"
check "--cache-dir=DIR works as --cache-dir DIR" sh -c '[ '"$rc"' -eq 0 ] && [ -d "$0/cache/current" ]' "$TMPBASE"
cn query --repo="$repo" --cache-dir="$TMPBASE/cache" --max-files=1 "the total price of a cart"
check "query with --repo=R --cache-dir=D --max-files=1" sh -c '[ '"$rc"' -eq 0 ] && grep -q "^Files: shop/cart.py$" "$0"' "$OUT"
cn query --repo "$repo" --cache-dir "$TMPBASE/cache" -- "--price=total of the cart"
check "after --, a question like --x=y is the question" sh -c '[ '"$rc"' -eq 0 ] && grep -q "shop/cart.py" "$0"' "$OUT"
cn skills list --json=yes
check "a flag given a value: a usage error (exit 2)" rc_is 2

all_same=yes
all_version=yes
for c in query eval compile status skills plugins run mcp lsp config; do
  cn "$c" --help; cp "$OUT" "$TMPBASE/h1"; rc1=$rc
  cn help "$c"
  if [ "$rc" -ne 0 ] || [ "$rc1" -ne 0 ] || ! cmp -s "$OUT" "$TMPBASE/h1" || [ ! -s "$OUT" ]; then
    all_same=no; echo "# help $c differs from $c --help"
  fi
  cn "$c" --version
  if [ "$rc" -ne 0 ] || ! grep -q "^codenib [0-9.]* (skill ABI [0-9]*\.[0-9]*)$" "$OUT"; then
    all_version=no; echo "# $c --version"
  fi
done
check "codenib help CMD prints CMD --help, for every command" [ "$all_same" = yes ]
check "CMD --version prints the version, for every command" [ "$all_version" = yes ]
cn help frobnicate
check "help of an unknown command: exit 2, named" sh -c '[ '"$rc"' -eq 2 ] && grep -q "frobnicate" "$0"' "$ERR"

# escapes only for a terminal that wants them: compile under a pseudo-terminal
if command -v script >/dev/null 2>&1; then
  rm -rf "$TMPBASE/c2"
  script -qec "$CODENIB compile --cache-dir $TMPBASE/c2 $repo" /dev/null > "$TMPBASE/tty.out" 2>&1
  check "on a terminal, compile draws a live progress line" grep -q "$(printf '\033')\[K" "$TMPBASE/tty.out"
  rm -rf "$TMPBASE/c2"
  NO_COLOR=1 script -qec "$CODENIB compile --cache-dir $TMPBASE/c2 $repo" /dev/null > "$TMPBASE/tty.out" 2>&1
  check "NO_COLOR: no escape sequence on the terminal" sh -c '! grep -q "$(printf "\033")" "$0"' "$TMPBASE/tty.out"
  rm -rf "$TMPBASE/c2"
  TERM=dumb script -qec "$CODENIB compile --cache-dir $TMPBASE/c2 $repo" /dev/null > "$TMPBASE/tty.out" 2>&1
  check "TERM=dumb: none either" sh -c '! grep -q "$(printf "\033")" "$0"' "$TMPBASE/tty.out"
fi
cn compile --cache-dir "$TMPBASE/c3" "$repo"
check "not a terminal: no escape sequence" sh -c '! grep -q "$(printf "\033")" "$0" "$1"' "$OUT" "$ERR"

# the man page
man=$CN_BUILDDIR/codenib.1
if [ -f "$CN_BUILDDIR/Makefile" ] && grep -q '^man1_MANS = codenib.1' "$CN_BUILDDIR/Makefile"; then
  check "codenib.1 was generated at build time" test -s "$man"
  check "... a man page with every command" sh -c 'grep -q "^\.TH CODENIB" "$0" && grep -q "query" "$0" &&
       grep -q "mcp" "$0" && grep -q "config" "$0" && grep -q "codenib help" "$0"' "$man"
else
  echo "# configured with --disable-man-pages: no man page to check"
fi

# bash completion, run as bash runs it
comp=$CN_SRCDIR/completions/bash/codenib
complete_words() {  # complete_words WORD... -> the candidates for the last word
  bash -c '. "$0"; shift 0; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _codenib; printf "%s\n" "${COMPREPLY[@]}"' \
    "$comp" "$CODENIB" "$@" 2>"$ERR"
}
complete_words qu > "$OUT"
check "bash: commands complete" grep -qx query "$OUT"
complete_words compile --ca > "$OUT"
check "bash: a command's options complete from its --help" grep -qx -- --cache-dir "$OUT"
complete_words run bm25 > "$OUT"
check "bash: skill ids complete after run" grep -qx bm25_search "$OUT"
complete_words skills t > "$OUT"
check "bash: skills subcommands complete" grep -qx test "$OUT"
complete_words help sta > "$OUT"
check "bash: help completes commands" grep -qx status "$OUT"
if command -v zsh >/dev/null 2>&1; then
  check "zsh: the completion function parses" zsh -n "$CN_SRCDIR/completions/zsh/_codenib"
else
  echo "# zsh not installed: its completion file is not parsed here"
fi

done_testing
