/* SPDX-License-Identifier: Apache-2.0 */
/* The agent's support modules: token estimates and history trimming,
 * options and harness specs, trace, context ledger, run totals, compile
 * tables, the resource guard and the lsp_route startup context. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "../tap.h"
#include "../../core/agent/cn_agent_support.h"
#include "../../core/index/cn_compile.h"
#include "../../core/plugin/cn_host.h"
#include "../../core/plugin/cn_registry.h"

static char tmpdir[] = "/tmp/cn-history-XXXXXX";

static json_object *J(const char *text)
{
    return json_tokener_parse(text);
}

static char *write_tmp(const char *name, const char *text)
{
    char *path = cn_path_join(tmpdir, name);
    FILE *f = fopen(path, "w");
    if (f) {
        fputs(text, f);
        fclose(f);
    }
    return path;
}

static char *read_all(const char *path)
{
    char *text = NULL;
    if (cn_file_read(path, 0, &text, NULL) < 0) return cn_strdup("(unreadable)");
    return text;
}

/* ---- tokens and trimming ------------------------------------------------ */

static void test_tokens(void)
{
    json_object *m;
    m = J("{\"role\":\"user\",\"content\":\"abcdefgh\"}");
    is_int((long long)cn_tokens_estimate(m), 6, "8 characters: 4 + 2 tokens");
    json_object_put(m);
    m = J("{\"role\":\"user\",\"content\":\"abcdefghi\"}");
    is_int((long long)cn_tokens_estimate(m), 6, "9 characters: 4 + 2 (rounded down)");
    json_object_put(m);
    m = J("{\"role\":\"assistant\",\"content\":null,\"tool_calls\":[{\"id\":\"c1\",\"type\":\"function\","
          "\"function\":{\"name\":\"read\",\"arguments\":\"{\\\"path\\\":\\\"a.py\\\"}\"}}]}");
    is_int((long long)cn_tokens_estimate(m), 8, "tool call name and arguments count (19 chars)");
    json_object_put(m);
    m = J("{\"role\":\"tool\",\"tool_call_id\":\"c1\",\"content\":\"xxxx\"}");
    is_int((long long)cn_tokens_estimate(m), 5, "tool_call_id counts (6 chars)");
    json_object_put(m);
    m = J("{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"abcd\"},{\"type\":\"image_url\"}]}");
    is_int((long long)cn_tokens_estimate(m), 5, "text parts count");
    json_object_put(m);
    m = J("{\"role\":\"user\",\"content\":\"\"}");
    is_int((long long)cn_tokens_estimate(m), 4, "an empty message still costs 4");
    json_object_put(m);
}

/* S u1 a1(calls c1 c2) t1 t2 a2 u2 a3 = 6+6+7+6+6+6+6+6 = 49 tokens */
static void fill(cn_history *h)
{
    cn_history_clear(h);
    cn_history_add(h, J("{\"role\":\"system\",\"content\":\"system-0\"}"));
    cn_history_add(h, J("{\"role\":\"user\",\"content\":\"user-001\"}"));
    cn_history_add(h, J("{\"role\":\"assistant\",\"content\":null,\"tool_calls\":["
                        "{\"id\":\"c1\",\"type\":\"function\",\"function\":{\"name\":\"read\",\"arguments\":\"{}\"}},"
                        "{\"id\":\"c2\",\"type\":\"function\",\"function\":{\"name\":\"read\",\"arguments\":\"{}\"}}]}"));
    cn_history_add(h, J("{\"role\":\"tool\",\"tool_call_id\":\"c1\",\"content\":\"result-1\"}"));
    cn_history_add(h, J("{\"role\":\"tool\",\"tool_call_id\":\"c2\",\"content\":\"result-2\"}"));
    cn_history_add(h, J("{\"role\":\"assistant\",\"content\":\"answer-2\"}"));
    cn_history_add(h, J("{\"role\":\"user\",\"content\":\"user-003\"}"));
    cn_history_add(h, J("{\"role\":\"assistant\",\"content\":\"answer-3\"}"));
}

static char *survivors(const cn_history *h)
{
    cn_buf b = CN_BUF_INIT;
    for (size_t i = 0; i < h->len; i++) {
        json_object *c = NULL;
        json_object_object_get_ex(h->items[i], "content", &c);
        cn_buf_printf(&b, "%s%s", i ? " " : "", c ? json_object_get_string(c) : "calls");
    }
    return cn_buf_steal(&b);
}

static void check_trim(cn_history *h, size_t budget, size_t keep, int want_n, const char *want, const char *what)
{
    char *s, label[160];
    fill(h);
    snprintf(label, sizeof label, "%s: evicted count", what);
    is_int(cn_history_trim(h, budget, keep), want_n, label);
    s = survivors(h);
    snprintf(label, sizeof label, "%s: survivors", what);
    is_str(s, want, label);
    free(s);
}

