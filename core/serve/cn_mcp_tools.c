/* SPDX-License-Identifier: Apache-2.0 */
/* The MCP server's tools (see cn_mcp.h): the list, and each call run on
 * an index brought up to date first. */
#include "cn_mcp_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../agent/cn_query.h"

/* locate's limits on what it ranks */
#define LOCATE_MAX_FILES 50
#define LOCATE_MAX_SYMBOLS 100

static const char locate_schema[] =
    "{\"type\":\"object\",\"properties\":{"
    "\"question\":{\"type\":\"string\",\"description\":\"The issue, bug report, error message or question, "
    "as written: identifiers, paths, quoted errors and stack traces in it all help\"},"
    "\"max_files\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":50,\"default\":5,"
    "\"description\":\"How many files to name\"},"
    "\"max_symbols\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":100,\"default\":10,"
    "\"description\":\"How many symbols and locations to name\"}},"
    "\"required\":[\"question\"],\"additionalProperties\":false}";

static const char locate_description[] =
    "Where in the repository a change belongs: give the issue or question and get back the files, "
    "symbols (path:Class.method) and line ranges to read or edit, most likely first, each with the "
    "evidence that ranked it (named in the question, BM25 match, call-graph neighbour, quoted text "
    "found verbatim). Deterministic and offline; the first tool to call on a new task.";

/* ---- the list ------------------------------------------------------------ */

/* An MCP tool from an OpenAI function tool (the shape skills and default
 * tools describe themselves in). */
static json_object *mcp_tool(json_object *openai, bool read_only)
{
    json_object *fn = NULL, *v, *t = json_object_new_object(), *ann;
    if (t == NULL || !json_object_object_get_ex(openai, "function", &fn)) {
        json_object_put(t);
        return NULL;
    }
    if (json_object_object_get_ex(fn, "name", &v)) json_object_object_add(t, "name", json_object_get(v));
    if (json_object_object_get_ex(fn, "description", &v)) json_object_object_add(t, "description", json_object_get(v));
    if (json_object_object_get_ex(fn, "parameters", &v)) json_object_object_add(t, "inputSchema", json_object_get(v));
    /* what a client may show or auto-approve: none of them writes but bash */
    if ((ann = json_object_new_object()) != NULL) {
        json_object_object_add(ann, "readOnlyHint", json_object_new_boolean(read_only));
        json_object_object_add(t, "annotations", ann);
    }
    return t;
}

/* Takes `openai` (NULL: out of memory). */
static int add_tool(json_object *list, json_object *openai, bool read_only)
{
    json_object *t = openai ? mcp_tool(openai, read_only) : NULL;
    json_object_put(openai);
    if (t == NULL) return CN_ENOMEM;
    json_object_array_add(list, t);
    return 0;
}

/* locate, in the shape the skills describe themselves in */
static json_object *locate_tool(void)
{
    json_object *t = json_object_new_object(), *fn = json_object_new_object();
    json_object *schema = json_tokener_parse(locate_schema);
    if (t == NULL || fn == NULL || schema == NULL) {
        json_object_put(t);
        json_object_put(fn);
        json_object_put(schema);
        return NULL;
    }
    json_object_object_add(fn, "name", json_object_new_string(CN_MCP_LOCATE));
    json_object_object_add(fn, "description", json_object_new_string(locate_description));
    json_object_object_add(fn, "parameters", schema);
    json_object_object_add(t, "type", json_object_new_string("function"));
    json_object_object_add(t, "function", fn);
    return t;
}

/* The CN_MCP_T_* bit of one of the server's own tools, 0 for a skill. */
static unsigned own_bit(const char *name)
{
    if (strcmp(name, CN_MCP_LOCATE) == 0) return CN_MCP_T_LOCATE;
    if (strcmp(name, "read") == 0) return CN_MCP_T_READ;
    if (strcmp(name, "grep") == 0) return CN_MCP_T_GREP;
    if (strcmp(name, "glob") == 0) return CN_MCP_T_GLOB;
    if (strcmp(name, "bash") == 0) return CN_MCP_T_BASH;
    return 0;
}

