/* SPDX-License-Identifier: Apache-2.0 */
/* Integration: compile a real code base present on every machine, the
 * Python standard library, and check counts and known symbols with their
 * exact line ranges.  Under valgrind (CN_VALGRIND=1) only the json and http
 * packages are compiled, to keep the run short. */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "index/cn_compile.h"
#include "index/cn_graph.h"
#include "index/cn_nodes.h"
#include "tap.h"

#define STDLIB "/usr/lib/python3.11"

static cn_graph *graph;

/* Whether `from` has an edge of `type` to `to` (qualified names). */
static void expect_edge(cn_nodes *nodes, const char *from, int type, const char *to)
{
    uint32_t a, b;
    cn_graph_edge e[512];
    size_t n;
    char what[512];
    bool found = false;
    snprintf(what, sizeof what, "%s %s %s", from, cn_edge_type_name(type), to);
    if (cn_nodes_find_qualname(nodes, from, &a) < 0 || cn_nodes_find_qualname(nodes, to, &b) < 0) {
        ok(0, what);
        diag("a symbol is missing");
        return;
    }
    n = cn_graph_edges(graph, a, CN_EDGE_BIT(type), CN_GRAPH_OUT, e, 512);
    for (size_t i = 0; i < n && i < 512; i++) found |= e[i].resolved && e[i].node == b;
    ok(found, what);
    /* and the same edge seen from the other end */
    n = cn_graph_edges(graph, b, CN_EDGE_BIT(type), CN_GRAPH_IN, e, 512);
    found = false;
    for (size_t i = 0; i < n && i < 512; i++) found |= e[i].node == a;
    snprintf(what, sizeof what, "%s has %s from %s", to, cn_edge_type_name(type), from);
    ok(found, what);
}

static cn_nodes *compile_and_open(const char *repo, const char *cache, cn_compile_result *res)
{
    cn_compile_opts o;
    cn_nodes *nodes = NULL;
    char *p;
    memset(&o, 0, sizeof o);
    o.repo = repo;
    o.cache_dir = cache;
    cn_strv_push(&o.languages, "python");
    if (!ok(cn_compile(&o, res) == 0, "compile succeeds")) diag("%s", cn_error_last()->message);
    cn_compile_opts_free(&o);
    if (res->index_dir == NULL) return NULL;
    p = cn_path_join(res->index_dir, CN_NODES_FILE);
    ok(cn_nodes_open(p, &nodes) == 0, "nodes index opens");
    free(p);
    p = cn_path_join(res->index_dir, CN_GRAPH_FILE);
    ok(cn_graph_open(p, &graph) == 0, "symbol graph opens");
    free(p);
    return nodes;
}

static void expect_symbol(cn_nodes *nodes, const char *qualname, const char *kind, uint32_t start,
                          uint32_t end)
{
    uint32_t id = 0;
    cn_node_view v;
    char what[256];
    snprintf(what, sizeof what, "%s is indexed", qualname);
    if (!ok(cn_nodes_find_qualname(nodes, qualname, &id) == 0, what)) return;
    cn_nodes_get(nodes, id, &v);
    snprintf(what, sizeof what, "%s is a %s", qualname, kind);
    is_str(cn_node_kind_name(v.kind), kind, what);
    snprintf(what, sizeof what, "%s starts at line %u", qualname, start);
    is_int(v.start_line, start, what);
    snprintf(what, sizeof what, "%s ends at line %u", qualname, end);
    is_int(v.end_line, end, what);
}

