/* SPDX-License-Identifier: Apache-2.0 */
/* Support modules of the agent runtime: the options every run takes (and
 * harness spec files that set them), the chat history with its token
 * budget, the JSON Lines trace with its context ledger and run totals,
 * query-time compile tables, the resource guard that drops skills whose
 * index is missing (and notes a stale one), and the lsp_route startup context.
 * The loop itself (cn_agent.h) uses these; none of them talks to a model. */
#ifndef CN_AGENT_SUPPORT_H
#define CN_AGENT_SUPPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <json-c/json.h>

#include "../util/cn_util.h"

struct cn_registry;
struct cn_skill_meta;

/* ---- options (cn_harness.c) ---------------------------------------------
 * Every knob of a run.  Strings and lists are owned (freed by
 * cn_agent_options_free); set them with cn_strdup / cn_strv_push. */
typedef struct cn_agent_options {
    char *model;                    /* model name for the chat backend (NULL: its default) */
    double temperature;             /* 0.0 */
    int max_tokens;                 /* answer budget per completion: 4096 */
    char *system_prompt;            /* NULL: the built-in prompt */
    int max_turns;                  /* >= 1; default 10 */
    long max_context_tokens;        /* history budget; 0 = unlimited */
    int keep_last;                  /* non-system messages trimming always keeps: 2 */
    cn_strv allow_skills;           /* empty with has_allow_skills false: every skill */
    bool has_allow_skills;          /* an allow list was given (even empty) */
    cn_strv exclude_skills;
    bool include_default_tools;     /* true */
    cn_strv default_tool_ids;       /* empty: read, grep, glob (+ bash with enable_bash) */
    bool enable_bash;               /* false */
    long max_tool_output;           /* bound of one tool result, bytes: 30000 */
    char *first_turn_tool_choice;   /* NULL, "auto", "required", "none" or a tool name */
    bool force_first_turn_only;     /* false; true: force the choice on turn 1 only */
    bool force_localization_contract;  /* false */
    bool force_final_answer;        /* false: on the last turn, ask for an answer without tools */
    bool review_final_answer;       /* false */
    bool compact_after_read;        /* false: summarize older read results */
    int compact_keep_reads;         /* newest read results kept verbatim when compacting: 0 */
    bool enable_lsp_route_context;  /* false */
    int lsp_route_seed_limit;       /* >= 1; default 8 */
    char *lsp_route_seed_policy;    /* "all" or "specific"; default "all" */
    bool lsp_route_query_fallback;  /* false */
    int lsp_route_top_k;            /* 12 */
    bool lsp_route_include_neighbors;  /* true */
    /* Set by a caller that has just checked (or made) the index fresh, as
     * `codenib query` does: the resource guard then skips re-reading every
     * file of the repository.  Not a harness key. */
    bool index_known_fresh;
    /* Keep the trace's events in the result (cn_agent_result.trace) as
     * well as in trace_path; not a harness key. */
    bool collect_trace;
    char *trace_path;               /* JSON Lines trace; NULL = none */
    json_object *chat_history;      /* array of seed messages (owned reference), or NULL */
    char *compile_table_path;       /* a JSON/YAML compile table file, or NULL */
    json_object *compile_table;     /* an inline table (owned reference), or NULL */
} cn_agent_options;

void cn_agent_options_init(cn_agent_options *o);
void cn_agent_options_free(cn_agent_options *o);
/* Checks ranges and enumerations (max_turns >= 1, max_tokens >= 1,
 * seed policy all|specific, tool choice shape, ...).  `where` prefixes
 * messages (NULL: "options").  CN_EINVAL on the first problem. */
int cn_agent_options_validate(const cn_agent_options *o, const char *where);
/* The default tool ids in effect: default_tool_ids when given, else read,
 * grep, glob, and bash when enable_bash; none without include_default_tools. */
int cn_agent_options_tool_ids(const cn_agent_options *o, cn_strv *out);

/* ---- harness specs (cn_harness.c) ---------------------------------------
 * A spec is a YAML or JSON mapping whose keys are the option names above
 * (allow_skills etc. as lists of strings, compile_table as a path string or
 * an inline mapping; null resets a string, list or table).  Unknown keys,
 * wrong types and values validation refuses are CN_EINVAL errors naming
 * file:line(:col).  Files are read with the YAML reader (JSON is YAML, and
 * so gets line numbers too); JSON only json-c can read is parsed by it,
 * and its errors then name just the file. */
