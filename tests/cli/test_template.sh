#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The SDK as a third party uses it: install codenib into a temporary
# staging prefix, build the template skill out of tree against the
# installed headers found with pkg-config, install it next to the installed
# skills, and load and run it with the installed codenib.
. "$CN_SRCDIR/tests/cli/lib.sh"
unset CODENIB_SKILLS_PATH
# the installed codenib must find its installed skills
unset CODENIB_IGNORE_SYSTEM_DIRS

stage=$TMPBASE/stage
prefix=$(sed -n 's/^prefix=//p' "$CN_BUILDDIR/sdk/codenib-sdk.pc")
${MAKE:-make} -C "$CN_BUILDDIR" install DESTDIR="$stage" >"$OUT" 2>"$ERR"; rc=$?
check "make install into a staging directory" rc_is 0
inst=$stage$prefix
check "codenib installed" test -x "$inst/bin/codenib"
check "headers installed" test -f "$inst/include/codenib/skill.h"
check "generated version.h installed" test -f "$inst/include/codenib/version.h"
check "codenib-sdk.pc installed" test -f "$inst/lib/pkgconfig/codenib-sdk.pc"
check "the built skill is installed with its package files" \
  test -f "$inst/lib/codenib/skills/code_to_query/code_to_query.so" -a \
       -f "$inst/lib/codenib/skills/code_to_query/config.yaml" -a \
       -f "$inst/lib/codenib/skills/code_to_query/skill.md"
check "no libtool .la file next to a skill" sh -c '! ls "$0"/lib/codenib/skills/*/*.la 2>/dev/null | grep -q .' "$inst"
check "the template is installed" test -f "$inst/share/codenib/sdk/template/example_head.c"
abi="$(pkg-config --variable=abi_major "$inst/lib/pkgconfig/codenib-sdk.pc").$(pkg-config --variable=abi_minor "$inst/lib/pkgconfig/codenib-sdk.pc")"
check "the template declares the ABI of the SDK it came with ($abi)" \
  grep -q "^abi: \"$abi\"$" "$inst/share/codenib/sdk/template/config.yaml"
check "pkg-config --cflags codenib needs no other library's .pc file" sh -c '
  PKG_CONFIG_LIBDIR="$0/lib/pkgconfig" PKG_CONFIG_PATH= pkg-config --cflags --libs codenib >/dev/null' "$inst"
check "the pkg-config files name the skills and plugins directories" sh -c '
  for pc in codenib codenib-sdk; do
    [ "$(pkg-config --variable=skillsdir "$0/lib/pkgconfig/$pc.pc")" = "$1/lib/codenib/skills" ] &&
    [ "$(pkg-config --variable=pluginsdir "$0/lib/pkgconfig/$pc.pc")" = "$1/lib/codenib/plugins" ] || exit 1
  done' "$inst" "$prefix"

# Build the template out of tree, in a copy, against the staged SDK.
cp -R "$inst/share/codenib/sdk/template" "$TMPBASE/myskill"
export PKG_CONFIG_PATH="$inst/lib/pkgconfig"
export PKG_CONFIG_SYSROOT_DIR="$stage"
${MAKE:-make} -C "$TMPBASE/myskill" CFLAGS="${CN_TEST_CFLAGS:--O2 -g}" LDFLAGS="${CN_TEST_LDFLAGS:-}" >"$OUT" 2>"$ERR"; rc=$?
check "the template builds out of tree with pkg-config" rc_is 0
check "it exports only its descriptor" sh -c '[ "$(nm -D --defined-only "$0" | awk "{print \$3}" | grep -v "^_" )" = "cn_skill_descriptor_example_head" ]' "$TMPBASE/myskill/example_head.so"
# pkg-config already prefixes skillsdir with PKG_CONFIG_SYSROOT_DIR.
${MAKE:-make} -C "$TMPBASE/myskill" install >"$OUT" 2>"$ERR"; rc=$?
check "make install puts it in the skills directory" test -f "$inst/lib/codenib/skills/example_head/example_head.so"

