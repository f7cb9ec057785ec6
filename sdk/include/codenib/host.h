/* SPDX-License-Identifier: Apache-2.0 */
/* codenib SDK: the services a host hands to every plugin.
 *
 * A plugin needs no symbol from the codenib core: everything it may call
 * comes through this table.  The table is versioned by struct_size and only
 * ever grows at the end, so a plugin built against an older SDK keeps
 * working in a newer host.  A slot the host does not provide is NULL (the
 * model slot when no model client is built in, for instance), so a
 * plugin checks a service before calling it; CN_HOST_HAS also guards fields
 * appended after the minor the plugin declares:
 *
 *     if (CN_HOST_HAS(host, files) && host->files != NULL) ... */
#ifndef CODENIB_HOST_H
#define CODENIB_HOST_H

#include <stddef.h>
#include <stdint.h>

#include <codenib/errors.h>
#include <codenib/json.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Log levels for cn_host.log. */
typedef enum cn_log_level {
    CN_LOG_DEBUG = 10,
    CN_LOG_INFO = 20,
    CN_LOG_WARNING = 30,
    CN_LOG_ERROR = 40
} cn_log_level;

typedef struct cn_host cn_host;

/* Services filled by later parts of the host; declared here so the table
 * layout is fixed.  A NULL slot means "not available in this host". */
struct cn_index_services;
struct cn_model_services;
struct cn_vector_services;
struct cn_lsp_services;
struct cn_skill_context;

/* Text helpers shared with the indexes, so a plugin cuts text exactly as
 * the BM25 index does. */
typedef struct cn_text_services {
    uint32_t struct_size;
    /* The code-aware tokenizer of the BM25 index: each token (lowercased,
     * not NUL-terminated, valid during the call) goes to fn; a non-zero
     * return from fn stops and is returned. */
    int (*tokenize)(const char *text, size_t len,
                    int (*fn)(const char *tok, size_t len, void *data), void *data);
} cn_text_services;

/* Repository file access, confined to the repository root of the skill's
 * context: relative paths only; "..", absolute paths and symlinks that
 * leave the root are refused with CN_EDENIED. */
typedef struct cn_files_services {
    uint32_t struct_size;
    /* Absolute, canonical repository root, or NULL when the skill was given
     * no repository. */
    const char *(*root)(const cn_host *host);
    /* Reads a whole file.  *data is NUL-terminated, allocated with the host
     * allocator; *len excludes the terminator.  Files larger than max_bytes
     * (0 = host default) fail with CN_EINVAL. */
    int (*read)(const cn_host *host, const char *relpath, size_t max_bytes,
                char **data, size_t *len, cn_error *err);
} cn_files_services;

struct cn_host {
    uint16_t abi_major;
    uint16_t abi_minor;
    uint32_t struct_size;
    void *host_data;     /* the host's own; plugins never touch it */

    /* memory: whatever crosses the boundary is allocated and freed here */
    void *(*alloc)(size_t size);
    void *(*realloc)(void *ptr, size_t size);
    void (*free)(void *ptr);
    char *(*strdup)(const char *s);

    /* logging, tagged with the skill's id by the host */
    void (*log)(const cn_host *host, int level, const char *fmt, ...)
#if defined(__GNUC__)
        __attribute__((format(printf, 3, 4)))
#endif
        ;

    /* errors: fills err (if not NULL) and returns code */
    int (*error_set)(cn_error *err, int code, const char *fmt, ...)
#if defined(__GNUC__)
        __attribute__((format(printf, 3, 4)))
#endif
        ;

    const cn_json_services *json;

    /* The skill's own configuration: its id, its package directory (NULL
     * for skills registered in process) and its `defaults` mapping from
     * config.yaml (borrowed; an empty object when there is none). */
    const char *(*skill_id)(const cn_host *host);
    const char *(*skill_dir)(const cn_host *host);
    const cn_json *(*skill_defaults)(const cn_host *host);

    /* Checks that ctx (possibly NULL) carries everything in `needs`
     * (CN_NEEDS_* of skill.h).  Returns 0, or CN_ENOCONTEXT with err
     * naming the skill, the context kind and each missing part. */
    int (*context_require)(const cn_host *host, const struct cn_skill_context *ctx,
                           unsigned needs, cn_error *err);

    const cn_files_services *files;
    const struct cn_index_services *index;   /* compiled indexes */
    const struct cn_model_services *model;   /* chat, embedding, rerank (codenib/model.h) */
    const struct cn_vector_services *vectors; /* vector search (codenib/vectors.h) */
    const struct cn_lsp_services *lsp;       /* LSP-shaped navigation (codenib/lsp.h) */
    const cn_text_services *text;            /* tokenizer */
};

/* True when the host table is large enough to contain `field`. */
#define CN_HOST_HAS(host, field)                                              \
    ((host) != NULL &&                                                        \
     (size_t)(host)->struct_size >=                                           \
         offsetof(cn_host, field) + sizeof(((cn_host *)0)->field))

#ifdef __cplusplus
}
#endif

#endif /* CODENIB_HOST_H */
