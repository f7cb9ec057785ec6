/* SPDX-License-Identifier: Apache-2.0 */
/* Scores by line ranges: the multilingual benchmark's metrics (its
 * README and mlocscore.py define them; this is an implementation of that
 * definition, checked against the script's numbers).
 *
 * Names are a poor key across languages: overloads, methods named by
 * their receiver or not, templates.  So a predicted location is a range of
 * lines of a file, and it matches a gold function when the two overlap by
 * at least half the function's length; loc-hit asks only that one of the
 * first five ranges holds a changed line.  Acc@k caps the gold at k, as
 * LocAgent's definition does for files. */
#include "cn_eval.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const int file_ks[] = {1, 3, 5, 10};
static const int function_ks[] = {5, 10};
#define N_FILE_KS (sizeof file_ks / sizeof file_ks[0])
#define N_FUNCTION_KS (sizeof function_ks / sizeof function_ks[0])

typedef struct loc_sums {
    size_t instances, failed, function_n, loc_n;
    size_t file[N_FILE_KS], function[N_FUNCTION_KS], loc_hit5;
} loc_sums;

typedef struct group {
    const char *key;  /* borrowed from the dataset */
    loc_sums s;
} group;

typedef struct range {
    const char *path; /* borrowed from the prediction */
    size_t path_len;
    long start, end;
} range;

static bool same_path(const range *r, const char *file)
{
    return strlen(file) == r->path_len && memcmp(r->path, file, r->path_len) == 0;
}

/* The distinct parsed locations of a prediction, in order (at most `max`). */
static size_t distinct_ranges(const cn_strv *locs, range *out, size_t max)
{
    size_t n = 0;
    for (size_t i = 0; i < locs->len && n < max; i++) {
        range r;
        bool dup = false;
        r.path = locs->items[i];
        if (!cn_eval_location_parse(r.path, &r.path_len, &r.start, &r.end)) continue;
        for (size_t j = 0; j < n && !dup; j++)
            dup = out[j].path_len == r.path_len && out[j].start == r.start && out[j].end == r.end &&
                  memcmp(out[j].path, r.path, r.path_len) == 0;
        if (!dup) out[n++] = r;
    }
    return n;
}

/* 2 * overlap >= length: the half of an odd length rounds up, as the
 * script's `overlap >= length / 2.0` does. */
static bool matches(const range *r, const cn_eval_span *g)
{
    long lo = r->start > g->start ? r->start : g->start, hi = r->end < g->end ? r->end : g->end;
    return same_path(r, g->file) && 2 * (hi - lo + 1) >= g->end - g->start + 1;
}

static size_t min_size(size_t a, size_t b)
{
    return a < b ? a : b;
}

/* One instance's hits, added to every sums it counts in. */
static void score_instance(const cn_eval_instance *in, const cn_eval_pred *pred, loc_sums **sums, size_t nsums)
{
    bool ok = pred != NULL && !pred->failed;
    bool file_hit[N_FILE_KS] = {false}, fn_hit[N_FUNCTION_KS] = {false}, loc_hit = false;
    range locs[10];
    size_t nlocs = 0;

    if (ok) {
        const cn_strv *ff = &pred->found[CN_EVAL_FILE], *gold = &in->gold[CN_EVAL_FILE];
        for (size_t j = 0; j < N_FILE_KS; j++) {
            size_t k = (size_t)file_ks[j], found = 0, seen = 0;
            /* the first k distinct files */
            for (size_t i = 0; i < ff->len && seen < k; i++) {
                bool dup = false;
                for (size_t q = 0; q < i && !dup; q++) dup = strcmp(ff->items[q], ff->items[i]) == 0;
                if (dup) continue;
                seen++;
                found += cn_strv_contains(gold, ff->items[i]);
            }
            file_hit[j] = found == min_size(gold->len, k);
        }
        nlocs = distinct_ranges(&pred->locations, locs, 10);
        for (size_t j = 0; j < N_FUNCTION_KS && in->n_functions > 0; j++) {
            size_t k = (size_t)function_ks[j], matched = 0, lim = min_size(nlocs, k);
            for (size_t g = 0; g < in->n_functions; g++)
                for (size_t i = 0; i < lim; i++)
                    if (matches(&locs[i], &in->functions[g])) {
                        matched++;
                        break;
                    }
            fn_hit[j] = matched >= min_size(in->n_functions, k);
        }
        for (size_t i = 0; i < min_size(nlocs, 5) && !loc_hit; i++)
            for (size_t c = 0; c < in->n_changed && !loc_hit; c++) {
                if (!same_path(&locs[i], in->changed[c].file)) continue;
                for (size_t q = 0; q < in->changed[c].n && !loc_hit; q++)
                    loc_hit = locs[i].start <= in->changed[c].lines[q] && in->changed[c].lines[q] <= locs[i].end;
            }
    }
    for (size_t s = 0; s < nsums; s++) {
        loc_sums *x = sums[s];
        x->instances++;
        x->failed += !ok;
        x->loc_n++;
        for (size_t j = 0; j < N_FILE_KS; j++) x->file[j] += file_hit[j];
        if (in->n_functions > 0) {
            x->function_n++;
            for (size_t j = 0; j < N_FUNCTION_KS; j++) x->function[j] += fn_hit[j];
        }
        x->loc_hit5 += loc_hit;
    }
}