/* The list, with served_mu held. */
static json_object *tools_list_locked(cn_mcp *s)
{
    json_object *list = json_object_new_array(), *skills, *out;
    int rc = list ? 0 : CN_ENOMEM;

    /* Without an index the skills are listed all the same: a call then
     * says why it cannot run, which tells the agent more than a tool that
     * is not there. */
    if (rc == 0 && cn_served_refresh(&s->sv) < 0) {
        cn_served_log(&s->sv, "%s", cn_error_last()->message);
        cn_error_clear();
    }
    if (rc == 0 && (s->offered & CN_MCP_T_LOCATE)) rc = add_tool(list, locate_tool(), true);
    for (size_t i = 0; rc == 0 && cn_default_tool_names[i]; i++)
        if (s->offered & own_bit(cn_default_tool_names[i]))
            rc = add_tool(list, cn_tools_schema(&s->tools, cn_default_tool_names[i]),
                          strcmp(cn_default_tool_names[i], "bash") != 0);
    skills = rc == 0 ? cn_registry_tools(s->sv.reg, NULL, &s->sv.excluded) : NULL;
    for (size_t i = 0; skills && rc == 0 && i < json_object_array_length(skills); i++)
        rc = add_tool(list, json_object_get(json_object_array_get_idx(skills, i)), true);
    json_object_put(skills);
    if (rc < 0 || (out = json_object_new_object()) == NULL) {
        json_object_put(list);
        return NULL;
    }
    json_object_object_add(out, "tools", list);
    return out;
}

json_object *cn_mcp__tools_list(cn_mcp *s)
{
    json_object *out = NULL;
    char *text;

    /* A skill running on the index holds it (and may for seconds): the
     * list is then the one made last, so that it is answered at once. */
    if (pthread_mutex_trylock(&s->served_mu) != 0) {
        pthread_mutex_lock(&s->cache_mu);
        if (s->list_cache != NULL) out = json_tokener_parse(s->list_cache);
        pthread_mutex_unlock(&s->cache_mu);
        if (out != NULL) return out;
        pthread_mutex_lock(&s->served_mu);
    }
    out = tools_list_locked(s);
    pthread_mutex_unlock(&s->served_mu);
    if (out != NULL && (text = cn_strdup(json_object_to_json_string_ext(out, JSON_C_TO_STRING_PLAIN))) != NULL) {
        pthread_mutex_lock(&s->cache_mu);
        free(s->list_cache);
        s->list_cache = text;
        pthread_mutex_unlock(&s->cache_mu);
    }
    return out;
}

/* ---- calls --------------------------------------------------------------- */

/* {"content": [{"type": "text", "text": text}, {... note}], "isError": is_error}:
 * the note, when there is one, says what was cut from the text */
static json_object *call_result_noted(const char *text, const char *note, bool is_error)
{
    json_object *r = json_object_new_object(), *content = json_object_new_array();
    const char *parts[2] = {text ? text : "", note};
    if (r == NULL || content == NULL) {
        json_object_put(r);
        json_object_put(content);
        return NULL;
    }
    for (size_t i = 0; i < 2 && parts[i] != NULL; i++) {
        json_object *item = json_object_new_object();
        if (item == NULL) {
            json_object_put(r);
            json_object_put(content);
            return NULL;
        }
        json_object_object_add(item, "type", json_object_new_string("text"));
        json_object_object_add(item, "text", json_object_new_string(parts[i]));
        json_object_array_add(content, item);
    }
    json_object_object_add(r, "content", content);
    json_object_object_add(r, "isError", json_object_new_boolean(is_error));
    return r;
}

static json_object *call_result(const char *text, bool is_error)
{
    return call_result_noted(text, NULL, is_error);
}