static void test_trim(void)
{
    cn_history h;
    json_object *arr, *more;
    cn_history_init(&h);
    fill(&h);
    is_int((long long)cn_history_tokens(&h), 49, "the fixture history is 49 tokens");
    check_trim(&h, 0, 0, 0, "system-0 user-001 calls result-1 result-2 answer-2 user-003 answer-3", "no limit");
    check_trim(&h, 49, 0, 0, "system-0 user-001 calls result-1 result-2 answer-2 user-003 answer-3", "fits");
    check_trim(&h, 43, 0, 1, "system-0 calls result-1 result-2 answer-2 user-003 answer-3", "oldest user goes first");
    check_trim(&h, 42, 0, 4, "system-0 answer-2 user-003 answer-3", "a tool call leaves with both its results");
    check_trim(&h, 1, 5, 1, "system-0 calls result-1 result-2 answer-2 user-003 answer-3",
               "a group reaching into the kept tail stays whole");
    check_trim(&h, 1, 0, 6, "system-0 answer-3", "the system message and the newest one are never evicted");
    check_trim(&h, 1, 3, 4, "system-0 answer-2 user-003 answer-3", "keep_last 3 keeps exactly the last three");

    cn_history_clear(&h);
    cn_history_add(&h, J("{\"role\":\"system\",\"content\":\"system-0\"}"));
    cn_history_add(&h, J("{\"role\":\"user\",\"content\":\"user-001\"}"));
    cn_history_add(&h, J("{\"role\":\"user\",\"content\":\"user-002\"}"));
    cn_history_add(&h, J("{\"role\":\"system\",\"content\":\"system-1\"}"));
    cn_history_add(&h, J("{\"role\":\"assistant\",\"content\":\"answer-1\"}"));
    is_int(cn_history_trim(&h, 1, 2), 1, "keep_last counts non-system messages");
    {
        char *s = survivors(&h);
        is_str(s, "system-0 user-002 system-1 answer-1", "a later system message is kept too");
        free(s);
    }
    cn_history_clear(&h);
    cn_history_add(&h, J("{\"role\":\"tool\",\"tool_call_id\":\"c8\",\"content\":\"orphan-1\"}"));
    cn_history_add(&h, J("{\"role\":\"tool\",\"tool_call_id\":\"c9\",\"content\":\"orphan-2\"}"));
    cn_history_add(&h, J("{\"role\":\"user\",\"content\":\"user-001\"}"));
    is_int(cn_history_trim(&h, 10, 1), 2, "results whose call is already gone leave together");
    {
        char *s = survivors(&h);
        is_str(s, "user-001", "only the user message is left");
        free(s);
    }
    fill(&h);
    arr = cn_history_messages(&h);
    is_int((long long)json_object_array_length(arr), 8, "messages() returns every message");
    more = J("[{\"role\":\"user\",\"content\":\"x\"},{\"role\":\"assistant\",\"content\":\"y\"}]");
    is_int(cn_history_extend(&h, more), 0, "extend with an array");
    is_int((long long)h.len, 10, "two more messages");
    json_object_put(more);
    more = J("[{\"role\":\"user\"}, 3]");
    is_int(cn_history_extend(&h, more), CN_EINVAL, "a non-object message is refused");
    json_object_put(more);
    is_int(cn_history_add(&h, J("\"text\"")), CN_EINVAL, "add refuses a string");
    json_object_put(arr);
    cn_history_free(&h);
}

/* ---- options and harness specs ------------------------------------------ */

static void test_options_defaults(void)
{
    cn_agent_options o;
    cn_strv ids = CN_STRV_INIT;
    cn_agent_options_init(&o);
    is_int(o.max_tokens, 4096, "default answer budget is 4096");
    is_int(o.max_turns, 10, "default max_turns");
    is_int(o.lsp_route_top_k, 12, "default top_k");
    is_int(o.lsp_route_seed_limit, 8, "default seed limit");
    is_str(o.lsp_route_seed_policy, "all", "default seed policy");
    ok(o.include_default_tools && o.lsp_route_include_neighbors && !o.enable_bash, "default booleans");
    cn_agent_options_tool_ids(&o, &ids);
    is_int((long long)ids.len, 3, "three default tools");
    ok(ids.len == 3 && strcmp(ids.items[2], "glob") == 0 && !cn_strv_contains(&ids, "bash"), "read grep glob, no bash");
    cn_strv_free(&ids);
    o.enable_bash = true;
    cn_agent_options_tool_ids(&o, &ids);
    ok(cn_strv_contains(&ids, "bash"), "bash with enable_bash");
    cn_strv_free(&ids);
    o.include_default_tools = false;
    cn_agent_options_tool_ids(&o, &ids);
    is_int((long long)ids.len, 0, "no default tools when include_default_tools is off");
    cn_strv_free(&ids);
    is_int(cn_agent_options_validate(&o, NULL), 0, "defaults validate");
    o.max_turns = 0;
    is_int(cn_agent_options_validate(&o, "x"), CN_EINVAL, "max_turns 0 refused");
    has_str(cn_error_last()->message, "x: max_turns must be at least 1", "message names the option");
    cn_agent_options_free(&o);
}

