/* SPDX-License-Identifier: Apache-2.0 */
/* The MCP server (Model Context Protocol over JSON-RPC 2.0): a coding
 * agent gets codenib's skills, the default tools read, grep and glob (bash
 * only when asked for) and `locate` -- the offline planner's answer -- as
 * MCP tools over one repository.  The index is compiled when missing and
 * brought up to date before each call that reads it, so an agent that
 * edits the repository never searches yesterday's code.
 *
 * Transport-free: the caller hands over one message at a time and sends
 * back what it gets (`codenib mcp` does it over stdio, cn_cmd_mcp.c).
 * Either each message is answered before the next (cn_mcp_handle), or
 * tools/call requests run on a pool of worker threads while the caller
 * goes on reading (cn_mcp_start, cn_mcp_submit, cn_mcp_stop): ping,
 * initialize and tools/list are then answered at once, and
 * notifications/cancelled stops the call it names. */
#ifndef CN_MCP_H
#define CN_MCP_H

#include <stdbool.h>
#include <stddef.h>

/* The tool that answers a localization question (cn_mcp_tools.c). */
#define CN_MCP_LOCATE "locate"

typedef struct cn_mcp_options {
    const char *repo;          /* the repository served (required) */
    const char *cache_dir;     /* its index; NULL: the default cache */
    const char *indexes;       /* what a compile builds ("bm25,graph"); NULL: the compiler's default */
    const char *skills;        /* comma-separated allow list; NULL: every usable skill */
    bool no_compile;           /* never compile: serve the index as it is, stale or not */
    bool enable_bash;          /* offer the bash tool */
    /* progress and warnings, one line each without a newline; may be NULL */
    void (*log)(const char *line, void *data);
    void *log_data;
    long tool_timeout_ms;      /* budget of one read, grep or glob call; 0: the
                                * default (cn_tools_config.call_timeout_ms) */
    size_t max_output;         /* bound of one tool result in bytes; 0: the default
                                * (CN_RESULT_CAP_DEFAULT, 30000) */
    const char *tools;         /* the server's own tools offered, comma-separated
                                * (locate, read, grep, glob, bash); NULL: all of
                                * them (bash only with enable_bash).  Skills are
                                * chosen with `skills`. */
} cn_mcp_options;

/* The server's own tools, in a --tools list. */
#define CN_MCP_OWN_TOOLS "locate, read, grep, glob, bash"

typedef struct cn_mcp cn_mcp;

/* Checks the repository and finds the skills; compiles nothing yet.
 * Errors name what is wrong (no such repository, a bad allow list). */
int cn_mcp_new(const cn_mcp_options *o, cn_mcp **out);
void cn_mcp_free(cn_mcp *s);

/* Handles one message (a JSON-RPC request, notification or batch) of len
 * bytes.  *response is the JSON text to send back (malloc'd, one line) or
 * NULL when nothing is due (a notification).  Malformed input is answered
 * with a JSON-RPC error, never a failure: the return value is CN_ENOMEM
 * or 0. */
int cn_mcp_handle(cn_mcp *s, const char *msg, size_t len, char **response);

/* Sends one response (JSON text, one line) whole; called with the
 * server's writer lock held, from the caller's thread or a worker's.
 * Returns 0 or a negative CN_E* code (the transport is gone). */
typedef int (*cn_mcp_send_fn)(const char *line, void *data);

#define CN_MCP_WORKERS_DEFAULT 4
#define CN_MCP_WORKERS_MAX 64

/* Starts `workers` threads (1 to CN_MCP_WORKERS_MAX) that run tools/call
 * requests handed over by cn_mcp_submit; every response goes through
 * send.  Errors: CN_EINVAL, CN_ENOMEM, CN_EIO (no thread). */
int cn_mcp_start(cn_mcp *s, unsigned workers, cn_mcp_send_fn send, void *send_data);

/* Handles one message on the caller's thread, except a tools/call
 * request and the first tools/list (which may compile the repository),
 * which are queued for a worker.  notifications/cancelled with
 * the requestId of a queued or running call stops it (a queued one never
 * runs; bash stops its process group, grep and glob stop as at their
 * deadline, a skill not yet started never starts) and nothing is sent for
 * it.  Returns 0, CN_ENOMEM, or the first error of send (from any
 * thread): the transport is gone and the caller should stop. */
int cn_mcp_submit(cn_mcp *s, const char *msg, size_t len);

/* Sends a response the caller made (a framing error) as the pool sends
 * its own: whole.  Returns 0, or the first error of send. */
int cn_mcp_send(cn_mcp *s, const char *line);

/* Waits for the queued and running calls to be answered (cancel: stops
 * them instead, and nothing more is sent), then joins the workers.
 * Returns 0, or the first error of send.  Does nothing when the pool was
 * not started; cn_mcp_free calls it too. */
int cn_mcp_stop(cn_mcp *s, bool cancel);

#endif /* CN_MCP_H */
