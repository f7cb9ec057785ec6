/* SPDX-License-Identifier: Apache-2.0 */
/* Chat completions: the request goes out as given (plus "model"), the
 * first choice's message comes back untouched -- tool_calls included --
 * with finish_reason and usage attached. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cn_llm.h"

#define ENDPOINT "chat/completions"

/* A shallow copy of the caller's request with "model" filled in, so the
 * caller's object is never modified. */
static json_object *with_model(const cn_model *m, json_object *request)
{
    json_object *body = json_object_new_object();

    if (body == NULL) return NULL;
    json_object_object_foreach(request, key, val) {
        json_object_object_add(body, key, json_object_get(val));
    }
    if (!json_object_object_get_ex(body, "model", NULL) && m->model != NULL)
        json_object_object_add(body, "model", json_object_new_string(m->model));
    return body;
}

static int check_request(json_object *request)
{
    json_object *msgs, *stream;

    if (!json_object_is_type(request, json_type_object))
        return cn_error_set(CN_EINVAL, "%s: the request must be a JSON object", ENDPOINT);
    if (!json_object_object_get_ex(request, "messages", &msgs) ||
        !json_object_is_type(msgs, json_type_array) || json_object_array_length(msgs) == 0)
        return cn_error_set(CN_EINVAL, "%s: the request needs a non-empty \"messages\" array",
                            ENDPOINT);
    if (json_object_object_get_ex(request, "stream", &stream) && json_object_get_boolean(stream))
        return cn_error_set(CN_EINVAL, "%s: \"stream\": true is not supported; the client reads "
                                       "whole answers (leave \"stream\" out)", ENDPOINT);
    return 0;
}

static json_object *int_or_null(int64_t v)
{
    return v >= 0 ? json_object_new_int64(v) : NULL;
}

static void read_usage(json_object *resp, cn_llm_call *call)
{
    json_object *usage = NULL, *details = NULL;

    json_object_object_get_ex(resp, "usage", &usage);
    call->prompt_tokens = cn_llm__usage_int(usage, "prompt_tokens");
    call->completion_tokens = cn_llm__usage_int(usage, "completion_tokens");
    if (json_object_is_type(usage, json_type_object))
        json_object_object_get_ex(usage, "prompt_tokens_details", &details);
    call->cached_tokens = cn_llm__usage_int(details, "cached_tokens");
}

static const char *type_phrase(json_object *v)
{
    switch (json_object_get_type(v)) {
    case json_type_null: return "null (or absent)";
    case json_type_boolean: return "a boolean";
    case json_type_int:
    case json_type_double: return "a number";
    case json_type_string: return "a string";
    case json_type_array: return "an array";
    case json_type_object: return "an object";
    }
    return "of an unknown type";
}

/* "... tool_calls is a string; expected ..." for a member of the wrong type. */
static int wrong_type(const char *base, const char *where, json_object *v, const char *expected)
{
    return cn_error_set(CN_EPARSE, "%s: the response from %s: %s is %s; expected %s", ENDPOINT,
                        base, where, type_phrase(v), expected);
}

/* One entry of tool_calls: {id, type "function", function {name,
 * arguments}}.  Arguments sent as a JSON object (some servers do) become
 * the string the protocol asks for, so the message can go back into the
 * conversation as it is; absent arguments are "{}". */
static int check_call(json_object *call, size_t i, const char *base)
{
    json_object *v, *fn;
    char where[96];

    snprintf(where, sizeof where, "choices[0].message.tool_calls[%zu]", i);
    if (!json_object_is_type(call, json_type_object))
        return wrong_type(base, where, call, "an object");
    if (!json_object_object_get_ex(call, "id", &v) || !json_object_is_type(v, json_type_string) ||
        json_object_get_string_len(v) == 0)
        return wrong_type(base, strcat(where, ".id"), v, "a non-empty string");
    if (!json_object_object_get_ex(call, "type", &v) || v == NULL)
        json_object_object_add(call, "type", json_object_new_string("function"));
    else if (!json_object_is_type(v, json_type_string) ||
             strcmp(json_object_get_string(v), "function") != 0)
        return cn_error_set(CN_EPARSE, "%s: the response from %s: %s.type is %s; only \"function\" "
                                       "calls are offered", ENDPOINT, base, where,
                            json_object_to_json_string(v));
    if (!json_object_object_get_ex(call, "function", &fn) ||
        !json_object_is_type(fn, json_type_object))
        return wrong_type(base, strcat(where, ".function"), fn, "an object");
    strcat(where, ".function");
    if (!json_object_object_get_ex(fn, "name", &v) || !json_object_is_type(v, json_type_string))
        return wrong_type(base, strcat(where, ".name"), v, "a string");
    if (!json_object_object_get_ex(fn, "arguments", &v) || v == NULL) {
        json_object_object_add(fn, "arguments", json_object_new_string("{}"));
    } else if (json_object_is_type(v, json_type_object)) {
        json_object_object_add(fn, "arguments",
                               json_object_new_string(json_object_to_json_string_ext(
                                   v, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE)));
    } else if (!json_object_is_type(v, json_type_string)) {
        return wrong_type(base, strcat(where, ".arguments"), v, "a string of JSON");
    }
    return 0;
}

/* Every member a caller reads is type-checked here, once: the agent and
 * the skills take the message as the protocol describes it.  A server (or
 * whatever answers at the base URL) may send anything. */