static void test_harness_yaml(void)
{
    cn_agent_options o;
    char *p;

    cn_agent_options_init(&o);
    p = write_tmp("h.yaml", "# a harness\nmax_turns: 3\nallow_skills: [bm25_search, lsp_route]\nenable_bash: true\n"
                            "lsp_route_seed_policy: specific\ntemperature: 0.5\nmax_context_tokens: 20000\n"
                            "compile_table: tables/t.yaml\n");
    is_int(cn_harness_load_file(p, &o), 0, "a YAML harness loads");
    is_int(o.max_turns, 3, "max_turns from YAML");
    ok(o.has_allow_skills && o.allow_skills.len == 2 && strcmp(o.allow_skills.items[1], "lsp_route") == 0,
       "allow_skills from YAML");
    ok(o.enable_bash, "enable_bash from YAML");
    is_str(o.lsp_route_seed_policy, "specific", "seed policy from YAML");
    ok(o.temperature == 0.5, "temperature from YAML");
    is_int(o.max_context_tokens, 20000, "max_context_tokens from YAML");
    is_str(o.compile_table_path, "tables/t.yaml", "compile_table as a path");
    is_int(o.max_tokens, 4096, "untouched options keep defaults");
    free(p);

    p = write_tmp("bad1.yaml", "max_turns: 3\nbogus_key: 1\n");
    is_int(cn_harness_load_file(p, &o), CN_EINVAL, "an unknown key is an error");
    has_str(cn_error_last()->message, "bad1.yaml:2: unknown option \"bogus_key\"", "it names file:line and the key");
    free(p);
    p = write_tmp("bad2.yaml", "max_turns: three\n");
    is_int(cn_harness_load_file(p, &o), CN_EINVAL, "a wrong type is an error");
    has_str(cn_error_last()->message, "bad2.yaml:1:12: max_turns: expected an integer", "file:line:col of the value");
    free(p);
    p = write_tmp("bad3.yaml", "allow_skills: [a, 3]\n");
    is_int(cn_harness_load_file(p, &o), CN_EINVAL, "a list with a number is an error");
    has_str(cn_error_last()->message, "allow_skills: item 2 is not a string", "names the item");
    free(p);
    p = write_tmp("bad4.yaml", "lsp_route_seed_policy: some\n");
    is_int(cn_harness_load_file(p, &o), CN_EINVAL, "an unknown seed policy is an error");
    has_str(cn_error_last()->message, "must be \"all\" or \"specific\"", "says what is allowed");
    free(p);
    p = write_tmp("bad5.yaml", "max_turns: 0\n");
    is_int(cn_harness_load_file(p, &o), CN_EINVAL, "max_turns 0 in a file is an error");
    has_str(cn_error_last()->message, "bad5.yaml: max_turns must be at least 1", "names the file");
    free(p);
    p = cn_path_join(tmpdir, "missing.yaml");
    ok(cn_harness_load_file(p, &o) < 0, "a missing file is an error");
    has_str(cn_error_last()->message, "missing.yaml", "naming the path");
    free(p);
    cn_agent_options_free(&o);
}

static void test_harness_json(void)
{
    cn_agent_options o, o2;
    json_object *j1, *j2;
    char *p;

    cn_agent_options_init(&o);
    p = write_tmp("h.json", "{\n\t\"max_turns\": 5,\n\t\"first_turn_tool_choice\": \"lsp_route\",\n"
                            "\t\"compile_table\": {\"fix\": [\"bm25_search\"]},\n"
                            "\t\"chat_history\": [{\"role\": \"user\", \"content\": \"earlier\"}],\n"
                            "\t\"exclude_skills\": [\"llm_rerank\"], \"trace_path\": \"/tmp/t.jsonl\"}\n");
    is_int(cn_harness_load_file(p, &o), 0, "a JSON harness loads");
    is_int(o.max_turns, 5, "max_turns from JSON");
    is_str(o.first_turn_tool_choice, "lsp_route", "tool choice from JSON");
    ok(o.compile_table && json_object_is_type(o.compile_table, json_type_object), "inline compile table kept");
    ok(o.chat_history && json_object_array_length(o.chat_history) == 1, "seed chat history kept");
    ok(!o.has_allow_skills, "no allow list given");
    free(p);
    p = write_tmp("bad.json", "{\"max_turns\": 5,\n  \"enable_bash\": \"yes\"}");
    is_int(cn_harness_load_file(p, &o), CN_EINVAL, "a JSON wrong type is an error");
    has_str(cn_error_last()->message, "bad.json:2:18: enable_bash: expected true or false", "names file:line and key");
    free(p);
    p = write_tmp("bad1.json", "{\t\"max_turns\": 5,\n\t\"enable_bash\": 1}");
    is_int(cn_harness_load_file(p, &o), CN_EINVAL, "JSON with tabs is read too");
    has_str(cn_error_last()->message, "bad1.json:2:17: enable_bash: expected true or false", "names file and key");
    free(p);
    p = write_tmp("bad3.json", "{\"max_turns\":5,\"enable_bash\":1,\"x\":\"a\\/b\"}");
    is_int(cn_harness_load_file(p, &o), CN_EINVAL, "compact JSON is read");
    has_str(cn_error_last()->message, "enable_bash: expected true or false", "names the key");
    free(p);
    p = write_tmp("bad2.json", "{\"max_turns\": 5,");
    ok(cn_harness_load_file(p, &o) < 0, "broken JSON is an error");
    has_str(cn_error_last()->message, "bad2.json", "naming the file");
    free(p);

    /* round trip */
    j1 = cn_harness_to_json(&o);
    cn_agent_options_init(&o2);
    is_int(cn_harness_apply_json(j1, "round trip", &o2), 0, "to_json output applies back");
    j2 = cn_harness_to_json(&o2);
    is_str(json_object_to_json_string(j2), json_object_to_json_string(j1), "the round trip is exact");
    is_int(json_object_object_length(j1), 29, "every option is written");
    json_object_put(j1);
    json_object_put(j2);
    cn_agent_options_free(&o2);
    cn_agent_options_free(&o);
}

/* ---- trace, ledger, totals ---------------------------------------------- */

