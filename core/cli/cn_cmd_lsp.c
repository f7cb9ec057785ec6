/* SPDX-License-Identifier: Apache-2.0 */
/* `codenib lsp`: the LSP server (core/serve/cn_lsp.c) over stdio, each
 * message framed by a Content-Length header; the log on standard error. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cn_cli.h"
#include "serve/cn_frame.h"
#include "serve/cn_lsp.h"

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

int cn_cmd_lsp(int argc, char **argv)
{
    cn_lsp_options o;
    cn_lsp *s = NULL;
    cn_buf body = CN_BUF_INIT;
    FILE *out;
    cn_cli_serve c = {NULL, NULL, NULL, false, false};
    bool ended = false;
    long msg_no = 0;
    int rc, status = 1;

    memset(&o, 0, sizeof o);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        cn_cli_arg_kind kind = cn_cli_arg(a, &ended);
        if (kind == CN_CLI_END_OF_OPTIONS) {
            continue;
        } else if (kind == CN_CLI_OPERAND) {
            return cn_cli_serve_bad_arg("lsp", a);
        } else if (cn_cli_is_help(a)) {
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
        bool skipped = false;
        char *reply = NULL;
        if ((rc = cn_frame_read_lsp(stdin, ++msg_no, CN_FRAME_MAX_MESSAGE, &body, &skipped)) <= 0) break;
        if (skipped)
            reply = cn_strdup(CN_FRAME_TOO_LONG_REPLY);
        else if ((rc = cn_lsp_handle(s, body.data ? body.data : "", body.len, &reply)) < 0)
            break;
        if (reply != NULL) rc = cn_frame_write_lsp(out, reply);
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
