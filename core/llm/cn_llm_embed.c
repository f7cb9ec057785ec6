/* SPDX-License-Identifier: Apache-2.0 */
/* Embeddings: one request for the caller's batch; rows are put back in
 * input order by their "index" and checked for count and width. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cn_llm.h"

#define ENDPOINT "embeddings"

static json_object *build_request(const cn_model *m, const char *const *texts, size_t n,
                                  size_t dimensions)
{
    json_object *body = json_object_new_object(), *input = json_object_new_array();

    if (body == NULL || input == NULL) {
        json_object_put(body);
        json_object_put(input);
        return NULL;
    }
    if (m->model != NULL) json_object_object_add(body, "model", json_object_new_string(m->model));
    for (size_t i = 0; i < n; i++) json_object_array_add(input, json_object_new_string(texts[i]));
    json_object_object_add(body, "input", input);
    if (dimensions > 0)
        json_object_object_add(body, "dimensions", json_object_new_int64((int64_t)dimensions));
    return body;
}

/* rows[i] = the data entry for input i.  Entries carry "index" (any order);
 * when none does, the order of the array is the order of the inputs. */
static int order_rows(json_object *data, size_t n, const char *base, json_object **rows)
{
    size_t got = json_object_array_length(data);

    if (got != n)
        return cn_error_set(CN_EPARSE, "%s: the response from %s has %zu embeddings for %zu "
                                       "inputs", ENDPOINT, base, got, n);
    for (size_t i = 0; i < n; i++) {
        json_object *row = json_object_array_get_idx(data, i), *idx;
        int64_t k;

        if (!json_object_is_type(row, json_type_object))
            return cn_error_set(CN_EPARSE, "%s: the response from %s: data[%zu] is not an object",
                                ENDPOINT, base, i);
        if (!json_object_object_get_ex(row, "index", &idx)) {
            rows[i] = row;
            continue;
        }
        k = json_object_get_int64(idx);
        if (!json_object_is_type(idx, json_type_int) || k < 0 || (uint64_t)k >= n)
            return cn_error_set(CN_EPARSE, "%s: the response from %s: data[%zu].index is %s; "
                                           "expected 0..%zu", ENDPOINT, base, i,
                                json_object_to_json_string(idx), n - 1);
        if (rows[k] != NULL && rows[k] != row)
            return cn_error_set(CN_EPARSE, "%s: the response from %s has index %lld twice",
                                ENDPOINT, base, (long long)k);
        rows[k] = row;
    }
    for (size_t i = 0; i < n; i++)
        if (rows[i] == NULL)
            return cn_error_set(CN_EPARSE, "%s: the response from %s has no embedding for input "
                                           "%zu (some rows carry \"index\", some do not)",
                                ENDPOINT, base, i);
    return 0;
}

static int row_vector(json_object *row, size_t i, const char *base, json_object **vec)
{
    if (!json_object_object_get_ex(row, "embedding", vec) ||
        !json_object_is_type(*vec, json_type_array))
        return cn_error_set(CN_EPARSE, "%s: the response from %s: the row for input %zu has no "
                                       "\"embedding\" array (base64 answers are not asked for "
                                       "and not accepted)", ENDPOINT, base, i);
    return 0;
}

static int copy_rows(json_object **rows, size_t n, size_t dimensions, const char *base,
                     float **vectors, size_t *dim)
{
    json_object *vec;
    size_t d;
    float *out;
    int rc;

    if ((rc = row_vector(rows[0], 0, base, &vec)) < 0) return rc;
    d = json_object_array_length(vec);
    if (d == 0)
        return cn_error_set(CN_EPARSE, "%s: the response from %s has an empty embedding",
                            ENDPOINT, base);
    if (dimensions > 0 && d != dimensions)
        return cn_error_set(CN_EPARSE, "%s: the response from %s has %zu dimensions, %zu were "
                                       "asked for; the model may not support \"dimensions\"",
                            ENDPOINT, base, d, dimensions);
    if (n > SIZE_MAX / sizeof(float) / d || (out = malloc(n * d * sizeof(float))) == NULL)
        return cn_error_set(CN_ENOMEM, "%s: out of memory for %zu x %zu floats", ENDPOINT, n, d);
    for (size_t i = 0; i < n; i++) {
        if ((rc = row_vector(rows[i], i, base, &vec)) < 0) goto fail;
        if (json_object_array_length(vec) != d) {
            rc = cn_error_set(CN_EPARSE, "%s: the response from %s: embedding %zu has %zu "
                                         "dimensions, embedding 0 has %zu", ENDPOINT, base, i,
                              json_object_array_length(vec), d);
            goto fail;
        }
        for (size_t j = 0; j < d; j++) {
            json_object *x = json_object_array_get_idx(vec, j);
            if (!json_object_is_type(x, json_type_double) && !json_object_is_type(x, json_type_int)) {
                rc = cn_error_set(CN_EPARSE, "%s: the response from %s: embedding %zu[%zu] is "
                                             "not a number", ENDPOINT, base, i, j);
                goto fail;
            }
            out[i * d + j] = (float)json_object_get_double(x);
        }
    }
    *vectors = out;
    *dim = d;
    return 0;
fail:
    free(out);
    return rc;
}

static int read_response(json_object *resp, size_t n, size_t dimensions, const char *base,
                         float **vectors, size_t *dim)
{
    json_object *data, **rows;
    int rc;

    if (!json_object_object_get_ex(resp, "data", &data) ||
        !json_object_is_type(data, json_type_array))
        return cn_error_set(CN_EPARSE, "%s: the response from %s has no \"data\" array; is the "
                                       "base URL an OpenAI-compatible endpoint?", ENDPOINT, base);
    if ((rows = calloc(n, sizeof *rows)) == NULL)
        return cn_error_set(CN_ENOMEM, "%s: out of memory", ENDPOINT);
    rc = order_rows(data, n, base, rows);
    if (rc == 0) rc = copy_rows(rows, n, dimensions, base, vectors, dim);
    free(rows);
    return rc;
}

int cn_llm_embed(cn_model *m, const char *const *texts, size_t n, size_t dimensions,
                 float **vectors, size_t *dim)
{
    cn_llm_call call = {ENDPOINT, 0, 0, 0, 0, -1, -1, -1};
    json_object *body, *resp = NULL, *usage = NULL;
    int rc;

    *vectors = NULL;
    *dim = 0;
    if (m == NULL) return cn_error_set(CN_EINVAL, "%s: no model handle", ENDPOINT);
    if (n == 0) return 0;
    if (texts == NULL) return cn_error_set(CN_EINVAL, "%s: no texts given", ENDPOINT);
    for (size_t i = 0; i < n; i++)
        if (texts[i] == NULL) return cn_error_set(CN_EINVAL, "%s: text %zu is NULL", ENDPOINT, i);
    if ((body = build_request(m, texts, n, dimensions)) == NULL)
        return cn_error_set(CN_ENOMEM, "%s: out of memory", ENDPOINT);
    rc = cn_llm__post(m, ENDPOINT, body, &call, &resp);
    json_object_put(body);
    if (rc == 0) {
        json_object_object_get_ex(resp, "usage", &usage);
        call.prompt_tokens = cn_llm__usage_int(usage, "prompt_tokens");
        rc = read_response(resp, n, dimensions, m->base_url, vectors, dim);
    }
    json_object_put(resp);
    call.ok = rc == 0;
    cn_llm__record(m, &call);
    return rc;
}
