/* SPDX-License-Identifier: Apache-2.0 */
/* The agent's default tools read, grep, glob and bash on a temporary
 * repository: exact outputs, confinement against hostile paths, bounded
 * regular expressions, process-group kills and output caps. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../../core/agent/cn_tools.h"
#include "tap.h"

static char root[4096];
static char scratch[4096];     /* outside the repository, for pid files */
static bool under_valgrind;

static void write_file(const char *rel, const char *data, size_t len)
{
    char path[8192];
    FILE *f;
    snprintf(path, sizeof path, "%s/%s", root, rel);
    f = fopen(path, "wb");
    if (f == NULL || fwrite(data, 1, len, f) != len) {
        printf("Bail out! cannot write %s\n", path);
        exit(1);
    }
    fclose(f);
}

static void put(const char *rel, const char *text)
{
    write_file(rel, text, strlen(text));
}

static void mkdir_rel(const char *rel)
{
    char path[8192];
    snprintf(path, sizeof path, "%s/%s", root, rel);
    mkdir(path, 0755);
}

static void make_repo(void)
{
    char tmpl[] = "/tmp/cn-tools-XXXXXX", tmpl2[] = "/tmp/cn-tools-pids-XXXXXX";
    char *real, path[8192];
    if (mkdtemp(tmpl) == NULL || mkdtemp(tmpl2) == NULL || (real = realpath(tmpl, NULL)) == NULL) {
        printf("Bail out! mkdtemp: %s\n", strerror(errno));
        exit(1);
    }
    snprintf(root, sizeof root, "%s", real);
    free(real);
    snprintf(scratch, sizeof scratch, "%s", tmpl2);
    put("a.txt", "alpha\nbeta\ngamma\nBeta two\n");
    put("ctx.txt", "l1\nl2\nl3\nl4\nl5\nl6\nl7\nl8\nl9\nl10\n");
    put("empty.txt", "");
    mkdir_rel("src");
    mkdir_rel("src/deep");
    put("src/main.c", "int main(void)\n{\n    return beta();\n}\n");
    put("src/util.c", "int beta(void)\n{\n    return 1;\n}\n");
    put("src/deep/x.py", "def beta():\n    pass\n");
    mkdir_rel("docs");
    put("docs/readme.md", "Nothing here.\n");
    write_file("bin.dat", "beta\0\n", 6);
    mkdir_rel("node_modules");
    put("node_modules/m.js", "beta\n");
    mkdir_rel(".git");
    put(".git/config", "beta\n");
    mkdir_rel("build");
    put("build/out.txt", "beta\n");
    {
        /* one line of 3000 x's: cut at 2000 */
        char line[3008];
        memset(line, 'x', 3000);
        memcpy(line + 3000, "\nshort\n", 8);
        put("long.txt", line);
    }
    {
        /* 300 lines of exactly 40 characters */
        cn_buf b = CN_BUF_INIT;
        for (int i = 1; i <= 300; i++) cn_buf_printf(&b, "row %04d %-31s\n", i, "padding");
        mkdir_rel("big");
        put("big/huge.txt", b.data);
        cn_buf_free(&b);
    }
    {
        /* a long run of a's then b: (a+)+$ backtracks exponentially on it */
        size_t n = under_valgrind ? 200 : 5000;
        char *s = malloc(n + 3);
        memset(s, 'a', n);
        memcpy(s + n, "b\n", 3);
        mkdir_rel("cat");
        put("cat/cat.txt", s);
        free(s);
    }
    snprintf(path, sizeof path, "%s/fifo", root);
    if (mkfifo(path, 0644) != 0) printf("# mkfifo: %s\n", strerror(errno));
    snprintf(path, sizeof path, "%s/link_in", root);
    if (symlink("a.txt", path) != 0) printf("# symlink: %s\n", strerror(errno));
    snprintf(path, sizeof path, "%s/link_out", root);
    if (symlink("/etc/passwd", path) != 0) printf("# symlink: %s\n", strerror(errno));
    snprintf(path, sizeof path, "%s/dir_out", root);
    if (symlink("/etc", path) != 0) printf("# symlink: %s\n", strerror(errno));
}

