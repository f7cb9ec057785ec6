/* SPDX-License-Identifier: Apache-2.0 */
/* trace: bounded call paths between two symbols, or from a symbol up
 * through its callers to the entry points, over the compiled symbol graph
 * (calls, optionally references; never containment).  Symbol resolution
 * and the path search are in cn_skill_graph.c. */
#include <string.h>

#include <codenib/index.h>
#include <codenib/skill.h>

#include "cn_skill_graph.h"
#include "cn_skill_util.h"

#define MAX_DEPTH 12
#define MAX_PATHS 50
#define SEARCH_BUDGET 100000   /* path prefixes explored before giving up */

typedef struct tr_args {
    const char *source, *target;
    int direction;
    uint32_t mask;
    unsigned max_depth;
    size_t max_paths;
} tr_args;

static int tr_range(const cn_host *h, const cn_json *args, const char *name, int64_t dflt, int64_t max,
                    int64_t *out, cn_error *err)
{
    const cn_json *v = h->json->object_get(args, name);
    *out = v == NULL ? dflt : h->json->get_int(v);
    if ((v != NULL && h->json->type(v) != CN_JSON_INT) || *out < 1 || *out > max)
        return h->error_set(err, CN_EINVAL, "argument '%s' must be between 1 and %lld, got %lld", name,
                            (long long)max, (long long)*out);
    return 0;
}

static int tr_parse(const cn_host *h, const cn_json *args, tr_args *a, cn_error *err)
{
    const char *dir = cn_su_arg_str(h, args, "direction");
    int64_t depth, paths;
    int rc;
    memset(a, 0, sizeof *a);
    if ((a->source = cn_su_arg_str(h, args, "source")) == NULL)
        return h->error_set(err, CN_EINVAL, "argument 'source' must be a string");
    a->target = cn_su_arg_str(h, args, "target");
    if (a->target != NULL && a->target[0] == '\0') a->target = NULL;
    if ((rc = tr_range(h, args, "max_depth", 6, MAX_DEPTH, &depth, err)) < 0 ||
        (rc = tr_range(h, args, "max_paths", 5, MAX_PATHS, &paths, err)) < 0)
        return rc;
    a->max_depth = (unsigned)depth;
    a->max_paths = (size_t)paths;
    a->mask = CN_SG_CALLS | (cn_su_arg_bool(h, args, "include_references", 0) ? CN_SG_REFS : 0);
    if (dir == NULL || dir[0] == '\0') {
        a->direction = a->target ? CN_EDGES_OUT : CN_EDGES_IN;
    } else if (strcmp(dir, "down") == 0) {
        if (a->target == NULL)
            return h->error_set(err, CN_EINVAL, "direction 'down' needs a target (the symbol the source "
                                                "should reach); leave direction out, or pass \"up\", to "
                                                "walk from the source up to its entry points");
        a->direction = CN_EDGES_OUT;
    } else if (strcmp(dir, "up") == 0) {
        a->direction = CN_EDGES_IN;
    } else {
        return h->error_set(err, CN_EINVAL, "argument 'direction' must be \"down\" or \"up\", got \"%s\"", dir);
    }
    return 0;
}

/* Resolves one endpoint.  When it is not exactly one node, *early gets
 * the answer to return instead (ambiguous / not found), except an
 * unresolved target name going down, which the search can reach. */
static int tr_endpoint(const cn_host *h, const cn_skill_context *ctx, const char *sym, const char *role,
                       uint32_t mask, int allow_unresolved, cn_sg_match *m, cn_json **early, cn_error *err)
{
    int rc = cn_sg_resolve(h, ctx->index, sym, NULL, mask, m, err);
    if (rc < 0) return rc;
    if (m->status == CN_SG_FOUND || (m->status == CN_SG_UNRESOLVED && allow_unresolved)) return 0;
    if ((*early = cn_sg_match_json(h, ctx->index, m, role, err)) == NULL) return err->code;
    return 0;
}

static cn_json *tr_hop_json(const cn_host *h, const cn_skill_context *ctx, const cn_sg_hop *hop,
                            const char *target_name, cn_error *err)
{
    const cn_json_services *J = h->json;
    cn_json *obj;
    if (hop->node == CN_SG_NONE) {
        if ((obj = J->new_object()) == NULL) return NULL;
        J->object_set(obj, "resolved", J->new_bool(0));
        J->object_set(obj, "name", J->new_string(target_name));
        return obj;
    }
    if ((obj = cn_sg_node_json(h, ctx->index, hop->node, 0, 0, err)) == NULL) return NULL;
    if (hop->line != UINT32_MAX) {
        J->object_set(obj, "edge", J->new_string(cn_sg_edge_name(hop->type)));
        J->object_set(obj, "line", J->new_int(hop->line));
    }
    return obj;
}

