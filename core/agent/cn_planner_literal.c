/* SPDX-License-Identifier: Apache-2.0 */
/* The offline planner's literal matching (see cn_planner.h): text the
 * question quotes -- an error message, a command-line option, a quoted
 * fragment of output -- found verbatim in the repository's source, and
 * credited to the symbol that holds it.
 *
 * An issue that quotes "expected a valid domain specification, got RR[y,z]"
 * points at the one `raise` whose format string starts that way; BM25
 * splits it into common words.  Each literal is looked up whole, then, when
 * it does not occur, by its longest prefix of whole words (messages end in
 * the user's own values), never shorter than MIN_PREFIX bytes.  A literal
 * that occurs in few symbols says more than one found in many, so a symbol's
 * score is the sum over literals of weight / (symbols holding it). */
#include "cn_planner.h"

#include <ctype.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <codenib/lang.h>

#include "../index/cn_index.h"
#include "../index/cn_nodes.h"
#include "../util/cn_beneath.h"

#define MIN_LITERAL 4
#define MIN_PREFIX 12
#define MAX_FILE_BYTES (4u << 20)
/* A literal found in more symbols than this says nothing. */
#define MAX_HOLDERS 40

typedef struct src {
    char *text;
    size_t len;
    const char *path;
} src;

static bool ident_char(char c) { return isalnum((unsigned char)c) || c == '_'; }

/* Quoted code spans that are not plain identifiers (`--collect-only`,
 * `a.b[0]`) and option-like words (--foo-bar) of the question. */
static int code_literals(const char *q, cn_strv *out)
{
    for (const char *p = q; *p; p++) {
        if (*p == '`' && p[1] != '`') {
            const char *e = strchr(p + 1, '`');
            size_t n;
            bool plain = true;
            if (e == NULL) break;
            n = (size_t)(e - p - 1);
            for (size_t i = 0; i < n; i++)
                if (!ident_char(p[1 + i])) plain = false;
            if (!plain && n >= MIN_LITERAL && n < 120 && memchr(p + 1, '\n', n) == NULL)
                if (cn_strv_push_owned(out, cn_strndup(p + 1, n)) < 0) return CN_ENOMEM;
            p = e;
        } else if (p[0] == '-' && p[1] == '-' && isalpha((unsigned char)p[2]) && (p == q || isspace((unsigned char)p[-1]) || p[-1] == '`')) {
            size_t n = 2;
            while (ident_char(p[n]) || p[n] == '-') n++;
            if (n >= MIN_LITERAL + 2) {
                char *s = cn_strndup(p, n);
                if (s == NULL || (!cn_strv_contains(out, s) ? cn_strv_push_owned(out, s) : (free(s), 0)) < 0)
                    return CN_ENOMEM;
            }
            p += n - 1;
        }
    }
    return 0;
}

