/* SPDX-License-Identifier: Apache-2.0 */
/* The model client: one HTTP client over libcurl for OpenAI-compatible
 * endpoints -- chat completions (tools, tool_choice, structured output),
 * embeddings and rerank -- with timeouts, bounded retries of transient
 * failures and usage accounting per call.  Skills and backends reach it
 * through cn_host.model (codenib/model.h); the agent runtime calls it
 * directly.
 *
 * Configuration (cn_llm_open), every field optional; an option wins over
 * the environment, CODENIB_* wins over OPENAI_*, empty variables count as
 * unset:
 *   "base_url"   CODENIB_BASE_URL, OPENAI_BASE_URL, https://api.openai.com/v1;
 *                for CN_LLM_RERANK CODENIB_RERANK_BASE_URL comes first.
 *                http:// or https://; "/v1" and a trailing "/" are optional
 *                in the sense that requests go to "{base}/chat/completions",
 *                "{base}/embeddings", "{base}/rerank" with exactly one "/".
 *   "api_key"    CODENIB_API_KEY, OPENAI_API_KEY; none: no Authorization
 *                header.  For CN_LLM_RERANK with its own base URL (from
 *                CODENIB_RERANK_BASE_URL) the key comes only from
 *                CODENIB_RERANK_API_KEY, so the OpenAI key is never sent to
 *                a different host by accident.
 *   "api_key_env" name of a variable holding the key (wins over the
 *                environment fallbacks; naming an unset variable is an error)
 *   "model"      CN_LLM_CHAT: CODENIB_MODEL, default "gpt-4o-mini";
 *                CN_LLM_EMBED: CODENIB_EMBED_MODEL, default
 *                "text-embedding-3-small"; CN_LLM_RERANK: CODENIB_RERANK_MODEL,
 *                default none (the "model" member is then left out, which
 *                TEI accepts).
 *   "timeout_ms"          total time of one attempt (default 120000)
 *   "connect_timeout_ms"  (default 10000)
 *   "max_retries"         retries of transient failures (default 2, max 10)
 *   "backoff_ms"          base of the jittered exponential backoff between
 *                         retries (default 500; the n-th retry waits a
 *                         random time in [b*2^(n-1)/2, b*2^(n-1)], at most
 *                         30 s)
 *   "max_response_mb"     the largest reply accepted, in MiB (1 to 4096;
 *                         default CODENIB_MAX_RESPONSE_MB, else 16 for chat
 *                         and rerank, 128 for embed): a larger one, or one
 *                         with more than one JSON value per
 *                         CN_LLM_BYTES_PER_VALUE bytes of it, is refused
 *                         with CN_ENETWORK before it is parsed
 *   "role"                "chat", "embed" or "rerank": overrides the role
 *                         argument (the host's model service opens with it)
 * Other fields are ignored (a backend may pass its whole configuration).
 *
 * Transport: every attempt has a connect and a total timeout.  Retried:
 * connection failures (refused, reset, closed without an answer, timeouts)
 * and HTTP 408, 429 and 5xx.  A Retry-After header (seconds or HTTP date)
 * replaces the backoff for that wait, capped at CN_LLM_RETRY_AFTER_MAX_S so
 * that a misbehaving server cannot stall a run.  Other 4xx fail at once.
 *
 * Error codes: CN_ETIMEOUT (time limit), CN_ENETWORK (connection failures,
 * 408/429/5xx after the retries), CN_EDENIED (401/403), CN_ENOTFOUND (404),
 * CN_EINVAL (other 4xx, bad arguments or configuration), CN_EPARSE (a
 * response that is not JSON or lacks what the endpoint must return).
 * Messages name the endpoint and the URL, the HTTP status and quote the
 * server's own message. */
#ifndef CN_LLM_H
#define CN_LLM_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

#include <codenib/model.h>

#include "../util/cn_util.h"

typedef struct cn_model cn_model;

/* Which defaults and environment variables a handle takes when its
 * configuration leaves a field out. */
typedef enum cn_llm_role {
    CN_LLM_CHAT = 0,
    CN_LLM_EMBED = 1,
    CN_LLM_RERANK = 2
} cn_llm_role;

/* One HTTP exchange as recorded by the client. */
typedef struct cn_llm_call {
    const char *endpoint;        /* "chat/completions", "embeddings", "rerank" */
    int http_status;             /* of the last attempt; 0: no answer */
    int attempts;                /* 1 + retries */
    int ok;
    double seconds;              /* wall time, retries and waits included */
    int64_t prompt_tokens;       /* -1 when the endpoint did not say */
    int64_t completion_tokens;
    int64_t cached_tokens;
} cn_llm_call;

/* Opens a handle from a JSON object (NULL: {}); see cn_model_services.open
 * for the fields and their environment fallbacks.  Errors name the field. */
