/* SPDX-License-Identifier: Apache-2.0 */
/* cn_host.model: the model client behind JSON text and the host
 * allocator, with the core's thread-local error copied into the caller's
 * cn_error. */
#include <stdlib.h>
#include <string.h>

#include "../llm/cn_llm.h"
#include "../util/cn_util.h"
#include "cn_host.h"

/* Memory handed to a plugin comes from its host table; a NULL host (a
 * caller inside the core) gets malloc, which is what the core's host uses. */
static void *host_alloc(const cn_host *host, size_t n)
{
    if (host != NULL && host->alloc != NULL) return host->alloc(n ? n : 1);
    return malloc(n ? n : 1);
}

static int no_model(cn_error *err, const char *what)
{
    return cn_error_fill(err, CN_ENOCONTEXT, "%s: no model handle; configure the model (for "
                                             "chat: --model or CODENIB_MODEL)", what);
}

static int hm_open(const cn_host *host, const char *config_json, struct cn_model **out,
                   cn_error *err)
{
    (void)host;
    if (out == NULL) return cn_error_fill(err, CN_EINVAL, "model open: no place for the handle");
    if (cn_llm_open(config_json, CN_LLM_CHAT, out) < 0) return cn_error_export(err);
    return 0;
}

static void hm_close(const cn_host *host, struct cn_model *model)
{
    (void)host;
    cn_llm_close(model);
}

static const char *hm_name(const struct cn_model *model)
{
    return cn_llm_model_name(model);
}

static int hm_chat(const cn_host *host, const struct cn_model *model, const char *request_json,
                   char **response_json, cn_error *err)
{
    json_object *req = NULL, *msg = NULL;
    char *text;
    size_t len;
    int rc;

    if (response_json == NULL) return cn_error_fill(err, CN_EINVAL, "chat: no place for the answer");
    *response_json = NULL;
    if (model == NULL) return no_model(err, "chat");
    if (cn_json_parse(request_json, "the chat request", &req) < 0) return cn_error_export(err);
    /* The handle's only mutable state is its locked usage log. */
    rc = cn_llm_chat((struct cn_model *)model, req, &msg);
    json_object_put(req);
    if (rc < 0) return cn_error_export(err);
    text = cn_json_text(msg, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
    len = text ? strlen(text) : 0;
    if (text == NULL || (*response_json = host_alloc(host, len + 1)) == NULL) {
        free(text);
        json_object_put(msg);
        return cn_error_fill(err, CN_ENOMEM, "chat: out of memory");
    }
    memcpy(*response_json, text, len + 1);
    free(text);
    json_object_put(msg);
    return 0;
}

static int hm_embed(const cn_host *host, const struct cn_model *model, const char *const *texts,
                    size_t n, size_t dimensions, float **vectors, size_t *dim, cn_error *err)
{
    float *v = NULL;
    size_t d = 0;

    if (vectors == NULL || dim == NULL)
        return cn_error_fill(err, CN_EINVAL, "embeddings: no place for the vectors");
    *vectors = NULL;
    *dim = 0;
    if (model == NULL) return no_model(err, "embeddings");
    if (cn_llm_embed((struct cn_model *)model, texts, n, dimensions, &v, &d) < 0)
        return cn_error_export(err);
    if (n > 0) {
        *vectors = host_alloc(host, n * d * sizeof(float));
        if (*vectors == NULL) {
            free(v);
            return cn_error_fill(err, CN_ENOMEM, "embeddings: out of memory");
        }
        memcpy(*vectors, v, n * d * sizeof(float));
    }
    free(v);
    *dim = d;
    return 0;
}

static int hm_rerank(const cn_host *host, const struct cn_model *model, const char *query,
                     const char *const *documents, size_t n, double *scores, cn_error *err)
{
    (void)host;
    if (model == NULL) return no_model(err, "rerank");
    if (cn_llm_rerank((struct cn_model *)model, query, documents, n, scores) < 0)
        return cn_error_export(err);
    return 0;
}

static const cn_model_services model_services = {
    sizeof(cn_model_services), hm_open, hm_close, hm_name, hm_chat, hm_embed, hm_rerank,
};

const cn_model_services *cn_host_model_services(void)
{
    return &model_services;
}
