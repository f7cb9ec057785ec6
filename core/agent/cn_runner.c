/* SPDX-License-Identifier: Apache-2.0 */
/* The agent loop: model call, tool execution, repeat -- with the answer
 * policies applied when the model stops calling tools or the turn budget
 * runs out.  The tool list and per-call policies live in
 * cn_runner_policy.c, the texts in cn_prompt.c. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cn_agent.h"
#include "../index/cn_index.h"
#include "cn_tools.h"

static json_object *text_msg(const char *role, const char *content)
{
    json_object *m = json_object_new_object();
    json_object_object_add(m, "role", json_object_new_string(role));
    json_object_object_add(m, "content", json_object_new_string(content ? content : ""));
    return m;
}

static const char *jstr(json_object *o, const char *key)
{
    json_object *v;
    if (o && json_object_object_get_ex(o, key, &v) && json_object_is_type(v, json_type_string))
        return json_object_get_string(v);
    return NULL;
}

static int64_t jint(json_object *o, const char *key)
{
    json_object *v;
    if (o && json_object_object_get_ex(o, key, &v) &&
        (json_object_is_type(v, json_type_int) || json_object_is_type(v, json_type_double)))
        return json_object_get_int64(v);
    return -1;
}

/* Saturating: the counts come from the server, which may claim anything. */
static void add_usage(int64_t *total, int64_t v)
{
    if (v < 0) return;
    *total = *total < 0 ? v : (v > INT64_MAX - *total ? INT64_MAX : *total + v);
}

static void record_usage(cn_run *run, int turn, const char *purpose, json_object *msg)
{
    json_object *usage = NULL, *details = NULL, *rec = json_object_new_object();
    int64_t p, c, k;

    json_object_object_get_ex(msg, "usage", &usage);
    p = jint(usage, "prompt_tokens");
    c = jint(usage, "completion_tokens");
    k = jint(usage, "cached_tokens");
    if (json_object_object_get_ex(usage, "prompt_tokens_details", &details))
        k = jint(details, "cached_tokens");
    add_usage(&run->res->prompt_tokens, p);
    add_usage(&run->res->completion_tokens, c);
    add_usage(&run->res->cached_tokens, k);
    json_object_object_add(rec, "turn", json_object_new_int(turn));
    json_object_object_add(rec, "purpose", json_object_new_string(purpose));
    json_object_object_add(rec, "prompt_tokens", p < 0 ? NULL : json_object_new_int64(p));
    json_object_object_add(rec, "completion_tokens", c < 0 ? NULL : json_object_new_int64(c));
    json_object_object_add(rec, "cached_tokens", k < 0 ? NULL : json_object_new_int64(k));
    json_object_object_add(
        rec, "finish_reason",
        jstr(msg, "finish_reason") ? json_object_new_string(jstr(msg, "finish_reason")) : NULL);
    json_object_array_add(run->res->usage_calls, rec);
}

/* Marks ledger entries whose tool result left the history as expired. */
static void expire_evicted(cn_run *run, int turn)
{
    for (size_t i = 0; i < run->ledger.len; i++) {
        cn_ledger_entry *e = &run->ledger.items[i];
        bool present = false;
        if (e->state != CN_LEDGER_OFFERED || e->ref == NULL) continue;
        for (size_t j = 0; j < run->h.len && !present; j++) {
            const char *id = jstr(run->h.items[j], "tool_call_id");
            present = id && strcmp(id, e->ref) == 0;
        }
        if (!present) cn_ledger_mark_expired(&run->ledger, e->id, turn, "history_trimmed");
    }
}

static void trim_history(cn_run *run, int turn)
{
    const cn_agent_options *o = run->o;
    int evicted;
    json_object *ev;

    if (o->max_context_tokens <= 0) return;
    evicted = cn_history_trim(&run->h, (size_t)o->max_context_tokens,
                              o->keep_last > 0 ? (size_t)o->keep_last : 0);
    if (evicted <= 0) return;
    expire_evicted(run, turn);
    ev = json_object_new_object();
    json_object_object_add(ev, "evicted", json_object_new_int(evicted));
    json_object_object_add(ev, "tokens",
                           json_object_new_int64((int64_t)cn_history_tokens(&run->h)));
    cn_agent__event(run, "history_trimmed", turn, ev);
}

