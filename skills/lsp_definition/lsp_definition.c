/* SPDX-License-Identifier: Apache-2.0 */
/* lsp_definition: where a symbol is defined, by name or by a position in a
 * file, through the host's LSP service (the configured provider, by
 * default lsp-static over the compiled symbol graph).  Lines are 0-based
 * here and 1-based for the model (inputs is_line_number, outputs
 * line_fields). */
#include <codenib/skill.h>

#include "cn_skill_util.h"

#define MAX_TOP_K 500

static int d_run(const cn_host *h, const cn_skill_context *ctx, const cn_json *args, char **result_json,
                 cn_error *err)
{
    static const char *const keys[] = {"symbol", "file_path", "line", "character", NULL};
    return cn_su_lsp_run(h, ctx, args, "definition", keys, MAX_TOP_K, result_json, err);
}

static int d_create(const cn_host *host, const cn_skill_context *ctx, cn_executor **out, cn_error *err)
{
    return cn_su_simple_executor(host, ctx, d_run, out, err);
}

CN_SKILL_DEFINE(lsp_definition, "lsp_definition", "0.1.0", d_create);
