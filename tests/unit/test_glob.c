/* SPDX-License-Identifier: Apache-2.0 */
/* The glob matcher (core/util/cn_glob.c): the same answers as the
 * backtracking matcher it replaced (kept below as the reference, on
 * fnmatch), on a table of patterns and on many random ones, and a bounded
 * time on the patterns that made the old one exponential (issue #19,
 * item 9).  No timing is asserted: an alarm fails the test only when a
 * match takes minutes, as the old matcher's did. */
#include <fnmatch.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../core/util/cn_glob.h"
#include "tap.h"

/* ---- the reference: the matcher of codenib before item 9 ------------------ */

static bool ref_segment(const char *pat, size_t pl, const char *name, size_t nl)
{
    char p[CN_GLOB_PATTERN_MAX + 1], n[PATH_MAX];
    if (pl > CN_GLOB_PATTERN_MAX || nl >= sizeof n) return false;
    memcpy(p, pat, pl);
    p[pl] = '\0';
    memcpy(n, name, nl);
    n[nl] = '\0';
    return fnmatch(p, n, 0) == 0;
}

static bool ref_plain(const char *pat, const char *path)
{
    const char *pe = strchr(pat, '/');
    size_t pl = pe ? (size_t)(pe - pat) : strlen(pat);

    if (pl == 2 && pat[0] == '*' && pat[1] == '*') {
        const char *rest = pe ? pe + 1 : "";
        if (*rest == '\0') return *path != '\0';
        if (ref_plain(rest, path)) return true;
        for (const char *s = strchr(path, '/'); s; s = strchr(s + 1, '/'))
            if (ref_plain(rest, s + 1)) return true;
        return false;
    }
    {
        const char *ne = strchr(path, '/');
        size_t nl = ne ? (size_t)(ne - path) : strlen(path);
        if (*path == '\0' || !ref_segment(pat, pl, path, nl)) return false;
        if (pe == NULL) return ne == NULL;
        return ne != NULL && ref_plain(pe + 1, ne + 1);
    }
}

/* ---- tables ------------------------------------------------------------------ */

static int mismatches;
static long matches;

static void same(const char *pat, const char *path)
{
    bool want = ref_plain(pat, path), got = cn_glob_match(pat, path);
    matches += want;
    if (want != got && mismatches++ < 10)
        diag("'%s' against '%s': %s, the old matcher said %s", pat, path, got ? "match" : "no",
             want ? "match" : "no");
}

static void test_table(void)
{
    static const char *const pats[] = {
        "*", "**", "*.py", "**/*.py", "src/*.c", "src/**", "src/**/*.c", "**/test_*.py",
        "a/**/b", "**/a/**/b/**", "?", "??", "a?c", "[abc]", "[!a]*", "[^a]*", "[a-c]x",
        "[]]", "[!]]", "[a-]", "[-a]", "[[:digit:]]*", "[[:alpha:]][[:alnum:]]*", "\\*",
        "a\\?b", "[", "a[", "[a", "*[", "**/", "a/**/", "a//b", "*/", "/", "**/**", "**/**/x",
        "*a*a*a*b", "*.*", ".*", "*~", "x/**/y/**/z", "**/x/**", "a*/b*/c*", "*/*/*",
        "a\\", "[\\]]", "[a\\-c]", "**x", "x**", "a/**b/c",
    };
    static const char *const paths[] = {
        "a", "b", "x", "ab", "abc", "a.py", "src/a.c", "src/x/y/z.c", "src/deep/a.py",
        "test_one.py", "pkg/test_two.py", "a/b", "a/x/b", "a/x/y/b", "a/b/c", "x/a/y/b/z",
        "]", "-", "1abc", "z9", "*", "a?b", "a.b.c", "[", "a[", ".hidden", "x/y/z",
        "aaaaab", "aaaa", "file~", "x/1/y/2/z", "a/b/x", "src", "ab/bc/cd", "a\\", "\\",
        "x/x/x", "y", "a/bb/c",
    };
    mismatches = 0;
    for (size_t i = 0; i < sizeof pats / sizeof pats[0]; i++)
        for (size_t j = 0; j < sizeof paths / sizeof paths[0]; j++) same(pats[i], paths[j]);
    is_int(mismatches, 0, "the table: every pattern answers as the old matcher did");
}