/* What the model was just shown counts as consumed. */
static void consume_offered(cn_run *run, int turn)
{
    for (size_t i = 0; i < run->ledger.len; i++)
        if (run->ledger.items[i].state == CN_LEDGER_OFFERED)
            cn_ledger_mark_consumed(&run->ledger, run->ledger.items[i].id, turn, "model");
}

/* One model call over the history; the assistant message joins the
 * history and *msg (a new reference) is returned.  tool_choice is taken. */
static int model_call(cn_run *run, int turn, const char *purpose, json_object *tool_choice,
                      json_object **msg)
{
    const cn_agent_options *o = run->o;
    json_object *req = json_object_new_object(), *ev = json_object_new_object(), *m = NULL, *v;
    bool tools = json_object_array_length(run->tools) > 0;
    int rc;

    trim_history(run, turn);
    json_object_object_add(req, "messages", cn_history_messages(&run->h));
    if (o->model) json_object_object_add(req, "model", json_object_new_string(o->model));
    json_object_object_add(req, "temperature", json_object_new_double(o->temperature));
    json_object_object_add(req, "max_tokens", json_object_new_int(o->max_tokens));
    if (tools) {
        json_object_object_add(req, "tools", json_object_get(run->tools));
        if (tool_choice) json_object_object_add(req, "tool_choice", json_object_get(tool_choice));
    }
    json_object_object_add(ev, "purpose", json_object_new_string(purpose));
    json_object_object_add(ev, "messages", json_object_new_int((int)run->h.len));
    json_object_object_add(
        ev, "tools", json_object_new_int(tools ? (int)json_object_array_length(run->tools) : 0));
    json_object_object_add(ev, "tool_choice",
                           tools && tool_choice ? json_object_get(tool_choice)
                                                : json_object_new_string("auto"));
    cn_agent__event(run, "llm_call", turn, ev);
    json_object_put(tool_choice);
    rc = cn_llm_chat(run->chat, req, &m);
    json_object_put(req);
    if (rc < 0) return cn_error_prefix("agent turn %d", turn);
    record_usage(run, turn, purpose, m);
    consume_offered(run, turn);
    json_object_object_del(m, "usage");
    json_object_object_del(m, "finish_reason");
    if (!json_object_object_get_ex(m, "content", &v) || v == NULL)
        json_object_object_add(m, "content", json_object_new_string(""));
    cn_history_add(&run->h, json_object_get(m));
    ev = json_object_new_object();
    json_object_object_add(
        ev, "content_chars",
        json_object_new_int((int)strlen(jstr(m, "content") ? jstr(m, "content") : "")));
    /* cn_llm_chat has checked the reply's types; this count is for the
     * trace and must not trust that to stay so. */
    json_object_object_add(ev, "tool_calls",
                           json_object_new_int(json_object_object_get_ex(m, "tool_calls", &v) &&
                                                       json_object_is_type(v, json_type_array)
                                                   ? (int)json_object_array_length(v)
                                                   : 0));
    cn_agent__event(run, "llm_response", turn, ev);
    *msg = m;
    return 0;
}

static const char *last_assistant_text(const cn_run *run)
{
    for (size_t i = run->h.len; i-- > 0;) {
        const char *role = jstr(run->h.items[i], "role"), *c = jstr(run->h.items[i], "content");
        if (role && strcmp(role, "assistant") == 0 && c && c[0]) return c;
    }
    return "";
}

static json_object *choice_none(const cn_run *run)
{
    return json_object_array_length(run->tools) ? json_object_new_string("none") : NULL;
}

