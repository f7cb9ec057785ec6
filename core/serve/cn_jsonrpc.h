/* SPDX-License-Identifier: Apache-2.0 */
/* JSON-RPC 2.0 for the MCP and LSP servers: one message (or an MCP
 * batch) checked -- JSON, jsonrpc "2.0", method, id, params -- handed to
 * the server's handler, and the response written.  Malformed input is
 * answered with the JSON-RPC error for it, never a failure. */
#ifndef CN_JSONRPC_H
#define CN_JSONRPC_H

#include <stdbool.h>
#include <stddef.h>

#include <json-c/json.h>

#include "../util/cn_util.h"

#define CN_RPC_PARSE_ERROR (-32700)
#define CN_RPC_INVALID_REQUEST (-32600)
#define CN_RPC_METHOD_NOT_FOUND (-32601)
#define CN_RPC_INVALID_PARAMS (-32602)
#define CN_RPC_INTERNAL_ERROR (-32603)
/* LSP: a request before initialize */
#define CN_RPC_SERVER_NOT_INITIALIZED (-32002)

/* An error answered to a request: code and message (malloc'd). */
typedef struct cn_rpc_fault {
    int code;
    char *message;
} cn_rpc_fault;

/* Sets the fault; returns 1, or CN_ENOMEM. */
int cn_rpc_fault_set(cn_rpc_fault *f, int code, const char *fmt, ...) CN_PRINTF(3, 4);

/* A server's handler of one valid message: a request, or a notification
 * (whose *result is dropped).  Returns 0 with *result (NULL is JSON
 * null), 1 with *f set, CN_ENOMEM.  params is an object or NULL. */
typedef int (*cn_rpc_handler)(void *ctx, const char *method, json_object *params, bool notification,
                              json_object **result, cn_rpc_fault *f);

/* Handles the message msg[0, len), which msg[len] ends (a NUL there; one
 * inside is a parse error): *response is the JSON text to send
 * (malloc'd, one line), NULL when none is due.  `batches`: an array of
 * messages is answered with an array (MCP 2025-03-26); otherwise it is an
 * invalid request (LSP).  Returns 0 or CN_ENOMEM. */
int cn_rpc_handle(const char *msg, size_t len, bool batches, cn_rpc_handler fn, void *ctx, char **response);

#endif /* CN_JSONRPC_H */
