/* SPDX-License-Identifier: Apache-2.0 */
/* The read tool: a window of a text file with a line-number gutter.
 * The file is streamed, so a huge file or a huge line costs no more
 * memory than the window shown. */
#include "cn_tools.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../util/cn_beneath.h"

#define DEFAULT_LIMIT 2000L
/* Bytes of a line kept for display: enough to cut it at CN_TOOLS_LINE_MAX
 * on a UTF-8 boundary. */
#define LINE_KEEP (CN_TOOLS_LINE_MAX + 4u)

typedef struct reader {
    const cn_tools_config *cfg;   /* for the deadline */
    int fd;
    size_t pos, len;
    bool eof;
    char buf[65536];
} reader;

static int reader_fill(reader *r, const char *rel)
{
    ssize_t k;
    if (r->cfg && cn_tools__late(r->cfg))
        return cn_error_set(CN_ETIMEOUT, "'%s': reading ran out of the call's time budget of "
                                         "%ld ms; read a smaller window with offset and limit",
                            rel, r->cfg->call_timeout_ms);
    if (r->pos > 0) {
        memmove(r->buf, r->buf + r->pos, r->len - r->pos);
        r->len -= r->pos;
        r->pos = 0;
    }
    do {
        k = read(r->fd, r->buf + r->len, sizeof r->buf - r->len);
    } while (k < 0 && errno == EINTR);
    if (k < 0) return cn_error_set(CN_EIO, "'%s': read failed: %s", rel, strerror(errno));
    if (k == 0) r->eof = true;
    r->len += (size_t)k;
    return 0;
}

/* Next line without its '\n': up to LINE_KEEP bytes into *line, its full
 * length into *total.  Returns 1 for a line, 0 at the end of the file. */
static int reader_line(reader *r, const char *rel, cn_buf *line, size_t *total)
{
    bool started = false;
    int rc;
    line->len = 0;
    *total = 0;
    for (;;) {
        char *nl = memchr(r->buf + r->pos, '\n', r->len - r->pos);
        size_t n = nl ? (size_t)(nl - (r->buf + r->pos)) : r->len - r->pos;
        if (n > 0 || nl) started = true;
        if (line->len < LINE_KEEP) {
            size_t take = n < LINE_KEEP - line->len ? n : LINE_KEEP - line->len;
            if (cn_buf_append(line, r->buf + r->pos, take) < 0)
                return cn_error_set(CN_ENOMEM, "out of memory reading '%s'", rel);
        }
        *total += n;
        r->pos += n;
        if (nl) {
            r->pos++;
            return 1;
        }
        if (r->eof) return started ? 1 : 0;
        if ((rc = reader_fill(r, rel)) < 0) return rc;
    }
}

static int open_text_file(const cn_tools_config *c, const char *path, reader *r)
{
    struct stat st;
    char *rel = NULL;
    int rc, rootfd;

    if ((rc = cn_beneath_clean(path, &rel)) < 0) return rc;
    if ((rootfd = cn_tools__open_root(c)) < 0) {
        free(rel);
        return rootfd;
    }
    /* Beneath the root's descriptor, following no link: a directory on the
     * way swapped for a link meanwhile is refused, not followed.
     * O_NONBLOCK: a FIFO does not block the open (it is refused below as
     * not a regular file). */
    r->fd = cn_tools__open(rootfd, rel, O_RDONLY | O_NONBLOCK);
    close(rootfd);
    free(rel);
    if (r->fd < 0) {
        int code = r->fd;
        r->fd = -1;
        return code;
    }
    if (fstat(r->fd, &st) != 0)
        return cn_error_set(CN_EIO, "'%s': cannot stat: %s", path, strerror(errno));
    if (S_ISDIR(st.st_mode))
        return cn_error_set(CN_EINVAL, "'%s' is a directory; list its files with glob", path);
    if (!S_ISREG(st.st_mode)) return cn_error_set(CN_EINVAL, "'%s' is not a regular file", path);
    while (!r->eof && r->len < CN_TOOLS_BINARY_PROBE)
        if ((rc = reader_fill(r, path)) < 0) return rc;
    if (cn_tools__is_binary(r->buf, r->len))
        return cn_error_set(CN_EINVAL, "'%s' is a binary file; read shows text files only", path);
    return 0;
}

