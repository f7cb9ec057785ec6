/* SPDX-License-Identifier: Apache-2.0 */
/* BM25 over groups of documents (cn_bm25_group_scores): a group scores as
 * the one document its members would make together, checked against an
 * index built of those concatenations; repeated query tokens count once;
 * documents left out count nowhere; no token, no group and no match give
 * zeros, not errors. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "index/cn_bm25.h"
#include "util/cn_util.h"
#include "tap.h"

static cn_bm25 *build(const char *dir, const char *name, const char *const *docs, uint32_t n)
{
    cn_bm25_builder *b = NULL;
    cn_bm25 *idx = NULL;
    char *path = cn_path_join(dir, name);
    if (cn_bm25_builder_new(1.2, 0.75, &b) < 0) return NULL;
    for (uint32_t d = 0; d < n; d++)
        if (docs[d] != NULL) cn_bm25_add(b, d, docs[d], strlen(docs[d]));
    if (cn_bm25_write(b, n, path) == 0) cn_bm25_open(path, &idx);
    cn_bm25_builder_free(b);
    unlink(path);
    free(path);
    return idx;
}

/* The score of doc in a plain search, 0 when it is not among the hits. */
static double plain_score(const cn_bm25 *idx, const char *query, uint32_t doc)
{
    cn_bm25_hit hits[16];
    size_t n = 0;
    cn_bm25_search(idx, query, 16, NULL, NULL, hits, &n);
    for (size_t i = 0; i < n; i++)
        if (hits[i].doc == doc) return hits[i].score;
    return 0;
}

int main(void)
{
    char dir[] = "/tmp/cn-bm25g-XXXXXX";
    /* nodes: three of one file, two of another, one of a third, and one
     * of a test file the caller leaves out */
    static const char *const nodes[] = {"alpha beta", "beta gamma", "delta", "alpha alpha", "epsilon",
                                        "zeta beta", "alpha alpha alpha beta"};
    static const uint32_t group_of[] = {0, 0, 0, 1, 1, 2, UINT32_MAX};
    static const char *const whole[] = {"alpha beta beta gamma delta", "alpha alpha epsilon", "zeta beta"};
    cn_bm25 *g, *w;
    double s[3], again[3];

    if (mkdtemp(dir) == NULL) return 1;
    g = build(dir, "nodes.bin", nodes, 7);
    w = build(dir, "whole.bin", whole, 3);
    rmdir(dir);
    ok(g != NULL && w != NULL, "both indexes built");
    if (g == NULL || w == NULL) return tap_done();

    is_int(cn_bm25_group_scores(g, "alpha beta", group_of, 3, s), 0, "group scores");
    for (int i = 0; i < 3; i++) {
        char what[64];
        snprintf(what, sizeof what, "group %d scores as its whole text (%.6f)", i, s[i]);
        ok(fabs(s[i] - plain_score(w, "alpha beta", (uint32_t)i)) < 1e-9, what);
    }
    ok(s[0] > 0 && s[1] > 0 && s[2] > 0, "every group matches");

    is_int(cn_bm25_group_scores(g, "alpha beta alpha BETA beta", group_of, 3, again), 0, "repeated tokens");
    ok(memcmp(s, again, sizeof s) == 0, "a token repeated in the query counts once");

    is_int(cn_bm25_group_scores(g, "gamma", group_of, 3, s), 0, "one token");
    ok(s[0] > 0 && s[1] == 0 && s[2] == 0, "only the group holding it scores");

    is_int(cn_bm25_group_scores(g, "nothing here", group_of, 3, s), 0, "unknown tokens");
    ok(s[0] == 0 && s[1] == 0 && s[2] == 0, "no known token: all zero");
    is_int(cn_bm25_group_scores(g, NULL, group_of, 3, s), 0, "no query: all zero");
    is_int(cn_bm25_group_scores(g, "alpha", group_of, 0, s), 0, "no group: nothing to do");

    {   /* the left-out node holds "alpha" three times: leaving it out must
         * change nothing, as if it were not in the index */
        static const uint32_t all_out[] = {UINT32_MAX, UINT32_MAX, UINT32_MAX, UINT32_MAX,
                                           UINT32_MAX, UINT32_MAX, 0};
        double one;
        is_int(cn_bm25_group_scores(g, "alpha", all_out, 1, &one), 0, "only the test node");
        ok(one > 0, "the left-out node scores when it is the group");
        cn_bm25_group_scores(g, "alpha", group_of, 3, s);
        ok(fabs(s[0] - plain_score(w, "alpha", 0)) < 1e-9 && fabs(s[1] - plain_score(w, "alpha", 1)) < 1e-9,
           "a left-out node changes neither df nor lengths");
    }
    cn_bm25_close(g);
    cn_bm25_close(w);
    return tap_done();
}
