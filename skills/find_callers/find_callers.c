/* SPDX-License-Identifier: Apache-2.0 */
/* find_callers: who calls or references a symbol, through the compiled
 * symbol graph (call and reference edges only, never containment).  The
 * walk, symbol resolution and result shape live in cn_skill_graph.c,
 * shared with find_callees and trace. */
#include <codenib/index.h>
#include <codenib/skill.h>

#include "cn_skill_graph.h"
#include "cn_skill_util.h"

static int fc_run(const cn_host *h, const cn_skill_context *ctx, const cn_json *args, char **result_json,
                  cn_error *err)
{
    return cn_sg_neighbours_run(h, ctx, args, CN_EDGES_IN, result_json, err);
}

static int fc_create(const cn_host *host, const cn_skill_context *ctx, cn_executor **out, cn_error *err)
{
    return cn_su_simple_executor(host, ctx, fc_run, out, err);
}

CN_SKILL_DEFINE(find_callers, "find_callers", "0.1.0", fc_create);
