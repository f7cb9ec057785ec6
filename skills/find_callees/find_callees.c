/* SPDX-License-Identifier: Apache-2.0 */
/* find_callees: what a symbol calls or references, through the compiled
 * symbol graph (call and reference edges only, never containment), with
 * the uses the graph could not resolve (library functions, calls on
 * objects of unknown type) listed by the name written at the use site.
 * The walk lives in cn_skill_graph.c, shared with find_callers and trace. */
#include <codenib/index.h>
#include <codenib/skill.h>

#include "cn_skill_graph.h"
#include "cn_skill_util.h"

static int fe_run(const cn_host *h, const cn_skill_context *ctx, const cn_json *args, char **result_json,
                  cn_error *err)
{
    return cn_sg_neighbours_run(h, ctx, args, CN_EDGES_OUT, result_json, err);
}

static int fe_create(const cn_host *host, const cn_skill_context *ctx, cn_executor **out, cn_error *err)
{
    return cn_su_simple_executor(host, ctx, fe_run, out, err);
}

CN_SKILL_DEFINE(find_callees, "find_callees", "0.1.0", fe_create);