static void remove_tree(const char *dir)
{
    char cmd[8400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) printf("# could not remove %s\n", dir);
}

/* Runs a tool on JSON arguments; returns the code, *out the text or the
 * error message (malloc'd). */
static int run(const cn_tools_config *c, const char *tool, const char *json, char **out)
{
    json_object *args = json ? json_tokener_parse(json) : NULL;
    int rc;
    if (json && args == NULL) {
        printf("# bad test JSON: %s\n", json);
        *out = strdup("");
        return -999;
    }
    rc = cn_tool_run(c, tool, args, out);
    if (rc < 0) *out = strdup(cn_error_last()->message);
    json_object_put(args);
    return rc;
}

static void expect(const cn_tools_config *c, const char *tool, const char *json, const char *want,
                   const char *what)
{
    char *out = NULL;
    int rc = run(c, tool, json, &out);
    if (!is_int(rc, 0, what)) diag("error: %s", out);
    else is_str(out, want, what);
    free(out);
}

static void expect_err(const cn_tools_config *c, const char *tool, const char *json, int code,
                       const char *msg_part, const char *what)
{
    char *out = NULL;
    int rc = run(c, tool, json, &out);
    if (!is_int(rc, code, what)) diag("output: %s", out);
    else has_str(out, msg_part, what);
    free(out);
}

/* ---- read ---------------------------------------------------------------- */

static void test_read(const cn_tools_config *c)
{
    char *out = NULL;
    char want[4096];

    expect(c, "read", "{\"path\":\"a.txt\"}",
           "     1\talpha\n     2\tbeta\n     3\tgamma\n     4\tBeta two\n", "read: whole file with gutter");
    expect(c, "read", "{\"path\":\"a.txt\",\"offset\":2,\"limit\":2}",
           "     2\tbeta\n     3\tgamma\n[showing lines 2-3 of 4; read on with offset=4]\n",
           "read: offset and limit, with the read-on marker");
    expect(c, "read", "{\"path\":\"a.txt\",\"offset\":4}", "     4\tBeta two\n",
           "read: last line, no marker at the end of the file");
    expect(c, "read", "{\"path\":\"./src/util.c\",\"offset\":\"3\"}",
           "     3\t    return 1;\n     4\t}\n", "read: ./ prefix and a quoted number");
    expect_err(c, "read", "{\"path\":\"a.txt\",\"offset\":5}", CN_EINVAL, "has only 4 lines",
               "read: offset past the end");
    /* whether a link stays inside can change between a check and the
     * open: none is followed */
    expect_err(c, "read", "{\"path\":\"link_in\",\"limit\":1}", CN_EDENIED, "symbolic link",
               "read: a symlink inside the repository is refused");
    expect(c, "read", "{\"path\":\"empty.txt\"}", "[empty.txt is empty]\n", "read: empty file");
    expect_err(c, "read", "{\"path\":\"bin.dat\"}", CN_EINVAL, "binary file", "read: binary refused");
    expect_err(c, "read", "{\"path\":\"src\"}", CN_EINVAL, "is a directory", "read: directory refused");
    expect_err(c, "read", "{\"path\":\"fifo\"}", CN_EINVAL, "not a regular file",
               "read: a FIFO is refused without blocking");
    expect_err(c, "read", "{\"path\":\"nope.txt\"}", CN_ENOTFOUND, "nope.txt", "read: missing file");
    expect_err(c, "read", "{}", CN_EINVAL, "'path'", "read: missing path is named");
    /* file_path is the reference's name for the file: prompts written for
     * the original call read with it */
    expect(c, "read", "{\"file_path\":\"a.txt\",\"offset\":2,\"limit\":1}",
           "     2\tbeta\n[showing lines 2-2 of 4; read on with offset=3]\n", "read: file_path names the file");
    expect(c, "read", "{\"file_path\":\"a.txt\",\"path\":\"a.txt\",\"offset\":4}", "     4\tBeta two\n",
           "read: file_path and path may both be given when they agree");
    expect_err(c, "read", "{\"file_path\":\"a.txt\",\"path\":\"empty.txt\"}", CN_EINVAL,
               "arguments 'file_path' (\"a.txt\") and 'path' (\"empty.txt\") name the same thing differently",
               "read: file_path and path that disagree are refused, naming both");
    expect_err(c, "read", "{\"file_path\":\"../x\"}", CN_EDENIED, "'..' is refused",
               "read: file_path is confined like path");
    expect_err(c, "read", "{}", CN_EINVAL, "missing required argument 'file_path' (a string; 'path' is accepted too)",
               "read: the missing argument is named by both its names");
    {
        json_object *a = json_tokener_parse("{\"file_path\":\"x.py\"}"), *b = json_tokener_parse("{\"path\":\"y.py\"}");
        const char *pa = cn_tool_read_path(a), *pb = cn_tool_read_path(b);
        ok(pa && strcmp(pa, "x.py") == 0 && pb && strcmp(pb, "y.py") == 0, "read path: from file_path, else path");
        json_object_put(a);
        json_object_put(b);
    }
    expect_err(c, "read", "{\"path\":7}", CN_EINVAL, "'path' must be a string", "read: path type");
    expect_err(c, "read", "{\"path\":\"a.txt\",\"limit\":0}", CN_EINVAL, "'limit' must be at least 1",
               "read: limit 0 refused");
    expect_err(c, "read", "{\"path\":\"a.txt\",\"offset\":\"two\"}", CN_EINVAL, "'offset'",
               "read: offset not a number");

    memset(want, 0, sizeof want);
    strcpy(want, "     1\t");
    memset(want + 7, 'x', 2000);
    strcat(want, " [... line cut: 1000 more bytes]\n     2\tshort\n");
    expect(c, "read", "{\"path\":\"long.txt\"}", want, "read: a long line is cut with a note");

    {
        cn_tools_config small = *c;
        cn_buf b = CN_BUF_INIT;
        small.output_cap = 1000;  /* 48 bytes a line: 20 lines fit */
        for (int i = 1; i <= 20; i++) cn_buf_printf(&b, "%6d\trow %04d %-31s\n", i, i, "padding");
        cn_buf_puts(&b, "[output cap reached: showing lines 1-20 of 300; read on with offset=21]\n");
        expect(&small, "read", "{\"path\":\"big/huge.txt\"}", b.data,
               "read: output cap stops at a whole line and says where to read on");
        cn_buf_free(&b);
    }
    free(out);
}

