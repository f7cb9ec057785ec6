/* SPDX-License-Identifier: Apache-2.0 */
/* Shared by the MCP server's protocol (cn_mcp.c), its tools
 * (cn_mcp_tools.c) and its worker pool (cn_mcp_pool.c). */
#ifndef CN_MCP_INTERNAL_H
#define CN_MCP_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>

#include <json-c/json.h>

#include "../agent/cn_tools.h"
#include "cn_jsonrpc.h"
#include "cn_mcp.h"
#include "cn_served.h"

/* The server's own tools, as bits of cn_mcp.offered. */
enum {
    CN_MCP_T_LOCATE = 1u << 0,
    CN_MCP_T_READ = 1u << 1,
    CN_MCP_T_GREP = 1u << 2,
    CN_MCP_T_GLOB = 1u << 3,
    CN_MCP_T_BASH = 1u << 4,
};

struct cn_mcp_pool;

struct cn_mcp {
    cn_served sv;              /* the repository, its registry and index */
    cn_tools_config tools;     /* read-only once the server is made */
    unsigned offered;          /* CN_MCP_T_* bits: the server's own tools offered */
    /* sv (registry, index, refresh) is used by one thread at a time: the
     * skills and locate run under this lock, the default tools without */
    pthread_mutex_t served_mu;
    /* the last tools/list result (JSON text), for a list asked for while
     * a skill holds served_mu; under cache_mu */
    pthread_mutex_t cache_mu;
    char *list_cache;
    struct cn_mcp_pool *pool;  /* NULL until cn_mcp_start */
};

/* A message handled by cn_mcp__handler: the server, and the cancel flag of
 * the request (NULL when it cannot be cancelled). */
typedef struct cn_mcp_call {
    cn_mcp *s;
    const atomic_bool *cancel;
} cn_mcp_call;

/* The JSON-RPC handler of every message; ctx is a cn_mcp_call. */
int cn_mcp__handler(void *ctx, const char *method, json_object *params, bool notification, json_object **r,
                    cn_rpc_fault *f);

/* notifications/cancelled: stops request `id` (its JSON text) if it is
 * queued or running on the pool (cn_mcp_pool.c); unknown ids are ignored. */
void cn_mcp__cancel(cn_mcp *s, const char *id);

/* tools/list: {"tools": [...]}; NULL on ENOMEM. */
json_object *cn_mcp__tools_list(cn_mcp *s);
/* tools/call: *result is a CallToolResult (a tool that failed is a result
 * with isError); a request that names no offered tool or has malformed
 * params is a fault.  cancel (may be NULL) is the request's flag.
 * Returns 0, 1 for a fault, CN_ENOMEM. */
int cn_mcp__tools_call(cn_mcp *s, json_object *params, const atomic_bool *cancel, json_object **result,
                       cn_rpc_fault *fault);

#endif /* CN_MCP_INTERNAL_H */
