/* SPDX-License-Identifier: Apache-2.0 */
/* lsp_route: from symbol names to the code around them -- the seeds'
 * definitions (anchors) and their one-hop callers, callees, references,
 * imports and base classes (neighbours) -- through the host's LSP service
 * ("codenib/route", served by default by lsp-static).  With no seed that
 * resolves, the query text finds the anchors by BM25.  Lines are 0-based
 * here and 1-based for the model (outputs line_fields). */
#include <codenib/skill.h>

#include "cn_skill_util.h"

#define MAX_TOP_K 500

static int rt_run(const cn_host *h, const cn_skill_context *ctx, const cn_json *args, char **result_json,
                  cn_error *err)
{
    static const char *const keys[] = {"symbols", "query", "include_neighbors", NULL};
    return cn_su_lsp_run(h, ctx, args, "route", keys, MAX_TOP_K, result_json, err);
}

static int rt_create(const cn_host *host, const cn_skill_context *ctx, cn_executor **out, cn_error *err)
{
    return cn_su_simple_executor(host, ctx, rt_run, out, err);
}

CN_SKILL_DEFINE(lsp_route, "lsp_route", "0.1.0", rt_create);