/* Random patterns and paths over a small alphabet, where differences
 * would show. */
static void test_random(void)
{
    static const char *const ptoks[] = {"a", "b", "*", "?", "**", "/", "[ab]", "[!a]", "ab",
                                        "*a", "b*", "[a-b]", "\\a", "."};
    static const char *const ntoks[] = {"a", "b", "ab", "ba", "aab", ".", "a.b", "bb"};
    unsigned seed = 19;
    long n = getenv("CN_VALGRIND") && *getenv("CN_VALGRIND") ? 5000 : 100000;

    mismatches = 0;
    matches = 0;
    for (long t = 0; t < n; t++) {
        char pat[256] = "", path[256] = "";
        int np = 1 + (int)(rand_r(&seed) % 7), nn = 1 + (int)(rand_r(&seed) % 5);
        for (int i = 0; i < np; i++) strcat(pat, ptoks[rand_r(&seed) % (sizeof ptoks / sizeof ptoks[0])]);
        for (int i = 0; i < nn; i++) {
            if (i) strcat(path, "/");
            strcat(path, ntoks[rand_r(&seed) % (sizeof ntoks / sizeof ntoks[0])]);
        }
        same(pat, path);
    }
    diag("%ld random pairs, %ld of them matching", n, matches);
    ok(matches > n / 50, "the random pairs match often enough to compare");
    is_int(mismatches, 0, "random patterns answer as the old matcher did");
}

static void test_segments(void)
{
    ok(cn_glob_segment("*.c", 3, "main.c", 6), "segment: *.c");
    ok(!cn_glob_segment("*.c", 3, "main.h", 6), "segment: *.c not .h");
    ok(cn_glob_segment("*", 1, "", 0), "segment: * matches the empty name");
    ok(!cn_glob_segment("?", 1, "", 0), "segment: ? needs a byte");
    ok(cn_glob_segment("a*b*c", 5, "aXbYc", 5), "segment: stars in between");
    ok(!cn_glob_segment("ab\\", 3, "ab\\", 3), "segment: a trailing backslash matches nothing");
}

static void on_alarm(int sig)
{
    static const char msg[] = "not ok - a glob match ran for minutes (exponential)\n";
    (void)sig;
    if (write(1, msg, sizeof msg - 1) < 0) _exit(1);
    _exit(1);
}

/* `**` repeated 28 times against a path 40 directories deep: 101 s with
 * the old matcher on a fast machine; here the alarm (minutes, far above
 * anything polynomial) fails the test instead of hanging it. */
static void test_blowup(void)
{
    char pat[1024] = "", path[1024] = "", pat2[2048];
    for (int i = 0; i < 28; i++) strcat(pat, "**/");
    for (int i = 0; i < 40; i++) strcat(path, "a/");
    strcat(path, "x.py");
    snprintf(pat2, sizeof pat2, "%sx.py", pat);
    strcat(pat, "nothing.py");
    signal(SIGALRM, on_alarm);
    alarm(getenv("CN_VALGRIND") && *getenv("CN_VALGRIND") ? 600 : 120);
    ok(!cn_glob_match(pat, path), "28 x '**/' and no match: answered");
    ok(cn_glob_match(pat2, path), "28 x '**/' and a match: found");
    {
        /* many stars in one segment, against a long name that fails last */
        char seg[256] = "", name[256];
        for (int i = 0; i < 60; i++) strcat(seg, "*a");
        strcat(seg, "b");
        memset(name, 'a', 200);
        name[200] = '\0';
        ok(!cn_glob_segment(seg, strlen(seg), name, strlen(name)),
           "60 x '*a' then 'b' against 200 a's: answered");
    }
    alarm(0);
}

int main(void)
{
    test_segments();
    test_table();
    test_random();
    test_blowup();
    return tap_done();
}
