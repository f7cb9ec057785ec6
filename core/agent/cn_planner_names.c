/* SPDX-License-Identifier: Apache-2.0 */
/* The offline planner's name matching (see cn_planner.h): every symbol of
 * the index scored by how much of the question its *name* carries.
 *
 * BM25 over whole nodes drowns a short, telling name ("_print_Sum",
 * "separability_matrix") in the text of long functions that repeat the
 * question's prose.  Here each function, method and class is a tiny
 * document of three fields -- its own name, the names of the classes
 * around it, its file's path -- and a query term counts by how rare it is
 * among names (a word no symbol is named after weighs nothing, "get" little,
 * "separability" much) and by whether the question writes it as code
 * (backticks, code blocks, snake_case, CamelCase, calls, dotted names).
 * A term counts once per node, in its best field.  The scan reads every
 * node once to count name frequencies and once to score: a few
 * milliseconds on 50,000 symbols. */
#include "cn_planner.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <codenib/index.h>
#include <codenib/lang.h>

#include "../index/cn_index.h"
#include "../index/cn_tokenize.h"

/* Field weights: the node's own name, its classes, its file's path. */
#define FW_NAME 1.0
#define FW_CLASS 0.5
#define FW_PATH 0.35
/* A term the question writes as code counts this much more. */
#define CODE_BOOST 2.0
/* Query term occurrences beyond the first add log(1 + n) at most this. */
#define MIN_TERM 3
#define COV_EXP 1.0
#define TITLE_BOOST 2.0
#define OUTPUT_W 0.5
#define TF_CAP 2.0

typedef struct term {
    char *tok;
    double qw;         /* query weight */
    uint32_t df;       /* nodes whose name document holds it */
    uint32_t seen_at;  /* the last node that counted it (df, once per node) */
    uint32_t field_at[3];   /* the last node that matched it in each field */
    double idf;
} term;

typedef struct terms {
    term *items;
    size_t len, cap;
    bool code;         /* tokens being added come from code */
    bool title;        /* ... or from the first line */
    bool output;       /* ... or from a session's output */
    bool oom;
} terms;

/* English function words: rare in names, so their idf would be high, yet
 * a question's "the" or "should" says nothing about where to look. */
static const char *const prose[] = {
    "about", "after", "again", "also", "and", "any", "are", "because", "been", "before", "being", "but", "can",
    "cannot", "could", "did", "does", "doesn", "don", "each", "either", "for", "from", "had", "has", "have",
    "having", "here", "how", "into", "isn", "its", "just", "like", "more", "most", "much", "not", "now", "only",
    "other", "our", "same", "should", "since", "some", "such", "than", "that", "the", "their", "them", "then",
    "there", "these", "they", "this", "those", "though", "too", "under", "until", "very", "was", "wasn", "were",
    "what", "when", "where", "whether", "which", "while", "who", "why", "will", "with", "without", "would",
    "you", "your"};

static bool is_prose(const char *tok, size_t len)
{
    for (size_t i = 0; i < sizeof prose / sizeof prose[0]; i++)
        if (strlen(prose[i]) == len && memcmp(prose[i], tok, len) == 0) return true;
    return false;
}

static term *terms_find(const terms *t, const char *tok, size_t len)
{
    for (size_t i = 0; i < t->len; i++)
        if (strlen(t->items[i].tok) == len && memcmp(t->items[i].tok, tok, len) == 0) return &t->items[i];
    return NULL;
}

static int add_query_token(const char *tok, size_t len, void *data)
{
    terms *t = data;
    term *x;
    /* "x", "df", "42": too short or numeric to say which symbol is meant */
    if (len < MIN_TERM || strspn(tok, "0123456789") >= len || is_prose(tok, len)) return 0;
    x = terms_find(t, tok, len);
    if (x == NULL) {
        if (t->len == t->cap) {
            size_t cap = t->cap ? t->cap * 2 : 64;
            term *items = realloc(t->items, cap * sizeof *items);
            if (items == NULL) return t->oom = true, 1;
            t->items = items;
            t->cap = cap;
        }
        x = &t->items[t->len];
        memset(x, 0, sizeof *x);
        if ((x->tok = cn_strndup(tok, len)) == NULL) return t->oom = true, 1;
        x->seen_at = x->field_at[0] = x->field_at[1] = x->field_at[2] = UINT32_MAX;
        t->len++;
    }
    /* qw: occurrences so far (code ones counted CODE_BOOST times) */
    x->qw += (t->code ? CODE_BOOST : t->output ? OUTPUT_W : 1.0) * (t->title ? TITLE_BOOST : 1.0);
    return 0;
}

