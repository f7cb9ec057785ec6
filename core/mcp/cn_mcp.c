/* The MCP server's protocol (see cn_mcp.h): JSON-RPC 2.0 messages checked
 * and answered, the lifecycle (initialize, ping) and dispatch to the tools
 * (cn_mcp_tools.c). */
#include "cn_mcp_internal.h"

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <codenib/codenib.h>
#include <codenib/version.h>

#include "../index/cn_compile.h"

/* Protocol revisions this server speaks, newest first.  A client asking
 * for another one is offered the newest (the client then decides). */
static const char *const versions[] = {"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"};

static const char instructions[] =
    "codenib tells where in this repository a change belongs. Start with `locate`: give it the "
    "issue, error or question as it is written and it answers Files, Symbols and Locations "
    "(1-based line ranges) with the evidence for each. Then narrow down with the search and "
    "graph tools (bm25_search, find_callers, find_callees, lsp_definition, lsp_references, ...) "
    "and look at the lines with `read`. Paths are relative to the repository root. The index is "
    "brought up to date with the repository before every call that reads it.";

int cn_mcp__fault(cn_mcp_fault *f, int code, const char *fmt, ...)
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

void cn_mcp__log(const cn_mcp *s, const char *fmt, ...)
{
    char line[2048];
    va_list ap;
    if (s->o.log == NULL) return;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    s->o.log(line, s->o.log_data);
}

/* ---- the server ---------------------------------------------------------- */

static int canonical_dir(const char *path, char **out)
{
    struct stat st;
    char *real = realpath(path, NULL);
    if (real == NULL)
        return cn_error_set(errno == ENOMEM ? CN_ENOMEM : CN_ENOTFOUND, "repository %s: %s", path,
                            strerror(errno));
    if (stat(real, &st) != 0 || !S_ISDIR(st.st_mode)) {
        free(real);
        return cn_error_set(CN_ENOTFOUND, "repository %s is not a directory", path);
    }
    *out = real;
    return 0;
}

/* The allow list, each id checked: a misspelt skill would otherwise leave
 * the agent without it and nobody told. */
static int set_allow(cn_mcp *s, const char *csv)
{
    cn_strv ids = CN_STRV_INIT;
    int rc = cn_strv_split(&ids, csv, ',');
    for (size_t i = 0; rc == 0 && i < ids.len; i++) {
        const cn_skill_entry *e = cn_registry_find(s->reg, ids.items[i]);
        if (e == NULL)
            rc = cn_error_set(CN_ENOTFOUND, "--skills: there is no skill '%s' (`codenib skills list` names them)",
                              ids.items[i]);
        else if (e->state == CN_STATE_FAILED)
            rc = cn_error_set(CN_ELOAD, "--skills: skill '%s' cannot be used: %s", e->id,
                              e->reason ? e->reason : "it failed to load");
    }
    if (rc == 0 && ids.len == 0) rc = cn_error_set(CN_EINVAL, "--skills names no skill");
    if (rc == 0) rc = cn_registry_set_allow(s->reg, (const char *const *)ids.items, ids.len);
    cn_strv_free(&ids);
    return rc;
}

int cn_mcp_new(const cn_mcp_options *o, cn_mcp **out)
{
    /* the default tools' names and locate are the server's own: a skill
     * with one of them is refused (and listed so by `skills list`) */
    static const char *const reserved[] = {"read", "grep", "glob", "bash", CN_MCP_LOCATE};
    cn_mcp *s;
    int rc;

    *out = NULL;
    if (o == NULL || o->repo == NULL) return cn_error_set(CN_EINVAL, "the MCP server needs a repository");
    if ((s = calloc(1, sizeof *s)) == NULL) return cn_error_set(CN_ENOMEM, "out of memory");
    s->o = *o;
    s->o.repo = s->o.cache_dir = s->o.indexes = s->o.skills = NULL;
    rc = canonical_dir(o->repo, &s->repo);
    if (rc == 0) {
        if (o->cache_dir != NULL) rc = (s->cache = cn_strdup(o->cache_dir)) ? 0 : CN_ENOMEM;
        else rc = cn_cache_dir_for(s->repo, &s->cache);
    }
    if (rc == 0 && o->indexes != NULL && (s->indexes = cn_strdup(o->indexes)) == NULL) rc = CN_ENOMEM;
    if (rc == 0) rc = cn_registry_new(&s->reg);
    if (rc == 0) rc = cn_registry_discover(s->reg);
    if (rc == 0) rc = cn_registry_set_tool_names(s->reg, reserved, sizeof reserved / sizeof reserved[0]);
    if (rc == 0 && o->skills != NULL) rc = set_allow(s, o->skills);
    if (rc == 0) rc = cn_registry_models_from_env(s->reg);
    if (rc == CN_ENOMEM && cn_error_last()->code != CN_ENOMEM) cn_error_set(CN_ENOMEM, "out of memory");
    if (rc < 0) {
        cn_mcp_free(s);
        return rc;
    }
    cn_tools_config_init(&s->tools, s->repo);
    s->tools.bash_enabled = o->enable_bash;
    s->tools.bash_hint = "`codenib mcp --enable-bash`";
    *out = s;
    return 0;
}