/* ---- grep ---------------------------------------------------------------- */

static void test_grep(const cn_tools_config *c)
{
    expect(c, "grep", "{\"pattern\":\"beta\"}",
           "a.txt:2:beta\nsrc/deep/x.py:1:def beta():\nsrc/main.c:3:    return beta();\n"
           "src/util.c:1:int beta(void)\n",
           "grep: content mode, sorted, skipping binary, .git, node_modules and build");
    expect(c, "grep", "{\"pattern\":\"beta\",\"-i\":true,\"path\":\"a.txt\"}",
           "a.txt:2:beta\na.txt:4:Beta two\n", "grep: -i on one file");
    expect(c, "grep", "{\"pattern\":\"BETA\",\"case_insensitive\":true,\"path\":\"a.txt\"}",
           "a.txt:2:beta\na.txt:4:Beta two\n", "grep: case_insensitive alias");
    expect(c, "grep", "{\"pattern\":\"beta\",\"output_mode\":\"files_with_matches\"}",
           "a.txt\nsrc/deep/x.py\nsrc/main.c\nsrc/util.c\n", "grep: files_with_matches");
    expect(c, "grep", "{\"pattern\":\"beta\",\"output_mode\":\"count\",\"-i\":true}",
           "a.txt:2\nsrc/deep/x.py:1\nsrc/main.c:1\nsrc/util.c:1\n", "grep: count");
    expect(c, "grep", "{\"pattern\":\"beta\",\"glob\":\"*.c\"}",
           "src/main.c:3:    return beta();\nsrc/util.c:1:int beta(void)\n",
           "grep: glob filter on file names");
    expect(c, "grep", "{\"pattern\":\"beta\",\"glob\":\"*.{py,txt}\",\"output_mode\":"
                      "\"files_with_matches\"}",
           "a.txt\nsrc/deep/x.py\n", "grep: glob with alternatives");
    expect(c, "grep", "{\"pattern\":\"beta\",\"path\":\"src\",\"glob\":\"deep/*.py\"}",
           "src/deep/x.py:1:def beta():\n", "grep: glob with a directory, relative to path");
    expect(c, "grep", "{\"pattern\":\"beta\",\"head_limit\":2}",
           "a.txt:2:beta\nsrc/deep/x.py:1:def beta():\n"
           "[head_limit=2 reached; more results were left out]\n",
           "grep: head_limit");
    expect(c, "grep", "{\"pattern\":\"beta\",\"head_limit\":4}",
           "a.txt:2:beta\nsrc/deep/x.py:1:def beta():\nsrc/main.c:3:    return beta();\n"
           "src/util.c:1:int beta(void)\n",
           "grep: head_limit equal to the results adds no marker");
    expect(c, "grep", "{\"pattern\":\"gamma\",\"path\":\"a.txt\",\"-C\":1}",
           "a.txt-2-beta\na.txt:3:gamma\na.txt-4-Beta two\n", "grep: -C context");
    expect(c, "grep", "{\"pattern\":\"l2$|l8$\",\"path\":\"ctx.txt\",\"-C\":1}",
           "ctx.txt-1-l1\nctx.txt:2:l2\nctx.txt-3-l3\n--\nctx.txt-7-l7\nctx.txt:8:l8\nctx.txt-9-l9\n",
           "grep: separate context groups are divided by --");
    expect(c, "grep", "{\"pattern\":\"^l[12]$\",\"path\":\"ctx.txt\",\"-A\":1}",
           "ctx.txt:1:l1\nctx.txt:2:l2\nctx.txt-3-l3\n", "grep: -A with adjacent matches");
    expect(c, "grep", "{\"pattern\":\"l10\",\"path\":\"ctx.txt\",\"-B\":2,\"-A\":5}",
           "ctx.txt-8-l8\nctx.txt-9-l9\nctx.txt:10:l10\n", "grep: -B at the end of a file");
    expect(c, "grep", "{\"pattern\":\"zebra\"}", "No matches found.\n",
           "grep: no match (and the FIFO in the tree is skipped, not opened)");
    expect_err(c, "grep", "{\"pattern\":\"x\",\"path\":\"fifo\"}", CN_EINVAL, "not a regular file",
               "grep: a FIFO named explicitly is refused");
    expect_err(c, "grep", "{\"pattern\":\"beta\",\"path\":\"bin.dat\"}", CN_EINVAL, "binary file",
               "grep: a binary file named explicitly is refused");
    expect_err(c, "grep", "{\"pattern\":\"(beta\"}", CN_EINVAL,
               "missing closing parenthesis at offset 5", "grep: invalid regex with PCRE2's message");
    expect_err(c, "grep", "{\"path\":\"a.txt\"}", CN_EINVAL, "'pattern'", "grep: missing pattern");
    expect_err(c, "grep", "{\"pattern\":[\"x\"]}", CN_EINVAL, "'pattern' must be a string",
               "grep: pattern type");
    expect_err(c, "grep", "{\"pattern\":\"x\",\"output_mode\":\"lines\"}", CN_EINVAL,
               "'output_mode' must be one of", "grep: bad output_mode");
    expect_err(c, "grep", "{\"pattern\":\"x\",\"-A\":-1}", CN_EINVAL, "'-A' must be at least 0",
               "grep: negative context");
    expect_err(c, "grep", "{\"pattern\":\"(a+)+$\",\"path\":\"cat\"}", CN_ETIMEOUT,
               "pattern too expensive", "grep: catastrophic pattern stops with an error");
    {
        /* Every line of huge.txt matches: the output is cut at a whole line. */
        cn_tools_config small = *c;
        cn_buf full = CN_BUF_INIT, want = CN_BUF_INIT;
        size_t keep;
        small.output_cap = 1000;
        for (int i = 1; i <= 300; i++)
            cn_buf_printf(&full, "big/huge.txt:%d:row %04d %-31s\n", i, i, "padding");
        keep = 1000;
        while (full.data[keep - 1] != '\n') keep--;
        cn_buf_append(&want, full.data, keep);
        cn_buf_printf(&want, "[output capped at 1000 bytes: %zu more bytes left out]\n",
                      full.len - keep);
        expect(&small, "grep", "{\"pattern\":\"^row\",\"path\":\"big\"}", want.data,
               "grep: huge output capped with a marker saying how much was left out");
        cn_buf_free(&full);
        cn_buf_free(&want);
    }
}

