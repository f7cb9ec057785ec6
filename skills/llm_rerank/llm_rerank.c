/* SPDX-License-Identifier: Apache-2.0 */
/* llm_rerank: listwise rerank of candidate nodes by a chat model.
 *
 * The candidates (the caller's `nodes`, or the BM25 top `candidates` for the
 * query) are shown to the model as numbered passages, all at once or in
 * sliding windows.  Each window gives every passage in it a score -- the
 * model's own score in the structured format, a score from the rank position
 * in the RankGPT text format -- and a node's final score is the mean over
 * the windows it appeared in.  Everything the model sees or answers goes
 * through host->model; the skill never talks HTTP. */
#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <codenib/index.h>
#include <codenib/skill.h>

#include "cn_skill_cands.h"
#include "cn_skill_util.h"

/* ------------------------------------------------------------ buffer --- */

/* A growing text buffer on the host allocator; `failed` sticks, so a
 * sequence of appends is checked once at the end. */
typedef struct sbuf {
    const cn_host *h;
    char *data;
    size_t len, cap;
    int failed;
} sbuf;

/* Room for n more bytes and the terminator. */
static int sb_reserve(sbuf *b, size_t n)
{
    size_t cap = b->cap ? b->cap : 256;
    char *p;
    if (b->failed) return -1;
    if (b->len + n + 1 <= b->cap) return 0;
    while (cap < b->len + n + 1) cap *= 2;
    if ((p = b->h->realloc(b->data, cap)) == NULL) {
        b->failed = 1;
        return -1;
    }
    b->data = p;
    b->cap = cap;
    return 0;
}

static void sb_add(sbuf *b, const char *s, size_t n)
{
    if (sb_reserve(b, n) < 0) return;
    memcpy(b->data + b->len, s, n);
    b->len += n;
    b->data[b->len] = '\0';
}

static void sb_str(sbuf *b, const char *s)
{
    sb_add(b, s, strlen(s));
}