int cn_llm_open(const char *config_json, cn_llm_role role, cn_model **out);
void cn_llm_close(cn_model *m);
const char *cn_llm_model_name(const cn_model *m);
const char *cn_llm_base_url(const cn_model *m);

/* POST chat/completions with `request` (borrowed; "model" added when
 * absent).  *message: the first choice's message plus "finish_reason" and
 * "usage" members, type-checked: "role" a string ("assistant" when absent),
 * "content" a string or null, "tool_calls" absent (null and [] are
 * dropped) or an array of at most CN_LLM_MAX_TOOL_CALLS {id string, type
 * "function", function {name string, arguments string}}; anything else is
 * CN_EPARSE naming the member. */
int cn_llm_chat(cn_model *m, json_object *request, json_object **message);
int cn_llm_embed(cn_model *m, const char *const *texts, size_t n, size_t dimensions, float **vectors,
                 size_t *dim);
int cn_llm_rerank(cn_model *m, const char *query, const char *const *documents, size_t n,
                  double *scores);

/* Calls made through a handle, oldest first (thread-safe snapshot copy:
 * *calls is malloc'd). */
int cn_llm_calls(const cn_model *m, cn_llm_call **calls, size_t *n);

/* A chat handle whose requests go to an application's function instead of
 * an HTTP endpoint (cn_chat_client of <codenib/codenib.h>; cn_llm_custom.c).
 * cn_llm_chat() sends it the same request body and checks its reply as it
 * checks a server's; embed and rerank through it are CN_EUNSUPPORTED.  The
 * client table is copied; its data must outlive the handle. */
struct cn_chat_client;
int cn_llm_open_client(const struct cn_chat_client *client, cn_model **out);
/* A new reference to a handle (closed when the last one is). */
cn_model *cn_llm_ref(cn_model *m);

const cn_model_services *cn_host_model_services(void);

/* ---- inside core/llm ------------------------------------------------------
 * Shared by the client files; not for other parts of the core. */

#define CN_LLM_RETRY_AFTER_MAX_S 60      /* cap on a server's Retry-After */
#define CN_LLM_BACKOFF_MAX_MS 30000      /* cap on one backoff wait */
/* A parsed JSON value costs json-c some 70 bytes: a reply may hold one
 * value per this many bytes of max_response_bytes, which bounds the memory
 * of any reply to about ten times the limit whatever its shape (a batch of
 * embeddings has one value per 8 to 20 bytes). */
#define CN_LLM_BYTES_PER_VALUE 8
/* Tool calls taken from one assistant message (models make a handful). */
#define CN_LLM_MAX_TOOL_CALLS 128

struct cn_model {
    cn_llm_role role;
    char *base_url;          /* as configured, without trailing '/' */
    char *api_key;           /* NULL: no Authorization header */
    char *model;             /* NULL (rerank only): not sent */
    long timeout_ms;
    long connect_timeout_ms;
    int max_retries;
    long backoff_ms;
    size_t max_response_bytes;   /* larger replies are refused */
    /* An application's chat function (cn_llm_open_client), or NULL. */
    int (*client_chat)(void *data, const char *request_json, char **response_json, cn_error *err);
    void *client_data;
    int refs;                    /* cn_llm_ref()s + 1 */
    /* Usage log; the handle is shared by concurrent callers. */
    pthread_mutex_t lock;
    cn_llm_call *calls;
    size_t ncalls, capcalls;
};

/* POSTs `body` to {base}/{endpoint}, retrying transient failures, and
 * parses the 2xx answer (*response: any JSON value, never NULL on
 * success).  Fills call->endpoint, http_status, attempts and seconds. */
/* cn_llm__post for a client handle: the body to its function, its reply
 * parsed (cn_llm_custom.c). */
int cn_llm__client_post(cn_model *m, const char *endpoint, json_object *body, cn_llm_call *call,
                        json_object **response);
int cn_llm__post(cn_model *m, const char *endpoint, json_object *body, cn_llm_call *call,
                 json_object **response);
/* Appends to the usage log (the call is copied). */
void cn_llm__record(cn_model *m, const cn_llm_call *call);
/* "{base}/{endpoint}" with exactly one '/' between them (malloc'd). */
char *cn_llm__url(const char *base, const char *endpoint);
/* Milliseconds to wait before retry number `retry` (1-based): the server's
 * Retry-After (seconds, > 0) capped at CN_LLM_RETRY_AFTER_MAX_S, else
 * jittered exponential backoff from backoff_ms.  *seed drives the jitter. */
long cn_llm__retry_delay_ms(long backoff_ms, int retry, long retry_after_s, unsigned *seed);
/* Integer member `key` of object o, or -1 when absent or not a number. */
int64_t cn_llm__usage_int(json_object *o, const char *key);

#endif /* CN_LLM_H */
