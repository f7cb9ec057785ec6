/* SPDX-License-Identifier: Apache-2.0 */
/* The host-services table handed to plugins. */
#include "cn_host.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "../index/cn_index.h"
#include "../index/cn_vectors.h"
#include "../llm/cn_llm.h"
#include "../util/cn_util.h"

static void *host_alloc(size_t n)
{
    return malloc(n ? n : 1);
}

static void *host_realloc(void *p, size_t n)
{
    return realloc(p, n ? n : 1);
}

static void host_free(void *p)
{
    free(p);
}

static char *host_strdup(const char *s)
{
    return cn_strdup(s);
}

static void host_log(const cn_host *host, int level, const char *fmt, ...)
{
    const cn_host_data *d = host ? host->host_data : NULL;
    va_list ap;
    va_start(ap, fmt);
    cn_logv(level, d ? d->skill_id : NULL, fmt, ap);
    va_end(ap);
}

static int host_error_set(cn_error *err, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    cn_error_fillv(err, code, fmt, ap);
    va_end(ap);
    return code;
}

static const char *host_skill_id(const cn_host *host)
{
    return ((const cn_host_data *)host->host_data)->skill_id;
}

static const char *host_skill_dir(const cn_host *host)
{
    return ((const cn_host_data *)host->host_data)->skill_dir;
}

static const cn_json *host_skill_defaults(const cn_host *host)
{
    return (const cn_json *)((const cn_host_data *)host->host_data)->defaults;
}

static const char *context_kind_name(int kind)
{
    switch (kind) {
    case CN_SKILL_RETRIEVAL: return "retrieve";
    case CN_SKILL_EXPAND: return "expand";
    case CN_SKILL_RERANK: return "rerank";
    case CN_SKILL_TRANSFORM: return "transform";
    case CN_SKILL_CUSTOM: return "custom";
    }
    return "unknown";
}

static int host_context_require(const cn_host *host, const cn_skill_context *ctx, unsigned needs,
                                cn_error *err)
{
    static const struct {
        unsigned flag;
        size_t offset;
        const char *what;
    } parts[] = {
        {CN_NEEDS_REPO, offsetof(cn_skill_context, repo_root),
         "a repository (pass --repo DIR)"},
        {CN_NEEDS_INDEX, offsetof(cn_skill_context, index),
         "a compiled index (run `codenib compile REPO`)"},
        {CN_NEEDS_VECTORS, offsetof(cn_skill_context, vectors),
         "a vector index (run `codenib compile REPO --index vector`)"},
        {CN_NEEDS_CHAT, offsetof(cn_skill_context, chat),
         "a chat model (pass --model M [--base-url URL] or set CODENIB_MODEL)"},
        {CN_NEEDS_EMBEDDER, offsetof(cn_skill_context, embedder), "an embedding model"},
        {CN_NEEDS_RERANKER, offsetof(cn_skill_context, reranker),
         "a rerank endpoint (pass --rerank-model M [--rerank-base-url URL] or set "
         "CODENIB_RERANK_MODEL)"},
    };
    const cn_host_data *d = host ? host->host_data : NULL;
    const char *id = d ? d->skill_id : "skill";
    cn_buf b = CN_BUF_INIT;
    int missing = 0;

    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++) {
        const void *p = NULL;
        if (!(needs & parts[i].flag)) continue;
        if (ctx != NULL && ctx->struct_size >= parts[i].offset + sizeof(void *))
            memcpy(&p, (const char *)ctx + parts[i].offset, sizeof p);
        if (p != NULL) continue;
        cn_buf_printf(&b, "%s%s", missing ? ", " : "", parts[i].what);
        missing++;
    }
    if (missing == 0) {
        cn_buf_free(&b);
        return 0;
    }
    if (ctx == NULL)
        cn_error_fill(err, CN_ENOCONTEXT, "skill '%s' was run without a context; it needs %s", id,
                      b.data);
    else
        cn_error_fill(err, CN_ENOCONTEXT, "skill '%s' needs %s in its %s context", id, b.data,
                      context_kind_name(ctx->kind));
    cn_buf_free(&b);
    return CN_ENOCONTEXT;
}

void cn_host_init(cn_host *host, cn_host_data *data)
{
    memset(host, 0, sizeof *host);
    host->abi_major = CN_ABI_MAJOR;
    host->abi_minor = CN_ABI_MINOR;
    host->struct_size = (uint32_t)sizeof *host;
    host->host_data = data;
    host->alloc = host_alloc;
    host->realloc = host_realloc;
    host->free = host_free;
    host->strdup = host_strdup;
    host->log = host_log;
    host->error_set = host_error_set;
    host->json = cn_host_json_services();
    host->skill_id = host_skill_id;
    host->skill_dir = host_skill_dir;
    host->skill_defaults = host_skill_defaults;
    host->context_require = host_context_require;
    host->files = cn_host_files_services();
    host->index = cn_host_index_services();
    host->model = cn_host_model_services();
    host->vectors = cn_host_vector_services();
    host->lsp = cn_host_lsp_services();
    host->text = cn_host_text_services();
}