static cn_json *tr_paths_json(const cn_host *h, const cn_skill_context *ctx, const cn_sg_paths *p,
                              const char *target_name, cn_error *err)
{
    const cn_json_services *J = h->json;
    cn_json *list = J->new_array();
    for (size_t i = 0; list && i < p->n; i++) {
        cn_json *path = J->new_object(), *nodes = J->new_array();
        for (size_t k = 0; path && nodes && k < p->v[i].n; k++) {
            cn_json *n = tr_hop_json(h, ctx, &p->v[i].hops[k], target_name, err);
            if (n == NULL) {
                J->put(nodes);
                nodes = NULL;
                break;
            }
            J->array_append(nodes, n);
        }
        if (path == NULL || nodes == NULL) {
            J->put(path);
            J->put(nodes);
            J->put(list);
            return NULL;
        }
        J->object_set(path, "length", J->new_int((int64_t)p->v[i].n - 1));
        J->object_set(path, "nodes", nodes);
        J->array_append(list, path);
    }
    return list;
}

static int tr_emit(const cn_host *h, const cn_skill_context *ctx, const tr_args *a, const cn_sg_match *src,
                   const cn_sg_match *dst, const cn_sg_paths *p, char **result_json, cn_error *err)
{
    const cn_json_services *J = h->json;
    const char *target_name = dst && dst->status == CN_SG_UNRESOLVED ? dst->name : NULL;
    cn_json *out = J->new_object(), *s, *t = NULL, *paths;

    if (out == NULL) return h->error_set(err, CN_ENOMEM, "out of memory");
    if ((s = cn_sg_node_json(h, ctx->index, src->ids[0], 0, 0, err)) == NULL) goto fail;
    if (target_name) {
        t = J->new_object();
        J->object_set(t, "name", J->new_string(target_name));
        J->object_set(t, "resolved", J->new_bool(0));
    } else if (dst && (t = cn_sg_node_json(h, ctx->index, dst->ids[0], 0, 0, err)) == NULL) {
        J->put(s);
        goto fail;
    }
    J->object_set(out, "status", J->new_string("ok"));
    J->object_set(out, "direction", J->new_string(a->direction == CN_EDGES_OUT ? "down" : "up"));
    J->object_set(out, "source", s);
    J->object_set(out, "target", t);
    if ((paths = tr_paths_json(h, ctx, p, target_name, err)) == NULL) goto fail;
    J->object_set(out, "paths", paths);
    J->object_set(out, "truncated", J->new_bool(p->truncated));
    if (p->shortest) J->object_set(out, "shortest_length", J->new_int(p->shortest));
    return cn_su_emit(h, out, result_json, err);
fail:
    J->put(out);
    return err->code < 0 ? err->code : h->error_set(err, CN_ENOMEM, "out of memory");
}

static int tr_run(const cn_host *h, const cn_skill_context *ctx, const cn_json *args, char **result_json,
                  cn_error *err)
{
    const cn_index_services *I;
    cn_sg_match src, dst;
    cn_sg_path_query q;
    cn_sg_paths paths;
    cn_json *early = NULL;
    tr_args a;
    int rc;

    memset(&src, 0, sizeof src);
    memset(&dst, 0, sizeof dst);
    if ((rc = tr_parse(h, args, &a, err)) < 0) return rc;
    if ((rc = cn_sg_require_graph(h, ctx, &I, err)) < 0) return rc;
    (void)I;
    if ((rc = tr_endpoint(h, ctx, a.source, "source", a.mask, 0, &src, &early, err)) < 0) goto done;
    if (early == NULL && a.target &&
        (rc = tr_endpoint(h, ctx, a.target, "target", a.mask, a.direction == CN_EDGES_OUT, &dst, &early, err)) < 0)
        goto done;
    if (early != NULL) {
        rc = cn_su_emit(h, early, result_json, err);
        goto done;
    }
    memset(&q, 0, sizeof q);
    q.source = src.ids[0];
    q.direction = a.direction;
    q.mask = a.mask;
    q.has_target = a.target != NULL;
    q.target = a.target && dst.status == CN_SG_FOUND ? dst.ids[0] : CN_SG_NONE;
    q.target_name = a.target && dst.status == CN_SG_UNRESOLVED ? dst.name : NULL;
    q.max_depth = a.max_depth;
    q.max_paths = a.max_paths;
    q.budget = SEARCH_BUDGET;
    if ((rc = cn_sg_find_paths(h, ctx->index, &q, &paths, err)) < 0) goto done;
    rc = tr_emit(h, ctx, &a, &src, a.target ? &dst : NULL, &paths, result_json, err);
    cn_sg_paths_free(h, &paths);
done:
    cn_sg_match_free(h, &src);
    cn_sg_match_free(h, &dst);
    return rc;
}

static int tr_create(const cn_host *host, const cn_skill_context *ctx, cn_executor **out, cn_error *err)
{
    return cn_su_simple_executor(host, ctx, tr_run, out, err);
}

CN_SKILL_DEFINE(trace, "trace", "0.1.0", tr_create);