/* The answer lacked the contract: one forced turn, then the files read. */
static int force_schema(cn_run *run, int turn, const char *reason, char **answer,
                        const char **source)
{
    json_object *msg = NULL, *ev = json_object_new_object();
    int rc;

    json_object_object_add(ev, "reason", json_object_new_string(reason));
    cn_agent__event(run, "final_answer_forced", turn, ev);
    {
        char *t = cn_agent__schema_text();
        cn_history_add(&run->h, text_msg("user", t));
        free(t);
    }
    if ((rc = model_call(run, turn, "forced_schema", choice_none(run), &msg)) < 0) return rc;
    if (jstr(msg, "content") && cn_contract_present(jstr(msg, "content"))) {
        free(*answer);
        *answer = cn_strdup(jstr(msg, "content"));
        *source = "forced_schema";
    } else {
        char *fb = cn_agent__fallback_answer(run);
        if (fb != NULL) {
            free(*answer);
            *answer = fb;
            *source = "fallback_files";
        }
    }
    json_object_put(msg);
    return 0;
}

static void record_call(cn_run *run, int turn, const cn_tool_record *rec, const char *content)
{
    json_object *ev = json_object_new_object();
    size_t tokens;
    json_object *tm = text_msg("tool", content);

    json_object_object_add(tm, "tool_call_id", json_object_new_string(rec->id ? rec->id : ""));
    tokens = cn_tokens_estimate(tm);
    cn_history_add(&run->h, tm);
    cn_ledger_offer(&run->ledger, "tool_result", rec->name, rec->id, turn, tokens);
    json_object_object_add(ev, "name", json_object_new_string(rec->name));
    json_object_object_add(ev, "id", rec->id ? json_object_new_string(rec->id) : NULL);
    json_object_object_add(ev, "arguments", json_object_get(rec->arguments));
    json_object_object_add(ev, "ok", json_object_new_boolean(rec->error == NULL));
    if (rec->error) json_object_object_add(ev, "error", json_object_new_string(rec->error));
    json_object_object_add(ev, "result_chars", json_object_new_int((int)strlen(content)));
    json_object_object_add(ev, "ms", json_object_new_double(rec->seconds * 1000.0));
    cn_agent__event(run, "tool_call", turn, ev);
}

/* A read of the default tool: traced, and when it succeeded it satisfies
 * the read-before-answering policies (forced choice, fallback, compaction). */
static void note_read(cn_run *run, const cn_tool_record *rec)
{
    const char *path = cn_tool_read_path(rec->arguments);
    json_object *ev, *v;

    if (strcmp(rec->name, "read") != 0 || !cn_strv_contains(&run->default_ids, "read")) return;
    ev = json_object_new_object();
    json_object_object_add(ev, "id", rec->id ? json_object_new_string(rec->id) : NULL);
    json_object_object_add(ev, "path", path ? json_object_new_string(path) : NULL);
    json_object_object_add(
        ev, "offset",
        json_object_object_get_ex(rec->arguments, "offset", &v) ? json_object_get(v) : NULL);
    json_object_object_add(
        ev, "limit",
        json_object_object_get_ex(rec->arguments, "limit", &v) ? json_object_get(v) : NULL);
    json_object_object_add(ev, "status", json_object_new_string(rec->error ? "error" : "ok"));
    cn_agent__event(run, "read", rec->turn, ev);
    if (rec->error != NULL) return;
    run->has_read = true;
    cn_strv_push(&run->read_paths, path ? path : "(unknown)");
    cn_strv_push(&run->read_outputs, rec->result ? rec->result : "");
}

