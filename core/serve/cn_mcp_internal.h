/* SPDX-License-Identifier: Apache-2.0 */
/* Shared by the MCP server's protocol (cn_mcp.c) and its tools
 * (cn_mcp_tools.c). */
#ifndef CN_MCP_INTERNAL_H
#define CN_MCP_INTERNAL_H

#include <json-c/json.h>

#include "../agent/cn_tools.h"
#include "cn_jsonrpc.h"
#include "cn_mcp.h"
#include "cn_served.h"

struct cn_mcp {
    cn_served sv;              /* the repository, its registry and index */
    cn_tools_config tools;
};

/* tools/list: {"tools": [...]}; NULL on ENOMEM. */
json_object *cn_mcp__tools_list(cn_mcp *s);
/* tools/call: *result is a CallToolResult (a tool that failed is a result
 * with isError); a request that names no offered tool or has malformed
 * params is a fault.  Returns 0, 1 for a fault, CN_ENOMEM. */
int cn_mcp__tools_call(cn_mcp *s, json_object *params, json_object **result, cn_rpc_fault *fault);

#endif /* CN_MCP_INTERNAL_H */
