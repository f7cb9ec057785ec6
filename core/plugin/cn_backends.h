/* SPDX-License-Identifier: Apache-2.0 */
/* Backend plugins other than languages -- embedders, vector stores, LSP
 * providers (codenib/backend.h): found on the "plugins" search path,
 * described by plugin.yaml (read without opening the shared object),
 * opened on first use with the ABI checks skills get. */
#ifndef CN_BACKENDS_H
#define CN_BACKENDS_H

#include <codenib/backend.h>
#include <codenib/skill.h>

#include "../util/cn_util.h"
#include "cn_host.h"

typedef struct cn_backend_entry {
    char *id;               /* "embed-local" */
    int kind;               /* cn_backend_kind */
    char *dir;
    char *source;           /* search-path label */
    char *library;
    char *reason;           /* why it is unusable, or NULL */
    struct cn_dl *dl;
    const cn_backend_descriptor *desc;
} cn_backend_entry;

typedef struct cn_backends {
    cn_backend_entry *items;
    size_t len;
    cn_strv problems;       /* unreadable packages and duplicates */
} cn_backends;

/* "embedder", "vector-store", "lsp"; NULL for an unknown kind. */
const char *cn_backend_kind_name(int kind);
/* The kind of a name, or 0. */
int cn_backend_kind_parse(const char *name);

int cn_backends_discover(cn_backends *b);
int cn_backends_add_root(cn_backends *b, const char *root, const char *source);
void cn_backends_free(cn_backends *b);
cn_backend_entry *cn_backends_find(const cn_backends *b, const char *id);

/* Opens the entry's shared object and checks its descriptor (ABI, size, id,
 * kind).  On failure the entry keeps the reason. */
int cn_backends_open(cn_backend_entry *e, const cn_backend_descriptor **out);

/* A created backend object with the host table it was given (which must
 * outlive it). */
typedef struct cn_backend_instance {
    cn_host host;
    cn_host_data host_data;
    json_object *defaults;
    void *object;           /* cn_embedder * / cn_vector_store * / cn_lsp_provider * */
    int kind;
} cn_backend_instance;

/* Finds backend `id` of `kind` (CN_ENOTFOUND naming the known ones of that
 * kind), opens it and calls its create() with config_json (NULL: "{}").
 * Errors say which backend and why. */
int cn_backend_create(cn_backends *b, const char *id, int kind, const cn_skill_context *ctx,
                      const char *config_json, cn_backend_instance **out);
/* Destroys the object (through its mandatory destroy) and the instance. */
void cn_backend_instance_free(cn_backend_instance *inst);

#endif /* CN_BACKENDS_H */
