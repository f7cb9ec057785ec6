#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# TAP test: the public names of the SDK headers against sdk/docs/abi-history.txt.
#
# Every name a plugin or an embedding application can use -- struct fields
# (as struct.field), enum constants, macros, functions, typedefs, struct,
# union and enum tags -- is extracted from the installed headers with
# universal-ctags and compared with the history:
#   - a name in the headers but not in the history was added without being
#     recorded (add "NAME MAJOR.MINOR" and bump the ABI minor);
#   - a name in the history but not in the headers was removed or renamed,
#     which breaks every plugin that uses it.
# It also checks that the history is well formed, that it names no ABI
# newer than version.h's, and that each struct's fields appear in the
# header in the order of their versions (fields are only ever appended).
#
# Environment (set by `make check`): CN_SRCDIR, CN_BUILDDIR (where
# configure wrote sdk/include/codenib/version.h), CTAGS.
#
#   sh tests/cli/test_abi_history.sh --names   prints the extracted names

LC_ALL=C
export LC_ALL

here=$(cd "$(dirname "$0")" && pwd)
srcdir=${CN_SRCDIR:-$(cd "$here/../.." && pwd)}
builddir=${CN_BUILDDIR:-$srcdir}
incdir=$srcdir/sdk/include/codenib
history=$srcdir/sdk/docs/abi-history.txt
version_h=$builddir/sdk/include/codenib/version.h

if [ -z "${CTAGS:-}" ]; then
    echo "1..0 # SKIP ctags not found"
    exit 0
fi
if ! $CTAGS --version 2>/dev/null | grep -q 'Universal Ctags'; then
    echo "1..0 # SKIP $CTAGS is not universal-ctags"
    exit 0
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/cn_abi.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
trap 'exit 1' HUP INT PIPE TERM

# The header list: every public header of the source tree, with version.h
# taken from the build tree (it is generated).  In an in-tree build both
# are the same file: list it once.
: > "$tmp/headers"
for h in "$incdir"/*.h; do
    [ -f "$h" ] || continue
    case $h in */version.h) continue ;; esac
    echo "$h" >> "$tmp/headers"
done
have_version_h=no
if [ -f "$version_h" ]; then
    echo "$version_h" >> "$tmp/headers"
    have_version_h=yes
fi