CODENIB=$inst/bin/codenib
cn skills test "$inst/lib/codenib/skills/example_head"
check "skills test passes the installed template package with its two examples" out_has "5 passed, 0 failed"
cn skills list --verbose
check "the installed codenib lists the new skill" sh -c 'grep -q "^example_head .*installed" "$0"' "$OUT"
check "and the skill built with codenib" sh -c 'grep -q "^code_to_query .*installed" "$0"' "$OUT"
n_skills=$(($(ls -d "$CN_BUILDDIR"/_skills/*/ | wc -l) + 1))
check "all usable ($n_skills: the built skills and the template)" out_has "$n_skills usable, 0 not usable"

mkdir -p "$TMPBASE/repo"
printf 'one\ntwo\nthree\nfour\nfive\n' > "$TMPBASE/repo/notes.txt"
cn run example_head --repo "$TMPBASE/repo" --args '{"path": "notes.txt", "start_line": 2, "count": "2"}'
check "the installed codenib runs it" rc_is 0
check "with 1-based lines in and out" out_has '"start_line":2,"end_line":3'
check "and the content with a gutter" sh -c 'grep -q "two" "$0" && grep -q "three" "$0" && ! grep -q "four" "$0"' "$OUT"
cn run example_head --repo "$TMPBASE/repo" --args '{"path": "notes.txt", "count": 1}'
check "the default start_line 1 is the first line" out_has '"start_line":1,"end_line":1,"content":"     1\tone\n"'
cn run example_head --args '{"path": "notes.txt"}'
check "without a repository it says what it needs" err_has "needs a repository"
cn run example_head --repo "$TMPBASE/repo" --args '{"path": "notes.txt", "start_line": 50}'
check "past the end: a clear error" err_has "line 50 is past its end"

# The backend template: an embedder built out of tree the same way,
# installed into the plugins directory, chosen at compile and searched.
cp -R "$inst/share/codenib/sdk/backend-template" "$TMPBASE/mybackend"
check "the backend template declares the SDK's ABI" grep -q "^abi: \"$abi\"$" "$TMPBASE/mybackend/plugin.yaml"
${MAKE:-make} -C "$TMPBASE/mybackend" CFLAGS="${CN_TEST_CFLAGS:--O2 -g}" LDFLAGS="${CN_TEST_LDFLAGS:-}" >"$OUT" 2>"$ERR"; rc=$?
check "the backend template builds out of tree with pkg-config" rc_is 0
check "it exports only its descriptor" sh -c '[ "$(nm -D --defined-only "$0" | awk "{print \$3}" | grep -v "^_" )" = "cn_backend_descriptor_example_hash" ]' "$TMPBASE/mybackend/example_hash.so"
${MAKE:-make} -C "$TMPBASE/mybackend" install >"$OUT" 2>"$ERR"; rc=$?
check "make install puts it in the plugins directory" test -f "$inst/lib/codenib/plugins/example-hash/example_hash.so"
cn plugins list
check "the installed codenib loads the new embedder" sh -c 'grep -q "^example-hash  *embedder  *loaded" "$0"' "$OUT"
mkdir -p "$TMPBASE/vrepo/shop"
printf 'def total_price(cart):\n    return sum(item.price for item in cart.items)\n' > "$TMPBASE/vrepo/shop/cart.py"
printf 'def login(user, password):\n    return user.check(password)\n' > "$TMPBASE/vrepo/shop/users.py"
cn compile "$TMPBASE/vrepo" --cache-dir "$TMPBASE/vcache" --index bm25,graph,vector --embedder example-hash \
   --embedder-config '{"dim": 64}' --quiet
check "a repository compiled with it (dim 64)" rc_is 0
cn run embedding_search --repo "$TMPBASE/vrepo" --cache-dir "$TMPBASE/vcache" --args '{"query": "total price of the cart items", "top_k": 1}'
check "embedding_search ranks with it" sh -c 'grep -q "shop/cart.py" "$0" && ! grep -q "shop/users.py" "$0"' "$OUT"
cn compile "$TMPBASE/vrepo" --cache-dir "$TMPBASE/v2" --index vector --embedder example-hash --embedder-config '{"dim": 9}' --quiet
check "its option is checked: dim 9 refused" sh -c '[ '"$rc"' -ne 0 ] && grep -q "dim.* 16 to 4096" "$0"' "$ERR"

# An SDK from an incompatible future: refused before the library is opened.
sed 's/^abi: .*/abi: "2.0"/' "$inst/lib/codenib/skills/example_head/config.yaml" > "$TMPBASE/cfg" &&
  cp "$TMPBASE/cfg" "$inst/lib/codenib/skills/example_head/config.yaml"
cn skills list
check "an incompatible declared ABI is reported" out_has "declares skill ABI 2.0"

done_testing
