/* SPDX-License-Identifier: Apache-2.0 */
/* codenib SDK: model services (cn_host.model) -- chat, embeddings and
 * rerank over OpenAI-compatible HTTP endpoints.
 *
 * A model is an opaque handle.  A skill gets the ones the user configured
 * in its context (cn_skill_context.chat, .embedder, .reranker); a backend
 * that needs its own endpoint (the embed-openai embedder, for instance)
 * opens one with open() and closes it with close().
 *
 * Requests and responses are JSON text in the OpenAI shapes, so no HTTP or
 * JSON library type crosses the plugin boundary.  The host does the
 * transport: base URL, key, model name, timeouts, retries of transient
 * failures (connection errors, 408, 429, 5xx, honouring Retry-After) with
 * jittered exponential backoff, and usage accounting per call. */
#ifndef CODENIB_MODEL_H
#define CODENIB_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include <codenib/errors.h>
#include <codenib/host.h>

#ifdef __cplusplus
extern "C" {
#endif

struct cn_model;

typedef struct cn_model_services {
    uint32_t struct_size;

    /* Opens a model handle.  config_json is an object; every field is
     * optional and falls back to the environment, then to defaults:
     *   "base_url"            OPENAI_BASE_URL / CODENIB_BASE_URL
     *                         (default https://api.openai.com/v1)
     *   "api_key"             OPENAI_API_KEY / CODENIB_API_KEY
     *   "api_key_env"         name of a variable holding the key
     *   "model"               CODENIB_MODEL (chat), CODENIB_EMBED_MODEL, ...
     *   "timeout_ms"          total time per attempt (default 120000)
     *   "connect_timeout_ms"  (default 10000)
     *   "max_retries"         retries of transient failures (default 2)
     *   "backoff_ms"          base of the jittered exponential backoff
     *                         (default 500)
     *   "role"                "chat" (default), "embed" or "rerank": which
     *                         environment variables fill the gaps --
     *                         CODENIB_EMBED_MODEL for embed; for rerank
     *                         CODENIB_RERANK_MODEL, CODENIB_RERANK_BASE_URL
     *                         and, with that URL, only CODENIB_RERANK_API_KEY
     *                         (an OpenAI key is never sent to another host)
     * Unknown fields are ignored, so a backend may pass its whole
     * configuration.  The handle is released with close(). */
    int (*open)(const cn_host *host, const char *config_json, struct cn_model **out,
                cn_error *err);
    void (*close)(const cn_host *host, struct cn_model *model);
    /* The model name requests are sent with ("gpt-4o-mini"). */
    const char *(*name)(const struct cn_model *model);

    /* POST /chat/completions.  request_json is a chat-completions body
     * (messages, and optionally tools, tool_choice, response_format,
     * temperature, max_tokens); "model" is filled in when absent.  On
     * success *response_json (host->alloc) is the first choice's message
     * object with two members added: "finish_reason" and "usage"
     * ({"prompt_tokens", "completion_tokens", "cached_tokens"}). */
    int (*chat)(const cn_host *host, const struct cn_model *model, const char *request_json,
                char **response_json, cn_error *err);

    /* POST /embeddings for n texts (the caller batches).  *vectors
     * (host->alloc) holds n rows of *dim floats, in input order.  A
     * response whose rows disagree in length, or whose count differs from
     * n, is an error.  dimensions > 0 asks the endpoint for that many
     * dimensions (the "dimensions" request field) and checks the answer. */
    int (*embed)(const cn_host *host, const struct cn_model *model, const char *const *texts,
                 size_t n, size_t dimensions, float **vectors, size_t *dim, cn_error *err);

    /* POST /rerank (TEI / Jina / Cohere request shape: query, documents
     * or texts, top_n).  scores[i] receives the relevance of documents[i]
     * (documents the endpoint left out get -INFINITY). */
    int (*rerank)(const cn_host *host, const struct cn_model *model, const char *query,
                  const char *const *documents, size_t n, double *scores, cn_error *err);
} cn_model_services;

#ifdef __cplusplus
}
#endif

#endif /* CODENIB_MODEL_H */