static void test_trace(void)
{
    cn_trace t;
    char *p = cn_path_join(tmpdir, "trace.jsonl"), *text;
    json_object *e1 = J("{\"type\":\"turn\",\"n\":1}"), *e2 = J("{\"type\":\"end\",\"text\":\"a/b \\\"q\\\"\"}");

    is_int(cn_trace_open(&t, p), 0, "trace opens");
    is_int(cn_trace_event(&t, e1), 0, "first event");
    text = read_all(p);
    is_str(text, "{\"type\":\"turn\",\"n\":1}\n", "flushed at once");
    free(text);
    is_int(cn_trace_event(&t, e2), 0, "second event");
    is_int(cn_trace_event(&t, NULL), CN_EINVAL, "a non-object event is refused");
    cn_trace_close(&t);
    text = read_all(p);
    is_str(text, "{\"type\":\"turn\",\"n\":1}\n{\"type\":\"end\",\"text\":\"a/b \\\"q\\\"\"}\n", "one line per event");
    free(text);
    is_int(cn_trace_event(&t, e1), 0, "a closed trace ignores events");
    is_int(cn_trace_open(&t, "/nonexistent-dir/x.jsonl"), CN_EIO, "an unwritable path fails");
    has_str(cn_error_last()->message, "/nonexistent-dir/x.jsonl", "naming it");
    json_object_put(e1);
    json_object_put(e2);
    free(p);
}

static void test_ledger(void)
{
    cn_ledger l = CN_LEDGER_INIT;
    json_object *j;
    is_int(cn_ledger_offer(&l, "tool_result", "read", "c1", 1, 120), 1, "first offer is id 1");
    is_int(cn_ledger_offer(&l, "route_hint", "lsp_route", NULL, 0, 40), 2, "second offer is id 2");
    is_int(cn_ledger_offer(&l, "tool_result", "grep", "c2", 2, 10), 3, "third offer");
    ok(cn_ledger_find_ref(&l, "c2") && cn_ledger_find_ref(&l, "c2")->id == 3, "found by ref");
    ok(cn_ledger_find_ref(&l, "zz") == NULL, "unknown ref");
    is_int(cn_ledger_mark_consumed(&l, 1, 2, "answer"), 0, "consumed");
    is_int(cn_ledger_mark_expired(&l, 2, 3, "evicted by trim"), 0, "expired");
    is_int(cn_ledger_mark_consumed(&l, 1, 4, "again"), CN_EINVAL, "a consumed entry cannot change");
    has_str(cn_error_last()->message, "entry 1 is already consumed (turn 2)", "the message says so");
    is_int(cn_ledger_mark_summarized(&l, 9, 4, "x"), CN_ENOTFOUND, "unknown id");
    is_str(cn_ledger_state_name(l.items[0].state), "consumed", "state of 1");
    is_str(l.items[1].by, "evicted by trim", "reason kept");
    is_int(l.items[1].turn_changed, 3, "turn of the change");
    j = cn_ledger_to_json(&l);
    {
        json_object *c = NULL;
        json_object_object_get_ex(j, "counts", &c);
        is_str(json_object_to_json_string_ext(c, JSON_C_TO_STRING_PLAIN),
               "{\"offered\":1,\"consumed\":1,\"expired\":1,\"summarized\":0}", "counts per state");
    }
    json_object_put(j);
    cn_ledger_free(&l);
}

static void test_totals(void)
{
    cn_agent_totals t;
    json_object *u, *j;
    cn_agent_totals_init(&t);
    j = cn_agent_totals_to_json(&t);
    is_str(json_object_to_json_string_ext(j, JSON_C_TO_STRING_PLAIN),
           "{\"runs\":0,\"turns\":null,\"prompt_tokens\":null,\"completion_tokens\":null,\"cached_tokens\":null}",
           "nothing known before any run");
    json_object_put(j);
    cn_agent_totals_add(&t, 3, NULL);
    is_int(t.prompt_tokens, -1, "a run without usage leaves tokens unknown");
    is_int(t.turns, 3, "turns counted");
    u = J("{\"prompt_tokens\":100,\"completion_tokens\":20}");
    cn_agent_totals_add(&t, 2, u);
    json_object_put(u);
    u = J("{\"prompt_tokens\":50,\"prompt_tokens_details\":{\"cached_tokens\":10}}");
    cn_agent_totals_add(&t, -1, u);
    json_object_put(u);
    j = cn_agent_totals_to_json(&t);
    is_str(json_object_to_json_string_ext(j, JSON_C_TO_STRING_PLAIN),
           "{\"runs\":3,\"turns\":5,\"prompt_tokens\":150,\"completion_tokens\":20,\"cached_tokens\":10}",
           "sums over the runs that reported each field");
    json_object_put(j);
}

/* ---- compile tables ----------------------------------------------------- */

