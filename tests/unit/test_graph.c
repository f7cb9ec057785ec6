/* SPDX-License-Identifier: Apache-2.0 */
/* Symbol graph: resolution of hand-built Python and C records, both
 * directions, lookups by unresolved name and by position, determinism and
 * corruption handling. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <codenib/lang.h>

#include "index/cn_graph.h"
#include "index/cn_idxfile.h"
#include "tap.h"

/* ---- building records by hand ---------------------------------------------- */

typedef struct fixture {
    cn_file_rec recs[32];
    size_t n;
    char *qual[256];   /* node id -> "path:Qual" (a file node: its path) */
    uint32_t n_nodes;
} fixture;

static uint32_t pool_add(cn_file_rec *r, const char *s)
{
    uint32_t off;
    if (s == NULL) return UINT32_MAX;
    off = (uint32_t)r->pool.len;
    cn_buf_append(&r->pool, s, strlen(s) + 1);
    return off;
}

static cn_file_rec *add_file(fixture *fx, const char *path, const char *language)
{
    cn_file_rec *r = &fx->recs[fx->n++];
    memset(r, 0, sizeof *r);
    r->path = strdup(path);
    r->language = language;
    r->status = CN_REC_PARSED;
    r->n_lines = 50;
    return r;
}

/* Adds a node; qual is the in-file qualified name, the short name is its
 * last dotted component.  Returns the node's index in the file. */
static int add_node(cn_file_rec *r, int kind, const char *qual, int parent, uint32_t start,
                    uint32_t end, uint32_t flags)
{
    cn_rec_node *n;
    const char *dot = strrchr(qual, '.');
    if (r->n_nodes == r->cap_nodes) {
        r->cap_nodes = r->cap_nodes ? r->cap_nodes * 2 : 8;
        r->nodes = realloc(r->nodes, r->cap_nodes * sizeof *r->nodes);
    }
    n = &r->nodes[r->n_nodes];
    memset(n, 0, sizeof *n);
    n->kind = (uint8_t)kind;
    n->flags = flags;
    n->start_line = start;
    n->end_line = end;
    n->parent = parent;
    n->name = pool_add(r, dot && qual[0] != '<' ? dot + 1 : qual);
    n->qualname = pool_add(r, qual);
    return (int)r->n_nodes++;
}

static void add_ref(cn_file_rec *r, int kind, int from, const char *name, const char *target,
                    uint32_t line, uint32_t column)
{
    cn_rec_ref *x;
    if (r->n_refs == r->cap_refs) {
        r->cap_refs = r->cap_refs ? r->cap_refs * 2 : 8;
        r->refs = realloc(r->refs, r->cap_refs * sizeof *r->refs);
    }
    x = &r->refs[r->n_refs++];
    memset(x, 0, sizeof *x);
    x->kind = (uint8_t)kind;
    x->from = from;
    x->line = line;
    x->column = column;
    x->name = pool_add(r, name);
    x->target = pool_add(r, target);
}

/* Numbers nodes like cn_nodes_write and records their qualified names. */
static void number(fixture *fx)
{
    uint32_t id = 0;
    for (size_t i = 0; i < fx->n; i++) {
        const cn_file_rec *r = &fx->recs[i];
        if (r->status != CN_REC_PARSED) continue;
        fx->qual[id++] = strdup(r->path);
        for (size_t k = 0; k < r->n_nodes; k++) {
            char buf[256];
            snprintf(buf, sizeof buf, "%s:%s", r->path, r->pool.data + r->nodes[k].qualname);
            fx->qual[id++] = strdup(buf);
        }
    }
    fx->n_nodes = id;
}

static uint32_t id_of(const fixture *fx, const char *qual)
{
    for (uint32_t i = 0; i < fx->n_nodes; i++)
        if (strcmp(fx->qual[i], qual) == 0) return i;
    printf("# no node %s in the fixture\n", qual);
    return UINT32_MAX;
}

static void fixture_free(fixture *fx)
{
    for (size_t i = 0; i < fx->n; i++) {
        free(fx->recs[i].path);
        free(fx->recs[i].nodes);
        free(fx->recs[i].refs);
        free(fx->recs[i].error);
        cn_buf_free(&fx->recs[i].pool);
    }
    for (uint32_t i = 0; i < fx->n_nodes; i++) free(fx->qual[i]);
}

/* "src type dst @line:col name" for one edge; dst "?" when unresolved. */
static void edge_line(const fixture *fx, uint32_t src, const cn_graph_edge *e, char *buf, size_t cap)
{
    const char *dst = e->resolved && e->node < fx->n_nodes ? fx->qual[e->node] : "?";
    if (e->type == CN_EDGE_CONTAINS)
        snprintf(buf, cap, "%s contains %s", fx->qual[src], dst);
    else
        snprintf(buf, cap, "%s %s %s @%u:%u %s", fx->qual[src], cn_edge_type_name(e->type), dst,
                 e->line, e->column, e->name);
}

/* Compares every out-edge of the graph, in order, with `want`; then checks
 * that the in-edges of each node are exactly the out-edges pointing at it,
 * in (type, line, column, source) order. */
static void check_all_edges(const fixture *fx, const cn_graph *g, const char *const *want,
                            size_t n_want, const char *label)
{
    size_t k = 0, total = 0, bad_in = 0;
    char buf[512], what[600];
    cn_graph_edge e[64], in[64];
    for (uint32_t v = 0; v < fx->n_nodes; v++) {
        size_t n = cn_graph_edges(g, v, CN_EDGE_ALL, CN_GRAPH_OUT, e, 64);
        for (size_t i = 0; i < n; i++, k++) {
            edge_line(fx, v, &e[i], buf, sizeof buf);
            snprintf(what, sizeof what, "%s: edge %zu", label, k);
            is_str(buf, k < n_want ? want[k] : "(no more edges expected)", what);
        }
        total += n;
    }
    snprintf(what, sizeof what, "%s: edge count", label);
    is_int(total, n_want, what);
    is_int(cn_graph_edge_count(g), n_want, what);
    /* in-edges: recompute from the out-edges and compare */
    for (uint32_t v = 0; v < fx->n_nodes; v++) {
        size_t want_n = 0, n = cn_graph_edges(g, v, CN_EDGE_ALL, CN_GRAPH_IN, in, 64);
        cn_graph_edge exp[64];
        uint32_t exp_src[64];
        for (uint32_t u = 0; u < fx->n_nodes; u++) {
            size_t m = cn_graph_edges(g, u, CN_EDGE_ALL, CN_GRAPH_OUT, e, 64);
            for (size_t i = 0; i < m; i++)
                if (e[i].resolved && e[i].node == v && want_n < 64) {
                    exp[want_n] = e[i];
                    exp_src[want_n++] = u;
                }
        }
        /* sort expected by (type, line, column, src): insertion sort */
        for (size_t i = 1; i < want_n; i++)
            for (size_t j = i; j > 0; j--) {
                cn_graph_edge *a = &exp[j - 1], *b = &exp[j];
                int gt = a->type != b->type ? a->type > b->type
                         : a->line != b->line ? a->line > b->line
                         : a->column != b->column ? a->column > b->column
                                                  : exp_src[j - 1] > exp_src[j];
                if (!gt) break;
                cn_graph_edge t = *a;
                uint32_t ts = exp_src[j - 1];
                *a = *b;
                *b = t;
                exp_src[j - 1] = exp_src[j];
                exp_src[j] = ts;
            }
        if (n != want_n) bad_in++;
        else
            for (size_t i = 0; i < n; i++)
                if (in[i].node != exp_src[i] || in[i].type != exp[i].type || in[i].line != exp[i].line ||
                    in[i].column != exp[i].column || strcmp(in[i].name, exp[i].name) != 0) {
                    bad_in++;
                    break;
                }
    }
    snprintf(what, sizeof what, "%s: in-edges mirror the out-edges for every node", label);
    is_int(bad_in, 0, what);
}

