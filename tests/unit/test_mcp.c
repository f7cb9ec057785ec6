/* SPDX-License-Identifier: Apache-2.0 */
/* The MCP server in process (core/serve/cn_mcp.c): JSON-RPC framing and validation,
 * the lifecycle, batches, tools/list and tools/call over a real fixture
 * repository with the real skills, and an index kept up to date with the
 * repository between calls. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <json-c/json.h>

#include "serve/cn_mcp.h"
#include "jsonq.h"
#include "tap.h"
#include "util/cn_util.h"

static cn_mcp *srv;

/* Sends one message; returns the parsed response (NULL when none came). */
static json_object *ask(const char *msg)
{
    char *out = (char *)"untouched";
    json_object *r;
    if (cn_mcp_handle(srv, msg, strlen(msg), &out) != 0) {
        diag("cn_mcp_handle failed on %s", msg);
        return NULL;
    }
    if (out == NULL) return NULL;
    if (strchr(out, '\n') != NULL) diag("a response spans lines: %s", out);
    r = json_tokener_parse(out);
    if (r == NULL) diag("not JSON: %s", out);
    free(out);
    return r;
}

/* The text of a tools/call result, and whether it is an error. */
static const char *text_of(json_object *r, int *is_error)
{
    json_object *e = jq_at(r, "result.isError");
    *is_error = e ? json_object_get_boolean(e) : -1;
    return jq_str(r, "result.content.0.text");
}