static void test_compile_table(void)
{
    cn_compile_table *t = NULL;
    cn_strv allow = CN_STRV_INIT, out = CN_STRV_INIT;
    char *warn = NULL, *p;
    json_object *j = J("{\"scenarios\":["
                       "{\"name\":\"bugfix\",\"keywords\":[\"crash\",\"error\"],\"skills\":[\"bm25_search\",\"lsp_route\"]},"
                       "{\"name\":\"navigate\",\"patterns\":[\"\\\\bwhere\\\\s+is\\\\b\"],"
                       "\"skills\":[\"lsp_route\",\"find_callers\"]},"
                       "{\"name\":\"docs\",\"keywords\":[\"readme\"],\"skills\":[\"extract_keywords\"]}],"
                       "\"default\":\"navigate\"}");

    is_int(cn_compile_table_load(j, "t.json", &t), 0, "a table loads");
    json_object_put(j);
    is_str(cn_compile_table_classify(t, "Fix the CRASH in the pool"), "bugfix", "keyword, any case");
    is_str(cn_compile_table_classify(t, "WHERE   is get defined?"), "navigate", "regex classification");
    is_str(cn_compile_table_classify(t, "nowhere island"), "navigate", "no match: the default");
    is_str(cn_compile_table_classify(t, "update the README"), "docs", "third scenario");

    cn_strv_push(&allow, "find_callers");
    cn_strv_push(&allow, "bm25_search");
    cn_strv_push(&allow, "lsp_route");
    is_int(cn_compile_table_narrow(t, "bugfix", &allow, &out, &warn), 0, "narrowing");
    ok(out.len == 2 && strcmp(out.items[0], "bm25_search") == 0 && strcmp(out.items[1], "lsp_route") == 0,
       "bugfix narrows to bm25_search, lsp_route");
    ok(warn == NULL, "no warning");
    cn_strv_free(&out);
    cn_strv_free(&allow);
    cn_strv_push(&allow, "bm25_search");
    is_int(cn_compile_table_narrow(t, "docs", &allow, &out, &warn), 0, "disjoint narrowing");
    ok(out.len == 1 && strcmp(out.items[0], "bm25_search") == 0, "a disjoint scenario keeps the allow set");
    has_str(warn, "scenario \"docs\" names no allowed skill (extract_keywords)", "with a warning");
    free(warn);
    cn_strv_free(&out);
    is_int(cn_compile_table_narrow(t, "navigate", NULL, &out, NULL), 0, "no allow set");
    ok(out.len == 2 && strcmp(out.items[1], "find_callers") == 0, "the scenario's skills (never more)");
    cn_strv_free(&out);
    is_int(cn_compile_table_narrow(t, NULL, &allow, &out, NULL), 0, "no scenario");
    ok(out.len == 1, "no scenario keeps the allow set");
    cn_strv_free(&out);
    cn_compile_table_all_skills(t, &out);
    is_int((long long)out.len, 4, "four distinct skills named");
    cn_strv_free(&out);
    cn_strv_free(&allow);
    cn_compile_table_free(t);

    j = J("{\"scenarios\":[{\"name\":\"x\",\"patterns\":[\"(\"],\"skills\":[]}]}");
    is_int(cn_compile_table_load(j, "t.json", &t), CN_EINVAL, "a bad regex is an error");
    has_str(cn_error_last()->message, "scenario \"x\": bad pattern", "naming the scenario");
    json_object_put(j);
    j = J("{\"scenarios\":[{\"name\":\"x\",\"skills\":[]}],\"default\":\"y\"}");
    is_int(cn_compile_table_load(j, "t.json", &t), CN_EINVAL, "an unknown default is an error");
    json_object_put(j);

    p = write_tmp("table.yaml", "search: [bm25_search]\ncallers:\n  - find_callers\n  - 7\n");
    is_int(cn_compile_table_load_file(p, &t), CN_EINVAL, "a number among skills is an error");
    has_str(cn_error_last()->message, "table.yaml:4:5: compile table", "with file:line:col");
    free(p);
    p = write_tmp("table2.yaml", "search: [bm25_search]\ncallers: [find_callers]\n");
    is_int(cn_compile_table_load_file(p, &t), 0, "the short form loads");
    is_str(cn_compile_table_classify(t, "who CALLERS this"), "callers", "scenario names are keywords");
    ok(cn_compile_table_classify(t, "nothing") == NULL, "no default: NULL");
    cn_compile_table_free(t);
    free(p);
}

/* The session keys of a short table, the stack trace classifier and the
 * walk that finds a repository's language without an index. */
static void test_session_table(void)
{
    const char *src = getenv("CN_SRCDIR");
    char dir[4096];
    cn_session s;
    cn_compile_table *t = NULL;
    json_object *j = json_tokener_parse("{\"C:stacktrace\":[\"find_callers\"],\"c:no_stacktrace\":[\"bm25_search\"],"
                                        "\"default\":[\"codenib_context\"]}");

    ok(cn_has_stacktrace("Traceback (most recent call last):\n  File \"a.py\", line 3, in f\n"), "python traceback");
    ok(cn_has_stacktrace("Exception in thread \"main\" x\n\tat a.B.c(B.java:4)\n"), "java frames");
    ok(cn_has_stacktrace("Error: x\n    at f (/srv/app.js:10:5)\n"), "node frames");
    ok(cn_has_stacktrace("goroutine 7 [running]:\nmain.f()\n"), "go goroutine");
    ok(cn_has_stacktrace("thread 'main' panicked at src/lib.rs:2:3"), "rust panic");
    ok(cn_has_stacktrace("#1  0x0000555 in main () at m.c:4"), "gdb frame");
    ok(!cn_has_stacktrace("the file a.py, line 3, looks wrong at f"), "prose is no trace");
    ok(!cn_has_stacktrace(""), "empty is no trace");

    snprintf(dir, sizeof dir, "%s/tests/fixtures/graph/python", src ? src : ".");
    is_int(cn_session_scan(dir, true, &s), 0, "the walk runs");
    is_str(s.language, "python", "it finds the primary language");
    ok(s.files > 0 && s.symbols == -1, "files counted, symbols unknown without an index");
    ok(cn_strv_contains(&s.top, "pkg/"), "top-level directories end in /");
    is_str(cn_session_size_bucket(&s), "small", "a small repository");
    free(s.language);
    s.language = cn_strdup("c");
    is_int(cn_compile_table_load(j, "t", &t), 0, "a session table loads");
    is_str(cn_compile_table_select(t, "#0  0x1 in f () at a.c:1", &s), "C:stacktrace", "language in any case");
    is_str(cn_compile_table_select(t, "where is f", &s), "c:no_stacktrace", "no trace");
    is_str(cn_compile_table_select(t, "the default size", NULL), "default", "no session: default, not a keyword");
    cn_compile_table_free(t);
    json_object_put(j);
    cn_session_free(&s);
}