void cn_mcp_free(cn_mcp *s)
{
    if (s == NULL) return;
    cn_registry_free(s->reg);
    free(s->repo);
    free(s->cache);
    free(s->indexes);
    free(s->gen);
    cn_strv_free(&s->excluded);
    cn_strv_free(&s->excluded_why);
    free(s);
}

bool cn_mcp_initialized(const cn_mcp *s)
{
    return s->initialized;
}

/* ---- messages ------------------------------------------------------------ */

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

static json_object *initialize(cn_mcp *s, json_object *params, cn_mcp_fault *f)
{
    json_object *v = NULL, *r, *caps, *tools, *info;
    const char *asked, *chosen = versions[0];

    if (!json_object_object_get_ex(params, "protocolVersion", &v) || !json_object_is_type(v, json_type_string)) {
        cn_mcp__fault(f, CN_RPC_INVALID_PARAMS, "initialize needs params.protocolVersion (a string such as \"%s\")",
                      versions[0]);
        return NULL;
    }
    asked = json_object_get_string(v);
    for (size_t i = 0; i < sizeof versions / sizeof versions[0]; i++)
        if (strcmp(asked, versions[i]) == 0) chosen = versions[i];
    if (strcmp(asked, chosen) != 0)
        cn_mcp__log(s, "the client asked for protocol %s; offering %s", asked, chosen);
    r = json_object_new_object();
    caps = json_object_new_object();
    tools = json_object_new_object();
    info = json_object_new_object();
    if (r == NULL || caps == NULL || tools == NULL || info == NULL) {
        json_object_put(r);
        json_object_put(caps);
        json_object_put(tools);
        json_object_put(info);
        return NULL;
    }
    json_object_object_add(tools, "listChanged", json_object_new_boolean(0));
    json_object_object_add(caps, "tools", tools);
    json_object_object_add(info, "name", json_object_new_string("codenib"));
    json_object_object_add(info, "version", json_object_new_string(CN_VERSION_STRING));
    json_object_object_add(r, "protocolVersion", json_object_new_string(chosen));
    json_object_object_add(r, "capabilities", caps);
    json_object_object_add(r, "serverInfo", info);
    json_object_object_add(r, "instructions", json_object_new_string(instructions));
    s->initialized = true;
    return r;
}

/* The result of a request, or NULL with *f set (f->message NULL: ENOMEM). */
static json_object *dispatch(cn_mcp *s, const char *method, json_object *params, cn_mcp_fault *f, int *oom)
{
    json_object *r = NULL;
    if (strcmp(method, "initialize") == 0) {
        if ((r = initialize(s, params, f)) == NULL && f->message == NULL) *oom = 1;
        return r;
    }
    if (strcmp(method, "ping") == 0) {
        if ((r = json_object_new_object()) == NULL) *oom = 1;
        return r;
    }
    if (strcmp(method, "tools/list") == 0) {
        if ((r = cn_mcp__tools_list(s)) == NULL) *oom = 1;
        return r;
    }
    if (strcmp(method, "tools/call") == 0) {
        if (cn_mcp__tools_call(s, params, &r, f) < 0) *oom = 1;
        return r;
    }
    if (cn_mcp__fault(f, CN_RPC_METHOD_NOT_FOUND,
                      "method '%s' is not served here (codenib serves initialize, ping, tools/list "
                      "and tools/call)",
                      method) < 0)
        *oom = 1;
    return NULL;
}

static bool valid_id(json_object *id)
{
    /* MCP: a string or an integer, never null */
    return json_object_is_type(id, json_type_string) || json_object_is_type(id, json_type_int);
}

/* One message of a batch or on its own: the response, NULL when none is
 * due; *oom on ENOMEM. */
