/* SPDX-License-Identifier: Apache-2.0 */
/* The grep tool: PCRE2 over the repository's text files, line by line.
 * ripgrep is not used even when installed: its ignore rules, binary
 * detection and output differ from what this tool promises, and PCRE2's
 * limits give every pattern a bound we control.  Files are listed and
 * opened by descriptors beneath the root (cn_tools__list_files,
 * cn_tools__open), never through a path string that a link swapped in
 * could redirect.
 *
 * Every pattern is bounded twice: PCRE2's match, depth and heap limits
 * stop one catastrophic match (such as (a+)+$ on a long line of a's)
 * inside a single pcre2_match() call, and a wall-clock budget over the
 * whole call stops a pattern that is merely slow on every line. */
#define PCRE2_CODE_UNIT_WIDTH 8
#include "cn_tools.h"

#include <fcntl.h>
#include <pcre2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../util/cn_beneath.h"
#include "../util/cn_glob.h"

#define MATCH_LIMIT 1000000u
#define DEPTH_LIMIT 10000u
#define HEAP_LIMIT_KIB 65536u
#define FILE_MAX (16u * 1024u * 1024u)

typedef enum { MODE_CONTENT, MODE_FILES, MODE_COUNT } grep_mode;

typedef struct grep_req {
    const char *pattern;
    const char *glob;
    bool glob_path;            /* glob has a '/': match the path, not the name */
    grep_mode mode;
    long before, after, head_limit;
    const cn_tools_config *c;
    int rootfd;                /* files are opened beneath it */
    pcre2_code *re;
    pcre2_match_data *md;
    pcre2_match_context *mctx;
    cn_tools_out out;
    long entries;              /* lines or entries shown, for head_limit */
    bool limited;              /* an entry past head_limit was left out */
    bool any_shown;            /* for the "--" group separator */
    size_t too_large;          /* files over FILE_MAX, not searched */
} grep_req;

/* ---- arguments ------------------------------------------------------------ */

static int parse_mode(const char *s, grep_mode *mode)
{
    if (s == NULL || strcmp(s, "content") == 0) *mode = MODE_CONTENT;
    else if (strcmp(s, "files_with_matches") == 0) *mode = MODE_FILES;
    else if (strcmp(s, "count") == 0) *mode = MODE_COUNT;
    else
        return cn_error_set(CN_EINVAL, "argument 'output_mode' must be one of content, "
                                       "files_with_matches, count; got '%s'", s);
    return 0;
}

/* "-i" is the schema's name; "case_insensitive" is accepted as well. */
static int parse_flags(json_object *args, grep_req *g, bool *icase)
{
    const char *mode;
    long ctx;
    int rc;
    bool alt;

    if ((rc = cn_tools__arg_str(args, "output_mode", false, &mode)) < 0 ||
        (rc = parse_mode(mode, &g->mode)) < 0 ||
        (rc = cn_tools__arg_bool(args, "-i", false, icase)) < 0 ||
        (rc = cn_tools__arg_bool(args, "case_insensitive", false, &alt)) < 0 ||
        (rc = cn_tools__arg_long(args, "-C", 0, 0, &ctx)) < 0 ||
        (rc = cn_tools__arg_long(args, "-A", ctx, 0, &g->after)) < 0 ||
        (rc = cn_tools__arg_long(args, "-B", ctx, 0, &g->before)) < 0 ||
        (rc = cn_tools__arg_long(args, "head_limit", 0, 0, &g->head_limit)) < 0)
        return rc;
    *icase = *icase || alt;
    return 0;
}

