#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# TAP test: every public header stands on its own.
#
# For each header of sdk/include/codenib/ (and the generated version.h of
# the build tree), a file holding only `#include <codenib/X.h>` must
# compile without a warning as C99, as C11 and, when a C++ compiler is
# found, as C++11; the header must survive being included twice (include
# guard); and it must not include config.h or a header of the libraries
# the core uses privately (json-c, libyaml, libcurl, PCRE2, libltdl),
# since a plugin author has none of those.
#
# Environment (set by `make check`): CN_SRCDIR, CN_BUILDDIR, CC; CXX
# (default c++) for the C++ check.

LC_ALL=C
export LC_ALL

here=$(cd "$(dirname "$0")" && pwd)
srcdir=${CN_SRCDIR:-$(cd "$here/../.." && pwd)}
builddir=${CN_BUILDDIR:-$srcdir}
incdir=$srcdir/sdk/include/codenib
version_h=$builddir/sdk/include/codenib/version.h
cc=${CC:-cc}
cxx=${CXX:-c++}
cwarn="-Wall -Wextra -pedantic -Werror -fsyntax-only"
incs="-I$builddir/sdk/include -I$srcdir/sdk/include"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/cn_hdr.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
trap 'exit 1' HUP INT PIPE TERM

# The headers: the source tree's, with version.h from the build tree (in an
# in-tree build they are the same file).
headers=
for h in "$incdir"/*.h; do
    [ -f "$h" ] || continue
    case $h in */version.h) continue ;; esac
    headers="$headers $h"
done
headers="$headers $version_h"

have_cxx=no
if command -v "${cxx%% *}" >/dev/null 2>&1; then have_cxx=yes; fi

n=0
for h in $headers; do n=$((n + 5)); done
echo "1..$n"

t=0
report() {   # report OK|FAIL DESCRIPTION [FILE-WITH-DETAILS]
    t=$((t + 1))
    if [ "$1" = OK ]; then
        echo "ok $t - $2"
    else
        echo "not ok $t - $2"
        # the compiler output, cut at 40 lines
        [ -z "${3:-}" ] || awk 'NR <= 40 { print "# " $0 }
            END { if (NR > 40) print "# ... (" NR - 40 " more lines)" }' "$3"
    fi
}

# try DESCRIPTION COMMAND...: one check, passed when COMMAND succeeds.
try() {
    what=$1
    shift
    # $@ is the compiler command; CC may carry options, so it is not quoted.
    if "$@" > "$tmp/out" 2>&1; then
        report OK "$what"
    else
        echo "command: $*" >> "$tmp/out"
        report FAIL "$what" "$tmp/out"
    fi
}

# Include targets that must not appear in a public header.
forbidden='(^|/)config\.h$|json-c|^json[^/]*\.h$|yaml|curl|pcre2|ltdl'

for h in $headers; do
    b=$(basename "$h")
    name=${b%.h}

    # 1. no private dependency
    if [ ! -f "$h" ]; then
        echo "$h is missing (configure generates version.h in the build tree)" > "$tmp/out"
        report FAIL "$b includes no config.h, json-c, yaml, curl, pcre2 or ltdl header" "$tmp/out"
    else
        sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*[<"]\([^>"]*\)[>"].*/\1/p' "$h" |
            grep -E "$forbidden" > "$tmp/bad"
        if [ -s "$tmp/bad" ]; then
            sed "s|^|$b includes |" "$tmp/bad" > "$tmp/out"
            report FAIL "$b includes no config.h, json-c, yaml, curl, pcre2 or ltdl header" "$tmp/out"
        else
            report OK "$b includes no config.h, json-c, yaml, curl, pcre2 or ltdl header"
        fi
    fi

    # The test file holds the include alone, plus one declaration after it:
    # ISO C rejects an empty translation unit, which version.h (macros
    # only) would otherwise be under -pedantic.
    printf '#include <codenib/%s>\nextern int cn_header_test_%s;\n' "$b" "$name" > "$tmp/$name.c"
    printf '#include <codenib/%s>\n#include <codenib/%s>\nextern int cn_header_test_%s;\n' \
        "$b" "$b" "$name" > "$tmp/${name}_twice.c"

    # shellcheck disable=SC2086
    {
        try "$b compiles alone as C99" $cc -std=c99 $cwarn $incs "$tmp/$name.c"
        try "$b compiles alone as C11" $cc -std=c11 $cwarn $incs "$tmp/$name.c"
        if [ "$have_cxx" = yes ]; then
            try "$b compiles alone as C++11" $cxx -x c++ -std=c++11 $cwarn $incs "$tmp/$name.c"
        else
            t=$((t + 1))
            echo "ok $t - # SKIP $b as C++11: $cxx not found"
        fi
        try "$b can be included twice" $cc -std=c99 $cwarn $incs "$tmp/${name}_twice.c"
    }
done
exit 0
