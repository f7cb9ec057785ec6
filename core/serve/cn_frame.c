/* SPDX-License-Identifier: Apache-2.0 */
/* JSON-RPC framing on stdio streams (see cn_frame.h). */
#include "cn_frame.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define MAX_HEADER_LINE 1024

int cn_frame_read_line(FILE *in, size_t max, cn_buf *buf)
{
    int c;
    bool too_long = false;
    cn_buf_reset(buf);
    while ((c = getc(in)) != EOF && c != '\n') {
        if (too_long) continue;
        if (buf->len >= max) {
            too_long = true;
            cn_buf_reset(buf);
            continue;
        }
        if (cn_buf_putc(buf, (char)c) < 0) return cn_error_set(CN_ENOMEM, "out of memory reading a message");
    }
    if (c == EOF && buf->len == 0 && !too_long) return 0;
    if (too_long) return 2;
    if (buf->len > 0 && buf->data[buf->len - 1] == '\r') buf->data[--buf->len] = '\0';
    return 1;
}

/* One header line (without its CR LF).  1: a line, 0: the end of input
 * before any byte, CN_EPARSE: too long or cut by the end. */
static int header_line(FILE *in, char *buf, size_t cap, size_t *len)
{
    int c;
    size_t n = 0;
    while ((c = getc(in)) != EOF && c != '\n') {
        if (n + 1 >= cap) return cn_error_set(CN_EPARSE, "a header line is longer than %zu bytes", cap - 1);
        buf[n++] = (char)c;
    }
    if (c == EOF && n == 0) return 0;
    if (c == EOF) return cn_error_set(CN_EPARSE, "the input ends inside a header");
    if (n > 0 && buf[n - 1] == '\r') n--;
    buf[n] = '\0';
    *len = n;
    return 1;
}

/* One message's headers: *body_len.  1: a message, 0: the end of input
 * between messages, CN_EPARSE with the reason. */
static int read_headers(FILE *in, size_t *body_len, long msg_no)
{
    char line[MAX_HEADER_LINE];
    size_t n = 0;
    bool have_len = false, any = false;
    int rc;
    while ((rc = header_line(in, line, sizeof line, &n)) == 1) {
        if (n == 0) {
            if (!any) continue;   /* blank lines between messages */
            break;
        }
        any = true;
        if (memchr(line, '\0', n) != NULL)
            return cn_error_set(CN_EPARSE, "message %ld: a header holds a NUL byte", msg_no);
        if (strncasecmp(line, "Content-Length:", 15) == 0) {
            char *end;
            const char *v = line + 15 + strspn(line + 15, " \t");
            unsigned long long x;
            errno = 0;
            x = strtoull(v, &end, 10);
            if (end == v || *end != '\0' || errno != 0 || *v == '-')
                return cn_error_set(CN_EPARSE, "message %ld: Content-Length '%.60s' is not a number", msg_no, v);
            *body_len = (size_t)x;
            have_len = x == (size_t)x;
            if (!have_len) return cn_error_set(CN_EPARSE, "message %ld: Content-Length %s is too large", msg_no, v);
        } else if (strchr(line, ':') == NULL) {
            return cn_error_set(CN_EPARSE, "message %ld: '%.60s' is not a header (expected Content-Length: N)",
                                msg_no, line);
        }
    }
    if (rc < 0) return cn_error_prefix("message %ld", msg_no);
    if (rc == 0 && !any) return 0;
    if (rc == 0) return cn_error_set(CN_EPARSE, "message %ld: the input ends inside the headers", msg_no);
    if (!have_len) return cn_error_set(CN_EPARSE, "message %ld: no Content-Length header", msg_no);
    return 1;
}

int cn_frame_read_lsp(FILE *in, long msg_no, size_t max, cn_buf *body, bool *skipped)
{
    char chunk[65536];
    size_t len = 0, left;
    int rc = read_headers(in, &len, msg_no);

    cn_buf_reset(body);
    *skipped = false;
    if (rc <= 0) return rc;
    *skipped = len > max;
    for (left = len; left > 0;) {
        size_t want = left < sizeof chunk ? left : sizeof chunk, got = fread(chunk, 1, want, in);
        if (got == 0)
            return cn_error_set(CN_EPARSE, "message %ld: the input ends %zu bytes into a body of %zu", msg_no,
                                len - left, len);
        if (!*skipped && cn_buf_append(body, chunk, got) < 0)
            return cn_error_set(CN_ENOMEM, "message %ld: out of memory for a body of %zu bytes", msg_no, len);
        left -= got;
    }
    if (*skipped) cn_buf_reset(body);
    return 1;
}

int cn_frame_write_line(FILE *out, const char *msg)
{
    if (fputs(msg, out) == EOF || fputc('\n', out) == EOF || fflush(out) == EOF)
        return cn_error_set(CN_EIO, "cannot write to standard output: %s", strerror(errno));
    return 0;
}

int cn_frame_write_lsp(FILE *out, const char *body)
{
    if (fprintf(out, "Content-Length: %zu\r\n\r\n%s", strlen(body), body) < 0 || fflush(out) == EOF)
        return cn_error_set(CN_EIO, "cannot write to standard output: %s", strerror(errno));
    return 0;
}
