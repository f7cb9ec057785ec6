/* SPDX-License-Identifier: Apache-2.0 */
/* The MCP server's protocol (see cn_mcp.h): JSON-RPC 2.0 messages checked
 * and answered, the lifecycle (initialize, ping) and dispatch to the tools
 * (cn_mcp_tools.c). */
#include "cn_mcp_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <codenib/codenib.h>
#include <codenib/version.h>

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

/* ---- the server ---------------------------------------------------------- */

static const struct {
    const char *name;
    unsigned bit;
} own_tools[] = {
    {CN_MCP_LOCATE, CN_MCP_T_LOCATE}, {"read", CN_MCP_T_READ}, {"grep", CN_MCP_T_GREP},
    {"glob", CN_MCP_T_GLOB},          {"bash", CN_MCP_T_BASH},
};

/* The --tools list as CN_MCP_T_* bits; every unknown name is named in
 * the error (a skill's name, with where skills are chosen). */
static int parse_tools(cn_mcp *s, const char *list, bool bash_enabled, unsigned *out)
{
    cn_strv names = CN_STRV_INIT;
    cn_buf bad = CN_BUF_INIT;
    bool skill_named = false;
    unsigned bits = 0;
    int rc;

    if ((rc = cn_strv_split(&names, list, ',')) < 0) return rc;
    for (size_t i = 0; i < names.len; i++) {
        const char *n = names.items[i];
        size_t k = 0;
        while (n[0] == ' ') n++;
        for (; k < sizeof own_tools / sizeof own_tools[0]; k++)
            if (strcmp(n, own_tools[k].name) == 0) break;
        if (k < sizeof own_tools / sizeof own_tools[0]) {
            bits |= own_tools[k].bit;
            continue;
        }
        if (n[0] == '\0') continue;
        if (cn_registry_find(s->sv.reg, n) != NULL) skill_named = true;
        cn_buf_printf(&bad, "%s'%s'", bad.len ? ", " : "", n);
    }
    cn_strv_free(&names);
    if (bad.oom) rc = cn_error_set(CN_ENOMEM, "out of memory");
    else if (bad.len > 0)
        rc = cn_error_set(CN_EINVAL, "--tools: unknown tool %s (the server's own tools are %s%s)", bad.data,
                          CN_MCP_OWN_TOOLS, skill_named ? "; skills are chosen with --skills" : "");
    else if ((bits & CN_MCP_T_BASH) && !bash_enabled)
        rc = cn_error_set(CN_EINVAL, "--tools names bash, which is offered only with --enable-bash");
    else if (bits == 0)
        rc = cn_error_set(CN_EINVAL, "--tools names no tool (the server's own tools are %s)", CN_MCP_OWN_TOOLS);
    cn_buf_free(&bad);
    *out = bits;
    return rc;
}

int cn_mcp_new(const cn_mcp_options *o, cn_mcp **out)
{
    /* the default tools' names and locate are the server's own: a skill
     * with one of them is refused (and listed so by `skills list`) */
    static const char *const reserved[] = {"read", "grep", "glob", "bash", CN_MCP_LOCATE};
    cn_served_options so;
    cn_mcp *s;

    *out = NULL;
    if (o == NULL || o->repo == NULL) return cn_error_set(CN_EINVAL, "the MCP server needs a repository");
    if ((s = calloc(1, sizeof *s)) == NULL) return cn_error_set(CN_ENOMEM, "out of memory");
    memset(&so, 0, sizeof so);
    so.repo = o->repo;
    so.cache_dir = o->cache_dir;
    so.indexes = o->indexes;
    so.skills = o->skills;
    so.no_compile = o->no_compile;
    so.log = o->log;
    so.log_data = o->log_data;
    if (cn_served_open(&s->sv, &so, reserved, sizeof reserved / sizeof reserved[0]) < 0) {
        free(s);
        return cn_error_last()->code;
    }
    cn_tools_config_init(&s->tools, s->sv.repo);
    s->tools.bash_enabled = o->enable_bash;
    if (o->tool_timeout_ms > 0) s->tools.call_timeout_ms = o->tool_timeout_ms;
    /* one bound for every result: skills, locate and the default tools */
    s->tools.output_cap = o->max_output > 0 ? o->max_output : CN_RESULT_CAP_DEFAULT;
    s->tools.bash_hint = "`codenib mcp --enable-bash`";
    s->offered = CN_MCP_T_LOCATE | CN_MCP_T_READ | CN_MCP_T_GREP | CN_MCP_T_GLOB | (o->enable_bash ? CN_MCP_T_BASH : 0);
    if (o->tools != NULL && parse_tools(s, o->tools, o->enable_bash, &s->offered) < 0) {
        cn_served_close(&s->sv);
        free(s);
        return cn_error_last()->code;
    }
    pthread_mutex_init(&s->served_mu, NULL);
    pthread_mutex_init(&s->cache_mu, NULL);
    *out = s;
    return 0;
}