static char tmpdir[256];

static void path_in_tmp(char *buf, size_t cap, const char *name)
{
    snprintf(buf, cap, "%s/%s", tmpdir, name);
}

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    char *data;
    long n;
    if (f == NULL) return NULL;
    fseek(f, 0, SEEK_END);
    n = ftell(f);
    fseek(f, 0, SEEK_SET);
    data = malloc((size_t)n + 1);
    if (fread(data, 1, (size_t)n, f) != (size_t)n) n = 0;
    fclose(f);
    *len = (size_t)n;
    return data;
}

static void spit(const char *path, const char *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    if (f == NULL) return;
    fwrite(data, 1, len, f);
    fclose(f);
}

/* ---- the Python package ---------------------------------------------------- */

static void build_python(fixture *fx)
{
    cn_file_rec *r;
    int blk, cls, fn, m;

    /* pkg/__init__.py:  from . import models */
    r = add_file(fx, "pkg/__init__.py", "python");
    blk = add_node(r, CN_NODE_BLOCK, "<block:1>", -1, 1, 1, 0);
    add_ref(r, CN_REF_IMPORT, blk, "models", ".models", 1, 14);

    /* pkg/base.py */
    r = add_file(fx, "pkg/base.py", "python");
    cls = add_node(r, CN_NODE_CLASS, "Base", -1, 1, 5, 0);
    add_node(r, CN_NODE_METHOD, "Base.release", cls, 2, 3, 0);
    add_node(r, CN_NODE_METHOD, "Base.close", cls, 4, 5, 0);

    /* a file the parser could not handle: not numbered */
    r = add_file(fx, "pkg/broken.py", "python");
    r->status = CN_REC_FAILED;
    add_node(r, CN_NODE_CLASS, "Ghost", -1, 1, 2, 0);

    /* pkg/models.py */
    r = add_file(fx, "pkg/models.py", "python");
    blk = add_node(r, CN_NODE_BLOCK, "<block:1>", -1, 1, 1, 0);
    add_ref(r, CN_REF_IMPORT, blk, "Base", ".base.Base", 1, 18);   /* from .base import Base */
    cls = add_node(r, CN_NODE_CLASS, "User", -1, 4, 9, 0);
    add_ref(r, CN_REF_INHERIT, cls, "Base", NULL, 4, 11);
    m = add_node(r, CN_NODE_METHOD, "User.save", cls, 5, 6, 0);
    add_ref(r, CN_REF_CALL, m, "self.close", NULL, 6, 8);          /* inherited from Base */
    m = add_node(r, CN_NODE_METHOD, "User.load", cls, 8, 9, CN_NODE_F_CLASSMETHOD);
    add_ref(r, CN_REF_CALL, m, "cls.save", NULL, 9, 8);

    /* pkg/pool.py */
    r = add_file(fx, "pkg/pool.py", "python");
    blk = add_node(r, CN_NODE_BLOCK, "<block:1>", -1, 1, 1, 0);
    add_ref(r, CN_REF_IMPORT, blk, "Base", "pkg.base.Base", 1, 21); /* from pkg.base import Base */
    cls = add_node(r, CN_NODE_CLASS, "ConnectionPool", -1, 4, 13, 0);
    add_ref(r, CN_REF_INHERIT, cls, "Base", NULL, 4, 21);
    m = add_node(r, CN_NODE_METHOD, "ConnectionPool.__init__", cls, 5, 6, 0);
    add_ref(r, CN_REF_REFERENCE, m, "self.size", NULL, 6, 8);       /* an attribute: unresolved */
    m = add_node(r, CN_NODE_METHOD, "ConnectionPool.get", cls, 8, 10, 0);
    add_ref(r, CN_REF_CALL, m, "self.release", NULL, 9, 8);         /* Base.release */
    add_ref(r, CN_REF_CALL, m, "self._check", NULL, 10, 15);
    m = add_node(r, CN_NODE_METHOD, "ConnectionPool._check", cls, 12, 13, 0);
    add_ref(r, CN_REF_CALL, m, "len", NULL, 13, 15);                /* builtin */

    /* pkg/service.py */
    r = add_file(fx, "pkg/service.py", "python");
    blk = add_node(r, CN_NODE_BLOCK, "<block:1>", -1, 1, 4, 0);
    add_ref(r, CN_REF_IMPORT, blk, "ConnectionPool", ".pool.ConnectionPool", 1, 18);
    add_ref(r, CN_REF_IMPORT, blk, "u", "pkg.util", 2, 7);          /* import pkg.util as u */
    add_ref(r, CN_REF_IMPORT, blk, "models", "pkg.models", 3, 16);  /* from pkg import models */
    add_ref(r, CN_REF_IMPORT, blk, "*", "pkg.base.*", 4, 21);       /* from pkg.base import * */
    fn = add_node(r, CN_NODE_FUNCTION, "run", -1, 6, 12, 0);
    add_ref(r, CN_REF_CALL, fn, "ConnectionPool", NULL, 7, 11);
    add_ref(r, CN_REF_CALL, fn, "u.helper", NULL, 8, 4);
    add_ref(r, CN_REF_REFERENCE, fn, "models.User.save", NULL, 9, 4);
    add_ref(r, CN_REF_CALL, fn, "models.User.close", NULL, 10, 4);  /* through the base */
    add_ref(r, CN_REF_CALL, fn, "obj.save", NULL, 11, 4);           /* unknown receiver */
    add_ref(r, CN_REF_REFERENCE, fn, "Base", NULL, 12, 11);         /* via the star import */
    add_ref(r, CN_REF_CALL, fn, "ConnectionPool", NULL, 7, 11);     /* duplicate: kept once */

    /* pkg/util.py */
    r = add_file(fx, "pkg/util.py", "python");
    blk = add_node(r, CN_NODE_BLOCK, "<block:1>", -1, 1, 1, 0);
    add_ref(r, CN_REF_IMPORT, blk, "json", "json", 1, 7);           /* external */
    fn = add_node(r, CN_NODE_FUNCTION, "helper", -1, 4, 9, 0);
    m = add_node(r, CN_NODE_FUNCTION, "helper.inner", fn, 5, 6, 0);
    add_ref(r, CN_REF_CALL, m, "helper", NULL, 6, 15);
    add_ref(r, CN_REF_CALL, fn, "inner", NULL, 7, 11);              /* nested function */
    add_ref(r, CN_REF_CALL, fn, "json.loads", NULL, 8, 11);         /* external */
    number(fx);
}

