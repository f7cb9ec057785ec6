/* SPDX-License-Identifier: Apache-2.0 */
/* Helpers compiled into every skill (see cn_skill_util.h). */
#include "cn_skill_util.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include <codenib/lang.h>
#include <codenib/lsp.h>
#include <codenib/model.h>

/* How much of a model's answer an error message quotes. */
#define QUOTE_CHARS 160

static const char *const kind_names[] = {
    "file", "class", "function", "method", "block", "struct", "union", "enum",
    "typedef", "macro", "prototype", "variable", "module",
};
#define N_KINDS (sizeof kind_names / sizeof kind_names[0])

const char *cn_su_kind_name(int kind)
{
    return kind >= 0 && (size_t)kind < N_KINDS ? kind_names[kind] : "unknown";
}

int cn_su_kind_parse(const char *name)
{
    for (size_t i = 0; name && i < N_KINDS; i++)
        if (strcmp(kind_names[i], name) == 0) return (int)i;
    return -1;
}

const char *cn_su_kind_list(void)
{
    return "file, class, function, method, block, struct, union, enum, typedef, macro, prototype, "
           "variable, module";
}

int cn_su_kinds_filter(const cn_host *h, const cn_json *kinds, const char *argname, uint32_t *mask,
                       cn_error *err)
{
    const cn_json_services *J = h->json;
    *mask = 0;
    if (kinds == NULL) return 0;
    if (J->type(kinds) != CN_JSON_ARRAY)
        return h->error_set(err, CN_EINVAL, "argument '%s' must be a list of node kinds (%s)", argname,
                            cn_su_kind_list());
    for (size_t i = 0; i < J->array_length(kinds); i++) {
        const char *k = J->get_string(J->array_get(kinds, i));
        int m = cn_su_kind_parse(k);
        if (m < 0)
            return h->error_set(err, CN_EINVAL, "argument '%s': '%s' is not a node kind (%s)", argname,
                                k ? k : "?", cn_su_kind_list());
        *mask |= 1u << m;
    }
    return 0;
}

char *cn_su_gutter(const cn_host *h, const char *text, size_t len, uint32_t first_line)
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

cn_json *cn_su_node_json(const cn_host *h, const struct cn_index *idx, uint32_t node, double score,
                         const cn_su_node_opts *o, cn_error *err)
{
    const cn_json_services *J = h->json;
    const cn_index_services *I = h->index;
    cn_node_info nd;
    cn_json *obj;

    memset(&nd, 0, sizeof nd);
    nd.struct_size = (uint32_t)sizeof nd;
    if (I->node(idx, node, &nd, err) < 0) return NULL;
    obj = J->new_object();
    if (obj == NULL) {
        h->error_set(err, CN_ENOMEM, "out of memory");
        return NULL;
    }
    J->object_set(obj, "node_name", J->new_string(nd.qualname));
    J->object_set(obj, "type", J->new_string(cn_su_kind_name(nd.kind)));
    J->object_set(obj, "file", J->new_string(nd.path));
    J->object_set(obj, "start_line", J->new_int(nd.start_line));
    if (!o->names_only) {
        J->object_set(obj, "node_id", J->new_int(nd.id));
        J->object_set(obj, "end_line", J->new_int(nd.end_line));
        if (!o->no_score) J->object_set(obj, "score", J->new_double(score));
    }
    if (o->content && !o->names_only) {
        char *text = NULL;
        size_t len = 0;
        cn_error e2;
        memset(&e2, 0, sizeof e2);
        if (I->node_text(h, idx, nd.id, &text, &len, &e2) < 0) {
            /* a file deleted since the compile: keep the hit, say why */
            J->object_set(obj, "content", J->new_null());
            J->object_set(obj, "content_error", J->new_string(e2.message));
        } else if (o->gutter) {
            char *g = cn_su_gutter(h, text, len, nd.start_line);
            J->object_set(obj, "content", g ? J->new_string(g) : J->new_string_len(text, len));
            h->free(g);
        } else {
            J->object_set(obj, "content", J->new_string_len(text, len));
        }
        h->free(text);
    }
    return obj;
}