/* ---- glob ---------------------------------------------------------------- */

static void test_glob(const cn_tools_config *c)
{
    expect(c, "glob", "{\"pattern\":\"**/*.c\"}", "src/main.c\nsrc/util.c\n", "glob: **/*.c");
    expect(c, "glob", "{\"pattern\":\"src/*.c\"}", "src/main.c\nsrc/util.c\n", "glob: src/*.c");
    expect(c, "glob", "{\"pattern\":\"*.txt\"}", "a.txt\nctx.txt\nempty.txt\nlong.txt\n",
           "glob: * stays in the top directory, sorted");
    expect(c, "glob", "{\"pattern\":\"**/*.{py,md}\"}", "docs/readme.md\nsrc/deep/x.py\n",
           "glob: alternatives");
    expect(c, "glob", "{\"pattern\":\"*.c\",\"path\":\"src\"}", "src/main.c\nsrc/util.c\n",
           "glob: relative to path, printed from the root");
    expect(c, "glob", "{\"pattern\":\"**/x.py\"}", "src/deep/x.py\n", "glob: ** spans directories");
    expect(c, "glob", "{\"pattern\":\"*.rs\"}", "No files matched '*.rs'.\n", "glob: no match");
    {
        cn_tools_config small = *c;
        small.glob_cap = 3;
        expect(&small, "glob", "{\"pattern\":\"**\"}",
               "a.txt\nbig/huge.txt\nbin.dat\n[8 more paths not shown: 11 matched, the first 3 "
               "are listed; narrow the pattern or the path]\n",
               "glob: capped with a marker; excluded dirs and symlinks not listed");
    }
    expect_err(c, "glob", "{}", CN_EINVAL, "'pattern'", "glob: missing pattern");
    expect_err(c, "glob", "{\"pattern\":\"*\",\"path\":\"a.txt\"}", CN_EINVAL, "not a directory",
               "glob: path must be a directory");
}