static int execute_calls(cn_run *run, json_object *calls, int turn)
{
    size_t n = json_object_array_length(calls);
    cn_tool_record *grown = realloc(run->res->calls, (run->res->n_calls + n) * sizeof *grown);

    if (grown == NULL) return cn_error_set(CN_ENOMEM, "agent: out of memory");
    run->res->calls = grown;
    for (size_t i = 0; i < n; i++) {
        cn_tool_record *rec = &run->res->calls[run->res->n_calls++];
        cn_buf content = CN_BUF_INIT;
        cn_agent__execute(run, json_object_array_get_idx(calls, i), turn, rec);
        if (rec->error)
            cn_buf_printf(&content, "Error: %s", rec->error);
        else
            cn_buf_puts(&content, rec->result ? rec->result : "");
        record_call(run, turn, rec, content.data ? content.data : "");
        cn_buf_free(&content);
        note_read(run, rec);
    }
    return 0;
}

static void finish(cn_run *run, char *answer, int turns, const char *source)
{
    cn_agent_result *res = run->res;
    json_object *ev = json_object_new_object();

    res->answer = answer ? answer : cn_strdup("");
    res->answer_source = cn_strdup(source);
    res->turns = turns;
    if (cn_contract_present(res->answer) && cn_contract_parse(res->answer, &res->contract) == 0)
        res->has_contract = true;
    json_object_object_add(ev, "source", json_object_new_string(source));
    json_object_object_add(ev, "answer_chars", json_object_new_int((int)strlen(res->answer)));
    json_object_object_add(ev, "has_contract", json_object_new_boolean(res->has_contract));
    cn_agent__event(run, "final_answer", turns, ev);
}

/* Turn loop.  *done set when an answer was produced inside the budget. */
static int loop(cn_run *run, bool *done)
{
    const cn_agent_options *o = run->o;
    int max_turns = o->max_turns > 0 ? o->max_turns : 1;

    for (int turn = 1; turn <= max_turns; turn++) {
        json_object *msg = NULL, *calls = NULL, *choice;
        int rc;

        if (o->force_localization_contract && turn == max_turns &&
            !cn_contract_present(last_assistant_text(run))) {
            char *t = cn_agent__salvage_text();
            cn_history_add(&run->h, text_msg("user", t));
            free(t);
            choice = choice_none(run);
            rc = model_call(run, turn, "salvage", choice, &msg);
        } else {
            choice = cn_agent__tool_choice(run, turn);
            rc = model_call(run, turn, "turn", choice, &msg);
        }
        if (rc < 0) return rc;
        if (!json_object_object_get_ex(msg, "tool_calls", &calls) || calls == NULL ||
            !json_object_is_type(calls, json_type_array) || json_object_array_length(calls) == 0) {
            char *answer = cn_strdup(jstr(msg, "content") ? jstr(msg, "content") : "");
            const char *source = "assistant";
            json_object_put(msg);
            if (o->review_final_answer && run->res->n_calls > 0 && !run->reviewed &&
                turn < max_turns) {
                run->reviewed = true;
                free(answer);
                cn_history_add(&run->h, text_msg("user", cn_agent__review_text));
                cn_agent__event(run, "final_answer_review", turn, NULL);
                continue;
            }
            if (o->force_localization_contract && run->res->n_calls > 0 &&
                !cn_contract_present(answer) &&
                (rc = force_schema(run, turn + 1, "missing_contract", &answer, &source)) < 0) {
                free(answer);
                return rc;
            }
            finish(run, answer, turn, source);
            *done = true;
            return 0;
        }
        rc = execute_calls(run, calls, turn);
        json_object_put(msg);
        if (rc < 0) return rc;
        if (o->compact_after_read && run->has_read && !run->compacted) {
            run->compacted = true;
            if (cn_agent__compact(run, turn)) {
                json_object *ev = json_object_new_object();
                json_object_object_add(ev, "read_paths",
                                       json_object_new_int((int)run->read_paths.len));
                json_object_object_add(ev, "keep_reads",
                                       json_object_new_int(o->compact_keep_reads));
                cn_agent__event(run, "context_compacted", turn, ev);
            }
        }
    }
    return 0;
}