static int compile_pattern(grep_req *g, size_t len, bool icase)
{
    int err = 0;
    PCRE2_SIZE off = 0;
    uint32_t opts = PCRE2_UTF | PCRE2_MATCH_INVALID_UTF | (icase ? PCRE2_CASELESS : 0);

    if (len == 0) return cn_error_set(CN_EINVAL, "argument 'pattern' is empty");
    g->re = pcre2_compile((PCRE2_SPTR)g->pattern, len, opts, &err, &off, NULL);
    if (g->re == NULL) {
        PCRE2_UCHAR msg[256];
        if (pcre2_get_error_message(err, msg, sizeof msg) < 0) strcpy((char *)msg, "unknown error");
        return cn_error_set(CN_EINVAL, "invalid regular expression '%s': %s at offset %zu",
                            g->pattern, (const char *)msg, (size_t)off);
    }
    g->md = pcre2_match_data_create_from_pattern(g->re, NULL);
    g->mctx = pcre2_match_context_create(NULL);
    if (g->md == NULL || g->mctx == NULL) return cn_error_set(CN_ENOMEM, "out of memory");
    pcre2_set_match_limit(g->mctx, MATCH_LIMIT);
    pcre2_set_depth_limit(g->mctx, DEPTH_LIMIT);
    pcre2_set_heap_limit(g->mctx, HEAP_LIMIT_KIB);
    return 0;
}

/* ---- matching ------------------------------------------------------------ */

/* 1 match, 0 none, or a negative CN_E* code for a pattern too expensive. */
static int match_line(grep_req *g, const char *s, size_t n, const char *path, size_t no)
{
    int m;
    if (n > 0 && s[n - 1] == '\r') n--;
    m = pcre2_match(g->re, (PCRE2_SPTR)s, n, 0, 0, g->md, g->mctx);
    if (m >= 0) return 1;
    if (m == PCRE2_ERROR_NOMATCH) return 0;
    if (m == PCRE2_ERROR_MATCHLIMIT || m == PCRE2_ERROR_DEPTHLIMIT || m == PCRE2_ERROR_HEAPLIMIT)
        return cn_error_set(CN_ETIMEOUT, "pattern too expensive: '%s' hit PCRE2's backtracking "
                                         "limit on %s:%zu (nested quantifiers such as (a+)+ "
                                         "backtrack exponentially); simplify the pattern",
                            g->pattern, path, no);
    {
        PCRE2_UCHAR msg[256];
        if (pcre2_get_error_message(m, msg, sizeof msg) < 0) strcpy((char *)msg, "unknown error");
        return cn_error_set(CN_EINVAL, "pattern '%s' failed on %s:%zu: %s", g->pattern, path, no,
                            (const char *)msg);
    }
}

static int check_time(const grep_req *g, const char *path)
{
    if (!cn_tools__late(g->c)) return 0;
    return cn_error_set(CN_ETIMEOUT, "pattern too expensive: grep for '%s' ran out of its time "
                                     "budget of %ld ms while searching %s; simplify the pattern "
                                     "or narrow the path or glob", g->pattern,
                        g->c->call_timeout_ms, path);
}

/* Room for one more shown line or entry under head_limit. */
static bool take_entry(grep_req *g)
{
    if (g->head_limit > 0 && g->entries >= g->head_limit) {
        g->limited = true;
        return false;
    }
    g->entries++;
    return true;
}

/* One "path:no:text" (match) or "path-no-text" (context) line; "--"
 * before a group that does not continue the previous one. */
static int show_line(grep_req *g, const char *path, size_t no, char sep, const char *s, size_t n,
                     bool new_group)
{
    int rc;
    if (!take_entry(g)) return 0;
    if (new_group && g->any_shown && (g->before > 0 || g->after > 0))
        if ((rc = cn_tools__out_append(&g->out, "--\n", 3)) < 0) return rc;
    g->any_shown = true;
    if ((rc = cn_tools__out_printf(&g->out, "%s%c%zu%c", path, sep, no, sep)) < 0 ||
        (rc = cn_tools__out_line(&g->out, s, n)) < 0)
        return rc;
    return cn_tools__out_append(&g->out, "\n", 1);
}

typedef struct lines {
    size_t *start;             /* start[i]: offset of line i; start[n]: end + 1 */
    size_t n;
} lines;

