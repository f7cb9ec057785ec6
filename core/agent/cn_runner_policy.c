/* SPDX-License-Identifier: Apache-2.0 */
/* The runner's policies: which tools a run offers, which tool_choice a turn
 * sends, how one tool call is executed and recorded, the compaction after
 * the first read, and the fallback contract built from the files read. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../plugin/cn_meta.h"
#include "../plugin/cn_registry.h"
#include "cn_agent.h"
#include "cn_tools.h"

/* Longest tool output the model sees; longer output is cut with a note. */

double cn_agent__now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void cn_agent__event(cn_run *run, const char *kind, int turn, json_object *data)
{
    json_object *ev = data ? data : json_object_new_object();
    if (run->trace.fp != NULL || run->trace.collected != NULL) {
        json_object_object_add(ev, "event", json_object_new_string(kind));
        json_object_object_add(ev, "turn", json_object_new_int(turn));
        json_object_object_add(ev, "ms",
                               json_object_new_double((cn_agent__now() - run->t0) * 1000.0));
        cn_trace_event(&run->trace, ev);
    }
    json_object_put(ev);
}

static const char *tool_name_of(json_object *tool)
{
    json_object *fn, *n;
    if (json_object_object_get_ex(tool, "function", &fn) &&
        json_object_object_get_ex(fn, "name", &n))
        return json_object_get_string(n);
    return NULL;
}

static void warn(cn_run *run, const char *fmt, const char *a, const char *b) CN_PRINTF(2, 0);
static void warn(cn_run *run, const char *fmt, const char *a, const char *b)
{
    cn_buf m = CN_BUF_INIT;
    cn_buf_printf(&m, fmt, a, b);
    if (m.data == NULL || cn_strv_push_owned(&run->res->warnings, cn_buf_steal(&m)) < 0) cn_buf_free(&m);
}

/* The skill allow list of this query: the options' list narrowed by the
 * compile table's scenario (never broadened). */
static int skill_allow(cn_run *run, const char *prompt, cn_strv *allow, bool *limited)
{
    const cn_agent_options *o = run->o;
    cn_compile_table *t = NULL;
    const cn_strv *base = o->has_allow_skills && o->allow_skills.len ? &o->allow_skills : NULL;
    char *warning = NULL;
    const char *scenario;
    int rc = 0;

    *limited = base != NULL;
    if (o->compile_table == NULL && o->compile_table_path == NULL) {
        for (size_t i = 0; base && i < base->len; i++) cn_strv_push(allow, base->items[i]);
        return 0;
    }
    rc = o->compile_table ? cn_compile_table_load(o->compile_table, "compile_table", &t)
                          : cn_compile_table_load_file(o->compile_table_path, &t);
    if (rc < 0) return rc;
    {
        cn_strv names = CN_STRV_INIT; /* a table naming skills nobody has: say so */
        cn_compile_table_all_skills(t, &names);
        for (size_t i = 0; i < names.len; i++)
            if (cn_registry_find(run->reg, names.items[i]) == NULL)
                warn(run, "compile table names \"%s\", which is no loaded skill%s; it is ignored", names.items[i],
                     "");
        cn_strv_free(&names);
    }
    scenario = cn_compile_table_select(t, prompt, &run->session);
    run->res->scenario = cn_strdup(scenario);
    rc = cn_compile_table_narrow(t, scenario, base, allow, &warning);
    if (rc == 0 && scenario != NULL) *limited = true;
    if (warning) cn_strv_push_owned(&run->res->warnings, warning);
    if (rc == 0 && scenario != NULL && allow->len > 0) {
        size_t k = 0; /* only skills that exist; none left: the table does not narrow */
        for (size_t i = 0; i < allow->len; i++) {
            if (cn_registry_find(run->reg, allow->items[i]) != NULL) allow->items[k++] = allow->items[i];
            else free(allow->items[i]);
        }
        allow->len = k;
        if (k == 0) {
            warn(run, "compile table scenario \"%s\" names no loaded skill; %s", scenario,
                 base ? "keeping the allowed skills unchanged" : "offering every skill");
            for (size_t i = 0; base && i < base->len; i++) cn_strv_push(allow, base->items[i]);
            *limited = base != NULL;
        }
    }
    cn_compile_table_free(t);
    return rc;
}

