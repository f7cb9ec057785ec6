/* SPDX-License-Identifier: Apache-2.0 */
/* The LSP server: go-to-definition, find-references, workspace symbols and
 * a file's outline for an editor, answered from the static index (the
 * lsp_definition and lsp_references skills and the node table), which is
 * brought up to date with the files on disk before each request.  Unsaved
 * editor buffers are not read: the server declares no text synchronisation.
 *
 * Transport-free like the MCP server: the caller hands over one message
 * body at a time (`codenib lsp` frames them with Content-Length headers
 * on stdio, cn_cmd_lsp.c). */
#ifndef CN_LSP_H
#define CN_LSP_H

#include <stdbool.h>
#include <stddef.h>

typedef struct cn_lsp_options {
    const char *repo;          /* the repository; NULL: the client's rootUri / workspace folder */
    const char *cache_dir;     /* its index; NULL: the default cache */
    const char *indexes;       /* what a compile builds; NULL: the compiler's default */
    bool no_compile;           /* serve the index as it is, stale or not */
    void (*log)(const char *line, void *data);   /* a line each, may be NULL */
    void *log_data;
} cn_lsp_options;

typedef struct cn_lsp cn_lsp;

/* Checks the options (a repository given is checked now, one from the
 * client at initialize). */
int cn_lsp_new(const cn_lsp_options *o, cn_lsp **out);
void cn_lsp_free(cn_lsp *s);

/* Handles one message body; *response: the JSON text to send (malloc'd)
 * or NULL.  Returns 0 or CN_ENOMEM. */
int cn_lsp_handle(cn_lsp *s, const char *msg, size_t len, char **response);

/* After the exit notification: true, with the exit status the protocol
 * asks for (0 after a shutdown request, 1 without one). */
bool cn_lsp_exited(const cn_lsp *s, int *status);
/* Whether a shutdown request was answered. */
bool cn_lsp_shut_down(const cn_lsp *s);

/* ---- text positions and URIs (cn_lsp_text.c) ----------------------------
 * LSP counts a line's characters in UTF-16 code units unless the client
 * and server agree on UTF-8 (bytes, as the index does). */
/* The byte offset of UTF-16 column `col` in line[0, len) (len when past
 * its end). */
size_t cn_lsp_utf16_to_byte(const char *line, size_t len, size_t col);
/* The UTF-16 column of byte offset `off` in line[0, len). */
size_t cn_lsp_byte_to_utf16(const char *line, size_t len, size_t off);
/* The path of a file:// URI, percent-decoded (malloc'd); NULL for another
 * scheme or a malformed URI. */
char *cn_lsp_uri_to_path(const char *uri);
/* The file:// URI of an absolute path (malloc'd). */
char *cn_lsp_path_to_uri(const char *path);

#endif /* CN_LSP_H */