/* ---- resource guard ----------------------------------------------------- */

static cn_skill_meta *meta(const char *yaml)
{
    cn_skill_meta *m = NULL;
    if (cn_meta_from_yaml_string(yaml, strlen(yaml), "test.yaml", &m) < 0) diag("meta: %s", cn_error_last()->message);
    return m;
}

static void test_guard_decision(void)
{
    cn_skill_meta *g = meta("skill_id: g\nskill_type: custom\nindex_requirements: [graph]\n");
    cn_skill_meta *b = meta("skill_id: b\nskill_type: custom\nindex_requirements:\n"
                            "  - {type: bm25, max_age_seconds: 3600}\n  - {type: vector, required: false}\n");
    json_object *m = J("{\"built_at\":\"2026-01-01T00:00:00Z\",\"indexes\":{\"nodes\":{\"status\":\"ok\"},"
                       "\"bm25\":{\"status\":\"ok\",\"built_at\":\"2026-01-01T00:00:00Z\"}}}");
    cn_strv stale = CN_STRV_INIT;
    long long built = 1767225600LL; /* 2026-01-01T00:00:00Z */
    char *why = NULL;

    if (g == NULL || b == NULL) {
        ok(0, "fixture metadata parses");
        return;
    }
    is_int(cn_resource_guard_check(g, m, NULL, built, &why), CN_GUARD_MISSING, "a missing graph excludes");
    is_str(why, "skill g needs the graph index: the compiled index has no graph part; recompile with --index ...,graph",
           "the reason names skill and index");
    free(why);
    ok(cn_resource_guard_check(b, m, NULL, built + 100, &why) == CN_GUARD_OK && why == NULL,
       "young bm25, optional vector: runs");
    is_int(cn_resource_guard_check(b, m, NULL, built + 7200, &why), CN_GUARD_STALE, "too old: kept, as stale");
    is_str(why, "skill b answers from the bm25 index, which is too old (7200 s old, limit 3600 s); run `codenib compile`",
           "the age is given");
    free(why);
    cn_strv_push(&stale, "2 file(s) changed since the index was built");
    is_int(cn_resource_guard_check(b, m, &stale, built, &why), CN_GUARD_STALE, "a stale index: kept, as stale");
    has_str(why, "which is stale (2 file(s) changed since the index was built)", "with the status reason");
    free(why);
    is_int(cn_resource_guard_check(g, m, &stale, built, &why), CN_GUARD_MISSING,
           "stale and missing: the missing index decides");
    has_str(why, "has no graph part", "and is the reason");
    free(why);
    is_int(cn_resource_guard_check(g, NULL, NULL, built, &why), CN_GUARD_MISSING, "nothing compiled excludes");
    has_str(why, "not compiled", "saying so");
    free(why);
    cn_strv_free(&stale);
    json_object_put(m);
    cn_meta_free(g);
    cn_meta_free(b);
}

static int echo_fn(void *data, const char *args, char **result, cn_error *err)
{
    (void)data;
    (void)args;
    (void)err;
    *result = cn_strdup("{}");
    return 0;
}

static int run_cmd(const char *a, const char *b, const char *c, const char *d)
{
    char *argv[] = {(char *)a, (char *)b, (char *)c, (char *)d, NULL};
    char *out = NULL;
    cn_proc_opts o = {NULL, -1, 0, 0};
    int status = -1, rc = cn_proc_run(argv, &o, &out, NULL, &status);
    free(out);
    return rc < 0 ? rc : status;
}

/* Compiles a copy of tests/fixtures/graph/python; returns the index dir. */
static char *compile_copy(char **repo_out)
{
    const char *src = getenv("CN_SRCDIR");
    char *fix = cn_path_join(src ? src : "..", "tests/fixtures/graph/python"), *repo = cn_path_join(tmpdir, "repo");
    char *cache = cn_path_join(tmpdir, "cache"), *dir = NULL;
    cn_compile_opts o;
    cn_compile_result res;

    run_cmd("cp", "-r", fix, repo);
    memset(&o, 0, sizeof o);
    o.repo = repo;
    o.cache_dir = cache;
    o.threads = 1;
    if (cn_compile(&o, &res) == 0) {
        dir = cn_strdup(res.index_dir);
        cn_compile_result_free(&res);
    } else {
        diag("compile: %s", cn_error_last()->message);
    }
    free(fix);
    free(cache);
    *repo_out = repo;
    return dir;
}