int cn_su_read_search_args(const cn_host *h, const cn_json *args, int64_t max_top_k, cn_su_search_args *out,
                           cn_error *err)
{
    int rc;
    memset(out, 0, sizeof *out);
    out->query = cn_su_arg_str(h, args, "query");
    if (out->query == NULL) return h->error_set(err, CN_EINVAL, "argument 'query' must be a string");
    if ((rc = cn_su_arg_top_k(h, args, "top_k", max_top_k, &out->top_k, err)) < 0) return rc;
    out->opts.names_only = cn_su_arg_bool(h, args, "names_only", 0);
    out->opts.content = cn_su_arg_bool(h, args, "return_content", 1);
    out->opts.gutter = cn_su_arg_bool(h, args, "wrap_with_line_numbers", 0);
    out->filter.struct_size = (uint32_t)sizeof out->filter;
    out->filter.exclude_tests = cn_su_arg_bool(h, args, "filter_test", 0);
    out->filter.path_prefix = cn_su_arg_str(h, args, "path_prefix");
    return cn_su_kinds_filter(h, h->json->object_get(args, "kinds"), "kinds", &out->filter.kinds, err);
}

int cn_su_hits_emit(const cn_host *h, const struct cn_index *idx, const cn_search_hit *hits, size_t n,
                    const cn_su_node_opts *o, char **result_json, cn_error *err)
{
    const cn_json_services *J = h->json;
    cn_json *out = J->new_array();
    if (out == NULL) return h->error_set(err, CN_ENOMEM, "out of memory");
    for (size_t i = 0; i < n; i++) {
        cn_json *node = cn_su_node_json(h, idx, hits[i].node, hits[i].score, o, err);
        if (node == NULL) {
            J->put(out);
            return err->code;
        }
        J->array_append(out, node);
    }
    return cn_su_emit(h, out, result_json, err);
}

void cn_su_add_contents(const cn_host *h, const struct cn_index *idx, cn_json *nodes, int gutter)
{
    const cn_json_services *J = h->json;
    for (size_t i = 0; i < J->array_length(nodes); i++) {
        cn_json *o = J->array_get(nodes, i);
        uint32_t id = (uint32_t)J->get_int(J->object_get(o, "node_id"));
        uint32_t first = (uint32_t)J->get_int(J->object_get(o, "start_line"));
        char *text = NULL, *g = NULL;
        size_t len = 0;
        cn_error e2;
        memset(&e2, 0, sizeof e2);
        if (h->index->node_text(h, idx, id, &text, &len, &e2) < 0) {
            J->object_set(o, "content", J->new_null());
            J->object_set(o, "content_error", J->new_string(e2.message));
            continue;
        }
        if (gutter) g = cn_su_gutter(h, text, len, first);
        J->object_set(o, "content", g ? J->new_string(g) : J->new_string_len(text, len));
        h->free(g);
        h->free(text);
    }
}

int cn_su_lsp_run(const cn_host *h, const cn_skill_context *ctx, const cn_json *args, const char *capability,
                  const char *const *keys, int64_t max_top_k, char **result_json, cn_error *err)
{
    const cn_json_services *J = h->json;
    const cn_index_services *I;
    cn_json *req, *res;
    char *text, *out = NULL;
    size_t top_k;
    int rc;

    if ((rc = cn_su_require_index(h, ctx, 0, &I, err)) < 0) return rc;
    if (!CN_HOST_HAS(h, lsp) || h->lsp == NULL)
        return h->error_set(err, CN_EUNSUPPORTED, "this codenib offers no LSP service");
    if ((rc = cn_su_arg_top_k(h, args, "top_k", max_top_k, &top_k, err)) < 0) return rc;
    if ((req = J->new_object()) == NULL) return h->error_set(err, CN_ENOMEM, "out of memory");
    for (size_t i = 0; keys[i] != NULL; i++) {
        cn_json *v = J->object_get(args, keys[i]);
        if (v != NULL) J->object_set(req, keys[i], J->get(v));
    }
    J->object_set(req, "top_k", J->new_int((int64_t)top_k));
    text = J->serialize(req, 0);
    J->put(req);
    if (text == NULL) return h->error_set(err, CN_ENOMEM, "out of memory");
    rc = h->lsp->call(h, ctx, capability, text, &out, err);
    h->free(text);
    if (rc < 0) return rc;
    res = J->parse(out, err);
    h->free(out);
    if (res == NULL) return err->code ? err->code : CN_EPARSE;
    if (cn_su_arg_bool(h, args, "return_content", 0))
        cn_su_add_contents(h, ctx->index, J->object_get(res, "nodes"),
                           cn_su_arg_bool(h, args, "wrap_with_line_numbers", 0));
    return cn_su_emit(h, res, result_json, err);
}

