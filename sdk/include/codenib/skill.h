/* SPDX-License-Identifier: Apache-2.0 */
/* codenib SDK: the skill ABI.
 *
 * A skill package is a directory holding config.yaml (metadata), skill.md
 * (the description a model reads) and a shared object.  The shared object
 * exports exactly one symbol, a constant descriptor named after the skill
 * id: "cn_skill_descriptor_" followed by the id with every character other
 * than [A-Za-z0-9_] replaced by '_'.  Use CN_SKILL_DEFINE to declare it.
 *
 * The host reads the descriptor's abi_major, abi_minor and struct_size and
 * the id before it calls any function of the plugin: a plugin loads when
 * its major equals the host's and its minor is not newer. */
#ifndef CODENIB_SKILL_H
#define CODENIB_SKILL_H

#include <stddef.h>
#include <stdint.h>

#include <codenib/errors.h>
#include <codenib/host.h>
#include <codenib/json.h>
#include <codenib/version.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CN_SKILL_SYMBOL_PREFIX "cn_skill_descriptor_"

/* The kind of work a skill does; also selects which typed context the
 * host hands to it. */
typedef enum cn_skill_type {
    CN_SKILL_RETRIEVAL = 1,   /* context: retrieve */
    CN_SKILL_EXPAND = 2,      /* context: expand (graph navigation) */
    CN_SKILL_RERANK = 3,      /* context: rerank */
    CN_SKILL_TRANSFORM = 4,   /* context: transform */
    CN_SKILL_CUSTOM = 5       /* context: custom (a bundle of everything) */
} cn_skill_type;

/* Opaque resources a context may carry.  Each pointer may be NULL: a skill
 * checks for what it needs when it runs (cn_host.context_require does it
 * and words the error), and fails with CN_ENOCONTEXT naming what is
 * missing. */
struct cn_index;
struct cn_vector_index;
struct cn_model;

typedef struct cn_skill_context {
    uint32_t struct_size;
    int kind;                            /* a cn_skill_type value */
    const char *repo_root;               /* canonical repository root */
    const struct cn_index *index;        /* nodes, BM25, symbol graph */
    const struct cn_vector_index *vectors;
    const struct cn_model *chat;
    const struct cn_model *embedder;
    const struct cn_model *reranker;
} cn_skill_context;

/* What a skill may need from its context, for cn_host.context_require. */
#define CN_NEEDS_REPO 0x01u       /* repo_root */
#define CN_NEEDS_INDEX 0x02u      /* index */
#define CN_NEEDS_VECTORS 0x04u    /* vectors */
#define CN_NEEDS_CHAT 0x08u       /* chat */
#define CN_NEEDS_EMBEDDER 0x10u   /* embedder */
#define CN_NEEDS_RERANKER 0x20u   /* reranker */

typedef struct cn_executor cn_executor;

struct cn_executor {
    uint32_t struct_size;
    void *data;   /* the plugin's own state */

    /* Runs the skill.  args_json is a JSON object with every declared input
     * resolved (defaults, caller overrides and model arguments merged,
     * types coerced, line-number inputs 0-based).  On success *result_json
     * is JSON text allocated with host->alloc (the host frees it); on
     * failure return a negative code and fill err. */
    int (*run)(cn_executor *self, const char *args_json, char **result_json,
               cn_error *err);

    /* Optional (may be NULL): asks a running run() to stop soon.  May be
     * called from another thread. */
    void (*cancel)(cn_executor *self);

    /* Mandatory: releases the executor and everything it owns. */
    void (*destroy)(cn_executor *self);
};

/* Called once, on first use.  ctx is the typed context for this skill's
 * type, or NULL when the host has none; a skill must not fail here merely
 * because its context is incomplete -- it fails when run without it. */
typedef int (*cn_create_executor_fn)(const cn_host *host,
                                     const cn_skill_context *ctx,
                                     cn_executor **out, cn_error *err);

typedef struct cn_skill_descriptor {
    uint16_t abi_major;
    uint16_t abi_minor;
    uint32_t struct_size;
    const char *id;
    const char *version;
    cn_create_executor_fn create_executor;
} cn_skill_descriptor;

#if defined(_WIN32)
#define CN_PLUGIN_EXPORT __declspec(dllexport)
#elif defined(__GNUC__)
#define CN_PLUGIN_EXPORT __attribute__((visibility("default")))
#else
#define CN_PLUGIN_EXPORT
#endif

/* Declares a skill's descriptor.  `ident` is the id as a C identifier
 * (bm25_search), `id` the id string ("bm25_search"). */
#define CN_SKILL_DEFINE(ident, id, version, create_fn)                        \
    extern CN_PLUGIN_EXPORT const cn_skill_descriptor                        \
        cn_skill_descriptor_##ident;                                          \
    const cn_skill_descriptor cn_skill_descriptor_##ident = {                 \
        CN_ABI_MAJOR, CN_ABI_MINOR, (uint32_t)sizeof(cn_skill_descriptor),    \
        (id), (version), (create_fn)}

#ifdef __cplusplus
}
#endif

#endif /* CODENIB_SKILL_H */