static json_object *call(const char *name, const char *args_json)
{
    char msg[8192];
    snprintf(msg, sizeof msg,
             "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":{\"name\":\"%s\",\"arguments\":%s}}",
             name, args_json);
    return ask(msg);
}

static void test_framing(void)
{
    json_object *r;
    char *out = NULL;

    r = ask("garbage");
    is_int(jq_int(r, "error.code"), -32700, "not JSON: parse error");
    {
        json_object *id = (json_object *)1;
        ok(json_object_object_get_ex(r, "id", &id) && id == NULL, "... with a null id");
    }
    json_object_put(r);
    r = ask("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"} {}");
    is_int(jq_int(r, "error.code"), -32700, "text after the JSON value: parse error");
    has_str(jq_str(r, "error.message"), "unexpected text after the value", "... saying so");
    json_object_put(r);
    r = ask("{\"jsonrpc\":\"2.0\",\"id\":1,");
    has_str(jq_str(r, "error.message"), "unexpected end of data", "a message cut short: parse error saying it ends early");
    json_object_put(r);
    ok(cn_mcp_handle(srv, "{\"a\":\"\0\"}", 9, &out) == 0 && out != NULL && strstr(out, "NUL") != NULL,
       "a NUL byte inside: parse error naming it");
    free(out);

    r = ask("42");
    is_int(jq_int(r, "error.code"), -32600, "not an object: invalid request");
    json_object_put(r);
    r = ask("{\"id\":1,\"method\":\"ping\"}");
    is_int(jq_int(r, "error.code"), -32600, "no jsonrpc member: invalid request");
    is_int(jq_int(r, "id"), 1, "... answered to its id");
    json_object_put(r);
    r = ask("{\"jsonrpc\":\"1.0\",\"id\":1,\"method\":\"ping\"}");
    has_str(jq_str(r, "error.message"), "\"2.0\"", "jsonrpc 1.0: refused, asking for 2.0");
    json_object_put(r);
    r = ask("{\"jsonrpc\":\"2.0\",\"id\":null,\"method\":\"ping\"}");
    is_int(jq_int(r, "error.code"), -32600, "a null id: invalid request (MCP ids are strings or integers)");
    json_object_put(r);
    r = ask("{\"jsonrpc\":\"2.0\",\"id\":1.5,\"method\":\"ping\"}");
    is_int(jq_int(r, "error.code"), -32600, "a fractional id: invalid request");
    json_object_put(r);
    r = ask("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":7}");
    is_int(jq_int(r, "error.code"), -32600, "a method that is not a string: invalid request");
    json_object_put(r);
    r = ask("{\"jsonrpc\":\"2.0\",\"id\":\"abc\",\"method\":\"ping\",\"params\":[1]}");
    is_int(jq_int(r, "error.code"), -32602, "params as an array: invalid params");
    is_str(jq_str(r, "id"), "abc", "... answered to a string id");
    json_object_put(r);
    r = ask("{\"jsonrpc\":\"2.0\",\"id\":1}");
    is_int(jq_int(r, "error.code"), -32600, "no method, no result: invalid request");
    json_object_put(r);

    ok(ask("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}") == NULL, "a notification: no answer");
    ok(ask("{\"jsonrpc\":\"2.0\",\"method\":\"no/such/notification\"}") == NULL,
       "an unknown notification: no answer either");
    ok(ask("{\"jsonrpc\":\"2.0\",\"id\":9,\"result\":{}}") == NULL, "a response from the client: no answer");
    r = ask("{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"resources/list\"}");
    is_int(jq_int(r, "error.code"), -32601, "an unserved method: method not found");
    has_str(jq_str(r, "error.message"), "resources/list", "... naming it");
    json_object_put(r);
    r = ask("{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"ping\"}");
    ok(json_object_is_type(jq_at(r, "result"), json_type_object) && json_object_object_length(jq_at(r, "result")) == 0,
       "ping: an empty result");
    json_object_put(r);
}

static void test_lifecycle(void)
{
    json_object *r;

    r = ask("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-03-26\","
            "\"capabilities\":{},\"clientInfo\":{\"name\":\"test\",\"version\":\"1\"}}}");
    is_str(jq_str(r, "result.protocolVersion"), "2025-03-26", "a supported protocol version is kept");
    is_str(jq_str(r, "result.serverInfo.name"), "codenib", "serverInfo names codenib");
    ok(jq_at(r, "result.capabilities.tools") != NULL, "the tools capability is declared");
    ok(jq_at(r, "result.capabilities.resources") == NULL, "... and nothing the server does not serve");
    has_str(jq_str(r, "result.instructions"), "locate", "the instructions point to locate");
    json_object_put(r);
    r = ask("{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"1999-01-01\"}}");
    is_str(jq_str(r, "result.protocolVersion"), "2025-11-25", "an unknown version: the newest is offered");
    json_object_put(r);
    r = ask("{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"initialize\",\"params\":{}}");
    is_int(jq_int(r, "error.code"), -32602, "initialize without protocolVersion: invalid params");
    json_object_put(r);
}

static void test_batch(void)
{
    json_object *r;
    r = ask("[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"},{\"jsonrpc\":\"2.0\",\"method\":\"notifications/x\"},"
            "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"nope\"},17]");
    ok(json_object_is_type(r, json_type_array) && json_object_array_length(r) == 3,
       "a batch: one answer per request, none for the notification");
    is_int(jq_int(r, "0.id"), 1, "... in order: the ping");
    is_int(jq_int(r, "1.error.code"), -32601, "... the unknown method");
    is_int(jq_int(r, "2.error.code"), -32600, "... the element that is no message");
    json_object_put(r);
    r = ask("[]");
    is_int(jq_int(r, "error.code"), -32600, "an empty batch: invalid request");
    json_object_put(r);
    ok(ask("[{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}]") == NULL,
       "a batch of notifications: no answer");
}

static bool listed(json_object *tools, const char *name)
{
    for (size_t i = 0; i < json_object_array_length(tools); i++)
        if (strcmp(jq_str(json_object_array_get_idx(tools, i), "name"), name) == 0) return true;
    return false;
}

static void test_tools(const char *repo)
{
    json_object *r = ask("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}"), *tools = jq_at(r, "result.tools");
    const char *t;
    int err;
    char path[4096];
    FILE *f;

    ok(json_object_is_type(tools, json_type_array), "tools/list: a list (the repository compiled on the way)");
    ok(listed(tools, "locate") && listed(tools, "read") && listed(tools, "grep") && listed(tools, "glob"),
       "locate, read, grep and glob are offered");
    ok(!listed(tools, "bash"), "bash is not, unless enabled");
    ok(listed(tools, "bm25_search") && listed(tools, "find_callers") && listed(tools, "lsp_definition"),
       "the skills are offered");
    ok(!listed(tools, "embedding_search"), "a skill whose index is missing is not (no vectors compiled)");
    ok(!listed(tools, "llm_rerank"), "nor one that needs a model the server was not given");
    is_str(jq_str(tools, "0.inputSchema.type"), "object", "every tool has an inputSchema object");
    json_object_put(r);

    r = call("locate", "{\"question\":\"ConnectionPool.get fails in _check when size is an int\"}");
    t = text_of(r, &err);
    is_int(err, 0, "locate: not an error");
    has_str(t, "Files: pkg/pool.py", "locate answers Files: pkg/pool.py");
    has_str(t, "Symbols: pkg/pool.py:ConnectionPool", "... Symbols");
    has_str(t, "Locations: pkg/pool.py:", "... and Locations");
    json_object_put(r);
    r = call("locate", "{\"question\":\"ConnectionPool.get\",\"max_files\":1,\"max_symbols\":1}");
    t = text_of(r, &err);
    ok(t && strstr(t, "Files: pkg/pool.py\n") != NULL, "locate max_files 1: one file");
    json_object_put(r);
    /* bad arguments are results with isError, as for every other tool,
     * not protocol errors: the agent reads why and calls again */
    r = call("locate", "{}");
    t = text_of(r, &err);
    ok(err == 1 && jq_at(r, "error") == NULL && t && strstr(t, "'question'") != NULL,
       "locate without a question: isError naming it, not a protocol error");
    json_object_put(r);
    r = call("locate", "{\"question\":\"x\",\"max_files\":0}");
    t = text_of(r, &err);
    ok(err == 1 && t && strstr(t, "'max_files' must be an integer from 1 to 50") != NULL,
       "max_files 0: isError with the range");
    json_object_put(r);
    r = call("locate", "{\"question\":\"x\",\"max_symbols\":\"many\"}");
    t = text_of(r, &err);
    ok(err == 1 && t && strstr(t, "'max_symbols'") != NULL, "max_symbols not an integer: isError naming it");
    json_object_put(r);
    r = call("locate", "{\"question\":\"x\",\"top\":3}");
    t = text_of(r, &err);
    ok(err == 1 && t && strstr(t, "unknown argument 'top'") != NULL, "an unknown argument: isError, named");
    json_object_put(r);
    r = call("locate", "{\"question\":\"   \"}");
    t = text_of(r, &err);
    ok(err == 1 && t && strstr(t, "empty") != NULL, "a blank question: a tool error saying it is empty");
    json_object_put(r);

    r = call("bm25_search", "{\"query\":\"pool size\",\"top_k\":2}");
    t = text_of(r, &err);
    ok(err == 0 && t && strstr(t, "pkg/pool.py") != NULL, "bm25_search runs and finds pkg/pool.py");
    json_object_put(r);
    r = call("bm25_search", "{\"top_k\":2}");
    t = text_of(r, &err);
    ok(err == 1 && t && strstr(t, "query") != NULL, "a skill called without a required input: a tool error naming it");
    json_object_put(r);
    r = call("embedding_search", "{\"query\":\"pool\"}");
    t = text_of(r, &err);
    ok(err == 1 && t && strstr(t, "vector") != NULL, "a skill left out for its index: says which index");
    json_object_put(r);
    r = call("llm_rerank", "{\"query\":\"pool\"}");
    t = text_of(r, &err);
    ok(err == 1 && t && strstr(t, "CODENIB_MODEL") != NULL, "a skill left out for its model: says how to give one");
    json_object_put(r);

    r = call("read", "{\"path\":\"pkg/pool.py\",\"limit\":2}");
    t = text_of(r, &err);
    ok(err == 0 && t && strstr(t, "from pkg.base import Base") != NULL, "read reads the repository's file");
    json_object_put(r);
    r = call("read", "{\"path\":\"../../etc/passwd\"}");
    t = text_of(r, &err);
    ok(err == 1 && t && strstr(t, "root:") == NULL, "read outside the repository: refused");
    json_object_put(r);
    r = call("bash", "{\"command\":\"echo hi\"}");
    t = text_of(r, &err);
    ok(err == 1 && t && strstr(t, "--enable-bash") != NULL, "bash while disabled: refused, saying how to enable it");
    json_object_put(r);

    r = call("no_such_tool", "{}");
    is_int(jq_int(r, "error.code"), -32602, "an unknown tool: invalid params");
    has_str(jq_str(r, "error.message"), "no_such_tool", "... naming it");
    json_object_put(r);
    r = call("read", "[1]");
    is_int(jq_int(r, "error.code"), -32602, "arguments that are not an object: invalid params");
    json_object_put(r);
    r = ask("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{}}");
    has_str(jq_str(r, "error.message"), "params.name", "tools/call without a name: says what is missing");
    json_object_put(r);
    r = ask("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"glob\"}}");
    t = text_of(r, &err);
    ok(err == 1 && t && strstr(t, "pattern") != NULL, "no arguments at all: the tool says what it needs");
    json_object_put(r);

    /* an edit between two calls: the next call sees it */
    r = call("lsp_definition", "{\"symbol\":\"brand_new_checker\"}");
    t = text_of(r, &err);
    ok(t && strstr(t, "pkg/pool.py:brand_new_checker") == NULL, "before the edit: no brand_new_checker");
    json_object_put(r);
    snprintf(path, sizeof path, "%s/pkg/pool.py", repo);
    if ((f = fopen(path, "a")) != NULL) {
        fputs("\n\ndef brand_new_checker(pool):\n    return pool.size\n", f);
        fclose(f);
    }
    r = call("lsp_definition", "{\"symbol\":\"brand_new_checker\"}");
    t = text_of(r, &err);
    ok(err == 0 && t && strstr(t, "pkg/pool.py:brand_new_checker") != NULL,
       "after the edit: the index was brought up to date before the call");
    json_object_put(r);
}

static void test_options(const char *repo, const char *cache)
{
    cn_mcp_options o;
    cn_mcp *s = (cn_mcp *)1;
    json_object *r;
    char path[4096];
    const char *t;
    int err;

    memset(&o, 0, sizeof o);
    o.repo = "/nonexistent/repo";
    ok(cn_mcp_new(&o, &s) < 0 && s == NULL, "a missing repository: refused");
    has_str(cn_error_last()->message, "/nonexistent/repo", "... naming it");
    o.repo = "/etc/passwd";
    ok(cn_mcp_new(&o, &s) < 0, "a file for a repository: refused");
    has_str(cn_error_last()->message, "not a directory", "... saying it is not a directory");
    o.repo = repo;
    o.skills = "bm25_search,bm25_serach";
    ok(cn_mcp_new(&o, &s) < 0, "a misspelt skill in --skills: refused");
    has_str(cn_error_last()->message, "no skill 'bm25_serach'", "... naming it");
    ok(cn_mcp_new(NULL, &s) < 0, "no options: refused");

    /* the index compiled above, damaged: refused with --no-compile,
     * rebuilt without it */
    snprintf(path, sizeof path, "%s/current/nodes.bin", cache);
    ok(truncate(path, 100) == 0, "the current generation's nodes.bin cut to 100 bytes");
    o.skills = NULL;
    o.cache_dir = cache;
    o.no_compile = true;
    if (cn_mcp_new(&o, &srv) < 0) {
        ok(0, "a server with --no-compile");
        return;
    }
    r = call("bm25_search", "{\"query\":\"pool\"}");
    t = text_of(r, &err);
    ok(err == 1 && t && strstr(t, "nodes.bin: corrupt index") != NULL,
       "--no-compile on a damaged index: a tool error naming the file");
    json_object_put(r);
    cn_mcp_free(srv);

    /* --skills and --enable-bash; the damaged index rebuilt on the way */
    o.skills = "bm25_search";
    o.enable_bash = true;
    o.no_compile = false;
    if (cn_mcp_new(&o, &srv) < 0) {
        ok(0, "a server with --skills bm25_search");
        return;
    }
    r = call("bm25_search", "{\"query\":\"pool\"}");
    t = text_of(r, &err);
    ok(err == 0 && t && strstr(t, "pkg/pool.py") != NULL, "a damaged index is compiled again and served");
    json_object_put(r);
    r = ask("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}");
    ok(listed(jq_at(r, "result.tools"), "bm25_search") && !listed(jq_at(r, "result.tools"), "find_callers"),
       "--skills: only those skills are offered");
    ok(listed(jq_at(r, "result.tools"), "locate") && listed(jq_at(r, "result.tools"), "bash"),
       "locate stays, and bash is offered when enabled");
    json_object_put(r);
    r = call("find_callers", "{\"symbol\":\"x\"}");
    has_str(jq_str(r, "error.message"), "not offered", "a skill left out by --skills: not offered");
    json_object_put(r);
    r = call("bash", "{\"command\":\"echo from-bash\"}");
    has_str(jq_str(r, "result.content.0.text"), "from-bash", "bash runs when enabled");
    json_object_put(r);
    cn_mcp_free(srv);

    /* --no-compile on a repository never compiled */
    o.skills = NULL;
    o.cache_dir = NULL;
    o.enable_bash = false;
    o.no_compile = true;
    if (cn_mcp_new(&o, &srv) < 0) {
        ok(0, "a server with --no-compile");
        return;
    }
    r = call("bm25_search", "{\"query\":\"pool\"}");
    has_str(jq_str(r, "result.content.0.text"), "does not compile (--no-compile)",
            "--no-compile without an index: the call says to compile");
    json_object_put(r);
    cn_mcp_free(srv);
    srv = NULL;
}

/* ---- the worker pool ------------------------------------------------------ */

typedef struct sink {
    cn_buf lines;              /* every response, a line each */
    int fail_after;            /* sends that succeed before one fails; -1: never */
    int sent;
} sink;

static int sink_send(const char *line, void *data)
{
    sink *k = data;
    if (k->fail_after >= 0 && k->sent >= k->fail_after) return cn_error_set(CN_EIO, "the sink is full");
    k->sent++;
    cn_buf_printf(&k->lines, "%s\n", line);
    return 0;
}

static void test_pool(const char *repo, const char *cache)
{
    cn_mcp_options o;
    cn_mcp *s = NULL;
    sink k = {CN_BUF_INIT, -1, 0};
    static const char grep_call[] =
        "{\"jsonrpc\":\"2.0\",\"id\":\"g\",\"method\":\"tools/call\",\"params\":{\"name\":\"grep\","
        "\"arguments\":{\"pattern\":\"def _check\"}}}";
    static const char ping[] = "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}";
    static const char list[] = "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/list\"}";
    static const char cancel_g[] =
        "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":\"g\"}}";

    memset(&o, 0, sizeof o);
    o.repo = repo;
    o.cache_dir = cache;
    if (cn_mcp_new(&o, &s) < 0) {
        ok(0, "pool: server created");
        return;
    }
    ok(cn_mcp_submit(s, ping, strlen(ping)) == CN_EINVAL, "pool: submit before start is refused");
    ok(cn_mcp_start(s, 0, sink_send, &k) == CN_EINVAL, "pool: 0 workers refused");
    ok(cn_mcp_start(s, 3, sink_send, &k) == 0, "pool: 3 workers started");
    {
        int queued = 0;
        for (int i = 0; i < 8; i++) queued += cn_mcp_submit(s, grep_call, strlen(grep_call)) == 0;
        is_int(queued, 8, "pool: eight grep calls queued");
    }
    ok(cn_mcp_submit(s, ping, strlen(ping)) == 0, "pool: ping answered");
    ok(cn_mcp_submit(s, list, strlen(list)) == 0, "pool: tools/list handed over");
    ok(cn_mcp_stop(s, false) == 0, "pool: stopped, every call answered");
    {
        int g = 0, lines = 0, whole = 1;
        for (char *p = k.lines.data, *nl; p && (nl = strchr(p, '\n')) != NULL; p = nl + 1) {
            json_object *j;
            *nl = '\0';
            lines++;
            if ((j = json_tokener_parse(p)) == NULL) whole = 0;
            if (strstr(p, "\"id\":\"g\"") && strstr(p, "pkg/pool.py")) g++;
            json_object_put(j);
            *nl = '\n';
        }
        is_int(lines, 10, "pool: ten responses (8 grep, ping, tools/list)");
        is_int(g, 8, "pool: every grep answered with its matches");
        ok(whole, "pool: each response a whole JSON line");
    }
    /* cancelled while queued behind a busy worker: never answered */
    k.lines.len = 0;
    k.sent = 0;
    ok(cn_mcp_start(s, 1, sink_send, &k) == 0, "pool: restarted with 1 worker");
    for (int i = 0; i < 4; i++) cn_mcp_submit(s, grep_call, strlen(grep_call));
    ok(cn_mcp_submit(s, cancel_g, strlen(cancel_g)) == 0, "pool: a cancellation takes no response");
    ok(cn_mcp_stop(s, false) == 0, "pool: stopped");
    ok(k.sent <= 1, "pool: the cancelled calls were not answered (at most the one already running)");
    /* the transport gone: the next submit says so */
    k.lines.len = 0;
    k.sent = 0;
    k.fail_after = 0;
    ok(cn_mcp_start(s, 2, sink_send, &k) == 0, "pool: started on a failing transport");
    cn_mcp_submit(s, ping, strlen(ping));
    ok(cn_mcp_submit(s, ping, strlen(ping)) == CN_EIO, "pool: a failed send is returned to the reader");
    has_str(cn_error_last()->message, "the sink is full", "... with its message");
    cn_error_clear();
    cn_mcp_free(s);   /* stops the pool */
    cn_buf_free(&k.lines);
}

int main(void)
{
    const char *b = getenv("CN_BUILDDIR"), *s = getenv("CN_SRCDIR");
    char tmpl[] = "/tmp/cn-mcp.XXXXXX", cmd[4096], *tmp, *repo, *cache, *py;
    cn_mcp_options o;

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

    memset(&o, 0, sizeof o);
    o.repo = repo;
    o.cache_dir = cache;
    if (cn_mcp_new(&o, &srv) < 0) {
        ok(0, "server created");
        diag("%s", cn_error_last()->message);
    } else {
        test_framing();
        test_lifecycle();
        test_batch();
        test_tools(repo);
        cn_mcp_free(srv);
        test_options(repo, cache);
        test_pool(repo, cache);
    }
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
    if (system(cmd) != 0) diag("could not remove %s", tmp);
    free(repo);
    free(cache);
    return tap_done();
}