static void test_guard_registry(cn_registry *reg, const char *repo, const char *dir)
{
    cn_strv ex = CN_STRV_INIT, warn = CN_STRV_INIT, notes = CN_STRV_INIT;
    char *added;

    cn_registry_add_inprocess(reg, meta("skill_id: needs_graph\nskill_type: custom\nindex_requirements: [graph, bm25]\n"),
                              echo_fn, NULL, NULL);
    cn_registry_add_inprocess(reg, meta("skill_id: needs_vector\nskill_type: custom\nindex_requirements: [vector]\n"),
                              echo_fn, NULL, NULL);
    cn_registry_add_inprocess(reg, meta("skill_id: needs_nothing\nskill_type: custom\n"), echo_fn, NULL, NULL);
    is_int(cn_resource_guard(reg, NULL, false, &ex, &warn, &notes), 0, "the guard runs on the registry's index");
    ok(ex.len == 1 && strcmp(ex.items[0], "needs_vector") == 0, "only the vector skill is excluded");
    ok(warn.len == 1, "one warning");
    is_str(warn.len ? warn.items[0] : "(none)", "skill needs_vector needs the vector index: the compiled index has no vector "
                                        "part; recompile with --index ...,vector", "naming skill, index and why");
    ok(notes.len == 0, "a fresh index: no note");
    cn_strv_free(&notes);
    cn_strv_free(&ex);
    cn_strv_free(&warn);

    added = cn_path_join(repo, "pkg/extra.py");
    {
        FILE *f = fopen(added, "w");
        if (f) {
            fputs("def extra():\n    return 1\n", f);
            fclose(f);
        }
    }
    {
        char *mpath = cn_path_join(dir, "repo_manifest.json");
        is_int(cn_resource_guard(reg, mpath, false, &ex, &warn, &notes), 0, "the guard runs on a manifest path");
        free(mpath);
    }
    ok(!cn_strv_contains(&ex, "needs_graph") && cn_strv_contains(&ex, "needs_vector") &&
           !cn_strv_contains(&ex, "needs_nothing") && ex.len == 1 && warn.len == 1,
       "a stale index keeps the graph skill; only the missing vector index excludes");
    ok(notes.len == 1, "one note for the stale index");
    has_str(notes.len ? notes.items[0] : "(none)",
            "The compiled index is stale (1 file(s) added since the index was built): ", "giving the reason once");
    has_str(notes.len ? notes.items[0] : "(none)", "needs_graph answers from the index as it was built",
            "naming the skill it concerns");
    ok(notes.len && strstr(notes.items[0], "needs_nothing") == NULL && strstr(notes.items[0], "needs_vector") == NULL,
       "and not the skills without an index, nor the excluded one");
    cn_strv_free(&ex);
    cn_strv_free(&warn);
    cn_strv_free(&notes);
    is_int(cn_resource_guard(reg, NULL, true, &ex, &warn, &notes), 0, "the guard runs with freshness known");
    ok(!cn_strv_contains(&ex, "needs_graph") && cn_strv_contains(&ex, "needs_vector"),
       "known_fresh: the repository is not compared again, only missing indexes exclude");
    ok(notes.len == 0, "known_fresh: no stale note");
    cn_strv_free(&ex);
    cn_strv_free(&warn);
    cn_strv_free(&notes);
    unlink(added);
    free(added);
}

/* ---- route context ------------------------------------------------------ */

static const char *ROUTE_NODES =
    "[{\"node_id\":15,\"node_name\":\"pkg/pool.py:ConnectionPool.get\",\"type\":\"method\",\"file\":\"pkg/pool.py\","
    "\"start_line\":9,\"end_line\":11,\"role\":\"anchor\",\"seed\":\"ConnectionPool.get\"},"
    "{\"node_id\":4,\"node_name\":\"pkg/base.py:Base.release\",\"type\":\"method\",\"file\":\"pkg/base.py\","
    "\"start_line\":3,\"end_line\":4,\"role\":\"neighbor\",\"via\":{\"edge\":\"calls\",\"direction\":\"out\","
    "\"from\":15,\"from_name\":\"pkg/pool.py:ConnectionPool.get\",\"line\":10}},"
    "{\"node_id\":7,\"node_name\":\"helper\",\"file\":\"pkg/util.py\",\"start_line\":5,\"end_line\":5}]";

static void test_route_render(void)
{
    json_object *nodes = J(ROUTE_NODES), *swapped = J(ROUTE_NODES), *empty = J("[]");
    cn_strv seeds = CN_STRV_INIT;
    char *text, *f1, *f2, *f3;

    cn_strv_push(&seeds, "ConnectionPool.get");
    cn_strv_push(&seeds, "helper");
    text = cn_route_context_render(&seeds, nodes, 0);
    is_str(text,
           "## Route hints from the symbol graph (unverified)\n"
           "Graph anchors for names in the task (or for the task text when it names no symbol). "
           "Use them to pick the first files to open; they are not a list of answers. "
           "Read a file before citing anything from it.\n"
           "Seeds: ConnectionPool.get, helper\n"
           "\n"
           "1. pkg/pool.py:9-11 pkg/pool.py:ConnectionPool.get [method]\n"
           "2. pkg/base.py:3-4 pkg/base.py:Base.release [method] - calls edge (out) from pkg/pool.py:ConnectionPool.get\n"
           "3. pkg/util.py:5 helper [symbol]",
           "the rendered hint block");
    free(text);
    text = cn_route_context_render(NULL, nodes, 1);
    has_str(text, "Seeds: none (query text)\n\n1. pkg/pool.py:9-11", "no seeds: query text");
    ok(strstr(text, "2. ") == NULL, "max_nodes caps the list");
    free(text);
    text = cn_route_context_render(&seeds, empty, 0);
    is_str(text, "", "no nodes: nothing");
    free(text);

    f1 = cn_route_context_fingerprint(nodes);
    f2 = cn_route_context_fingerprint(nodes);
    json_object_array_del_idx(swapped, 0, 1);
    f3 = cn_route_context_fingerprint(swapped);
    is_int((long long)strlen(f1), 16, "16 hex digits");
    is_str(f1, f2, "stable");
    ok(strcmp(f1, f3) != 0, "depends on the nodes");
    free(f3);
    f3 = cn_route_context_fingerprint(empty);
    is_str(f3, "cbf29ce484222325", "the empty route is the FNV offset basis");
    free(f1);
    free(f2);
    free(f3);
    cn_strv_free(&seeds);
    json_object_put(nodes);
    json_object_put(swapped);
    json_object_put(empty);
}

