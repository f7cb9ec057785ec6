/* bm25_search: top-k BM25 over the compiled index, through the host's index
 * services.  Results are ranked nodes; lines are 0-based here and become
 * 1-based at the host boundary (outputs.line_fields). */
#include <stdio.h>
#include <string.h>

#include <codenib/index.h>
#include <codenib/lang.h>
#include <codenib/skill.h>

#define MAX_TOP_K 500

typedef struct bm25_state {
    const cn_host *host;
    const cn_skill_context *ctx;
} bm25_state;

static const char *const kind_names[] = {
    "file", "class", "function", "method", "block", "struct", "union", "enum",
    "typedef", "macro", "prototype", "variable", "module",
};
#define N_KINDS (sizeof kind_names / sizeof kind_names[0])

static const char *kind_name(int k)
{
    return k >= 0 && (size_t)k < N_KINDS ? kind_names[k] : "unknown";
}

/* "  12\tline" per line, numbered from first_line + 1. */
static char *with_gutter(const cn_host *h, const char *text, size_t len, uint32_t first_line)
{
    size_t lines = 1, cap, o = 0;
    char *out;
    uint32_t n = first_line + 1;
    for (size_t i = 0; i < len; i++) lines += text[i] == '\n';
    cap = len + lines * 16 + 1;
    out = h->alloc(cap);
    if (out == NULL) return NULL;
    for (size_t i = 0; i < len;) {
        size_t j = i;
        while (j < len && text[j] != '\n') j++;
        o += (size_t)snprintf(out + o, cap - o, "%6u\t", n++);
        memcpy(out + o, text + i, j - i);
        o += j - i;
        if (j < len) out[o++] = '\n';
        i = j + 1;
    }
    out[o] = '\0';
    return out;
}

static int b_run(cn_executor *self, const char *args_json, char **result_json, cn_error *err)
{
    bm25_state *st = self->data;
    const cn_host *h = st->host;
    const cn_json_services *J = h->json;
    const cn_index_services *I;
    const struct cn_index *idx;
    cn_json *args, *out = NULL, *kinds;
    cn_search_filter filter;
    cn_search_hit *hits = NULL;
    size_t n_hits = 0;
    int64_t top_k;
    int rc, names_only, content, gutter;
    const char *query;

    if ((rc = h->context_require(h, st->ctx, CN_NEEDS_REPO | CN_NEEDS_INDEX, err)) < 0) return rc;
    if (!CN_HOST_HAS(h, index) || h->index == NULL)
        return h->error_set(err, CN_EUNSUPPORTED, "this codenib offers no index services");
    I = h->index;
    idx = st->ctx->index;
    if ((args = J->parse(args_json, err)) == NULL) return err->code;
    query = J->get_string(J->object_get(args, "query"));
    top_k = J->get_int(J->object_get(args, "top_k"));
    names_only = J->get_bool(J->object_get(args, "names_only"));
    content = J->get_bool(J->object_get(args, "return_content")) && !names_only;
    gutter = J->get_bool(J->object_get(args, "wrap_with_line_numbers"));
    if (query == NULL) {
        rc = h->error_set(err, CN_EINVAL, "argument 'query' must be a string");
        goto out;
    }
    if (top_k < 1 || top_k > MAX_TOP_K) {
        rc = h->error_set(err, CN_EINVAL, "argument 'top_k' must be between 1 and %d, got %lld",
                          MAX_TOP_K, (long long)top_k);
        goto out;
    }
    memset(&filter, 0, sizeof filter);
    filter.struct_size = (uint32_t)sizeof filter;
    filter.exclude_tests = J->get_bool(J->object_get(args, "filter_test"));
    filter.path_prefix = J->get_string(J->object_get(args, "path_prefix"));
    kinds = J->object_get(args, "kinds");
    for (size_t i = 0; i < J->array_length(kinds); i++) {
        const char *k = J->get_string(J->array_get(kinds, i));
        size_t m = 0;
        while (k && m < N_KINDS && strcmp(kind_names[m], k) != 0) m++;
        if (k == NULL || m == N_KINDS) {
            rc = h->error_set(err, CN_EINVAL, "argument 'kinds': '%s' is not a node kind (file, class, "
                                              "function, method, block, struct, union, enum, typedef, "
                                              "macro, prototype, variable, module)", k ? k : "?");
            goto out;
        }
        filter.kinds |= 1u << m;
    }
    hits = h->alloc((size_t)top_k * sizeof *hits);
    if (hits == NULL) {
        rc = h->error_set(err, CN_ENOMEM, "out of memory");
        goto out;
    }
    if ((rc = I->bm25_search(idx, query, (size_t)top_k, &filter, hits, &n_hits, err)) < 0) goto out;

    out = J->new_array();
    for (size_t i = 0; i < n_hits; i++) {
        cn_node_info nd;
        cn_json *o = J->new_object();
        if ((rc = I->node(idx, hits[i].node, &nd, err)) < 0) {
            J->put(o);
            goto out;
        }
        J->object_set(o, "node_name", J->new_string(nd.qualname));
        J->object_set(o, "type", J->new_string(kind_name(nd.kind)));
        J->object_set(o, "file", J->new_string(nd.path));
        J->object_set(o, "start_line", J->new_int(nd.start_line));
        if (!names_only) {
            J->object_set(o, "node_id", J->new_int(nd.id));
            J->object_set(o, "end_line", J->new_int(nd.end_line));
            J->object_set(o, "score", J->new_double(hits[i].score));
        }
        if (content) {
            char *text = NULL;
            size_t len = 0;
            if (I->node_text(h, idx, nd.id, &text, &len, err) < 0) {
                /* a file deleted since the compile: keep the hit, say why */
                J->object_set(o, "content", J->new_null());
                J->object_set(o, "content_error", J->new_string(err->message));
                err->code = 0;
                err->message[0] = '\0';
            } else if (gutter) {
                char *g = with_gutter(h, text, len, nd.start_line);
                J->object_set(o, "content", J->new_string(g ? g : text));
                h->free(g);
            } else {
                J->object_set(o, "content", J->new_string_len(text, len));
            }
            h->free(text);
        }
        J->array_append(out, o);
    }
    *result_json = J->serialize(out, 0);
    rc = *result_json ? 0 : h->error_set(err, CN_ENOMEM, "out of memory");
out:
    J->put(out);
    J->put(args);
    h->free(hits);
    return rc;
}

static void b_destroy(cn_executor *self)
{
    bm25_state *st = self->data;
    const cn_host *h = st->host;
    h->free(st);
    h->free(self);
}

static int b_create(const cn_host *host, const cn_skill_context *ctx, cn_executor **out, cn_error *err)
{
    cn_executor *ex = host->alloc(sizeof *ex);
    bm25_state *st = host->alloc(sizeof *st);
    if (ex == NULL || st == NULL) {
        host->free(ex);
        host->free(st);
        return host->error_set(err, CN_ENOMEM, "out of memory");
    }
    memset(ex, 0, sizeof *ex);
    st->host = host;
    st->ctx = ctx;
    ex->struct_size = (uint32_t)sizeof *ex;
    ex->data = st;
    ex->run = b_run;
    ex->destroy = b_destroy;
    *out = ex;
    return 0;
}

CN_SKILL_DEFINE(bm25_search, "bm25_search", "0.1.0", b_create);