static int add_default_tools(cn_run *run)
{
    cn_strv ids = CN_STRV_INIT;
    int rc = cn_agent_options_tool_ids(run->o, &ids);

    for (size_t i = 0; rc == 0 && i < ids.len; i++) {
        json_object *schema;
        if (strcmp(ids.items[i], "bash") == 0 && !run->tcfg.bash_enabled) {
            /* offered, every call would be refused: leave it out and say so */
            cn_strv_push(&run->res->warnings, "default_tool_ids names bash, but bash is disabled in this run "
                                              "(enable_bash: true turns it on); bash is not offered");
            continue;
        }
        schema = cn_tools_schema(&run->tcfg, ids.items[i]);
        if (schema == NULL) {
            rc = cn_error_set(CN_EINVAL,
                              "agent: '%s' is not a default tool (known: read, grep, "
                              "glob, bash); fix default_tool_ids",
                              ids.items[i]);
            break;
        }
        if (cn_strv_contains(&run->tool_names, ids.items[i])) {
            json_object_put(schema);
            rc = cn_error_set(CN_ECONFLICT,
                              "agent: skill '%s' has the name of a default tool; "
                              "tools and skills share one namespace, so rename the skill or "
                              "leave the tool out (default_tool_ids)",
                              ids.items[i]);
            break;
        }
        json_object_array_add(run->tools, schema);
        cn_strv_push(&run->tool_names, ids.items[i]);
        cn_strv_push(&run->default_ids, ids.items[i]);
    }
    cn_strv_free(&ids);
    return rc;
}

/* Skills that call a model the registry was not given (crossencoder_rerank
 * without a rerank endpoint, llm_rerank when the caller's registry has no
 * chat model) could only fail: they are left out, with the reason. */
static int model_guard(const cn_registry *reg, cn_strv *excluded, cn_strv *why)
{
    static const struct {
        const char *resource;
        int role;
        const char *what;
    } needs[] = {{"chat_model", CN_LLM_CHAT, "a chat model (--model M or CODENIB_MODEL)"},
                 {"rerank_model", CN_LLM_RERANK,
                  "a rerank endpoint (--rerank-model M [--rerank-base-url URL], or CODENIB_RERANK_MODEL)"}};
    for (size_t i = 0; i < reg->n_entries; i++) {
        const cn_skill_entry *e = reg->entries[i];
        if (e->meta == NULL || e->state == CN_STATE_FAILED || e->state == CN_STATE_DUPLICATE) continue;
        if (!cn_registry_enabled(reg, e->id) || cn_strv_contains(excluded, e->id)) continue;
        for (size_t k = 0; k < sizeof needs / sizeof needs[0]; k++) {
            cn_buf b = CN_BUF_INIT;
            if (!cn_strv_contains(&e->meta->resources, needs[k].resource) || reg->models[needs[k].role] != NULL)
                continue;
            cn_buf_printf(&b, "skill %s needs %s, and this run has none", e->id, needs[k].what);
            if (cn_strv_push(excluded, e->id) < 0 || cn_strv_push_owned(why, cn_buf_steal(&b)) < 0)
                return cn_error_set(CN_ENOMEM, "out of memory");
            break;
        }
    }
    return 0;
}

/* The skills that cannot run this time (their index or model is missing):
 * a skill the allow list names explicitly is an error -- it was asked for
 * and cannot be given -- the others are left out with a warning each. */
static int guard(cn_run *run, cn_strv *exclude)
{
    const cn_agent_options *o = run->o;
    cn_strv out = CN_STRV_INIT, why = CN_STRV_INIT;
    int rc = cn_resource_guard(run->reg, NULL, o->index_known_fresh, &out, &why, &run->res->warnings);

    if (rc == 0) rc = model_guard(run->reg, &out, &why);
    for (size_t i = 0; rc == 0 && i < out.len; i++) {
        if (cn_strv_contains(exclude, out.items[i])) continue; /* left out anyway */
        if (o->has_allow_skills && cn_strv_contains(&o->allow_skills, out.items[i])) {
            rc = cn_error_set(CN_ENOCONTEXT, "%s; it was asked for (allow_skills, --skills), so the run "
                                             "does not go on without it", why.items[i]);
            break;
        }
        if (cn_strv_push(exclude, out.items[i]) < 0 || cn_strv_push(&run->res->warnings, why.items[i]) < 0)
            rc = cn_error_set(CN_ENOMEM, "out of memory");
    }
    cn_strv_free(&out);
    cn_strv_free(&why);
    return rc;
}

/* Ids a list names that no loaded skill has: each would be silently
 * nothing, so each is said. */
static void warn_unknown_ids(cn_run *run, const cn_strv *ids, const char *field)
{
    for (size_t i = 0; i < ids->len; i++)
        if (cn_registry_find(run->reg, ids->items[i]) == NULL)
            warn(run, "%s names \"%s\", which is no loaded skill (see `codenib skills list`); it is ignored", field,
                 ids->items[i]);
}

/* Options that would quietly do nothing in this run: an empty allow list,
 * skill ids nobody has, a forced tool that is not offered. */
