/* SPDX-License-Identifier: Apache-2.0 */
/* The two ways JSON-RPC messages are framed on a byte stream: one message
 * per line (MCP's stdio transport) and a Content-Length header before each
 * body (LSP's base protocol).  Readers bound what they keep in memory: a
 * message over `max` bytes is read past, never stored. */
#ifndef CN_FRAME_H
#define CN_FRAME_H

#include <stdbool.h>
#include <stdio.h>

#include "../util/cn_util.h"

/* What the servers accept by default. */
#define CN_FRAME_MAX_MESSAGE ((size_t)64 << 20)

/* One line into *buf, without its newline (nor a CR before it).  1: a
 * line; 0: the end of input; 2: a line over `max` bytes, read past and
 * dropped (*buf empty); CN_ENOMEM. */
int cn_frame_read_line(FILE *in, size_t max, cn_buf *buf);

/* One LSP message: headers (Content-Length required, other "Name: value"
 * headers ignored, blank lines between messages allowed) and the body into
 * *body.  1: a message (*skipped when its body was over `max` bytes: read
 * past, *body empty); 0: the end of input between messages; CN_EPARSE
 * (the message number `msg_no` and what is wrong in the message) or
 * CN_ENOMEM.  After CN_EPARSE the stream cannot be resynchronised. */
int cn_frame_read_lsp(FILE *in, long msg_no, size_t max, cn_buf *body, bool *skipped);

/* Write one message in each framing and flush; CN_EIO when the stream
 * cannot be written. */
int cn_frame_write_line(FILE *out, const char *msg);
int cn_frame_write_lsp(FILE *out, const char *body);

/* The error reply to a message over the limit, for either framing. */
#define CN_FRAME_TOO_LONG_REPLY                                                                   \
    "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32700,\"message\":"                    \
    "\"parse error: the message is over 64 MiB\"}}"

#endif /* CN_FRAME_H */
