/* SPDX-License-Identifier: Apache-2.0 */
/* Rerank: one request shape that both TEI and Jina/Cohere accept, and
 * both of their answer shapes.
 *
 * The request carries the documents twice, as "documents" (Jina, Cohere,
 * vLLM) and as "texts" (TEI), because each of those servers reads its own
 * name and ignores the other; top_n is n so no document is dropped.
 * Answers: TEI  [{"index": i, "score": s}, ...]
 *          Jina/Cohere {"results": [{"index": i, "relevance_score": s}, ...]}
 * Documents the answer leaves out score -INFINITY. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "cn_llm.h"

#define ENDPOINT "rerank"

static json_object *string_array(const char *const *items, size_t n)
{
    json_object *a = json_object_new_array();
    for (size_t i = 0; a != NULL && i < n; i++)
        json_object_array_add(a, json_object_new_string(items[i]));
    return a;
}

static json_object *build_request(const cn_model *m, const char *query,
                                  const char *const *documents, size_t n)
{
    json_object *body = json_object_new_object();

    if (body == NULL) return NULL;
    if (m->model != NULL) json_object_object_add(body, "model", json_object_new_string(m->model));
    json_object_object_add(body, "query", json_object_new_string(query));
    json_object_object_add(body, "documents", string_array(documents, n));
    json_object_object_add(body, "texts", string_array(documents, n));
    json_object_object_add(body, "top_n", json_object_new_int64((int64_t)n));
    return body;
}

static int read_entry(json_object *e, size_t pos, size_t n, const char *base, double *scores)
{
    json_object *idx, *s;
    int64_t k;

    if (!json_object_is_type(e, json_type_object) || !json_object_object_get_ex(e, "index", &idx) ||
        !json_object_is_type(idx, json_type_int))
        return cn_error_set(CN_EPARSE, "%s: the response from %s: result %zu has no integer "
                                       "\"index\"", ENDPOINT, base, pos);
    k = json_object_get_int64(idx);
    if (k < 0 || (uint64_t)k >= n)
        return cn_error_set(CN_EPARSE, "%s: the response from %s: result %zu has index %lld; "
                                       "%zu documents were sent", ENDPOINT, base, pos,
                            (long long)k, n);
    if (!json_object_object_get_ex(e, "relevance_score", &s) &&
        !json_object_object_get_ex(e, "score", &s))
        return cn_error_set(CN_EPARSE, "%s: the response from %s: result %zu has neither "
                                       "\"relevance_score\" nor \"score\"", ENDPOINT, base, pos);
    if (!json_object_is_type(s, json_type_double) && !json_object_is_type(s, json_type_int))
        return cn_error_set(CN_EPARSE, "%s: the response from %s: the score of result %zu is not "
                                       "a number", ENDPOINT, base, pos);
    if (!(isinf(scores[k]) && scores[k] < 0))
        return cn_error_set(CN_EPARSE, "%s: the response from %s scores document %lld twice",
                            ENDPOINT, base, (long long)k);
    scores[k] = json_object_get_double(s);
    return 0;
}

static int read_response(json_object *resp, size_t n, const char *base, double *scores)
{
    json_object *results = resp;
    int rc;

    if (json_object_is_type(resp, json_type_object) &&
        !json_object_object_get_ex(resp, "results", &results))
        results = NULL;
    if (!json_object_is_type(results, json_type_array))
        return cn_error_set(CN_EPARSE, "%s: the response from %s is neither a list of "
                                       "{index, score} (TEI) nor an object with a \"results\" "
                                       "list (Jina, Cohere)", ENDPOINT, base);
    if (json_object_array_length(results) > n)
        return cn_error_set(CN_EPARSE, "%s: the response from %s has %zu results for %zu "
                                       "documents", ENDPOINT, base,
                            json_object_array_length(results), n);
    for (size_t i = 0; i < json_object_array_length(results); i++)
        if ((rc = read_entry(json_object_array_get_idx(results, i), i, n, base, scores)) < 0)
            return rc;
    return 0;
}

static void read_usage(json_object *resp, cn_llm_call *call)
{
    json_object *usage = NULL;

    if (!json_object_is_type(resp, json_type_object)) return;
    json_object_object_get_ex(resp, "usage", &usage);
    call->prompt_tokens = cn_llm__usage_int(usage, "prompt_tokens");
    if (call->prompt_tokens < 0) call->prompt_tokens = cn_llm__usage_int(usage, "total_tokens");
}

int cn_llm_rerank(cn_model *m, const char *query, const char *const *documents, size_t n,
                  double *scores)
{
    cn_llm_call call = {ENDPOINT, 0, 0, 0, 0, -1, -1, -1};
    json_object *body, *resp = NULL;
    int rc;

    if (m == NULL) return cn_error_set(CN_EINVAL, "%s: no model handle", ENDPOINT);
    if (query == NULL) return cn_error_set(CN_EINVAL, "%s: no query given", ENDPOINT);
    if (n == 0) return 0;
    if (documents == NULL || scores == NULL)
        return cn_error_set(CN_EINVAL, "%s: no documents or no room for scores", ENDPOINT);
    for (size_t i = 0; i < n; i++) {
        if (documents[i] == NULL)
            return cn_error_set(CN_EINVAL, "%s: document %zu is NULL", ENDPOINT, i);
        scores[i] = -INFINITY;
    }
    if ((body = build_request(m, query, documents, n)) == NULL)
        return cn_error_set(CN_ENOMEM, "%s: out of memory", ENDPOINT);
    rc = cn_llm__post(m, ENDPOINT, body, &call, &resp);
    json_object_put(body);
    if (rc == 0) {
        read_usage(resp, &call);
        rc = read_response(resp, n, m->base_url, scores);
    }
    json_object_put(resp);
    call.ok = rc == 0;
    cn_llm__record(m, &call);
    if (rc < 0)
        for (size_t i = 0; i < n; i++) scores[i] = -INFINITY;
    return rc;
}