/* Every read, grep and glob call has a deadline (call_timeout_ms): a tree
 * of 4000 files cannot be listed in 1 ms, so glob answers with what it
 * found so far and says so, and grep fails with CN_ETIMEOUT, rather than
 * holding the caller (the MCP server answers one call at a time). */
static void test_deadline(const cn_tools_config *c)
{
    cn_tools_config quick = *c;
    char *out = NULL;
    int rc;

    mkdir_rel("many");
    for (int d = 0; d < 40; d++) {
        char rel[64];
        snprintf(rel, sizeof rel, "many/d%02d", d);
        mkdir_rel(rel);
        for (int f = 0; f < 100; f++) {
            snprintf(rel, sizeof rel, "many/d%02d/f%03d.txt", d, f);
            put(rel, "x\n");
        }
    }
    quick.call_timeout_ms = 1;
    rc = run(&quick, "glob", "{\"pattern\":\"**/*.txt\",\"path\":\"many\"}", &out);
    is_int(rc, 0, "deadline: glob past its time answers");
    has_str(out, "time limit of 1 ms reached: the result is partial",
            "deadline: and says its result is partial");
    free(out);
    expect_err(&quick, "grep", "{\"pattern\":\"y\",\"path\":\"many\"}", CN_ETIMEOUT,
               "ran out of its time budget of 1 ms", "deadline: grep past its time fails, saying so");
    rc = run(c, "glob", "{\"pattern\":\"**/f099.txt\",\"path\":\"many\"}", &out);
    ok(rc == 0 && strstr(out, "many/d39/f099.txt") && !strstr(out, "time limit"),
       "deadline: with the default budget the same tree is listed whole");
    free(out);
    {
        char p[8192];
        snprintf(p, sizeof p, "%s/many", root);
        remove_tree(p);
    }
}