static const char *const python_edges[] = {
    "pkg/__init__.py contains pkg/__init__.py:<block:1>",
    "pkg/__init__.py:<block:1> imports pkg/models.py @1:14 .models",
    "pkg/base.py contains pkg/base.py:Base",
    "pkg/base.py:Base contains pkg/base.py:Base.release",
    "pkg/base.py:Base contains pkg/base.py:Base.close",
    "pkg/models.py contains pkg/models.py:<block:1>",
    "pkg/models.py contains pkg/models.py:User",
    "pkg/models.py:<block:1> imports pkg/base.py:Base @1:18 .base.Base",
    "pkg/models.py:User contains pkg/models.py:User.save",
    "pkg/models.py:User contains pkg/models.py:User.load",
    "pkg/models.py:User inherits pkg/base.py:Base @4:11 Base",
    "pkg/models.py:User.save calls pkg/base.py:Base.close @6:8 self.close",
    "pkg/models.py:User.load calls pkg/models.py:User.save @9:8 cls.save",
    "pkg/pool.py contains pkg/pool.py:<block:1>",
    "pkg/pool.py contains pkg/pool.py:ConnectionPool",
    "pkg/pool.py:<block:1> imports pkg/base.py:Base @1:21 pkg.base.Base",
    "pkg/pool.py:ConnectionPool contains pkg/pool.py:ConnectionPool.__init__",
    "pkg/pool.py:ConnectionPool contains pkg/pool.py:ConnectionPool.get",
    "pkg/pool.py:ConnectionPool contains pkg/pool.py:ConnectionPool._check",
    "pkg/pool.py:ConnectionPool inherits pkg/base.py:Base @4:21 Base",
    "pkg/pool.py:ConnectionPool.__init__ references ? @6:8 self.size",
    "pkg/pool.py:ConnectionPool.get calls pkg/base.py:Base.release @9:8 self.release",
    "pkg/pool.py:ConnectionPool.get calls pkg/pool.py:ConnectionPool._check @10:15 self._check",
    "pkg/pool.py:ConnectionPool._check calls ? @13:15 len",
    "pkg/service.py contains pkg/service.py:<block:1>",
    "pkg/service.py contains pkg/service.py:run",
    "pkg/service.py:<block:1> imports pkg/pool.py:ConnectionPool @1:18 .pool.ConnectionPool",
    "pkg/service.py:<block:1> imports pkg/util.py @2:7 pkg.util",
    "pkg/service.py:<block:1> imports pkg/models.py @3:16 pkg.models",
    "pkg/service.py:<block:1> imports pkg/base.py @4:21 pkg.base.*",
    "pkg/service.py:run calls pkg/pool.py:ConnectionPool @7:11 ConnectionPool",
    "pkg/service.py:run calls pkg/util.py:helper @8:4 u.helper",
    "pkg/service.py:run calls pkg/base.py:Base.close @10:4 models.User.close",
    "pkg/service.py:run calls ? @11:4 obj.save",
    "pkg/service.py:run references pkg/models.py:User.save @9:4 models.User.save",
    "pkg/service.py:run references pkg/base.py:Base @12:11 Base",
    "pkg/util.py contains pkg/util.py:<block:1>",
    "pkg/util.py contains pkg/util.py:helper",
    "pkg/util.py:<block:1> imports ? @1:7 json",
    "pkg/util.py:helper contains pkg/util.py:helper.inner",
    "pkg/util.py:helper calls pkg/util.py:helper.inner @7:11 inner",
    "pkg/util.py:helper calls ? @8:11 json.loads",
    "pkg/util.py:helper.inner calls pkg/util.py:helper @6:15 helper",
};

