/* SPDX-License-Identifier: Apache-2.0 */
/* The lsp_route startup context: before the first turn, symbol-like names
 * in the task are routed through the graph and the anchors and their
 * neighbours are shown to the model as unverified hints.  The fingerprint
 * lets a trace tell whether two runs started from the same hints. */
#include <stdlib.h>

#include "cn_agent_support.h"
#include "cn_seeds.h"
#include "../plugin/cn_registry.h"

void cn_route_context_free(cn_route_context *c)
{
    cn_strv_free(&c->seeds);
    json_object_put(c->nodes);
    json_object_put(c->arguments);
    free(c->text);
    free(c->fingerprint);
    memset(c, 0, sizeof *c);
}

static const char *field_str(json_object *node, const char *key)
{
    json_object *v = NULL;
    if (!json_object_object_get_ex(node, key, &v) || v == NULL) return NULL;
    return json_object_get_string(v);
}

static long field_int(json_object *node, const char *key)
{
    json_object *v = NULL;
    if (!json_object_object_get_ex(node, key, &v) || !json_object_is_type(v, json_type_int)) return -1;
    return (long)json_object_get_int64(v);
}

/* "path:start-end", "path:line" or "path". */
static void put_location(cn_buf *b, json_object *node)
{
    const char *file = field_str(node, "file");
    long s = field_int(node, "start_line"), e = field_int(node, "end_line");
    if (file == NULL) file = field_str(node, "path");
    cn_buf_puts(b, file ? file : "(unknown file)");
    if (s >= 0 && e >= 0 && e != s) cn_buf_printf(b, ":%ld-%ld", s, e);
    else if (s >= 0) cn_buf_printf(b, ":%ld", s);
}

/* How a neighbour was reached: " - calls edge (in) from Pool.get"; an
 * explicit "relation" string wins. */
static void put_relation(cn_buf *b, json_object *node)
{
    json_object *via = NULL;
    const char *content = field_str(node, "relation");
    if (content && *content) {
        cn_buf_printf(b, " - %s", content);
        return;
    }
    if (json_object_object_get_ex(node, "via", &via) && json_object_is_type(via, json_type_object)) {
        const char *edge = field_str(via, "edge"), *dir = field_str(via, "direction");
        const char *from = field_str(via, "from_name");
        if (edge && from) cn_buf_printf(b, " - %s edge (%s) from %s", edge, dir ? dir : "out", from);
    }
}

char *cn_route_context_render(const cn_strv *seeds, json_object *nodes, size_t max_nodes)
{
    cn_buf b = CN_BUF_INIT;
    size_t n = json_object_is_type(nodes, json_type_array) ? json_object_array_length(nodes) : 0;

    if (max_nodes > 0 && n > max_nodes) n = max_nodes;
    if (n == 0) return cn_strdup("");
    cn_buf_puts(&b, "## Route hints from the symbol graph (unverified)\n");
    cn_buf_puts(&b, "Graph anchors for names in the task (or for the task text when it names no symbol). "
                    "Use them to pick the first files to open; they are not a list of answers. "
                    "Read a file before citing anything from it.\n");
    if (seeds && seeds->len > 0) {
        cn_buf_puts(&b, "Seeds: ");
        for (size_t i = 0; i < seeds->len; i++) cn_buf_printf(&b, "%s%s", i ? ", " : "", seeds->items[i]);
        cn_buf_putc(&b, '\n');
    } else {
        cn_buf_puts(&b, "Seeds: none (query text)\n");
    }
    cn_buf_putc(&b, '\n');
    for (size_t i = 0; i < n; i++) {
        json_object *node = json_object_array_get_idx(nodes, i);
        const char *name = field_str(node, "node_name"), *type = field_str(node, "type");
        if (name == NULL) name = field_str(node, "node_id");
        cn_buf_printf(&b, "%zu. ", i + 1);
        put_location(&b, node);
        cn_buf_printf(&b, " %s [%s]", name ? name : "(unnamed)", type ? type : "symbol");
        put_relation(&b, node);
        if (i + 1 < n) cn_buf_putc(&b, '\n');
    }
    return cn_buf_steal(&b);
}

