/* SPDX-License-Identifier: Apache-2.0 */
/* codenib SDK: backend plugins -- embedders, vector stores and LSP
 * providers.
 *
 * A backend is packaged like a language backend: a directory under a
 * "plugins" search-path root with plugin.yaml
 *
 *     plugin_id: embed-local
 *     kind: embedder            # embedder | vector-store | lsp
 *     library: embed_local      # embed_local.so, next to plugin.yaml
 *     abi: "1.0"
 *
 * and a shared object exporting one constant descriptor named
 * "cn_backend_descriptor_" followed by the plugin id with every character
 * other than [A-Za-z0-9_] replaced by '_'.  The host checks abi_major,
 * abi_minor, struct_size, id and kind before calling create().
 *
 * create() returns the object of the kind's interface: a cn_embedder
 * (codenib/embed.h), a cn_vector_store (codenib/vectors.h) or a
 * cn_lsp_provider (codenib/lsp.h).  Users choose backends in
 * configuration (`codenib compile --embedder ID --vector-store ID`), so a
 * new backend needs no rebuild of codenib. */
#ifndef CODENIB_BACKEND_H
#define CODENIB_BACKEND_H

#include <stddef.h>
#include <stdint.h>

#include <codenib/errors.h>
#include <codenib/host.h>
#include <codenib/version.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CN_BACKEND_SYMBOL_PREFIX "cn_backend_descriptor_"

/* Stored in manifests: never renumber, only append. */
typedef enum cn_backend_kind {
    CN_BACKEND_EMBEDDER = 1,
    CN_BACKEND_VECTOR_STORE = 2,
    CN_BACKEND_LSP = 3
} cn_backend_kind;

struct cn_skill_context;

/* config_json: the backend's options as a JSON object (never NULL; "{}"
 * when there are none).  ctx: for LSP providers, the context whose index
 * the provider serves; NULL for the other kinds.  *out receives a
 * cn_embedder *, cn_vector_store * or cn_lsp_provider * by kind. */
typedef int (*cn_backend_create_fn)(const cn_host *host, const struct cn_skill_context *ctx,
                                    const char *config_json, void **out, cn_error *err);

typedef struct cn_backend_descriptor {
    uint16_t abi_major;
    uint16_t abi_minor;
    uint32_t struct_size;
    const char *id;          /* the plugin id of plugin.yaml */
    const char *version;
    int kind;                /* cn_backend_kind */
    cn_backend_create_fn create;
} cn_backend_descriptor;

#if defined(__GNUC__)
#define CN_BACKEND_EXPORT __attribute__((visibility("default")))
#else
#define CN_BACKEND_EXPORT
#endif

/* `ident` is the id as a C identifier (embed_local), `id` the id string. */
#define CN_BACKEND_DEFINE(ident, id, version, kind, create_fn)                \
    extern CN_BACKEND_EXPORT const cn_backend_descriptor                     \
        cn_backend_descriptor_##ident;                                        \
    const cn_backend_descriptor cn_backend_descriptor_##ident = {             \
        CN_ABI_MAJOR, CN_ABI_MINOR, (uint32_t)sizeof(cn_backend_descriptor),  \
        (id), (version), (kind), (create_fn)}

#ifdef __cplusplus
}
#endif

#endif /* CODENIB_BACKEND_H */
