/* SPDX-License-Identifier: Apache-2.0 */
/* JSON-RPC 2.0 messages checked and answered (see cn_jsonrpc.h). */
#include "cn_jsonrpc.h"

#include "../plugin/cn_host.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int cn_rpc_fault_set(cn_rpc_fault *f, int code, const char *fmt, ...)
{
    cn_buf b = CN_BUF_INIT;
    va_list ap;
    va_start(ap, fmt);
    cn_buf_vprintf(&b, fmt, ap);
    va_end(ap);
    f->code = code;
    free(f->message);
    f->message = b.oom ? (cn_buf_free(&b), NULL) : cn_buf_steal(&b);
    return f->message ? 1 : CN_ENOMEM;
}

static json_object *response(json_object *id, const char *key, json_object *value)
{
    json_object *r = json_object_new_object();
    if (r == NULL) {
        json_object_put(value);
        return NULL;
    }
    json_object_object_add(r, "jsonrpc", json_object_new_string("2.0"));
    json_object_object_add(r, "id", json_object_get(id));
    json_object_object_add(r, key, value);
    return r;
}

static json_object *error_response(json_object *id, int code, const char *message)
{
    json_object *e = json_object_new_object();
    if (e == NULL) return NULL;
    json_object_object_add(e, "code", json_object_new_int(code));
    json_object_object_add(e, "message", json_object_new_string(message ? message : "out of memory"));
    return response(id, "error", e);
}

static bool valid_id(json_object *id)
{
    /* a string or an integer: MCP forbids null, and neither protocol
     * uses fractions */
    return json_object_is_type(id, json_type_string) || json_object_is_type(id, json_type_int);
}

typedef struct call {
    cn_rpc_handler fn;
    void *ctx;
    int oom;
} call;

/* One message of a batch or on its own: the response, NULL when none is
 * due (c->oom on ENOMEM). */
static json_object *handle_one(call *c, json_object *m)
{
    json_object *id = NULL, *method = NULL, *version = NULL, *params = NULL, *r = NULL;
    cn_rpc_fault f = {0, NULL};
    bool has_id;
    int rc;

    if (!json_object_is_type(m, json_type_object))
        return error_response(NULL, CN_RPC_INVALID_REQUEST, "a JSON-RPC message is a JSON object");
    has_id = json_object_object_get_ex(m, "id", &id);
    if (!json_object_object_get_ex(m, "method", &method)) {
        /* a response: these servers send no requests, so they answer none */
        if (json_object_object_get_ex(m, "result", NULL) || json_object_object_get_ex(m, "error", NULL))
            return NULL;
        return error_response(has_id && valid_id(id) ? id : NULL, CN_RPC_INVALID_REQUEST,
                              "the message has no \"method\"");
    }
    if (!json_object_object_get_ex(m, "jsonrpc", &version) || !json_object_is_type(version, json_type_string) ||
        strcmp(json_object_get_string(version), "2.0") != 0)
        return has_id ? error_response(valid_id(id) ? id : NULL, CN_RPC_INVALID_REQUEST,
                                       "\"jsonrpc\" must be \"2.0\"")
                      : NULL;
    if (!json_object_is_type(method, json_type_string))
        return has_id ? error_response(valid_id(id) ? id : NULL, CN_RPC_INVALID_REQUEST,
                                       "\"method\" must be a string")
                      : NULL;
    if (has_id && !valid_id(id))
        return error_response(NULL, CN_RPC_INVALID_REQUEST, "\"id\" must be a string or an integer");
    if (json_object_object_get_ex(m, "params", &params) && params != NULL &&
        !json_object_is_type(params, json_type_object))
        return has_id ? error_response(id, CN_RPC_INVALID_PARAMS, "\"params\" must be an object") : NULL;
    rc = c->fn(c->ctx, json_object_get_string(method), params, !has_id, &r, &f);
    if (rc < 0) c->oom = 1;
    if (!has_id || rc < 0) {
        json_object_put(r);
        free(f.message);
        return NULL;
    }
    r = rc == 0 ? response(id, "result", r) : error_response(id, f.code, f.message);
    free(f.message);
    if (r == NULL) c->oom = 1;
    return r;
}

static json_object *handle_batch(call *c, json_object *batch)
{
    size_t n = json_object_array_length(batch);
    json_object *out;
    if (n == 0) return error_response(NULL, CN_RPC_INVALID_REQUEST, "an empty batch");
    if ((out = json_object_new_array()) == NULL) return NULL;
    for (size_t i = 0; i < n && !c->oom; i++) {
        json_object *r = handle_one(c, json_object_array_get_idx(batch, i));
        if (r != NULL) json_object_array_add(out, r);
    }
    if (json_object_array_length(out) == 0 || c->oom) {
        json_object_put(out);
        return NULL;
    }
    return out;
}

int cn_rpc_handle(const char *msg, size_t len, bool batches, cn_rpc_handler fn, void *ctx, char **out)
{
    call c = {fn, ctx, 0};
    json_object *in = NULL, *r;

    *out = NULL;
    if (memchr(msg, '\0', len) != NULL) {
        r = error_response(NULL, CN_RPC_PARSE_ERROR, "parse error: the message holds a NUL byte");
    } else if (cn_json_parse(msg, "the message", &in) < 0) {
        char text[CN_ERROR_MESSAGE_MAX + 16];
        if (cn_error_last()->code == CN_ENOMEM) return CN_ENOMEM;
        snprintf(text, sizeof text, "parse error: %s", cn_error_last()->message);
        cn_error_clear();
        r = error_response(NULL, CN_RPC_PARSE_ERROR, text);
    } else {
        if (!json_object_is_type(in, json_type_array)) r = handle_one(&c, in);
        else if (batches) r = handle_batch(&c, in);
        else
            r = error_response(NULL, CN_RPC_INVALID_REQUEST,
                               "batches are not part of this protocol: send one message at a time");
        json_object_put(in);
    }
    if (c.oom) {
        json_object_put(r);
        return cn_error_set(CN_ENOMEM, "out of memory answering a JSON-RPC message");
    }
    if (r == NULL) return 0;
    *out = cn_json_text(r, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
    json_object_put(r);
    return *out ? 0 : cn_error_set(CN_ENOMEM, "out of memory answering a JSON-RPC message");
}