int cn_su_require_index(const cn_host *h, const cn_skill_context *ctx, unsigned needs,
                        const cn_index_services **svc, cn_error *err)
{
    int rc = h->context_require(h, ctx, CN_NEEDS_INDEX | needs, err);
    if (rc < 0) return rc;
    if (!CN_HOST_HAS(h, index) || h->index == NULL)
        return h->error_set(err, CN_EUNSUPPORTED, "this codenib offers no index services");
    *svc = h->index;
    return 0;
}

const char *cn_su_arg_str(const cn_host *h, const cn_json *args, const char *name)
{
    return h->json->get_string(h->json->object_get(args, name));
}

int64_t cn_su_arg_int(const cn_host *h, const cn_json *args, const char *name, int64_t dflt)
{
    const cn_json *v = h->json->object_get(args, name);
    cn_json_type t = h->json->type(v);
    return t == CN_JSON_INT || t == CN_JSON_DOUBLE ? h->json->get_int(v) : dflt;
}

int cn_su_arg_bool(const cn_host *h, const cn_json *args, const char *name, int dflt)
{
    const cn_json *v = h->json->object_get(args, name);
    return v == NULL ? dflt : h->json->get_bool(v);
}

double cn_su_arg_double(const cn_host *h, const cn_json *args, const char *name, double dflt)
{
    const cn_json *v = h->json->object_get(args, name);
    cn_json_type t = h->json->type(v);
    return t == CN_JSON_INT || t == CN_JSON_DOUBLE ? h->json->get_double(v) : dflt;
}

int cn_su_arg_top_k(const cn_host *h, const cn_json *args, const char *name, int64_t max, size_t *out,
                    cn_error *err)
{
    const cn_json *v = h->json->object_get(args, name);
    int64_t k = h->json->get_int(v);
    if (h->json->type(v) != CN_JSON_INT || k < 1 || k > max)
        return h->error_set(err, CN_EINVAL, "argument '%s' must be between 1 and %lld, got %lld", name,
                            (long long)max, (long long)k);
    *out = (size_t)k;
    return 0;
}

int cn_su_emit(const cn_host *h, cn_json *v, char **result_json, cn_error *err)
{
    *result_json = h->json->serialize(v, 0);
    h->json->put(v);
    return *result_json ? 0 : h->error_set(err, CN_ENOMEM, "out of memory");
}

typedef struct simple_state {
    const cn_host *host;
    const cn_skill_context *ctx;
    cn_su_run_fn fn;
} simple_state;

static int simple_run(cn_executor *self, const char *args_json, char **result_json, cn_error *err)
{
    simple_state *st = self->data;
    const cn_host *h = st->host;
    cn_json *args = h->json->parse(args_json, err);
    int rc;
    if (args == NULL) return err->code < 0 ? err->code : CN_EPARSE;
    rc = st->fn(h, st->ctx, args, result_json, err);
    h->json->put(args);
    return rc;
}

static void simple_destroy(cn_executor *self)
{
    simple_state *st = self->data;
    const cn_host *h = st->host;
    h->free(st);
    h->free(self);
}

int cn_su_simple_executor(const cn_host *host, const cn_skill_context *ctx, cn_su_run_fn fn,
                          cn_executor **out, cn_error *err)
{
    cn_executor *ex = host->alloc(sizeof *ex);
    simple_state *st = host->alloc(sizeof *st);
    if (ex == NULL || st == NULL) {
        host->free(ex);
        host->free(st);
        return host->error_set(err, CN_ENOMEM, "out of memory");
    }
    memset(ex, 0, sizeof *ex);
    st->host = host;
    st->ctx = ctx;
    st->fn = fn;
    ex->struct_size = (uint32_t)sizeof *ex;
    ex->data = st;
    ex->run = simple_run;
    ex->destroy = simple_destroy;
    *out = ex;
    return 0;
}

int cn_su_is_blank(const char *s, size_t len)
{
    for (size_t i = 0; i < len; i++)
        if (!isspace((unsigned char)s[i])) return 0;
    return 1;
}

/* ------------------------------------------------------- chat models --- */

int cn_su_require_model(const cn_host *h, cn_error *err)
{
    if (!CN_HOST_HAS(h, model) || h->model == NULL)
        return h->error_set(err, CN_EUNSUPPORTED, "this codenib was built without a model client");
    return 0;
}

cn_json *cn_su_schema_object(const cn_json_services *J, cn_json *properties, const char *const *required)
{
    cn_json *schema = J->new_object(), *names = J->new_array();
    for (size_t i = 0; required[i] != NULL; i++) J->array_append(names, J->new_string(required[i]));
    J->object_set(schema, "type", J->new_string("object"));
    J->object_set(schema, "properties", properties);
    J->object_set(schema, "required", names);
    J->object_set(schema, "additionalProperties", J->new_bool(0));
    return schema;
}

