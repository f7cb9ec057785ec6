/* SPDX-License-Identifier: Apache-2.0 */
/* cn_query() in agent mode from a program: the agent's options as a
 * struct (cn_agent_settings), the application's own chat client
 * (cn_chat_client) serving the agent and the model-backed skills, and the
 * history, trace and usage in the result.  The client is a scripted model
 * in this file: each test gives it a script and looks at what codenib sent
 * it and what cn_query() made of the replies. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <json-c/json.h>

#include <codenib/codenib.h>

#include "tap.h"
#include "util/cn_util.h"

enum script { S_READ_THEN_ANSWER, S_RERANK_THEN_ANSWER, S_NEVER_ANSWER, S_GARBAGE, S_WRONG_SHAPE, S_FAIL };

typedef struct client_state {
    enum script script;
    int calls;             /* requests with tools (the agent's turns) */
    int side_calls;        /* requests without tools (a skill's) */
    json_object *first;    /* the first request */
    json_object *side;     /* the first skill request */
} client_state;

static char *text_of(json_object *o)
{
    char *s = strdup(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
    json_object_put(o);
    return s;
}

/* {"choices":[{"message": msg, "finish_reason": fr}], "usage": {...}} */
static char *completion(json_object *msg, const char *fr, int prompt, int completion_tokens)
{
    json_object *r = json_object_new_object(), *choices = json_object_new_array(), *c = json_object_new_object(),
                *u = json_object_new_object();
    json_object_object_add(c, "message", msg);
    json_object_object_add(c, "finish_reason", json_object_new_string(fr));
    json_object_array_add(choices, c);
    json_object_object_add(r, "choices", choices);
    json_object_object_add(u, "prompt_tokens", json_object_new_int(prompt));
    json_object_object_add(u, "completion_tokens", json_object_new_int(completion_tokens));
    json_object_object_add(r, "usage", u);
    return text_of(r);
}

static char *tool_call(const char *id, const char *name, const char *args)
{
    json_object *m = json_object_new_object(), *calls = json_object_new_array(), *c = json_object_new_object(),
                *fn = json_object_new_object();
    json_object_object_add(fn, "name", json_object_new_string(name));
    json_object_object_add(fn, "arguments", json_object_new_string(args));
    json_object_object_add(c, "id", json_object_new_string(id));
    json_object_object_add(c, "type", json_object_new_string("function"));
    json_object_object_add(c, "function", fn);
    json_object_array_add(calls, c);
    json_object_object_add(m, "role", json_object_new_string("assistant"));
    json_object_object_add(m, "content", NULL);
    json_object_object_add(m, "tool_calls", calls);
    return completion(m, "tool_calls", 100, 10);
}

static char *say(const char *content)
{
    json_object *m = json_object_new_object();
    json_object_object_add(m, "role", json_object_new_string("assistant"));
    json_object_object_add(m, "content", json_object_new_string(content));
    return completion(m, "stop", 50, 20);
}

static const char answer[] = "The size is checked in the pool.\n"
                             "Files: pkg/pool.py\n"
                             "Symbols: pkg/pool.py:ConnectionPool._check\n"
                             "Locations: pkg/pool.py:12-13\n";

static int scripted_chat(void *data, const char *request_json, char **response_json, cn_error *err)
{
    client_state *st = data;
    json_object *req = json_tokener_parse(request_json), *tools = NULL;
    int turn;

    if (req == NULL) {
        err->code = CN_EPARSE;
        snprintf(err->message, sizeof err->message, "the request is not JSON");
        return CN_EPARSE;
    }
    if (!json_object_object_get_ex(req, "tools", &tools)) {
        /* a skill's request (llm_rerank in rankgpt form): the second
         * candidate first */
        st->side_calls++;
        if (st->side == NULL) st->side = json_object_get(req);
        json_object_put(req);
        *response_json = say("[2] > [1]");
        return 0;
    }
    turn = ++st->calls;
    if (st->first == NULL) st->first = json_object_get(req);
    json_object_put(req);
    switch (st->script) {
    case S_READ_THEN_ANSWER:
        *response_json = turn == 1 ? tool_call("c1", "read", "{\"path\": \"pkg/pool.py\"}") : say(answer);
        return 0;
    case S_RERANK_THEN_ANSWER:
        *response_json = turn == 1 ? tool_call("c1", "llm_rerank",
                                               "{\"query\": \"the pool size check\", \"format\": \"rankgpt\", "
                                               "\"candidates\": 2}")
                                   : say(answer);
        return 0;
    case S_NEVER_ANSWER:
        *response_json = tool_call(turn == 1 ? "g1" : "g2", "glob", "{\"pattern\": \"**/*.py\"}");
        return 0;
    case S_GARBAGE:
        *response_json = strdup("this is not JSON {");
        return 0;
    case S_WRONG_SHAPE:
        *response_json = strdup("{\"choices\": 5}");
        return 0;
    case S_FAIL:
        err->code = CN_ENETWORK;
        snprintf(err->message, sizeof err->message, "the backend is down for maintenance");
        return CN_ENETWORK;
    }
    return CN_ERR;
}

static const char *str_at(json_object *o, const char *a, const char *b)
{
    json_object *v;
    if (!json_object_object_get_ex(o, a, &v)) return NULL;
    if (b != NULL && !json_object_object_get_ex(v, b, &v)) return NULL;
    return json_object_get_string(v);
}

static int64_t int_at(json_object *o, const char *a, const char *b)
{
    json_object *v;
    if (!json_object_object_get_ex(o, a, &v) || !json_object_object_get_ex(v, b, &v)) return -1;
    return json_object_get_int64(v);
}

static bool has_event(json_object *trace, const char *kind)
{
    for (size_t i = 0; i < json_object_array_length(trace); i++) {
        const char *k = str_at(json_object_array_get_idx(trace, i), "event", NULL);
        if (k && strcmp(k, kind) == 0) return true;
    }
    return false;
}

typedef struct fixture {
    char *repo, *cache;
} fixture;

static cn_query_options base(const fixture *f, cn_chat_client *cc, cn_agent_settings *as, client_state *st,
                             enum script script)
{
    cn_query_options o;
    memset(&o, 0, sizeof o);
    memset(cc, 0, sizeof *cc);
    memset(as, 0, sizeof *as);
    memset(st, 0, sizeof *st);
    o.struct_size = (uint32_t)sizeof o;
    o.repo_path = f->repo;
    o.cache_dir = f->cache;
    cc->struct_size = (uint32_t)sizeof *cc;
    cc->model = "scripted-model";
    cc->chat = scripted_chat;
    cc->data = st;
    st->script = script;
    as->struct_size = (uint32_t)sizeof *as;
    o.chat = cc;
    o.agent = as;
    return o;
}

static void client_free(client_state *st)
{
    json_object_put(st->first);
    json_object_put(st->side);
}

static void test_agent_run(const fixture *f)
{
    cn_chat_client cc;
    cn_agent_settings as;
    client_state st;
    cn_query_options o = base(f, &cc, &as, &st, S_READ_THEN_ANSWER);
    char *res = NULL;
    json_object *j, *v, *msgs;

    as.system_prompt = "You are the scripted test's locator.";
    as.max_tool_output = 4000;
    o.return_messages = 1;
    o.return_trace = 1;
    is_int(cn_query(&o, "ConnectionPool._check fails on an int size", &res), 0,
           "agent mode through the application's chat client");
    if (res == NULL) diag("%s", cn_last_error()->message);
    j = json_tokener_parse(res ? res : "null");
    is_str(str_at(j, "mode", NULL), "agent", "mode agent");
    is_str(str_at(j, "model", NULL), "scripted-model", "the result names the client's model");
    is_int(st.calls, 2, "two model calls: the read, then the answer");
    is_str(str_at(st.first, "model", NULL), "scripted-model", "requests carry the client's model name");
    ok(json_object_object_get_ex(st.first, "messages", &msgs) &&
           strncmp(str_at(json_object_array_get_idx(msgs, 0), "content", NULL) ?: "",
                   "You are the scripted test's locator.", 36) == 0,
       "the struct's system prompt is the one sent");
    ok(json_object_object_get_ex(st.first, "tools", &v) && strstr(json_object_to_json_string(v), "\"read\""),
       "the request offers the read tool");
    ok(json_object_object_get_ex(j, "contract", &v) && json_object_object_get_ex(v, "files", &v) &&
           json_object_array_length(v) == 1 &&
           strcmp(json_object_get_string(json_object_array_get_idx(v, 0)), "pkg/pool.py") == 0,
       "the contract comes from the client's answer");
    ok(json_object_object_get_ex(j, "tool_calls", &v) && json_object_array_length(v) == 1 &&
           strcmp(str_at(json_object_array_get_idx(v, 0), "name", NULL) ?: "", "read") == 0 &&
           strstr(str_at(json_object_array_get_idx(v, 0), "result", NULL) ?: "", "class ConnectionPool"),
       "the read the client asked for ran in the repository");
    is_int((int)int_at(j, "usage", "prompt_tokens"), 150, "usage: the client's prompt tokens summed");
    is_int((int)int_at(j, "usage", "completion_tokens"), 30, "usage: the completion tokens summed");
    ok(json_object_object_get_ex(j, "usage_calls", &v) && json_object_array_length(v) == 2,
       "usage_calls: one entry per model call");
    ok(json_object_object_get_ex(j, "messages", &msgs) && json_object_array_length(msgs) >= 4 &&
           strcmp(str_at(json_object_array_get_idx(msgs, 0), "role", NULL) ?: "", "system") == 0,
       "messages: the history from the system prompt on");
    ok(msgs && strstr(json_object_to_json_string_ext(msgs, JSON_C_TO_STRING_PLAIN), "\"role\":\"tool\"") != NULL,
       "messages: the tool result is in the history");
    ok(json_object_object_get_ex(j, "trace", &v) && json_object_is_type(v, json_type_array) &&
           has_event(v, "run_start") && has_event(v, "run_end"),
       "trace: the run's events from start to end");
    json_object_put(j);
    cn_free(res);
    client_free(&st);

    /* not asked for: left out */
    o = base(f, &cc, &as, &st, S_READ_THEN_ANSWER);
    res = NULL;
    is_int(cn_query(&o, "ConnectionPool._check fails on an int size", &res), 0, "again without history or trace");
    j = json_tokener_parse(res ? res : "null");
    ok(!json_object_object_get_ex(j, "messages", NULL) && !json_object_object_get_ex(j, "trace", NULL),
       "... the result has neither");
    json_object_put(j);
    cn_free(res);
    client_free(&st);
}

static void test_skill_model(const fixture *f)
{
    cn_chat_client cc;
    cn_agent_settings as;
    client_state st;
    cn_query_options o = base(f, &cc, &as, &st, S_RERANK_THEN_ANSWER);
    char *res = NULL;
    const char *r;
    json_object *j, *v;

    is_int(cn_query(&o, "ConnectionPool._check fails on an int size", &res), 0, "an agent run calling llm_rerank");
    if (res == NULL) diag("%s", cn_last_error()->message);
    is_int(st.side_calls, 1, "llm_rerank asked the application's client (no HTTP model configured)");
    ok(st.side && strstr(json_object_to_json_string(st.side), "the pool size check") != NULL,
       "... with the query in its request");
    j = json_tokener_parse(res ? res : "null");
    v = NULL;
    json_object_object_get_ex(j, "tool_calls", &v);
    r = str_at(json_object_array_get_idx(v, 0), "result", NULL);
    ok(r != NULL && str_at(json_object_array_get_idx(v, 0), "error", NULL) == NULL && strstr(r, "node_id"),
       "... and the skill answered with the candidates the client ranked");
    if (r == NULL && v) diag("%.400s", json_object_to_json_string(v));
    json_object_put(j);
    cn_free(res);
    client_free(&st);
}

static void test_settings(const fixture *f)
{
    cn_chat_client cc;
    cn_agent_settings as;
    client_state st;
    cn_query_options o = base(f, &cc, &as, &st, S_NEVER_ANSWER);
    char *res = NULL;

    as.max_turns = 2;
    is_int(cn_query(&o, "where is the size checked?", &res), CN_ETIMEOUT,
           "max_turns 2 from the struct: a model that never answers runs out");
    has_str(cn_last_error()->message, "all 2 turns", "... after exactly the struct's two turns");
    is_int(st.calls, 2, "... and the client was called twice");
    ok(res == NULL, "... with no result");
    client_free(&st);

    o = base(f, &cc, &as, &st, S_NEVER_ANSWER);
    as.max_turns = 1;
    as.include_default_tools = -1;
    is_int(cn_query(&o, "where is the size checked?", &res), CN_ETIMEOUT, "include_default_tools -1");
    ok(st.first && !strstr(json_object_to_json_string(st.first), "\"read\"") &&
           strstr(json_object_to_json_string(st.first), "bm25_search"),
       "... offers the skills without read, grep and glob");
    client_free(&st);

    o = base(f, &cc, &as, &st, S_NEVER_ANSWER);
    as.options_json = "{\"max_turns\": 1}";
    is_int(cn_query(&o, "where?", &res), CN_ETIMEOUT, "options_json sets a harness key (max_turns 1)");
    is_int(st.calls, 1, "... one turn");
    client_free(&st);

    o = base(f, &cc, &as, &st, S_NEVER_ANSWER);
    as.options_json = "{\"max_turns\": 1}";
    as.max_turns = 3;
    is_int(cn_query(&o, "where?", &res), CN_ETIMEOUT, "a field and options_json: the field wins");
    is_int(st.calls, 3, "... three turns");
    client_free(&st);

    /* settings refused before any model call, each with a message naming it */
    {
        static const struct {
            const char *options_json;
            int review_final_answer, max_turns;
            uint32_t struct_size; /* 0: sizeof */
            const char *what, *message;
        } bad[] = {
            {"{\"max_turnz\": 1}", 0, 0, 0, "an unknown key in options_json", "max_turnz"},
            {"{\"max_turns\": ", 0, 0, 0, "malformed options_json", "options_json"},
            {NULL, 2, 0, 0, "a flag of 2", "cn_agent_settings.review_final_answer"},
            {NULL, 0, -4, 0, "a negative max_turns", "cn_agent_settings.max_turns"},
            {NULL, 0, 0, 8, "a truncated settings struct", "sizeof(cn_agent_settings)"},
        };
        for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
            o = base(f, &cc, &as, &st, S_NEVER_ANSWER);
            as.options_json = bad[i].options_json;
            as.review_final_answer = bad[i].review_final_answer;
            as.max_turns = bad[i].max_turns;
            if (bad[i].struct_size) as.struct_size = bad[i].struct_size;
            char what[160];
            snprintf(what, sizeof what, "%s: refused before any model call", bad[i].what);
            ok(cn_query(&o, "where?", &res) < 0 && res == NULL && st.calls == 0, what);
            snprintf(what, sizeof what, "... naming %s", bad[i].message);
            has_str(cn_last_error()->message, bad[i].message, what);
            client_free(&st);
        }
    }
}

