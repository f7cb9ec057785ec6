/* SPDX-License-Identifier: Apache-2.0 */
/* The localization metrics of `codenib eval`.
 *
 * Acc@k follows the reference scorer (bench/tools/locscore.py) to the
 * letter, quirks included, because it is the number papers publish: the
 * predictions are cut to the level's largest k, rel counts every predicted
 * item found in the gold list (a prediction repeated twice counts twice),
 * and the gold size is the raw list length.  The other metrics are the
 * usual IR ones over the *unique* gold set, where a predicted item only
 * counts at its first occurrence (so repeating a right answer earns
 * nothing):
 *
 *   Recall@k = |unique(p[:k]) ∩ gold| / |gold|
 *   nDCG@k   = DCG / IDCG, binary gain, DCG = Σ_{i<k} rel_i / log2(i+2),
 *              IDCG over min(|gold|, k) perfect ranks
 *   MAP@k    = mean of AP@k = Σ_{i<k, rel_i} P@(i+1) / min(|gold|, k),
 *              P@(i+1) = relevant first occurrences in p[:i+1] / (i+1)
 *   Top-k    = 1 when any gold item is in p[:k] (CoSIL's any-hit)
 *   Match    = 1 when every gold item is anywhere in p (OrcaLoca)
 */
#include "cn_eval.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Sums of one level over the instances scored so far. */
typedef struct level_sums {
    size_t n;
    double acc[CN_EVAL_MAX_KS], recall[CN_EVAL_MAX_KS], ndcg[CN_EVAL_MAX_KS], map[CN_EVAL_MAX_KS],
        top[CN_EVAL_MAX_KS];
    double match;
} level_sums;

typedef struct repo_sums {
    const char *repo; /* borrowed from the dataset (a repository, or a language) */
    size_t instances;
    level_sums lv[CN_EVAL_LEVELS];
} repo_sums;

static bool in_list(char *const *items, size_t n, const char *s)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(items[i], s) == 0) return true;
    return false;
}

/* Whether items[i] is the first occurrence of its value. */
static bool first_occurrence(char *const *items, size_t i)
{
    return !in_list(items, i, items[i]);
}

static size_t unique_count(const cn_strv *v)
{
    size_t n = 0;
    for (size_t i = 0; i < v->len; i++) n += first_occurrence(v->items, i);
    return n;
}

static size_t min_size(size_t a, size_t b)
{
    return a < b ? a : b;
}

/* Adds one instance's scores at one level to `s`.  `gold` is not empty. */
static void score_one(const cn_strv *gold, const cn_strv *pred, const int *ks, size_t nks, level_sums *s)
{
    static const cn_strv none = CN_STRV_INIT;
    size_t ugold = unique_count(gold);
    bool all = true;

    if (pred == NULL) pred = &none;
    s->n++;
    for (size_t j = 0; j < nks; j++) {
        size_t k = (size_t)ks[j], lim = min_size(pred->len, k);
        size_t rel = 0, found = 0, ideal = min_size(ugold, k);
        double dcg = 0, idcg = 0, ap = 0;
        bool any = false;

        for (size_t i = 0; i < lim; i++) {
            if (!in_list(gold->items, gold->len, pred->items[i])) continue;
            rel++;
            any = true;
            if (!first_occurrence(pred->items, i)) continue;
            found++;
            dcg += 1.0 / log2((double)i + 2.0);
            ap += (double)found / (double)(i + 1);
        }
        for (size_t i = 0; i < ideal; i++) idcg += 1.0 / log2((double)i + 2.0);
        s->acc[j] += rel == min_size(gold->len, k) ? 1.0 : 0.0;
        s->recall[j] += (double)found / (double)ugold;
        s->ndcg[j] += dcg / idcg;
        s->map[j] += ap / (double)ideal;
        s->top[j] += any ? 1.0 : 0.0;
    }
    for (size_t i = 0; i < gold->len && all; i++) all = in_list(pred->items, pred->len, gold->items[i]);
    s->match += all ? 1.0 : 0.0;
}

/* ---- JSON ---------------------------------------------------------------- */

/* Every builder below returns NULL on ENOMEM after freeing what it made;
 * json_object_object_add and _array_add only fail on ENOMEM too. */
static bool put(json_object *o, const char *key, json_object *v)
{
    if (v == NULL || json_object_object_add(o, key, v) != 0) {
        json_object_put(v);
        return false;
    }
    return true;
}

/* The mean, or JSON null (a NULL member) for a level nobody scored. */
static bool put_mean(json_object *o, const char *key, double sum, size_t n)
{
    if (n == 0) return json_object_object_add(o, key, NULL) == 0;
    return put(o, key, json_object_new_double(sum / (double)n));
}

static json_object *per_k(const double *sums, const int *ks, size_t nks, size_t n)
{
    json_object *o = json_object_new_object();

    for (size_t j = 0; o && j < nks; j++) {
        char key[16];
        snprintf(key, sizeof key, "%d", ks[j]);
        if (!put_mean(o, key, sums[j], n)) {
            json_object_put(o);
            return NULL;
        }
    }
    return o;
}