/* ---- hostile inputs ------------------------------------------------------ */

static void test_hostile(const cn_tools_config *c)
{
    char *out = NULL;
    json_object *args;
    int rc;

    expect_err(c, "read", "{\"path\":\"../x\"}", CN_EDENIED, "'..' is refused", "hostile: ../x");
    expect_err(c, "read", "{\"path\":\"/etc/passwd\"}", CN_EDENIED, "absolute paths are refused",
               "hostile: /etc/passwd");
    expect_err(c, "read", "{\"path\":\"a/../../x\"}", CN_EDENIED, "'..' is refused",
               "hostile: a/../../x");
    expect_err(c, "read", "{\"path\":\"link_out\"}", CN_EDENIED, "symbolic link",
               "hostile: read through an escaping symlink");
    expect_err(c, "read", "{\"path\":\"dir_out/passwd\"}", CN_EDENIED, "outside the repository",
               "hostile: read through an escaping directory symlink");
    expect_err(c, "grep", "{\"pattern\":\"root\",\"path\":\"link_out\"}", CN_EDENIED,
               "outside the repository", "hostile: grep an escaping symlink");
    expect_err(c, "grep", "{\"pattern\":\"root\",\"path\":\"dir_out\"}", CN_EDENIED,
               "outside the repository", "hostile: grep an escaping directory");
    expect_err(c, "grep", "{\"pattern\":\"root\",\"path\":\"/etc\"}", CN_EDENIED, "absolute",
               "hostile: grep an absolute path");
    expect(c, "grep", "{\"pattern\":\"root|localhost\"}", "No matches found.\n",
           "hostile: grep over the repository does not follow escaping symlinks");
    expect_err(c, "glob", "{\"pattern\":\"*\",\"path\":\"dir_out\"}", CN_EDENIED,
               "outside the repository", "hostile: glob in an escaping directory");
    expect_err(c, "glob", "{\"pattern\":\"../*\"}", CN_EDENIED, "'..' is refused",
               "hostile: glob pattern with ..");
    expect_err(c, "glob", "{\"pattern\":\"/etc/*\"}", CN_EDENIED, "absolute patterns",
               "hostile: absolute glob pattern");
    rc = run(c, "glob", "{\"pattern\":\"**\"}", &out);
    ok(rc == 0 && strstr(out, "link_") == NULL && strstr(out, "dir_out") == NULL &&
           strstr(out, "passwd") == NULL && strstr(out, ".git") == NULL,
       "hostile: glob ** lists no symlink and nothing outside");
    free(out);

    args = json_object_new_object();
    json_object_object_add(args, "path", json_object_new_string_len("a.txt\0/../../etc", 16));
    rc = cn_tool_run(c, "read", args, &out);
    is_int(rc, CN_EINVAL, "hostile: NUL in a path is refused");
    has_str(cn_error_last()->message, "NUL", "hostile: NUL message");
    ok(out == NULL, "hostile: no output on refusal");
    json_object_put(args);
}

/* ---- bash ---------------------------------------------------------------- */

static long read_pid(const char *name)
{
    char path[8192];
    long pid = 0;
    FILE *f;
    snprintf(path, sizeof path, "%s/%s", scratch, name);
    if ((f = fopen(path, "r")) == NULL) return 0;
    if (fscanf(f, "%ld", &pid) != 1) pid = 0;
    fclose(f);
    return pid;
}

/* Gone or a zombie, waiting up to a few seconds for the kill to land. */
static bool process_gone(long pid)
{
    for (int i = 0; i < 300; i++) {
        char path[64], stat[512] = "";
        FILE *f;
        snprintf(path, sizeof path, "/proc/%ld/stat", pid);
        if ((f = fopen(path, "r")) == NULL) return true;
        if (fgets(stat, sizeof stat, f) == NULL) stat[0] = '\0';
        fclose(f);
        {
            const char *p = strrchr(stat, ')');
            if (p && p[1] == ' ' && (p[2] == 'Z' || p[2] == 'X')) return true;
        }
        usleep(10000);
    }
    return false;
}