static void warn_options(cn_run *run)
{
    const cn_agent_options *o = run->o;
    const char *c = o->first_turn_tool_choice;
    if (o->has_allow_skills && o->allow_skills.len == 0)
        warn(run, "allow_skills is an empty list: no skill is offered%s%s (leave it out to offer them all)", "", "");
    warn_unknown_ids(run, &o->allow_skills, "allow_skills");
    warn_unknown_ids(run, &o->exclude_skills, "exclude_skills");
    if (c != NULL && c[0] != '\0' && strcmp(c, "auto") != 0 && strcmp(c, "required") != 0 && strcmp(c, "none") != 0 &&
        !cn_strv_contains(&run->tool_names, c))
        warn(run, "first_turn_tool_choice \"%s\" is not a tool offered in this run%s; no tool is forced", c, "");
}

int cn_agent__tools(cn_run *run, const char *prompt)
{
    const cn_agent_options *o = run->o;
    cn_strv allow = CN_STRV_INIT, exclude = CN_STRV_INIT;
    bool limited = false;
    int rc;

    for (size_t i = 0; i < o->exclude_skills.len; i++)
        cn_strv_push(&exclude, o->exclude_skills.items[i]);
    rc = guard(run, &exclude);
    if (rc == 0) rc = skill_allow(run, prompt, &allow, &limited);
    if (rc == 0) {
        /* An allow list that narrowed to nothing offers no skill at all. */
        if (limited && allow.len == 0) {
            run->tools = json_object_new_array();
        } else {
            run->tools = cn_registry_tools(run->reg, limited ? &allow : NULL, &exclude);
        }
        for (size_t i = 0; i < json_object_array_length(run->tools); i++)
            cn_strv_push(&run->tool_names, tool_name_of(json_object_array_get_idx(run->tools, i)));
        rc = add_default_tools(run);
        if (rc == 0) warn_options(run);
    }
    cn_strv_free(&allow);
    cn_strv_free(&exclude);
    return rc;
}

json_object *cn_agent__tool_choice(cn_run *run, int turn)
{
    const char *c = run->o->first_turn_tool_choice;
    json_object *fn, *tc;

    if (c == NULL || c[0] == '\0' || run->has_read) return NULL;
    if (run->o->force_first_turn_only && turn > 1) return NULL;
    if (strcmp(c, "auto") == 0 || strcmp(c, "required") == 0 || strcmp(c, "none") == 0)
        return json_object_new_string(c);
    if (!cn_strv_contains(&run->tool_names, c)) return NULL; /* not offered this run */
    fn = json_object_new_object();
    json_object_object_add(fn, "name", json_object_new_string(c));
    tc = json_object_new_object();
    json_object_object_add(tc, "type", json_object_new_string("function"));
    json_object_object_add(tc, "function", fn);
    return tc;
}

/* The text joined with the note that says what was cut from it. */
static char *with_note(char *text, char *note)
{
    cn_buf b = CN_BUF_INIT;
    if (note == NULL) return text;
    cn_buf_printf(&b, "%s\n%s", text ? text : "", note);
    free(text);
    free(note);
    return cn_buf_steal(&b);
}

static void run_skill(cn_run *run, cn_tool_record *rec)
{
    cn_skill_entry *e = cn_registry_find(run->reg, rec->name);
    json_object *result = NULL;

    if (e != NULL && e->meta != NULL &&
        cn_params_resolve(e->meta, NULL, rec->arguments, &rec->resolved_arguments) < 0)
        rec->resolved_arguments = NULL;
    if (cn_registry_invoke(run->reg, rec->name, rec->arguments, NULL, &result) < 0) {
        rec->error = cn_strdup(cn_error_last()->message);
        return;
    }
    {
        char *text = NULL, *note = NULL;
        if (cn_result_text(e ? e->meta : NULL, result, rec->arguments, run->tcfg.output_cap, &text, &note) < 0) {
            rec->error = cn_strdup(cn_error_last()->message);
        } else {
            rec->result = with_note(text, note);
        }
    }
    json_object_put(result);
}

static void run_tool(cn_run *run, cn_tool_record *rec)
{
    char *out = NULL;

    rec->resolved_arguments = json_object_get(rec->arguments);
    if (cn_tool_run(&run->tcfg, rec->name, rec->arguments, &out) < 0) {
        rec->error = cn_strdup(cn_error_last()->message);
        free(out);
        return;
    }
    /* capped by the tool itself at run->tcfg.output_cap, with its note */
    rec->result = out ? out : cn_strdup("");
}

/* Parses the model's argument string; an empty string means {}. */
static int parse_arguments(cn_tool_record *rec, const char *text)
{
    enum json_tokener_error jerr = json_tokener_success;
    json_object *args;
    cn_buf b = CN_BUF_INIT;

    if (text == NULL || text[strspn(text, " \t\r\n")] == '\0') {
        rec->arguments = json_object_new_object();
        return 0;
    }
    args = json_tokener_parse_verbose(text, &jerr);
    if (args != NULL && json_object_is_type(args, json_type_object)) {
        rec->arguments = args;
        return 0;
    }
    json_object_put(args);
    cn_buf_printf(&b,
                  "the arguments of %s are not a JSON object (%s); call it again with a "
                  "JSON object of its parameters",
                  rec->name,
                  jerr != json_tokener_success ? json_tokener_error_desc(jerr)
                                               : "another JSON value");
    rec->error = cn_buf_steal(&b);
    return -1;
}