int cn_harness_load_file(const char *path, cn_agent_options *o);
/* Applies the public struct of <codenib/codenib.h> over `o`: its
 * options_json as a harness mapping first, then every field that is set
 * (non-zero; -1 turns a flag off), then validates.  Errors name the field
 * ("cn_agent_settings.max_turns: ...").  cn_agent_settings.c. */
struct cn_agent_settings;
int cn_agent_settings_apply(const struct cn_agent_settings *s, cn_agent_options *o);
/* Applies a parsed mapping over `o` (only the keys present change), then
 * validates.  On error `o` may be partly changed: discard it. */
int cn_harness_apply_json(json_object *spec, const char *where, cn_agent_options *o);
/* Every option as a mapping cn_harness_apply_json accepts (round trip). */
json_object *cn_harness_to_json(const cn_agent_options *o);

/* ---- chat history (cn_history.c) ----------------------------------------
 * Messages in OpenAI chat shape ({"role", "content", "tool_calls",
 * "tool_call_id", ...}), each an owned json_object reference. */
typedef struct cn_history {
    json_object **items;
    size_t len;
    size_t cap;
} cn_history;

#define CN_HISTORY_INIT {NULL, 0, 0}

void cn_history_init(cn_history *h);
void cn_history_free(cn_history *h);
/* Takes the reference `msg` (also on failure).  Must be an object. */
int cn_history_add(cn_history *h, json_object *msg);
/* Appends a new reference to each element of the array `msgs`. */
int cn_history_extend(cn_history *h, json_object *msgs);
/* A new array holding new references to every message. */
json_object *cn_history_messages(const cn_history *h);
void cn_history_clear(cn_history *h);
/* Estimated tokens of one message when no tokenizer is known: 4 per
 * message plus a quarter (rounded down) of the characters of its content
 * (a string, or the "text" of content parts), its tool calls' function
 * names and arguments, and its tool_call_id. */
size_t cn_tokens_estimate(json_object *message);
size_t cn_history_tokens(const cn_history *h);
/* Evicts the oldest messages until the estimate fits max_tokens (0 = no
 * limit).  System messages and the last keep_last non-system messages
 * (at least one: the newest message is never evicted) are kept; an assistant message with tool_calls and the tool results that
 * answer it go together (a group touching the kept tail is kept whole), so
 * no tool result is ever left without its call.  Returns how many messages
 * were evicted (>= 0). */
int cn_history_trim(cn_history *h, size_t max_tokens, size_t keep_last);

/* ---- trace (cn_trace.c) --------------------------------------------------
 * JSON Lines: one compact object per line, flushed after each event. */
typedef struct cn_trace {
    FILE *fp;
    char *path;
    size_t events;
    json_object *collected; /* events kept in memory too (an array), or NULL */
} cn_trace;

/* Opens (truncating) `path`.  CN_EIO naming the path on failure. */
int cn_trace_open(cn_trace *t, const char *path);
/* Writes `ev` (borrowed) as one line, and keeps a reference to it in
 * `collected` when that is set.  A closed trace ignores events. */
int cn_trace_event(cn_trace *t, json_object *ev);
void cn_trace_close(cn_trace *t);

/* ---- context ledger (cn_trace.c) ----------------------------------------
 * What was offered to the model and what became of it. */
typedef enum cn_ledger_state {
    CN_LEDGER_OFFERED = 0,
    CN_LEDGER_CONSUMED,
    CN_LEDGER_EXPIRED,
    CN_LEDGER_SUMMARIZED
} cn_ledger_state;

typedef struct cn_ledger_entry {
    int id;                /* 1-based, in offering order */
    char *kind;            /* "tool_result", "route_hint", ... */
    char *source;          /* tool or skill id */
    char *ref;             /* tool_call_id or other handle (may be NULL) */
    int turn_offered;
    size_t tokens;         /* estimate when offered */
    cn_ledger_state state;
    int turn_changed;      /* turn of the last state change (-1: none) */
    char *by;              /* consumer, or reason of expiry/summary */
} cn_ledger_entry;

typedef struct cn_ledger {
    cn_ledger_entry *items;
    size_t len;
    size_t cap;
} cn_ledger;

#define CN_LEDGER_INIT {NULL, 0, 0}