static void test_python(void)
{
    fixture fx;
    cn_graph *g = NULL;
    cn_graph_stats st;
    cn_graph_edge e[16];
    char path[512], path2[512], *a, *b;
    size_t n, la = 0, lb = 0;
    uint32_t run, close_, pool, helper;
    int rc;

    memset(&fx, 0, sizeof fx);
    build_python(&fx);
    path_in_tmp(path, sizeof path, "py.graph");
    rc = cn_graph_write(fx.recs, fx.n, path, &st);
    is_int(rc, 0, "python: cn_graph_write");
    is_int(st.nodes, 24, "python: node count in stats (the failed record is skipped)");
    is_int(st.by_type[CN_EDGE_CONTAINS], 18, "python: contains edges");
    is_int(st.by_type[CN_EDGE_CALLS], 12, "python: calls edges");
    is_int(st.by_type[CN_EDGE_REFERENCES], 3, "python: references edges");
    is_int(st.by_type[CN_EDGE_IMPORTS], 8, "python: imports edges");
    is_int(st.by_type[CN_EDGE_INHERITS], 2, "python: inherits edges");
    is_int(st.resolved, 20, "python: resolved use edges");
    is_int(st.unresolved, 5, "python: unresolved use edges");
    is_int(st.resolved_by_type[CN_EDGE_CALLS], 9, "python: resolved calls");
    rc = cn_graph_open(path, &g);
    is_int(rc, 0, "python: cn_graph_open");
    if (rc < 0) {
        fixture_free(&fx);
        return;
    }
    is_int(cn_graph_node_count(g), 24, "python: node count");
    check_all_edges(&fx, g, python_edges, sizeof python_edges / sizeof *python_edges, "python");

    /* in-edges, spelled out */
    close_ = id_of(&fx, "pkg/base.py:Base.close");
    n = cn_graph_edges(g, close_, CN_EDGE_ALL, CN_GRAPH_IN, e, 16);
    is_int(n, 3, "python: Base.close has 3 in-edges");
    is_int(e[0].type, CN_EDGE_CONTAINS, "python: Base.close in 0: contains");
    is_int(e[0].node, id_of(&fx, "pkg/base.py:Base"), "python: Base.close in 0: from Base");
    is_int(e[1].node, id_of(&fx, "pkg/models.py:User.save"), "python: Base.close in 1: from User.save");
    is_int(e[1].line, 6, "python: Base.close in 1: line");
    is_int(e[1].column, 8, "python: Base.close in 1: column");
    is_str(e[1].name, "self.close", "python: Base.close in 1: name");
    is_int(e[2].node, id_of(&fx, "pkg/service.py:run"), "python: Base.close in 2: from run");
    is_int(e[2].line, 10, "python: Base.close in 2: line");
    pool = id_of(&fx, "pkg/pool.py:ConnectionPool");
    n = cn_graph_edges(g, pool, CN_EDGE_BIT(CN_EDGE_CALLS) | CN_EDGE_BIT(CN_EDGE_IMPORTS), CN_GRAPH_IN, e, 16);
    is_int(n, 2, "python: ConnectionPool called and imported once each");
    is_int(e[0].type, CN_EDGE_CALLS, "python: ConnectionPool in 0: calls");
    is_int(e[1].type, CN_EDGE_IMPORTS, "python: ConnectionPool in 1: imports");
    is_int(e[1].node, id_of(&fx, "pkg/service.py:<block:1>"), "python: imported by service's block");
    n = cn_graph_edges(g, pool, CN_EDGE_ALL, CN_GRAPH_IN, e, 1);
    is_int(n, 3, "python: the total is returned when max is smaller");
    is_int(cn_graph_edges(g, 9999, CN_EDGE_ALL, CN_GRAPH_OUT, e, 16), 0, "python: node out of range");

    /* unresolved by name */
    n = cn_graph_unresolved(g, "loads", CN_EDGE_USES, e, 16);
    is_int(n, 1, "python: one unresolved use of loads");
    helper = id_of(&fx, "pkg/util.py:helper");
    is_int(e[0].node, helper, "python: loads is called from helper");
    is_str(e[0].name, "json.loads", "python: written json.loads");
    is_int(e[0].line, 8, "python: loads line");
    is_int(e[0].column, 11, "python: loads column");
    is_int(e[0].resolved, 0, "python: loads unresolved");
    is_int(cn_graph_unresolved(g, "json.loads", CN_EDGE_USES, e, 16), 1, "python: exact json.loads");
    is_int(cn_graph_unresolved(g, "json", CN_EDGE_BIT(CN_EDGE_IMPORTS), e, 16), 1,
           "python: the json import");
    is_int(cn_graph_unresolved(g, "json", CN_EDGE_BIT(CN_EDGE_CALLS), e, 16), 0,
           "python: json is not called bare");
    is_int(cn_graph_unresolved(g, "len", CN_EDGE_USES, e, 16), 1, "python: len");
    is_int(e[0].node, id_of(&fx, "pkg/pool.py:ConnectionPool._check"), "python: len from _check");
    is_int(cn_graph_unresolved(g, "save", CN_EDGE_USES, e, 16), 1, "python: obj.save by last component");
    is_str(e[0].name, "obj.save", "python: obj.save name");
    is_int(cn_graph_unresolved(g, "nothing", CN_EDGE_ALL, e, 16), 0, "python: unknown name");

    /* by position */
    run = id_of(&fx, "pkg/service.py:run");
    rc = cn_graph_at(g, run, 9, 12, &e[0]);
    is_int(rc, 0, "python: at 9:12 in run");
    is_int(e[0].node, id_of(&fx, "pkg/models.py:User.save"), "python: at 9:12 is User.save");
    is_int(e[0].type, CN_EDGE_REFERENCES, "python: at 9:12 is a reference");
    rc = cn_graph_at(g, run, 8, 4, &e[0]);
    is_int(rc, 0, "python: at 8:4 (first column)");
    is_int(e[0].node, helper, "python: at 8:4 is helper");
    rc = cn_graph_at(g, run, 8, 12, &e[0]);
    is_int(rc, 0, "python: at 8:12 (just past the name)");
    rc = cn_graph_at(g, run, 8, 13, &e[0]);
    is_int(rc, CN_ENOTFOUND, "python: at 8:13 nothing");
    rc = cn_graph_at(g, run, 8, 3, &e[0]);
    is_int(rc, CN_ENOTFOUND, "python: at 8:3 nothing");
    rc = cn_graph_at(g, run, 11, 6, &e[0]);
    is_int(rc, 0, "python: at 11:6 finds the unresolved call");
    is_int(e[0].node, UINT32_MAX, "python: at 11:6 target UINT32_MAX");
    is_str(e[0].name, "obj.save", "python: at 11:6 name");

    /* determinism */
    path_in_tmp(path2, sizeof path2, "py2.graph");
    rc = cn_graph_write(fx.recs, fx.n, path2, NULL);
    is_int(rc, 0, "python: second write");
    a = slurp(path, &la);
    b = slurp(path2, &lb);
    ok(a && b && la == lb && la > 0 && memcmp(a, b, la) == 0, "python: identical bytes for identical input");
    free(a);
    free(b);
    cn_graph_close(g);
    fixture_free(&fx);
}

/* ---- the C project ---------------------------------------------------------- */