static void test_route_e2e(cn_registry *reg)
{
    cn_agent_options o;
    cn_route_context c;
    const char *bd = getenv("CN_BUILDDIR");
    char *skills = cn_path_join(bd ? bd : ".", "_skills");
    int rc;

    cn_agent_options_init(&o);
    o.lsp_route_top_k = 3;
    cn_registry_add_root(reg, skills, "test");
    free(skills);
    rc = cn_route_context_build(reg, "Why does `ConnectionPool.get` return stale connections?", NULL, &o, &c);
    if (!ok(rc == 0, "route context builds")) diag("%s", cn_error_last()->message);
    ok(cn_strv_contains(&c.seeds, "ConnectionPool.get"), "the backticked name is a seed");
    has_str(c.text, "\n1. pkg/pool.py:8-10 pkg/pool.py:ConnectionPool.get [method]\n",
            "the anchor, 1-based lines (def get is line 8)");
    has_str(c.text, "pkg/base.py:Base.release [method] - calls edge (out) from pkg/pool.py:ConnectionPool.get",
            "a neighbour with its edge");
    ok(c.fingerprint && strlen(c.fingerprint) == 16, "fingerprinted");
    {
        json_object *k = NULL;
        json_object_object_get_ex(c.arguments, "top_k", &k);
        is_int(json_object_get_int(k), 3, "top_k passed through");
    }
    cn_route_context_free(&c);
    {
        cn_strv ex = CN_STRV_INIT;
        cn_strv_push(&ex, "helper");
        rc = cn_route_context_build(reg, "Why does `ConnectionPool.get` fail?", &ex, &o, &c);
        ok(rc == 0 && c.seeds.len >= 2 && strcmp(c.seeds.items[0], "helper") == 0, "explicit seeds come first");
        has_str(c.text, "Seeds: helper, ConnectionPool.get\n\n1. pkg/util.py:4-9 pkg/util.py:helper [function]\n"
                        "2. pkg/pool.py:8-10 pkg/pool.py:ConnectionPool.get [method]\n",
                "both anchors, in seed order");
        cn_route_context_free(&c);
        cn_strv_free(&ex);
    }
    rc = cn_route_context_build(reg, "Does `ConnectionPool.get` call `helper`?", NULL, &o, &c);
    ok(rc == 0 && cn_strv_contains(&c.seeds, "helper") && cn_strv_contains(&c.seeds, "ConnectionPool.get"),
       "policy all keeps a plain name");
    cn_route_context_free(&c);
    free(o.lsp_route_seed_policy);
    o.lsp_route_seed_policy = cn_strdup("specific");
    rc = cn_route_context_build(reg, "Does `ConnectionPool.get` call `helper`?", NULL, &o, &c);
    ok(rc == 0 && c.seeds.len == 1 && strcmp(c.seeds.items[0], "ConnectionPool.get") == 0,
       "policy specific drops the plain name");
    cn_route_context_free(&c);
    rc = cn_route_context_build(reg, "Does `helper` work?", NULL, &o, &c);
    ok(rc == 0 && c.skipped && c.seeds.len == 0, "no specific seed and no fallback: skipped");
    cn_route_context_free(&c);
    free(o.lsp_route_seed_policy);
    o.lsp_route_seed_policy = cn_strdup("all");
    rc = cn_route_context_build(reg, "please make it faster", NULL, &o, &c);
    ok(rc == 0 && c.skipped && c.text && *c.text == '\0' && c.nodes == NULL, "no seeds, no fallback: skipped");
    cn_route_context_free(&c);
    o.lsp_route_query_fallback = true;
    rc = cn_route_context_build(reg, "the pool size check", NULL, &o, &c);
    ok(rc == 0 && !c.skipped && c.fingerprint != NULL && c.seeds.len == 0, "query fallback runs the route");
    has_str(c.text, "Seeds: none (query text)\n\n1. ", "query text as the seed source, with nodes");
    cn_route_context_free(&c);
    cn_agent_options_free(&o);
}

int main(void)
{
    cn_registry *reg = NULL;
    char *repo = NULL, *dir;

    if (mkdtemp(tmpdir) == NULL) return 1;
    test_tokens();
    test_trim();
    test_options_defaults();
    test_harness_yaml();
    test_harness_json();
    test_trace();
    test_ledger();
    test_totals();
    test_compile_table();
    test_session_table();
    test_guard_decision();
    test_route_render();

    dir = compile_copy(&repo);
    if (ok(dir != NULL, "the python fixture compiles")) {
        if (cn_registry_new(&reg) == 0) {
            if (cn_registry_set_index_dir(reg, repo, dir) < 0) diag("%s", cn_error_last()->message);
            test_route_e2e(reg);
            cn_registry_free(reg);
        }
        if (cn_registry_new(&reg) == 0) {
            if (cn_registry_set_index_dir(reg, repo, dir) < 0) diag("%s", cn_error_last()->message);
            test_guard_registry(reg, repo, dir);
            cn_registry_free(reg);
        }
    }
    free(dir);
    free(repo);
    run_cmd("rm", "-rf", tmpdir, NULL);
    return tap_done();
}
