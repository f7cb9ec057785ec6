/* SPDX-License-Identifier: Apache-2.0 */
/* A commit's indexed files from a real bare mirror (cn_eval_tree.c) and a
 * query answer turned into a ranked prediction (cn_eval_convert.c).
 *
 * The mirror is built here with the git command line: two commits where a
 * file changes, every kind of entry the indexing rule must leave out, a
 * symlink, a submodule, an executable, a blob removed from the mirror and a
 * branch whose tree holds hostile paths. */
#include <errno.h>
#include <ftw.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tap.h"
#include "../core/eval/cn_eval_run.h"

static char root[256];
/* Python alone, as the dataset's historical rule had it */
static cn_eval_langs py;
/* the languages of the multilingual benchmark */
static cn_eval_langs many;

/* Runs a shell command built from fmt (paths are mkdtemp names: no quoting
 * issues); returns its exit status. */
static int sh(const char *fmt, ...)
{
    char cmd[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    int st = system(cmd);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* First line of a command's output. */
static void sh_line(char *out, size_t cap, const char *cmd)
{
    FILE *p = popen(cmd, "r");
    out[0] = '\0';
    if (p == NULL) return;
    if (fgets(out, (int)cap, p) == NULL) out[0] = '\0';
    out[strcspn(out, "\n")] = '\0';
    pclose(p);
}

static char *path_in(const char *a, const char *b)
{
    static char buf[4][512];
    static int k;
    k = (k + 1) % 4;
    snprintf(buf[k], sizeof buf[k], "%s/%s", a, b);
    return buf[k];
}

/* ---- listing a directory --------------------------------------------- */
static cn_strv walked;
static size_t walked_root;

static int walk_one(const char *fpath, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb;
    (void)ftw;
    if (flag != FTW_D && flag != FTW_DP && strlen(fpath) > walked_root)
        cn_strv_push(&walked, fpath + walked_root + 1);
    return 0;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every non-directory under dir, relative, sorted, comma-joined. */
static char *listing(const char *dir)
{
    cn_buf b = CN_BUF_INIT;
    walked_root = strlen(dir);
    while (walked_root > 1 && dir[walked_root - 1] == '/') walked_root--;
    nftw(dir, walk_one, 16, FTW_PHYS);
    if (walked.len) qsort(walked.items, walked.len, sizeof *walked.items, cmp_str);
    for (size_t i = 0; i < walked.len; i++) cn_buf_printf(&b, "%s%s", i ? "," : "", walked.items[i]);
    cn_strv_free(&walked);
    return cn_buf_steal(&b);
}

static void is_file(const char *path, const char *want, const char *what)
{
    char *got = NULL;
    size_t len = 0;
    if (cn_file_read(path, 0, &got, &len) < 0) got = NULL;
    is_str(got, want, what);
    free(got);
}

static int mode_of(const char *path)
{
    struct stat sb;
    return lstat(path, &sb) == 0 ? (int)(sb.st_mode & 07777) : -1;
}

static bool exists(const char *path)
{
    struct stat sb;
    return lstat(path, &sb) == 0;
}

/* ---- the rule ------------------------------------------------------------ */
static void test_rule(void)
{
    ok(cn_eval_is_indexed(&py, "a.py"), "a top-level .py file is indexed");
    ok(cn_eval_is_indexed(&py, "sympy/core/basic.py"), "a nested .py file is indexed");
    ok(cn_eval_is_indexed(&py, "pkg/testutils.py"), "a name that starts with 'test' but not 'test_' is indexed");
    ok(cn_eval_is_indexed(&py, "pkg/latest/x.py"), "a directory ending in 'test' is not a test directory");
    ok(cn_eval_is_indexed(&py, "mytests/x.py"), "'mytests/' is not 'tests/'");
    ok(cn_eval_is_indexed(&py, "pkg/contest.py"), "contest.py is not conftest.py");
    ok(!cn_eval_is_indexed(&py, "README.md"), "not .py: left out");
    ok(cn_eval_is_licence("COPYING") && cn_eval_is_licence("src/decNumber/ICU-license.html") &&
           cn_eval_is_licence("crate/LICENSE-MIT") && cn_eval_is_licence("Licence.txt"),
       "licence files at any depth are written beside the indexed files");
    ok(!cn_eval_is_licence("README.md") && !cn_eval_is_licence("tests/fixtures/LICENSE") &&
           !cn_eval_is_licence("docs/license.rst") && !cn_eval_is_licence("src/license.py") &&
           !cn_eval_is_licence("pkg/licenses.c") && cn_eval_is_licence("COPYING.LIB"),
       "not other files (a source file about licences), nor licences in test or doc trees");
    ok(!cn_eval_is_indexed(&py, "a.pyc"), ".pyc: left out");
    ok(!cn_eval_is_indexed(&py, "pkg/a.pyi"), ".pyi: left out");
    ok(!cn_eval_is_indexed(&py, "tests/a.py"), "under tests/: left out");
    ok(!cn_eval_is_indexed(&py, "pkg/test/a.py"), "under test/ at depth: left out");
    ok(!cn_eval_is_indexed(&py, "a/b/testing/c/d.py"), "under testing/ at depth: left out");
    ok(!cn_eval_is_indexed(&py, "pkg/test_x.py"), "test_*.py: left out");
    ok(!cn_eval_is_indexed(&py, "pkg/x_test.py"), "*_test.py: left out");
    ok(!cn_eval_is_indexed(&py, "conftest.py"), "conftest.py: left out");
    ok(!cn_eval_is_indexed(&py, "pkg/conftest.py"), "a nested conftest.py: left out");
    ok(!cn_eval_is_indexed(&py, NULL), "NULL: not indexed");
    ok(!cn_eval_is_indexed(NULL, "a.py"), "no languages: not indexed");
    ok(!cn_eval_is_indexed(&py, "docs/conf.py"), "under docs/: left out");
    ok(!cn_eval_is_indexed(&py, "a/doc/b.py"), "under doc/ at depth: left out");
    ok(cn_eval_is_indexed(&py, "pkg/run_tests.py"), "Python: *_tests.py is a tool, not a test (pytest's rule)");
    ok(!cn_eval_is_indexed(&py, "src/main.c"), "Python alone: a .c file is left out");
}

/* Every language: the same directories, each language's test names. */
static void test_rule_languages(void)
{
    static const struct {
        const char *path;
        bool indexed;
        const char *why;
    } cases[] = {
        {"src/jv.c", true, "C source"},
        {"src/jv.h", true, "C header"},
        {"include/fmt/core.h", true, "a header at depth"},
        {"src/format.cc", true, "C++ source"},
        {"SRC/X.CPP", true, "an extension in capitals"},
        {"grpc/server.go", true, "Go source"},
        {"grpc/server_test.go", false, "Go: *_test.go"},
        {"internal/testdata/x.go", false, "Go: under testdata/"},
        {"src/main/java/com/a/Gson.java", true, "Java source"},
        {"src/test/java/com/a/GsonTest.java", false, "Java: under src/test/"},
        {"src/main/java/com/a/GsonTest.java", false, "Java: *Test.java"},
        {"src/main/java/com/a/GsonTests.java", false, "Java: *Tests.java"},
        {"src/main/java/com/a/ReaderIT.java", false, "Java: *IT.java"},
        {"src/main/java/com/a/BaseTestCase.java", false, "Java: *TestCase.java"},
        {"src/main/java/com/a/TestReader.java", false, "Java: Test*.java"},
        {"src/main/java/com/a/Testable.java", true, "Java: Testable.java is no test"},
        {"src/main/java/com/a/Contest.java", true, "Java: Contest.java is no test"},
        {"lib/router/index.js", true, "JavaScript source"},
        {"lib/router.test.js", false, "JavaScript: *.test.js"},
        {"src/app.spec.ts", false, "TypeScript: *.spec.ts"},
        {"src/view.test.tsx", false, "TSX: *.test.tsx"},
        {"src/__tests__/card.js", false, "JavaScript: under __tests__/"},
        {"src/__mocks__/fs.js", false, "JavaScript: under __mocks__/"},
        {"spec/router.js", false, "under spec/"},
        {"e2e/login.ts", false, "under e2e/"},
        {"src/types.d.ts", false, "a .d.ts declaration stub"},
        {"src/inject/dynamic.ts", true, "TypeScript source"},
        {"src/lib.rs", true, "Rust source"},
        {"tests/integration.rs", false, "Rust: under tests/"},
        {"src/walk_tests.rs", false, "*_tests.EXT"},
        {"src/parse-test.c", false, "*-test.EXT"},
        {"src/parse_unittest.cc", false, "*_unittest.EXT"},
        {"docs/build.js", false, "under docs/"},
        {"documentation/x.go", false, "under documentation/"},
        {"man/jq.c", false, "under man/"},
        {"src/main.py", true, "Python with the others"},
        {"src/test_main.py", false, "Python: test_*.py"},
        {"README.md", false, "no backend for Markdown"},
        {"Makefile", false, "no extension"},
        {".h", false, "a dot file is no extension"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char what[256];
        snprintf(what, sizeof what, "%s: %s %s", cases[i].why, cases[i].path, cases[i].indexed ? "indexed" : "left out");
        ok(cn_eval_is_indexed(&many, cases[i].path) == cases[i].indexed, what);
    }
    ok(cn_eval_is_test_or_doc("a/tests/b.txt"), "cn_eval_is_test_or_doc: any file under tests/");
    ok(!cn_eval_is_test_or_doc("a/b.txt"), "cn_eval_is_test_or_doc: not a test");
    {
        char *names = cn_eval_langs_names(&many);
        ok(names && strncmp(names, "python, c, cpp", 14) == 0, "the names, in order, comma-separated");
        free(names);
    }
}

/* ---- the fixture mirror --------------------------------------------------- */
static char mirror[512], c1[128], c2[128];

static int build_mirror(void)
{
    const char *g = "git -c user.name=t -c user.email=t@t -c init.defaultBranch=main -c commit.gpgSign=false";
    char work[512], cmd[1024], big[128];
    snprintf(work, sizeof work, "%s/work", root);
    snprintf(mirror, sizeof mirror, "%s/mirror.git", root);
    if (sh("%s init -q %s && cd %s && mkdir -p pkg/sub tests pkg/testing && "
           "printf 'A = 1\\n' > pkg/a.py && : > pkg/__init__.py && "
           "printf 'def b():\\n    return 2\\n' > pkg/sub/b.py && "
           "printf 'def test_a(): pass\\n' > tests/test_a.py && printf 'X\\n' > pkg/testing/x.py && "
           "printf 'C\\n' > conftest.py && printf 'T\\n' > pkg/test_b.py && printf 'T\\n' > pkg/b_test.py && "
           "printf 'readme\\n' > README.txt && printf 'licence\\n' > COPYING && ln -s pkg/a.py link.py && "
           "printf '#!/usr/bin/env python\\nprint(1)\\n' > tool.py && chmod 755 tool.py && "
           "%s add -A && "
           /* a submodule entry named like an indexed file */
           "%s update-index --add --cacheinfo 160000,1111111111111111111111111111111111111111,ext.py && "
           "%s commit -q -m one",
           g, work, work, g, g, g) != 0)
        return -1;
    if (sh("cd %s && printf 'A = 2\\nB = 3\\n' > pkg/a.py && printf 'BIG\\n' > pkg/big.py && "
           "%s add -A && %s commit -q -m two",
           work, g, g) != 0)
        return -1;
    /* a branch whose tree holds "../evil.py" and ".git/evil.py" */
    if (sh("cd %s && b=$(printf 'ok\\n' | git hash-object -w --stdin) && "
           "t=$(printf '100644 blob %%s\\tevil.py\\n' $b | git mktree) && "
           "t2=$(printf '040000 tree %%s\\t..\\n040000 tree %%s\\t.git\\n100644 blob %%s\\tok.py\\n' $t $t $b | git mktree) && "
           "c=$(%s commit-tree $t2 -m evil) && git branch evil $c",
           work, g) != 0)
        return -1;
    if (sh("git clone -q --bare %s %s 2>/dev/null", work, mirror) != 0) return -1;
    snprintf(cmd, sizeof cmd, "git -C %s rev-parse HEAD~1", work);
    sh_line(c1, sizeof c1, cmd);
    snprintf(cmd, sizeof cmd, "git -C %s rev-parse HEAD", work);
    sh_line(c2, sizeof c2, cmd);
    /* the mirror lacks pkg/big.py's blob, as a partial mirror would */
    snprintf(cmd, sizeof cmd, "git -C %s rev-parse HEAD:pkg/big.py", work);
    sh_line(big, sizeof big, cmd);
    if (strlen(big) < 40 || strlen(c1) < 40 || strlen(c2) < 40) return -1;
    return sh("rm %s/objects/%.2s/%s", mirror, big, big + 2);
}

/* ---- materialising -------------------------------------------------------- */
static void test_commit_one(void)
{
    cn_eval_tree_stats st;
    char dest[512], *l;
    snprintf(dest, sizeof dest, "%s/%s", root, "out1");
    int rc = cn_eval_tree_materialize(mirror, c1, &py, dest, &st);
    if (!is_int(rc, 0, "commit one materialises")) diag("%s", cn_error_last()->message);
    l = listing(dest);
    is_str(l, "COPYING,pkg/__init__.py,pkg/a.py,pkg/sub/b.py,tool.py",
           "commit one: exactly the indexed regular files, and the licence file a checkout has");
    free(l);
    is_file(path_in(dest, "pkg/a.py"), "A = 1\n", "pkg/a.py has commit one's bytes");
    is_file(path_in(dest, "pkg/sub/b.py"), "def b():\n    return 2\n", "pkg/sub/b.py has its bytes");
    is_file(path_in(dest, "pkg/__init__.py"), "", "an empty file is written empty");
    is_file(path_in(dest, "tool.py"), "#!/usr/bin/env python\nprint(1)\n", "tool.py has its bytes");
    is_int(mode_of(path_in(dest, "tool.py")), 0755, "an executable keeps mode 755");
    is_int(mode_of(path_in(dest, "pkg/a.py")), 0644, "a plain file gets mode 644");
    is_int(st.files, 4, "stats: 4 files written (the licence file is no indexed file)");
    is_int(st.bytes, 6 + 0 + 22 + 31, "stats: bytes written");
    is_int(st.skipped, 6, "stats: 6 entries left out by the rule");
    is_int(st.listed, 11, "stats: the commit has 11 regular files (the symlink and the submodule are none)");
    is_int(st.not_regular, 2, "stats: the symlink and the submodule are not regular files");
    is_int(st.missing, 0, "stats: no blob missing");
    is_int(st.rejected, 0, "stats: no hostile path");
    ok(!st.reused, "stats: not reused");
    l = listing(root);
    ok(l && strstr(l, ".tmp-") == NULL, "no temporary directory is left behind");
    free(l);
}

static void test_commit_two(void)
{
    cn_eval_tree_stats st;
    char dest[512], *l;
    snprintf(dest, sizeof dest, "%s/%s", root, "cache/deep/out2");
    int rc = cn_eval_tree_materialize(mirror, c2, &py, dest, &st);
    if (!is_int(rc, 0, "commit two materialises (parents created)")) diag("%s", cn_error_last()->message);
    l = listing(dest);
    is_str(l, "COPYING,pkg/__init__.py,pkg/a.py,pkg/sub/b.py,tool.py", "commit two: the missing blob is skipped");
    free(l);
    is_file(path_in(dest, "pkg/a.py"), "A = 2\nB = 3\n", "pkg/a.py has commit two's bytes");
    is_int(st.missing, 1, "stats: one blob missing from the mirror");
    is_int(st.files, 4, "stats: 4 files written");
    is_int(st.bytes, 12 + 0 + 22 + 31, "stats: bytes of commit two");
    is_file(path_in(root, "out1/pkg/a.py"), "A = 1\n", "commit one's copy is untouched");
}

static void test_trailing_slash(void)
{
    cn_eval_tree_stats st;
    char dest[512], *l;
    snprintf(dest, sizeof dest, "%s/out4/", root);
    int rc = cn_eval_tree_materialize(mirror, c1, &py, dest, &st);
    if (!is_int(rc, 0, "a destination with a trailing slash materialises")) diag("%s", cn_error_last()->message);
    l = listing(dest);
    is_str(l, "COPYING,pkg/__init__.py,pkg/a.py,pkg/sub/b.py,tool.py", "... with the files directly in it");
    free(l);
    snprintf(dest, sizeof dest, "%s/out4//", root);
    rc = cn_eval_tree_materialize(mirror, c1, &py, dest, &st);
    ok(rc == 0 && st.reused && st.files == 4, "... and is reused under another spelling");
    snprintf(dest, sizeof dest, "%s/out4", root);
    is_int(cn_eval_tree_remove(dest), 0, "... and removed");
}

static void test_reuse(void)
{
    cn_eval_tree_stats st;
    char dest[512];
    snprintf(dest, sizeof dest, "%s/%s", root, "out1");
    FILE *f = fopen(path_in(dest, "marker.txt"), "w");
    if (f) fclose(f);
    int rc = cn_eval_tree_materialize(mirror, c1, &py, dest, &st);
    is_int(rc, 0, "materialising again succeeds");
    ok(st.reused, "stats: reused");
    ok(exists(path_in(dest, "marker.txt")), "the existing directory is left as is");
    is_int(st.files, 4, "reused stats count the indexed files found");
    is_int(st.bytes, 59, "reused stats count their bytes");
    rc = cn_eval_tree_materialize(mirror, c1, &py, dest, NULL);
    is_int(rc, 0, "stats may be NULL");
}

static void test_errors(void)
{
    cn_eval_tree_stats st;
    const char *bogus = "0123456789abcdef0123456789abcdef01234567";
    char dest[512], plain[512];
    snprintf(dest, sizeof dest, "%s/bogus", root);
    int rc = cn_eval_tree_materialize(mirror, bogus, &py, dest, &st);
    is_int(rc, CN_ENOTFOUND, "a commit not in the mirror: CN_ENOTFOUND");
    has_str(cn_error_last()->message, bogus, "the message names the commit");
    has_str(cn_error_last()->message, mirror, "the message names the mirror");
    ok(!exists(dest), "nothing is created for a bogus commit");
    rc = cn_eval_tree_materialize(mirror, "no-such-branch", &py, dest, &st);
    is_int(rc, CN_ENOTFOUND, "an unknown name: CN_ENOTFOUND");

    snprintf(plain, sizeof plain, "%s/plain", root);
    mkdir(plain, 0755);
    rc = cn_eval_tree_materialize(plain, c1, &py, dest, &st);
    is_int(rc, CN_EIO, "a directory that is no git repository: CN_EIO");
    has_str(cn_error_last()->message, "not a git directory", "the message says it is not a git directory");
    has_str(cn_error_last()->message, plain, "the message names that directory");
    rc = cn_eval_tree_materialize(path_in(root, "nowhere"), c1, &py, dest, &st);
    is_int(rc, CN_ENOTFOUND, "a mirror that does not exist: CN_ENOTFOUND");
    has_str(cn_error_last()->message, "does not exist", "the message says so");
    ok(!exists(dest), "nothing is created for a bad mirror");
    rc = cn_eval_tree_materialize(mirror, "--output=/tmp/x", &py, dest, &st);
    is_int(rc, CN_EINVAL, "an option-like commit is refused");
    rc = cn_eval_tree_materialize(mirror, "", &py, dest, &st);
    is_int(rc, CN_EINVAL, "an empty commit is refused");
    rc = cn_eval_tree_materialize(mirror, c1, &py, path_in(root, "work/README.txt"), &st);
    is_int(rc, CN_EINVAL, "a destination that is a file is refused");
    has_str(cn_error_last()->message, "not a directory", "the message says why");
}

static void test_hostile(void)
{
    cn_eval_tree_stats st;
    char dest[512], *l;
    snprintf(dest, sizeof dest, "%s/%s", root, "out3");
    int rc = cn_eval_tree_materialize(mirror, "evil", &py, dest, &st);
    if (!is_int(rc, 0, "a tree with hostile paths materialises")) diag("%s", cn_error_last()->message);
    l = listing(dest);
    is_str(l, "ok.py", "only the safe file is written");
    free(l);
    is_int(st.rejected, 2, "stats: '../evil.py' and '.git/evil.py' rejected");
    ok(!exists(path_in(root, "evil.py")), "nothing escaped the destination");
}

static void test_remove(void)
{
    char dest[512];
    snprintf(dest, sizeof dest, "%s/%s", root, "out1");
    char outside[512], outdir[512];
    snprintf(outside, sizeof outside, "%s/outside.txt", root);
    snprintf(outdir, sizeof outdir, "%s/outdir", root);
    sh("printf keep > %s && mkdir -p %s && printf keep > %s/inner.txt && "
       "ln -s %s %s/pkg/file_link && ln -s %s %s/pkg/dir_link",
       outside, outdir, outdir, outside, dest, outdir, dest);
    is_int(cn_eval_tree_remove(dest), 0, "cn_eval_tree_remove succeeds");
    ok(!exists(dest), "the directory is gone");
    is_file(outside, "keep", "a file a symlink pointed to is kept");
    is_file(path_in(outdir, "inner.txt"), "keep", "a directory a symlink pointed to is kept");
    is_int(cn_eval_tree_remove(dest), 0, "removing what is not there is no error");
    is_int(cn_eval_tree_remove(""), CN_EINVAL, "an empty path is refused");
}

/* ---- conversion ----------------------------------------------------------- */
static void is_list(const cn_strv *v, const char *want, const char *what)
{
    cn_buf b = CN_BUF_INIT;
    for (size_t i = 0; i < v->len; i++) cn_buf_printf(&b, "%s%s", i ? "," : "", v->items[i]);
    is_str(b.data ? b.data : "", want, what);
    cn_buf_free(&b);
}

static json_object *parse(const char *text)
{
    json_object *o = json_tokener_parse(text);
    if (o == NULL) diag("bad test JSON: %s", text);
    return o;
}

static void test_convert_offline(void)
{
    cn_eval_pred p;
    json_object *r = parse(
        "{\"mode\":\"offline\","
        " \"files\":[{\"path\":\"a.py\",\"score\":2.0},{\"path\":\"b.py\",\"score\":1.0},{\"path\":\"a.py\"}],"
        " \"symbols\":[{\"symbol\":\"c.py:K.__init__\",\"path\":\"c.py\"},"
        "              {\"symbol\":\"a.py:K.m\",\"path\":\"a.py\"},"
        "              {\"symbol\":\"c.py:K\",\"path\":\"c.py\"},"
        "              {\"symbol\":\"a.py:f\",\"path\":\"a.py\"},"
        "              {\"symbol\":\"pkg/m.py:Outer.Inner.__init__\",\"path\":\"pkg/m.py\"},"
        "              {\"symbol\":\"a.py:K.n\",\"path\":\"a.py\"}],"
        " \"contract\":{\"files\":[\"x.py\"],\"symbols\":[\"x.py:y\"],\"locations\":[]}}");
    int rc = cn_eval_pred_from_result("repo__x-1", r, &p);
    is_int(rc, 0, "offline result converts");
    is_str(p.instance_id, "repo__x-1", "instance_id kept");
    is_list(&p.found[CN_EVAL_FILE], "a.py,b.py,c.py,pkg/m.py",
            "files: ranked files, then the symbols' files, deduplicated");
    is_list(&p.found[CN_EVAL_FUNCTION], "c.py:K,a.py:K.m,a.py:f,pkg/m.py:Outer.Inner,a.py:K.n",
            "entities: __init__ folded into its class, duplicates dropped at the later rank");
    is_list(&p.found[CN_EVAL_MODULE], "c.py:K,a.py:K,a.py:f,pkg/m.py:Outer", "modules: path + top-level name");
    cn_eval_pred_free(&p);
    json_object_put(r);
}

/* found_locations: the symbols' ranges in their order, then the
 * contract's ranges not given yet; whole files and ranges without lines
 * give none. */
static void test_convert_locations(void)
{
    cn_eval_pred p;
    json_object *r = parse(
        "{\"mode\":\"offline\","
        " \"files\":[{\"path\":\"src/a.c\"}],"
        " \"symbols\":[{\"symbol\":\"src/a.c:parse\",\"path\":\"src/a.c\",\"start_line\":10,\"end_line\":42},"
        "              {\"symbol\":\"src/b.go:Server.Serve\",\"path\":\"src/b.go\",\"start_line\":7,\"end_line\":7},"
        "              {\"symbol\":\"src/b.go:Server.Stop\",\"path\":\"src/b.go\",\"start_line\":9,\"end_line\":3},"
        "              {\"symbol\":\"src/c.rs:f\",\"path\":\"src/c.rs\"},"
        "              {\"symbol\":\"src/a.c:parse\",\"path\":\"src/a.c\",\"start_line\":10,\"end_line\":42}],"
        " \"contract\":{\"files\":[],\"symbols\":[],"
        "   \"locations\":[{\"path\":\"src/a.c\",\"start_line\":10,\"end_line\":42},"
        "                  {\"path\":\"src/d.js\",\"start_line\":5,\"end_line\":8},"
        "                  {\"path\":\"src/e.java\",\"start_line\":null,\"end_line\":null}]}}");
    int rc = cn_eval_pred_from_result("repo__x-6", r, &p);
    is_int(rc, 0, "a result with ranges converts");
    is_list(&p.locations, "src/a.c:10-42,src/b.go:7-7,src/b.go:9-9,src/d.js:5-8",
            "locations: symbols' ranges in order (an end before the start is the start), then the contract's new ones");
    is_list(&p.found[CN_EVAL_FUNCTION], "src/a.c:parse,src/b.go:Server.Serve,src/b.go:Server.Stop,src/c.rs:f",
            "entities beside them, in the same order");
    {
        json_object *row = cn_eval_pred_json(&p), *v = NULL;
        ok(row && json_object_object_get_ex(row, "found_locations", &v) && json_object_array_length(v) == 4,
           "the row carries found_locations");
        json_object_put(row);
    }
    cn_eval_pred_free(&p);
    json_object_put(r);
}

static void test_convert_agent(void)
{
    cn_eval_pred p;
    json_object *r = parse(
        "{\"mode\":\"agent\",\"answer\":\"...\","
        " \"contract\":{\"files\":[\"b.py\"],"
        "   \"symbols\":[\"a.py:C.__init__\",\"helper\",\"a.py:C.run\",\"b.py:g\",\"a.py:C\"],"
        "   \"locations\":[{\"path\":\"d.py\",\"start_line\":1,\"end_line\":3},"
        "                  {\"path\":\"b.py\",\"start_line\":null,\"end_line\":null}]}}");
    int rc = cn_eval_pred_from_result("repo__x-2", r, &p);
    is_int(rc, 0, "agent result converts");
    is_list(&p.found[CN_EVAL_FILE], "b.py,a.py,d.py", "files: contract files, symbols' files, locations' files");
    is_list(&p.found[CN_EVAL_FUNCTION], "a.py:C,a.py:C.run,b.py:g",
            "entities: a symbol naming no file is left out");
    is_list(&p.found[CN_EVAL_MODULE], "a.py:C,b.py:g", "modules of the agent answer");
    cn_eval_pred_free(&p);
    json_object_put(r);

    r = parse("{\"mode\":\"agent\",\"answer\":\"no idea\",\"contract\":null}");
    rc = cn_eval_pred_from_result("repo__x-3", r, &p);
    is_int(rc, 0, "an agent answer without a contract converts");
    is_int(p.found[CN_EVAL_FILE].len + p.found[CN_EVAL_MODULE].len + p.found[CN_EVAL_FUNCTION].len, 0,
           "... to empty lists");
    cn_eval_pred_free(&p);
    json_object_put(r);
}

static void test_convert_empty(void)
{
    cn_eval_pred p;
    is_int(cn_eval_pred_from_result("repo__x-4", NULL, &p), 0, "a NULL result converts");
    is_str(p.instance_id, "repo__x-4", "... keeping the instance_id");
    is_int(p.found[CN_EVAL_FILE].len, 0, "... with no files");
    cn_eval_pred_free(&p);
    is_int(cn_eval_pred_empty("repo__x-5", &p), 0, "cn_eval_pred_empty");
    is_str(p.instance_id, "repo__x-5", "... names the instance");
    is_int(p.found[CN_EVAL_FUNCTION].len, 0, "... with no entities");
    cn_eval_pred_free(&p);
    is_int(cn_eval_pred_from_result("", NULL, &p), CN_EINVAL, "an empty instance_id is refused");
    is_int(cn_eval_pred_empty(NULL, &p), CN_EINVAL, "a NULL instance_id is refused");
}

int main(void)
{
    const char *tmp = getenv("TMPDIR");

    if (sh("git --version >/dev/null 2>&1") != 0) {
        printf("1..0 # SKIP git is not on PATH\n");
        return 0;
    }
    {
        static const char *const py_ext[] = {".py", ".pyi"}, *const c_ext[] = {".c", ".h"},
                                 *const cpp_ext[] = {".cc", ".cpp", ".hpp"}, *const go_ext[] = {".go"},
                                 *const java_ext[] = {".java"}, *const js_ext[] = {".js", ".mjs", ".jsx"},
                                 *const ts_ext[] = {".ts", ".tsx"}, *const rs_ext[] = {".rs"};
        cn_eval_langs_add(&py, "python", py_ext, 2);
        cn_eval_langs_add(&many, "python", py_ext, 2);
        cn_eval_langs_add(&many, "c", c_ext, 2);
        cn_eval_langs_add(&many, "cpp", cpp_ext, 3);
        cn_eval_langs_add(&many, "go", go_ext, 1);
        cn_eval_langs_add(&many, "java", java_ext, 1);
        cn_eval_langs_add(&many, "javascript", js_ext, 3);
        cn_eval_langs_add(&many, "typescript", ts_ext, 2);
        cn_eval_langs_add(&many, "rust", rs_ext, 1);
    }
    test_rule();
    test_rule_languages();
    test_convert_offline();
    test_convert_agent();
    test_convert_locations();
    test_convert_empty();

    snprintf(root, sizeof root, "%s/cn_eval_tree.XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (mkdtemp(root) == NULL) {
        ok(0, "a temporary directory");
        return tap_done();
    }
    if (!ok(build_mirror() == 0, "the fixture mirror is built")) {
        cn_eval_tree_remove(root);
        return tap_done();
    }
    test_commit_one();
    test_commit_two();
    test_trailing_slash();
    test_reuse();
    test_errors();
    test_hostile();
    test_remove();
    is_int(cn_eval_tree_remove(root), 0, "the fixture is removed");
    ok(!exists(root), "... entirely");
    cn_eval_langs_free(&py);
    cn_eval_langs_free(&many);
    return tap_done();
}