static void test_bad_client(const fixture *f)
{
    cn_chat_client cc;
    cn_agent_settings as;
    client_state st;
    cn_query_options o = base(f, &cc, &as, &st, S_GARBAGE);
    char *res = NULL;

    is_int(cn_query(&o, "where?", &res), CN_EPARSE, "a reply that is not JSON: CN_EPARSE");
    has_str(cn_last_error()->message, "chat client", "... naming the application's client");
    client_free(&st);
    o = base(f, &cc, &as, &st, S_WRONG_SHAPE);
    is_int(cn_query(&o, "where?", &res), CN_EPARSE, "a reply without a choices array: CN_EPARSE");
    has_str(cn_last_error()->message, "choices", "... naming the member");
    client_free(&st);
    o = base(f, &cc, &as, &st, S_FAIL);
    is_int(cn_query(&o, "where?", &res), CN_ENETWORK, "a client that fails: its code");
    has_str(cn_last_error()->message, "the backend is down for maintenance", "... and its message");
    client_free(&st);
    o = base(f, &cc, &as, &st, S_FAIL);
    cc.chat = NULL;
    is_int(cn_query(&o, "where?", &res), CN_EINVAL, "a client without a chat function: refused");
    o = base(f, &cc, &as, &st, S_FAIL);
    cc.struct_size = 4;
    is_int(cn_query(&o, "where?", &res), CN_EINVAL, "a truncated client struct: refused");
    ok(res == NULL, "no result from any of them");
}

