/* SPDX-License-Identifier: Apache-2.0 */
/* The LSP server in process (core/serve/cn_lsp.c): positions in UTF-16
 * and UTF-8, URIs, the lifecycle (initialize, shutdown, exit), and
 * definition, references and workspace symbols over a fixture repository
 * with the real skills, kept up to date with edits on disk. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <json-c/json.h>

#include "serve/cn_lsp.h"
#include "jsonq.h"
#include "tap.h"
#include "util/cn_util.h"

static cn_lsp *srv;

static json_object *ask(const char *msg)
{
    char *out = NULL;
    json_object *r;
    if (cn_lsp_handle(srv, msg, strlen(msg), &out) != 0) {
        diag("cn_lsp_handle failed on %s", msg);
        return NULL;
    }
    if (out == NULL) return NULL;
    r = json_tokener_parse(out);
    if (r == NULL) diag("not JSON: %s", out);
    free(out);
    return r;
}

/* true when the response's result member is there and JSON null */
static bool null_result(json_object *r)
{
    json_object *v = (json_object *)1;
    return json_object_object_get_ex(r, "result", &v) && v == NULL;
}

static char uri_buf[4096];
static const char *uri_of(const char *repo, const char *rel)
{
    snprintf(uri_buf, sizeof uri_buf, "file://%s/%s", repo, rel);
    return uri_buf;
}

/* A position request on repository file rel. */
static json_object *at_pos(const char *method, const char *repo, const char *rel, int line, int ch, const char *extra)
{
    char msg[8192];
    snprintf(msg, sizeof msg,
             "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"%s\",\"params\":{\"textDocument\":{\"uri\":\"%s\"},"
             "\"position\":{\"line\":%d,\"character\":%d}%s}}",
             method, uri_of(repo, rel), line, ch, extra ? extra : "");
    return ask(msg);
}

static void test_text(void)
{
    /* "aé€😀b": a (1 byte), é (2), € (3), 😀 (4 bytes, 2 UTF-16 units), b */
    const char *line = "a\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80" "b";
    size_t n = strlen(line);
    char *p;

    is_int((long long)cn_lsp_utf16_to_byte(line, n, 0), 0, "UTF-16 column 0: byte 0");
    is_int((long long)cn_lsp_utf16_to_byte(line, n, 2), 3, "column 2 (after é): byte 3");
    is_int((long long)cn_lsp_utf16_to_byte(line, n, 3), 6, "column 3 (after €): byte 6");
    is_int((long long)cn_lsp_utf16_to_byte(line, n, 5), 10, "column 5 (after the surrogate pair): byte 10");
    is_int((long long)cn_lsp_utf16_to_byte(line, n, 99), (long long)n, "a column past the end: the line's end");
    is_int((long long)cn_lsp_byte_to_utf16(line, n, 10), 5, "byte 10: column 5");
    is_int((long long)cn_lsp_byte_to_utf16(line, n, 11), 6, "byte 11 (the end): column 6");
    is_int((long long)cn_lsp_byte_to_utf16("\xff\xfe" "x", 3, 3), 3, "invalid bytes count one unit each");

    p = cn_lsp_uri_to_path("file:///tmp/a%20b/c%C3%A9.py");
    is_str(p, "/tmp/a b/c\xc3\xa9.py", "a file URI is percent-decoded");
    free(p);
    p = cn_lsp_uri_to_path("file://localhost/tmp/x.py");
    is_str(p, "/tmp/x.py", "file://localhost/ is this machine");
    free(p);
    ok(cn_lsp_uri_to_path("https://example.com/x.py") == NULL, "another scheme: no path");
    ok(cn_lsp_uri_to_path("file://otherhost/x.py") == NULL, "another host: no path");
    ok(cn_lsp_uri_to_path("file:///tmp/a%00b") == NULL, "an encoded NUL: no path");
    ok(cn_lsp_uri_to_path("file:///tmp/a%zz") == NULL, "a bad escape: no path");
    p = cn_lsp_path_to_uri("/tmp/a b/50%.py");
    is_str(p, "file:///tmp/a%20b/50%25.py", "a path becomes a URI with spaces and % escaped");
    free(p);
}

