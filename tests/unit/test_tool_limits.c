/* SPDX-License-Identifier: Apache-2.0 */
/* The bounds of what the MCP server's tools take and give (issue #22,
 * items 8 and 11), in process over a real fixture repository with the
 * real skills:
 * - every result is cut to the cap (default 30000 bytes, settable) with a
 *   note saying so, a cut skill result stays JSON, and the next page is
 *   reachable with the offset the note gives;
 * - each default tool refuses an argument it does not take, naming it;
 *   bash honours its timeout argument and refuses one past its limit;
 * - every schema says what is accepted: no null default on a type that
 *   refuses null, integer defaults within their bounds, bounds where the
 *   server enforces them, no undeclared argument. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <json-c/json.h>

#include "serve/cn_mcp.h"
#include "jsonq.h"
#include "tap.h"
#include "util/cn_util.h"

static cn_mcp *srv;   /* the server under test */
static cn_mcp *ref;   /* one without a practical cap: the whole lists */

static json_object *ask_on(cn_mcp *server, const char *msg)
{
    char *out = NULL;
    json_object *r;
    if (cn_mcp_handle(server, msg, strlen(msg), &out) != 0 || out == NULL) {
        diag("no answer to %s", msg);
        return NULL;
    }
    r = json_tokener_parse(out);
    if (r == NULL) diag("not JSON: %.200s", out);
    free(out);
    return r;
}

static json_object *ask(const char *msg)
{
    return ask_on(srv, msg);
}

static json_object *call_on(cn_mcp *server, const char *name, const char *args_json)
{
    char msg[4096];
    snprintf(msg, sizeof msg,
             "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"%s\",\"arguments\":%s}}",
             name, args_json);
    return ask_on(server, msg);
}

static json_object *call(const char *name, const char *args_json)
{
    return call_on(srv, name, args_json);
}

/* isError of a tools/call answer: 1, 0, or -1 when it is not a result */
static int is_error(json_object *r)
{
    json_object *e = jq_at(r, "result.isError");
    return e ? json_object_get_boolean(e) : -1;
}

static const char *text_of(json_object *r)
{
    return jq_str(r, "result.content.0.text");
}

static const char *note_of(json_object *r)
{
    return jq_str(r, "result.content.1.text");
}

/* ---- schemas -------------------------------------------------------------- */

static bool type_has(json_object *type, const char *name)
{
    if (type == NULL) return true;   /* no type: anything */
    if (json_object_is_type(type, json_type_string)) return strcmp(json_object_get_string(type), name) == 0;
    for (size_t i = 0; json_object_is_type(type, json_type_array) && i < json_object_array_length(type); i++)
        if (strcmp(json_object_get_string(json_object_array_get_idx(type, i)), name) == 0) return true;
    return false;
}

/* Whether value v fits property schema p: its type, bounds and enum. */
static bool fits(json_object *p, json_object *v, char *why, size_t n)
{
    json_object *type = jq_at(p, "type"), *en = jq_at(p, "enum"), *b;
    const char *t = v == NULL ? "null"
                    : json_object_is_type(v, json_type_boolean) ? "boolean"
                    : json_object_is_type(v, json_type_int)     ? "integer"
                    : json_object_is_type(v, json_type_double)  ? "number"
                    : json_object_is_type(v, json_type_string)  ? "string"
                    : json_object_is_type(v, json_type_array)   ? "array"
                                                                 : "object";
    if (!type_has(type, t) && !(strcmp(t, "integer") == 0 && type_has(type, "number"))) {
        snprintf(why, n, "a %s default where the type is %s", t, json_object_to_json_string(type));
        return false;
    }
    if (v != NULL && (json_object_is_type(v, json_type_int) || json_object_is_type(v, json_type_double))) {
        if ((b = jq_at(p, "minimum")) != NULL && json_object_get_double(v) < json_object_get_double(b)) {
            snprintf(why, n, "default below the minimum");
            return false;
        }
        if ((b = jq_at(p, "maximum")) != NULL && json_object_get_double(v) > json_object_get_double(b)) {
            snprintf(why, n, "default above the maximum");
            return false;
        }
    }
    if (en != NULL) {
        for (size_t i = 0; i < json_object_array_length(en); i++) {
            json_object *e = json_object_array_get_idx(en, i);
            if ((e == NULL && v == NULL) ||
                (e != NULL && v != NULL && strcmp(json_object_to_json_string(e), json_object_to_json_string(v)) == 0))
                return true;
        }
        snprintf(why, n, "default not in its enum");
        return false;
    }
    return true;
}