static void test_old_struct(const fixture *f)
{
    /* a program built against ABI 1.1 knows the struct up to trace_path */
    cn_chat_client cc;
    cn_agent_settings as;
    client_state st;
    cn_query_options o = base(f, &cc, &as, &st, S_FAIL);
    char *res = NULL;
    json_object *j;

    o.struct_size = (uint32_t)(offsetof(cn_query_options, trace_path) + sizeof o.trace_path);
    is_int(cn_query(&o, "ConnectionPool._check fails on an int size", &res), 0,
           "a 1.1-sized options struct still works");
    j = json_tokener_parse(res ? res : "null");
    is_str(str_at(j, "mode", NULL), "offline", "... and its fields past the size are not read (no client: offline)");
    is_int(st.calls, 0, "... the client was never called");
    json_object_put(j);
    cn_free(res);
}

int main(void)
{
    const char *b = getenv("CN_BUILDDIR"), *s = getenv("CN_SRCDIR");
    char tmpl[] = "/tmp/cn-query-agent-api.XXXXXX", cmd[4096], *tmp, *py;
    fixture f;

    if (b == NULL || s == NULL) {
        diag("CN_BUILDDIR / CN_SRCDIR not set: nothing to run");
        return tap_done();
    }
    py = cn_path_join(b, "_plugins/lang-python/lang_python.so");
    if (access(py, R_OK) != 0) {
        diag("the python backend was not built: nothing to run");
        free(py);
        return tap_done();
    }
    free(py);
    unsetenv("CODENIB_MODEL");
    unsetenv("CODENIB_RERANK_MODEL");
    if ((tmp = mkdtemp(tmpl)) == NULL) {
        ok(0, "temporary directory");
        return tap_done();
    }
    f.repo = cn_path_join(tmp, "repo");
    f.cache = cn_path_join(tmp, "cache");
    snprintf(cmd, sizeof cmd, "cp -R '%s/tests/fixtures/graph/python' '%s'", s, f.repo);
    ok(system(cmd) == 0, "fixture repository copied");
    test_agent_run(&f);
    test_skill_model(&f);
    test_settings(&f);
    test_bad_client(&f);
    test_old_struct(&f);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
    if (system(cmd) != 0) diag("could not remove %s", tmp);
    free(f.repo);
    free(f.cache);
    return tap_done();
}
