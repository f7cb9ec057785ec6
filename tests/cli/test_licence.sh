#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# TAP test: codenib says what licence it is under, everywhere a distribution
# or a plugin author looks.
#
# LICENSE is the Apache License 2.0; every one of codenib's own source files
# (C, headers, shell, Python, JavaScript, automake/autoconf input, YAML
# packages, pkg-config templates) carries an SPDX-License-Identifier line in
# its first three lines; the SDK guide says what a plugin author may do.
# Fixture repositories and fuzz corpora are data under test, not codenib's
# sources, and are left as they are.
#
# Environment (set by `make check`): CN_SRCDIR.

LC_ALL=C
export LC_ALL

here=$(cd "$(dirname "$0")" && pwd)
srcdir=${CN_SRCDIR:-$(cd "$here/../.." && pwd)}
tag='SPDX-License-Identifier: Apache-2.0'

tap_n=0
pass() { tap_n=$((tap_n + 1)); echo "ok $tap_n - $1"; }
fail() { tap_n=$((tap_n + 1)); echo "not ok $tap_n - $1"; }
check() { d=$1; shift; if "$@"; then pass "$d"; else fail "$d"; fi; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/cn_lic.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
trap 'exit 1' HUP INT PIPE TERM

# 1-2: the licence text itself
lic=$srcdir/LICENSE
check "LICENSE is present" test -s "$lic"
check "LICENSE is the Apache License 2.0, terms and all" \
    sh -c 'grep -q "Apache License" "$1" && grep -q "Version 2.0, January 2004" "$1" &&
           grep -q "END OF TERMS AND CONDITIONS" "$1"' sh "$lic"

# The source files: codenib's own, not fixtures, corpora, builds or
# downloaded packages.
(cd "$srcdir" && find core plugins sdk skills scripts tests bench .ci \
        configure.ac Makefile.am autogen.sh \
        \( -name _build -o -name node_modules -o -name .git -o -name autom4te.cache \
           -o -path tests/fixtures -o -path tests/fuzz/corpus -o -name .deps -o -name .libs \) -prune \
        -o -type f \( -name '*.c' -o -name '*.h' -o -name '*.sh' -o -name '*.py' \
           -o -name '*.mjs' -o -name '*.js' -o -name '*.am' -o -name '*.ac' -o -name '*.yaml' \
           -o -name '*.pc.in' -o -name '*.h.in' -o -name '*.supp' -o -path .ci/run \
           -o -path sdk/template/Makefile \) -print) | sort > "$tmp/files"
: > "$tmp/untagged"
while IFS= read -r f; do
    head -n 3 "$srcdir/$f" | grep -q -F "$tag" || echo "$f" >> "$tmp/untagged"
done < "$tmp/files"
nfiles=$(wc -l < "$tmp/files")

# 3: the walk found the tree (a wrong srcdir would pass point 4 vacuously)
check "the source walk found codenib's sources ($nfiles files)" \
    sh -c '[ "$1" -ge 200 ] && grep -q "^core/agent/cn_query.c$" "$2" &&
           grep -q "^skills/trace/config.yaml$" "$2"' sh "$nfiles" "$tmp/files"
# 4: every one is tagged
if [ -s "$tmp/untagged" ]; then
    fail "every source file has an SPDX line in its first three lines"
    sed 's/^/# no SPDX line: /' "$tmp/untagged" | head -n 50
else
    pass "every source file has an SPDX line in its first three lines"
fi

# 5: the public headers in particular (a plugin author reads only these)
hdr_ok=yes
for h in "$srcdir"/sdk/include/codenib/*.h "$srcdir"/sdk/include/codenib/version.h.in; do
    [ -f "$h" ] || continue
    head -n 1 "$h" | grep -q -F "/* $tag */" || { hdr_ok=no; echo "# header: $h"; }
done
check "each public SDK header starts with the SPDX line as a C comment" [ "$hdr_ok" = yes ]

# 6: the guide tells plugin authors what they may do
guide=$srcdir/sdk/docs/authoring.md
check "the SDK guide has a licence section for plugin authors" \
    sh -c 'grep -q "^## [0-9]*\. Licence: what a plugin author may do" "$1" &&
           grep -q "SPDX-License-Identifier: Apache-2.0" "$1"' sh "$guide"

echo "1..$tap_n"