/* Whether a word of the question is written as code. */
static bool word_is_code(const char *w, size_t n, char before, char after)
{
    bool lower = false, upper_inside = false, digit = false;
    if (before == '`' || after == '(' || before == '.' || after == '.') return true;
    for (size_t i = 0; i < n; i++) {
        if (w[i] == '_') return true;
        if (islower((unsigned char)w[i])) lower = true;
        if (i > 0 && isupper((unsigned char)w[i])) upper_inside = true;
        if (isdigit((unsigned char)w[i])) digit = true;
    }
    return (lower && upper_inside) || (digit && lower);
}

/* The question's terms: every token once per occurrence; tokens of words
 * written as code, and of fenced or backticked code, weigh CODE_BOOST. */
typedef struct word_toks {
    char tok[8][64];
    size_t len[8];
    size_t n;
} word_toks;

static int collect_token(const char *tok, size_t len, void *data)
{
    word_toks *w = data;
    if (w->n < 8 && len < 64) {
        memcpy(w->tok[w->n], tok, len);
        w->len[w->n++] = len;
    }
    return 0;
}

/* A word's parts ("use_unicode" -> use, unicode); the whole word too only
 * when it has a single part, so a snake_case name is not counted twice. */
static void add_word(const char *w, size_t n, terms *t)
{
    word_toks wt;
    wt.n = 0;
    cn_tokenize(w, n, collect_token, &wt);
    for (size_t k = wt.n > 1 ? 1 : 0; k < wt.n; k++) add_query_token(wt.tok[k], wt.len[k], t);
}

/* Inside a fenced block of an interactive session (">>> " or "In [1]:"
 * prompts), the lines without a prompt are output: values the user saw,
 * not names the code used. */
static bool session_block(const char *from, size_t n)
{
    const char *end = from + n, *close = NULL;
    for (const char *p = from; p + 3 <= end; p++)
        if (memcmp(p, "```", 3) == 0) {
            close = p;
            break;
        }
    if (close == NULL) close = end;
    for (const char *p = from; p + 4 <= close; p++)
        if ((p == from || p[-1] == '\n') && (memcmp(p, ">>> ", 4) == 0 || memcmp(p, "In [", 4) == 0)) return true;
    return false;
}

static bool output_line(const char *q, size_t i)
{
    size_t b = i;
    while (b > 0 && q[b - 1] != '\n') b--;
    b += strspn(q + b, " \t");
    return strncmp(q + b, ">>>", 3) != 0 && strncmp(q + b, "...", 3) != 0 && strncmp(q + b, "In [", 4) != 0;
}

/* The question's terms: every token once per occurrence; tokens of words
 * written as code, and of fenced or backticked code, weigh CODE_BOOST;
 * the title's weigh TITLE_BOOST more; session output OUTPUT_W. */
static int query_terms(const char *q, terms *t)
{
    bool fence = false, tick = false, session = false;
    size_t i, n = strlen(q), title_end;
    i = strspn(q, " \t\r\n");
    title_end = i + strcspn(q + i, "\r\n");
    while (i < n && !t->oom) {
        t->title = i < title_end && title_end < n;
        if (strncmp(q + i, "```", 3) == 0) {
            fence = !fence;
            i += 3;
            session = fence && session_block(q + i, n - i);
            continue;
        }
        if (q[i] == '`') {
            tick = !tick;
            i++;
            continue;
        }
        if (isalnum((unsigned char)q[i]) || q[i] == '_') {
            size_t j = i;
            while (j < n && (isalnum((unsigned char)q[j]) || q[j] == '_')) j++;
            t->output = fence && session && output_line(q, i);
            t->code = !t->output && (fence || tick || word_is_code(q + i, j - i, i ? q[i - 1] : ' ', j < n ? q[j] : ' '));
            add_word(q + i, j - i, t);
            i = j;
            continue;
        }
        i++;
    }
    for (size_t k = 0; k < t->len; k++) t->items[k].qw = fmin(1.0 + log(t->items[k].qw), 1.0 + TF_CAP);
    return t->oom ? CN_ENOMEM : 0;
}

/* ---- the scan ----------------------------------------------------------- */

typedef struct scan {
    terms *t;
    uint32_t node;
    int field;                 /* 0 name, 1 classes, 2 path */
    bool scoring;
    unsigned ntok[3], nmatch[3];
    double sum[3];             /* matched qw * idf per field */
} scan;

static int node_token(const char *tok, size_t len, void *data)
{
    scan *s = data;
    term *x = terms_find(s->t, tok, len);
    s->ntok[s->field]++;
    if (x == NULL) return 0;
    if (!s->scoring) {
        if (x->seen_at != s->node) x->seen_at = s->node, x->df++;
        return 0;
    }
    if (x->field_at[s->field] != s->node) {
        x->field_at[s->field] = s->node;
        s->nmatch[s->field]++;
        s->sum[s->field] += x->qw * x->idf;
    }
    return 0;
}