static void test_lifecycle_errors(const char *repo)
{
    cn_lsp_options o;
    json_object *r;
    int status = -1;
    char msg[4096];

    memset(&o, 0, sizeof o);
    if (cn_lsp_new(&o, &srv) < 0) {
        ok(0, "a server without --repo");
        return;
    }
    r = ask("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"textDocument/definition\",\"params\":{}}");
    is_int(jq_int(r, "error.code"), -32002, "a request before initialize: ServerNotInitialized");
    json_object_put(r);
    r = ask("{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"initialize\",\"params\":{\"capabilities\":{}}}");
    is_int(jq_int(r, "error.code"), -32602, "initialize with no root and no --repo: invalid params");
    has_str(jq_str(r, "error.message"), "--repo", "... saying how to give one");
    json_object_put(r);
    r = ask("[{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"shutdown\"}]");
    is_int(jq_int(r, "error.code"), -32600, "a batch: not LSP, invalid request");
    json_object_put(r);
    snprintf(msg, sizeof msg,
             "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"initialize\",\"params\":{\"workspaceFolders\":[{\"uri\":"
             "\"file://%s\",\"name\":\"r\"}],\"capabilities\":{\"general\":{\"positionEncodings\":[\"utf-8\","
             "\"utf-16\"]}}}}",
             repo);
    r = ask(msg);
    is_str(jq_str(r, "result.capabilities.positionEncoding"), "utf-8",
           "the repository from a workspace folder; UTF-8 when the client offers it");
    json_object_put(r);
    ask("{\"jsonrpc\":\"2.0\",\"method\":\"exit\"}");
    ok(cn_lsp_exited(srv, &status) && status == 1, "exit without shutdown: status 1");
    cn_lsp_free(srv);
    srv = NULL;

    o.repo = "/nonexistent/repo";
    ok(cn_lsp_new(&o, &srv) < 0 && srv == NULL, "--repo that does not exist: refused");
    has_str(cn_error_last()->message, "/nonexistent/repo", "... naming it");
}

