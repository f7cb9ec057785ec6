/* SPDX-License-Identifier: Apache-2.0 */
/* The agent loop: a chat model drives tool calls over the registry's skills
 * and the default tools (read, grep, glob, bash) until it answers.
 *
 * One run: the offered tool list is computed (allow/exclude, a compile
 * table's scenario narrowing, the resource guard's exclusions, the default
 * tools; skills and tools share one namespace), the system prompt is
 * rendered for exactly that list, and turns alternate between a model call
 * and the execution of the tool calls it asked for.  Policies (forced
 * first tool choice, localization contract salvage, review pass,
 * compaction after the first read, history trimming, lsp_route startup
 * hints) are the options of cn_agent_options (cn_agent_support.h). */
#ifndef CN_AGENT_H
#define CN_AGENT_H

#include <stdbool.h>
#include <stdint.h>

#include <json-c/json.h>

#include "../llm/cn_llm.h"
#include "../plugin/cn_registry.h"
#include "../util/cn_util.h"
#include "cn_agent_support.h"
#include "cn_contract.h"
#include "cn_tools.h"

/* One tool call the model made. */
typedef struct cn_tool_record {
    char *name;
    char *id;                        /* the model's tool_call_id */
    json_object *arguments;          /* parsed model arguments (NULL: not JSON) */
    json_object *resolved_arguments; /* skills: after defaults and coercion; tools: = arguments */
    char *result;                    /* text the model saw (NULL on error) */
    char *error;                     /* why the call failed or was refused (NULL: ok) */
    double seconds;
    int turn; /* 1-based */
} cn_tool_record;

typedef struct cn_agent_result {
    char *answer;        /* never NULL after a successful run */
    char *answer_source; /* "assistant", "forced_schema", "fallback_files",
                            "forced_answer", "max_turns" */
    cn_contract contract;
    bool has_contract;
    cn_tool_record *calls;
    size_t n_calls;
    json_object *messages; /* the final history (array) */
    json_object *tools;    /* the tool list offered (array) */
    int turns;
    double seconds;
    int64_t prompt_tokens, completion_tokens, cached_tokens; /* -1 unknown */
    json_object *usage_calls; /* per model call: turn, purpose, tokens, finish_reason */
    cn_strv warnings;         /* resource guard, compile table, route context */
    char *scenario;           /* the compile table's scenario, or NULL */
    char *route_fingerprint;  /* lsp_route startup context, or NULL */
    json_object *trace;       /* the trace's events with collect_trace, else NULL */
} cn_agent_result;

/* The system prompt for `tools` (an array of OpenAI tool objects):
 * o->system_prompt or the built-in one, then an environment block
 * (repository root, date, tool names).  Returns malloc'd text. */
char *cn_agent_system_prompt(const cn_agent_options *o, json_object *tools, const char *repo_root);
/* The same with resource warnings (may be NULL) listed in the prompt and
 * the session (may be NULL): language, size and top-level entries. */
char *cn_agent_system_prompt_ex(const cn_agent_options *o, json_object *tools,
                                const char *repo_root, const cn_strv *warnings, const cn_session *session);

/* Runs one query.  `reg` must have its repository set (default tools run
 * in reg->repo_root).  On error *res holds what was gathered so far (free it
 * with cn_agent_result_free either way). */
int cn_agent_run(cn_registry *reg, cn_model *chat, const cn_agent_options *o, const char *prompt,
                 cn_agent_result *res);
void cn_agent_result_free(cn_agent_result *r);
/* {"answer", "answer_source", "contract"|null, "turns", "seconds",
 *  "tool_calls": [...], "usage": {...}, "usage_calls", "warnings", ...}. */
json_object *cn_agent_result_json(const cn_agent_result *r);

/* ---- inside core/agent (the runner's files) ---------------------------- */

/* Fixed instructions the runner sends (cn_prompt.c). */
extern const char cn_agent__contract_format[]; /* the Files/Symbols/Locations format */
char *cn_agent__salvage_text(void);            /* last turn: stop and answer in the format */
char *cn_agent__schema_text(void);             /* answer lacked the contract */
extern const char cn_agent__review_text[];     /* review the draft against the evidence */
extern const char cn_agent__final_text[];      /* budget spent: answer without tools */

typedef struct cn_run {
    cn_registry *reg;
    cn_model *chat;
    const cn_agent_options *o;
    cn_agent_result *res;
    json_object *tools;  /* offered (owned) */
    cn_strv tool_names;  /* every offered name */
    cn_strv default_ids; /* the default tools among them */
    cn_tools_config tcfg;
    cn_history h;
    cn_trace trace;
    cn_ledger ledger;
    cn_strv read_paths;   /* successful reads, in order (repeats kept) */
    cn_strv read_outputs; /* their outputs */
    bool has_read, compacted, reviewed;
    char *query; /* the user message of turn 1 */
    double t0;
    cn_session session; /* language, size, top-level entries of the repository */
} cn_run;

/* cn_runner_policy.c */
double cn_agent__now(void);
/* Fills run->tools / tool_names / default_ids and the warnings. */
int cn_agent__tools(cn_run *run, const char *prompt);
/* The tool_choice of this turn (NULL: none sent). */
json_object *cn_agent__tool_choice(cn_run *run, int turn);
/* Executes one tool call object of an assistant message into rec. */
void cn_agent__execute(cn_run *run, json_object *call, int turn, cn_tool_record *rec);
/* One-shot compaction after the first read; true when it happened. */
bool cn_agent__compact(cn_run *run, int turn);
/* "Files:" contract from the files read, or NULL when nothing was read. */
char *cn_agent__fallback_answer(const cn_run *run);
void cn_agent__event(cn_run *run, const char *kind, int turn, json_object *data);

#endif /* CN_AGENT_H */