# extract: prints "NAME<TAB>CONTAINER<TAB>FILE<TAB>LINE" for each public
# name; CONTAINER is the struct or union of a field (empty otherwise).
#
# ctags is asked for macros, enumerators, enums, structs, unions,
# typedefs, members, prototypes, functions, variables and extern
# variables, with line numbers as the address and the fields kind (long
# name), scope and typeref.  Members are named by their struct: the
# innermost named struct or union of the scope; an anonymous one takes the
# name of the typedef that names it, or of the member whose type it is
# (outer.member.field), or, when it is itself an anonymous member (C11),
# its parent's name.
extract() {
    # shellcheck disable=SC2046
    $CTAGS -o - --language-force=C --kinds-C=defgmpstuvx --excmd=number \
        --fields=Kst --extras=-q --sort=no $(cat "$tmp/headers") 2> "$tmp/ctags.err" |
    awk -F '\t' '
    function is_anon(s) { return s ~ /^__anon/ }
    function last_part(s,   i) { i = match(s, /::[^:]*$/); return i ? substr(s, i + 2) : s }
    function parent_part(s,   i) { i = match(s, /::[^:]*$/); return i ? substr(s, 1, i - 1) : "" }
    # The C name of the struct or union whose ctags scope is s.
    function container(s, depth,   last, m) {
        if (depth > 32) return s
        last = last_part(s)
        if (!is_anon(last)) return last
        if (s in typedef_of) return typedef_of[s]
        if (s in member_of) {
            m = member_of[s]
            return container(scope[m], depth + 1) "." name[m]
        }
        if (parent_part(s) != "") return container(parent_part(s), depth + 1)
        return s
    }
    /^!_/ { next }
    {
        n++
        name[n] = $1; file[n] = $2; line[n] = $3; sub(/;".*/, "", line[n])
        kind[n] = $4; scope[n] = ""; tref[n] = ""
        for (i = 5; i <= NF; i++) {
            k = $i; sub(/:.*/, "", k); v = substr($i, length(k) + 2)
            if (k == "typeref") tref[n] = v
            else if (k == "struct" || k == "union" || k == "enum") scope[n] = v
        }
        # Who names an anonymous struct or union: a typedef, or a member.
        if (tref[n] ~ /^(struct|union|enum):/) {
            t = tref[n]; sub(/^[a-z]*:/, "", t)
            if (is_anon(last_part(t))) {
                if (kind[n] == "typedef") typedef_of[t] = $1
                else if (kind[n] == "member") member_of[t] = n
            }
        }
    }
    END {
        for (i = 1; i <= n; i++) {
            k = kind[i]
            if (k == "member") {
                c = container(scope[i], 0)
                printf "%s.%s\t%s\t%s\t%s\n", c, name[i], c, file[i], line[i]
                continue
            }
            if (is_anon(name[i])) continue
            if (k == "macro" && name[i] ~ /^CODENIB_[A-Z0-9_]*_H$/) continue
            printf "%s\t\t%s\t%s\n", name[i], file[i], line[i]
        }
    }'
}

extract > "$tmp/tags"
cut -f1 "$tmp/tags" | sort -u > "$tmp/names"

if [ "${1:-}" = "--names" ]; then
    cat "$tmp/names"
    exit 0
fi

echo "1..6"
t=0
ok() { t=$((t + 1)); echo "ok $t - $1"; }
notok() { t=$((t + 1)); echo "not ok $t - $1"; }
diag() { sed 's/^/# /' "$@"; }

# 1. extraction
failed=no
: > "$tmp/why"
if [ "$have_version_h" = no ]; then
    echo "$version_h is missing: run configure (it generates version.h)" >> "$tmp/why"
    failed=yes
fi
if [ -s "$tmp/ctags.err" ]; then
    cat "$tmp/ctags.err" >> "$tmp/why"
    failed=yes
fi
while read -r h; do
    if ! cut -f3 "$tmp/tags" | grep -qxF "$h"; then
        echo "no public name found in $h" >> "$tmp/why"
        failed=yes
    fi
done < "$tmp/headers"
if [ "$failed" = no ]; then
    ok "ctags extracts $(wc -l < "$tmp/names" | tr -d ' ') names from $(wc -l < "$tmp/headers" | tr -d ' ') headers"
else
    notok "ctags extracts the public names of every header"
    diag "$tmp/why"
fi

# 2. the history is well formed
: > "$tmp/hist"
: > "$tmp/why"
if [ ! -f "$history" ]; then
    echo "$history is missing" >> "$tmp/why"
else
    awk -v f="$history" '
    /^[ \t]*(#|$)/ { next }
    NF != 2 || $1 !~ /^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$/ || $2 !~ /^[0-9]+\.[0-9]+$/ {
        printf "%s:%d: expected \"NAME MAJOR.MINOR\", got: %s\n", f, NR, $0 > "/dev/stderr"; next
    }
    seen[$1]++ { printf "%s:%d: %s is listed twice\n", f, NR, $1 > "/dev/stderr"; next }
    { print $1 "\t" $2 }' "$history" > "$tmp/hist" 2>> "$tmp/why"
fi
if [ -s "$tmp/why" ]; then
    notok "sdk/docs/abi-history.txt is well formed"
    diag "$tmp/why"
else
    ok "sdk/docs/abi-history.txt is well formed ($(wc -l < "$tmp/hist" | tr -d ' ') names)"
fi
cut -f1 "$tmp/hist" | sort -u > "$tmp/hist_names"

# 3. every name of the headers is in the history
comm -23 "$tmp/names" "$tmp/hist_names" > "$tmp/added"
if [ -s "$tmp/added" ]; then
    notok "every public name is recorded in sdk/docs/abi-history.txt"
    echo "# not in the history (add \"NAME MAJOR.MINOR\" and bump the ABI minor):"
    while read -r nm; do
        awk -F '\t' -v n="$nm" '$1 == n { print "#   " n " (" $3 ":" $4 ")"; exit }' "$tmp/tags"
    done < "$tmp/added"
else
    ok "every public name is recorded in sdk/docs/abi-history.txt"
fi

# 4. every name of the history is still in the headers
comm -13 "$tmp/names" "$tmp/hist_names" > "$tmp/removed"
if [ -s "$tmp/removed" ]; then
    notok "every name in sdk/docs/abi-history.txt is still declared (removal breaks the ABI)"
    echo "# in the history but no longer in the headers:"
    sed 's/^/#   /' "$tmp/removed"
else
    ok "every name in sdk/docs/abi-history.txt is still declared"
fi

# 5. no entry is newer than the ABI version.h declares
abi_major=$(sed -n 's/^#define[ \t]*CN_ABI_MAJOR[ \t]*\([0-9][0-9]*\).*/\1/p' "$version_h" 2>/dev/null)
abi_minor=$(sed -n 's/^#define[ \t]*CN_ABI_MINOR[ \t]*\([0-9][0-9]*\).*/\1/p' "$version_h" 2>/dev/null)
if [ -z "$abi_major" ] || [ -z "$abi_minor" ]; then
    notok "history versions are not newer than the ABI of version.h"
    echo "# cannot read CN_ABI_MAJOR/CN_ABI_MINOR from $version_h"
else
    awk -F '\t' -v M="$abi_major" -v m="$abi_minor" '{
        split($2, v, ".")
        if (v[1] + 0 > M + 0 || (v[1] + 0 == M + 0 && v[2] + 0 > m + 0))
            print $1 " " $2 " (the ABI is " M "." m ": bump CN_ABI_MINOR in configure.ac)"
    }' "$tmp/hist" > "$tmp/newer"
    if [ -s "$tmp/newer" ]; then
        notok "history versions are not newer than ABI $abi_major.$abi_minor"
        diag "$tmp/newer"
    else
        ok "history versions are not newer than ABI $abi_major.$abi_minor"
    fi
fi

# 6. within each struct, fields are in the order of their versions: a
# field added in 1.2 must come after every field of 1.0 and 1.1.
tab=$(printf '\t')
sort -t "$tab" -k2,2 -k3,3 -k4,4n "$tmp/tags" > "$tmp/tags_by_struct"
awk -F '\t' '
    NR == FNR { ver[$1] = $2; next }
    $2 == "" || !($1 in ver) { next }
    {
        split(ver[$1], v, "."); key = v[1] * 100000 + v[2]
        c = $2
        if ((c in last) && key < last[c]) {
            if (!(lastname[c] in told))
                printf "%s (%s, %s) comes before %s (%s): new fields go at the end of the struct\n", lastname[c], lastver[c], lastloc[c], $1, ver[$1]
            told[lastname[c]] = 1
        } else {
            last[c] = key; lastname[c] = $1; lastver[c] = ver[$1]; lastloc[c] = $3 ":" $4
        }
    }' "$tmp/hist" "$tmp/tags_by_struct" > "$tmp/order"
if [ -s "$tmp/order" ]; then
    notok "struct fields appear in the order of their versions"
    diag "$tmp/order"
else
    ok "struct fields appear in the order of their versions"
fi
exit 0
