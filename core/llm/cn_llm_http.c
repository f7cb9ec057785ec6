/* SPDX-License-Identifier: Apache-2.0 */
/* One JSON POST over libcurl (loaded on first use: cn_curl.h): connect
 * and total timeouts, retries of transient failures with Retry-After or
 * jittered exponential backoff, and error messages that name the endpoint
 * and quote the server. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <codenib/version.h>

#include "../plugin/cn_host.h"
#include "cn_curl.h"
#include "cn_llm.h"

#define QUOTE_MAX 300

typedef struct attempt {
    const cn_curl_api *cu;
    CURL *curl;
    size_t limit;    /* m->max_response_bytes */
    cn_buf body;
    int too_big;
    CURLcode cc;
    long status;
    long retry_after_s;
    char errbuf[CURL_ERROR_SIZE];
} attempt;

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

long cn_llm__retry_delay_ms(long backoff_ms, int retry, long retry_after_s, unsigned *seed)
{
    long d = backoff_ms, half;

    if (retry_after_s > 0)
        return (retry_after_s < CN_LLM_RETRY_AFTER_MAX_S ? retry_after_s
                                                         : CN_LLM_RETRY_AFTER_MAX_S) * 1000L;
    for (int i = 1; i < retry && d < CN_LLM_BACKOFF_MAX_MS; i++) d *= 2;
    if (d > CN_LLM_BACKOFF_MAX_MS) d = CN_LLM_BACKOFF_MAX_MS;
    /* Jitter over the upper half keeps concurrent clients from retrying in
     * lockstep while still growing the wait. */
    half = d / 2;
    return half > 0 ? d - (long)((unsigned long)rand_r(seed) % (unsigned long)(half + 1)) : d;
}

static size_t on_write(char *data, size_t size, size_t nmemb, void *user)
{
    attempt *a = user;
    size_t n = size * nmemb;

    if (a->body.cap == 0) {
        /* The announced size is refused before anything is kept, and when
         * it fits the buffer is made to measure: grown by doubling, a body
         * would cost up to twice its size. */
        curl_off_t cl = -1;
        if (a->cu->easy_getinfo(a->curl, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &cl) != CURLE_OK) cl = -1;
        if (cl > 0 && (uint64_t)cl > a->limit) {
            a->too_big = 1;
            return 0;
        }
        if (cl > 0 && (a->body.data = malloc((size_t)cl + 1)) != NULL) {
            a->body.cap = (size_t)cl + 1;
            a->body.data[0] = '\0';
        }
    }
    if (n > a->limit - a->body.len) {
        a->too_big = 1;
        return 0;
    }
    return cn_buf_append(&a->body, data, n) < 0 ? 0 : n;
}

static struct curl_slist *make_headers(const cn_curl_api *cu, const cn_model *m, int *oom)
{
    struct curl_slist *h = NULL, *t;
    /* "Expect:" stops libcurl from waiting for 100-continue on big bodies,
     * which many small servers never send. */
    static const char *const fixed[] = {"Content-Type: application/json",
                                        "Accept: application/json", "Expect:"};

    *oom = 0;
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++) {
        if ((t = cu->slist_append(h, fixed[i])) == NULL) goto fail;
        h = t;
    }
    if (m->api_key != NULL) {
        cn_buf b = CN_BUF_INIT;
        cn_buf_printf(&b, "Authorization: Bearer %s", m->api_key);
        t = b.oom ? NULL : cu->slist_append(h, b.data);
        cn_buf_free(&b);
        if (t == NULL) goto fail;
        h = t;
    }
    return h;
fail:
    cu->slist_free_all(h);
    *oom = 1;
    return NULL;
}

static void do_attempt(const cn_curl_api *cu, const cn_model *m, const char *url, struct curl_slist *hdrs,
                       const char *body, size_t len, attempt *a)
{
    CURL *c = cu->easy_init();
    curl_off_t ra = 0;

    if (c == NULL) {
        a->cc = CURLE_OUT_OF_MEMORY;
        return;
    }
    a->cu = cu;
    a->curl = c;
    a->limit = m->max_response_bytes;
    cu->easy_setopt(c, CURLOPT_URL, url);
    /* No signals: the client runs in threads, and timeouts must not rely
     * on SIGALRM. */
    cu->easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    cu->easy_setopt(c, CURLOPT_POST, 1L);
    cu->easy_setopt(c, CURLOPT_POSTFIELDS, body);
    cu->easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
    cu->easy_setopt(c, CURLOPT_HTTPHEADER, hdrs);
    cu->easy_setopt(c, CURLOPT_USERAGENT, "codenib/" CN_VERSION_STRING);
    cu->easy_setopt(c, CURLOPT_TIMEOUT_MS, m->timeout_ms);
    cu->easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, m->connect_timeout_ms);
    cu->easy_setopt(c, CURLOPT_WRITEFUNCTION, on_write);
    cu->easy_setopt(c, CURLOPT_WRITEDATA, a);
    cu->easy_setopt(c, CURLOPT_ERRORBUFFER, a->errbuf);
    cu->easy_setopt(c, CURLOPT_ACCEPT_ENCODING, "");
    a->cc = cu->easy_perform(c);
    cu->easy_getinfo(c, CURLINFO_RESPONSE_CODE, &a->status);
    /* Seconds form or HTTP date, both turned into seconds by libcurl. */
    if (cu->easy_getinfo(c, CURLINFO_RETRY_AFTER, &ra) == CURLE_OK && ra > 0)
        a->retry_after_s = ra > 86400 ? 86400 : (long)ra;
    cu->easy_cleanup(c);
}