static int check_message(json_object *msg, const char *base)
{
    json_object *v, *calls;
    size_t n;
    int rc;

    if (!json_object_object_get_ex(msg, "role", &v) || v == NULL)
        json_object_object_add(msg, "role", json_object_new_string("assistant"));
    else if (!json_object_is_type(v, json_type_string))
        return wrong_type(base, "choices[0].message.role", v, "a string");
    if (json_object_object_get_ex(msg, "content", &v) && v != NULL &&
        !json_object_is_type(v, json_type_string))
        return wrong_type(base, "choices[0].message.content", v, "a string or null");
    if (!json_object_object_get_ex(msg, "tool_calls", &calls)) return 0;
    if (calls != NULL && !json_object_is_type(calls, json_type_array))
        return wrong_type(base, "choices[0].message.tool_calls", calls, "an array or null");
    n = calls == NULL ? 0 : json_object_array_length(calls);
    /* null and [] both mean "no calls"; OpenAI refuses an empty list when
     * the message is sent back, so neither is kept. */
    if (n == 0) {
        json_object_object_del(msg, "tool_calls");
        return 0;
    }
    /* Each call runs a tool whose output (up to 30 kB) joins the history:
     * a reply of a hundred thousand calls would run for hours and fill
     * gigabytes. */
    if (n > CN_LLM_MAX_TOOL_CALLS)
        return cn_error_set(CN_EPARSE, "%s: the response from %s has %zu tool calls in one message; "
                                       "at most %d are taken", ENDPOINT, base, n, CN_LLM_MAX_TOOL_CALLS);
    for (size_t i = 0; i < n; i++)
        if ((rc = check_call(json_object_array_get_idx(calls, i), i, base)) < 0) return rc;
    return 0;
}

/* The message of choices[0], with a reference taken so it outlives resp. */
static int first_message(json_object *resp, const char *base, json_object **message,
                         json_object **finish)
{
    json_object *choices, *choice, *msg, *err;
    int rc;

    *message = NULL;
    *finish = NULL;
    if (!json_object_is_type(resp, json_type_object))
        return cn_error_set(CN_EPARSE, "%s: the response from %s is not a JSON object", ENDPOINT,
                            base);
    if (!json_object_object_get_ex(resp, "choices", &choices)) {
        json_object *m = NULL;
        if (json_object_object_get_ex(resp, "error", &err) &&
            json_object_object_get_ex(err, "message", &m) &&
            json_object_is_type(m, json_type_string))
            return cn_error_set(CN_ENETWORK, "%s: the endpoint at %s answered with an error: "
                                             "\"%s\"", ENDPOINT, base, json_object_get_string(m));
        return cn_error_set(CN_EPARSE, "%s: the response from %s has no \"choices\"; is the "
                                       "base URL an OpenAI-compatible endpoint?", ENDPOINT, base);
    }
    if (!json_object_is_type(choices, json_type_array) || json_object_array_length(choices) == 0)
        return cn_error_set(CN_EPARSE, "%s: the response from %s has no choices (\"choices\" "
                                       "is empty or not an array)", ENDPOINT, base);
    choice = json_object_array_get_idx(choices, 0);
    if (!json_object_object_get_ex(choice, "message", &msg) ||
        !json_object_is_type(msg, json_type_object))
        return cn_error_set(CN_EPARSE, "%s: the response from %s has no choices[0].message "
                                       "object", ENDPOINT, base);
    if ((rc = check_message(msg, base)) < 0) return rc;
    /* finish_reason is informational: anything but a string is dropped */
    if (json_object_object_get_ex(choice, "finish_reason", finish) &&
        !json_object_is_type(*finish, json_type_string))
        *finish = NULL;
    *message = json_object_get(msg);
    *finish = json_object_get(*finish);
    return 0;
}

int cn_llm_chat(cn_model *m, json_object *request, json_object **message)
{
    cn_llm_call call = {ENDPOINT, 0, 0, 0, 0, -1, -1, -1};
    json_object *body, *resp = NULL, *msg = NULL, *finish = NULL, *usage;
    int rc;

    *message = NULL;
    if (m == NULL) return cn_error_set(CN_EINVAL, "%s: no model handle", ENDPOINT);
    if ((rc = check_request(request)) < 0) return rc;
    if ((body = with_model(m, request)) == NULL)
        return cn_error_set(CN_ENOMEM, "%s: out of memory", ENDPOINT);
    rc = cn_llm__post(m, ENDPOINT, body, &call, &resp);
    json_object_put(body);
    if (rc == 0) {
        read_usage(resp, &call);
        rc = first_message(resp, m->base_url, &msg, &finish);
    }
    json_object_put(resp);
    call.ok = rc == 0;
    cn_llm__record(m, &call);
    if (rc < 0) return rc;
    /* The message belongs to us now; the two members are documented
     * additions, everything else passes through as the server sent it. */
    json_object_object_add(msg, "finish_reason", finish);
    usage = json_object_new_object();
    json_object_object_add(usage, "prompt_tokens", int_or_null(call.prompt_tokens));
    json_object_object_add(usage, "completion_tokens", int_or_null(call.completion_tokens));
    json_object_object_add(usage, "cached_tokens", int_or_null(call.cached_tokens));
    json_object_object_add(msg, "usage", usage);
    *message = msg;
    return 0;
}