static int split_lines(const char *data, size_t len, lines *L)
{
    size_t cap = 1, k = 0;
    for (size_t i = 0; i < len; i++) cap += data[i] == '\n';
    L->start = malloc((cap + 1) * sizeof *L->start);
    if (L->start == NULL) return cn_error_set(CN_ENOMEM, "out of memory");
    L->start[k++] = 0;
    for (size_t i = 0; i < len; i++)
        if (data[i] == '\n') L->start[k++] = i + 1;
    /* A final line without '\n' still counts; an empty tail does not. */
    if (len > 0 && data[len - 1] != '\n') L->start[k++] = len + 1;
    L->n = k - 1;
    return 0;
}

static size_t line_len(const lines *L, size_t i)
{
    return L->start[i + 1] - 1 - L->start[i];
}

static int grep_content(grep_req *g, const char *path, const char *data, const lines *L)
{
    size_t shown_to = 0;       /* last line shown of this file (1-based), 0: none */
    size_t after_to = 0;
    int rc = 0;

    for (size_t i = 0; i < L->n && rc == 0 && !g->limited; i++) {
        size_t no = i + 1, from = no;
        int m = match_line(g, data + L->start[i], line_len(L, i), path, no);
        if (m < 0) return m;
        if (m == 1) {
            from = no > (size_t)g->before ? no - (size_t)g->before : 1;
            if (from <= shown_to) from = shown_to + 1;
            after_to = no + (size_t)g->after;
        } else if (no > after_to) {
            from = no + 1;     /* nothing to show */
        }
        for (size_t k = from; k <= no && rc == 0 && !g->limited; k++) {
            bool new_group = shown_to == 0 || k != shown_to + 1;
            rc = show_line(g, path, k, k == no && m == 1 ? ':' : '-', data + L->start[k - 1],
                           line_len(L, k - 1), new_group);
            shown_to = k;
        }
        if (rc == 0 && (i & 15) == 15) rc = check_time(g, path);
    }
    return rc;
}

/* Matching lines of the file (files_with_matches: stops at the first). */
static int grep_count(grep_req *g, const char *path, const char *data, const lines *L,
                      size_t *count)
{
    *count = 0;
    for (size_t i = 0; i < L->n; i++) {
        int m = match_line(g, data + L->start[i], line_len(L, i), path, i + 1);
        if (m < 0) return m;
        *count += (size_t)m;
        if (m == 1 && g->mode == MODE_FILES) return 0;
        if ((i & 15) == 15) {
            int rc = check_time(g, path);
            if (rc < 0) return rc;
        }
    }
    return 0;
}

static int grep_data(grep_req *g, const char *path, const char *data, size_t len)
{
    lines L = {NULL, 0};
    size_t count = 0;
    int rc;

    if ((rc = split_lines(data, len, &L)) < 0) return rc;
    if (g->mode == MODE_CONTENT) {
        rc = grep_content(g, path, data, &L);
    } else if ((rc = grep_count(g, path, data, &L, &count)) == 0 && count > 0) {
        if (take_entry(g))
            rc = g->mode == MODE_FILES ? cn_tools__out_printf(&g->out, "%s\n", path)
                                       : cn_tools__out_printf(&g->out, "%s:%zu\n", path, count);
    }
    free(L.start);
    return rc;
}

/* ---- files --------------------------------------------------------------- */

/* Searches one repository file, open as fd (closed here); explicit: named
 * by the caller (a binary file is then an error rather than skipped). */
static int grep_fd(grep_req *g, int fd, const char *rel, bool explicit)
{
    char *data = NULL;
    size_t len = 0;
    struct stat st;
    int rc = 0;

    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        /* In a tree: replaced meanwhile; named: refused. */
        if (explicit) rc = cn_error_set(CN_EINVAL, "'%s' is not a regular file", rel);
    } else if ((size_t)st.st_size > FILE_MAX) {
        g->too_large++;
    } else if ((rc = cn_fd_read_all(fd, rel, FILE_MAX, &data, &len)) < 0) {
        cn_error_clear();
        rc = 0;            /* unreadable: skip it, as grep -s does */
    } else if (cn_tools__is_binary(data, len)) {
        if (explicit)
            rc = cn_error_set(CN_EINVAL, "'%s' is a binary file; grep searches text files", rel);
    } else {
        rc = grep_data(g, rel, data, len);
    }
    free(data);
    close(fd);
    return rc;
}

