/* Shared by the MCP server's protocol (cn_mcp.c) and its tools
 * (cn_mcp_tools.c). */
#ifndef CN_MCP_INTERNAL_H
#define CN_MCP_INTERNAL_H

#include <json-c/json.h>

#include "../agent/cn_tools.h"
#include "../plugin/cn_registry.h"
#include "cn_mcp.h"

/* JSON-RPC 2.0 error codes */
#define CN_RPC_PARSE_ERROR (-32700)
#define CN_RPC_INVALID_REQUEST (-32600)
#define CN_RPC_METHOD_NOT_FOUND (-32601)
#define CN_RPC_INVALID_PARAMS (-32602)
#define CN_RPC_INTERNAL_ERROR (-32603)

struct cn_mcp {
    cn_mcp_options o;          /* the strings below replace the caller's */
    char *repo;                /* canonical repository root */
    char *cache;               /* its cache directory */
    char *indexes;
    cn_registry *reg;
    char *gen;                 /* the generation the registry serves, NULL before the first */
    cn_strv excluded;          /* skills the resource guard took out for this generation */
    cn_strv excluded_why;      /* ... and why, in the same order */
    cn_tools_config tools;
    bool initialized;
    int stage;                 /* the compile stage last logged */
};

/* A protocol error for a request: code and message (malloc'd). */
typedef struct cn_mcp_fault {
    int code;
    char *message;
} cn_mcp_fault;

int cn_mcp__fault(cn_mcp_fault *f, int code, const char *fmt, ...) CN_PRINTF(3, 4);
void cn_mcp__log(const cn_mcp *s, const char *fmt, ...) CN_PRINTF(2, 3);

/* tools/list: {"tools": [...]}; NULL on ENOMEM. */
json_object *cn_mcp__tools_list(cn_mcp *s);
/* tools/call: *result is a CallToolResult (a tool that failed is a result
 * with isError); a request that names no offered tool or has malformed
 * params is a fault.  Returns 0, 1 for a fault, CN_ENOMEM. */
int cn_mcp__tools_call(cn_mcp *s, json_object *params, json_object **result, cn_mcp_fault *fault);

#endif /* CN_MCP_INTERNAL_H */