/* A failed call, as a result the agent reads: the error's message. */
static json_object *failed(void)
{
    json_object *r = call_result(cn_error_last()->message[0] ? cn_error_last()->message : "the call failed", true);
    cn_error_clear();
    return r;
}

/* A call refused for its arguments: a result with isError, as for every
 * tool, so the agent reads why and can call again. */
static int refused(json_object **result, const char *fmt, ...) CN_PRINTF(2, 3);
static int refused(json_object **result, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return (*result = call_result(msg, true)) ? 0 : CN_ENOMEM;
}

/* 1 and *out when key is an integer in [min, max], 0 when absent, -1 otherwise */
static int int_arg(json_object *args, const char *key, long min, long max, long *out)
{
    json_object *v;
    if (!json_object_object_get_ex(args, key, &v) || v == NULL) return 0;
    if (!json_object_is_type(v, json_type_int) || json_object_get_int64(v) < min || json_object_get_int64(v) > max)
        return -1;
    *out = (long)json_object_get_int64(v);
    return 1;
}

static int call_locate(cn_mcp *s, json_object *args, json_object **result)
{
    json_object *q = NULL, *res = NULL, *answer = NULL;
    long files = 0, symbols = 0;
    cn_query_opts qo;
    char *text, *note;

    if (!json_object_object_get_ex(args, "question", &q) || !json_object_is_type(q, json_type_string))
        return refused(result, "locate needs the argument 'question' (a string)");
    json_object_object_foreach(args, key, val) {
        (void)val;
        if (strcmp(key, "question") != 0 && strcmp(key, "max_files") != 0 && strcmp(key, "max_symbols") != 0)
            return refused(result, "locate: unknown argument '%s' (it takes: question, max_files, max_symbols)", key);
    }
    if (int_arg(args, "max_files", 1, LOCATE_MAX_FILES, &files) < 0)
        return refused(result, "locate: argument 'max_files' must be an integer from 1 to %d", LOCATE_MAX_FILES);
    if (int_arg(args, "max_symbols", 1, LOCATE_MAX_SYMBOLS, &symbols) < 0)
        return refused(result, "locate: argument 'max_symbols' must be an integer from 1 to %d", LOCATE_MAX_SYMBOLS);
    if (cn_served_refresh(&s->sv) < 0) return (*result = failed()) ? 0 : CN_ENOMEM;
    memset(&qo, 0, sizeof qo);
    qo.registry = s->sv.reg;
    qo.offline = true;   /* the client is the agent: it gets the planner's answer */
    qo.max_files = (size_t)files;
    qo.max_symbols = (size_t)symbols;
    if (cn_query_run(&qo, json_object_get_string(q), &res) < 0)
        return (*result = failed()) ? 0 : CN_ENOMEM;
    json_object_object_get_ex(res, "answer", &answer);
    text = cn_strdup(json_object_get_string(answer) ? json_object_get_string(answer) : "");
    note = text ? cn_result_cut_text(text, s->tools.output_cap, "ask for fewer: a lower max_files or max_symbols")
                : NULL;
    *result = text ? call_result_noted(text, note, false) : NULL;
    free(text);
    free(note);
    json_object_put(res);
    return *result ? 0 : CN_ENOMEM;
}

static int call_skill(cn_mcp *s, const cn_skill_entry *e, json_object *args, json_object **result)
{
    json_object *res = NULL;
    char *text = NULL, *note = NULL;
    if (cn_served_invoke(&s->sv, e->id, args, &res) < 0) return (*result = failed()) ? 0 : CN_ENOMEM;
    if (cn_result_text(e->meta, res, args, s->tools.output_cap, &text, &note) < 0) {
        json_object_put(res);
        return (*result = failed()) ? 0 : CN_ENOMEM;
    }
    *result = call_result_noted(text, note, false);
    free(text);
    free(note);
    json_object_put(res);
    return *result ? 0 : CN_ENOMEM;
}