/* The budget ran out: the last text, or a forced answer. */
static int exhausted(cn_run *run)
{
    const cn_agent_options *o = run->o;
    int max_turns = o->max_turns > 0 ? o->max_turns : 1;
    char *answer = cn_strdup(last_assistant_text(run));
    const char *source = "max_turns";
    json_object *msg = NULL;
    int rc = 0;

    cn_agent__event(run, "max_turns_exhausted", max_turns, NULL);
    if (o->force_localization_contract && run->res->n_calls > 0 && !cn_contract_present(answer)) {
        rc = force_schema(run, max_turns + 1, "max_turns_exhausted", &answer, &source);
    } else if (o->force_final_answer) {
        cn_history_add(&run->h, text_msg("user", cn_agent__final_text));
        rc = model_call(run, max_turns + 1, "forced_answer", choice_none(run), &msg);
        if (rc == 0 && (jstr(msg, "content") == NULL ||
                        jstr(msg, "content")[strspn(jstr(msg, "content"), " \t\r\n")] == '\0'))
            rc = cn_error_set(CN_EINVAL,
                              "agent: the model used all %d turns and gave no answer "
                              "when asked for one; raise max_turns or check the model",
                              max_turns);
        if (rc == 0) {
            free(answer);
            answer = cn_strdup(jstr(msg, "content"));
            source = "forced_answer";
        }
        json_object_put(msg);
    }
    if (rc < 0) {
        free(answer);
        return rc;
    }
    finish(run, answer, max_turns, source);
    return 0;
}

static void route_context(cn_run *run, const char *prompt)
{
    cn_route_context ctx;
    json_object *ev = json_object_new_object();

    memset(&ctx, 0, sizeof ctx);
    if (cn_route_context_build(run->reg, prompt, NULL, run->o, &ctx) < 0) {
        cn_buf b = CN_BUF_INIT;
        cn_buf_printf(&b, "lsp_route startup context skipped: %s", cn_error_last()->message);
        json_object_object_add(ev, "status", json_object_new_string("skipped"));
        json_object_object_add(ev, "reason", json_object_new_string(b.data));
        cn_strv_push_owned(&run->res->warnings, cn_buf_steal(&b));
    } else if (ctx.skipped || ctx.text == NULL || ctx.text[0] == '\0') {
        json_object_object_add(ev, "status", json_object_new_string("skipped"));
        json_object_object_add(
            ev, "reason", json_object_new_string(ctx.skipped ? "no_seeds" : "empty_route_context"));
    } else {
        cn_buf q = CN_BUF_INIT;
        cn_buf_printf(&q, "%s\n\n%s", prompt, ctx.text);
        free(run->query);
        run->query = cn_buf_steal(&q);
        run->res->route_fingerprint = cn_strdup(ctx.fingerprint);
        json_object_object_add(ev, "status", json_object_new_string("offered"));
        json_object_object_add(ev, "route_fingerprint",
                               ctx.fingerprint ? json_object_new_string(ctx.fingerprint) : NULL);
        json_object_object_add(
            ev, "route_count",
            json_object_new_int(ctx.nodes ? (int)json_object_array_length(ctx.nodes) : 0));
        json_object_object_add(ev, "route_args", json_object_get(ctx.arguments));
        cn_ledger_offer(&run->ledger, "route_hint", "lsp_route", ctx.fingerprint, 0,
                        strlen(ctx.text) / 4 + 1);
    }
    cn_agent__event(run, "lsp_route_context", 0, ev);
    cn_route_context_free(&ctx);
}

static int seed_history(cn_run *run, const char *root)
{
    char *sys = cn_agent_system_prompt_ex(run->o, run->tools, root, &run->res->warnings, &run->session);
    json_object *hist = run->o->chat_history;

    cn_history_add(&run->h, text_msg("system", sys));
    free(sys);
    for (size_t i = 0;
         hist && json_object_is_type(hist, json_type_array) && i < json_object_array_length(hist);
         i++) {
        json_object *m = json_object_array_get_idx(hist, i);
        const char *role = jstr(m, "role");
        if (role == NULL || (strcmp(role, "user") != 0 && strcmp(role, "assistant") != 0))
            return cn_error_set(CN_EINVAL,
                                "agent: chat_history[%zu] must be a user or assistant "
                                "message with text content",
                                i);
        cn_history_add(&run->h, text_msg(role, jstr(m, "content")));
    }
    cn_history_add(&run->h, text_msg("user", run->query));
    return 0;
}

