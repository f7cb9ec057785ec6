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

/* The offered names among `names` (NULL-terminated), as "`a`, `b`";
 * false when none is offered. */
static bool list_offered(cn_buf *b, json_object *tools, const char *const *names)
{
    bool any = false;
    for (size_t i = 0; names[i]; i++)
        if (offered(tools, names[i])) {
            cn_buf_printf(b, "%s`%s`", any ? ", " : "", names[i]);
            any = true;
        }
    return any;
}

/* The built-in instructions: the answer contract and the workflow, each
 * step naming only tools that are offered in this run. */
static void builtin_prompt(cn_buf *b, json_object *tools)
{
    static const char *const orient[] = {"codenib_context", "hybrid_search", "bm25_search", "embedding_search",
                                         "code_to_query", "lsp_route", NULL};
    static const char *const verify[] = {"read", NULL};
    static const char *const expand[] = {"find_callers", "find_callees", "trace", "lsp_definition",
                                         "lsp_references", NULL};
    static const char *const text[] = {"grep", "glob", NULL};
    size_t n = tools ? json_object_array_length(tools) : 0;
    int step = 1;

    cn_buf_puts(b, "You help a developer find where in a repository a change belongs: the files, symbols "
                   "and line ranges involved. Work from evidence and answer briefly.\n");
    if (n == 0) {
        cn_buf_puts(b, "No tools are available in this session; answer from the question and the "
                       "conversation alone.\n");
    } else {
        cn_buf_puts(b, "\n# Workflow\n");
        cn_buf_printf(b, "%d. Orient: ", step++);
        if (list_offered(b, tools, orient)) cn_buf_puts(b, " give ranked candidates for the question");
        else if (list_offered(b, tools, text)) cn_buf_puts(b, " find candidates by text and path");
        else cn_buf_puts(b, "start from the names in the question");
        cn_buf_puts(b, ".\n");
        if (offered(tools, "grep") || offered(tools, "glob")) {
            cn_buf_printf(b, "%d. Narrow: ", step++);
            list_offered(b, tools, text);
            cn_buf_puts(b, " find exact text and paths once you know what to look for.\n");
        }
        if (offered(tools, "read")) {
            cn_buf_printf(b, "%d. Verify: open each candidate with ", step++);
            list_offered(b, tools, verify);
            cn_buf_puts(b, " before naming it; line numbers start at 1.\n");
        }
        {
            cn_buf e = CN_BUF_INIT;
            if (list_offered(&e, tools, expand) && e.data)
                cn_buf_printf(b, "%d. Expand: follow definitions, callers and callees through the graph with %s.\n",
                              step++, e.data);
            cn_buf_free(&e);
        }
        if (offered(tools, "bash"))
            cn_buf_printf(b, "%d. `bash` runs a shell command in the repository root; prefer the other tools "
                             "when they suffice.\n", step++);
        cn_buf_printf(b, "%d. Answer with the three lines below.\n", step);
        cn_buf_puts(b, "Call several tools at once when they are independent.\n");
    }
    cn_buf_printf(b, "\n# Answer\nEnd your final answer with exactly these three lines (paths relative to the "
                     "repository root, only what you saw in tool results):\n%s",
                  cn_agent__contract_format);
}

/* Language, size and top-level entries (at most 40) of the repository. */
static void environment(cn_buf *b, const char *repo_root, const cn_session *s)
{
    char date[32] = "unknown";
    time_t now = time(NULL);
    struct tm tm;
    if (gmtime_r(&now, &tm) != NULL) strftime(date, sizeof date, "%Y-%m-%d", &tm);
    cn_buf_printf(b, "\n# Environment\nRepository root: %s\nDate: %s\n", repo_root ? repo_root : "(none)", date);
    if (s == NULL) return;
    cn_buf_printf(b, "Primary language: %s\n", s->language ? s->language : "unknown");
    cn_buf_printf(b, "Repository size: %s%ld files", s->partial ? "over " : "", s->files);
    if (s->symbols >= 0) cn_buf_printf(b, ", %ld symbols", s->symbols);
    cn_buf_printf(b, " (%s)\n", cn_session_size_bucket(s));
    if (s->top.len) {
        size_t shown = s->top.len < 40 ? s->top.len : 40;
        cn_buf_puts(b, "Top-level entries:");
        for (size_t i = 0; i < shown; i++) cn_buf_printf(b, "%s %s", i ? "," : "", s->top.items[i]);
        if (shown < s->top.len) cn_buf_printf(b, ", ... (%zu more)", s->top.len - shown);
        cn_buf_putc(b, '\n');
    }
}

char *cn_agent_system_prompt_ex(const cn_agent_options *o, json_object *tools, const char *repo_root,
                                const cn_strv *warnings, const cn_session *session)
{
    cn_buf b = CN_BUF_INIT;
    size_t n = tools ? json_object_array_length(tools) : 0;

    if (o && o->system_prompt && o->system_prompt[0]) {
        cn_buf_puts(&b, o->system_prompt);
        if (b.len && b.data[b.len - 1] != '\n') cn_buf_putc(&b, '\n');
    } else {
        builtin_prompt(&b, tools);
    }
    environment(&b, repo_root, session);
    cn_buf_puts(&b, "Tools:");
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
    return cn_agent_system_prompt_ex(o, tools, repo_root, NULL, NULL);
}