/* FNV-1a, 64 bits: stable across runs and platforms, which is all a
 * fingerprint of a handful of nodes needs (it is not a security hash). */
static uint64_t fnv(uint64_t h, const char *s)
{
    for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
        h ^= *p;
        h *= 0x100000001b3ULL;
    }
    h ^= 0x1f;  /* field separator, so "ab"+"c" differs from "a"+"bc" */
    h *= 0x100000001b3ULL;
    return h;
}

char *cn_route_context_fingerprint(json_object *nodes)
{
    uint64_t h = 0xcbf29ce484222325ULL;
    size_t n = json_object_is_type(nodes, json_type_array) ? json_object_array_length(nodes) : 0;
    char buf[17], num[64];

    for (size_t i = 0; i < n; i++) {
        json_object *node = json_object_array_get_idx(nodes, i);
        h = fnv(h, field_str(node, "file"));
        snprintf(num, sizeof num, "%ld-%ld", field_int(node, "start_line"), field_int(node, "end_line"));
        h = fnv(h, num);
        h = fnv(h, field_str(node, "node_name"));
        h = fnv(h, field_str(node, "type"));
        h = fnv(h, "\x1e");  /* node separator */
    }
    snprintf(buf, sizeof buf, "%016llx", (unsigned long long)h);
    return cn_strdup(buf);
}

static json_object *route_args(const cn_route_context *c, const char *query, const cn_agent_options *o)
{
    json_object *a = json_object_new_object(), *syms = json_object_new_array();
    for (size_t i = 0; i < c->seeds.len; i++) json_object_array_add(syms, json_object_new_string(c->seeds.items[i]));
    json_object_object_add(a, "symbols", syms);
    json_object_object_add(a, "query", query ? json_object_new_string(query) : NULL);
    json_object_object_add(a, "top_k", json_object_new_int(o->lsp_route_top_k > 0 ? o->lsp_route_top_k : 12));
    json_object_object_add(a, "include_neighbors", json_object_new_boolean(o->lsp_route_include_neighbors));
    return a;
}

static int pick_seeds(const char *query, const cn_strv *explicit_seeds, const cn_agent_options *o, cn_strv *out)
{
    cn_strv raw = CN_STRV_INIT;
    int rc = cn_seeds_extract(query, explicit_seeds, (size_t)(o->lsp_route_seed_limit > 0 ? o->lsp_route_seed_limit : 8),
                              &raw);
    if (rc >= 0) {
        cn_strv_free(out);  /* the filter initialises *out */
        rc = cn_seeds_filter(&raw, o->lsp_route_seed_policy, out);
    }
    cn_strv_free(&raw);
    return rc < 0 ? rc : 0;
}

int cn_route_context_build(cn_registry *reg, const char *query, const cn_strv *explicit_seeds,
                           const cn_agent_options *o, cn_route_context *out)
{
    json_object *result = NULL, *nodes = NULL;
    int rc;

    memset(out, 0, sizeof *out);
    if ((rc = pick_seeds(query, explicit_seeds, o, &out->seeds)) < 0) return rc;
    if (out->seeds.len == 0 && !o->lsp_route_query_fallback) {
        out->skipped = true;
        out->text = cn_strdup("");
        return 0;
    }
    if (cn_registry_find(reg, "lsp_route") == NULL)
        return cn_error_set(CN_ENOTFOUND, "route context: the lsp_route skill is not installed; "
                                          "disable enable_lsp_route_context or install it");
    out->arguments = route_args(out, query, o);
    if ((rc = cn_registry_invoke(reg, "lsp_route", out->arguments, NULL, &result)) < 0)
        return cn_error_prefix("route context: lsp_route");
    if (json_object_is_type(result, json_type_array)) nodes = result;
    else json_object_object_get_ex(result, "nodes", &nodes);
    out->nodes = json_object_is_type(nodes, json_type_array) ? json_object_get(nodes) : json_object_new_array();
    json_object_put(result);
    out->text = cn_route_context_render(&out->seeds, out->nodes, 0);
    out->fingerprint = cn_route_context_fingerprint(out->nodes);
    if (out->text == NULL || out->fingerprint == NULL) return cn_error_set(CN_ENOMEM, "out of memory");
    return 0;
}