void cn_agent__execute(cn_run *run, json_object *call, int turn, cn_tool_record *rec)
{
    json_object *fn = NULL, *v;
    double t = cn_agent__now();
    const char *args_text = NULL;

    memset(rec, 0, sizeof *rec);
    rec->turn = turn;
    /* Only strings are taken (cn_llm_chat checked them already); a
     * call's members are never converted from other types. */
    if (json_object_object_get_ex(call, "id", &v) && json_object_is_type(v, json_type_string))
        rec->id = cn_strdup(json_object_get_string(v));
    json_object_object_get_ex(call, "function", &fn);
    if (json_object_object_get_ex(fn, "name", &v) && json_object_is_type(v, json_type_string))
        rec->name = cn_strdup(json_object_get_string(v));
    if (json_object_object_get_ex(fn, "arguments", &v) && json_object_is_type(v, json_type_string))
        args_text = json_object_get_string(v);
    if (rec->name == NULL) rec->name = cn_strdup("");

    if (!cn_strv_contains(&run->tool_names, rec->name)) {
        cn_buf b = CN_BUF_INIT;
        cn_buf_printf(&b, "tool '%s' is not offered in this session; use one of:", rec->name);
        for (size_t i = 0; i < run->tool_names.len; i++)
            cn_buf_printf(&b, "%s %s", i ? "," : "", run->tool_names.items[i]);
        rec->error = cn_buf_steal(&b);
    } else if (parse_arguments(rec, args_text) == 0) {
        if (cn_strv_contains(&run->default_ids, rec->name))
            run_tool(run, rec);
        else
            run_skill(run, rec);
    }
    rec->seconds = cn_agent__now() - t;
}

static const char *msg_role(json_object *m)
{
    json_object *r;
    return json_object_object_get_ex(m, "role", &r) ? json_object_get_string(r) : "";
}

/* Collapses the conversation to the system messages plus one user message
 * carrying the question, the paths read so far and the last few read
 * outputs verbatim: later turns stop re-sending every bulky result. */
bool cn_agent__compact(cn_run *run, int turn)
{
    size_t keep = run->o->compact_keep_reads > 0 ? (size_t)run->o->compact_keep_reads : 1;
    size_t first = run->read_outputs.len > keep ? run->read_outputs.len - keep : 0;
    cn_history fresh = CN_HISTORY_INIT;
    cn_buf b = CN_BUF_INIT;
    json_object *user;

    if (run->read_paths.len == 0) return false;
    for (size_t i = 0; i < run->h.len; i++)
        if (strcmp(msg_role(run->h.items[i]), "system") == 0)
            cn_history_add(&fresh, json_object_get(run->h.items[i]));
    cn_buf_printf(
        &b, "%s\n\nProgress so far (earlier tool output was condensed). Files read:", run->query);
    for (size_t i = 0; i < run->read_paths.len; i++) {
        bool dup = false;
        for (size_t j = 0; j < i; j++)
            dup = dup || strcmp(run->read_paths.items[j], run->read_paths.items[i]) == 0;
        if (!dup) cn_buf_printf(&b, "\n- %s", run->read_paths.items[i]);
    }
    for (size_t i = first; i < run->read_outputs.len; i++)
        cn_buf_printf(&b, "\n\nContents of %s as read:\n%s", run->read_paths.items[i],
                      run->read_outputs.items[i]);
    cn_buf_puts(&b, "\n\nContinue from here: verify what is still open, then answer.");
    user = json_object_new_object();
    json_object_object_add(user, "role", json_object_new_string("user"));
    json_object_object_add(user, "content", json_object_new_string(b.data));
    cn_buf_free(&b);
    cn_history_add(&fresh, user);
    cn_history_free(&run->h);
    run->h = fresh;
    for (size_t i = 0; i < run->ledger.len; i++)
        if (run->ledger.items[i].state == CN_LEDGER_OFFERED)
            cn_ledger_mark_summarized(&run->ledger, run->ledger.items[i].id, turn,
                                      "compact_after_read");
    return true;
}

char *cn_agent__fallback_answer(const cn_run *run)
{
    cn_contract c = CN_CONTRACT_INIT;
    char *text;

    if (run->read_paths.len == 0) return NULL;
    for (size_t i = 0; i < run->read_paths.len; i++)
        cn_contract_add_file(&c, run->read_paths.items[i]);
    text = cn_contract_render(&c);
    cn_contract_free(&c);
    return text;
}