static json_object *find_tool(json_object *tools, const char *name)
{
    for (size_t i = 0; i < json_object_array_length(tools); i++)
        if (strcmp(jq_str(json_object_array_get_idx(tools, i), "name"), name) == 0)
            return json_object_array_get_idx(tools, i);
    return NULL;
}

static void test_schemas(void)
{
    json_object *r = ask("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}");
    json_object *tools = jq_at(r, "result.tools"), *t;
    size_t bad_defaults = 0, open_schemas = 0;
    char why[256];

    ok(tools != NULL && json_object_array_length(tools) > 10, "tools/list lists the tools");
    for (size_t i = 0; tools && i < json_object_array_length(tools); i++) {
        json_object *tool = json_object_array_get_idx(tools, i), *props = jq_at(tool, "inputSchema.properties");
        json_object *ap = jq_at(tool, "inputSchema.additionalProperties");
        if (ap == NULL || json_object_get_boolean(ap)) {
            diag("%s: its schema lets any argument through", jq_str(tool, "name"));
            open_schemas++;
        }
        if (props == NULL) continue;
        json_object_object_foreach(props, key, p) {
            json_object *d = NULL;
            if (!json_object_object_get_ex(p, "default", &d)) continue;
            if (!fits(p, d, why, sizeof why)) {
                diag("%s.%s: %s", jq_str(tool, "name"), key, why);
                bad_defaults++;
            }
        }
    }
    is_int((long long)open_schemas, 0, "every schema refuses undeclared arguments (additionalProperties false)");
    is_int((long long)bad_defaults, 0, "every default fits its own schema (no null default on a non-nullable type)");

    t = find_tool(tools, "lsp_references");
    is_int(jq_int(t, "inputSchema.properties.top_k.minimum"), 1, "lsp_references: top_k's minimum is in its schema");
    is_int(jq_int(t, "inputSchema.properties.top_k.maximum"), 500, "... and its maximum, the one the skill enforces");
    ok(type_has(jq_at(t, "inputSchema.properties.symbol.type"), "null"),
       "an Optional input (symbol) says it takes null, which it does");
    is_int(jq_int(t, "inputSchema.properties.offset.minimum"), 0, "lsp_references is paged: an offset from 0");
    is_int(jq_int(t, "inputSchema.properties.offset.maximum"), 499, "... to 499 (its top_k's maximum, less one)");
    t = find_tool(tools, "find_callers");
    is_int(jq_int(t, "inputSchema.properties.depth.maximum"), 3, "find_callers: depth's maximum (3) is in its schema");
    ok(jq_at(t, "inputSchema.properties.offset") != NULL, "find_callers is paged");
    t = find_tool(tools, "bm25_search");
    ok(jq_at(t, "inputSchema.properties.offset") != NULL, "bm25_search is paged");
    t = find_tool(tools, "bash");
    is_int(jq_int(t, "inputSchema.properties.timeout.maximum"), 30000, "bash: timeout's maximum is the server's limit");
    json_object_put(r);

    /* the bounds in the schema are the ones enforced, by the server */
    r = call("lsp_references", "{\"symbol\":\"ConnectionPool.get\",\"top_k\":501}");
    ok(is_error(r) == 1 && strstr(text_of(r), "'top_k' must be between 1 and 500") != NULL,
       "top_k 501: isError with the schema's range");
    json_object_put(r);
    r = call("find_callers", "{\"symbol\":\"ConnectionPool.get\",\"offset\":-1}");
    ok(is_error(r) == 1 && strstr(text_of(r), "'offset'") != NULL, "a negative offset: isError naming it");
    json_object_put(r);
    r = call("find_callers", "{\"symbol\":\"ConnectionPool.get\",\"colour\":1}");
    ok(is_error(r) == 1 && strstr(text_of(r), "unknown argument 'colour'") != NULL, "a skill: an unknown argument is isError, named");
    json_object_put(r);
}

/* ---- default tools' arguments ---------------------------------------------- */