static void build_c(fixture *fx)
{
    cn_file_rec *r;
    int fn;

    r = add_file(fx, "dup.c", "c");
    add_ref(r, CN_REF_IMPORT, -1, "dup.h", "dup.h", 1, 0);
    add_node(r, CN_NODE_FUNCTION, "dup", -1, 3, 5, 0);

    r = add_file(fx, "dup.h", "c");
    add_node(r, CN_NODE_PROTOTYPE, "dup", -1, 1, 1, 0);

    r = add_file(fx, "include/inc/cfg.h", "c");
    add_node(r, CN_NODE_MACRO, "CFG_MAX", -1, 1, 1, 0);

    r = add_file(fx, "list.c", "c");
    add_ref(r, CN_REF_IMPORT, -1, "list.h", "list.h", 1, 0);
    add_ref(r, CN_REF_IMPORT, -1, "stdio.h", "<stdio.h>", 2, 0);
    fn = add_node(r, CN_NODE_FUNCTION, "list_push", -1, 4, 8, 0);
    add_ref(r, CN_REF_REFERENCE, fn, "list", NULL, 4, 20);     /* struct tag */
    add_ref(r, CN_REF_CALL, fn, "helper", NULL, 5, 4);         /* its own static */
    add_ref(r, CN_REF_CALL, fn, "printf", NULL, 6, 4);
    add_ref(r, CN_REF_CALL, fn, "LIST_EMPTY", NULL, 7, 8);     /* function-like macro */
    add_node(r, CN_NODE_FUNCTION, "helper", -1, 10, 12, CN_NODE_F_STATIC);

    r = add_file(fx, "list.h", "c");
    add_node(r, CN_NODE_STRUCT, "list", -1, 1, 4, 0);
    fn = add_node(r, CN_NODE_PROTOTYPE, "list_push", -1, 6, 6, 0);
    add_ref(r, CN_REF_REFERENCE, fn, "list", NULL, 6, 22);
    add_node(r, CN_NODE_MACRO, "LIST_EMPTY", -1, 8, 8, 0);
    add_node(r, CN_NODE_FUNCTION, "list_len", -1, 10, 12, CN_NODE_F_STATIC); /* static inline */
    add_node(r, CN_NODE_PROTOTYPE, "ext_fn", -1, 14, 14, 0);

    r = add_file(fx, "main.c", "c");
    add_ref(r, CN_REF_IMPORT, -1, "list.h", "list.h", 1, 0);
    add_ref(r, CN_REF_IMPORT, -1, "dup.h", "dup.h", 2, 0);
    add_node(r, CN_NODE_FUNCTION, "helper", -1, 4, 6, CN_NODE_F_STATIC);
    fn = add_node(r, CN_NODE_FUNCTION, "main", -1, 8, 15, 0);
    add_ref(r, CN_REF_CALL, fn, "list_push", NULL, 9, 4);      /* the definition, not the prototype */
    add_ref(r, CN_REF_CALL, fn, "helper", NULL, 10, 4);        /* its own static */
    add_ref(r, CN_REF_CALL, fn, "list_len", NULL, 11, 4);      /* static inline of an included header */
    add_ref(r, CN_REF_CALL, fn, "ops->read", NULL, 12, 4);     /* field call */
    add_ref(r, CN_REF_CALL, fn, "dup", NULL, 13, 4);           /* dup.c: the .c of the included dup.h */
    add_ref(r, CN_REF_REFERENCE, fn, "counter", NULL, 14, 4);
    add_ref(r, CN_REF_CALL, fn, "ext_fn", NULL, 15, 4);        /* only a prototype exists */

    r = add_file(fx, "old/legacy.c", "c");
    add_node(r, CN_NODE_FUNCTION, "dup", -1, 1, 3, 0);

    r = add_file(fx, "other.c", "c");
    fn = add_node(r, CN_NODE_FUNCTION, "other", -1, 1, 5, 0);
    add_ref(r, CN_REF_CALL, fn, "helper", NULL, 2, 4);         /* util.c's, not the statics */
    add_ref(r, CN_REF_CALL, fn, "list_len", NULL, 3, 4);       /* static of a header not included */
    add_ref(r, CN_REF_CALL, fn, "dup", NULL, 4, 4);            /* ambiguous: both */
    add_ref(r, CN_REF_REFERENCE, fn, "counter", NULL, 5, 4);

    r = add_file(fx, "sub/x.c", "c");
    add_ref(r, CN_REF_IMPORT, -1, "inc/cfg.h", "inc/cfg.h", 1, 0); /* by suffix */
    add_ref(r, CN_REF_IMPORT, -1, "../list.h", "../list.h", 2, 0); /* relative */
    fn = add_node(r, CN_NODE_FUNCTION, "x", -1, 4, 6, 0);
    add_ref(r, CN_REF_REFERENCE, fn, "CFG_MAX", NULL, 5, 11);
    add_ref(r, CN_REF_CALL, fn, "list_len", NULL, 6, 4);

    r = add_file(fx, "util.c", "c");
    add_node(r, CN_NODE_FUNCTION, "helper", -1, 1, 3, 0);
    add_node(r, CN_NODE_VARIABLE, "counter", -1, 5, 5, 0);
    number(fx);
}

static const char *const c_edges[] = {
    "dup.c contains dup.c:dup",
    "dup.c imports dup.h @1:0 dup.h",
    "dup.h contains dup.h:dup",
    "include/inc/cfg.h contains include/inc/cfg.h:CFG_MAX",
    "list.c contains list.c:list_push",
    "list.c contains list.c:helper",
    "list.c imports list.h @1:0 list.h",
    "list.c imports ? @2:0 <stdio.h>",
    "list.c:list_push calls list.c:helper @5:4 helper",
    "list.c:list_push calls ? @6:4 printf",
    "list.c:list_push calls list.h:LIST_EMPTY @7:8 LIST_EMPTY",
    "list.c:list_push references list.h:list @4:20 list",
    "list.h contains list.h:list",
    "list.h contains list.h:list_push",
    "list.h contains list.h:LIST_EMPTY",
    "list.h contains list.h:list_len",
    "list.h contains list.h:ext_fn",
    "list.h:list_push references list.h:list @6:22 list",
    "main.c contains main.c:helper",
    "main.c contains main.c:main",
    "main.c imports list.h @1:0 list.h",
    "main.c imports dup.h @2:0 dup.h",
    "main.c:main calls list.c:list_push @9:4 list_push",
    "main.c:main calls main.c:helper @10:4 helper",
    "main.c:main calls list.h:list_len @11:4 list_len",
    "main.c:main calls ? @12:4 ops->read",
    "main.c:main calls dup.c:dup @13:4 dup",
    "main.c:main calls list.h:ext_fn @15:4 ext_fn",
    "main.c:main references util.c:counter @14:4 counter",
    "old/legacy.c contains old/legacy.c:dup",
    "other.c contains other.c:other",
    "other.c:other calls util.c:helper @2:4 helper",
    "other.c:other calls ? @3:4 list_len",
    "other.c:other calls dup.c:dup @4:4 dup",
    "other.c:other calls old/legacy.c:dup @4:4 dup",
    "other.c:other references util.c:counter @5:4 counter",
    "sub/x.c contains sub/x.c:x",
    "sub/x.c imports include/inc/cfg.h @1:0 inc/cfg.h",
    "sub/x.c imports list.h @2:0 ../list.h",
    "sub/x.c:x calls list.h:list_len @6:4 list_len",
    "sub/x.c:x references include/inc/cfg.h:CFG_MAX @5:11 CFG_MAX",
    "util.c contains util.c:helper",
    "util.c contains util.c:counter",
};