/* Runs on the caller's thread without served_mu: the default tools read
 * the repository's files, not its index. */
static int call_default_tool(cn_mcp *s, const char *name, json_object *args, const atomic_bool *cancel,
                             json_object **result)
{
    cn_tools_config c = s->tools;
    bool timed_out = false;
    char *text = NULL;
    c.cancel = cancel;
    c.bash_timed_out = &timed_out;
    if (cn_tool_run(&c, name, args, &text) < 0) return (*result = failed()) ? 0 : CN_ENOMEM;
    /* a command stopped at its time limit did not do its job: the output
     * so far, with the status line that says so, is an error */
    *result = call_result(text, timed_out);
    free(text);
    return *result ? 0 : CN_ENOMEM;
}

/* locate and the skills, with served_mu held */
static int dispatch_locked(cn_mcp *s, const char *n, json_object *args, const atomic_bool *cancel,
                           json_object **result, cn_rpc_fault *f)
{
    const cn_skill_entry *e;
    /* cancelled while it waited for the index: it never starts (a skill
     * that runs cannot be stopped midway, its answer is dropped) */
    if (cancel != NULL && atomic_load(cancel))
        return (*result = call_result("the call was cancelled", true)) ? 0 : CN_ENOMEM;
    if (strcmp(n, CN_MCP_LOCATE) == 0) return call_locate(s, args, result);
    e = cn_registry_find(s->sv.reg, n);
    if (e == NULL || e->state == CN_STATE_DUPLICATE)
        return cn_rpc_fault_set(f, CN_RPC_INVALID_PARAMS, "there is no tool '%s' (tools/list names them)", n);
    if (!cn_registry_enabled(s->sv.reg, n))
        return cn_rpc_fault_set(f, CN_RPC_INVALID_PARAMS, "tool '%s' is not offered by this server (--skills)", n);
    if (e->state == CN_STATE_FAILED)
        return (*result = call_result(e->reason ? e->reason : "the skill failed to load", true)) ? 0 : CN_ENOMEM;
    return call_skill(s, e, args, result);
}

static int dispatch_call(cn_mcp *s, const char *n, json_object *args, const atomic_bool *cancel,
                         json_object **result, cn_rpc_fault *f)
{
    unsigned bit = own_bit(n);
    int rc;
    /* bash while disabled: refused with how to enable it, which says more
     * than "unknown" */
    if (bit != 0 && !(s->offered & bit) && (bit != CN_MCP_T_BASH || s->tools.bash_enabled))
        return cn_rpc_fault_set(f, CN_RPC_INVALID_PARAMS,
                                "tool '%s' is not offered by this server (--tools, --profile)", n);
    if (cn_tool_is_default(n)) return call_default_tool(s, n, args, cancel, result);
    pthread_mutex_lock(&s->served_mu);
    rc = dispatch_locked(s, n, args, cancel, result, f);
    pthread_mutex_unlock(&s->served_mu);
    return rc;
}

int cn_mcp__tools_call(cn_mcp *s, json_object *params, const atomic_bool *cancel, json_object **result,
                       cn_rpc_fault *f)
{
    json_object *name = NULL, *args = NULL, *empty = NULL;
    const char *n;
    int rc;

    *result = NULL;
    if (!json_object_object_get_ex(params, "name", &name) || !json_object_is_type(name, json_type_string))
        return cn_rpc_fault_set(f, CN_RPC_INVALID_PARAMS, "tools/call needs params.name (a string)");
    n = json_object_get_string(name);
    if (json_object_object_get_ex(params, "arguments", &args) && args != NULL &&
        !json_object_is_type(args, json_type_object))
        return cn_rpc_fault_set(f, CN_RPC_INVALID_PARAMS, "%s: params.arguments must be an object", n);
    if (args == NULL && (args = empty = json_object_new_object()) == NULL) return CN_ENOMEM;
    rc = dispatch_call(s, n, args, cancel, result, f);
    json_object_put(empty);
    return rc;
}