static void sb_printf(sbuf *b, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

static void sb_printf(sbuf *b, const char *fmt, ...)
{
    va_list ap;
    int n;
    va_start(ap, fmt);
    n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0) b->failed = 1;
    if (n < 0 || sb_reserve(b, (size_t)n) < 0) return;
    va_start(ap, fmt);
    vsnprintf(b->data + b->len, b->cap - b->len, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

/* ------------------------------------------------------------ prompt --- */

typedef enum fmt { FMT_STRUCTURED, FMT_RANKGPT } fmt;

typedef struct rr {
    const cn_host *h;
    const cn_skill_context *ctx;
    const char *query;
    fmt format;
    size_t max_chars;
    cn_sc_cands cs;
} rr;

static const char system_prompt[] =
    "You help find where in a software repository a change belongs. You receive a request about "
    "the repository (a bug report, a feature request or a question) and numbered passages of its "
    "source code, and you judge which passages hold the code a developer must read or edit to "
    "handle the request. Judge by what the code does, not by how many words it shares with the "
    "request.";

/* Without trailing blank lines: passages are separated by one. */
static size_t trimmed_len(const char *text, size_t len)
{
    while (len > 0 && isspace((unsigned char)text[len - 1])) len--;
    return len;
}

static void add_passage(rr *r, sbuf *b, size_t number, const cn_sc_cand *c)
{
    const cn_host *h = r->h;
    cn_node_info nd;
    size_t plen, shown;
    const char *sym;

    memset(&nd, 0, sizeof nd);
    nd.struct_size = (uint32_t)sizeof nd;
    if (h->index->node(r->ctx->index, c->node, &nd, NULL) < 0) nd.path = nd.qualname = "?";
    plen = strlen(nd.path);
    sym = strncmp(nd.qualname, nd.path, plen) == 0 && nd.qualname[plen] == ':' ? nd.qualname + plen + 1 : NULL;
    if (sym != NULL)
        sb_printf(b, "[%zu] file %s, %s %s, lines %u-%u\n", number, nd.path, cn_su_kind_name(nd.kind), sym,
                  nd.start_line + 1, nd.end_line + 1);
    else
        sb_printf(b, "[%zu] file %s, lines %u-%u\n", number, nd.path, nd.start_line + 1, nd.end_line + 1);
    shown = cn_sc_shown_len(c, r->max_chars);
    sb_add(b, c->text, trimmed_len(c->text, shown));
    if (shown < c->len) sb_str(b, "\n[... cut]");
    sb_str(b, "\n\n");
}

static char *user_prompt(rr *r, size_t first, size_t w)
{
    sbuf b = {r->h, NULL, 0, 0, 0};
    sb_str(&b, "Request:\n");
    sb_str(&b, r->query);
    sb_printf(&b, "\n\n%s %zu passage%s.\n\n", w == 1 ? "There is" : "There are", w, w == 1 ? "" : "s");
    for (size_t i = 0; i < w; i++) add_passage(r, &b, i + 1, &r->cs.v[first + i]);
    if (r->format == FMT_STRUCTURED)
        sb_printf(&b,
                  "Give each passage a score between 0 and 1: how likely it is the code to read or "
                  "change for the request (1 certainly, 0 unrelated). Answer with a JSON object "
                  "{\"ranking\": [{\"index\": PASSAGE_NUMBER, \"score\": SCORE}, ...]} listing each of the "
                  "%zu passage%s once, most relevant first.",
                  w, w == 1 ? "" : "s");
    else
        sb_printf(&b,
                  "Order the %zu passage%s from most to least relevant to the request. Write only the "
                  "passage numbers in brackets joined by \" > \", every passage once, for example "
                  "[2] > [1] > [3], and nothing else.",
                  w, w == 1 ? "" : "s");
    if (b.failed) {
        r->h->free(b.data);
        return NULL;
    }
    return b.data;
}

/* {"type": type, "description": description}: a member of the schema. */
static cn_json *typed(const cn_json_services *J, const char *type, const char *description)
{
    cn_json *t = J->new_object();
    J->object_set(t, "type", J->new_string(type));
    J->object_set(t, "description", J->new_string(description));
    return t;
}

/* response_format of the structured answer: {"ranking": [{index, score}]}. */
static cn_json *ranking_format(const cn_json_services *J)
{
    static const char *const item_required[] = {"index", "score", NULL}, *const required[] = {"ranking", NULL};
    cn_json *iprops = J->new_object(), *ranking = J->new_object(), *props = J->new_object();

    J->object_set(iprops, "index", typed(J, "integer", "the passage number, from 1"));
    J->object_set(iprops, "score", typed(J, "number", "relevance between 0 and 1"));
    J->object_set(ranking, "type", J->new_string("array"));
    J->object_set(ranking, "items", cn_su_schema_object(J, iprops, item_required));
    J->object_set(props, "ranking", ranking);
    return cn_su_json_schema_format(J, "passage_ranking", cn_su_schema_object(J, props, required));
}

static char *window_request(rr *r, size_t first, size_t w)
{
    char *user = user_prompt(r, first, w), *text;
    if (user == NULL) return NULL;
    text = cn_su_chat_request(r->h, system_prompt, user,
                              r->format == FMT_STRUCTURED ? ranking_format(r->h->json) : NULL);
    r->h->free(user);
    return text;
}

/* ------------------------------------------------------------ answers --- */

#define NOT_STRUCTURED "is not a ranking object {\"ranking\":[{\"index\",\"score\"}]}"
#define NOT_RANKGPT "is not a RankGPT ranking such as [2] > [1] > [3]"

/* {"ranking":[{"index","score"}]} -> scores of the w passages.  Entries
 * out of range, repeated or without a number are ignored; passages the
 * model left out score 0 (kept, last).  CN_EPARSE with *why set when the
 * answer is unusable. */
static int parse_structured(const cn_host *h, const char *content, size_t w, double *scores, const char **why,
                            cn_error *err)
{
    const cn_json_services *J = h->json;
    cn_json *root, *ranking;
    unsigned char *set;
    size_t used = 0;
    int rc;

    if ((rc = cn_su_answer_object(h, content, &root, err)) < 0) return rc;
    ranking = J->object_get(root, "ranking");
    if (J->type(ranking) != CN_JSON_ARRAY) {
        J->put(root);
        *why = NOT_STRUCTURED;
        return CN_EPARSE;
    }
    if ((set = h->alloc(w)) == NULL) {
        J->put(root);
        return h->error_set(err, CN_ENOMEM, "out of memory");
    }
    memset(set, 0, w);
    for (size_t i = 0; i < w; i++) scores[i] = 0.0;
    for (size_t i = 0; i < J->array_length(ranking); i++) {
        const cn_json *e = J->array_get(ranking, i), *ix = J->object_get(e, "index"), *sc = J->object_get(e, "score");
        double d = J->get_double(ix), s = J->get_double(sc);
        cn_json_type ts = J->type(sc);
        if ((J->type(ix) != CN_JSON_INT && J->type(ix) != CN_JSON_DOUBLE) || d != floor(d) || d < 1 ||
            d > (double)w || (ts != CN_JSON_INT && ts != CN_JSON_DOUBLE) || !isfinite(s) || set[(size_t)d - 1])
            continue;
        set[(size_t)d - 1] = 1;
        scores[(size_t)d - 1] = s;
        used++;
    }
    h->free(set);
    J->put(root);
    if (used > 0) return 0;
    *why = "scores no passage: it has no entry with a passage number in range and a numeric score";
    return CN_EPARSE;
}

/* Collects passage numbers 1..w from text in order of appearance, each
 * once, into order[]; `bracketed`: only numbers written as [n]. */
static size_t scan_ids(const char *text, int bracketed, size_t w, unsigned char *set, size_t *order)
{
    size_t pos = 0;
    for (const char *p = text; *p;) {
        unsigned long long id = 0;
        if (!isdigit((unsigned char)*p) || (bracketed && (p == text || p[-1] != '['))) {
            p++;
            continue;
        }
        for (; isdigit((unsigned char)*p); p++)
            if (id < 100000000ULL) id = id * 10 + (unsigned)(*p - '0');
        if (bracketed && *p != ']') continue;
        if (id >= 1 && id <= w && !set[id - 1]) {
            set[id - 1] = 1;
            order[pos++] = (size_t)id - 1;
        }
    }
    return pos;
}

/* "[3] > [1] > [2]" -> position scores (w - rank) / w.  Ids out of range
 * and repeats are ignored; passages left out follow in their original
 * order.  Bare numbers ("3 > 1 > 2") count when no [n] is found. */
static int parse_rankgpt(const cn_host *h, const char *content, size_t w, double *scores, const char **why,
                         cn_error *err)
{
    size_t *order = h->alloc(w * sizeof *order), pos;
    unsigned char *set = h->alloc(w);

    if (order == NULL || set == NULL) {
        h->free(order);
        h->free(set);
        return h->error_set(err, CN_ENOMEM, "out of memory");
    }
    memset(set, 0, w);
    if ((pos = scan_ids(content, 1, w, set, order)) == 0) pos = scan_ids(content, 0, w, set, order);
    if (pos == 0) {
        h->free(order);
        h->free(set);
        *why = NOT_RANKGPT;
        return CN_EPARSE;
    }
    for (size_t i = 0; i < w; i++)
        if (!set[i]) order[pos++] = i;
    for (size_t rank = 0; rank < w; rank++) scores[order[rank]] = (double)(w - rank) / (double)w;
    h->free(order);
    h->free(set);
    return 0;
}

/* Asks the model about candidates [first, first + w) and adds the scores. */
static int rank_window(rr *r, size_t first, size_t w, const char *where, double *scores, cn_error *err)
{
    const cn_host *h = r->h;
    char *req = window_request(r, first, w);
    const char *why = NULL;
    cn_su_answer a;
    int rc;

    if (req == NULL) return h->error_set(err, CN_ENOMEM, "out of memory");
    rc = cn_su_chat_ask(h, r->ctx, req, "rank", where, &a, err);
    h->free(req);
    if (rc < 0) return rc;
    rc = r->format == FMT_STRUCTURED ? parse_structured(h, a.content, w, scores, &why, err)
                                     : parse_rankgpt(h, a.content, w, scores, &why, err);
    if (rc == CN_EPARSE && why != NULL) rc = cn_su_answer_error(h, &a, where, why, "", err);
    h->json->put(a.msg);
    for (size_t i = 0; rc == 0 && i < w; i++) {
        r->cs.v[first + i].sum += scores[i];
        r->cs.v[first + i].seen++;
    }
    return rc;
}

/* ------------------------------------------------------------ windows --- */

/* Window starts: 0, step, 2*step, ... below the last full window, then
 * that last one (n - size), so every window holds `size` candidates and
 * the tail is covered.  Returns how many (at most n). */
static size_t window_starts(size_t n, size_t size, size_t step, size_t *starts)
{
    size_t k = 0, tail = n - size;
    for (size_t s = 0; s < tail; s += step) starts[k++] = s;
    starts[k++] = tail;
    return k;
}

static int rank_all(rr *r, size_t size, size_t step, cn_error *err)
{
    const cn_host *h = r->h;
    size_t n = r->cs.n, *starts = h->alloc(n * sizeof *starts), k;
    double *scores = h->alloc(size * sizeof *scores);
    int rc = 0;

    if (starts == NULL || scores == NULL) rc = h->error_set(err, CN_ENOMEM, "out of memory");
    k = rc == 0 ? window_starts(n, size, step, starts) : 0;
    for (size_t i = 0; rc == 0 && i < k; i++) {
        char where[96] = "";
        if (k > 1)
            snprintf(where, sizeof where, " for window %zu of %zu (candidates %zu-%zu)", i + 1, k, starts[i] + 1,
                     starts[i] + size);
        rc = rank_window(r, starts[i], size, where, scores, err);
    }
    if (rc == 0) h->log(h, CN_LOG_INFO, "reranked %zu candidates in %zu window(s)", n, k);
    h->free(starts);
    h->free(scores);
    return rc;
}

/* ------------------------------------------------------------ results --- */

/* A node's score is its mean over the windows it was in. */
static int emit(rr *r, size_t top_k, int with_content, char **result_json, cn_error *err)
{
    for (size_t i = 0; i < r->cs.n; i++) {
        cn_sc_cand *c = &r->cs.v[i];
        c->score = c->seen ? c->sum / c->seen : -INFINITY;
    }
    return cn_sc_emit(r->h, r->ctx->index, &r->cs, top_k, with_content, result_json, err);
}

/* ------------------------------------------------------------ the run --- */

static int parse_format(const cn_host *h, const cn_json *args, fmt *out, cn_error *err)
{
    const char *f = cn_su_arg_str(h, args, "format");
    if (f == NULL || strcmp(f, "structured") == 0) *out = FMT_STRUCTURED;
    else if (strcmp(f, "rankgpt") == 0) *out = FMT_RANKGPT;
    else return h->error_set(err, CN_EINVAL, "argument 'format' must be 'structured' or 'rankgpt', got '%s'", f);
    return 0;
}

/* An Optional[int] count: null or <= 0 means "not given" (0). */
static size_t opt_count(const cn_host *h, const cn_json *args, const char *name)
{
    int64_t v = cn_su_arg_int(h, args, name, 0);
    return v > 0 ? (size_t)v : 0;
}

static int check_args(const cn_host *h, const cn_json *args, rr *r, size_t *top_k, cn_error *err)
{
    int rc;
    if ((r->query = cn_su_arg_str(h, args, "query")) == NULL)
        return h->error_set(err, CN_EINVAL, "argument 'query' must be a string");
    if ((rc = parse_format(h, args, &r->format, err)) < 0) return rc;
    return cn_sc_arg_limits(h, args, top_k, &r->max_chars, err);
}

static int lr_run(const cn_host *h, const cn_skill_context *ctx, const cn_json *args, char **result_json,
                  cn_error *err)
{
    size_t top_k = SIZE_MAX, size, step;
    rr r;
    int rc;

    if ((rc = cn_sc_require(h, ctx, CN_NEEDS_CHAT, err)) < 0) return rc;
    memset(&r, 0, sizeof r);
    r.h = h;
    r.ctx = ctx;
    if ((rc = check_args(h, args, &r, &top_k, err)) < 0) return rc;
    if (cn_su_is_blank(r.query, strlen(r.query))) return cn_su_emit(h, h->json->new_array(), result_json, err);
    if ((rc = cn_sc_collect(h, ctx, args, r.query, &r.cs, err)) < 0) {
        cn_sc_free(h, &r.cs);
        return rc;
    }
    size = opt_count(h, args, "window_size");
    if (size == 0 || size > r.cs.n) size = r.cs.n;
    step = opt_count(h, args, "window_step");
    /* A step past the window would leave candidates unranked. */
    if (step == 0 || step > size) step = size;
    if (r.cs.n > 0) rc = rank_all(&r, size, step, err);
    if (rc == 0) {
        rc = emit(&r, top_k, cn_su_arg_bool(h, args, "return_content", 0), result_json, err);
    } else if (cn_sc_rerank_recoverable(rc)) {
        /* The candidates are still worth having: keep their order, say why. */
        char why[sizeof err->message];
        memcpy(why, err->message, sizeof why);
        memset(err, 0, sizeof *err);
        rc = cn_sc_emit_unranked(h, ctx->index, &r.cs, top_k, cn_su_arg_bool(h, args, "return_content", 0), why,
                                 result_json, err);
    }
    cn_sc_free(h, &r.cs);
    return rc;
}

static int lr_create(const cn_host *host, const cn_skill_context *ctx, cn_executor **out, cn_error *err)
{
    return cn_su_simple_executor(host, ctx, lr_run, out, err);
}

CN_SKILL_DEFINE(llm_rerank, "llm_rerank", "0.1.0", lr_create);
