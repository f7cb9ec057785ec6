/* SPDX-License-Identifier: Apache-2.0 */
/* cn_host.lsp: LSP-shaped navigation over the index of the calling skill's
 * context, served by the configured provider backend.
 *
 * The provider is made on first use, once per opened index, under the
 * index's lsp_lock: backend id from CODENIB_LSP_PROVIDER (default
 * lsp-static).  A failure is remembered in idx->lsp_error and returned by
 * every later call, so a broken configuration is reported, not retried on
 * each tool call.
 *
 * Ownership: the provider's library must stay open until the provider is
 * destroyed, and cn_index_close frees idx->lsp with
 * cn_backend_instance_free.  So the host puts its own small provider in
 * front of the plugin's (a guard): the instance's object is the guard, and
 * the guard's destroy() destroys the plugin's provider first, then closes
 * the backend list (and with it the library).
 *
 * Threads: the lsp.h contract does not require a provider to be
 * thread-safe, so the guard serialises the calls into one provider with
 * its own mutex (lsp-static itself would not need it).  A provider must
 * not call host->lsp from inside a call. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <codenib/lsp.h>

#include "../index/cn_index.h"
#include "cn_backends.h"
#include "cn_host.h"

#define DEFAULT_PROVIDER "lsp-static"

typedef struct lsp_guard {
    cn_lsp_provider self;     /* what the backend instance holds */
    cn_lsp_provider *inner;   /* the plugin's provider */
    cn_backends backends;     /* keeps the plugin's library open */
    cn_skill_context ctx;     /* given to create(); lives as long as the provider */
    pthread_mutex_t lock;
} lsp_guard;

static int guard_can_serve(cn_lsp_provider *self, const char *capability, char **metadata_json, cn_error *err)
{
    lsp_guard *g = self->data;
    int rc;
    pthread_mutex_lock(&g->lock);
    rc = g->inner->can_serve(g->inner, capability, metadata_json, err);
    pthread_mutex_unlock(&g->lock);
    return rc;
}

static int guard_call(cn_lsp_provider *self, const char *capability, const char *request_json,
                      char **result_json, cn_error *err)
{
    lsp_guard *g = self->data;
    int rc;
    pthread_mutex_lock(&g->lock);
    rc = g->inner->call(g->inner, capability, request_json, result_json, err);
    pthread_mutex_unlock(&g->lock);
    return rc;
}

static void guard_destroy(cn_lsp_provider *self)
{
    lsp_guard *g = self->data;
    if (g->inner != NULL) g->inner->destroy(g->inner);
    cn_backends_free(&g->backends);
    pthread_mutex_destroy(&g->lock);
    free(g);
}

/* Checks the plugin's provider before anything is called through it. */
static int check_provider(const char *id, const cn_lsp_provider *p)
{
    if (p->struct_size < offsetof(cn_lsp_provider, destroy) + sizeof p->destroy || p->can_serve == NULL ||
        p->call == NULL || p->destroy == NULL)
        return cn_error_set(CN_EABI, "LSP provider '%s' returned an incomplete provider (can_serve, call and "
                                     "destroy are required)",
                            id);
    return 0;
}