static int transient_curl(CURLcode cc)
{
    switch (cc) {
    case CURLE_COULDNT_RESOLVE_PROXY:
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_CONNECT:
    case CURLE_OPERATION_TIMEDOUT:
    case CURLE_GOT_NOTHING:
    case CURLE_SEND_ERROR:
    case CURLE_RECV_ERROR:
    case CURLE_PARTIAL_FILE:
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM:
        return 1;
    default:
        return 0;
    }
}

static int transient(const attempt *a)
{
    if (a->cc != CURLE_OK) return transient_curl(a->cc);
    return a->status == 408 || a->status == 429 || (a->status >= 500 && a->status <= 599);
}

static void quote_text(const char *s, size_t len, char *out, size_t cap)
{
    size_t o = 0, i;

    while (len > 0 && (*s == ' ' || *s == '\n' || *s == '\r' || *s == '\t')) s++, len--;
    for (i = 0; i < len && o + 4 < cap && o < QUOTE_MAX; i++)
        out[o++] = (unsigned char)s[i] < 0x20 ? ' ' : s[i];
    if (i < len && o + 4 < cap) {
        memcpy(out + o, "...", 3);
        o += 3;
    }
    out[o] = '\0';
}

static const char *string_member(json_object *o, const char *key)
{
    json_object *v;
    if (json_object_is_type(o, json_type_object) && json_object_object_get_ex(o, key, &v) &&
        json_object_is_type(v, json_type_string))
        return json_object_get_string(v);
    return NULL;
}

/* The server's own words: OpenAI {"error":{"message"}}, TEI {"error":"..."},
 * FastAPI {"detail":"..."}, others {"message":"..."}; else the raw text. */
static void server_said(const cn_buf *body, char *out, size_t cap)
{
    json_object *o, *e;
    const char *s = NULL;

    o = json_tokener_parse(body->data);
    if (json_object_object_get_ex(o, "error", &e)) s = string_member(e, "message");
    if (s == NULL) s = string_member(o, "error");
    if (s == NULL) s = string_member(o, "detail");
    if (s == NULL) s = string_member(o, "message");
    if (s != NULL) quote_text(s, strlen(s), out, cap);
    else quote_text(body->data, body->len, out, cap);
    json_object_put(o);
}

static int status_code(long status)
{
    if (status == 401 || status == 403) return CN_EDENIED;
    if (status == 404) return CN_ENOTFOUND;
    if (status >= 400 && status <= 499 && status != 408 && status != 429) return CN_EINVAL;
    return CN_ENETWORK;
}

static const char *status_hint(long status)
{
    if (status == 401 || status == 403)
        return "; check the API key (api_key, CODENIB_API_KEY or OPENAI_API_KEY)";
    if (status == 404) return "; check the base URL and the model name";
    if (status == 429) return "; the endpoint is rate limiting, try again later";
    if (status >= 500) return "; the endpoint kept failing, try again later";
    if (status >= 300 && status <= 399) return "; give the final URL as base_url";
    return "";
}

static int fail(const cn_curl_api *cu, const cn_model *m, const char *endpoint, const char *url,
                const attempt *a, int attempts)
{
    const char *plural = attempts == 1 ? "" : "s";
    char said[QUOTE_MAX + 8];

    if (a->too_big)
        return cn_error_set(CN_ENETWORK, "%s: the response from POST %s is larger than %zu MiB; "
                                         "refused (raise max_response_mb in the model "
                                         "configuration or CODENIB_MAX_RESPONSE_MB if it is "
                                         "meant to be that big)", endpoint, url,
                            m->max_response_bytes >> 20);
    if (a->cc == CURLE_OPERATION_TIMEDOUT)
        return cn_error_set(CN_ETIMEOUT, "%s: POST %s timed out after %d attempt%s (%s); raise "
                                         "timeout_ms (now %ld) or check the server", endpoint,
                            url, attempts, plural, a->errbuf[0] ? a->errbuf
                                                                : cu->easy_strerror(a->cc),
                            m->timeout_ms);
    if (a->cc != CURLE_OK)
        return cn_error_set(CN_ENETWORK, "%s: POST %s failed after %d attempt%s: %s; check that "
                                         "the server at the base URL is reachable", endpoint,
                            url, attempts, plural,
                            a->errbuf[0] ? a->errbuf : cu->easy_strerror(a->cc));
    if (a->body.len == 0)
        return cn_error_set(status_code(a->status), "%s: HTTP %ld from POST %s after %d "
                                                    "attempt%s, with an empty body%s", endpoint,
                            a->status, url, attempts, plural, status_hint(a->status));
    server_said(&a->body, said, sizeof said);
    return cn_error_set(status_code(a->status), "%s: HTTP %ld from POST %s after %d attempt%s: "
                                                "server said \"%s\"%s", endpoint, a->status, url,
                        attempts, plural, said, status_hint(a->status));
}