/* ---- JSON ---------------------------------------------------------------- */

static bool put(json_object *o, const char *key, json_object *v)
{
    if (v == NULL || json_object_object_add(o, key, v) != 0) {
        json_object_put(v);
        return false;
    }
    return true;
}

/* {"n": n, METRIC: {"k": mean, ...}}; null means when n is 0 */
static json_object *level_json(size_t n, const char *metric, const size_t *hits, const int *ks, size_t nks)
{
    json_object *o = json_object_new_object(), *m = json_object_new_object();
    bool okay = o && m && put(o, "n", json_object_new_int64((int64_t)n));

    for (size_t j = 0; okay && j < nks; j++) {
        char key[16];
        snprintf(key, sizeof key, "%d", ks[j]);
        if (n == 0)
            okay = json_object_object_add(m, key, NULL) == 0;
        else
            okay = put(m, key, json_object_new_double((double)hits[j] / (double)n));
    }
    if (okay) {
        okay = put(o, metric, m);
        m = NULL;
    }
    json_object_put(m);
    if (!okay) {
        json_object_put(o);
        return NULL;
    }
    return o;
}

static json_object *sums_json(const loc_sums *s)
{
    static const int five[] = {5};
    json_object *o = json_object_new_object();
    if (o == NULL || !put(o, "instances", json_object_new_int64((int64_t)s->instances)) ||
        !put(o, "failed", json_object_new_int64((int64_t)s->failed)) ||
        !put(o, "file", level_json(s->instances, "acc", s->file, file_ks, N_FILE_KS)) ||
        !put(o, "function", level_json(s->function_n, "acc", s->function, function_ks, N_FUNCTION_KS)) ||
        !put(o, "loc", level_json(s->loc_n, "hit", &s->loc_hit5, five, 1))) {
        json_object_put(o);
        return NULL;
    }
    return o;
}

static int cmp_group(const void *a, const void *b)
{
    return strcmp(((const group *)a)->key, ((const group *)b)->key);
}

static json_object *groups_json(group *g, size_t n)
{
    json_object *o = json_object_new_object();
    if (n) qsort(g, n, sizeof *g, cmp_group);
    for (size_t i = 0; o && i < n; i++)
        if (!put(o, g[i].key, sums_json(&g[i].s))) {
            json_object_put(o);
            return NULL;
        }
    return o;
}

static group *group_of(group *g, size_t *n, const char *key)
{
    for (size_t i = 0; i < *n; i++)
        if (strcmp(g[i].key, key) == 0) return &g[i];
    memset(&g[*n], 0, sizeof g[*n]);
    g[*n].key = key;
    return &g[(*n)++];
}

bool cn_eval__ranged(const cn_eval_dataset *d)
{
    for (size_t i = 0; i < d->len; i++)
        if (d->items[i].ranged) return true;
    return false;
}

json_object *cn_eval__score_ranges(const cn_eval_dataset *d, const cn_eval_preds *p)
{
    loc_sums overall;
    size_t nl = 0, nr = 0;
    group *langs = calloc(d->len ? d->len : 1, sizeof *langs), *repos = calloc(d->len ? d->len : 1, sizeof *repos);
    json_object *o = NULL;

    memset(&overall, 0, sizeof overall);
    if (langs && repos) {
        for (size_t i = 0; i < d->len; i++) {
            const cn_eval_instance *in = &d->items[i];
            loc_sums *sums[3] = {&overall, &group_of(repos, &nr, in->repo)->s, NULL};
            size_t ns = 2;
            if (in->language) sums[ns++] = &group_of(langs, &nl, in->language)->s;
            score_instance(in, cn_eval_preds_find(p, in->instance_id), sums, ns);
        }
        o = json_object_new_object();
        if (o && (!put(o, "overall", sums_json(&overall)) || (nl && !put(o, "per_language", groups_json(langs, nl))) ||
                  !put(o, "per_repo", groups_json(repos, nr)))) {
            json_object_put(o);
            o = NULL;
        }
    }
    free(langs);
    free(repos);
    return o;
}