static void test_c(void)
{
    fixture fx;
    cn_graph *g = NULL;
    cn_graph_stats st;
    cn_graph_edge e[16];
    char path[512];
    size_t n;
    uint32_t main_, list_h, dup_c;
    int rc;

    memset(&fx, 0, sizeof fx);
    build_c(&fx);
    path_in_tmp(path, sizeof path, "c.graph");
    rc = cn_graph_write(fx.recs, fx.n, path, &st);
    is_int(rc, 0, "c: cn_graph_write");
    is_int(st.by_type[CN_EDGE_CONTAINS], 17, "c: contains edges");
    is_int(st.by_type[CN_EDGE_CALLS], 14, "c: calls edges");
    is_int(st.by_type[CN_EDGE_IMPORTS], 7, "c: imports edges");
    is_int(st.unresolved, 4, "c: unresolved edges");
    rc = cn_graph_open(path, &g);
    is_int(rc, 0, "c: cn_graph_open");
    if (rc < 0) {
        fixture_free(&fx);
        return;
    }
    check_all_edges(&fx, g, c_edges, sizeof c_edges / sizeof *c_edges, "c");

    list_h = id_of(&fx, "list.h");
    n = cn_graph_edges(g, list_h, CN_EDGE_ALL, CN_GRAPH_IN, e, 16);
    is_int(n, 3, "c: list.h is included three times");
    is_int(e[0].node, id_of(&fx, "list.c"), "c: list.h in 0: list.c");
    is_int(e[1].node, id_of(&fx, "main.c"), "c: list.h in 1: main.c");
    is_int(e[2].node, id_of(&fx, "sub/x.c"), "c: list.h in 2: sub/x.c");
    is_int(e[2].line, 2, "c: list.h in 2: line 2");
    dup_c = id_of(&fx, "dup.c:dup");
    n = cn_graph_edges(g, dup_c, CN_EDGE_BIT(CN_EDGE_CALLS), CN_GRAPH_IN, e, 16);
    is_int(n, 2, "c: dup.c:dup called twice");
    is_int(e[0].node, id_of(&fx, "other.c:other"), "c: dup in 0: other (line 4)");
    is_int(e[1].node, id_of(&fx, "main.c:main"), "c: dup in 1: main (line 13)");
    is_int(cn_graph_edges(g, id_of(&fx, "list.h:list_push"), CN_EDGE_BIT(CN_EDGE_CALLS), CN_GRAPH_IN, e, 16),
           0, "c: the prototype is not called when the definition exists");

    n = cn_graph_unresolved(g, "read", CN_EDGE_USES, e, 16);
    is_int(n, 1, "c: ops->read by its last component");
    is_str(e[0].name, "ops->read", "c: ops->read name");
    main_ = id_of(&fx, "main.c:main");
    is_int(e[0].node, main_, "c: ops->read from main");
    is_int(cn_graph_unresolved(g, "<stdio.h>", CN_EDGE_BIT(CN_EDGE_IMPORTS), e, 16), 1, "c: <stdio.h>");
    is_int(e[0].node, id_of(&fx, "list.c"), "c: <stdio.h> from list.c");
    is_int(cn_graph_unresolved(g, "h>", CN_EDGE_ALL, e, 16), 0, "c: include names are not split");

    rc = cn_graph_at(g, main_, 12, 9, &e[0]);
    is_int(rc, 0, "c: at 12:9 in main");
    is_str(e[0].name, "ops->read", "c: at 12:9 is ops->read");
    rc = cn_graph_at(g, main_, 13, 5, &e[0]);
    is_int(rc, 0, "c: at 13:5 in main");
    is_int(e[0].node, dup_c, "c: at 13:5 is dup.c:dup");
    rc = cn_graph_at(g, main_, 16, 4, &e[0]);
    is_int(rc, CN_ENOTFOUND, "c: nothing on line 16");
    cn_graph_close(g);
    fixture_free(&fx);
}

/* ---- more Python rules, and another language -------------------------------- */

static void build_extras(fixture *fx)
{
    cn_file_rec *r;
    int blk, cls, fn;

    /* app/__init__.py:  from .core.models import User as Account  (re-export) */
    r = add_file(fx, "app/__init__.py", "python");
    blk = add_node(r, CN_NODE_BLOCK, "<block:1>", -1, 1, 1, 0);
    add_ref(r, CN_REF_IMPORT, blk, "Account", ".core.models.User", 1, 30);

    add_file(fx, "app/core/__init__.py", "python");

    r = add_file(fx, "app/core/models.py", "python");
    cls = add_node(r, CN_NODE_CLASS, "User", -1, 1, 3, 0);
    add_node(r, CN_NODE_METHOD, "User.save", cls, 2, 3, 0);
    cls = add_node(r, CN_NODE_CLASS, "Loop", -1, 5, 6, 0);           /* an inheritance cycle */
    add_ref(r, CN_REF_INHERIT, cls, "Loop2", NULL, 5, 11);
    fn = add_node(r, CN_NODE_METHOD, "Loop.go", cls, 6, 6, 0);
    add_ref(r, CN_REF_CALL, fn, "self.missing", NULL, 6, 8);
    cls = add_node(r, CN_NODE_CLASS, "Loop2", -1, 8, 9, 0);
    add_ref(r, CN_REF_INHERIT, cls, "Loop", NULL, 8, 12);

    r = add_file(fx, "app/core/views.py", "python");
    blk = add_node(r, CN_NODE_BLOCK, "<block:1>", -1, 1, 2, 0);
    add_ref(r, CN_REF_IMPORT, blk, "Account", "..Account", 1, 16);    /* from .. import Account */
    add_ref(r, CN_REF_IMPORT, blk, "mylib.tools", "mylib.tools", 2, 7); /* src/mylib/tools.py */
    fn = add_node(r, CN_NODE_FUNCTION, "view", -1, 4, 9, 0);
    add_ref(r, CN_REF_IMPORT, fn, "tl", "mylib.tools", 5, 8);         /* local to view */
    add_ref(r, CN_REF_CALL, fn, "tl.run", NULL, 6, 4);
    add_ref(r, CN_REF_CALL, fn, "Account", NULL, 7, 4);
    add_ref(r, CN_REF_CALL, fn, "mylib.tools.run", NULL, 8, 4);
    add_ref(r, CN_REF_CALL, fn, "mylib.other", NULL, 9, 4);
    fn = add_node(r, CN_NODE_FUNCTION, "other", -1, 11, 12, 0);
    add_ref(r, CN_REF_CALL, fn, "tl.run", NULL, 12, 4);               /* tl is not bound here */

    /* two modules importing a name from each other */
    r = add_file(fx, "app/cyc_a.py", "python");
    blk = add_node(r, CN_NODE_BLOCK, "<block:1>", -1, 1, 1, 0);
    add_ref(r, CN_REF_IMPORT, blk, "f", "app.cyc_b.f", 1, 0);
    r = add_file(fx, "app/cyc_b.py", "python");
    blk = add_node(r, CN_NODE_BLOCK, "<block:1>", -1, 1, 2, 0);
    add_ref(r, CN_REF_IMPORT, blk, "f", "app.cyc_a.f", 1, 0);
    add_ref(r, CN_REF_CALL, blk, "f", NULL, 2, 0);

    /* from . import *: the package's public names, re-exports included */
    r = add_file(fx, "app/star.py", "python");
    blk = add_node(r, CN_NODE_BLOCK, "<block:1>", -1, 1, 3, 0);
    add_ref(r, CN_REF_IMPORT, blk, "*", ".*", 1, 0);
    add_ref(r, CN_REF_CALL, blk, "Account", NULL, 2, 0);
    add_ref(r, CN_REF_CALL, blk, "_private", NULL, 3, 0);

    r = add_file(fx, "src/mylib/tools.py", "python");
    add_node(r, CN_NODE_FUNCTION, "run", -1, 1, 2, 0);
    r = add_file(fx, "src/mylib/tools.pyi", "python");               /* the stub loses to the .py */
    add_node(r, CN_NODE_FUNCTION, "run", -1, 1, 1, 0);

    /* another language: by name, own file first, then a unique definition */
    r = add_file(fx, "a.go", "go");
    add_ref(r, CN_REF_IMPORT, -1, "b.go", "b.go", 1, 0);
    fn = add_node(r, CN_NODE_FUNCTION, "Foo", -1, 1, 3, 0);
    add_ref(r, CN_REF_CALL, fn, "Bar", NULL, 2, 1);
    add_ref(r, CN_REF_CALL, fn, "Dup", NULL, 3, 1);                   /* two candidates */
    add_ref(r, CN_REF_CALL, fn, "fmt.Println", NULL, 3, 10);
    add_ref(r, CN_REF_CALL, fn, "run", NULL, 3, 30);                  /* only Python has one */
    add_ref(r, CN_REF_CALL, fn, "tl", NULL, 3, 40);                   /* only a Python import binds it */
    r = add_file(fx, "b.go", "go");
    add_node(r, CN_NODE_FUNCTION, "Bar", -1, 1, 2, 0);
    fn = add_node(r, CN_NODE_FUNCTION, "Dup", -1, 3, 3, 0);
    add_ref(r, CN_REF_CALL, fn, "Dup", NULL, 3, 5);                   /* its own file's */
    r = add_file(fx, "c.go", "go");
    add_node(r, CN_NODE_FUNCTION, "Dup", -1, 1, 1, 0);
    /* C: a name no node has, only a Python import binding */
    r = add_file(fx, "x.c", "c");
    fn = add_node(r, CN_NODE_FUNCTION, "main", -1, 1, 2, 0);
    add_ref(r, CN_REF_CALL, fn, "Account", NULL, 2, 5);
    number(fx);
}