const char *cn_ledger_state_name(cn_ledger_state s);
/* Records an offer and returns its id (> 0) or a negative error. */
int cn_ledger_offer(cn_ledger *l, const char *kind, const char *source, const char *ref, int turn,
                    size_t tokens);
/* State changes apply only to OFFERED entries (a later change of a consumed
 * entry is CN_EINVAL); an unknown id is CN_ENOTFOUND. */
int cn_ledger_mark_consumed(cn_ledger *l, int id, int turn, const char *consumer);
int cn_ledger_mark_expired(cn_ledger *l, int id, int turn, const char *reason);
int cn_ledger_mark_summarized(cn_ledger *l, int id, int turn, const char *reason);
/* The entry whose ref equals `ref`, or NULL. */
cn_ledger_entry *cn_ledger_find_ref(cn_ledger *l, const char *ref);
/* Counts per state ({"offered": n, "consumed": n, ...}) and the entries. */
json_object *cn_ledger_to_json(const cn_ledger *l);
void cn_ledger_free(cn_ledger *l);

/* ---- run totals (cn_trace.c) --------------------------------------------
 * Sums over runs; a usage total stays -1 (unknown) until some run reports
 * it, so "no data" never reads as zero. */
typedef struct cn_agent_totals {
    long runs;
    long turns;                   /* -1 until a run reports turns */
    long long prompt_tokens;      /* -1: unknown */
    long long completion_tokens;  /* -1: unknown */
    long long cached_tokens;      /* -1: unknown */
} cn_agent_totals;

void cn_agent_totals_init(cn_agent_totals *t);
/* Adds one run.  turns < 0 and usage fields absent from `usage` (an
 * OpenAI-shaped usage object, may be NULL) leave totals unchanged;
 * cached tokens are read from prompt_tokens_details.cached_tokens or
 * cached_tokens. */
void cn_agent_totals_add(cn_agent_totals *t, int turns, json_object *usage);
/* {"runs", "turns", "prompt_tokens", ...} with null for unknown. */
json_object *cn_agent_totals_to_json(const cn_agent_totals *t);

/* ---- session context (cn_session.c) ------------------------------------ */

typedef struct cn_session {
    char *language; /* primary language by file count, or NULL */
    long files;     /* files seen (hidden and vendored directories left out) */
    long symbols;   /* -1: not known */
    bool partial;   /* the walk stopped at its bound */
    cn_strv top;    /* top-level entries, sorted, directories end in '/' */
} cn_session;

/* The top-level entries of root, and with walk_tree its language and size
 * by a bounded walk (without, cn_session_from_index gives them). */
int cn_session_scan(const char *root, bool walk_tree, cn_session *s);
/* Language, files and symbols from the manifest of a compiled index. */
void cn_session_from_index(cn_session *s, const char *index_dir);
void cn_session_free(cn_session *s);
/* "small" (< 200 files), "medium" (< 2000), "large", or "unknown". */
const char *cn_session_size_bucket(const cn_session *s);
/* Whether text holds a stack trace (Python, JVM, JavaScript, Go, Rust, C/C++ frames). */
bool cn_has_stacktrace(const char *text);

/* ---- compile tables (cn_compile_table.c) --------------------------------
 * Query-time skill selection.  A table is a mapping
 *   { "scenarios": [ { "name": s, "keywords": [...], "patterns": [regex...],
 *                      "skills": [...] }, ... ],
 *     "default": scenario-name (optional) }
 * or the short form { scenario-name: [skills...] , ... } whose scenario
 * names double as keywords.  Scenarios are tried in order; the first with
 * a matching keyword (case-insensitive substring) or pattern (PCRE2,
 * case-insensitive) wins. */
typedef struct cn_compile_table cn_compile_table;

int cn_compile_table_load(json_object *table, const char *where, cn_compile_table **out);
/* Reads a JSON or YAML file and loads it. */
int cn_compile_table_load_file(const char *path, cn_compile_table **out);
void cn_compile_table_free(cn_compile_table *t);
/* The scenario for `query`, the default one when none matches, or NULL. */
const char *cn_compile_table_classify(const cn_compile_table *t, const char *query);
/* As above, with the session: a scenario named "LANG:stacktrace" or
 * "LANG:no_stacktrace" (LANG the primary language, or "any") is chosen by
 * whether the query holds a stack trace, before the keywords; "default" is
 * the fallback of a short table. */