static int load_sources(const struct cn_index *idx, src **out, size_t *n_out)
{
    uint32_t nf = cn_nodes_file_count(idx->nodes);
    src *s = calloc(nf ? nf : 1, sizeof *s);
    size_t n = 0;
    /* files are read beneath the root, following no link (cn_beneath.h) */
    int rootfd = open(idx->repo_root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (s == NULL) {
        if (rootfd >= 0) close(rootfd);
        return CN_ENOMEM;
    }
    for (uint32_t i = 0; rootfd >= 0 && i < nf; i++) {
        cn_file_view fv;
        if (cn_nodes_file(idx->nodes, i, &fv) < 0 || fv.is_test) continue;
        if (cn_read_beneath(rootfd, fv.path, MAX_FILE_BYTES, &s[n].text, &s[n].len) == 0) s[n++].path = fv.path;
        else cn_error_clear();   /* a file gone since the compile: skipped */
    }
    if (rootfd >= 0) close(rootfd);
    *out = s;
    *n_out = n;
    return 0;
}

typedef struct holder {
    uint32_t id;
    double score;
} holder;

static bool found_anywhere(const src *s, size_t ns, const char *lit, size_t len)
{
    for (size_t i = 0; i < ns; i++)
        if (len <= s[i].len && memmem(s[i].text, s[i].len, lit, len) != NULL) return true;
    return false;
}

/* The longest whole-word prefix of lit (at least MIN_PREFIX bytes, or
 * all of it) that occurs somewhere; 0 when none does. */
static size_t usable_length(const src *s, size_t ns, const char *lit)
{
    size_t len = strlen(lit);
    if (found_anywhere(s, ns, lit, len)) return len;
    while (len > MIN_PREFIX) {
        do len--;
        while (len > MIN_PREFIX && !(ident_char(lit[len - 1]) && !ident_char(lit[len])));
        if (len >= MIN_PREFIX && found_anywhere(s, ns, lit, len)) return len;
    }
    return 0;
}

static int add_holder(holder **h, size_t *n, size_t *cap, uint32_t id)
{
    for (size_t i = 0; i < *n; i++)
        if ((*h)[i].id == id) return 0;
    if (*n == *cap) {
        size_t c = *cap ? *cap * 2 : 16;
        holder *x = realloc(*h, c * sizeof *x);
        if (x == NULL) return CN_ENOMEM;
        *h = x;
        *cap = c;
    }
    (*h)[(*n)++] = (holder){id, 0};
    return 0;
}

/* The symbols holding lit[0, len): each occurrence's innermost node. */
static int holders_of(const struct cn_index *idx, const src *s, size_t ns, const char *lit, size_t len,
                      holder **h, size_t *nh, size_t *cap)
{
    for (size_t i = 0; i < ns; i++) {
        const char *at = s[i].text, *end = s[i].text + s[i].len;
        uint32_t line = 1;
        const char *counted = s[i].text;
        while ((at = memmem(at, (size_t)(end - at), lit, len)) != NULL) {
            uint32_t id;
            for (; counted < at; counted++)
                if (*counted == '\n') line++;
            if (cn_nodes_at(idx->nodes, s[i].path, line, &id) == 0 && add_holder(h, nh, cap, id) < 0)
                return CN_ENOMEM;
            if (*nh > MAX_HOLDERS) return 0;
            at += len;
        }
    }
    return 0;
}

static int cmp_holders(const void *a, const void *b)
{
    const holder *x = a, *y = b;
    if (x->score != y->score) return x->score > y->score ? -1 : 1;
    return x->id < y->id ? -1 : x->id > y->id;
}

int cn_pl_literal_matches(const struct cn_index *idx, const char *question, const cn_strv *errors,
                          size_t top_k, json_object **out, cn_strv *used)
{
    cn_strv lits = CN_STRV_INIT;
    src *s = NULL;
    size_t ns = 0, nall = 0, capall = 0;
    holder *all = NULL;
    int rc = 0;

    *out = NULL;
    for (size_t i = 0; errors && i < errors->len && rc == 0; i++)
        if (strlen(errors->items[i]) >= MIN_LITERAL) rc = cn_strv_push(&lits, errors->items[i]);
    if (rc == 0) rc = code_literals(question, &lits);
    if (rc == 0 && lits.len > 0) rc = load_sources(idx, &s, &ns);
    for (size_t k = 0; rc == 0 && k < lits.len; k++) {
        holder *h = NULL;
        size_t nh = 0, cap = 0, len = usable_length(s, ns, lits.items[k]);
        if (len == 0) continue;
        rc = holders_of(idx, s, ns, lits.items[k], len, &h, &nh, &cap);
        if (rc == 0 && nh > 0 && nh <= MAX_HOLDERS) {
            if (used != NULL) rc = cn_strv_push_owned(used, cn_strndup(lits.items[k], len));
            for (size_t i = 0; rc == 0 && i < nh; i++) {
                rc = add_holder(&all, &nall, &capall, h[i].id);
                for (size_t j = 0; rc == 0 && j < nall; j++)
                    if (all[j].id == h[i].id) all[j].score += 1.0 / (double)nh;
            }
        }
        free(h);
    }
    if (rc == 0) {
        if (nall > 1) qsort(all, nall, sizeof *all, cmp_holders);
        if ((*out = json_object_new_array()) == NULL) rc = CN_ENOMEM;
        for (size_t i = 0; rc == 0 && i < nall && i < top_k; i++) {
            json_object *o = cn_pl_hit_json(idx, all[i].id, all[i].score);
            if (o != NULL) json_object_array_add(*out, o);
        }
    }
    for (size_t i = 0; i < ns; i++) free(s[i].text);
    free(s);
    free(all);
    cn_strv_free(&lits);
    if (rc < 0) {
        json_object_put(*out);
        *out = NULL;
        return cn_error_set(CN_ENOMEM, "planner: out of memory while matching quoted text");
    }
    return 0;
}