static void end_trace(cn_run *run)
{
    json_object *ev = json_object_new_object();
    json_object_object_add(ev, "tool_calls", json_object_new_int((int)run->res->n_calls));
    json_object_object_add(ev, "turns", json_object_new_int(run->res->turns));
    json_object_object_add(ev, "prompt_tokens", json_object_new_int64(run->res->prompt_tokens));
    json_object_object_add(ev, "completion_tokens",
                           json_object_new_int64(run->res->completion_tokens));
    cn_agent__event(run, "run_end", run->res->turns, ev);
    cn_agent__event(run, "context_ledger", run->res->turns, cn_ledger_to_json(&run->ledger));
    if (run->trace.collected != NULL) run->res->trace = json_object_get(run->trace.collected);
    cn_trace_close(&run->trace);
}

static void init_result(cn_agent_result *res)
{
    memset(res, 0, sizeof *res);
    res->prompt_tokens = res->completion_tokens = res->cached_tokens = -1;
    res->usage_calls = json_object_new_array();
}

int cn_agent_run(cn_registry *reg, cn_model *chat, const cn_agent_options *o, const char *prompt,
                 cn_agent_result *res)
{
    cn_run run;
    bool done = false;
    int rc;

    init_result(res);
    if (reg == NULL || chat == NULL || o == NULL || prompt == NULL)
        return cn_error_set(CN_EINVAL,
                            "agent: a registry, a chat model, options and a prompt are required");
    if ((rc = cn_agent_options_validate(o, "agent options")) < 0) return rc;
    if (reg->repo_root == NULL)
        return cn_error_set(CN_EINVAL, "agent: the registry has no repository; set one "
                                       "(cn_registry_set_repo_cache) before running the agent");
    memset(&run, 0, sizeof run);
    run.reg = reg;
    run.chat = chat;
    run.o = o;
    run.res = res;
    run.t0 = cn_agent__now();
    run.query = cn_strdup(prompt);
    cn_history_init(&run.h);
    cn_tools_config_init(&run.tcfg, reg->repo_root);
    run.tcfg.bash_enabled = o->enable_bash;
    if (o->max_tool_output > 0) run.tcfg.output_cap = (size_t)o->max_tool_output;
    rc = o->trace_path ? cn_trace_open(&run.trace, o->trace_path) : 0;
    if (rc == 0 && o->collect_trace && (run.trace.collected = json_object_new_array()) == NULL)
        rc = cn_error_set(CN_ENOMEM, "out of memory");
    if (rc == 0) rc = cn_session_scan(reg->repo_root, reg->index == NULL, &run.session);
    if (rc == 0 && reg->index != NULL) cn_session_from_index(&run.session, reg->index->dir);
    if (rc == 0) rc = cn_agent__tools(&run, prompt);
    if (rc == 0) {
        json_object *ev = json_object_new_object();
        json_object_object_add(ev, "query_chars", json_object_new_int((int)strlen(prompt)));
        json_object_object_add(ev, "max_turns", json_object_new_int(o->max_turns));
        json_object_object_add(ev, "tools",
                               json_object_new_int((int)json_object_array_length(run.tools)));
        cn_agent__event(&run, "run_start", 0, ev);
        if (o->enable_lsp_route_context) route_context(&run, prompt);
        rc = seed_history(&run, reg->repo_root);
    }
    if (rc == 0) rc = loop(&run, &done);
    if (rc == 0 && !done) rc = exhausted(&run);
    res->seconds = cn_agent__now() - run.t0;
    res->messages = cn_history_messages(&run.h);
    res->tools = run.tools ? json_object_get(run.tools) : json_object_new_array();
    end_trace(&run);
    json_object_put(run.tools);
    cn_session_free(&run.session);
    cn_strv_free(&run.tool_names);
    cn_strv_free(&run.default_ids);
    cn_history_free(&run.h);
    cn_ledger_free(&run.ledger);
    cn_strv_free(&run.read_paths);
    cn_strv_free(&run.read_outputs);
    free(run.query);
    return rc;
}