/* A file of a listed tree: one gone, or a link or FIFO put in its place
 * since, is skipped. */
static int grep_file(grep_req *g, const char *rel)
{
    int fd = cn_tools__open(g->rootfd, rel, O_RDONLY | O_NONBLOCK);
    if (fd < 0) {
        if (fd == CN_ENOMEM) return fd;
        cn_error_clear();
        return 0;
    }
    return grep_fd(g, fd, rel, false);
}

static bool glob_selects(const grep_req *g, const char *rel, size_t base_len)
{
    const char *name;
    if (g->glob == NULL) return true;
    if (g->glob_path) return cn_glob_match(g->glob, rel + base_len);
    name = strrchr(rel, '/');
    return cn_glob_match(g->glob, name ? name + 1 : rel);
}

static int grep_tree(grep_req *g, const char *dir)
{
    cn_strv files = CN_STRV_INIT;
    size_t base_len = dir[0] ? strlen(dir) + 1 : 0;
    bool partial = false;
    int rc = cn_tools__list_files(g->c, g->rootfd, dir, &files, &partial);

    if (rc == 0 && partial) rc = check_time(g, dir[0] ? dir : "the repository");
    for (size_t i = 0; rc == 0 && i < files.len && !g->limited; i++) {
        if ((rc = check_time(g, files.items[i])) < 0) break;
        if (!glob_selects(g, files.items[i], base_len)) continue;
        rc = grep_file(g, files.items[i]);
    }
    cn_strv_free(&files);
    return rc;
}

static int grep_finish(grep_req *g, char **output)
{
    cn_buf note = CN_BUF_INIT;
    int rc;
    if (g->entries == 0 && !g->limited) cn_buf_puts(&note, "No matches found.\n");
    if (g->limited)
        cn_buf_printf(&note, "[head_limit=%ld reached; more results were left out]\n",
                      g->head_limit);
    if (g->too_large > 0)
        cn_buf_printf(&note, "[%zu file%s over %u MB not searched]\n", g->too_large,
                      g->too_large == 1 ? "" : "s", FILE_MAX / (1024u * 1024u));
    rc = note.oom ? cn_error_set(CN_ENOMEM, "out of memory")
                  : cn_tools__out_finish_with(&g->out, note.data, output);
    cn_buf_free(&note);
    return rc;
}

int cn_tools__grep(const cn_tools_config *c, json_object *args, char **output)
{
    grep_req g;
    const char *path;
    char *rel = NULL;
    bool icase = false;
    int rc, fd = -1;

    memset(&g, 0, sizeof g);
    g.c = c;
    g.rootfd = -1;
    cn_tools__out_init(&g.out, c->output_cap);
    if ((rc = cn_tools__arg_str(args, "pattern", true, &g.pattern)) == 0 &&
        (rc = cn_tools__arg_str(args, "path", false, &path)) == 0 &&
        (rc = cn_tools__arg_str(args, "glob", false, &g.glob)) == 0 &&
        (rc = parse_flags(args, &g, &icase)) == 0 &&
        (rc = compile_pattern(&g, strlen(g.pattern), icase)) == 0 &&
        (rc = cn_beneath_clean(path, &rel)) == 0 &&
        (rc = g.rootfd = cn_tools__open_root(c)) >= 0 &&
        (rc = fd = cn_tools__open(g.rootfd, rel, O_RDONLY | O_NONBLOCK)) >= 0) {
        struct stat st;
        g.glob_path = g.glob && strchr(g.glob, '/') != NULL;
        if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
            close(fd);
            rc = grep_tree(&g, rel);
        } else {
            rc = grep_fd(&g, fd, rel[0] ? rel : ".", true);
        }
        if (rc == 0) rc = grep_finish(&g, output);
    }
    if (g.rootfd >= 0) close(g.rootfd);
    pcre2_match_context_free(g.mctx);
    pcre2_match_data_free(g.md);
    pcre2_code_free(g.re);
    cn_tools__out_free(&g.out);
    free(rel);
    return rc;
}