static void test_default_tool_args(void)
{
    static const char *const calls[][2] = {
        {"read", "{\"path\":\"pkg/pool.py\",\"lines\":3}"},
        {"grep", "{\"pattern\":\"def\",\"recursive\":true}"},
        {"glob", "{\"pattern\":\"**/*.py\",\"max\":3}"},
        {"bash", "{\"command\":\"echo hi\",\"cwd\":\"/\"}"},
    };
    static const char *const names[] = {"'lines'", "'recursive'", "'max'", "'cwd'"};
    json_object *r;
    char label[128];

    for (size_t i = 0; i < sizeof calls / sizeof calls[0]; i++) {
        r = call(calls[i][0], calls[i][1]);
        snprintf(label, sizeof label, "%s: an unknown argument is refused (isError), named", calls[i][0]);
        ok(is_error(r) == 1 && text_of(r) && strstr(text_of(r), "unknown argument") != NULL &&
               strstr(text_of(r), names[i]) != NULL,
           label);
        if (is_error(r) != 1) diag("got: %.200s", text_of(r) ? text_of(r) : "(nothing)");
        json_object_put(r);
    }
    r = call("read", "{\"path\":\"pkg/pool.py\",\"offset\":0}");
    ok(is_error(r) == 1 && strstr(text_of(r), "'offset'") != NULL, "read: offset 0 is below the schema's minimum: isError");
    json_object_put(r);
    r = call("grep", "{\"pattern\":\"def\",\"output_mode\":\"lines\"}");
    ok(is_error(r) == 1 && strstr(text_of(r), "output_mode") != NULL, "grep: an output_mode outside the enum: isError");
    json_object_put(r);

    /* bash's timeout: honoured below the server's limit, refused past it */
    r = call("bash", "{\"command\":\"sleep 20\",\"timeout\":300}");
    ok(is_error(r) == 1 && text_of(r) && strstr(text_of(r), "timed out after 300 ms") != NULL,
       "bash: timeout 300 stops a 20 s command after 300 ms, and the timed-out call is isError");
    json_object_put(r);
    r = call("bash", "{\"command\":\"echo hi\",\"timeout\":3600000}");
    ok(is_error(r) == 1 && strstr(text_of(r), "at most 30000") != NULL,
       "bash: a timeout past the server's limit is refused, with the limit");
    json_object_put(r);
    r = call("bash", "{\"command\":\"echo hi\",\"timeout\":0}");
    ok(is_error(r) == 1 && strstr(text_of(r), "'timeout'") != NULL, "bash: timeout 0 is refused");
    json_object_put(r);
}

/* ---- the cap and the pages ------------------------------------------------- */

/* node_name of item i of the result's list (the result itself or `field`) */
static const char *item_name(json_object *res, const char *field, size_t i)
{
    json_object *l = field ? jq_at(res, field) : res;
    return l && i < json_object_array_length(l) ? jq_str(json_object_array_get_idx(l, i), "node_name") : NULL;
}

static size_t list_len(json_object *res, const char *field)
{
    json_object *l = field ? jq_at(res, field) : res;
    return l && json_object_is_type(l, json_type_array) ? json_object_array_length(l) : 0;
}

/* A call whose result is over `cap`: cut to it with a note, still JSON,
 * and the offset the note gives serves the item that follows the last one
 * shown (checked against the whole list from the uncapped server).
 * `base`: the arguments but return_content, without braces. */
static void check_paged(const char *tool, const char *base, const char *field, size_t cap)
{
    char args[512], label[256];
    json_object *r, *res = NULL, *r2 = NULL, *res2 = NULL, *all = NULL, *resall = NULL;
    const char *note, *off_at;
    size_t shown = 0;
    long next;

    snprintf(args, sizeof args, "{%s,\"return_content\":true}", base);
    r = call(tool, args);
    note = note_of(r);
    snprintf(label, sizeof label, "%s: a result over %zu bytes is cut to them", tool, cap);
    ok(is_error(r) == 0 && text_of(r) && strlen(text_of(r)) <= cap, label);
    res = text_of(r) ? json_tokener_parse(text_of(r)) : NULL;
    snprintf(label, sizeof label, "%s: what is left is JSON, with part of the list", tool);
    ok(res != NULL && (shown = list_len(res, field)) > 0, label);
    snprintf(label, sizeof label, "%s: a note says it was cut, and how to get the next page", tool);
    ok(note && strstr(note, "result cut to fit") != NULL && strstr(note, "offset=") != NULL, label);
    if (note == NULL || (off_at = strstr(note, "offset=")) == NULL || res == NULL) {
        diag("note: %s", note ? note : "(none)");
        json_object_put(res);
        json_object_put(r);
        return;
    }
    next = strtol(off_at + 7, NULL, 10);
    snprintf(label, sizeof label, "%s: the next offset is the number of items shown (%zu)", tool, shown);
    is_int(next, (long long)shown, label);

    snprintf(args, sizeof args, "{%s,\"return_content\":true,\"offset\":%ld}", base, next);
    r2 = call(tool, args);
    res2 = text_of(r2) ? json_tokener_parse(text_of(r2)) : NULL;
    snprintf(args, sizeof args, "{%s,\"return_content\":false}", base);
    all = call_on(ref, tool, args);
    resall = text_of(all) ? json_tokener_parse(text_of(all)) : NULL;
    snprintf(label, sizeof label, "%s: offset=%ld serves the item after the last one shown", tool, next);
    ok(item_name(res2, field, 0) && item_name(resall, field, (size_t)next) &&
           strcmp(item_name(res2, field, 0), item_name(resall, field, (size_t)next)) == 0 &&
           strcmp(item_name(res, field, 0), item_name(resall, field, 0)) == 0,
       label);
    if (!(item_name(res2, field, 0) && item_name(resall, field, (size_t)next)))
        diag("page 2: %.300s", text_of(r2) ? text_of(r2) : "(none)");
    json_object_put(res);
    json_object_put(r);
    json_object_put(res2);
    json_object_put(r2);
    json_object_put(resall);
    json_object_put(all);
}