typedef struct window {
    long offset, limit;
    long first, last;          /* lines shown (0: none) */
    bool capped;               /* stopped because the output cap was reached */
} window;

/* Adds line `no` to the output unless it would pass the cap. */
static int show_line(cn_tools_out *out, window *w, long no, const cn_buf *line, size_t total)
{
    cn_tools_out one;
    int rc;
    cn_tools__out_init(&one, (size_t)-1);
    if ((rc = cn_tools__out_printf(&one, "%6ld\t", no)) == 0 &&
        (rc = cn_tools__out_line_part(&one, line->data ? line->data : "", line->len, total)) == 0)
        rc = cn_tools__out_append(&one, "\n", 1);
    if (rc == 0) {
        /* The first line always goes in (cut by the cap if need be), so
         * the output is never empty. */
        if (w->first > 0 && out->buf.len + one.buf.len > out->cap) w->capped = true;
        else rc = cn_tools__out_append(out, one.buf.data, one.buf.len);
    }
    if (rc == 0 && !w->capped) {
        if (w->first == 0) w->first = no;
        w->last = no;
    }
    cn_tools__out_free(&one);
    return rc;
}

static int read_window(reader *r, const char *rel, cn_tools_out *out, window *w, long *lines)
{
    cn_buf line = CN_BUF_INIT;
    size_t total;
    long no = 0;
    int rc;

    while ((rc = reader_line(r, rel, &line, &total)) > 0) {
        no++;
        if (no >= w->offset && no - w->offset < w->limit && !w->capped)
            if ((rc = show_line(out, w, no, &line, total)) < 0) break;
    }
    cn_buf_free(&line);
    *lines = no;
    return rc;
}

/* The note after the lines: empty file, or where to read on. */
static int read_footer(cn_buf *note, const window *w, long lines, const char *rel)
{
    if (lines == 0) return cn_buf_printf(note, "[%s is empty]\n", rel);
    if (w->offset > lines)
        return cn_error_set(CN_EINVAL, "argument 'offset' is %ld but '%s' has only %ld line%s",
                            w->offset, rel, lines, lines == 1 ? "" : "s");
    if (w->last >= lines) return 0;
    return cn_buf_printf(note, "[%sshowing lines %ld-%ld of %ld; read on with offset=%ld]\n",
                         w->capped ? "output cap reached: " : "", w->first, w->last, lines,
                         w->last + 1);
}

int cn_tools__read(const cn_tools_config *c, json_object *args, char **output)
{
    const char *path;
    reader *r;
    window w = {1, DEFAULT_LIMIT, 0, 0, false};
    cn_tools_out out;
    cn_buf note = CN_BUF_INIT;
    long lines = 0;
    int rc;

    /* file_path is the reference's name; path is accepted as well */
    if ((rc = cn_tools__arg_str2(args, "file_path", "path", true, &path)) < 0 ||
        (rc = cn_tools__arg_long(args, "offset", 1, 1, &w.offset)) < 0 ||
        (rc = cn_tools__arg_long(args, "limit", DEFAULT_LIMIT, 1, &w.limit)) < 0)
        return rc;
    if ((r = calloc(1, sizeof *r)) == NULL) return cn_error_set(CN_ENOMEM, "out of memory");
    r->fd = -1;
    r->cfg = c;
    cn_tools__out_init(&out, c->output_cap);
    if ((rc = open_text_file(c, path, r)) == 0 &&
        (rc = read_window(r, path, &out, &w, &lines)) == 0 &&
        (rc = read_footer(&note, &w, lines, path)) == 0)
        rc = cn_tools__out_finish_with(&out, note.data, output);
    if (r->fd >= 0) close(r->fd);
    free(r);
    cn_tools__out_free(&out);
    cn_buf_free(&note);
    return rc;
}