void cn_mcp_free(cn_mcp *s)
{
    if (s == NULL) return;
    cn_mcp_stop(s, true);
    cn_served_close(&s->sv);
    pthread_mutex_destroy(&s->served_mu);
    pthread_mutex_destroy(&s->cache_mu);
    free(s->list_cache);
    free(s);
}

/* ---- messages ------------------------------------------------------------ */

static int initialize(cn_mcp *s, json_object *params, json_object **out, cn_rpc_fault *f)
{
    json_object *v = NULL, *r, *caps, *tools, *info;
    const char *asked, *chosen = versions[0];

    if (!json_object_object_get_ex(params, "protocolVersion", &v) || !json_object_is_type(v, json_type_string))
        return cn_rpc_fault_set(f, CN_RPC_INVALID_PARAMS,
                                "initialize needs params.protocolVersion (a string such as \"%s\")", versions[0]);
    asked = json_object_get_string(v);
    for (size_t i = 0; i < sizeof versions / sizeof versions[0]; i++)
        if (strcmp(asked, versions[i]) == 0) chosen = versions[i];
    if (strcmp(asked, chosen) != 0)
        cn_served_log(&s->sv, "the client asked for protocol %s; offering %s", asked, chosen);
    r = json_object_new_object();
    caps = json_object_new_object();
    tools = json_object_new_object();
    info = json_object_new_object();
    if (r == NULL || caps == NULL || tools == NULL || info == NULL) {
        json_object_put(r);
        json_object_put(caps);
        json_object_put(tools);
        json_object_put(info);
        return CN_ENOMEM;
    }
    json_object_object_add(tools, "listChanged", json_object_new_boolean(0));
    json_object_object_add(caps, "tools", tools);
    json_object_object_add(info, "name", json_object_new_string("codenib"));
    json_object_object_add(info, "version", json_object_new_string(CN_VERSION_STRING));
    json_object_object_add(r, "protocolVersion", json_object_new_string(chosen));
    json_object_object_add(r, "capabilities", caps);
    json_object_object_add(r, "serverInfo", info);
    json_object_object_add(r, "instructions", json_object_new_string(instructions));
    *out = r;
    return 0;
}

int cn_mcp__handler(void *ctx, const char *method, json_object *params, bool notification, json_object **r,
                    cn_rpc_fault *f)
{
    cn_mcp_call *c = ctx;
    cn_mcp *s = c->s;
    *r = NULL;
    if (notification) {
        /* the others (initialized, progress, ...) need nothing done */
        json_object *id = NULL;
        if (strcmp(method, "notifications/cancelled") == 0 && json_object_object_get_ex(params, "requestId", &id) &&
            (json_object_is_type(id, json_type_string) || json_object_is_type(id, json_type_int)))
            cn_mcp__cancel(s, json_object_to_json_string_ext(id, JSON_C_TO_STRING_PLAIN));
        return 0;
    }
    if (strcmp(method, "initialize") == 0) return initialize(s, params, r, f);
    if (strcmp(method, "ping") == 0) return (*r = json_object_new_object()) ? 0 : CN_ENOMEM;
    if (strcmp(method, "tools/list") == 0) return (*r = cn_mcp__tools_list(s)) ? 0 : CN_ENOMEM;
    if (strcmp(method, "tools/call") == 0) return cn_mcp__tools_call(s, params, c->cancel, r, f);
    return cn_rpc_fault_set(f, CN_RPC_METHOD_NOT_FOUND,
                            "method '%s' is not served here (codenib serves initialize, ping, tools/list "
                            "and tools/call)",
                            method);
}

int cn_mcp_handle(cn_mcp *s, const char *msg, size_t len, char **response)
{
    cn_mcp_call c = {s, NULL};
    return cn_rpc_handle(msg, len, true, cn_mcp__handler, &c, response);
}