static const char *const extra_edges[] = {
    "app/__init__.py contains app/__init__.py:<block:1>",
    "app/__init__.py:<block:1> imports app/core/models.py:User @1:30 .core.models.User",
    "app/core/models.py contains app/core/models.py:User",
    "app/core/models.py contains app/core/models.py:Loop",
    "app/core/models.py contains app/core/models.py:Loop2",
    "app/core/models.py:User contains app/core/models.py:User.save",
    "app/core/models.py:Loop contains app/core/models.py:Loop.go",
    "app/core/models.py:Loop inherits app/core/models.py:Loop2 @5:11 Loop2",
    "app/core/models.py:Loop.go calls ? @6:8 self.missing",
    "app/core/models.py:Loop2 inherits app/core/models.py:Loop @8:12 Loop",
    "app/core/views.py contains app/core/views.py:<block:1>",
    "app/core/views.py contains app/core/views.py:view",
    "app/core/views.py contains app/core/views.py:other",
    "app/core/views.py:<block:1> imports app/core/models.py:User @1:16 ..Account",
    "app/core/views.py:<block:1> imports src/mylib/tools.py @2:7 mylib.tools",
    "app/core/views.py:view calls src/mylib/tools.py:run @6:4 tl.run",
    "app/core/views.py:view calls app/core/models.py:User @7:4 Account",
    "app/core/views.py:view calls src/mylib/tools.py:run @8:4 mylib.tools.run",
    "app/core/views.py:view calls ? @9:4 mylib.other",
    "app/core/views.py:view imports src/mylib/tools.py @5:8 mylib.tools",
    "app/core/views.py:other calls ? @12:4 tl.run",
    "app/cyc_a.py contains app/cyc_a.py:<block:1>",
    "app/cyc_a.py:<block:1> imports ? @1:0 app.cyc_b.f",
    "app/cyc_b.py contains app/cyc_b.py:<block:1>",
    "app/cyc_b.py:<block:1> calls ? @2:0 f",
    "app/cyc_b.py:<block:1> imports ? @1:0 app.cyc_a.f",
    "app/star.py contains app/star.py:<block:1>",
    "app/star.py:<block:1> calls app/core/models.py:User @2:0 Account",
    "app/star.py:<block:1> calls ? @3:0 _private",
    "app/star.py:<block:1> imports app/__init__.py @1:0 .*",
    "src/mylib/tools.py contains src/mylib/tools.py:run",
    "src/mylib/tools.pyi contains src/mylib/tools.pyi:run",
    "a.go contains a.go:Foo",
    "a.go imports b.go @1:0 b.go",
    "a.go:Foo calls b.go:Bar @2:1 Bar",
    "a.go:Foo calls ? @3:1 Dup",
    "a.go:Foo calls ? @3:10 fmt.Println",
    "a.go:Foo calls ? @3:30 run",
    "a.go:Foo calls ? @3:40 tl",
    "b.go contains b.go:Bar",
    "b.go contains b.go:Dup",
    "b.go:Dup calls b.go:Dup @3:5 Dup",
    "c.go contains c.go:Dup",
    "x.c contains x.c:main",
    "x.c:main calls ? @2:5 Account",
};

static void test_extras(void)
{
    fixture fx;
    cn_graph *g = NULL;
    char path[512];
    int rc;

    memset(&fx, 0, sizeof fx);
    build_extras(&fx);
    path_in_tmp(path, sizeof path, "extra.graph");
    rc = cn_graph_write(fx.recs, fx.n, path, NULL);
    is_int(rc, 0, "extras: cn_graph_write");
    rc = cn_graph_open(path, &g);
    is_int(rc, 0, "extras: cn_graph_open");
    if (rc == 0) check_all_edges(&fx, g, extra_edges, sizeof extra_edges / sizeof *extra_edges, "extras");
    cn_graph_close(g);
    fixture_free(&fx);
}

/* ---- corruption ----------------------------------------------------------------- */

static void expect_corrupt(const char *path, const char *what)
{
    cn_graph *g = NULL;
    char msg[600];
    int rc = cn_graph_open(path, &g);
    snprintf(msg, sizeof msg, "%s: CN_ECORRUPT", what);
    is_int(rc, CN_ECORRUPT, msg);
    snprintf(msg, sizeof msg, "%s: the error names the path", what);
    has_str(cn_error_last()->message, path, msg);
    ok(g == NULL, "no reader handed out");
    if (g) cn_graph_close(g);
}

