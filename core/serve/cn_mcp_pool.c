/* SPDX-License-Identifier: Apache-2.0 */
/* The MCP server's worker pool (see cn_mcp.h): tools/call requests (and
 * the first tools/list) queued by the reader and run on a few threads,
 * every response written whole under one lock, notifications/cancelled
 * stopping the call it names. */
#include "cn_mcp_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <codenib/codenib.h>

#include "../plugin/cn_host.h"

typedef struct job {
    struct job *next;
    char *msg;                 /* the request as received, NUL-terminated */
    size_t len;
    char *id;                  /* its id as JSON text */
    atomic_bool cancel;
} job;

struct cn_mcp_pool {
    pthread_mutex_t mu;        /* the queue, the running list, stopping */
    pthread_cond_t work;       /* a job queued, or stopping */
    job *head, *tail;          /* queued, oldest first */
    job *running;              /* taken by a worker, linked by next */
    bool stopping;
    pthread_t *threads;
    unsigned n_threads;
    pthread_mutex_t write_mu;  /* one response at a time on the transport */
    cn_mcp_send_fn send;
    void *send_data;
    atomic_int send_rc;        /* the first failed send, 0 while none */
    char send_msg[CN_ERROR_MESSAGE_MAX];   /* ... its message, under write_mu */
};

static void job_free(job *j)
{
    if (j == NULL) return;
    free(j->msg);
    free(j->id);
    free(j);
}

static void send_reply(struct cn_mcp_pool *p, const char *reply)
{
    int rc;
    pthread_mutex_lock(&p->write_mu);
    /* once the transport failed, nothing more goes out */
    rc = atomic_load(&p->send_rc) == 0 ? p->send(reply, p->send_data) : 0;
    if (rc < 0) {
        /* the error is this thread's: kept for the reader's */
        snprintf(p->send_msg, sizeof p->send_msg, "%s", cn_error_last()->message);
        cn_error_clear();
        atomic_store(&p->send_rc, rc);
    }
    pthread_mutex_unlock(&p->write_mu);
}

/* 0, or the first failed send's error set again on this thread */
static int send_error(struct cn_mcp_pool *p)
{
    int rc = atomic_load(&p->send_rc);
    if (rc < 0) {
        pthread_mutex_lock(&p->write_mu);
        cn_error_set(rc, "%s", p->send_msg[0] ? p->send_msg : "cannot send a response");
        pthread_mutex_unlock(&p->write_mu);
    }
    return rc;
}

static void unlink_running(struct cn_mcp_pool *p, job *j)
{
    for (job **q = &p->running; *q != NULL; q = &(*q)->next)
        if (*q == j) {
            *q = j->next;
            break;
        }
}

static void *worker(void *arg)
{
    cn_mcp *s = arg;
    struct cn_mcp_pool *p = s->pool;

    for (;;) {
        job *j;
        char *reply = NULL;
        cn_mcp_call c;
        int rc;

        pthread_mutex_lock(&p->mu);
        while (p->head == NULL && !p->stopping) pthread_cond_wait(&p->work, &p->mu);
        if ((j = p->head) == NULL) {   /* stopping, and nothing left to run */
            pthread_mutex_unlock(&p->mu);
            return NULL;
        }
        p->head = j->next;
        if (p->head == NULL) p->tail = NULL;
        j->next = p->running;
        p->running = j;
        pthread_mutex_unlock(&p->mu);

        c.s = s;
        c.cancel = &j->cancel;
        rc = cn_rpc_handle(j->msg, j->len, true, cn_mcp__handler, &c, &reply);
        if (rc < 0) {
            /* out of memory: an error the client can read, if it fits */
            cn_error_clear();
            free(reply);
            reply = cn_strprintf("{\"jsonrpc\":\"2.0\",\"id\":%s,\"error\":{\"code\":%d,\"message\":\"out of "
                                 "memory\"}}",
                                 j->id, CN_RPC_INTERNAL_ERROR);
        }
        pthread_mutex_lock(&p->mu);
        unlink_running(p, j);
        pthread_mutex_unlock(&p->mu);
        /* a cancelled request is not answered (the MCP specification:
         * the receiver SHOULD NOT respond) */
        if (reply != NULL && !atomic_load(&j->cancel)) send_reply(p, reply);
        free(reply);
        job_free(j);
    }
}

int cn_mcp_start(cn_mcp *s, unsigned workers, cn_mcp_send_fn send, void *send_data)
{
    struct cn_mcp_pool *p;

    if (s == NULL || send == NULL || workers < 1 || workers > CN_MCP_WORKERS_MAX)
        return cn_error_set(CN_EINVAL, "the MCP server's pool takes 1 to %d workers, not %u", CN_MCP_WORKERS_MAX,
                            workers);
    if (s->pool != NULL) return cn_error_set(CN_EINVAL, "the MCP server's pool is already started");
    if ((p = calloc(1, sizeof *p)) == NULL || (p->threads = calloc(workers, sizeof *p->threads)) == NULL) {
        free(p);
        return cn_error_set(CN_ENOMEM, "out of memory");
    }
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->work, NULL);
    pthread_mutex_init(&p->write_mu, NULL);
    p->send = send;
    p->send_data = send_data;
    atomic_init(&p->send_rc, 0);
    s->pool = p;
    /* read once here, before any thread can (it is set on first use) */
    (void)cn_log_get_level();
    for (unsigned i = 0; i < workers; i++) {
        if (pthread_create(&p->threads[i], NULL, worker, s) != 0) {
            if (i == 0) {
                cn_mcp_stop(s, true);
                return cn_error_set(CN_EIO, "the MCP server cannot start a worker thread");
            }
            break;   /* fewer workers than asked: they serve all the same */
        }
        p->n_threads = i + 1;
    }
    return 0;
}