const char *cn_compile_table_select(const cn_compile_table *t, const char *query, const cn_session *s);
/* out = allow ∩ skills(scenario).  `allow` NULL means "every skill" (out =
 * the scenario's skills).  An unknown scenario or a NULL one leaves out =
 * allow.  When the intersection is empty the allow set is kept and
 * `warning` (may be NULL) receives a malloc'd sentence saying so.  Never
 * broadens. */
int cn_compile_table_narrow(const cn_compile_table *t, const char *scenario, const cn_strv *allow,
                            cn_strv *out, char **warning);
/* Every skill any scenario names (for choosing what to compile). */
int cn_compile_table_all_skills(const cn_compile_table *t, cn_strv *out);

/* ---- resource guard (cn_resource_guard.c) -------------------------------
 * Skills whose required index is missing are excluded; skills whose index
 * is stale are kept, with a note. */
typedef enum cn_guard_verdict {
    CN_GUARD_OK = 0,      /* every required index is there and fresh */
    CN_GUARD_STALE = 1,   /* there, but stale or too old: the skill runs on it */
    CN_GUARD_MISSING = 2  /* a required index is missing or failed: it cannot run */
} cn_guard_verdict;

/* The decision on its own: `manifest` is a repo_manifest.json object (NULL:
 * nothing compiled), `stale_reasons` why the index is stale (NULL/empty:
 * fresh), `now` the current time (seconds since the epoch).  For MISSING
 * and STALE, `why` (malloc'd) names the skill, the index and the reason
 * ("skill X needs the Y index: ..." / "skill X answers from the Y index,
 * which is stale (...)").  Optional requirements never count. */
cn_guard_verdict cn_resource_guard_check(const struct cn_skill_meta *meta, json_object *manifest,
                                         const cn_strv *stale_reasons, long long now, char **why);
/* For every enabled, usable skill of `reg`: checks its requirements against
 * the manifest (manifest_path, else the registry's index directory) and
 * the freshness `codenib status` computes for the registry's repository.
 * Skills that cannot run are pushed on `excluded`, with one sentence each,
 * in the same order, on `warnings`.  Skills kept on a stale index are
 * described on `notes` (may be NULL): one note for those the repository's
 * changes make stale, one per skill whose index is older than its
 * max_age_seconds.  known_fresh: the caller has just checked freshness,
 * so the repository is not read again.  Does not change `reg`. */
int cn_resource_guard(struct cn_registry *reg, const char *manifest_path, bool known_fresh,
                      cn_strv *excluded, cn_strv *warnings, cn_strv *notes);

/* ---- lsp_route startup context (cn_route_context.c) --------------------- */
typedef struct cn_route_context {
    cn_strv seeds;           /* after extraction and the seed policy */
    json_object *nodes;      /* array of lsp_route result nodes (owned), or NULL */
    json_object *arguments;  /* the arguments lsp_route was called with, or NULL */
    char *text;              /* the rendered hint block ("" when nothing to show) */
    char *fingerprint;       /* 16 hex digits (64-bit FNV-1a over the canonical
                                node list), NULL when no route ran */
    bool skipped;            /* no seeds and no query fallback: nothing ran */
} cn_route_context;

void cn_route_context_free(cn_route_context *c);
/* Extracts seeds from `query` (explicit ones first), applies the policy,
 * and unless that leaves none without query fallback, runs lsp_route through
 * the registry and renders the hints.  A missing lsp_route skill is
 * CN_ENOTFOUND. */
int cn_route_context_build(struct cn_registry *reg, const char *query, const cn_strv *explicit_seeds,
                           const cn_agent_options *o, cn_route_context *out);
/* The hint block for `nodes` (array; NULL or empty gives "").  max_nodes 0
 * = all.  A heading, a usage note, "Seeds: a, b" (or "Seeds: none (query
 * text)"), a blank line, then per node "N. file:start-end name [type]"
 * ("file:line" when start == end) plus " - <relation>" when the node has a
 * "relation" string, else " - <edge> edge (<direction>) from <from_name>"
 * for a neighbour's "via". */
char *cn_route_context_render(const cn_strv *seeds, json_object *nodes, size_t max_nodes);
/* 16 lowercase hex digits; depends on each node's path, lines, name and type
 * in order. */
char *cn_route_context_fingerprint(json_object *nodes);

#endif /* CN_AGENT_SUPPORT_H */