/* Makes idx->lsp, or fills idx->lsp_error.  Called with lsp_lock held. */
static void make_provider(struct cn_index *idx, const cn_skill_context *ctx)
{
    const char *id = getenv("CODENIB_LSP_PROVIDER");
    cn_backend_instance *inst = NULL;
    lsp_guard *g;
    cn_buf m = CN_BUF_INIT;
    int rc;

    if (id == NULL || *id == '\0') id = DEFAULT_PROVIDER;
    g = calloc(1, sizeof *g);
    if (g == NULL) {
        idx->lsp_error = cn_strdup("out of memory making the LSP provider");
        return;
    }
    pthread_mutex_init(&g->lock, NULL);
    /* the provider may keep ctx: give it one that lives as long as it, with
     * the index's own repository root */
    g->ctx.struct_size = (uint32_t)sizeof g->ctx;
    g->ctx.kind = ctx->kind;
    g->ctx.repo_root = idx->repo_root;
    g->ctx.index = idx;
    rc = cn_backends_discover(&g->backends);
    if (rc == 0) rc = cn_backend_create(&g->backends, id, CN_BACKEND_LSP, &g->ctx, "{}", &inst);
    if (rc == 0 && (rc = check_provider(id, inst->object)) < 0) {
        cn_lsp_provider *bad = inst->object;
        if (bad->destroy != NULL) bad->destroy(bad);
        inst->kind = 0;   /* so cn_backend_instance_free frees only the instance */
        cn_backend_instance_free(inst);
        inst = NULL;
    }
    if (rc < 0) {
        const char *why = cn_error_last()->message;
        cn_buf_printf(&m, "the LSP provider '%s' (CODENIB_LSP_PROVIDER) cannot be used: %s", id, why);
        if (strstr(why, "codenib plugins list") == NULL) cn_buf_puts(&m, " (see `codenib plugins list`)");
        idx->lsp_error = cn_buf_steal(&m);
        if (idx->lsp_error == NULL) idx->lsp_error = cn_strdup("out of memory");
        cn_error_clear();
        cn_backends_free(&g->backends);
        pthread_mutex_destroy(&g->lock);
        free(g);
        return;
    }
    g->inner = inst->object;
    g->self.struct_size = (uint32_t)sizeof g->self;
    g->self.data = g;
    g->self.can_serve = guard_can_serve;
    g->self.call = guard_call;
    g->self.destroy = guard_destroy;
    inst->object = &g->self;
    idx->lsp = inst;
}

/* The provider of ctx's index, made on first use; NULL with err filled. */
static cn_backend_instance *provider_for(const cn_skill_context *ctx, cn_error *err)
{
    struct cn_index *idx = (struct cn_index *)ctx->index;
    cn_backend_instance *inst;

    pthread_mutex_lock(&idx->lsp_lock);
    if (idx->lsp == NULL && idx->lsp_error == NULL) make_provider(idx, ctx);
    inst = idx->lsp;
    if (inst == NULL) cn_error_fill(err, CN_ELOAD, "%s", idx->lsp_error ? idx->lsp_error : "no LSP provider");
    pthread_mutex_unlock(&idx->lsp_lock);
    return inst;
}

static int lsp_call(const cn_host *host, const cn_skill_context *ctx, const char *capability,
                    const char *request_json, char **result_json, cn_error *err)
{
    cn_backend_instance *inst;
    cn_lsp_provider *p;
    char *res = NULL;
    size_t n;
    int rc;

    if (result_json == NULL || host == NULL)
        return cn_error_fill(err, CN_EINVAL, "cn_host.lsp->call: host and result_json are required");
    *result_json = NULL;
    if (capability == NULL || request_json == NULL)
        return cn_error_fill(err, CN_EINVAL, "cn_host.lsp->call: give a capability (definition, references, "
                                             "route) and a JSON request");
    if ((rc = host->context_require(host, ctx, CN_NEEDS_INDEX, err)) < 0) return rc;
    if ((inst = provider_for(ctx, err)) == NULL) return err ? err->code : CN_ELOAD;
    p = inst->object;
    if (err != NULL) memset(err, 0, sizeof *err);
    rc = p->call(p, capability, request_json, &res, err);
    if (rc < 0) {
        inst->host.free(res);
        if (err != NULL && err->code == 0) err->code = rc;
        return rc;
    }
    if (res == NULL) return cn_error_fill(err, CN_ESKILL, "the LSP provider returned success and no result");
    /* the result was allocated by the provider's host table: hand the
     * caller a copy from its own */
    n = strlen(res);
    *result_json = host->alloc(n + 1);
    if (*result_json == NULL) {
        inst->host.free(res);
        return cn_error_fill(err, CN_ENOMEM, "out of memory");
    }
    memcpy(*result_json, res, n + 1);
    inst->host.free(res);
    return 0;
}

static const cn_lsp_services lsp_services = {
    (uint32_t)sizeof(cn_lsp_services),
    lsp_call,
};

const cn_lsp_services *cn_host_lsp_services(void)
{
    return &lsp_services;
}
