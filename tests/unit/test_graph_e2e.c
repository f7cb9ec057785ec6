/* SPDX-License-Identifier: Apache-2.0 */
/* End to end: compile the fixture repositories of tests/fixtures/graph with
 * the real backends, open the index as skills see it (cn_host.index), and
 * compare every use-site edge with the expected listing; then the position
 * and name look-ups. */
#include <stdlib.h>
#include <string.h>

#include <codenib/index.h>

#include "index/cn_compile.h"
#include "index/cn_index.h"
#include "tap.h"

static char *listing(const struct cn_index *idx)
{
    const cn_index_services *I = cn_host_index_services();
    cn_buf b = CN_BUF_INIT;
    uint32_t n = I->node_count(idx);
    cn_edge_info e[256];
    for (uint32_t id = 0; id < n; id++) {
        cn_node_info from, to;
        cn_error err;
        size_t k = I->edges(idx, id, ~(1u << CN_EDGE_CONTAINS), CN_EDGES_OUT, e, 256);
        I->node(idx, id, &from, &err);
        for (size_t i = 0; i < k && i < 256; i++) {
            static const char *const types[] = {"?", "contains", "calls", "references", "imports", "inherits"};
            const char *target = "?";
            if (e[i].resolved && I->node(idx, e[i].node, &to, &err) == 0) target = to.qualname;
            /* the listing is 1-based, as people read it */
            cn_buf_printf(&b, "%s %s %s @%u:%u %s\n", from.qualname, types[e[i].type], target,
                          e[i].line + 1, e[i].column, e[i].name);
        }
    }
    return cn_buf_steal(&b);
}

static struct cn_index *compile_fixture(const char *name, const char *cache, char **expected)
{
    const char *src = getenv("CN_SRCDIR");
    cn_buf repo = CN_BUF_INIT, exp = CN_BUF_INIT;
    cn_compile_opts o;
    cn_compile_result res;
    struct cn_index *idx = NULL;
    char what[128];

    cn_buf_printf(&repo, "%s/tests/fixtures/graph/%s", src ? src : ".", name);
    cn_buf_printf(&exp, "%s/tests/fixtures/graph/%s.expected", src ? src : ".", name);
    memset(&o, 0, sizeof o);
    o.repo = repo.data;
    o.cache_dir = cache;
    o.no_default_excludes = false;
    snprintf(what, sizeof what, "%s fixture compiles", name);
    if (!ok(cn_compile(&o, &res) == 0, what)) diag("%s", cn_error_last()->message);
    else if (cn_index_open(res.index_dir, repo.data, &idx) < 0) diag("%s", cn_error_last()->message);
    cn_file_read(exp.data, 0, expected, NULL);
    cn_compile_result_free(&res);
    cn_buf_free(&repo);
    cn_buf_free(&exp);
    return idx;
}

static void compare(const char *name, const char *got, const char *want)
{
    char what[128];
    snprintf(what, sizeof what, "%s: every use-site edge as expected", name);
    if (!ok(got && want && strcmp(got, want) == 0, what)) {
        /* show the first differing line */
        const char *g = got ? got : "", *w = want ? want : "";
        while (*g && *g == *w) g++, w++;
        while (g > got && g[-1] != '\n') g--;
        while (w > want && w[-1] != '\n') w--;
        diag("got:  %.*s", (int)strcspn(g, "\n"), g);
        diag("want: %.*s", (int)strcspn(w, "\n"), w);
    }
}

int main(void)
{
    const cn_index_services *I = cn_host_index_services();
    char tmpl[] = "/tmp/cn-graph-e2e-XXXXXX", *dir = mkdtemp(tmpl), *cache, *want = NULL, *got;
    struct cn_index *idx;
    cn_edge_info e;
    cn_error err;
    uint32_t from = 0;

    cache = cn_path_join(dir, "py");
    idx = compile_fixture("python", cache, &want);
    free(cache);
    if (idx != NULL) {
        got = listing(idx);
        compare("python", got, want);
        free(got);
        ok(I->has_graph(idx), "the index has a graph");
        /* "self.release" in Base.close at 6:15 (1-based line 6 -> 5) */
        is_int(I->edge_at(idx, "pkg/base.py", 5, 16, &from, &e, &err), 0, "a use site by position");
        ok(e.type == CN_EDGE_CALLS && e.resolved && strcmp(e.name, "self.release") == 0,
           "it is the call of self.release");
        {
            cn_node_info n;
            I->node(idx, e.node, &n, &err);
            is_str(n.qualname, "pkg/base.py:Base.release", "resolved to Base.release");
            I->node(idx, from, &n, &err);
            is_str(n.qualname, "pkg/base.py:Base.close", "from Base.close");
        }
        is_int(I->edge_at(idx, "pkg/base.py", 0, 0, &from, &e, &err), CN_ENOTFOUND, "no use site there");
        {
            cn_edge_info many[8];
            ok(I->unresolved(idx, "len", 1u << CN_EDGE_CALLS, many, 8) >= 1, "calls of the builtin len, by name");
        }
        cn_index_close(idx);
    }
    free(want);
    want = NULL;

    cache = cn_path_join(dir, "c");
    idx = compile_fixture("c", cache, &want);
    free(cache);
    if (idx != NULL) {
        got = listing(idx);
        compare("c", got, want);
        free(got);
        cn_index_close(idx);
    }
    free(want);
    {
        cn_buf b = CN_BUF_INIT;
        char *cmd;
        cn_buf_printf(&b, "rm -rf '%s'", dir);
        cmd = cn_buf_steal(&b);
        if (system(cmd) != 0) diag("could not remove %s", dir);
        free(cmd);
    }
    return tap_done();
}