static json_object *handle_one(cn_mcp *s, json_object *m, int *oom)
{
    json_object *id = NULL, *method = NULL, *version = NULL, *params = NULL, *r;
    bool has_id;
    cn_mcp_fault f = {0, NULL};

    if (!json_object_is_type(m, json_type_object))
        return error_response(NULL, CN_RPC_INVALID_REQUEST, "a JSON-RPC message is a JSON object");
    has_id = json_object_object_get_ex(m, "id", &id);
    if (!json_object_object_get_ex(m, "method", &method)) {
        /* a response: this server sends no requests, so it answers none */
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
    if (!has_id) return NULL;   /* notifications: initialized, cancelled, ... need no answer */
    if (!valid_id(id))
        return error_response(NULL, CN_RPC_INVALID_REQUEST, "\"id\" must be a string or an integer");
    if (json_object_object_get_ex(m, "params", &params) && params != NULL &&
        !json_object_is_type(params, json_type_object))
        return error_response(id, CN_RPC_INVALID_PARAMS, "\"params\" must be an object");
    r = dispatch(s, json_object_get_string(method), params, &f, oom);
    if (r != NULL) return response(id, "result", r);
    if (*oom) {
        free(f.message);
        return NULL;
    }
    r = error_response(id, f.code, f.message);
    free(f.message);
    return r;
}

static json_object *handle_batch(cn_mcp *s, json_object *batch, int *oom)
{
    size_t n = json_object_array_length(batch);
    json_object *out;
    if (n == 0) return error_response(NULL, CN_RPC_INVALID_REQUEST, "an empty batch");
    if ((out = json_object_new_array()) == NULL) return NULL;
    for (size_t i = 0; i < n && !*oom; i++) {
        json_object *r = handle_one(s, json_object_array_get_idx(batch, i), oom);
        if (r != NULL) json_object_array_add(out, r);
    }
    if (json_object_array_length(out) == 0 || *oom) {
        json_object_put(out);
        return NULL;
    }
    return out;
}

static json_object *parse(const char *msg, size_t len, char *why, size_t why_len)
{
    json_tokener *tok = json_tokener_new();
    json_object *o;
    enum json_tokener_error err;
    size_t end;

    if (tok == NULL) {
        snprintf(why, why_len, "out of memory");
        return NULL;
    }
    o = json_tokener_parse_ex(tok, msg, (int)len);
    err = json_tokener_get_error(tok);
    end = err == json_tokener_success ? json_tokener_get_parse_end(tok) : len;
    /* a bare number ("42") is only known to have ended at the end of the
     * input: say so with a NUL */
    if (err == json_tokener_continue) {
        o = json_tokener_parse_ex(tok, "", 1);
        err = json_tokener_get_error(tok);
        if (err != json_tokener_success) {
            snprintf(why, why_len, "the JSON text ends early");
            err = json_tokener_continue;
        }
    }
    if (err != json_tokener_success && err != json_tokener_continue)
        snprintf(why, why_len, "%s", json_tokener_error_desc(err));
    else if (err == json_tokener_success && end + strspn(msg + end, " \t\r\n") < len)
        snprintf(why, why_len, "text follows the JSON value at byte %zu", end);
    if (o != NULL && (err != json_tokener_success || end + strspn(msg + end, " \t\r\n") < len)) {
        json_object_put(o);
        o = NULL;
    }
    json_tokener_free(tok);
    return o;
}

int cn_mcp_handle(cn_mcp *s, const char *msg, size_t len, char **out)
{
    json_object *in, *r;
    char why[256];
    int oom = 0;

    *out = NULL;
    if (len > (size_t)INT32_MAX || memchr(msg, '\0', len) != NULL) {
        r = error_response(NULL, CN_RPC_PARSE_ERROR,
                           len > (size_t)INT32_MAX ? "parse error: the message is over 2 GiB"
                                                   : "parse error: the message holds a NUL byte");
    } else if ((in = parse(msg, len, why, sizeof why)) == NULL) {
        char text[300];
        snprintf(text, sizeof text, "parse error: %s", why);
        r = error_response(NULL, CN_RPC_PARSE_ERROR, text);
    } else {
        r = json_object_is_type(in, json_type_array) ? handle_batch(s, in, &oom) : handle_one(s, in, &oom);
        json_object_put(in);
    }
    if (oom) {
        json_object_put(r);
        return cn_error_set(CN_ENOMEM, "out of memory answering an MCP message");
    }
    if (r == NULL) return 0;
    *out = cn_strdup(json_object_to_json_string_ext(r, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
    json_object_put(r);
    return *out ? 0 : cn_error_set(CN_ENOMEM, "out of memory answering an MCP message");
}
