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
 * Calls are answered in order, one at a time. */
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
} cn_mcp_options;

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

#endif /* CN_MCP_H */