static void test_bash(const cn_tools_config *c)
{
    cn_tools_config on = *c;
    char cmd[9000], want[8400];
    char *out = NULL;
    int rc;
    time_t t0;

    expect_err(c, "bash", "{\"command\":\"echo hi\"}", CN_EDENIED, "bash is disabled; enable it with",
               "bash: disabled by default");
    on.bash_enabled = true;
    expect(&on, "bash", "{\"command\":\"echo hello; echo err >&2; exit 3\"}",
           "hello\nerr\n[exit status 3]\n", "bash: stdout and stderr, exit status");
    snprintf(want, sizeof want, "%s\n[exit status 0]\n", root);
    expect(&on, "bash", "{\"command\":\"pwd\"}", want, "bash: runs in the repository root");
    expect(&on, "bash", "{\"command\":\"cat\"}", "[exit status 0]\n", "bash: stdin is /dev/null");
    setenv("OPENAI_API_KEY", "sk-not-for-the-model", 1);
    setenv("MY_SERVICE_TOKEN", "tok-not-for-the-model", 1);
    setenv("CN_TEST_PLAIN", "visible", 1);
    expect(&on, "bash", "{\"command\":\"env | grep -c -e not-for-the-model; echo $CN_TEST_PLAIN\"}",
           "0\nvisible\n[exit status 0]\n", "bash: keys and tokens are not in the command's environment, the rest is");
    unsetenv("OPENAI_API_KEY");
    unsetenv("MY_SERVICE_TOKEN");
    expect(&on, "bash", "{\"command\":\"printf 'no newline'\"}", "no newline\n[exit status 0]\n",
           "bash: status on its own line");
    expect(&on, "bash", "{\"command\":\"kill -9 $$\"}", "[killed by signal 9 (Killed)]\n",
           "bash: killed by a signal");
    expect_err(&on, "bash", "{}", CN_EINVAL, "'command'", "bash: missing command");

    on.bash_timeout_ms = 300;
    snprintf(cmd, sizeof cmd,
             "{\"command\":\"echo $$ > %s/sh.pid; sleep 30 & echo $! > %s/child.pid; echo started; "
             "sleep 30\"}", scratch, scratch);
    t0 = time(NULL);
    rc = run(&on, "bash", cmd, &out);
    is_int(rc, 0, "bash: a timeout is reported, not an error");
    is_str(out, "started\n[timed out after 300 ms: the command and the processes it started were "
                "stopped]\n", "bash: timeout message after the output");
    /* Not a speed test: only that it did not wait for sleep 30. */
    ok(time(NULL) - t0 < 20, "bash: returned long before sleep 30 ended");
    ok(read_pid("sh.pid") > 0 && process_gone(read_pid("sh.pid")), "bash: the shell was killed");
    ok(read_pid("child.pid") > 0 && process_gone(read_pid("child.pid")),
       "bash: its background child was killed");
    free(out);

    snprintf(cmd, sizeof cmd,
             "{\"command\":\"trap '' TERM; echo $$ > %s/stubborn.pid; sleep 30 & "
             "echo $! > %s/stubborn_child.pid; wait\"}", scratch, scratch);
    rc = run(&on, "bash", cmd, &out);
    has_str(out, "[timed out after 300 ms", "bash: a command ignoring SIGTERM times out");
    ok(read_pid("stubborn.pid") > 0 && process_gone(read_pid("stubborn.pid")) &&
           read_pid("stubborn_child.pid") > 0 && process_gone(read_pid("stubborn_child.pid")),
       "bash: ... and its group is stopped with SIGKILL");
    free(out);

    on.bash_timeout_ms = 20000;
    snprintf(cmd, sizeof cmd, "{\"command\":\"sleep 30 & echo $! > %s/bg.pid; echo done\"}",
             scratch);
    t0 = time(NULL);
    rc = run(&on, "bash", cmd, &out);
    is_int(rc, 0, "bash: background job");
    is_str(out, "done\n[exit status 0]\n", "bash: output of a command that left a job behind");
    ok(time(NULL) - t0 < 15, "bash: did not wait for the background job");
    ok(read_pid("bg.pid") > 0 && process_gone(read_pid("bg.pid")),
       "bash: the job left behind was stopped");
    free(out);

    {
        cn_tools_config small = on;
        cn_buf full = CN_BUF_INIT, w = CN_BUF_INIT;
        size_t keep;
        small.output_cap = 100;
        for (int i = 1; i <= 2000; i++) cn_buf_printf(&full, "%d\n", i);
        keep = 100;
        while (full.data[keep - 1] != '\n') keep--;
        cn_buf_append(&w, full.data, keep);
        cn_buf_printf(&w, "[output capped at 100 bytes: %zu more bytes left out]\n[exit status 0]\n",
                      full.len - keep);
        expect(&small, "bash", "{\"command\":\"seq 1 2000\"}", w.data, "bash: output capped");
        cn_buf_free(&full);
        cn_buf_free(&w);
    }
}

