/* SPDX-License-Identifier: Apache-2.0 */
/* lsp_references: every place a symbol is used (calls, references,
 * imports, base classes), by name or by a position in a file, through the
 * host's LSP service (the configured provider, by default lsp-static over
 * the compiled symbol graph).  Each result is the node that uses the
 * symbol plus the use site's line and character.  Lines are 0-based here
 * and 1-based for the model (inputs is_line_number, outputs line_fields). */
#include <codenib/skill.h>

#include "cn_skill_util.h"

#define MAX_TOP_K 500

static int r_run(const cn_host *h, const cn_skill_context *ctx, const cn_json *args, char **result_json,
                 cn_error *err)
{
    static const char *const keys[] = {"symbol", "file_path", "line", "character", "include_declaration", NULL};
    return cn_su_lsp_run(h, ctx, args, "references", keys, MAX_TOP_K, result_json, err);
}

static int r_create(const cn_host *host, const cn_skill_context *ctx, cn_executor **out, cn_error *err)
{
    return cn_su_simple_executor(host, ctx, r_run, out, err);
}

CN_SKILL_DEFINE(lsp_references, "lsp_references", "0.1.0", r_create);
