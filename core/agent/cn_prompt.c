/* SPDX-License-Identifier: Apache-2.0 */
/* The texts the runner sends: the system prompt rendered for the tool list
 * of one run, and the fixed instructions of the answer policies. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cn_agent.h"

const char cn_agent__contract_format[] = "Files: path/a.ext, path/b.ext\n"
                                         "Symbols: path/a.ext:Qualified.name, path/b.ext:function\n"
                                         "Locations: path/a.ext:START-END, path/b.ext:START-END\n";

const char cn_agent__review_text[] =
    "Before this answer is final, check it against what the tools showed you. "
    "Every file, symbol and line range you name must come from a result you saw; "
    "if something is unverified, look it up now, then give the corrected answer.";

const char cn_agent__final_text[] =
    "The exploration budget is spent. Do not call tools any more: answer the "
    "question now using only what you have already seen.";

char *cn_agent__salvage_text(void)
{
    cn_buf b = CN_BUF_INIT;
    cn_buf_printf(&b,
                  "This is your last turn. Stop searching and commit to an answer now, "
                  "written in exactly this format:\n%s",
                  cn_agent__contract_format);
    return cn_buf_steal(&b);
}

char *cn_agent__schema_text(void)
{
    cn_buf b = CN_BUF_INIT;
    cn_buf_printf(&b,
                  "Your answer is missing the required location block. Restate it, "
                  "based on the code you inspected, in exactly this format:\n%s",
                  cn_agent__contract_format);
    return cn_buf_steal(&b);
}

static bool offered(json_object *tools, const char *name)
{
    for (size_t i = 0; tools && i < json_object_array_length(tools); i++) {
        json_object *fn, *n;
        if (json_object_object_get_ex(json_object_array_get_idx(tools, i), "function", &fn) &&
            json_object_object_get_ex(fn, "name", &n) &&
            strcmp(json_object_get_string(n), name) == 0)
            return true;
    }
    return false;
}

/* The built-in instructions, mentioning only tools that are offered. */
static void builtin_prompt(cn_buf *b, const cn_agent_options *o, json_object *tools)
{
    size_t n = tools ? json_object_array_length(tools) : 0;

    cn_buf_puts(b, "You help a developer find where in a repository a change belongs. "
                   "Work from evidence: locate candidates, confirm them in the source, "
                   "then answer briefly with the files, symbols and line ranges involved.\n");
    if (n == 0) {
        cn_buf_puts(b, "No tools are available in this session; answer from the question "
                       "and the conversation alone.\n");
    } else {
        cn_buf_puts(b, "Use the tools to explore; call several at once when they are "
                       "independent.\n");
        if (offered(tools, "read"))
            cn_buf_puts(b, "Open the code you cite with `read` before naming it in the "
                           "answer; line numbers start at 1.\n");
        if (offered(tools, "grep") || offered(tools, "glob"))
            cn_buf_puts(b, "`grep` and `glob` find text and paths when you know what to "
                           "look for.\n");
        if (offered(tools, "bash"))
            cn_buf_puts(b, "`bash` runs a shell command in the repository root; prefer the "
                           "other tools when they suffice.\n");
        if (offered(tools, "lsp_route") || offered(tools, "find_callers"))
            cn_buf_puts(b, "Graph tools follow definitions, callers and callees from a "
                           "symbol you already found.\n");
    }
    if (o->force_localization_contract)
        cn_buf_printf(b, "End your final answer with this block:\n%s", cn_agent__contract_format);
}

char *cn_agent_system_prompt_ex(const cn_agent_options *o, json_object *tools,
                                const char *repo_root, const cn_strv *warnings)
{
    cn_buf b = CN_BUF_INIT;
    char date[32] = "unknown";
    time_t now = time(NULL);
    struct tm tm;
    size_t n = tools ? json_object_array_length(tools) : 0;

    if (o && o->system_prompt && o->system_prompt[0]) {
        cn_buf_puts(&b, o->system_prompt);
        if (b.len && b.data[b.len - 1] != '\n') cn_buf_putc(&b, '\n');
    } else {
        cn_agent_options dflt;
        cn_agent_options_init(&dflt);
        builtin_prompt(&b, o ? o : &dflt, tools);
        cn_agent_options_free(&dflt);
    }
    if (gmtime_r(&now, &tm) != NULL) strftime(date, sizeof date, "%Y-%m-%d", &tm);
    cn_buf_printf(&b, "\n# Environment\nRepository root: %s\nDate: %s\nTools:",
                  repo_root ? repo_root : "(none)", date);
    for (size_t i = 0; i < n; i++) {
        json_object *fn, *name;
        if (json_object_object_get_ex(json_object_array_get_idx(tools, i), "function", &fn) &&
            json_object_object_get_ex(fn, "name", &name))
            cn_buf_printf(&b, "%s %s", i ? "," : "", json_object_get_string(name));
    }
    if (n == 0) cn_buf_puts(&b, " (none)");
    cn_buf_putc(&b, '\n');
    if (warnings && warnings->len) {
        cn_buf_puts(&b, "\n# Notes on this session\n");
        for (size_t i = 0; i < warnings->len; i++) cn_buf_printf(&b, "- %s\n", warnings->items[i]);
    }
    return cn_buf_steal(&b);
}

char *cn_agent_system_prompt(const cn_agent_options *o, json_object *tools, const char *repo_root)
{
    return cn_agent_system_prompt_ex(o, tools, repo_root, NULL);
}