/* ---- dispatch and schemas ------------------------------------------------ */

static void test_dispatch(const cn_tools_config *c)
{
    char *out = (char *)"x";
    int rc;

    ok(cn_tool_is_default("read") && cn_tool_is_default("bash") && !cn_tool_is_default("Read") &&
           !cn_tool_is_default(NULL),
       "dispatch: default tool names");
    is_str(cn_default_tool_names[2], "glob", "dispatch: names in order");
    ok(cn_default_tool_names[4] == NULL, "dispatch: names NULL-terminated");
    rc = cn_tool_run(c, "write", NULL, &out);
    is_int(rc, CN_ENOTFOUND, "dispatch: unknown tool");
    ok(out == NULL, "dispatch: no output for an unknown tool");
    expect_err(c, "read", "[1]", CN_EINVAL, "must be a JSON object", "dispatch: args not an object");
    for (int i = 0; cn_default_tool_names[i]; i++) {
        const char *name = cn_default_tool_names[i];
        json_object *s = cn_tool_schema(name), *fn = NULL, *v = NULL, *params = NULL, *req = NULL;
        char what[128];
        bool good = s != NULL && json_object_object_get_ex(s, "type", &v) &&
                    strcmp(json_object_get_string(v), "function") == 0 &&
                    json_object_object_get_ex(s, "function", &fn) &&
                    json_object_object_get_ex(fn, "name", &v) &&
                    strcmp(json_object_get_string(v), name) == 0 &&
                    json_object_object_get_ex(fn, "description", &v) &&
                    json_object_object_get_ex(fn, "parameters", &params) &&
                    json_object_object_get_ex(params, "required", &req) &&
                    json_object_array_length(req) == 1;
        snprintf(what, sizeof what, "schema: %s is an OpenAI function tool", name);
        ok(good, what);
        json_object_put(s);
    }
    ok(cn_tool_schema("write") == NULL, "schema: unknown tool has none");
    {
        json_object *s = cn_tool_schema("read");
        const char *t = s ? json_object_to_json_string_ext(s, JSON_C_TO_STRING_PLAIN) : "";
        ok(strstr(t, "\"required\":[\"file_path\"]") && strstr(t, "\"file_path\":{\"type\":\"string\"") &&
               strstr(t, "\"path\":{\"type\":\"string\""),
           "schema: read offers the reference's file_path (required) and path");
        json_object_put(s);
    }
}

int main(void)
{
    const char *v = getenv("CN_VALGRIND");
    cn_tools_config c;

    under_valgrind = v != NULL && *v != '\0';
    make_repo();
    cn_tools_config_init(&c, root);
    ok(!c.bash_enabled && c.bash_timeout_ms == 30000 && c.call_timeout_ms == 5000 &&
           c.output_cap == 30000 && c.glob_cap == 200,
       "config: defaults");
    test_read(&c);
    test_grep(&c);
    test_glob(&c);
    test_deadline(&c);
    test_hostile(&c);
    test_bash(&c);
    test_dispatch(&c);
    remove_tree(root);
    remove_tree(scratch);
    return tap_done();
}