static json_object *levels_json(const level_sums *lv)
{
    json_object *all = json_object_new_object();

    for (int l = 0; all && l < CN_EVAL_LEVELS; l++) {
        const level_sums *s = &lv[l];
        const int *ks;
        size_t nks = cn_eval_level_ks((cn_eval_level)l, &ks);
        json_object *o = json_object_new_object();
        bool okay = o && put(o, "n", json_object_new_int64((int64_t)s->n)) &&
                    put(o, "acc", per_k(s->acc, ks, nks, s->n)) &&
                    put(o, "recall", per_k(s->recall, ks, nks, s->n)) &&
                    put(o, "ndcg", per_k(s->ndcg, ks, nks, s->n)) &&
                    put(o, "map", per_k(s->map, ks, nks, s->n)) &&
                    put(o, "top", per_k(s->top, ks, nks, s->n)) && put_mean(o, "match", s->match, s->n);
        if (!okay) {
            json_object_put(o);
            json_object_put(all);
            return NULL;
        }
        if (!put(all, cn_eval_level_name((cn_eval_level)l), o)) {
            json_object_put(all);
            return NULL;
        }
    }
    return all;
}

static int cmp_repo(const void *a, const void *b)
{
    return strcmp(((const repo_sums *)a)->repo, ((const repo_sums *)b)->repo);
}

static json_object *per_group_json(repo_sums *repos, size_t n)
{
    json_object *o = json_object_new_object();

    /* By name, so two runs over differently ordered files compare line
     * by line. */
    if (n) qsort(repos, n, sizeof *repos, cmp_repo);
    for (size_t i = 0; o && i < n; i++) {
        json_object *r = json_object_new_object();
        if (r == NULL || !put(r, "instances", json_object_new_int64((int64_t)repos[i].instances)) ||
            !put(r, "levels", levels_json(repos[i].lv))) {
            json_object_put(r);
            json_object_put(o);
            return NULL;
        }
        if (!put(o, repos[i].repo, r)) { /* put() released r */
            json_object_put(o);
            return NULL;
        }
    }
    return o;
}

/* ---- scoring ------------------------------------------------------------- */

static bool append_string(json_object *a, const char *s)
{
    json_object *v = json_object_new_string(s);
    if (v == NULL || json_object_array_add(a, v) != 0) {
        json_object_put(v);
        return false;
    }
    return true;
}

static repo_sums *repo_slot(repo_sums *repos, size_t *n, const char *repo)
{
    for (size_t i = 0; i < *n; i++)
        if (strcmp(repos[i].repo, repo) == 0) return &repos[i];
    memset(&repos[*n], 0, sizeof repos[*n]);
    repos[*n].repo = repo;
    return &repos[(*n)++];
}

int cn_eval_score(const cn_eval_dataset *d, const cn_eval_preds *p, json_object **metrics)
{
    level_sums overall[CN_EVAL_LEVELS];
    repo_sums *repos = calloc(d->len ? d->len : 1, sizeof *repos); /* at most one a row */
    repo_sums *langs = calloc(d->len ? d->len : 1, sizeof *langs);
    json_object *m = json_object_new_object(), *missing = json_object_new_array();
    size_t nrepos = 0, nlangs = 0, predicted = 0;
    bool okay = repos && langs && m && missing;

    *metrics = NULL;
    memset(overall, 0, sizeof overall);
    for (size_t i = 0; okay && i < d->len; i++) {
        const cn_eval_instance *in = &d->items[i];
        const cn_eval_pred *pred = cn_eval_preds_find(p, in->instance_id);
        repo_sums *rs = repo_slot(repos, &nrepos, in->repo);
        repo_sums *ls = in->language ? repo_slot(langs, &nlangs, in->language) : NULL;

        rs->instances++;
        if (ls) ls->instances++;
        if (pred)
            predicted++;
        else
            okay = append_string(missing, in->instance_id);
        for (int l = 0; l < CN_EVAL_LEVELS; l++) {
            const int *ks;
            size_t nks = cn_eval_level_ks((cn_eval_level)l, &ks);
            if (in->gold[l].len == 0) continue;
            score_one(&in->gold[l], pred ? &pred->found[l] : NULL, ks, nks, &overall[l]);
            score_one(&in->gold[l], pred ? &pred->found[l] : NULL, ks, nks, &rs->lv[l]);
            if (ls) score_one(&in->gold[l], pred ? &pred->found[l] : NULL, ks, nks, &ls->lv[l]);
        }
    }
    okay = okay && put(m, "instances", json_object_new_int64((int64_t)d->len)) &&
           put(m, "predicted", json_object_new_int64((int64_t)predicted));
    if (okay) {
        okay = put(m, "missing", missing);
        missing = NULL;
    }
    okay = okay && put(m, "overall", levels_json(overall)) && put(m, "per_repo", per_group_json(repos, nrepos));
    if (okay && nlangs) okay = put(m, "per_language", per_group_json(langs, nlangs));
    if (okay && cn_eval__ranged(d)) okay = put(m, "localization", cn_eval__score_ranges(d, p));
    free(repos);
    free(langs);
    json_object_put(missing);
    if (!okay) {
        json_object_put(m);
        return cn_error_set(CN_ENOMEM, "eval: out of memory scoring %zu instances", d->len);
    }
    *metrics = m;
    return 0;
}