static void test_cap(size_t cap)
{
    json_object *r;
    char label[160];

    check_paged("lsp_references", "\"symbol\":\"ConnectionPool.get\",\"top_k\":500", "nodes", cap);
    check_paged("find_callers", "\"symbol\":\"ConnectionPool.get\",\"top_k\":500", "results", cap);
    check_paged("bm25_search", "\"query\":\"ConnectionPool use\",\"top_k\":500", NULL, cap);

    /* a default tool under the same cap */
    r = call("grep", "{\"pattern\":\"ConnectionPool\"}");
    snprintf(label, sizeof label, "grep: output cut near %zu bytes, saying so", cap);
    ok(is_error(r) == 0 && text_of(r) && strlen(text_of(r)) <= cap + 200 && strstr(text_of(r), "output capped at") != NULL,
       label);
    json_object_put(r);
    /* a result under the cap comes whole, without a note */
    r = call("find_callers", "{\"symbol\":\"ConnectionPool._check\"}");
    ok(is_error(r) == 0 && note_of(r) == NULL && strstr(text_of(r), "ConnectionPool.get") != NULL,
       "a small result: whole, no note");
    json_object_put(r);
}

static int serve(cn_mcp **out, const char *repo, const char *cache, size_t max_output)
{
    cn_mcp_options o;
    memset(&o, 0, sizeof o);
    o.repo = repo;
    o.cache_dir = cache;
    o.enable_bash = true;
    o.max_output = max_output;
    if (cn_mcp_new(&o, out) < 0) {
        ok(0, "server created");
        diag("%s", cn_error_last()->message);
        return -1;
    }
    return 0;
}

int main(void)
{
    const char *b = getenv("CN_BUILDDIR"), *s = getenv("CN_SRCDIR");
    char tmpl[] = "/tmp/cn-limits.XXXXXX", cmd[4096], *tmp, *repo, *cache, *py, *many;
    FILE *f;

    if (b == NULL || s == NULL) {
        diag("CN_BUILDDIR / CN_SRCDIR not set");
        return tap_done();
    }
    py = cn_path_join(b, "_plugins/lang-python/lang_python.so");
    if (access(py, R_OK) != 0) {
        free(py);
        printf("1..0 # SKIP the python backend was not built\n");
        return 0;
    }
    free(py);
    if ((tmp = mkdtemp(tmpl)) == NULL) {
        ok(0, "temporary directory");
        return tap_done();
    }
    repo = cn_path_join(tmp, "repo");
    cache = cn_path_join(tmp, "cache");
    snprintf(cmd, sizeof cmd, "cp -R '%s/tests/fixtures/graph/python' '%s'", s, repo);
    ok(system(cmd) == 0, "fixture repository copied");
    /* 600 functions that each call ConnectionPool.get: with their source,
     * its references come to some 250 KB */
    many = cn_path_join(repo, "pkg/many.py");
    if ((f = fopen(many, "w")) != NULL) {
        fputs("from pkg.pool import ConnectionPool\n\n", f);
        for (int i = 0; i < 600; i++)
            fprintf(f, "def use_%d(p):\n    \"\"\"ConnectionPool use %d: %0200d\"\"\"\n    return ConnectionPool.get(p)\n\n",
                    i, i, 0);
        fclose(f);
    }
    free(many);

    if (serve(&ref, repo, cache, 100000000) == 0) {
        if (serve(&srv, repo, cache, 0) == 0) {
            test_schemas();
            test_default_tool_args();
            diag("the default cap");
            test_cap(30000);
            cn_mcp_free(srv);
        }
        if (serve(&srv, repo, cache, 6000) == 0) {
            diag("a cap of 6000 bytes (--max-output 6000)");
            test_cap(6000);
            cn_mcp_free(srv);
        }
        cn_mcp_free(ref);
    }
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
    if (system(cmd) != 0) diag("could not remove %s", tmp);
    free(repo);
    free(cache);
    return tap_done();
}