/* JSON values in text, counted before it is parsed: json-c spends some 70
 * bytes on each, so a reply of "1,1,1,..." would cost 35 times its size.
 * Commas, colons and opening brackets outside strings bound the count. */
static size_t count_values(const char *s, size_t len)
{
    size_t n = 1;
    bool in_string = false;

    for (size_t i = 0; i < len; i++) {
        char c = s[i];
        if (in_string) {
            if (c == '\\') i++;
            else if (c == '"') in_string = false;
        } else if (c == '"') {
            in_string = true;
        } else if (c == ',' || c == ':' || c == '[' || c == '{') {
            n++;
        }
    }
    return n;
}

static int parse_ok(const cn_model *m, const char *endpoint, const char *url, const attempt *a,
                    json_object **response)
{
    char what[512];
    size_t values;
    int rc;

    snprintf(what, sizeof what, "the %s response from %s", endpoint, url);
    if (a->body.len == 0)
        return cn_error_set(CN_EPARSE, "%s: HTTP %ld with an empty body; expected JSON", what,
                            a->status);
    if (strlen(a->body.data) != a->body.len)
        return cn_error_set(CN_EPARSE, "%s contains a NUL byte; expected JSON text", what);
    if ((values = count_values(a->body.data, a->body.len)) > m->max_response_bytes / CN_LLM_BYTES_PER_VALUE)
        return cn_error_set(CN_ENETWORK, "%s holds some %zu JSON values, more than the %zu (one per %d bytes "
                                         "of max_response_mb, %zu MiB) allowed; refused (raise max_response_mb "
                                         "or CODENIB_MAX_RESPONSE_MB if it is meant to be that big)",
                            what, values, m->max_response_bytes / CN_LLM_BYTES_PER_VALUE,
                            CN_LLM_BYTES_PER_VALUE, m->max_response_bytes >> 20);
    if ((rc = cn_json_parse(a->body.data, what, response)) < 0) return rc;
    if (*response == NULL) return cn_error_set(CN_EPARSE, "%s is JSON null", what);
    return 0;
}

static unsigned jitter_seed(const void *salt)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (unsigned)ts.tv_nsec ^ (unsigned)(uintptr_t)salt ^ (unsigned)ts.tv_sec;
}

int cn_llm__post(cn_model *m, const char *endpoint, json_object *body, cn_llm_call *call,
                 json_object **response)
{
    const cn_curl_api *cu;
    struct curl_slist *hdrs;
    char *text;
    size_t len;
    unsigned seed;
    char *url;
    double t0 = now_seconds();
    int oom, rc = 0;

    *response = NULL;
    call->endpoint = endpoint;
    call->http_status = 0;
    call->attempts = 0;
    call->seconds = 0;
    if (m->client_chat != NULL) {
        rc = cn_llm__client_post(m, endpoint, body, call, response);
        call->seconds = now_seconds() - t0;
        return rc;
    }
    if ((cu = cn_curl()) == NULL) return cn_error_prefix("%s", endpoint);
    /* repository text in a prompt may be any bytes; servers refuse a body
     * that is not UTF-8 */
    text = cn_json_text(body, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
    url = cn_llm__url(m->base_url, endpoint);
    hdrs = make_headers(cu, m, &oom);
    if (text == NULL || url == NULL || oom) {
        free(text);
        free(url);
        cu->slist_free_all(hdrs);
        return cn_error_set(CN_ENOMEM, "%s: out of memory preparing the request", endpoint);
    }
    len = strlen(text);
    seed = jitter_seed(&seed);
    for (int n = 1;; n++) {
        attempt a;
        long delay;

        memset(&a, 0, sizeof a);
        do_attempt(cu, m, url, hdrs, text, len, &a);
        call->attempts = n;
        call->http_status = a.cc == CURLE_OK ? (int)a.status : 0;
        if (a.cc == CURLE_OK && a.status >= 200 && a.status <= 299) {
            rc = parse_ok(m, endpoint, url, &a, response);
            cn_buf_free(&a.body);
            break;
        }
        if (!transient(&a) || n > m->max_retries) {
            rc = fail(cu, m, endpoint, url, &a, n);
            cn_buf_free(&a.body);
            break;
        }
        delay = cn_llm__retry_delay_ms(m->backoff_ms, n, a.retry_after_s, &seed);
        cn_log(CN_LOG_INFO, "llm", "%s: %s%ld, retry %d of %d in %ld ms", endpoint,
               a.cc != CURLE_OK ? "no answer, curl error " : "HTTP ",
               a.cc != CURLE_OK ? (long)a.cc : a.status, n, m->max_retries, delay);
        cn_buf_free(&a.body);
        sleep_ms(delay);
    }
    call->seconds = now_seconds() - t0;
    free(text);
    free(url);
    cu->slist_free_all(hdrs);
    return rc;
}