cn_json *cn_su_json_schema_format(const cn_json_services *J, const char *name, cn_json *schema)
{
    cn_json *rf = J->new_object(), *js = J->new_object();
    J->object_set(js, "name", J->new_string(name));
    J->object_set(js, "strict", J->new_bool(1));
    J->object_set(js, "schema", schema);
    J->object_set(rf, "type", J->new_string("json_schema"));
    J->object_set(rf, "json_schema", js);
    return rf;
}

static cn_json *chat_message(const cn_json_services *J, const char *role, const char *content)
{
    cn_json *m = J->new_object();
    J->object_set(m, "role", J->new_string(role));
    J->object_set(m, "content", J->new_string(content));
    return m;
}

char *cn_su_chat_request(const cn_host *h, const char *system, const char *user, cn_json *response_format)
{
    const cn_json_services *J = h->json;
    cn_json *req = J->new_object(), *msgs = J->new_array();
    char *text;
    J->array_append(msgs, chat_message(J, "system", system));
    J->array_append(msgs, chat_message(J, "user", user));
    J->object_set(req, "messages", msgs);
    /* the same candidates and question should get the same answer */
    J->object_set(req, "temperature", J->new_int(0));
    if (response_format != NULL) J->object_set(req, "response_format", response_format);
    text = J->serialize(req, 0);
    J->put(req);
    return text;
}

int cn_su_chat_ask(const cn_host *h, const cn_skill_context *ctx, const char *request, const char *task,
                   const char *where, cn_su_answer *a, cn_error *err)
{
    const cn_json_services *J = h->json;
    const char *refusal;
    char *resp = NULL;
    int rc;

    memset(a, 0, sizeof *a);
    if ((rc = h->model->chat(h, ctx->chat, request, &resp, err)) < 0) return rc;
    a->msg = J->parse(resp, err);
    h->free(resp);
    if (a->msg == NULL) return err->code < 0 ? err->code : CN_EPARSE;
    a->content = J->get_string(J->object_get(a->msg, "content"));
    a->finish = J->get_string(J->object_get(a->msg, "finish_reason"));
    if (a->content != NULL) return 0;
    refusal = J->get_string(J->object_get(a->msg, "refusal"));
    rc = refusal ? h->error_set(err, CN_EPARSE, "the chat model refused to %s%s: %s", task, where, refusal)
                 : h->error_set(err, CN_EPARSE, "the chat model's answer%s has no text content", where);
    J->put(a->msg);
    a->msg = NULL;
    return rc;
}

int cn_su_answer_object(const cn_host *h, const char *content, cn_json **out, cn_error *err)
{
    const char *open = strchr(content, '{'), *close = strrchr(content, '}');
    size_t len;
    char *obj;

    *out = NULL;
    if (open == NULL || close == NULL || close < open) return 0;
    len = (size_t)(close - open) + 1;
    if ((obj = h->alloc(len + 1)) == NULL) return h->error_set(err, CN_ENOMEM, "out of memory");
    memcpy(obj, open, len);
    obj[len] = '\0';
    *out = h->json->parse(obj, NULL);
    h->free(obj);
    return 0;
}

/* The start of the answer, on one line, for error messages (cut on a
 * character boundary). */
static void quote(const char *s, char *out, size_t cap)
{
    size_t o = 0;
    for (; s != NULL && *s && o + 4 < cap && o < QUOTE_CHARS; s++)
        out[o++] = (unsigned char)*s < 0x20 ? ' ' : *s;
    if (s != NULL && *s) {
        for (; o > 0 && ((unsigned char)*s & 0xC0u) == 0x80u; s--) o--;
        out[o++] = '.', out[o++] = '.', out[o++] = '.';
    }
    out[o] = '\0';
}

int cn_su_answer_error(const cn_host *h, const cn_su_answer *a, const char *where, const char *why,
                       const char *hint, cn_error *err)
{
    char q[QUOTE_CHARS + 8];
    int cut = a->finish != NULL && strcmp(a->finish, "length") == 0;
    quote(a->content, q, sizeof q);
    return h->error_set(err, CN_EPARSE, "the chat model's answer%s %s%s: \"%s\"%s", where, why,
                        cut ? " (it was cut at the token limit)" : "", q, hint);
}