static bool is_symbol_kind(int kind)
{
    return kind == CN_NODE_FUNCTION || kind == CN_NODE_METHOD || kind == CN_NODE_CLASS || kind == CN_NODE_STRUCT ||
           kind == CN_NODE_UNION || kind == CN_NODE_ENUM;
}

/* Feeds a node's three fields to node_token. */
static void node_fields(scan *s, const cn_node_info *nd)
{
    const char *colon = strchr(nd->qualname, ':');
    const char *qual = colon ? colon + 1 : nd->qualname;
    const char *last = strrchr(qual, '.');
    memset(s->ntok, 0, sizeof s->ntok);
    memset(s->nmatch, 0, sizeof s->nmatch);
    memset(s->sum, 0, sizeof s->sum);
    s->field = 2;
    cn_tokenize(nd->path, strlen(nd->path), node_token, s);
    if (last != NULL) {
        s->field = 1;
        cn_tokenize(qual, (size_t)(last - qual), node_token, s);
    }
    s->field = 0;
    cn_tokenize(nd->name, strlen(nd->name), node_token, s);
}

/* How much of a field the question explains: matched tokens over its
 * parts (a word of several parts also yields itself whole first). */
static double coverage(const scan *s, int f)
{
    unsigned parts = s->ntok[f] > 1 ? s->ntok[f] - 1 : s->ntok[f];
    return parts ? fmin(1.0, (double)s->nmatch[f] / parts) : 0;
}

static double node_score(const scan *s)
{
    return FW_NAME * s->sum[0] * pow(coverage(s, 0), COV_EXP) +
           FW_CLASS * s->sum[1] * pow(coverage(s, 1), COV_EXP) + FW_PATH * s->sum[2];
}

/* A definition inside a function: it folds into that function in the
 * answer, so its own name would credit the wrong symbol. */
static bool nested(const cn_index_services *I, const struct cn_index *idx, const cn_node_info *nd)
{
    cn_node_info p;
    cn_error err;
    if (nd->parent < 0) return false;
    p.struct_size = sizeof p;
    if (I->node(idx, (uint32_t)nd->parent, &p, &err) < 0) return false;
    return p.kind == CN_NODE_FUNCTION || p.kind == CN_NODE_METHOD;
}

typedef struct hit {
    uint32_t id;
    double score;
} hit;

static int cmp_hits(const void *a, const void *b)
{
    const hit *x = a, *y = b;
    if (x->score != y->score) return x->score > y->score ? -1 : 1;
    return x->id < y->id ? -1 : x->id > y->id;
}

int cn_pl_name_matches(const struct cn_index *idx, const char *question, size_t top_k, json_object **out)
{
    const cn_index_services *I = cn_host_index_services();
    terms t;
    scan s;
    uint32_t n = I->node_count(idx), nsym = 0;
    hit *hits = NULL;
    size_t nh = 0;
    cn_node_info nd;
    cn_error err;
    int rc = 0;

    *out = NULL;
    memset(&t, 0, sizeof t);
    memset(&s, 0, sizeof s);
    s.t = &t;
    if ((rc = query_terms(question, &t)) < 0) goto done;
    if ((hits = malloc((n ? n : 1) * sizeof *hits)) == NULL) {
        rc = CN_ENOMEM;
        goto done;
    }
    for (int pass = 0; pass < 2; pass++) {
        s.scoring = pass == 1;
        for (uint32_t id = 0; id < n; id++) {
            double score = 0;
            nd.struct_size = sizeof nd;
            if (I->node(idx, id, &nd, &err) < 0 || !is_symbol_kind(nd.kind) || nd.is_test || nested(I, idx, &nd))
                continue;
            s.node = id + pass * n;   /* a new stamp each pass */
            if (!s.scoring) {
                nsym++;
                node_fields(&s, &nd);
                continue;
            }
            node_fields(&s, &nd);
            score = node_score(&s);
            if (score > 0) hits[nh++] = (hit){id, score};
        }
        for (size_t k = 0; k < t.len; k++)
            t.items[k].idf = t.items[k].df ? log(1.0 + (double)nsym / t.items[k].df) : 0;
    }
    if (nh > 1) qsort(hits, nh, sizeof *hits, cmp_hits);
    if ((*out = json_object_new_array()) == NULL) rc = CN_ENOMEM;
    for (size_t i = 0; rc == 0 && i < nh && i < top_k; i++) {
        json_object *o = cn_pl_hit_json(idx, hits[i].id, hits[i].score);
        if (o != NULL) json_object_array_add(*out, o);
    }
done:
    for (size_t k = 0; k < t.len; k++) free(t.items[k].tok);
    free(t.items);
    free(hits);
    if (rc < 0) {
        json_object_put(*out);
        *out = NULL;
    }
    return rc;
}