void cn_agent_result_free(cn_agent_result *r)
{
    if (r == NULL) return;
    free(r->answer);
    free(r->answer_source);
    if (r->has_contract) cn_contract_free(&r->contract);
    for (size_t i = 0; i < r->n_calls; i++) {
        cn_tool_record *c = &r->calls[i];
        free(c->name);
        free(c->id);
        json_object_put(c->arguments);
        json_object_put(c->resolved_arguments);
        free(c->result);
        free(c->error);
    }
    free(r->calls);
    json_object_put(r->messages);
    json_object_put(r->tools);
    json_object_put(r->usage_calls);
    cn_strv_free(&r->warnings);
    free(r->scenario);
    free(r->route_fingerprint);
    json_object_put(r->trace);
    memset(r, 0, sizeof *r);
}

static json_object *opt_int(int64_t v)
{
    return v < 0 ? NULL : json_object_new_int64(v);
}

static json_object *call_json(const cn_tool_record *c)
{
    json_object *o = json_object_new_object();
    json_object_object_add(o, "name", json_object_new_string(c->name ? c->name : ""));
    json_object_object_add(o, "id", c->id ? json_object_new_string(c->id) : NULL);
    json_object_object_add(o, "turn", json_object_new_int(c->turn));
    json_object_object_add(o, "arguments", json_object_get(c->arguments));
    json_object_object_add(o, "resolved_arguments", json_object_get(c->resolved_arguments));
    json_object_object_add(o, "result", c->result ? json_object_new_string(c->result) : NULL);
    json_object_object_add(o, "error", c->error ? json_object_new_string(c->error) : NULL);
    json_object_object_add(o, "seconds", json_object_new_double(c->seconds));
    return o;
}

json_object *cn_agent_result_json(const cn_agent_result *r)
{
    json_object *o = json_object_new_object(), *calls = json_object_new_array(),
                *usage = json_object_new_object(), *warn = json_object_new_array();

    for (size_t i = 0; i < r->n_calls; i++) json_object_array_add(calls, call_json(&r->calls[i]));
    for (size_t i = 0; i < r->warnings.len; i++)
        json_object_array_add(warn, json_object_new_string(r->warnings.items[i]));
    json_object_object_add(usage, "prompt_tokens", opt_int(r->prompt_tokens));
    json_object_object_add(usage, "completion_tokens", opt_int(r->completion_tokens));
    json_object_object_add(usage, "cached_tokens", opt_int(r->cached_tokens));
    json_object_object_add(o, "answer", json_object_new_string(r->answer ? r->answer : ""));
    json_object_object_add(o, "answer_source",
                           r->answer_source ? json_object_new_string(r->answer_source) : NULL);
    json_object_object_add(o, "contract",
                           r->has_contract ? cn_contract_to_json(&r->contract) : NULL);
    json_object_object_add(o, "turns", json_object_new_int(r->turns));
    json_object_object_add(o, "seconds", json_object_new_double(r->seconds));
    json_object_object_add(o, "tool_calls", calls);
    json_object_object_add(o, "usage", usage);
    json_object_object_add(o, "usage_calls", json_object_get(r->usage_calls));
    json_object_object_add(o, "warnings", warn);
    json_object_object_add(o, "scenario", r->scenario ? json_object_new_string(r->scenario) : NULL);
    json_object_object_add(o, "route_fingerprint",
                           r->route_fingerprint ? json_object_new_string(r->route_fingerprint)
                                                : NULL);
    return o;
}
