/* SPDX-License-Identifier: Apache-2.0 */
/* The agent loop against the real loopback server (tests/llm/fake_openai)
 * with the build tree's skills over a small compiled Python repository.
 * Each policy is observed in the request bodies the server logged: the
 * tools offered, tool_choice, the messages sent (tool results, salvage and
 * review instructions, compaction, trimming, seeded history), and in the
 * run's result and trace. */
#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <json-c/json.h>

#include "agent/cn_agent.h"
#include "index/cn_compile.h"
#include "llm/cn_llm.h"
#include "plugin/cn_registry.h"
#include "util/cn_util.h"
#include "tap.h"

/* ---- the fake server ---------------------------------------------------- */

typedef struct fake {
    pid_t pid;
    int port;
    char dir[1100];
    char log[1200];
    char url[64];
} fake;

static const char *fake_bin;
static char tmpdir[1024];
static int fake_seq;
static fake *live;
static int violations;

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path);
}

static void cleanup_all(void)
{
    if (live != NULL && live->pid > 0) {
        kill(live->pid, SIGKILL);
        waitpid(live->pid, NULL, 0);
    }
    if (tmpdir[0]) nftw(tmpdir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static int write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (f == NULL) return -1;
    fputs(text, f);
    return fclose(f);
}

static int fake_start(fake *f, const char *script)
{
    char port_file[1200], script_file[1200], text[32];

    memset(f, 0, sizeof *f);
    snprintf(f->dir, sizeof f->dir, "%s/f%d", tmpdir, ++fake_seq);
    mkdir(f->dir, 0755);
    snprintf(port_file, sizeof port_file, "%s/port", f->dir);
    snprintf(script_file, sizeof script_file, "%s/script.jsonl", f->dir);
    snprintf(f->log, sizeof f->log, "%s/log.jsonl", f->dir);
    if (write_file(script_file, script) != 0) return -1;
    fflush(stdout);
    f->pid = fork();
    if (f->pid < 0) return -1;
    if (f->pid == 0) {
        execl(fake_bin, fake_bin, "--port-file", port_file, "--script", script_file, "--log",
              f->log, (char *)NULL);
        _exit(127);
    }
    live = f;
    for (int tries = 0; tries < 1000; tries++) {
        FILE *pf = fopen(port_file, "r");
        if (pf != NULL) {
            int got = fgets(text, sizeof text, pf) != NULL;
            fclose(pf);
            if (got && (f->port = atoi(text)) > 0) break;
        }
        if (waitpid(f->pid, NULL, WNOHANG) == f->pid) {
            f->pid = 0;
            return -1;
        }
        usleep(10000);
    }
    if (f->port <= 0) return -1;
    snprintf(f->url, sizeof f->url, "http://127.0.0.1:%d/v1", f->port);
    return 0;
}

static json_object *read_jsonl(const char *path)
{
    json_object *arr = json_object_new_array();
    FILE *in = fopen(path, "r");
    char *line = NULL;
    size_t cap = 0;

    if (in == NULL) return arr;
    while (getline(&line, &cap, in) > 0) {
        json_object *o = json_tokener_parse(line);
        if (o != NULL) json_object_array_add(arr, o);
    }
    free(line);
    fclose(in);
    return arr;
}

/* Stops the server and returns the request bodies it received. */
static json_object *fake_stop(fake *f)
{
    json_object *log, *bodies = json_object_new_array();

    if (f->pid > 0) {
        kill(f->pid, SIGTERM);
        waitpid(f->pid, NULL, 0);
        f->pid = 0;
    }
    live = NULL;
    log = read_jsonl(f->log);
    for (size_t i = 0; i < json_object_array_length(log); i++) {
        json_object *e = json_object_array_get_idx(log, i), *v, *b;
        if (json_object_object_get_ex(e, "violations", &v) && json_object_array_length(v) > 0) {
            violations++;
            diag("protocol violation: %s", json_object_to_json_string(e));
        }
        if (json_object_object_get_ex(e, "body", &b))
            json_object_array_add(bodies, json_object_get(b));
    }
    json_object_put(log);
    return bodies;
}

/* ---- script lines ------------------------------------------------------- */

static void line_add(cn_buf *s, json_object *msg)
{
    json_object *l = json_object_new_object();
    json_object_object_add(l, "endpoint", json_object_new_string("chat"));
    json_object_object_add(l, "body", msg);
    cn_buf_printf(s, "%s\n", json_object_to_json_string_ext(l, JSON_C_TO_STRING_PLAIN));
    json_object_put(l);
}

static void say(cn_buf *s, const char *content)
{
    json_object *m = json_object_new_object();
    json_object_object_add(m, "role", json_object_new_string("assistant"));
    json_object_object_add(m, "content", json_object_new_string(content));
    line_add(s, m);
}

/* An assistant message with tool calls: id, name, arguments triples, NULL-ended. */
static void call(cn_buf *s, const char *content, ...)
{
    json_object *m = json_object_new_object(), *calls = json_object_new_array();
    const char *id;
    va_list ap;

    va_start(ap, content);
    while ((id = va_arg(ap, const char *)) != NULL) {
        const char *name = va_arg(ap, const char *), *args = va_arg(ap, const char *);
        json_object *c = json_object_new_object(), *fn = json_object_new_object();
        json_object_object_add(fn, "name", json_object_new_string(name));
        json_object_object_add(fn, "arguments", json_object_new_string(args));
        json_object_object_add(c, "id", json_object_new_string(id));
        json_object_object_add(c, "type", json_object_new_string("function"));
        json_object_object_add(c, "function", fn);
        json_object_array_add(calls, c);
    }
    va_end(ap);
    json_object_object_add(m, "role", json_object_new_string("assistant"));
    json_object_object_add(m, "content", content ? json_object_new_string(content) : NULL);
    json_object_object_add(m, "tool_calls", calls);
    line_add(s, m);
}

/* ---- request inspection ------------------------------------------------- */

static json_object *req(json_object *bodies, size_t i)
{
    return json_object_array_get_idx(bodies, i);
}

static json_object *member(json_object *o, const char *k)
{
    json_object *v = NULL;
    if (o == NULL || !json_object_object_get_ex(o, k, &v)) return NULL;
    return v;
}

static const char *mstr(json_object *o, const char *k)
{
    return json_object_get_string(member(o, k));
}

static json_object *messages(json_object *body)
{
    return member(body, "messages");
}

static size_t n_messages(json_object *body)
{
    json_object *m = messages(body);
    return m ? json_object_array_length(m) : 0;
}

static json_object *message(json_object *body, size_t i)
{
    return json_object_array_get_idx(messages(body), i);
}

static json_object *last_message(json_object *body)
{
    size_t n = n_messages(body);
    return n ? message(body, n - 1) : NULL;
}

/* "a,b,c": names of the tools offered in the request ("" when none). */
static char tool_names_buf[1024];
static const char *tool_names(json_object *body)
{
    json_object *tools = member(body, "tools");
    tool_names_buf[0] = '\0';
    for (size_t i = 0; tools && i < json_object_array_length(tools); i++) {
        const char *n = mstr(member(json_object_array_get_idx(tools, i), "function"), "name");
        if (i) strncat(tool_names_buf, ",", sizeof tool_names_buf - strlen(tool_names_buf) - 1);
        strncat(tool_names_buf, n ? n : "?", sizeof tool_names_buf - strlen(tool_names_buf) - 1);
    }
    return tool_names_buf;
}

/* tool_choice as text: "required", "fn:read", or "(absent)". */
static char choice_buf[128];
static const char *choice(json_object *body)
{
    json_object *c = member(body, "tool_choice");
    if (c == NULL) return "(absent)";
    if (json_object_is_type(c, json_type_string)) return json_object_get_string(c);
    snprintf(choice_buf, sizeof choice_buf, "fn:%s", mstr(member(c, "function"), "name"));
    return choice_buf;
}

/* Content of the tool message answering call `id` ("" when absent). */
static const char *tool_result(json_object *body, const char *id)
{
    for (size_t i = 0; i < n_messages(body); i++) {
        json_object *m = message(body, i);
        const char *cid = mstr(m, "tool_call_id");
        if (cid && strcmp(cid, id) == 0) return mstr(m, "content");
    }
    return "";
}

/* ---- fixture ------------------------------------------------------------ */

static char repo[PATH_MAX];
static cn_registry *reg;

static const char config_py[] = "\"\"\"Configuration loading.\"\"\"\n"
                                "\n"
                                "\n"
                                "def parse_config(text):\n"
                                "    \"\"\"Parse key=value lines into a dict.\"\"\"\n"
                                "    out = {}\n"
                                "    for line in text.splitlines():\n"
                                "        key, _, value = line.partition(\"=\")\n"
                                "        out[key.strip()] = value.strip()\n"
                                "    return out\n";

static const char server_py[] = "from app.config import parse_config\n"
                                "\n"
                                "\n"
                                "def start(path):\n"
                                "    with open(path) as f:\n"
                                "        return parse_config(f.read())\n";

static int setup_repo(void)
{
    char raw[1200], path[1300], cache[1300];
    cn_compile_opts co;
    cn_compile_result cr;
    const char *build = getenv("CN_BUILDDIR");
    int rc;

    snprintf(raw, sizeof raw, "%s/repo", tmpdir);
    mkdir(raw, 0755);
    snprintf(path, sizeof path, "%s/app", raw);
    mkdir(path, 0755);
    snprintf(path, sizeof path, "%s/app/__init__.py", raw);
    write_file(path, "");
    snprintf(path, sizeof path, "%s/app/config.py", raw);
    write_file(path, config_py);
    snprintf(path, sizeof path, "%s/app/server.py", raw);
    write_file(path, server_py);
    if (realpath(raw, repo) == NULL) return -1;
    snprintf(cache, sizeof cache, "%s/cache", tmpdir);
    memset(&co, 0, sizeof co);
    co.repo = repo;
    co.cache_dir = cache;
    co.threads = 1;
    if (cn_compile(&co, &cr) < 0) {
        diag("compile: %s", cn_error_last()->message);
        return -1;
    }
    snprintf(path, sizeof path, "%s/_skills", build && *build ? build : ".");
    rc = cn_registry_new(&reg);
    if (rc == 0) rc = cn_registry_add_root(reg, path, "build");
    if (rc == 0) rc = cn_registry_set_index_dir(reg, repo, cr.index_dir);
    cn_compile_result_free(&cr);
    if (rc < 0) diag("registry: %s", cn_error_last()->message);
    return rc;
}

static void opts(cn_agent_options *o, const char *skills)
{
    cn_agent_options_init(o);
    if (skills) {
        o->has_allow_skills = true;
        cn_strv_split(&o->allow_skills, skills, ',');
    }
}

/* Runs the agent against a server playing `script`; returns the request
 * bodies (and the run's status in *rc). */
static json_object *run(cn_buf *script, const cn_agent_options *o, const char *prompt,
                        cn_agent_result *res, int *rc)
{
    fake f;
    cn_model *m = NULL;
    char cfg[256];
    json_object *bodies;

    memset(res, 0, sizeof *res);
    *rc = -1;
    if (fake_start(&f, script->data ? script->data : "") != 0) {
        diag("fake server did not start");
        cn_buf_free(script);
        return json_object_new_array();
    }
    cn_buf_free(script);
    snprintf(cfg, sizeof cfg,
             "{\"base_url\":\"%s\",\"model\":\"m\",\"api_key\":\"k\",\"max_retries\":0}", f.url);
    if (cn_llm_open(cfg, CN_LLM_CHAT, &m) == 0) {
        *rc = cn_agent_run(reg, m, o, prompt, res);
        if (*rc < 0) diag("agent: %s", cn_error_last()->message);
        cn_llm_close(m);
    }
    bodies = fake_stop(&f);
    return bodies;
}

#define READ_CONFIG "{\"path\":\"app/config.py\"}"
#define GREP_PARSE "{\"pattern\":\"parse_config\"}"
#define CONTRACT                                                                                   \
    "Files: app/config.py\nSymbols: app/config.py:parse_config\nLocations: app/config.py:4-10"

/* ---- tests -------------------------------------------------------------- */

static void test_tools_offered(void)
{
    cn_buf s = CN_BUF_INIT;
    cn_agent_options o;
    cn_agent_result r;
    json_object *b;
    int rc;
    char want[PATH_MAX + 64];

    say(&s, "done");
    opts(&o, "bm25_search");
    o.temperature = 0.25;
    o.max_tokens = 321;
    b = run(&s, &o, "where is config parsed?", &r, &rc);
    is_int(rc, 0, "offered: run succeeds");
    is_int(json_object_array_length(b), 1, "offered: one model call");
    is_str(tool_names(req(b, 0)), "bm25_search,read,grep,glob",
           "offered: allowed skill plus default tools, one list");
    is_str(choice(req(b, 0)), "(absent)", "offered: no tool_choice without a forced choice");
    ok(json_object_get_double(member(req(b, 0), "temperature")) == 0.25,
       "offered: temperature sent");
    is_int(json_object_get_int(member(req(b, 0), "max_tokens")), 321, "offered: max_tokens sent");
    is_str(mstr(message(req(b, 0), 0), "role"), "system", "offered: system prompt first");
    snprintf(want, sizeof want, "Repository root: %s\n", repo);
    has_str(mstr(message(req(b, 0), 0), "content"), want,
            "offered: environment names the repository root");
    has_str(mstr(message(req(b, 0), 0), "content"), "Tools: bm25_search, read, grep, glob\n",
            "offered: system prompt lists exactly the offered tools");
    is_str(mstr(last_message(req(b, 0)), "content"), "where is config parsed?",
           "offered: the prompt is the user message");
    is_str(r.answer, "done", "offered: answer is the assistant text");
    is_str(r.answer_source, "assistant", "offered: answer source");
    is_int(r.turns, 1, "offered: one turn");
    ok(r.prompt_tokens > 0 && r.completion_tokens > 0 && r.cached_tokens == 0,
       "offered: usage totals known");
    cn_agent_result_free(&r);
    cn_agent_options_free(&o);
    json_object_put(b);

    /* A custom prompt replaces the built-in one; the environment block stays. */
    s = (cn_buf)CN_BUF_INIT;
    say(&s, "ok");
    opts(&o, "bm25_search");
    o.system_prompt = cn_strdup("You are a test prompt.");
    o.include_default_tools = false;
    b = run(&s, &o, "q", &r, &rc);
    is_str(tool_names(req(b, 0)), "bm25_search",
           "offered: include_default_tools false leaves only skills");
    ok(strncmp(mstr(message(req(b, 0), 0), "content"), "You are a test prompt.\n", 23) == 0,
       "offered: custom system prompt comes first");
    has_str(mstr(message(req(b, 0), 0), "content"), "Tools: bm25_search\n",
            "offered: environment block after custom prompt");
    cn_agent_result_free(&r);
    cn_agent_options_free(&o);
    json_object_put(b);
}

static void test_forced_choice(void)
{
    cn_buf s = CN_BUF_INIT;
    cn_agent_options o;
    cn_agent_result r;
    json_object *b;
    int rc;

    call(&s, NULL, "c1", "grep", GREP_PARSE, NULL);
    call(&s, NULL, "c2", "read", READ_CONFIG, NULL);
    say(&s, "parse_config in app/config.py");
    opts(&o, "bm25_search");
    o.first_turn_tool_choice = cn_strdup("required");
    b = run(&s, &o, "find the parser", &r, &rc);
    is_int(rc, 0, "forced: run succeeds");
    is_int(json_object_array_length(b), 3, "forced: three model calls");
    is_str(choice(req(b, 0)), "required", "forced: turn 1 forced");
    is_str(choice(req(b, 1)), "required", "forced: still forced after grep (no read yet)");
    is_str(choice(req(b, 2)), "(absent)", "forced: back to auto after the first successful read");
    has_str(tool_result(req(b, 1), "c1"), "app/config.py",
            "forced: grep result in the next request");
    has_str(tool_result(req(b, 2), "c2"),
            "def parse_config(text):", "forced: read output sent back");
    is_int(r.n_calls, 2, "forced: two calls recorded");
    is_str(r.calls[1].name, "read", "forced: second record is read");
    ok(r.calls[1].error == NULL && r.calls[1].turn == 2, "forced: read succeeded on turn 2");
    is_int(r.turns, 3, "forced: three turns");
    cn_agent_result_free(&r);
    cn_agent_options_free(&o);
    json_object_put(b);

    s = (cn_buf)CN_BUF_INIT;
    call(&s, NULL, "c1", "grep", GREP_PARSE, NULL);
    say(&s, "done");
    opts(&o, "bm25_search");
    o.first_turn_tool_choice = cn_strdup("read");
    o.force_first_turn_only = true;
    b = run(&s, &o, "find the parser", &r, &rc);
    is_str(choice(req(b, 0)), "fn:read", "first-only: a named tool is forced as a function choice");
    is_str(choice(req(b, 1)), "(absent)",
           "first-only: turn 2 not forced although nothing was read");
    cn_agent_result_free(&r);
    cn_agent_options_free(&o);
    json_object_put(b);
}

static void test_disallowed_and_invalid(void)
{
    cn_buf s = CN_BUF_INIT;
    cn_agent_options o;
    cn_agent_result r;
    json_object *b;
    int rc;

    call(&s, NULL, "c1", "find_callers", "{\"symbol\":\"parse_config\"}", "c2", "read",
         "{path: ", NULL);
    call(&s, NULL, "c3", "read", READ_CONFIG, NULL);
    say(&s, "done");
    opts(&o, "bm25_search");
    b = run(&s, &o, "q", &r, &rc);
    is_int(rc, 0, "refuse: run succeeds");
    has_str(tool_result(req(b, 1), "c1"),
            "Error: tool 'find_callers' is not offered in this session",
            "refuse: a tool not offered is rejected in its tool message");
    has_str(tool_result(req(b, 1), "c1"), "bm25_search, read, grep, glob",
            "refuse: message lists the offered tools");
    ok(r.n_calls == 3 && r.calls[0].error != NULL && r.calls[0].result == NULL,
       "refuse: recorded as an error, not run");
    has_str(tool_result(req(b, 1), "c2"), "Error: the arguments of read are not a JSON object",
            "invalid json: the parse error goes back to the model");
    ok(r.n_calls == 3 && r.calls[1].arguments == NULL, "invalid json: no arguments recorded");
    has_str(tool_result(req(b, 2), "c3"), "parse_config", "invalid json: the retry runs");
    ok(r.n_calls == 3 && r.calls[2].error == NULL, "invalid json: retry recorded ok");
    cn_agent_result_free(&r);
    cn_agent_options_free(&o);
    json_object_put(b);
}

static void test_skill_call(void)
{
    cn_buf s = CN_BUF_INIT;
    cn_agent_options o;
    cn_agent_result r;
    json_object *b, *res;
    int rc;

    call(&s, NULL, "s1", "bm25_search",
         "{\"query\":\"parse_config key value "
         "lines\",\"top_k\":\"1\",\"kinds\":[\"function\"],\"return_content\":false}",
         NULL);
    say(&s, "done");
    opts(&o, "bm25_search");
    b = run(&s, &o, "q", &r, &rc);
    is_int(rc, 0, "skill: run succeeds");
    res = json_tokener_parse(tool_result(req(b, 1), "s1"));
    ok(res != NULL, "skill: result is JSON in the tool message");
    {
        json_object *first =
            json_object_is_type(res, json_type_array) ? json_object_array_get_idx(res, 0) : NULL;
        is_str(mstr(first, "file"), "app/config.py", "skill: finds the file");
        is_int(json_object_get_int(member(first, "start_line")), 4, "skill: start line is 1-based");
        is_int(json_object_get_int(member(first, "end_line")), 10, "skill: end line is 1-based");
    }
    json_object_put(res);
    ok(r.n_calls == 1 && r.calls[0].resolved_arguments != NULL &&
           json_object_is_type(member(r.calls[0].resolved_arguments, "top_k"), json_type_int) &&
           json_object_get_int(member(r.calls[0].resolved_arguments, "top_k")) == 1,
       "skill: resolved arguments coerced (top_k 1)");
    cn_agent_result_free(&r);
    cn_agent_options_free(&o);
    json_object_put(b);
}

/* A tool result longer than max_tool_output reaches the model cut to it,
 * still JSON for a skill, with a note saying how to get the rest (issue
 * #22: results are bounded in the agent loop too). */
static void test_result_cap(void)
{
    cn_buf s = CN_BUF_INIT;
    cn_agent_options o;
    cn_agent_result r;
    json_object *b, *res = NULL;
    const char *t, *note;
    int rc;

    call(&s, NULL, "s1", "bm25_search", "{\"query\":\"config parse value key lines\",\"top_k\":50,\"return_content\":true}",
         "g1", "grep", "{\"pattern\":\".\"}", NULL);
    say(&s, "done");
    opts(&o, "bm25_search");
    o.max_tool_output = 400;
    b = run(&s, &o, "q", &r, &rc);
    is_int(rc, 0, "cap: run succeeds");
    t = tool_result(req(b, 1), "s1");
    note = strstr(t, "\n[result cut to fit 400 bytes:");
    ok(note != NULL && strstr(note, "offset=") != NULL, "cap: a skill result over max_tool_output says it was cut, with the next offset");
    if (note != NULL) {
        char *json = cn_strndup(t, (size_t)(note - t));
        res = json ? json_tokener_parse(json) : NULL;
        ok(json && strlen(json) <= 400 && res != NULL && json_object_is_type(res, json_type_array) &&
               json_object_array_length(res) >= 1,
           "cap: what is kept is at most 400 bytes of JSON, the first results");
        free(json);
    } else {
        diag("tool result: %.300s", t);
        ok(0, "cap: what is kept is at most 400 bytes of JSON, the first results");
    }
    json_object_put(res);
    t = tool_result(req(b, 1), "g1");
    ok(strlen(t) < 400 + 200 && strstr(t, "[output capped at 400 bytes") != NULL,
       "cap: a default tool's output is bounded by the same option");
    cn_agent_result_free(&r);
    cn_agent_options_free(&o);
    json_object_put(b);
}

static void test_max_turns_and_final(void)
{
    cn_buf s = CN_BUF_INIT;
    cn_agent_options o;
    cn_agent_result r;
    json_object *b;
    int rc;

    call(&s, NULL, "c1", "grep", GREP_PARSE, NULL);
    call(&s, "Let me check more.", "c2", "grep", GREP_PARSE, NULL);
    say(&s, "never asked for");
    opts(&o, "bm25_search");
    o.max_turns = 2;
    b = run(&s, &o, "q", &r, &rc);
    is_int(rc, 0, "max_turns: run succeeds");
    is_int(json_object_array_length(b), 2, "max_turns: exactly max_turns model calls");
    is_int(r.turns, 2, "max_turns: turns = max_turns");
    is_str(r.answer, "Let me check more.", "max_turns: last assistant text is the answer");
    is_str(r.answer_source, "max_turns", "max_turns: answer source");
    cn_agent_result_free(&r);
    cn_agent_options_free(&o);
    json_object_put(b);

    s = (cn_buf)CN_BUF_INIT;
    call(&s, NULL, "c1", "grep", GREP_PARSE, NULL);
    say(&s, "final words");
    opts(&o, "bm25_search");
    o.max_turns = 1;
    o.force_final_answer = true;
    b = run(&s, &o, "q", &r, &rc);
    is_int(json_object_array_length(b), 2, "final answer: one extra call");
    is_str(choice(req(b, 1)), "none", "final answer: tool_choice none");
    is_str(tool_names(req(b, 1)), "bm25_search,read,grep,glob", "final answer: tools still sent");
    is_str(mstr(last_message(req(b, 1)), "role"), "user", "final answer: asked by a user message");
    is_str(r.answer, "final words", "final answer: forced answer returned");
    is_str(r.answer_source, "forced_answer", "final answer: source");
    cn_agent_result_free(&r);
    cn_agent_options_free(&o);
    json_object_put(b);
}

static void test_contract_policies(void)
{
    cn_buf s = CN_BUF_INIT;
    cn_agent_options o;
    cn_agent_result r;
    json_object *b;
    int rc;

    /* Last-turn salvage. */
    call(&s, NULL, "c1", "read", READ_CONFIG, NULL);
    say(&s, CONTRACT);
    opts(&o, "bm25_search");
    o.max_turns = 2;
    o.force_localization_contract = true;
    b = run(&s, &o, "q", &r, &rc);
    is_int(rc, 0, "salvage: run succeeds");
    is_int(json_object_array_length(b), 2, "salvage: two calls");
    is_str(choice(req(b, 0)), "(absent)", "salvage: turn 1 free");
    is_str(choice(req(b, 1)), "none", "salvage: last turn tool_choice none");
    is_str(tool_names(req(b, 1)), "bm25_search,read,grep,glob", "salvage: tools still sent");
    has_str(mstr(last_message(req(b, 1)), "content"), "This is your last turn. Stop searching",
            "salvage: the instruction is the last message");
    has_str(mstr(last_message(req(b, 1)), "content"),
            "Files: ", "salvage: instruction shows the format");
    ok(r.has_contract && r.contract.files.len == 1 &&
           strcmp(r.contract.files.items[0], "app/config.py") == 0,
       "salvage: contract parsed");
    ok(r.has_contract && r.contract.n_locations == 1 && r.contract.locations[0].start_line == 4 &&
           r.contract.locations[0].end_line == 10,
       "salvage: location 4-10");
    {
        json_object *js = cn_agent_result_json(&r);
        json_object *files = member(member(js, "contract"), "files");
        is_str(json_object_get_string(json_object_array_get_idx(files, 0)), "app/config.py",
               "salvage: contract in the result JSON");
        is_str(mstr(js, "answer_source"), "assistant", "salvage: answer came from the model");
        json_object_put(js);
    }
    cn_agent_result_free(&r);
    cn_agent_options_free(&o);
    json_object_put(b);

    /* Missing contract: forced schema turn answered with the contract. */
    s = (cn_buf)CN_BUF_INIT;
    call(&s, NULL, "c1", "read", READ_CONFIG, NULL);
    say(&s, "It is in the config module.");
    say(&s, CONTRACT);
    opts(&o, "bm25_search");
    o.force_localization_contract = true;
    b = run(&s, &o, "q", &r, &rc);
    is_int(json_object_array_length(b), 3, "schema: one forced turn");
    is_str(choice(req(b, 2)), "none", "schema: forced turn without tool calls");
    has_str(mstr(last_message(req(b, 2)), "content"), "missing the required location block",
            "schema: asks for the block");
    is_str(r.answer, CONTRACT, "schema: forced answer kept");
    is_str(r.answer_source, "forced_schema", "schema: source");
    is_int(r.turns, 2, "schema: forced turn not counted as a turn");
    cn_agent_result_free(&r);
    cn_agent_options_free(&o);
    json_object_put(b);

    /* The forced turn fails too: fall back to the files read. */
    s = (cn_buf)CN_BUF_INIT;
    call(&s, NULL, "c1", "read", READ_CONFIG, NULL);
    say(&s, "It is in the config module.");
    say(&s, "Still prose.");
    opts(&o, "bm25_search");
    o.force_localization_contract = true;
    b = run(&s, &o, "q", &r, &rc);
    is_str(r.answer_source, "fallback_files", "fallback: source");
    is_str(r.answer, "Files: app/config.py\nSymbols: none\nLocations: none",
           "fallback: contract of the files read");
    ok(r.has_contract && r.contract.files.len == 1, "fallback: contract parsed");
    cn_agent_result_free(&r);
    cn_agent_options_free(&o);
    json_object_put(b);

    /* Review pass. */
    s = (cn_buf)CN_BUF_INIT;
    call(&s, NULL, "c1", "read", READ_CONFIG, NULL);
    say(&s, "draft");
    say(&s, "reviewed");
    opts(&o, "bm25_search");
    o.review_final_answer = true;
    b = run(&s, &o, "q", &r, &rc);
    is_int(json_object_array_length(b), 3, "review: one review turn");
    has_str(mstr(last_message(req(b, 2)), "content"), "check it against what the tools showed you",
            "review: the review request follows the draft");
    is_str(mstr(message(req(b, 2), n_messages(req(b, 2)) - 2), "content"), "draft",
           "review: draft kept in history");
    is_str(r.answer, "reviewed", "review: reviewed answer returned");
    is_int(r.turns, 3, "review: turns");
    cn_agent_result_free(&r);
    cn_agent_options_free(&o);
    json_object_put(b);
}

static void test_compaction(void)
{
    cn_buf s = CN_BUF_INIT;
    cn_agent_options o;
    cn_agent_result r;
    json_object *b;
    int rc;
    char trace[1200];
    json_object *lines, *ledger;

    call(&s, NULL, "c1", "grep", GREP_PARSE, NULL);
    call(&s, NULL, "c2", "read", READ_CONFIG, NULL);
    say(&s, "done");
    opts(&o, "bm25_search");
    o.compact_after_read = true;
    o.compact_keep_reads = 1;
    snprintf(trace, sizeof trace, "%s/compact.jsonl", tmpdir);
    o.trace_path = cn_strdup(trace);
    b = run(&s, &o, "where is parsing?", &r, &rc);
    is_int(rc, 0, "compact: run succeeds");
    is_int(n_messages(req(b, 1)), 4, "compact: before the read the history is whole");
    is_int(n_messages(req(b, 2)), 2,
           "compact: after the first read only system + one user message");
    has_str(mstr(message(req(b, 2), 1), "content"), "where is parsing?",
            "compact: the question kept");
    has_str(mstr(message(req(b, 2), 1), "content"), "- app/config.py",
            "compact: files read listed");
    has_str(mstr(message(req(b, 2), 1), "content"),
            "def parse_config(text):", "compact: last read kept verbatim");
    lines = read_jsonl(trace);
    ledger = json_object_array_get_idx(lines, json_object_array_length(lines) - 1);
    is_str(mstr(ledger, "event"), "context_ledger", "compact: ledger is the last trace line");
    is_int(json_object_get_int(member(member(ledger, "counts"), "consumed")), 1,
           "compact: the grep result was consumed");
    is_int(json_object_get_int(member(member(ledger, "counts"), "summarized")), 1,
           "compact: the read result was summarized");
    json_object_put(lines);
    cn_agent_result_free(&r);
    cn_agent_options_free(&o);
    json_object_put(b);
}

static void test_trim_and_seed(void)
{
    cn_buf s = CN_BUF_INIT;
    cn_agent_options o;
    cn_agent_result r;
    json_object *b;
    int rc;

    call(&s, NULL, "c1", "grep", GREP_PARSE, NULL);
    call(&s, NULL, "c2", "grep", GREP_PARSE, NULL);
    call(&s, NULL, "c3", "glob", "{\"pattern\":\"**/*.py\"}", NULL);
    say(&s, "done");
    opts(&o, "bm25_search");
    o.max_context_tokens = 1;
    o.keep_last = 2;
    b = run(&s, &o, "q", &r, &rc);
    is_int(rc, 0, "trim: run succeeds");
    is_int(json_object_array_length(b), 4, "trim: four calls");
    is_int(n_messages(req(b, 3)), 3, "trim: system + the last call group");
    is_str(mstr(message(req(b, 3), 0), "role"), "system", "trim: system kept");
    is_str(mstr(message(req(b, 3), 1), "role"), "assistant", "trim: the call kept with its result");
    is_str(mstr(message(req(b, 3), 2), "tool_call_id"), "c3", "trim: newest result kept");
    is_str(tool_result(req(b, 3), "c1"), "", "trim: oldest group gone");
    cn_agent_result_free(&r);
    cn_agent_options_free(&o);
    json_object_put(b);

    s = (cn_buf)CN_BUF_INIT;
    say(&s, "follow-up answer");
    opts(&o, "bm25_search");
    o.chat_history = json_tokener_parse("[{\"role\":\"user\",\"content\":\"earlier q\"},"
                                        "{\"role\":\"assistant\",\"content\":\"earlier a\"}]");
    b = run(&s, &o, "and now?", &r, &rc);
    is_int(n_messages(req(b, 0)), 4, "seed: system, two seeded, prompt");
    is_str(mstr(message(req(b, 0), 1), "content"), "earlier q", "seed: earlier question");
    is_str(mstr(message(req(b, 0), 2), "role"), "assistant", "seed: earlier answer role");
    is_str(mstr(message(req(b, 0), 3), "content"), "and now?", "seed: prompt last");
    cn_agent_result_free(&r);
    cn_agent_options_free(&o);
    json_object_put(b);
}

static void test_usage_and_trace(void)
{
    cn_buf s = CN_BUF_INIT;
    cn_agent_options o;
    cn_agent_result r;
    json_object *b, *lines, *js;
    char trace[1200];
    int rc;
    cn_buf kinds = CN_BUF_INIT;

    snprintf(trace, sizeof trace, "%s/trace.jsonl", tmpdir);
    call(&s, NULL, "c1", "read", READ_CONFIG, NULL);
    say(&s, "done");
    opts(&o, "bm25_search");
    o.trace_path = cn_strdup(trace);
    b = run(&s, &o, "q", &r, &rc);
    is_int(rc, 0, "usage: run succeeds");
    is_int(json_object_array_length(r.usage_calls), 2, "usage: one record per model call");
    {
        int64_t p = 0;
        for (size_t i = 0; i < json_object_array_length(r.usage_calls); i++)
            p += json_object_get_int64(
                member(json_object_array_get_idx(r.usage_calls, i), "prompt_tokens"));
        ok(p == r.prompt_tokens && p > 0, "usage: prompt total is the sum of the calls");
    }
    is_str(mstr(json_object_array_get_idx(r.usage_calls, 0), "finish_reason"), "tool_calls",
           "usage: finish reason recorded");
    lines = read_jsonl(trace);
    for (size_t i = 0; i < json_object_array_length(lines); i++)
        cn_buf_printf(&kinds, "%s%s", i ? "," : "",
                      mstr(json_object_array_get_idx(lines, i), "event"));
    is_str(
        kinds.data,
        "run_start,llm_call,llm_response,tool_call,read,llm_call,llm_response,final_answer,run_end,"
        "context_ledger",
        "trace: events in order");
    is_str(mstr(json_object_array_get_idx(lines, 3), "name"), "read", "trace: tool call named");
    is_str(mstr(json_object_array_get_idx(lines, 3), "event"), "tool_call",
           "trace: tool call event");
    is_str(mstr(json_object_array_get_idx(lines, 4), "path"), "app/config.py", "trace: read path");
    is_str(mstr(json_object_array_get_idx(lines, 4), "status"), "ok", "trace: read status");
    {
        json_object *ledger = json_object_array_get_idx(lines, json_object_array_length(lines) - 1);
        json_object *entry = json_object_array_get_idx(member(ledger, "entries"), 0);
        is_int(json_object_get_int(member(member(ledger, "counts"), "consumed")), 1,
               "ledger: the read result was consumed");
        is_str(mstr(entry, "source"), "read", "ledger: entry names the tool");
        is_str(mstr(entry, "ref"), "c1", "ledger: entry names the call");
        is_int(json_object_get_int(member(entry, "turn_changed")), 2,
               "ledger: consumed by the turn-2 call");
    }
    json_object_put(lines);
    cn_buf_free(&kinds);
    js = cn_agent_result_json(&r);
    is_int(json_object_array_length(member(js, "tool_calls")), 1, "json: tool calls listed");
    is_int(json_object_get_int(member(js, "turns")), 2, "json: turns");
    json_object_put(js);
    cn_agent_result_free(&r);
    cn_agent_options_free(&o);
    json_object_put(b);
}

static void test_compile_table(void)
{
    cn_buf s = CN_BUF_INIT;
    cn_agent_options o;
    cn_agent_result r;
    json_object *b;
    int rc;

    say(&s, "ok");
    opts(&o, NULL);
    o.compile_table =
        json_tokener_parse("{\"lookup\":[\"bm25_search\"],\"graph\":[\"find_callers\"]}");
    b = run(&s, &o, "please lookup the parser", &r, &rc);
    is_int(rc, 0, "table: run succeeds");
    is_str(tool_names(req(b, 0)), "bm25_search,read,grep,glob",
           "table: scenario narrows the skills");
    is_str(r.scenario, "lookup", "table: scenario recorded");
    cn_agent_result_free(&r);
    cn_agent_options_free(&o);
    json_object_put(b);

    s = (cn_buf)CN_BUF_INIT;
    say(&s, "ok");
    opts(&o, "bm25_search");
    o.compile_table = json_tokener_parse("{\"graph\":[\"find_callers\"]}");
    b = run(&s, &o, "graph question", &r, &rc);
    is_str(tool_names(req(b, 0)), "bm25_search,read,grep,glob",
           "table: never broadens the allow list");
    ok(r.warnings.len >= 1, "table: disjoint scenario warned");
    cn_agent_result_free(&r);
    cn_agent_options_free(&o);
    json_object_put(b);
}

/* A registry whose repository was never compiled: the resource guard takes
 * out every skill that needs an index, and says so; a skill asked for by
 * name that cannot run is an error naming what it lacks. */
static void test_resource_guard(void)
{
    cn_buf s = CN_BUF_INIT;
    cn_agent_options o;
    cn_agent_result r;
    json_object *b;
    cn_registry *saved = reg, *bare = NULL;
    char skills[1300], empty[1300];
    const char *build = getenv("CN_BUILDDIR");
    int rc;

    snprintf(skills, sizeof skills, "%s/_skills", build && *build ? build : ".");
    snprintf(empty, sizeof empty, "%s/empty_cache", tmpdir);
    mkdir(empty, 0755);
    if (!ok(cn_registry_new(&bare) == 0 && cn_registry_add_root(bare, skills, "build") == 0 &&
                cn_registry_set_repo_cache(bare, repo, empty) == 0,
            "guard: registry without an index")) {
        cn_registry_free(bare);
        return;
    }
    reg = bare;
    say(&s, "ok");
    opts(&o, "bm25_search");
    b = run(&s, &o, "q", &r, &rc);
    is_int(rc, CN_ENOCONTEXT, "guard: a skill asked for by name without its index is an error");
    has_str(cn_error_last()->message, "skill bm25_search needs the bm25 index: the repository is not compiled",
            "guard: naming the skill and the index");
    is_int((int)json_object_array_length(b), 0, "guard: and the model is not asked");
    cn_agent_result_free(&r);
    cn_agent_options_free(&o);
    json_object_put(b);

    say(&s, "ok");
    opts(&o, NULL);
    b = run(&s, &o, "q", &r, &rc);
    is_int(rc, 0, "guard: run succeeds");
    ok(strstr(tool_names(req(b, 0)), "bm25_search") == NULL && strstr(tool_names(req(b, 0)), "read,grep,glob"),
       "guard: the skill needing bm25 is not offered, the tools are");
    ok(r.warnings.len >= 1, "guard: warning in the result");
    {
        const char *w = "(no warning for bm25_search)";
        for (size_t i = 0; i < r.warnings.len; i++)
            if (strstr(r.warnings.items[i], "skill bm25_search needs the bm25 index")) w = r.warnings.items[i];
        has_str(w, "bm25_search", "guard: warning names the skill");
        has_str(mstr(message(req(b, 0), 0), "content"), w, "guard: warning in the system prompt");
    }
    cn_agent_result_free(&r);
    cn_agent_options_free(&o);
    json_object_put(b);
    reg = saved;
    cn_registry_free(bare);
}

static void test_route_context(void)
{
    cn_buf s = CN_BUF_INIT;
    cn_agent_options o;
    cn_agent_result r;
    json_object *b, *lines;
    char trace[1200];
    const char *user;
    bool offered = false;
    int rc;

    snprintf(trace, sizeof trace, "%s/route.jsonl", tmpdir);
    say(&s, "ok");
    opts(&o, "bm25_search,lsp_route");
    o.enable_lsp_route_context = true;
    o.lsp_route_query_fallback = true;
    o.trace_path = cn_strdup(trace);
    b = run(&s, &o, "Where is parse_config called from start?", &r, &rc);
    is_int(rc, 0, "route: run succeeds");
    user = mstr(last_message(req(b, 0)), "content");
    ok(user && strncmp(user, "Where is parse_config called from start?\n\n", 42) == 0,
       "route: the hint follows the question in the user message");
    has_str(user, "app/config.py:4-10", "route: the hint names the route node with 1-based lines");
    ok(r.route_fingerprint && strlen(r.route_fingerprint) == 16, "route: fingerprint recorded");
    lines = read_jsonl(trace);
    for (size_t i = 0; i < json_object_array_length(lines); i++) {
        json_object *e = json_object_array_get_idx(lines, i);
        if (strcmp(mstr(e, "event"), "lsp_route_context") == 0 && mstr(e, "route_fingerprint") &&
            r.route_fingerprint && strcmp(mstr(e, "route_fingerprint"), r.route_fingerprint) == 0)
            offered = strcmp(mstr(e, "status"), "offered") == 0;
    }
    ok(offered, "route: trace records the offered context with its fingerprint");
    json_object_put(lines);
    cn_agent_result_free(&r);
    cn_agent_options_free(&o);
    json_object_put(b);

    /* Seeds from the question itself, no fallback. */
    s = (cn_buf)CN_BUF_INIT;
    say(&s, "ok");
    opts(&o, "bm25_search,lsp_route");
    o.enable_lsp_route_context = true;
    b = run(&s, &o, "Why does `parse_config` drop blank keys?", &r, &rc);
    has_str(mstr(last_message(req(b, 0)), "content"), "app/config.py:4-10",
            "route: a seed named in the question routes without fallback");
    ok(r.route_fingerprint != NULL, "route: fingerprint for the seeded route");
    cn_agent_result_free(&r);
    cn_agent_options_free(&o);
    json_object_put(b);

    /* Nothing to seed from and no fallback: the question goes unchanged. */
    s = (cn_buf)CN_BUF_INIT;
    say(&s, "ok");
    opts(&o, "bm25_search,lsp_route");
    o.enable_lsp_route_context = true;
    b = run(&s, &o, "why is it slow", &r, &rc);
    is_int(rc, 0, "route: skipped route is not an error");
    is_str(mstr(last_message(req(b, 0)), "content"), "why is it slow",
           "route: no hint without seeds");
    ok(r.route_fingerprint == NULL, "route: no fingerprint without a route");
    cn_agent_result_free(&r);
    cn_agent_options_free(&o);
    json_object_put(b);
}

/* A package under `dir` that is bm25_search renamed to `id`. */
static int fake_package(const char *dir, const char *id)
{
    const char *src = getenv("CN_SRCDIR");
    char path[1400];
    char *text = NULL, *at;
    cn_buf out = CN_BUF_INIT;
    int rc;

    mkdir(dir, 0755);
    snprintf(path, sizeof path, "%s/skills/bm25_search/config.yaml", src && *src ? src : "..");
    if (cn_file_read(path, 0, &text, NULL) < 0 ||
        (at = strstr(text, "skill_id: bm25_search")) == NULL) {
        free(text);
        return -1;
    }
    cn_buf_append(&out, text, (size_t)(at - text));
    cn_buf_printf(&out, "skill_id: %s%s", id, at + strlen("skill_id: bm25_search"));
    snprintf(path, sizeof path, "%s/config.yaml", dir);
    rc = write_file(path, out.data);
    snprintf(path, sizeof path, "%s/skill.md", dir);
    if (rc == 0) rc = write_file(path, "Renamed copy for a namespace test.\n");
    free(text);
    cn_buf_free(&out);
    return rc;
}

/* Skills and default tools share one namespace. */
static void test_namespace(void)
{
    cn_buf s = CN_BUF_INIT;
    cn_agent_options o;
    cn_agent_result r;
    json_object *b;
    cn_registry *saved = reg, *other = NULL;
    char dir[1200];
    static const char *const only_read[] = {"read"};
    char cache[1200];
    int rc;

    snprintf(cache, sizeof cache, "%s/cache", tmpdir);

    snprintf(dir, sizeof dir, "%s/pkg_grep", tmpdir);
    if (!ok(fake_package(dir, "grep") == 0, "namespace: package named grep written")) return;

    /* The registry reserves the default tool names: the package is refused
     * there and grep is offered once, as the tool. */
    if (!ok(cn_registry_new(&other) == 0 && cn_registry_add_package(other, dir, "test") <= 0 &&
                cn_registry_set_repo_cache(other, repo, cache) == 0,
            "namespace: registry with the package"))
        goto out;
    reg = other;
    say(&s, "ok");
    opts(&o, NULL);
    b = run(&s, &o, "q", &r, &rc);
    is_int(rc, 0, "namespace: run succeeds");
    is_str(tool_names(req(b, 0)), "read,grep,glob",
           "namespace: grep offered once, as the default tool");
    cn_agent_result_free(&r);
    cn_agent_options_free(&o);
    json_object_put(b);

    /* A registry that reserves only read lets the package in: the run
     * refuses to offer two tools named grep, before any model call. */
    reg = saved;
    cn_registry_free(other);
    other = NULL;
    if (!ok(cn_registry_new(&other) == 0 && cn_registry_set_tool_names(other, only_read, 1) == 0 &&
                cn_registry_add_package(other, dir, "test") == 0 &&
                cn_registry_set_repo_cache(other, repo, cache) == 0,
            "namespace: registry reserving only read"))
        goto out;
    reg = other;
    s = (cn_buf)CN_BUF_INIT;
    say(&s, "never");
    opts(&o, NULL);
    b = run(&s, &o, "q", &r, &rc);
    is_int(rc, CN_ECONFLICT, "namespace: a skill named like a default tool is an error");
    has_str(cn_error_last()->message, "share one namespace", "namespace: the error says why");
    is_int(json_object_array_length(b), 0, "namespace: no model call made");
    cn_agent_result_free(&r);
    cn_agent_options_free(&o);
    json_object_put(b);
out:
    reg = saved;
    cn_registry_free(other);
}

static void test_model_error(void)
{
    cn_buf s = CN_BUF_INIT;
    cn_agent_options o;
    cn_agent_result r;
    json_object *b;
    int rc;

    call(&s, NULL, "c1", "grep", GREP_PARSE, NULL);
    cn_buf_puts(&s, "{\"endpoint\":\"chat\",\"status\":400,\"body\":{\"error\":{\"message\":"
                    "\"context too long\","
                    "\"type\":\"invalid_request_error\"}}}\n");
    opts(&o, "bm25_search");
    b = run(&s, &o, "q", &r, &rc);
    is_int(rc, CN_EINVAL, "model error: the client's error is returned");
    has_str(cn_error_last()->message, "agent turn 2", "model error: message names the turn");
    has_str(cn_error_last()->message, "context too long", "model error: quotes the server");
    is_int(r.n_calls, 1, "model error: the calls made so far are kept");
    ok(r.messages != NULL && json_object_array_length(r.messages) == 4,
       "model error: history kept");
    cn_agent_result_free(&r);
    cn_agent_options_free(&o);
    json_object_put(b);
}

int main(void)
{
    const char *base = getenv("TMPDIR");

    fake_bin = getenv("CN_FAKE_OPENAI");
    if (fake_bin == NULL || *fake_bin == '\0') fake_bin = "tests/llm/fake_openai";
    if (access(fake_bin, X_OK) != 0) {
        printf("Bail out! fake_openai not found at %s (set CN_FAKE_OPENAI)\n", fake_bin);
        return 1;
    }
    snprintf(tmpdir, sizeof tmpdir, "%s/cn_test_agent_XXXXXX", base && *base ? base : "/tmp");
    if (mkdtemp(tmpdir) == NULL) {
        printf("Bail out! mkdtemp: %s\n", strerror(errno));
        return 1;
    }
    atexit(cleanup_all);
    signal(SIGPIPE, SIG_IGN);
    unsetenv("CODENIB_MODEL");
    unsetenv("http_proxy");
    unsetenv("HTTP_PROXY");
    if (setup_repo() != 0) {
        printf("1..0 # SKIP the python backend or the build tree's skills are not available\n");
        cn_registry_free(reg);
        return 0;
    }
    test_tools_offered();
    test_forced_choice();
    test_disallowed_and_invalid();
    test_skill_call();
    test_result_cap();
    test_max_turns_and_final();
    test_contract_policies();
    test_compaction();
    test_trim_and_seed();
    test_usage_and_trace();
    test_compile_table();
    test_resource_guard();
    test_route_context();
    test_namespace();
    test_model_error();
    is_int(violations, 0, "no request broke the protocol");
    cn_registry_free(reg);
    return tap_done();
}