/* Writes a hand-made graph file whose container is valid. */
static void write_raw(const char *path, uint32_t n_nodes, const uint32_t *out_offs,
                      const uint32_t *edges, uint32_t n_edges, const uint32_t *in_offs,
                      const uint32_t *in_edges, uint32_t n_in, const char *strtab, size_t st_len)
{
    cn_idx_writer *w = NULL;
    uint32_t meta[8] = {n_nodes, n_edges, n_in, 0, 0, 0, 0, 0};
    cn_idx_writer_new(CN_GRAPH_MAGIC, CN_GRAPH_VERSION, &w);
    cn_idx_writer_add(w, 1, meta, sizeof meta);
    cn_idx_writer_add(w, 2, out_offs, (n_nodes + 1) * 4u);
    cn_idx_writer_add(w, 3, edges, n_edges * 24u);
    cn_idx_writer_add(w, 4, in_offs, (n_nodes + 1) * 4u);
    cn_idx_writer_add(w, 5, in_edges, n_in * 4u);
    cn_idx_writer_add(w, 6, "", 0);
    cn_idx_writer_add(w, 7, "", 0);
    cn_idx_writer_add(w, 8, strtab, st_len);
    cn_idx_writer_write(w, path);
    cn_idx_writer_free(w);
}

static void test_corrupt(void)
{
    fixture fx;
    char path[512], bad[512], *data;
    size_t len = 0;
    cn_graph *g = NULL;
    int rc;

    memset(&fx, 0, sizeof fx);
    build_python(&fx);
    path_in_tmp(path, sizeof path, "good.graph");
    is_int(cn_graph_write(fx.recs, fx.n, path, NULL), 0, "corrupt: write a good graph");
    data = slurp(path, &len);
    ok(data != NULL && len > 200, "corrupt: read it back");
    if (data == NULL) return;

    path_in_tmp(bad, sizeof bad, "flipped.graph");
    data[len / 2] ^= 0x40;
    spit(bad, data, len);
    expect_corrupt(bad, "flipped byte");
    data[len / 2] ^= 0x40;

    path_in_tmp(bad, sizeof bad, "truncated.graph");
    spit(bad, data, len - 9);
    expect_corrupt(bad, "truncated");
    spit(bad, data, 20);
    expect_corrupt(bad, "truncated to 20 bytes");

    /* a valid container with inconsistent contents */
    {
        /* 2 nodes, one contains edge 0 -> 1 */
        uint32_t out_offs[3] = {0, 1, 1}, in_offs[3] = {0, 0, 1}, in_edges[1] = {0};
        uint32_t edge[6] = {0, 1, 0, 0, 0, CN_EDGE_CONTAINS | (1u << 8)};
        path_in_tmp(bad, sizeof bad, "crafted.graph");
        write_raw(bad, 2, out_offs, edge, 1, in_offs, in_edges, 1, "", 1);
        rc = cn_graph_open(bad, &g);
        is_int(rc, 0, "corrupt: the crafted graph is valid as is");
        if (g) {
            is_int(cn_graph_edges(g, 0, CN_EDGE_ALL, CN_GRAPH_OUT, NULL, 0), 1, "corrupt: crafted edge");
            cn_graph_close(g);
            g = NULL;
        }
        edge[1] = 7; /* target out of range */
        write_raw(bad, 2, out_offs, edge, 1, in_offs, in_edges, 1, "", 1);
        expect_corrupt(bad, "target node out of range");
        edge[1] = 1;
        edge[4] = 5; /* name past the string table */
        write_raw(bad, 2, out_offs, edge, 1, in_offs, in_edges, 1, "", 1);
        expect_corrupt(bad, "name out of bounds");
        edge[4] = 0;
        out_offs[1] = 2; /* offsets not monotonic */
        write_raw(bad, 2, out_offs, edge, 1, in_offs, in_edges, 1, "", 1);
        expect_corrupt(bad, "offsets not monotonic");
        out_offs[1] = 1;
        edge[0] = 1; /* source disagrees with its row */
        write_raw(bad, 2, out_offs, edge, 1, in_offs, in_edges, 1, "", 1);
        expect_corrupt(bad, "edge in the wrong row");
        edge[0] = 0;
        in_offs[1] = 1; /* in-edge filed under the wrong node */
        in_offs[2] = 1;
        write_raw(bad, 2, out_offs, edge, 1, in_offs, in_edges, 1, "", 1);
        expect_corrupt(bad, "in-edge under the wrong node");
        in_offs[1] = 0;
        write_raw(bad, 2, out_offs, edge, 1, in_offs, in_edges, 1, "x", 1); /* no NUL */
        expect_corrupt(bad, "string table not terminated");
    }
    path_in_tmp(bad, sizeof bad, "missing.graph");
    rc = cn_graph_open(bad, &g);
    is_int(rc, CN_ENOTFOUND, "corrupt: a missing file is CN_ENOTFOUND");
    free(data);
    fixture_free(&fx);
}

/* ---- misc ------------------------------------------------------------------------ */

static void test_empty(void)
{
    char path[512];
    cn_graph *g = NULL;
    cn_graph_stats st;
    cn_graph_edge e;
    path_in_tmp(path, sizeof path, "empty.graph");
    is_int(cn_graph_write(NULL, 0, path, &st), 0, "empty: write");
    is_int(st.edges, 0, "empty: no edges");
    is_int(cn_graph_open(path, &g), 0, "empty: open");
    if (g == NULL) return;
    is_int(cn_graph_node_count(g), 0, "empty: no nodes");
    is_int(cn_graph_unresolved(g, "x", CN_EDGE_ALL, &e, 1), 0, "empty: no unresolved");
    is_int(cn_graph_at(g, 0, 1, 1, &e), CN_ENOTFOUND, "empty: nothing at 1:1");
    cn_graph_close(g);
}

static void test_malformed(void)
{
    fixture fx;
    char path[512];
    cn_file_rec *r;
    memset(&fx, 0, sizeof fx);
    r = add_file(&fx, "bad.py", "python");
    add_node(r, CN_NODE_FUNCTION, "f", -1, 1, 2, 0);
    add_ref(r, CN_REF_CALL, 0, NULL, NULL, 2, 4); /* no name at all: kept, unresolved */
    path_in_tmp(path, sizeof path, "bad.graph");
    is_int(cn_graph_write(fx.recs, fx.n, path, NULL), 0, "malformed: a nameless reference is harmless");
    r->refs[0].from = 5;
    is_int(cn_graph_write(fx.recs, fx.n, path, NULL), CN_EINVAL, "malformed: reference from a missing node");
    has_str(cn_error_last()->message, "bad.py", "malformed: the error names the file");
    r->refs[0].from = 0;
    r->nodes[0].parent = 0;
    is_int(cn_graph_write(fx.recs, fx.n, path, NULL), CN_EINVAL, "malformed: a node that is its own parent");
    fixture_free(&fx);
}

int main(void)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/cn_test_graph.XXXXXX");
    if (mkdtemp(tmpdir) == NULL) {
        printf("Bail out! mkdtemp: %s\n", strerror(errno));
        return 1;
    }
    test_python();
    test_c();
    test_extras();
    test_corrupt();
    test_empty();
    test_malformed();
    {
        char cmd[300];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
        if (system(cmd) != 0) diag("could not remove %s", tmpdir);
    }
    return tap_done();
}