int main(void)
{
    struct stat st;
    char tmpl[] = "/tmp/cn-stdlib-XXXXXX";
    const char *valgrind = getenv("CN_VALGRIND");
    bool small = valgrind && *valgrind && strcmp(valgrind, "0") != 0;
    cn_compile_result res;
    cn_nodes *nodes;
    char *cache, *cmd;
    cn_buf b = CN_BUF_INIT;

    if (stat(STDLIB "/json/decoder.py", &st) != 0) {
        printf("1..0 # SKIP %s is not installed (scripts/setup.sh installs libpython3.11-stdlib)\n", STDLIB);
        return 0;
    }
    cache = mkdtemp(tmpl);
    nodes = compile_and_open(small ? STDLIB "/json" : STDLIB, cache, &res);
    if (nodes == NULL) return tap_done();

    if (small) {
        expect_symbol(nodes, "decoder.py:JSONDecoder.decode", "method", 332, 341);
        expect_symbol(nodes, "__init__.py:loads", "function", 299, 359);
        expect_symbol(nodes, "decoder.py:JSONDecoder", "class", 254, 356);
        ok(cn_nodes_file_count(nodes) >= 5, "the json package's files");
        expect_edge(nodes, "decoder.py:JSONDecoder.decode", CN_EDGE_CALLS, "decoder.py:JSONDecoder.raw_decode");
        expect_edge(nodes, "decoder.py:JSONDecoder", CN_EDGE_CONTAINS, "decoder.py:JSONDecoder.decode");
    } else {
        ok(res.parse.parsed >= 600 && res.parse.parsed <= 2500, "hundreds of files parsed");
        diag("files parsed: %zu, nodes: %u, lines: %llu", res.parse.parsed, res.n_nodes,
             (unsigned long long)res.parse.lines);
        ok(res.n_nodes >= 15000, "tens of thousands of nodes");
        ok(res.parse.lines >= 250000, "hundreds of thousands of lines");
        is_int(res.parse.failed, 0, "no file failed to parse");
        expect_symbol(nodes, "json/decoder.py:JSONDecoder.decode", "method", 332, 341);
        expect_symbol(nodes, "json/decoder.py:JSONDecoder", "class", 254, 356);
        expect_symbol(nodes, "json/__init__.py:loads", "function", 299, 359);
        expect_symbol(nodes, "http/client.py:HTTPConnection", "class", 789, 1391);
        expect_symbol(nodes, "http/client.py:HTTPConnection.request", "method", 1279, 1282);
        expect_symbol(nodes, "collections/__init__.py:OrderedDict.move_to_end", "method", 181, 204);
        {
            uint32_t ids[64];
            size_t n = cn_nodes_find_name(nodes, "decode", ids, 64);
            ok(n >= 5, "many methods named decode across the library");
        }
        expect_edge(nodes, "json/decoder.py:JSONDecoder.decode", CN_EDGE_CALLS,
                    "json/decoder.py:JSONDecoder.raw_decode");
        expect_edge(nodes, "http/client.py:HTTPConnection.request", CN_EDGE_CALLS,
                    "http/client.py:HTTPConnection._send_request");
        expect_edge(nodes, "json/decoder.py", CN_EDGE_CONTAINS, "json/decoder.py:JSONDecoder");
        expect_edge(nodes, "json/__init__.py:loads", CN_EDGE_REFERENCES, "json/decoder.py:JSONDecoder");
        expect_edge(nodes, "http/client.py:HTTPResponse", CN_EDGE_INHERITS, "io.py:BufferedIOBase");
        ok(cn_graph_edge_count(graph) >= 100000, "over a hundred thousand edges");
        {
            cn_graph_edge e[8];
            ok(cn_graph_unresolved(graph, "loads", CN_EDGE_BIT(CN_EDGE_CALLS), e, 8) >= 1,
               "calls of an unresolved loads are found by name");
        }
        {
            uint32_t id;
            ok(cn_nodes_at(nodes, "json/decoder.py", 335, &id) == 0, "node at json/decoder.py:335");
            cn_node_view v;
            cn_nodes_get(nodes, id, &v);
            is_str(v.qualname, "json/decoder.py:JSONDecoder.decode", "is the innermost definition");
        }
    }
    cn_nodes_close(nodes);
    cn_graph_close(graph);
    cn_compile_result_free(&res);
    cn_buf_printf(&b, "rm -rf '%s'", cache);
    cmd = cn_buf_steal(&b);
    if (system(cmd) != 0) diag("could not remove %s", cache);
    free(cmd);
    return tap_done();
}
