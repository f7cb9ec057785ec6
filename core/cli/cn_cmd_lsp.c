/* `codenib lsp`: the LSP server (core/serve/cn_lsp.c) over stdio, each
 * message framed by a Content-Length header; the log on standard error. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cn_cli.h"
#include "serve/cn_lsp.h"

/* A message body longer than this is skipped, not read into memory. */
#define MAX_MESSAGE (64u << 20)
#define MAX_HEADER_LINE 1024

static void lsp_usage(FILE *f)
{
    fputs("usage: codenib lsp [--repo DIR] [--cache-dir D] [--index LIST] [--no-compile] [--quiet]\n"
          "\n"
          "A language server on standard input and output for an editor: go to\n"
          "definition, find references, workspace and document symbols, answered from\n"
          "codenib's static index of the repository (every language it compiles).\n"
          "The index is compiled on the first request and compiled again (only what\n"
          "changed) when files on disk changed; unsaved buffers are not read.\n"
          "\n"
          "  --repo DIR     the repository (default: the client's rootUri or first\n"
          "                 workspace folder)\n"
          "  --cache-dir D  where its index lives (as for `codenib compile`)\n"
          "  --index LIST   what a compile builds, as for `codenib compile --index`\n"
          "  --no-compile   never compile: serve the index as it is, stale or not\n"
          "  --quiet        no log on standard error\n"
          "  -h, --help     this text\n"
          "\n"
          "Exit status: 0 after shutdown and exit (or the end of input after\n"
          "shutdown), 1 otherwise or when the input is not LSP framing, 2 on a usage\n"
          "error.\n",
          f);
}

/* Reads one header line (without its CR LF).  1: a line, 0: end of
 * input before any byte, CN_EPARSE: too long or cut by the end. */
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

/* Reads one message's headers: *body_len.  1: a message, 0: end of input
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
        if (strncasecmp(line, "Content-Length:", 15) == 0) {
            char *end;
            const char *v = line + 15 + strspn(line + 15, " \t");
            unsigned long long x;
            errno = 0;
            x = strtoull(v, &end, 10);
            if (end == v || *end != '\0' || errno != 0 || *v == '-')
                return cn_error_set(CN_EPARSE, "message %ld: Content-Length '%s' is not a number", msg_no, v);
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

static int send_message(FILE *out, const char *body)
{
    if (fprintf(out, "Content-Length: %zu\r\n\r\n%s", strlen(body), body) < 0 || fflush(out) == EOF)
        return cn_error_set(CN_EIO, "cannot write to standard output: %s", strerror(errno));
    return 0;
}

/* The body of one message (len bytes) into *buf; a body over MAX_MESSAGE
 * is read past: *skipped.  CN_EPARSE when the input ends inside it. */
static int read_body(FILE *in, size_t len, cn_buf *buf, bool *skipped, long msg_no)
{
    char chunk[65536];
    size_t left = len;
    cn_buf_reset(buf);
    *skipped = len > MAX_MESSAGE;
    while (left > 0) {
        size_t want = left < sizeof chunk ? left : sizeof chunk, got = fread(chunk, 1, want, in);
        if (got == 0) return cn_error_set(CN_EPARSE, "message %ld: the input ends %zu bytes into a body of %zu", msg_no,
                                          len - left, len);
        if (!*skipped && cn_buf_append(buf, chunk, got) < 0) return cn_error_set(CN_ENOMEM, "out of memory");
        left -= got;
    }
    return 0;
}

int cn_cmd_lsp(int argc, char **argv)
{
    cn_lsp_options o;
    cn_lsp *s = NULL;
    cn_buf body = CN_BUF_INIT;
    FILE *out;
    cn_cli_serve c = {NULL, NULL, NULL, false, false};
    long msg_no = 0;
    int rc, status = 1;

    memset(&o, 0, sizeof o);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (cn_cli_is_help(a)) {
            lsp_usage(stdout);
            return CN_EXIT_OK;
        } else if (cn_cli_serve_option(argc, argv, &i, &c)) {
            continue;
        } else if (strcmp(a, "--stdio") != 0) {
            /* --stdio: what editors pass to say the transport, the only one there is */
            return cn_cli_serve_bad_arg("lsp", a);
        }
    }
    if (c.indexes != NULL && (rc = cn_cli_check_indexes("lsp", c.indexes)) != 0) return rc;
    o.repo = c.repo;
    o.cache_dir = c.cache_dir;
    o.indexes = c.indexes;
    o.no_compile = c.no_compile;
    o.log = c.quiet ? NULL : cn_cli_serve_log;
    o.log_data = (void *)"lsp";
    if (cn_lsp_new(&o, &s) < 0) return cn_cli_fail();

    if (cn_cli_protocol_stdout(&out) < 0) {
        cn_lsp_free(s);
        return cn_cli_fail();
    }

    for (;;) {
        size_t len = 0;
        bool skipped = false;
        char *reply = NULL;
        if ((rc = read_headers(stdin, &len, ++msg_no)) <= 0) break;
        if ((rc = read_body(stdin, len, &body, &skipped, msg_no)) < 0) break;
        if (skipped)
            reply = cn_strdup("{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32700,\"message\":"
                              "\"parse error: the message is over 64 MiB\"}}");
        else if ((rc = cn_lsp_handle(s, body.data ? body.data : "", body.len, &reply)) < 0)
            break;
        if (reply != NULL) rc = send_message(out, reply);
        free(reply);
        if (rc < 0 || cn_lsp_exited(s, &status)) break;
    }
    if (rc == 0 && !cn_lsp_exited(s, &status)) {
        /* the end of input: a client that went away */
        status = cn_lsp_shut_down(s) ? 0 : 1;
        if (status != 0 && !c.quiet) cn_cli_serve_log("standard input ended without shutdown and exit", (void *)"lsp");
    }
    cn_buf_free(&body);
    cn_lsp_free(s);
    if (fclose(out) != 0 && rc >= 0) rc = cn_error_set(CN_EIO, "cannot write to standard output: %s", strerror(errno));
    if (rc < 0) return cn_cli_fail();
    return status;
}
