/* SPDX-License-Identifier: Apache-2.0 */
/* codenib SDK: LSP-shaped navigation -- providers (backend kind "lsp")
 * and the service skills call (cn_host.lsp).
 *
 * Capabilities: "definition", "references" and "route" (codenib's
 * extension: symbol seeds -> anchors and their neighbours).  Requests and
 * results are JSON text.  Line numbers are 0-based on both sides, like
 * everything inside a skill.
 *
 * Requests:
 *   definition  {"symbol"?, "file_path"?, "line"?, "character"?, "top_k"}
 *   references  {"symbol"?, "file_path"?, "line"?, "character"?, "top_k",
 *                "include_declaration"}
 *   route       {"symbols": [...], "query"?, "top_k", "include_neighbors"}
 * A position request names file_path + line (+ character); a name request
 * names symbol.  An unknown field is ignored.
 *
 * Result: {"nodes": [...], "metadata": {...}} where each node has node_id,
 * node_name, type, file, start_line, end_line and score; references add
 * the use site (line, character, edge: "declaration", "calls",
 * "references", "imports" or "inherits", resolved, written_as, target);
 * route adds role ("anchor" or "neighbor"), for anchors the seed it came
 * from (null for anchors found by the query text) and for neighbours via
 * ({"edge", "direction", "from", "from_name", "line"}).  metadata has
 * provider, capability, status ("ok", "unsupported", "unavailable"),
 * lsp_method, fallback_reason (null when none), behavior_contract,
 * position_granularity ("line", "character", "symbol") and
 * index_snapshot; route adds unresolved_seeds.
 *
 * Threading: the host runs the calls into one provider one at a time; a
 * provider must not call cn_host.lsp from inside a call. */
#ifndef CODENIB_LSP_H
#define CODENIB_LSP_H

#include <stddef.h>
#include <stdint.h>

#include <codenib/errors.h>
#include <codenib/host.h>

#ifdef __cplusplus
extern "C" {
#endif

struct cn_skill_context;

typedef struct cn_lsp_provider cn_lsp_provider;

struct cn_lsp_provider {
    uint32_t struct_size;
    void *data;
    /* Never fails for an unknown capability: *metadata_json (host->alloc)
     * says whether and how it would be served. */
    int (*can_serve)(cn_lsp_provider *self, const char *capability, char **metadata_json,
                     cn_error *err);
    /* Serves one request; *result_json allocated with host->alloc. */
    int (*call)(cn_lsp_provider *self, const char *capability, const char *request_json,
                char **result_json, cn_error *err);
    /* Mandatory. */
    void (*destroy)(cn_lsp_provider *self);
};

/* cn_host.lsp: the configured provider (default lsp-static) over the
 * index of ctx, created on first use and kept while the index is open. */
typedef struct cn_lsp_services {
    uint32_t struct_size;
    int (*call)(const cn_host *host, const struct cn_skill_context *ctx, const char *capability,
                const char *request_json, char **result_json, cn_error *err);
} cn_lsp_services;

#ifdef __cplusplus
}
#endif

#endif /* CODENIB_LSP_H */