/* A request for the pool -- tools/call, or the first tools/list (which
 * may compile the repository: it must not hold up ping) -- with a valid
 * id: its id's JSON text, else NULL (the message is answered on the
 * reader's thread; a later tools/list is answered there at once, from
 * the list made last when a skill holds the index). */
static char *queued_id(cn_mcp *s, const char *msg, size_t len)
{
    json_object *m, *v = NULL, *id = NULL;
    char *out = NULL;
    bool pooled = false;
    if (memchr(msg, '\0', len) != NULL || (m = json_tokener_parse(msg)) == NULL) return NULL;
    if (json_object_is_type(m, json_type_object) && json_object_object_get_ex(m, "method", &v) &&
        json_object_is_type(v, json_type_string)) {
        const char *method = json_object_get_string(v);
        if (strcmp(method, "tools/call") == 0) {
            pooled = true;
        } else if (strcmp(method, "tools/list") == 0) {
            pthread_mutex_lock(&s->cache_mu);
            pooled = s->list_cache == NULL;
            pthread_mutex_unlock(&s->cache_mu);
        }
    }
    if (pooled && json_object_object_get_ex(m, "id", &id) &&
        (json_object_is_type(id, json_type_string) || json_object_is_type(id, json_type_int)))
        out = cn_strdup(json_object_to_json_string_ext(id, JSON_C_TO_STRING_PLAIN));
    json_object_put(m);
    return out;
}

int cn_mcp_submit(cn_mcp *s, const char *msg, size_t len)
{
    struct cn_mcp_pool *p = s->pool;
    char *reply = NULL, *id;
    int rc;

    if (p == NULL) return cn_error_set(CN_EINVAL, "cn_mcp_submit: the pool is not started");
    if ((rc = send_error(p)) < 0) return rc;
    if ((id = queued_id(s, msg, len)) != NULL) {
        job *j = calloc(1, sizeof *j);
        if (j == NULL || (j->msg = malloc(len + 1)) == NULL) {
            free(j);
            free(id);
            return cn_error_set(CN_ENOMEM, "out of memory");
        }
        memcpy(j->msg, msg, len);
        j->msg[len] = '\0';
        j->len = len;
        j->id = id;
        atomic_init(&j->cancel, false);
        pthread_mutex_lock(&p->mu);
        if (p->tail) p->tail->next = j;
        else p->head = j;
        p->tail = j;
        pthread_cond_signal(&p->work);
        pthread_mutex_unlock(&p->mu);
        return 0;
    }
    {
        cn_mcp_call c = {s, NULL};
        if ((rc = cn_rpc_handle(msg, len, true, cn_mcp__handler, &c, &reply)) < 0) return rc;
    }
    if (reply != NULL) send_reply(p, reply);
    free(reply);
    return send_error(p);
}

int cn_mcp_send(cn_mcp *s, const char *line)
{
    if (s->pool == NULL) return cn_error_set(CN_EINVAL, "cn_mcp_send: the pool is not started");
    send_reply(s->pool, line);
    return send_error(s->pool);
}

void cn_mcp__cancel(cn_mcp *s, const char *id)
{
    struct cn_mcp_pool *p = s->pool;
    job *dropped = NULL;
    if (p == NULL || id == NULL) return;   /* answered one at a time: nothing runs now */
    pthread_mutex_lock(&p->mu);
    for (job *j = p->running; j != NULL; j = j->next)
        if (strcmp(j->id, id) == 0) atomic_store(&j->cancel, true);
    /* a queued one never runs */
    for (job **q = &p->head; *q != NULL;) {
        job *j = *q;
        if (strcmp(j->id, id) != 0) {
            q = &j->next;
            continue;
        }
        *q = j->next;
        j->next = dropped;
        dropped = j;
    }
    p->tail = NULL;
    for (job *j = p->head; j != NULL; j = j->next) p->tail = j;
    pthread_mutex_unlock(&p->mu);
    while (dropped != NULL) {
        job *next = dropped->next;
        job_free(dropped);
        dropped = next;
    }
}

int cn_mcp_stop(cn_mcp *s, bool cancel)
{
    struct cn_mcp_pool *p;
    int rc;
    if (s == NULL || (p = s->pool) == NULL) return 0;
    pthread_mutex_lock(&p->mu);
    p->stopping = true;
    if (cancel) {
        for (job *j = p->running; j != NULL; j = j->next) atomic_store(&j->cancel, true);
        while (p->head != NULL) {
            job *j = p->head;
            p->head = j->next;
            job_free(j);
        }
        p->tail = NULL;
    }
    pthread_cond_broadcast(&p->work);
    pthread_mutex_unlock(&p->mu);
    for (unsigned i = 0; i < p->n_threads; i++) pthread_join(p->threads[i], NULL);
    rc = send_error(p);
    pthread_mutex_destroy(&p->mu);
    pthread_cond_destroy(&p->work);
    pthread_mutex_destroy(&p->write_mu);
    free(p->threads);
    free(p);
    s->pool = NULL;
    return rc;
}