static void test_navigation(const char *repo, const char *cache)
{
    cn_lsp_options o;
    json_object *r;
    int status = -1;
    char msg[8192], path[4096];
    FILE *f;

    memset(&o, 0, sizeof o);
    o.repo = repo;
    o.cache_dir = cache;
    if (cn_lsp_new(&o, &srv) < 0) {
        ok(0, "a server with --repo");
        diag("%s", cn_error_last()->message);
        return;
    }
    r = ask("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"rootUri\":null,\"capabilities\":{}}}");
    is_str(jq_str(r, "result.capabilities.positionEncoding"), "utf-16", "UTF-16 positions by default");
    ok(json_object_get_boolean(jq_at(r, "result.capabilities.definitionProvider")) &&
           json_object_get_boolean(jq_at(r, "result.capabilities.referencesProvider")) &&
           json_object_get_boolean(jq_at(r, "result.capabilities.workspaceSymbolProvider")) &&
           json_object_get_boolean(jq_at(r, "result.capabilities.documentSymbolProvider")),
       "definition, references, workspace and document symbols are declared");
    is_int(jq_int(r, "result.capabilities.textDocumentSync.change"), 0, "no buffer sync: the disk is read");
    json_object_put(r);
    ok(ask("{\"jsonrpc\":\"2.0\",\"method\":\"initialized\",\"params\":{}}") == NULL, "initialized: no answer");
    r = ask("{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"initialize\",\"params\":{}}");
    is_int(jq_int(r, "error.code"), -32600, "a second initialize: invalid request");
    json_object_put(r);

    /* pool.py line 9 (0-based 8): "        self.release()" -> Base.release */
    r = at_pos("textDocument/definition", repo, "pkg/pool.py", 8, 15, NULL);
    has_str(jq_str(r, "result.0.uri"), "/pkg/base.py", "definition of self.release(): in pkg/base.py");
    is_int(jq_int(r, "result.0.range.start.line"), 1, "... on its def line (0-based 1)");
    is_int(jq_int(r, "result.0.range.start.character"), 8, "... at the name 'release'");
    is_int(jq_int(r, "result.0.range.end.character"), 15, "... to its end");
    json_object_put(r);

    /* the same call behind non-ASCII text: UTF-16 columns are converted */
    snprintf(path, sizeof path, "%s/pkg/uni.py", repo);
    if ((f = fopen(path, "w")) != NULL) {
        fputs("from pkg.base import Base\n\n\nclass Uni(Base):\n    def go(self):\n"
              "        s = \"\xc3\xa9\xf0\x9f\x98\x80\"; self.release()\n",
              f);
        fclose(f);
    }
    /* line 5: 8 spaces, s = "é😀"; then self.release(): 'self' at byte 22, UTF-16 column 19 */
    r = at_pos("textDocument/definition", repo, "pkg/uni.py", 5, 19, NULL);
    has_str(jq_str(r, "result.0.uri"), "/pkg/base.py",
            "a UTF-16 column after an é and an emoji lands on self.release (the new file compiled first)");
    json_object_put(r);
    r = at_pos("textDocument/references", repo, "pkg/base.py", 1, 9, ",\"context\":{\"includeDeclaration\":false}");
    {
        json_object *list = jq_at(r, "result");
        bool found = false;
        for (size_t i = 0; json_object_is_type(list, json_type_array) && i < json_object_array_length(list); i++) {
            json_object *loc = json_object_array_get_idx(list, i);
            const char *u = jq_str(loc, "uri");
            if (u && strstr(u, "/pkg/uni.py") && jq_int(loc, "range.start.line") == 5 &&
                jq_int(loc, "range.start.character") == 19)
                found = true;
        }
        ok(found, "references of Base.release include uni.py line 5 at UTF-16 column 19");
    }
    json_object_put(r);

    /* pool.py line 12 (0-based 11): "    def _check(self):" */
    r = at_pos("textDocument/references", repo, "pkg/pool.py", 11, 9, ",\"context\":{\"includeDeclaration\":true}");
    ok(json_object_array_length(jq_at(r, "result")) == 2, "references of _check with its declaration: two");
    is_int(jq_int(r, "result.1.range.start.line"), 9, "... the call on line 10 (0-based 9)");
    is_int(jq_int(r, "result.1.range.start.character"), 15, "... where self._check starts");
    is_int(jq_int(r, "result.1.range.end.character"), 26, "... to its end");
    json_object_put(r);
    r = at_pos("textDocument/references", repo, "pkg/pool.py", 11, 9, ",\"context\":{\"includeDeclaration\":false}");
    ok(json_object_array_length(jq_at(r, "result")) == 1, "without the declaration: one");
    json_object_put(r);

    r = ask("{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"textDocument/definition\",\"params\":{\"textDocument\":"
            "{\"uri\":\"file:///etc/passwd\"},\"position\":{\"line\":0,\"character\":0}}}");
    ok(null_result(r), "a document outside the repository: null");
    json_object_put(r);
    snprintf(msg, sizeof msg,
             "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"textDocument/references\",\"params\":{\"textDocument\":"
             "{\"uri\":\"file://%s/../../etc/passwd\"},\"position\":{\"line\":0,\"character\":0}}}",
             repo);
    r = ask(msg);
    ok(json_object_is_type(jq_at(r, "result"), json_type_array) && json_object_array_length(jq_at(r, "result")) == 0,
       "a path that climbs out of the repository: no references");
    json_object_put(r);
    r = ask("{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"textDocument/definition\",\"params\":{\"position\":{}}}");
    is_int(jq_int(r, "error.code"), -32602, "a position request without its document: invalid params");
    json_object_put(r);
    r = at_pos("textDocument/definition", repo, "pkg/pool.py", 500, 0, NULL);
    is_int(jq_int(r, "error.code"), -32803, "a line past the end of the file on disk: RequestFailed");
    has_str(jq_str(r, "error.message"), "past the end of pkg/pool.py", "... saying the disk has fewer lines");
    json_object_put(r);

    r = ask("{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"workspace/symbol\",\"params\":{\"query\":\"ConnectionPool\"}}");
    is_str(jq_str(r, "result.0.name"), "ConnectionPool", "workspace/symbol finds the class");
    is_int(jq_int(r, "result.0.kind"), 5, "... as a Class");
    is_int(jq_int(r, "result.0.location.range.start.character"), 6, "... located at its name");
    json_object_put(r);
    r = ask("{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"workspace/symbol\",\"params\":{\"query\":\"_check\"}}");
    is_str(jq_str(r, "result.0.containerName"), "ConnectionPool", "a method's container is its class");
    is_int(jq_int(r, "result.0.kind"), 6, "... and it is a Method");
    json_object_put(r);
    r = ask("{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"workspace/symbol\",\"params\":{\"query\":\"\"}}");
    ok(json_object_array_length(jq_at(r, "result")) == 0, "an empty query: no symbols");
    json_object_put(r);
    snprintf(msg, sizeof msg,
             "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"textDocument/documentSymbol\",\"params\":"
             "{\"textDocument\":{\"uri\":\"%s\"}}}",
             uri_of(repo, "pkg/pool.py"));
    r = ask(msg);
    is_str(jq_str(r, "result.0.name"), "ConnectionPool", "documentSymbol: the class first");
    is_int(jq_int(r, "result.0.kind"), 5, "... a Class");
    is_int(jq_int(r, "result.0.range.start.line"), 3, "... its range from its first line");
    is_int(jq_int(r, "result.0.range.end.line"), 12, "... to its last");
    is_int(jq_int(r, "result.0.selectionRange.start.character"), 6, "... its name selected");
    ok(json_object_array_length(jq_at(r, "result.0.children")) == 3, "... with its three methods as children");
    is_str(jq_str(r, "result.0.children.2.name"), "_check", "... in order");
    is_int(jq_int(r, "result.0.children.2.kind"), 6, "... as Methods");
    json_object_put(r);
    r = ask("{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"textDocument/documentSymbol\",\"params\":"
            "{\"textDocument\":{\"uri\":\"file:///etc/hosts\"}}}");
    ok(json_object_array_length(jq_at(r, "result")) == 0, "documentSymbol outside the repository: none");
    json_object_put(r);
    r = ask("{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"textDocument/hover\",\"params\":{}}");
    is_int(jq_int(r, "error.code"), -32601, "an unserved method: method not found");
    json_object_put(r);

    r = ask("{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"shutdown\"}");
    ok(null_result(r), "shutdown: a null result");
    json_object_put(r);
    ok(cn_lsp_shut_down(srv), "shut down");
    r = at_pos("textDocument/definition", repo, "pkg/pool.py", 8, 15, NULL);
    is_int(jq_int(r, "error.code"), -32600, "a request after shutdown: invalid request");
    json_object_put(r);
    ok(!cn_lsp_exited(srv, &status), "not exited before exit");
    ask("{\"jsonrpc\":\"2.0\",\"method\":\"exit\"}");
    ok(cn_lsp_exited(srv, &status) && status == 0, "exit after shutdown: status 0");
    cn_lsp_free(srv);
    srv = NULL;
}

int main(void)
{
    const char *b = getenv("CN_BUILDDIR"), *s = getenv("CN_SRCDIR");
    char tmpl[] = "/tmp/cn-lsp.XXXXXX", cmd[4096], *tmp, *repo, *cache, *py;

    test_text();
    if (b == NULL || s == NULL) {
        diag("CN_BUILDDIR / CN_SRCDIR not set");
        return tap_done();
    }
    py = cn_path_join(b, "_plugins/lang-python/lang_python.so");
    if (access(py, R_OK) != 0) {
        free(py);
        diag("the python backend was not built: the server checks are left out");
        return tap_done();
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
    test_lifecycle_errors(repo);
    test_navigation(repo, cache);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
    if (system(cmd) != 0) diag("could not remove %s", tmp);
    free(repo);
    free(cache);
    return tap_done();
}
