/* SPDX-License-Identifier: Apache-2.0 */
/* The model client against a real loopback server (tests/llm/fake_openai):
 * chat, tools and structured output passed through, configuration from
 * options and the environment, retries of transient failures only,
 * timeouts, malformed answers, embeddings and rerank answer shapes, the
 * usage log, the host's model services, and the fake server's own protocol
 * checks.  Every request the client sends is checked by the server; the
 * test fails if any of them broke the protocol. */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <math.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>

#include "llm/cn_llm.h"
#include "plugin/cn_host.h"
#include "util/cn_util.h"
#include "tap.h"

/* ---- the fake server ---------------------------------------------------- */

#define MAX_FAKES 64

typedef struct fake {
    pid_t pid;
    int port;
    char dir[1100];
    char log[1200];
    char url[64];          /* http://127.0.0.1:PORT/v1 */
    int expect_clean;      /* every request must be free of violations */
} fake;

static const char *fake_bin;
static char tmpdir[1024];
static int fake_seq;
static fake *live[MAX_FAKES];
static int bad_exits;          /* fake servers that did not exit 0 */
static int client_violations;  /* protocol violations in what the client sent */

static void forget(fake *f)
{
    for (int i = 0; i < MAX_FAKES; i++)
        if (live[i] == f) live[i] = NULL;
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path);
}

/* Runs on every exit path: no server outlives the test. */
static void cleanup_all(void)
{
    for (int i = 0; i < MAX_FAKES; i++) {
        if (live[i] != NULL && live[i]->pid > 0) {
            kill(live[i]->pid, SIGKILL);
            waitpid(live[i]->pid, NULL, 0);
            live[i]->pid = 0;
        }
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

/* Starts fake_openai with the script text and extra arguments (NULL-ended,
 * may be NULL) and waits until it listens. */
static int fake_start_args(fake *f, const char *script, const char *const *extra)
{
    char port_file[1200], script_file[1200], text[32];
    char *argv[16];
    int argc = 0;

    memset(f, 0, sizeof *f);
    f->expect_clean = 1;
    snprintf(f->dir, sizeof f->dir, "%s/f%d", tmpdir, ++fake_seq);
    mkdir(f->dir, 0755);
    snprintf(port_file, sizeof port_file, "%s/port", f->dir);
    snprintf(script_file, sizeof script_file, "%s/script.jsonl", f->dir);
    snprintf(f->log, sizeof f->log, "%s/log.jsonl", f->dir);
    if (write_file(script_file, script ? script : "") != 0) return -1;
    argv[argc++] = (char *)fake_bin;
    argv[argc++] = "--port-file";
    argv[argc++] = port_file;
    argv[argc++] = "--script";
    argv[argc++] = script_file;
    argv[argc++] = "--log";
    argv[argc++] = f->log;
    for (int i = 0; extra != NULL && extra[i] != NULL && argc < 15; i++)
        argv[argc++] = (char *)extra[i];
    argv[argc] = NULL;
    fflush(stdout);
    f->pid = fork();
    if (f->pid < 0) return -1;
    if (f->pid == 0) {
        execv(fake_bin, argv);
        _exit(127);
    }
    for (int i = 0; i < MAX_FAKES; i++)
        if (live[i] == NULL) {
            live[i] = f;
            break;
        }
    /* Bounded wait for the port file (the server writes it when ready). */
    for (int tries = 0; tries < 1000; tries++) {
        FILE *pf = fopen(port_file, "r");
        if (pf != NULL) {
            int ok = fgets(text, sizeof text, pf) != NULL;
            fclose(pf);
            if (ok && (f->port = atoi(text)) > 0) break;
        }
        if (waitpid(f->pid, NULL, WNOHANG) == f->pid) {
            f->pid = 0;
            forget(f);
            return -1;
        }
        usleep(10000);
    }
    if (f->port <= 0) return -1;
    snprintf(f->url, sizeof f->url, "http://127.0.0.1:%d/v1", f->port);
    return 0;
}

static int fake_start(fake *f, const char *script)
{
    return fake_start_args(f, script, NULL);
}

static int fake_start_dim(fake *f, const char *script, int dim)
{
    char dims[16];
    const char *extra[] = {"--dim", dims, NULL};
    snprintf(dims, sizeof dims, "%d", dim);
    return fake_start_args(f, script, extra);
}

static json_object *fake_log(const fake *f)
{
    json_object *arr = json_object_new_array();
    FILE *in = fopen(f->log, "r");
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

static size_t fake_requests(const fake *f)
{
    json_object *log = fake_log(f);
    size_t n = json_object_array_length(log);
    json_object_put(log);
    return n;
}

static void fake_stop(fake *f)
{
    int status = 0;
    json_object *log;

    if (f->pid > 0) {
        kill(f->pid, SIGTERM);
        if (waitpid(f->pid, &status, 0) != f->pid || !WIFEXITED(status) ||
            WEXITSTATUS(status) != 0)
            bad_exits++;
        f->pid = 0;
        forget(f);
    }
    if (!f->expect_clean) return;
    log = fake_log(f);
    for (size_t i = 0; i < json_object_array_length(log); i++) {
        json_object *e = json_object_array_get_idx(log, i), *v;
        if (json_object_object_get_ex(e, "violations", &v) && json_object_array_length(v) > 0) {
            client_violations++;
            diag("protocol violation in %s: %s", f->log, json_object_to_json_string(e));
        }
    }
    json_object_put(log);
}

/* ---- small helpers ------------------------------------------------------ */

/* o[k1][k2]... (NULL-terminated path of member names). */
static json_object *jget(json_object *o, ...)
{
    va_list ap;
    const char *k;

    va_start(ap, o);
    while (o != NULL && (k = va_arg(ap, const char *)) != NULL) {
        json_object *v = NULL;
        if (!json_object_object_get_ex(o, k, &v)) v = NULL;
        o = v;
    }
    va_end(ap);
    return o;
}

#define JSTR(...) (json_object_get_string(jget(__VA_ARGS__, (const char *)NULL)))
#define JINT(...) (json_object_get_int64(jget(__VA_ARGS__, (const char *)NULL)))
#define JHAS(...) (jget(__VA_ARGS__, (const char *)NULL) != NULL)

static json_object *entry(json_object *log, size_t i)
{
    return json_object_array_get_idx(log, i);
}

static cn_model *open_cfg(cn_llm_role role, const char *fmt, ...) CN_PRINTF(2, 3);

static cn_model *open_cfg(cn_llm_role role, const char *fmt, ...)
{
    char cfg[2048];
    cn_model *m = NULL;
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(cfg, sizeof cfg, fmt, ap);
    va_end(ap);
    if (cn_llm_open(cfg, role, &m) < 0) diag("open %s: %s", cfg, cn_error_last()->message);
    return m;
}

static json_object *user_request(const char *text)
{
    json_object *req = json_object_new_object(), *msgs = json_object_new_array();
    json_object *msg = json_object_new_object();

    json_object_object_add(msg, "role", json_object_new_string("user"));
    json_object_object_add(msg, "content", json_object_new_string(text));
    json_object_array_add(msgs, msg);
    json_object_object_add(req, "messages", msgs);
    return req;
}

/* Chats "hello" and returns the code; *content gets the answer (malloc'd). */
static int chat_text(cn_model *m, char **content)
{
    json_object *req = user_request("hello"), *msg = NULL;
    int rc = cn_llm_chat(m, req, &msg);

    json_object_put(req);
    if (content) *content = rc == 0 ? cn_strdup(JSTR(msg, "content")) : NULL;
    json_object_put(msg);
    return rc;
}

static cn_llm_call last_call(cn_model *m)
{
    cn_llm_call *calls = NULL, c;
    size_t n = 0;

    memset(&c, 0, sizeof c);
    if (cn_llm_calls(m, &calls, &n) == 0 && n > 0) c = calls[n - 1];
    free(calls);
    return c;
}

static json_object *parse(const char *text)
{
    return json_tokener_parse(text);
}

static void clear_env(void)
{
    static const char *const vars[] = {
        "OPENAI_BASE_URL", "OPENAI_API_KEY", "CODENIB_BASE_URL", "CODENIB_API_KEY",
        "CODENIB_MODEL", "CODENIB_EMBED_MODEL", "CODENIB_RERANK_MODEL",
        "CODENIB_RERANK_BASE_URL", "CODENIB_RERANK_API_KEY", "TEST_LLM_KEY", "http_proxy",
        "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"};
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) unsetenv(vars[i]);
}

/* ---- chat ---------------------------------------------------------------- */

static void test_chat_round_trip(void)
{
    fake f;
    cn_model *m, *anon;
    json_object *req, *msg = NULL, *log;
    char *content = NULL;
    cn_llm_call c;

    if (!ok(fake_start(&f, "{\"endpoint\":\"chat\",\"body\":{\"id\":\"c1\",\"object\":"
                           "\"chat.completion\",\"model\":\"m-chat\",\"choices\":[{\"index\":0,"
                           "\"message\":{\"role\":\"assistant\",\"content\":\"Hello there\"},"
                           "\"finish_reason\":\"stop\"}],\"usage\":{\"prompt_tokens\":11,"
                           "\"completion_tokens\":7,\"total_tokens\":18,"
                           "\"prompt_tokens_details\":{\"cached_tokens\":5}}}}\n"
                           "{\"endpoint\":\"chat\",\"body\":{\"role\":\"assistant\","
                           "\"content\":\"second\"}}\n") == 0,
            "chat: fake server started"))
        return;
    m = open_cfg(CN_LLM_CHAT, "{\"base_url\":\"%s\",\"api_key\":\"sk-test\",\"model\":\"m-chat\"}",
                 f.url);
    anon = open_cfg(CN_LLM_CHAT, "{\"base_url\":\"%s\",\"model\":\"m-two\"}", f.url);
    ok(m != NULL && anon != NULL, "chat: handles open");
    if (m == NULL || anon == NULL) goto out;

    req = user_request("Say hello");
    is_int(cn_llm_chat(m, req, &msg), 0, "chat: round trip succeeds");
    ok(!json_object_object_get_ex(req, "model", NULL), "chat: the caller's request is not modified");
    json_object_put(req);
    is_str(JSTR(msg, "role"), "assistant", "chat: role of the answer");
    is_str(JSTR(msg, "content"), "Hello there", "chat: content of the answer");
    is_str(JSTR(msg, "finish_reason"), "stop", "chat: finish_reason added");
    is_int(JINT(msg, "usage", "prompt_tokens"), 11, "chat: usage.prompt_tokens");
    is_int(JINT(msg, "usage", "completion_tokens"), 7, "chat: usage.completion_tokens");
    is_int(JINT(msg, "usage", "cached_tokens"), 5, "chat: usage.cached_tokens from "
                                                   "prompt_tokens_details");
    json_object_put(msg);
    c = last_call(m);
    is_str(c.endpoint, "chat/completions", "chat: call recorded with its endpoint");
    ok(c.ok && c.attempts == 1 && c.http_status == 200, "chat: one attempt, HTTP 200, ok");
    ok(c.prompt_tokens == 11 && c.completion_tokens == 7 && c.cached_tokens == 5,
       "chat: the usage log has prompt, completion and cached tokens");

    is_int(chat_text(anon, &content), 0, "chat: without a key");
    is_str(content, "second", "chat: the wrapped scripted message comes back");
    free(content);
    c = last_call(anon);
    ok(c.prompt_tokens > 0 && c.cached_tokens == 0, "chat: wrapped completion usage recorded");

    /* A request naming its own model keeps it. */
    req = user_request("x");
    json_object_object_add(req, "model", json_object_new_string("explicit-model"));
    msg = NULL;
    is_int(cn_llm_chat(anon, req, &msg), 0, "chat: request with its own model");
    is_str(JSTR(msg, "content"), "ok", "chat: unscripted answer is \"ok\"");
    json_object_put(msg);
    json_object_put(req);

    log = fake_log(&f);
    is_int(json_object_array_length(log), 3, "chat: three requests reached the server");
    is_str(JSTR(entry(log, 0), "path"), "/v1/chat/completions", "chat: path joined onto /v1");
    is_str(JSTR(entry(log, 0), "headers", "authorization"), "Bearer sk-test",
           "chat: Authorization: Bearer <key> sent");
    is_str(JSTR(entry(log, 0), "headers", "content-type"), "application/json",
           "chat: Content-Type application/json");
    is_str(JSTR(entry(log, 0), "body", "model"), "m-chat", "chat: configured model sent");
    is_str(JSTR(entry(log, 0), "body", "messages"), "[ { \"role\": \"user\", \"content\": \"Say hello\" } ]",
           "chat: messages sent as given");
    ok(!JHAS(entry(log, 1), "headers", "authorization"), "chat: no Authorization without a key");
    is_str(JSTR(entry(log, 1), "body", "model"), "m-two", "chat: second handle's model sent");
    is_str(JSTR(entry(log, 2), "body", "model"), "explicit-model",
           "chat: the request's own model is not replaced");
    json_object_put(log);
out:
    cn_llm_close(m);
    cn_llm_close(anon);
    fake_stop(&f);
}

static const char *TOOL_CALLS =
    "[{\"id\":\"call_1\",\"type\":\"function\",\"function\":{\"name\":\"grep\","
    "\"arguments\":\"{\\\"pattern\\\":\\\"def main\\\",\\\"path\\\":\\\"src\\\"}\"}},"
    "{\"id\":\"call_2\",\"type\":\"function\",\"function\":{\"name\":\"read\","
    "\"arguments\":\"{\\\"path\\\":\\\"a.py\\\"}\"}}]";

static json_object *tool_request(void)
{
    json_object *req = user_request("find main");
    json_object *tools = parse(
        "[{\"type\":\"function\",\"function\":{\"name\":\"grep\",\"description\":\"search\","
        "\"parameters\":{\"type\":\"object\",\"properties\":{\"pattern\":{\"type\":\"string\"}},"
        "\"required\":[\"pattern\"]}}},{\"type\":\"function\",\"function\":{\"name\":\"read\","
        "\"parameters\":{\"type\":\"object\",\"properties\":{\"path\":{\"type\":\"string\"}}}}}]");
    json_object_object_add(req, "tools", tools);
    json_object_object_add(req, "tool_choice",
                           parse("{\"type\":\"function\",\"function\":{\"name\":\"grep\"}}"));
    return req;
}

static void test_tool_calls(void)
{
    fake f;
    char script[2048];
    cn_model *m;
    json_object *req, *msg = NULL, *want = parse(TOOL_CALLS), *log, *msgs, *am, *tm;

    snprintf(script, sizeof script,
             "{\"endpoint\":\"chat\",\"body\":{\"role\":\"assistant\",\"content\":null,"
             "\"tool_calls\":%s}}\n", TOOL_CALLS);
    if (!ok(fake_start(&f, script) == 0, "tools: fake server started")) {
        json_object_put(want);
        return;
    }
    m = open_cfg(CN_LLM_CHAT, "{\"base_url\":\"%s\",\"model\":\"m\"}", f.url);
    req = tool_request();
    is_int(cn_llm_chat(m, req, &msg), 0, "tools: chat with tools and tool_choice");
    is_str(JSTR(msg, "finish_reason"), "tool_calls", "tools: finish_reason tool_calls");
    ok(json_object_equal(jget(msg, "tool_calls", (const char *)NULL), want),
       "tools: tool_calls passed through unchanged");
    is_str(JSTR(json_object_array_get_idx(jget(msg, "tool_calls", (const char *)NULL), 0),
                "function", "arguments"),
           "{\"pattern\":\"def main\",\"path\":\"src\"}", "tools: arguments string kept verbatim");

    /* The follow-up turn: the assistant's tool calls and the tool answers. */
    msgs = jget(req, "messages", (const char *)NULL);
    am = json_object_new_object();
    json_object_object_add(am, "role", json_object_new_string("assistant"));
    json_object_object_add(am, "content", NULL);
    json_object_object_add(am, "tool_calls", json_object_get(jget(msg, "tool_calls", (const char *)NULL)));
    json_object_array_add(msgs, am);
    for (int i = 1; i <= 2; i++) {
        char id[32];
        snprintf(id, sizeof id, "call_%d", i);
        tm = json_object_new_object();
        json_object_object_add(tm, "role", json_object_new_string("tool"));
        json_object_object_add(tm, "tool_call_id", json_object_new_string(id));
        json_object_object_add(tm, "content", json_object_new_string("src/main.py:1: def main"));
        json_object_array_add(msgs, tm);
    }
    json_object_object_add(req, "tool_choice", json_object_new_string("auto"));
    json_object_put(msg);
    msg = NULL;
    is_int(cn_llm_chat(m, req, &msg), 0, "tools: follow-up turn with tool results");
    is_str(JSTR(msg, "content"), "ok", "tools: follow-up answered");
    json_object_put(msg);

    log = fake_log(&f);
    is_int(json_object_array_length(log), 2, "tools: two requests");
    ok(json_object_equal(jget(entry(log, 0), "body", "tools", (const char *)NULL),
                         jget(req, "tools", (const char *)NULL)),
       "tools: tools sent as given");
    is_str(JSTR(entry(log, 0), "body", "tool_choice", "function", "name"), "grep",
           "tools: tool_choice sent as given");
    is_int(json_object_array_length(jget(entry(log, 1), "body", "messages", (const char *)NULL)), 4,
           "tools: follow-up carries the tool messages");
    json_object_put(log);
    json_object_put(req);
    json_object_put(want);
    cn_llm_close(m);
    fake_stop(&f);
}

static void test_response_format(void)
{
    fake f;
    cn_model *m;
    json_object *req, *msg = NULL, *rf, *log, *content;

    if (!ok(fake_start(&f, "{\"endpoint\":\"chat\",\"body\":{\"role\":\"assistant\",\"content\":"
                           "\"{\\\"files\\\":[\\\"a.py\\\"]}\"}}\n") == 0,
            "response_format: fake server started"))
        return;
    m = open_cfg(CN_LLM_CHAT, "{\"base_url\":\"%s\"}", f.url);
    req = user_request("where?");
    rf = parse("{\"type\":\"json_schema\",\"json_schema\":{\"name\":\"contract\",\"strict\":true,"
               "\"schema\":{\"type\":\"object\",\"properties\":{\"files\":{\"type\":\"array\","
               "\"items\":{\"type\":\"string\"}}},\"required\":[\"files\"],"
               "\"additionalProperties\":false}}}");
    json_object_object_add(req, "response_format", rf);
    json_object_object_add(req, "temperature", json_object_new_double(0.0));
    is_int(cn_llm_chat(m, req, &msg), 0, "response_format: chat with a JSON schema");
    content = parse(JSTR(msg, "content"));
    is_str(JSTR(json_object_array_get_idx(jget(content, "files", (const char *)NULL), 0)),
           "a.py", "response_format: structured content comes back as text");
    log = fake_log(&f);
    ok(json_object_equal(jget(entry(log, 0), "body", "response_format", (const char *)NULL), rf),
       "response_format: sent exactly as given");
    is_str(JSTR(entry(log, 0), "body", "model"), "gpt-4o-mini",
           "response_format: default chat model without options or env");
    json_object_put(log);
    json_object_put(content);
    json_object_put(msg);
    json_object_put(req);
    cn_llm_close(m);
    fake_stop(&f);
}

/* ---- configuration ------------------------------------------------------- */

static const char *sent_key(const fake *f, size_t i, char *buf, size_t cap)
{
    json_object *log = fake_log(f);
    const char *s = JSTR(entry(log, i), "headers", "authorization");
    snprintf(buf, cap, "%s", s ? s : "(none)");
    json_object_put(log);
    return buf;
}

static void test_env_and_options(void)
{
    fake f;
    cn_model *m = NULL;
    char buf[128], other[64];
    json_object *log;

    if (!ok(fake_start(&f, NULL) == 0, "env: fake server started")) return;
    clear_env();

    /* Defaults. */
    is_int(cn_llm_open(NULL, CN_LLM_CHAT, &m), 0, "env: open with no configuration");
    is_str(cn_llm_base_url(m), "https://api.openai.com/v1", "env: default base URL");
    is_str(cn_llm_model_name(m), "gpt-4o-mini", "env: default chat model");
    cn_llm_close(m);
    is_int(cn_llm_open("{}", CN_LLM_EMBED, &m), 0, "env: embed handle");
    is_str(cn_llm_model_name(m), "text-embedding-3-small", "env: default embedding model");
    cn_llm_close(m);
    is_int(cn_llm_open(NULL, CN_LLM_RERANK, &m), 0, "env: rerank handle");
    is_str(cn_llm_model_name(m), "", "env: rerank has no default model");
    cn_llm_close(m);

    /* OPENAI_* alone. */
    setenv("OPENAI_BASE_URL", f.url, 1);
    setenv("OPENAI_API_KEY", "k-openai", 1);
    setenv("CODENIB_MODEL", "m-env", 1);
    m = open_cfg(CN_LLM_CHAT, "{\"backoff_ms\":5}");
    is_str(cn_llm_base_url(m), f.url, "env: OPENAI_BASE_URL used");
    is_str(cn_llm_model_name(m), "m-env", "env: CODENIB_MODEL used");
    is_int(chat_text(m, NULL), 0, "env: chat through the environment's endpoint");
    is_str(sent_key(&f, 0, buf, sizeof buf), "Bearer k-openai", "env: OPENAI_API_KEY sent");
    cn_llm_close(m);

    /* CODENIB_* wins over OPENAI_*. */
    snprintf(other, sizeof other, "http://127.0.0.1:1/v1");
    setenv("OPENAI_BASE_URL", other, 1);
    setenv("CODENIB_BASE_URL", f.url, 1);
    setenv("CODENIB_API_KEY", "k-codenib", 1);
    m = open_cfg(CN_LLM_CHAT, "{}");
    is_str(cn_llm_base_url(m), f.url, "env: CODENIB_BASE_URL wins over OPENAI_BASE_URL");
    is_int(chat_text(m, NULL), 0, "env: chat through CODENIB_BASE_URL");
    is_str(sent_key(&f, 1, buf, sizeof buf), "Bearer k-codenib",
           "env: CODENIB_API_KEY wins over OPENAI_API_KEY");
    cn_llm_close(m);

    /* Options win over everything. */
    m = open_cfg(CN_LLM_CHAT, "{\"base_url\":\"%s/\",\"api_key\":\"k-option\",\"model\":\"m-opt\"}",
                 f.url);
    is_str(cn_llm_base_url(m), f.url, "env: base_url option wins (trailing / dropped)");
    is_str(cn_llm_model_name(m), "m-opt", "env: model option wins over CODENIB_MODEL");
    is_int(chat_text(m, NULL), 0, "env: chat with options");
    is_str(sent_key(&f, 2, buf, sizeof buf), "Bearer k-option", "env: api_key option wins");
    cn_llm_close(m);

    setenv("TEST_LLM_KEY", "k-named", 1);
    m = open_cfg(CN_LLM_CHAT, "{\"api_key_env\":\"TEST_LLM_KEY\"}");
    is_int(chat_text(m, NULL), 0, "env: chat with api_key_env");
    is_str(sent_key(&f, 3, buf, sizeof buf), "Bearer k-named", "env: api_key_env names the key");
    cn_llm_close(m);

    m = NULL;
    is_int(cn_llm_open("{\"api_key_env\":\"TEST_LLM_UNSET_VAR\"}", CN_LLM_CHAT, &m), CN_EINVAL,
           "env: api_key_env naming an unset variable fails");
    has_str(cn_error_last()->message, "TEST_LLM_UNSET_VAR", "env: ... and names the variable");
    ok(m == NULL, "env: no handle on failure");

    /* Embedding and rerank roles. */
    setenv("CODENIB_EMBED_MODEL", "emb-env", 1);
    setenv("CODENIB_RERANK_MODEL", "rr-env", 1);
    m = open_cfg(CN_LLM_EMBED, "{}");
    is_str(cn_llm_model_name(m), "emb-env", "env: CODENIB_EMBED_MODEL for embeddings");
    cn_llm_close(m);
    m = open_cfg(CN_LLM_CHAT, "{\"role\":\"embed\"}");
    is_str(cn_llm_model_name(m), "emb-env", "env: the role field selects the embed defaults");
    cn_llm_close(m);
    setenv("CODENIB_RERANK_BASE_URL", "http://127.0.0.1:9/rr", 1);
    m = open_cfg(CN_LLM_RERANK, "{}");
    is_str(cn_llm_model_name(m), "rr-env", "env: CODENIB_RERANK_MODEL for rerank");
    is_str(cn_llm_base_url(m), "http://127.0.0.1:9/rr", "env: CODENIB_RERANK_BASE_URL for rerank");
    cn_llm_close(m);
    unsetenv("CODENIB_RERANK_BASE_URL");
    m = open_cfg(CN_LLM_RERANK, "{}");
    is_str(cn_llm_base_url(m), f.url, "env: rerank falls back to CODENIB_BASE_URL");
    cn_llm_close(m);

    /* Path joining: without /v1 the server sees /chat/completions. */
    m = open_cfg(CN_LLM_CHAT, "{\"base_url\":\"http://127.0.0.1:%d\"}", f.port);
    is_int(chat_text(m, NULL), 0, "env: base URL without /v1");
    cn_llm_close(m);
    log = fake_log(&f);
    is_str(JSTR(entry(log, 4), "path"), "/chat/completions", "env: path joined without /v1");
    is_str(JSTR(entry(log, 2), "path"), "/v1/chat/completions",
           "env: trailing slash does not double the /");
    json_object_put(log);

    /* A rerank endpoint of its own never receives the shared key. */
    {
        const char *docs[] = {"a b", "c"};
        double sc[2];
        setenv("CODENIB_RERANK_BASE_URL", f.url, 1);
        m = open_cfg(CN_LLM_RERANK, "{}");
        is_int(cn_llm_rerank(m, "a", docs, 2, sc), 0, "env: rerank at CODENIB_RERANK_BASE_URL");
        cn_llm_close(m);
        is_str(sent_key(&f, 5, buf, sizeof buf), "(none)",
               "env: CODENIB_API_KEY is not sent to CODENIB_RERANK_BASE_URL");
        setenv("CODENIB_RERANK_API_KEY", "k-rr", 1);
        m = open_cfg(CN_LLM_RERANK, "{}");
        is_int(cn_llm_rerank(m, "a", docs, 2, sc), 0, "env: rerank with its own key");
        cn_llm_close(m);
        is_str(sent_key(&f, 6, buf, sizeof buf), "Bearer k-rr",
               "env: CODENIB_RERANK_API_KEY sent to the rerank endpoint");
    }

    /* A key read from a file keeps its newline; it must not reach the header. */
    m = open_cfg(CN_LLM_CHAT, "{\"base_url\":\"%s\",\"api_key\":\" k-nl\\n\"}", f.url);
    is_int(chat_text(m, NULL), 0, "env: chat with a key ending in a newline");
    is_str(sent_key(&f, 7, buf, sizeof buf), "Bearer k-nl", "env: key trimmed");
    cn_llm_close(m);
    clear_env();
    fake_stop(&f);
}

static void expect_open_error(const char *cfg, int code, const char *needle, const char *what)
{
    cn_model *m = NULL;
    char desc[256];

    snprintf(desc, sizeof desc, "config: %s fails", what);
    is_int(cn_llm_open(cfg, CN_LLM_CHAT, &m), code, desc);
    snprintf(desc, sizeof desc, "config: %s names the problem", what);
    has_str(cn_error_last()->message, needle, desc);
    cn_llm_close(m);
}

static void test_config_errors(void)
{
    char *u;

    expect_open_error("{\"timeout_ms\":\"fast\"", CN_EPARSE, "not valid JSON", "invalid JSON");
    expect_open_error("[1]", CN_EINVAL, "JSON object", "a non-object");
    expect_open_error("{\"timeout_ms\":\"fast\"}", CN_ETYPE, "\"timeout_ms\" must be an integer",
                      "a string timeout");
    expect_open_error("{\"max_retries\":99}", CN_EINVAL, "\"max_retries\" is 99", "max_retries 99");
    expect_open_error("{\"base_url\":\"ftp://x\"}", CN_EINVAL, "http:// or https://", "ftp URL");
    expect_open_error("{\"model\":3}", CN_ETYPE, "\"model\" must be a string", "numeric model");
    expect_open_error("{\"role\":\"judge\"}", CN_EINVAL, "\"role\" is \"judge\"", "unknown role");
    expect_open_error("{\"api_key\":\"ab\\r\\nX-Evil: 1\"}", CN_EINVAL, "control character",
                      "a key with CR LF inside");

    u = cn_llm__url("http://h/v1/", "/chat/completions");
    is_str(u, "http://h/v1/chat/completions", "url: one / between base and endpoint");
    free(u);
    u = cn_llm__url("http://h", "embeddings");
    is_str(u, "http://h/embeddings", "url: base without path");
    free(u);
}

static void test_retry_delays(void)
{
    unsigned seed = 42;
    long d;
    int in_range = 1;

    is_int(cn_llm__retry_delay_ms(500, 1, 2, &seed), 2000, "delay: Retry-After seconds honoured");
    is_int(cn_llm__retry_delay_ms(500, 1, 3600, &seed), CN_LLM_RETRY_AFTER_MAX_S * 1000,
           "delay: Retry-After capped");
    for (int i = 0; i < 200; i++) {
        d = cn_llm__retry_delay_ms(500, 1, 0, &seed);
        if (d < 250 || d > 500) in_range = 0;
        d = cn_llm__retry_delay_ms(500, 3, 0, &seed);
        if (d < 1000 || d > 2000) in_range = 0;
        d = cn_llm__retry_delay_ms(500, 30, 0, &seed);
        if (d < CN_LLM_BACKOFF_MAX_MS / 2 || d > CN_LLM_BACKOFF_MAX_MS) in_range = 0;
    }
    ok(in_range, "delay: jittered exponential backoff within [b*2^(n-1)/2, b*2^(n-1)], capped");
    is_int(cn_llm__retry_delay_ms(0, 2, 0, &seed), 0, "delay: backoff_ms 0 means no wait");
}

/* ---- retries and failures ------------------------------------------------ */

static void test_retries(void)
{
    fake f;
    cn_model *m;
    char *content = NULL;
    cn_llm_call c;
    int rc;

    if (!ok(fake_start(&f,
                       "{\"endpoint\":\"chat\",\"status\":429,\"headers\":{\"Retry-After\":\"1\"},"
                       "\"body\":{\"error\":{\"message\":\"Rate limit reached\"}}}\n"
                       "{\"endpoint\":\"chat\",\"body\":{\"role\":\"assistant\",\"content\":\"after 429\"}}\n"
                       "{\"endpoint\":\"chat\",\"status\":500,\"body\":{\"error\":{\"message\":\"boom\"}}}\n"
                       "{\"endpoint\":\"chat\",\"status\":502,\"raw\":\"<html>bad gateway</html>\"}\n"
                       "{\"endpoint\":\"chat\",\"body\":{\"role\":\"assistant\",\"content\":\"after 5xx\"}}\n"
                       "{\"endpoint\":\"chat\",\"status\":500,\"body\":{\"error\":{\"message\":\"down 1\"}}}\n"
                       "{\"endpoint\":\"chat\",\"status\":503,\"body\":{\"error\":{\"message\":\"down 2\"}}}\n"
                       "{\"endpoint\":\"chat\",\"status\":500,\"body\":{\"error\":{\"message\":\"down for good\"}}}\n"
                       "{\"endpoint\":\"chat\",\"status\":400,\"body\":{\"error\":{\"message\":\"Invalid 'messages[0]': bad role\",\"type\":\"invalid_request_error\"}}}\n"
                       "{\"endpoint\":\"chat\",\"status\":401,\"body\":{\"error\":{\"message\":\"Incorrect API key provided\"}}}\n"
                       "{\"endpoint\":\"chat\",\"drop\":true}\n"
                       "{\"endpoint\":\"chat\",\"body\":{\"role\":\"assistant\",\"content\":\"after drop\"}}\n"
                       "{\"endpoint\":\"chat\",\"status\":503,\"body\":{\"error\":{\"message\":\"no retries\"}}}\n"
                       "{\"endpoint\":\"chat\",\"status\":404,\"raw\":\"\"}\n") == 0,
            "retries: fake server started"))
        return;
    m = open_cfg(CN_LLM_CHAT, "{\"base_url\":\"%s\",\"backoff_ms\":10,\"timeout_ms\":10000}", f.url);

    is_int(chat_text(m, &content), 0, "retries: 429 then success");
    is_str(content, "after 429", "retries: the answer after the 429");
    free(content);
    c = last_call(m);
    is_int(c.attempts, 2, "retries: 429 took 2 attempts");
    ok(c.seconds >= 1.0 && c.seconds < 10.0, "retries: waited the Retry-After second (bounded)");
    if (c.seconds < 1.0 || c.seconds >= 10.0) diag("seconds = %f", c.seconds);
    is_int(fake_requests(&f), 2, "retries: the server saw 2 requests");

    is_int(chat_text(m, &content), 0, "retries: 500, 502 then success");
    is_str(content, "after 5xx", "retries: the answer after two 5xx");
    free(content);
    c = last_call(m);
    ok(c.attempts == 3 && c.ok && c.http_status == 200, "retries: 3 attempts, last HTTP 200");

    rc = chat_text(m, NULL);
    is_int(rc, CN_ENETWORK, "retries: 500 three times fails with CN_ENETWORK");
    has_str(cn_error_last()->message, "HTTP 500", "retries: ... naming the status");
    has_str(cn_error_last()->message, "chat/completions", "retries: ... naming the endpoint");
    has_str(cn_error_last()->message, "after 3 attempts", "retries: ... and the attempts");
    has_str(cn_error_last()->message, "\"down for good\"", "retries: ... quoting the server");
    c = last_call(m);
    ok(c.attempts == 3 && !c.ok && c.http_status == 500, "retries: 1 + 2 attempts recorded");
    is_int(fake_requests(&f), 8, "retries: the server saw 1+2 requests for the failure");

    rc = chat_text(m, NULL);
    is_int(rc, CN_EINVAL, "retries: 400 fails with CN_EINVAL");
    has_str(cn_error_last()->message, "server said \"Invalid 'messages[0]': bad role\"",
            "retries: 400 quotes the server's message");
    is_int(last_call(m).attempts, 1, "retries: 400 is not retried");
    is_int(fake_requests(&f), 9, "retries: one request for the 400");

    rc = chat_text(m, NULL);
    is_int(rc, CN_EDENIED, "retries: 401 fails with CN_EDENIED");
    has_str(cn_error_last()->message, "Incorrect API key provided", "retries: 401 quoted");
    has_str(cn_error_last()->message, "API key", "retries: 401 says to check the key");
    is_int(last_call(m).attempts, 1, "retries: 401 is not retried");

    is_int(chat_text(m, &content), 0, "retries: dropped connection then success");
    is_str(content, "after drop", "retries: the answer after the drop");
    free(content);
    is_int(last_call(m).attempts, 2, "retries: the drop was retried once");
    cn_llm_close(m);

    m = open_cfg(CN_LLM_CHAT, "{\"base_url\":\"%s\",\"max_retries\":0}", f.url);
    is_int(chat_text(m, NULL), CN_ENETWORK, "retries: max_retries 0 gives up at once on 503");
    is_int(last_call(m).attempts, 1, "retries: max_retries 0 means one attempt");
    has_str(cn_error_last()->message, "after 1 attempt:", "retries: ... and says so");
    is_int(chat_text(m, NULL), CN_ENOTFOUND, "retries: 404 fails with CN_ENOTFOUND");
    has_str(cn_error_last()->message, "HTTP 404 from POST http://127.0.0.1:",
            "retries: 404 names the status and the URL");
    has_str(cn_error_last()->message, "with an empty body; check the base URL and the model",
            "retries: 404 without a body says what to check");
    cn_llm_close(m);
    is_int(fake_requests(&f), 14, "retries: every attempt reached the server");
    fake_stop(&f);
}

static void test_timeout(void)
{
    fake f;
    cn_model *m;
    cn_llm_call c;
    char *content = NULL;
    json_object *log;

    if (!ok(fake_start(&f, "{\"endpoint\":\"chat\",\"delay_ms\":5000,\"body\":{\"role\":"
                           "\"assistant\",\"content\":\"late\"}}\n"
                           "{\"endpoint\":\"chat\",\"delay_ms\":5000,\"body\":{\"role\":"
                           "\"assistant\",\"content\":\"late again\"}}\n") == 0,
            "timeout: fake server started"))
        return;
    m = open_cfg(CN_LLM_CHAT, "{\"base_url\":\"%s\",\"timeout_ms\":300,\"max_retries\":1,"
                 "\"backoff_ms\":10}", f.url);
    is_int(chat_text(m, NULL), CN_ETIMEOUT, "timeout: a server that never answers times out");
    has_str(cn_error_last()->message, "timed out", "timeout: ... says so");
    has_str(cn_error_last()->message, "timeout_ms", "timeout: ... and names the setting");
    c = last_call(m);
    is_int(c.attempts, 2, "timeout: timed-out attempts are retried");
    ok(c.seconds < 4.0, "timeout: gave up long before the server would answer");
    if (c.seconds >= 4.0) diag("seconds = %f", c.seconds);
    is_int(chat_text(m, &content), 0, "timeout: the next call is answered");
    is_str(content, "ok", "timeout: ... by the unscripted reply");
    free(content);
    log = fake_log(&f);
    is_int(json_object_array_length(log), 3, "timeout: 2 timed-out attempts + 1 answered");
    json_object_put(log);
    cn_llm_close(m);
    fake_stop(&f);
}

static void test_malformed(void)
{
    fake f;
    cn_model *m;
    float *v = NULL;
    size_t dim = 0;
    const char *texts[] = {"a"};

    if (!ok(fake_start(&f, "{\"endpoint\":\"chat\",\"raw\":\"this is not json{\"}\n"
                           "{\"endpoint\":\"chat\",\"raw\":\"{\\\"id\\\":\\\"x\\\"}\"}\n"
                           "{\"endpoint\":\"chat\",\"body\":{\"choices\":[]}}\n"
                           "{\"endpoint\":\"chat\",\"body\":{\"choices\":[{\"index\":0,\"message\":\"hi\"}]}}\n"
                           "{\"endpoint\":\"chat\",\"body\":{\"error\":{\"message\":\"model overloaded\"}}}\n"
                           "{\"endpoint\":\"chat\",\"raw\":\"\"}\n"
                           "{\"endpoint\":\"embeddings\",\"raw\":\"[1,2\"}\n"
                           "{\"endpoint\":\"embeddings\",\"body\":{\"data\":[{\"embedding\":\"AAAA\"}]}}\n") == 0,
            "malformed: fake server started"))
        return;
    m = open_cfg(CN_LLM_CHAT, "{\"base_url\":\"%s\",\"backoff_ms\":1}", f.url);
    is_int(chat_text(m, NULL), CN_EPARSE, "malformed: invalid JSON body -> CN_EPARSE");
    has_str(cn_error_last()->message, "chat/completions", "malformed: ... names the endpoint");
    has_str(cn_error_last()->message, "not valid JSON", "malformed: ... says what is wrong");
    is_int(chat_text(m, NULL), CN_EPARSE, "malformed: no choices member -> CN_EPARSE");
    has_str(cn_error_last()->message, "has no \"choices\"", "malformed: ... says choices is missing");
    is_int(chat_text(m, NULL), CN_EPARSE, "malformed: empty choices -> CN_EPARSE");
    has_str(cn_error_last()->message, "no choices", "malformed: ... says so");
    is_int(chat_text(m, NULL), CN_EPARSE, "malformed: message not an object -> CN_EPARSE");
    has_str(cn_error_last()->message, "choices[0].message", "malformed: ... names the member");
    is_int(chat_text(m, NULL), CN_ENETWORK, "malformed: 200 carrying an error object fails");
    has_str(cn_error_last()->message, "\"model overloaded\"", "malformed: ... quoting it");
    is_int(chat_text(m, NULL), CN_EPARSE, "malformed: empty body -> CN_EPARSE");
    has_str(cn_error_last()->message, "empty body", "malformed: ... says so");
    is_int(last_call(m).ok, 0, "malformed: the failed call is in the usage log");
    {
        json_object *req = user_request("x"), *msg = NULL;
        json_object_object_add(req, "stream", json_object_new_boolean(1));
        is_int(cn_llm_chat(m, req, &msg), CN_EINVAL, "malformed: stream: true refused");
        has_str(cn_error_last()->message, "\"stream\": true is not supported",
                "malformed: ... saying why");
        json_object_put(req);
    }
    cn_llm_close(m);

    m = open_cfg(CN_LLM_EMBED, "{\"base_url\":\"%s\"}", f.url);
    is_int(cn_llm_embed(m, texts, 1, 0, &v, &dim), CN_EPARSE, "malformed: truncated embeddings JSON");
    has_str(cn_error_last()->message, "embeddings response", "malformed: ... names the endpoint");
    is_int(cn_llm_embed(m, texts, 1, 0, &v, &dim), CN_EPARSE, "malformed: base64 embedding refused");
    has_str(cn_error_last()->message, "no \"embedding\" array", "malformed: ... says why");
    ok(v == NULL && dim == 0, "malformed: no vectors on failure");
    cn_llm_close(m);
    fake_stop(&f);
}

static void test_refused(void)
{
    struct sockaddr_in a;
    socklen_t len = sizeof a;
    int fd = socket(AF_INET, SOCK_STREAM, 0), port = 0;
    cn_model *m;
    cn_llm_call c;

    /* A bound socket that does not listen: connecting is refused, and no
     * other process can take the port meanwhile. */
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd >= 0 && bind(fd, (struct sockaddr *)&a, sizeof a) == 0 &&
        getsockname(fd, (struct sockaddr *)&a, &len) == 0)
        port = ntohs(a.sin_port);
    if (!ok(port > 0, "refused: a port with nothing listening")) {
        if (fd >= 0) close(fd);
        return;
    }
    m = open_cfg(CN_LLM_CHAT, "{\"base_url\":\"http://127.0.0.1:%d/v1\",\"backoff_ms\":5}", port);
    is_int(chat_text(m, NULL), CN_ENETWORK, "refused: connection refused -> CN_ENETWORK");
    has_str(cn_error_last()->message, "after 3 attempts", "refused: ... after the retries");
    has_str(cn_error_last()->message, "chat/completions", "refused: ... naming the endpoint");
    c = last_call(m);
    ok(c.attempts == 3 && c.http_status == 0 && !c.ok, "refused: 3 attempts, no HTTP status");
    ok(c.seconds < 5.0, "refused: fails fast with a small backoff");
    cn_llm_close(m);
    close(fd);
}

/* ---- embeddings ---------------------------------------------------------- */

static double dot(const float *a, const float *b, size_t n)
{
    double s = 0;
    for (size_t i = 0; i < n; i++) s += (double)a[i] * (double)b[i];
    return s;
}

static void test_embeddings(void)
{
    fake f;
    cn_model *m;
    const char *three[] = {"alpha beta", "beta gamma", "alpha beta"};
    const char *two[] = {"first", "second"};
    float *v = NULL;
    size_t dim = 0;
    json_object *log;
    cn_llm_call c;

    if (!ok(fake_start(&f,
                       "{\"endpoint\":\"embeddings\",\"body\":{\"data\":[{\"index\":1,\"embedding\":[0.0,1.0]},"
                       "{\"index\":0,\"embedding\":[1.0,0.5]}],\"usage\":{\"prompt_tokens\":9,\"total_tokens\":9}}}\n"
                       "{\"endpoint\":\"embeddings\",\"body\":{\"data\":[{\"index\":0,\"embedding\":[1.0,0.0]}]}}\n"
                       "{\"endpoint\":\"embeddings\",\"body\":{\"data\":[{\"index\":0,\"embedding\":[1.0,0.0]},"
                       "{\"index\":1,\"embedding\":[1.0,0.0,0.0]}]}}\n"
                       "{\"endpoint\":\"embeddings\",\"body\":{\"data\":[{\"index\":0,\"embedding\":[1.0,0.0]},"
                       "{\"index\":1,\"embedding\":[0.0,1.0]}]}}\n"
                       "{\"endpoint\":\"embeddings\",\"body\":{\"data\":[{\"index\":0,\"embedding\":[1]},"
                       "{\"index\":0,\"embedding\":[2]}]}}\n") == 0,
            "embed: fake server started"))
        return;
    setenv("CODENIB_EMBED_MODEL", "emb-small", 1);
    m = open_cfg(CN_LLM_EMBED, "{\"base_url\":\"%s\",\"api_key\":\"ek\"}", f.url);
    unsetenv("CODENIB_EMBED_MODEL");

    is_int(cn_llm_embed(m, two, 2, 0, &v, &dim), 0, "embed: rows out of order");
    is_int(dim, 2, "embed: width of the rows");
    ok(v && v[0] == 1.0f && v[1] == 0.5f && v[2] == 0.0f && v[3] == 1.0f,
       "embed: rows sorted by index into input order");
    free(v);
    c = last_call(m);
    ok(c.ok && c.prompt_tokens == 9 && c.completion_tokens == -1,
       "embed: usage prompt_tokens recorded, no completion tokens");

    is_int(cn_llm_embed(m, two, 2, 0, &v, &dim), CN_EPARSE, "embed: count mismatch fails");
    has_str(cn_error_last()->message, "1 embeddings for 2 inputs", "embed: ... saying the counts");
    is_int(cn_llm_embed(m, two, 2, 0, &v, &dim), CN_EPARSE, "embed: unequal rows fail");
    has_str(cn_error_last()->message, "embedding 1 has 3 dimensions, embedding 0 has 2",
            "embed: ... saying which rows");
    is_int(cn_llm_embed(m, two, 2, 4, &v, &dim), CN_EPARSE, "embed: dimensions mismatch fails");
    has_str(cn_error_last()->message, "2 dimensions, 4 were asked for", "embed: ... saying so");
    is_int(cn_llm_embed(m, two, 2, 0, &v, &dim), CN_EPARSE, "embed: duplicate index fails");
    has_str(cn_error_last()->message, "index 0 twice", "embed: ... saying which");
    ok(v == NULL, "embed: no vectors after failures");

    /* The server's deterministic vectors. */
    is_int(cn_llm_embed(m, three, 3, 0, &v, &dim), 0, "embed: default vectors");
    is_int(dim, 8, "embed: server's default width");
    if (v != NULL && dim == 8) {
        ok(memcmp(v, v + 16, 8 * sizeof(float)) == 0, "embed: equal texts, equal vectors");
        ok(fabs(dot(v, v, 8) - 1.0) < 1e-5 && fabs(dot(v + 8, v + 8, 8) - 1.0) < 1e-5,
           "embed: rows are unit length");
        ok(dot(v, v + 8, 8) > 0.0 && dot(v, v + 8, 8) < 1.0 - 1e-6,
           "embed: texts sharing a word are similar, not equal");
    }
    free(v);
    v = NULL;
    is_int(cn_llm_embed(m, three, 3, 4, &v, &dim), 0, "embed: dimensions 4");
    is_int(dim, 4, "embed: the server honoured dimensions");
    free(v);
    v = NULL;
    is_int(cn_llm_embed(m, three, 0, 0, &v, &dim), 0, "embed: zero texts is a no-op");
    ok(v == NULL && dim == 0, "embed: ... with no vectors");

    log = fake_log(&f);
    is_int(json_object_array_length(log), 7, "embed: seven requests (none for zero texts)");
    is_str(JSTR(entry(log, 0), "path"), "/v1/embeddings", "embed: path");
    is_str(JSTR(entry(log, 0), "body", "model"), "emb-small", "embed: CODENIB_EMBED_MODEL sent");
    is_str(JSTR(entry(log, 0), "headers", "authorization"), "Bearer ek", "embed: key sent");
    is_str(JSTR(entry(log, 0), "body", "input"), "[ \"first\", \"second\" ]", "embed: inputs sent in order");
    ok(!JHAS(entry(log, 0), "body", "dimensions"), "embed: no dimensions unless asked");
    is_int(JINT(entry(log, 6), "body", "dimensions"), 4, "embed: dimensions request field");
    json_object_put(log);
    cn_llm_close(m);
    fake_stop(&f);
}

/* ---- rerank -------------------------------------------------------------- */

static void test_rerank(void)
{
    fake f;
    cn_model *m, *anon;
    const char *docs[] = {"parse the config", "unrelated text", "config file parse"};
    double s[3];
    json_object *log;

    if (!ok(fake_start(&f,
                       "{\"endpoint\":\"rerank\",\"body\":[{\"index\":1,\"score\":0.9},{\"index\":0,\"score\":0.1}]}\n"
                       "{\"endpoint\":\"rerank\",\"body\":{\"id\":\"r\",\"results\":[{\"index\":2,\"relevance_score\":0.75},"
                       "{\"index\":0,\"relevance_score\":0.25},{\"index\":1,\"relevance_score\":0.5}],"
                       "\"meta\":{\"billed_units\":{\"search_units\":1}}}}\n"
                       "{\"endpoint\":\"rerank\",\"body\":{\"scores\":[1,2,3]}}\n"
                       "{\"endpoint\":\"rerank\",\"body\":[{\"index\":7,\"score\":0.9}]}\n") == 0,
            "rerank: fake server started"))
        return;
    m = open_cfg(CN_LLM_RERANK, "{\"base_url\":\"%s\",\"model\":\"rr-model\"}", f.url);
    anon = open_cfg(CN_LLM_RERANK, "{\"base_url\":\"%s\"}", f.url);

    is_int(cn_llm_rerank(m, "parse config file", docs, 3, s), 0, "rerank: TEI shape");
    ok(s[0] == 0.1 && s[1] == 0.9 && isinf(s[2]) && s[2] < 0,
       "rerank: TEI scores by index, missing document -INFINITY");
    is_int(cn_llm_rerank(m, "parse config file", docs, 3, s), 0, "rerank: Cohere/Jina shape");
    ok(s[0] == 0.25 && s[1] == 0.5 && s[2] == 0.75, "rerank: relevance_score by index");
    is_int(cn_llm_rerank(m, "q", docs, 3, s), CN_EPARSE, "rerank: unknown shape fails");
    has_str(cn_error_last()->message, "neither a list", "rerank: ... naming the shapes");
    is_int(cn_llm_rerank(m, "q", docs, 3, s), CN_EPARSE, "rerank: index out of range fails");
    has_str(cn_error_last()->message, "index 7", "rerank: ... naming the index");

    is_int(cn_llm_rerank(anon, "parse config file", docs, 3, s), 0, "rerank: server's scores");
    ok(fabs(s[0] - 2.0 / 3.0) < 1e-9 && s[1] == 0.0 && s[2] == 1.0,
       "rerank: word-overlap scores 2/3, 0, 1");

    log = fake_log(&f);
    is_int(json_object_array_length(log), 5, "rerank: five requests");
    is_str(JSTR(entry(log, 0), "path"), "/v1/rerank", "rerank: path");
    is_str(JSTR(entry(log, 0), "body", "model"), "rr-model", "rerank: model sent");
    is_str(JSTR(entry(log, 0), "body", "query"), "parse config file", "rerank: query sent");
    is_str(JSTR(entry(log, 0), "body", "documents"),
           "[ \"parse the config\", \"unrelated text\", \"config file parse\" ]",
           "rerank: documents sent");
    ok(json_object_equal(jget(entry(log, 0), "body", "documents", (const char *)NULL),
                         jget(entry(log, 0), "body", "texts", (const char *)NULL)),
       "rerank: texts sent too (TEI)");
    is_int(JINT(entry(log, 0), "body", "top_n"), 3, "rerank: top_n is the document count");
    ok(!JHAS(entry(log, 4), "body", "model"), "rerank: no model member without a model");
    json_object_put(log);
    cn_llm_close(m);
    cn_llm_close(anon);
    fake_stop(&f);
}

/* ---- usage log and concurrency ------------------------------------------- */

typedef struct worker {
    cn_model *m;
    int failures;
} worker;

static void *chat_worker(void *arg)
{
    worker *w = arg;
    for (int i = 0; i < 3; i++) {
        char *content = NULL;
        if (chat_text(w->m, &content) != 0 || content == NULL || strcmp(content, "ok") != 0)
            w->failures++;
        free(content);
    }
    return NULL;
}

static void test_usage_and_threads(void)
{
    fake f;
    cn_model *m, *e;
    cn_llm_call *calls = NULL;
    size_t n = 0, nchat = 0, nemb = 0, nrr = 0;
    pthread_t t[4];
    worker w[4];
    const char *texts[] = {"one", "two"};
    float *v = NULL;
    size_t dim;
    double s[2];
    int failures = 0, all_ok = 1;

    if (!ok(fake_start(&f, "{\"endpoint\":\"chat\",\"status\":500,\"body\":{}}\n") == 0,
            "usage: fake server started"))
        return;
    m = open_cfg(CN_LLM_CHAT, "{\"base_url\":\"%s\",\"backoff_ms\":1}", f.url);
    e = open_cfg(CN_LLM_EMBED, "{\"base_url\":\"%s\"}", f.url);
    for (int i = 0; i < 4; i++) {
        w[i].m = m;
        w[i].failures = 0;
        pthread_create(&t[i], NULL, chat_worker, &w[i]);
    }
    for (int i = 0; i < 4; i++) {
        pthread_join(t[i], NULL);
        failures += w[i].failures;
    }
    is_int(failures, 0, "threads: 12 concurrent chats on one handle all succeed");
    is_int(cn_llm_embed(e, texts, 2, 0, &v, &dim), 0, "usage: an embedding call");
    free(v);
    is_int(cn_llm_rerank(e, "one", texts, 2, s), 0, "usage: a rerank call on the same handle");

    is_int(cn_llm_calls(m, &calls, &n), 0, "usage: calls snapshot");
    is_int(n, 12, "usage: 12 calls on the chat handle");
    for (size_t i = 0; i < n; i++) {
        if (strcmp(calls[i].endpoint, "chat/completions") == 0) nchat++;
        if (!calls[i].ok || calls[i].prompt_tokens <= 0 || calls[i].cached_tokens != 0)
            all_ok = 0;
    }
    is_int(nchat, 12, "usage: all of them chat/completions");
    ok(all_ok, "usage: every call ok with usage recorded");
    {
        int attempts = 0;
        for (size_t i = 0; i < n; i++) attempts += calls[i].attempts;
        is_int(attempts, 13, "usage: the one retried call shows 2 attempts");
    }
    free(calls);
    calls = NULL;
    is_int(cn_llm_calls(e, &calls, &n), 0, "usage: snapshot of the second handle");
    for (size_t i = 0; i < n; i++) {
        if (strcmp(calls[i].endpoint, "embeddings") == 0) nemb++;
        if (strcmp(calls[i].endpoint, "rerank") == 0) nrr++;
    }
    ok(n == 2 && nemb == 1 && nrr == 1, "usage: one embeddings and one rerank call");
    free(calls);
    is_int(fake_requests(&f), 15, "usage: 13 chat requests (one retried) + 2");
    cn_llm_close(m);
    cn_llm_close(e);
    fake_stop(&f);
}

/* ---- host services ------------------------------------------------------- */

static void test_host_services(void)
{
    fake f;
    const cn_model_services *ms = cn_host_model_services();
    cn_host host;
    cn_host_data data = {"llmtest", NULL, NULL, NULL};
    json_object *defaults = json_object_new_object(), *ans;
    struct cn_model *m = NULL, *bad = NULL;
    cn_error err = {0, ""};
    char cfg[256], *resp = NULL;
    const char *texts[] = {"alpha", "beta"};
    float *v = NULL;
    size_t dim = 0;
    double s[2];

    data.defaults = defaults;
    cn_host_init(&host, &data);
    ok(ms != NULL && ms->struct_size == sizeof(cn_model_services), "host: model services table");
    ok(host.model == ms, "host: the host table carries the model services");
    if (ms == NULL || !ok(fake_start_dim(&f, "{\"endpoint\":\"chat\",\"status\":400,\"body\":"
                                             "{\"error\":{\"message\":\"context too long\"}}}\n",
                                         6) == 0,
                          "host: fake server started")) {
        json_object_put(defaults);
        return;
    }
    snprintf(cfg, sizeof cfg, "{\"base_url\":\"%s\",\"model\":\"svc-model\",\"backoff_ms\":1}", f.url);
    is_int(ms->open(&host, cfg, &m, &err), 0, "host: open");
    is_str(ms->name(m), "svc-model", "host: name");

    is_int(ms->chat(&host, m, "{\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}", &resp,
                    &err),
           CN_EINVAL, "host: chat failure returns the code");
    is_int(err.code, CN_EINVAL, "host: err.code filled");
    has_str(err.message, "context too long", "host: err.message quotes the server");
    ok(resp == NULL, "host: no response on failure");

    err.code = 0;
    is_int(ms->chat(&host, m, "{\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}", &resp,
                    &err),
           0, "host: chat");
    ans = resp ? json_tokener_parse(resp) : NULL;
    is_str(JSTR(ans, "content"), "ok", "host: response JSON is the message");
    is_str(JSTR(ans, "finish_reason"), "stop", "host: ... with finish_reason");
    ok(JINT(ans, "usage", "prompt_tokens") > 0 && JHAS(ans, "usage", "cached_tokens"),
       "host: ... and usage");
    json_object_put(ans);
    host.free(resp);
    resp = NULL;

    is_int(ms->chat(&host, m, "{\"messages\": [", &resp, &err), CN_EPARSE,
           "host: invalid request JSON");
    has_str(err.message, "the chat request is not valid JSON", "host: ... err says so");
    is_int(ms->chat(&host, m, "{\"messages\":[]}", &resp, &err), CN_EINVAL,
           "host: empty messages refused before sending");
    has_str(err.message, "non-empty \"messages\"", "host: ... err says so");
    is_int(ms->chat(&host, NULL, "{}", &resp, &err), CN_ENOCONTEXT, "host: NULL model handle");

    is_int(ms->embed(&host, m, texts, 2, 0, &v, &dim, &err), 0, "host: embed");
    is_int(dim, 6, "host: embed width from the server's --dim");
    ok(v != NULL && fabs(dot(v, v, 6) - 1.0) < 1e-5, "host: unit-length vectors");
    host.free(v);
    v = NULL;
    is_int(ms->embed(&host, m, texts, 2, 3, &v, &dim, &err), 0, "host: embed with dimensions");
    is_int(dim, 3, "host: ... honoured");
    host.free(v);

    is_int(ms->rerank(&host, m, "beta", texts, 2, s, &err), 0, "host: rerank");
    ok(s[0] == 0.0 && s[1] == 1.0, "host: rerank scores");

    err.code = 0;
    is_int(ms->open(&host, "{\"timeout_ms\":-5}", &bad, &err), CN_EINVAL, "host: bad config");
    is_int(err.code, CN_EINVAL, "host: open err.code");
    has_str(err.message, "\"timeout_ms\" is -5", "host: open err names the field");
    ok(bad == NULL, "host: no handle from a bad config");
    ms->close(&host, m);
    ms->close(&host, NULL);
    json_object_put(defaults);
    fake_stop(&f);
}

/* ---- the fake server's own checks ---------------------------------------- */

/* Sends a raw request and returns the status of the answer (0: none). */
static int raw_http(int port, const char *req)
{
    struct sockaddr_in a;
    char buf[4096];
    size_t got = 0;
    ssize_t n;
    int fd = socket(AF_INET, SOCK_STREAM, 0), status = 0;

    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons((uint16_t)port);
    if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
        if (fd >= 0) close(fd);
        return 0;
    }
    if (write(fd, req, strlen(req)) == (ssize_t)strlen(req)) {
        while (got < sizeof buf - 1 && (n = read(fd, buf + got, sizeof buf - 1 - got)) > 0)
            got += (size_t)n;
        buf[got] = '\0';
        sscanf(buf, "HTTP/1.1 %d", &status);
    }
    close(fd);
    return status;
}

static int raw_post(int port, const char *path, const char *body)
{
    char req[4096];
    snprintf(req, sizeof req,
             "POST %s HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
             "Content-Length: %zu\r\n\r\n%s", path, strlen(body), body);
    return raw_http(port, req);
}

static int has_violation(json_object *log, size_t i, const char *needle)
{
    json_object *v = jget(entry(log, i), "violations", (const char *)NULL);
    for (size_t k = 0; k < json_object_array_length(v); k++)
        if (strstr(json_object_get_string(json_object_array_get_idx(v, k)), needle)) return 1;
    return 0;
}

static void test_fake_checks(void)
{
    fake f;
    json_object *log;

    if (!ok(fake_start(&f, "{\"endpoint\":\"chat\",\"body\":{\"role\":\"assistant\","
                           "\"content\":\"kept for a valid request\"}}\n") == 0,
            "fake: server started"))
        return;
    f.expect_clean = 0;
    is_int(raw_post(f.port, "/v1/chat/completions",
                    "{\"messages\":[{\"role\":\"tool\",\"content\":\"x\"}]}"),
           400, "fake: chat without model and a stray tool message -> 400");
    is_int(raw_post(f.port, "/v1/chat/completions",
                    "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],"
                    "\"tools\":[{\"type\":\"function\",\"function\":{\"name\":\"a.b\","
                    "\"parameters\":{}}}],\"tool_choice\":{\"type\":\"function\",\"function\":"
                    "{\"name\":\"zzz\"}}}"),
           400, "fake: bad tool name and unknown tool_choice -> 400");
    is_int(raw_post(f.port, "/v1/chat/completions",
                    "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],"
                    "\"response_format\":{\"type\":\"json_schema\",\"json_schema\":{\"name\":\"c\"}}}"),
           400, "fake: json_schema without schema -> 400");
    is_int(raw_post(f.port, "/v1/embeddings", "{\"model\":\"e\",\"input\":[]}"), 400,
           "fake: empty embeddings input -> 400");
    is_int(raw_post(f.port, "/rerank", "{\"query\":\"q\"}"), 400, "fake: rerank without documents");
    is_int(raw_http(f.port, "POST /v1/rerank HTTP/1.1\r\nHost: x\r\nContent-Type: application/json"
                            "\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"),
           411, "fake: chunked body -> 411");
    is_int(raw_post(f.port, "/v1/nothing", "{}"), 404, "fake: unknown path -> 404");
    is_int(raw_post(f.port, "/v1/chat/completions",
                    "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"x\"}]}"),
           200, "fake: a valid request gets the scripted reply");
    log = fake_log(&f);
    is_int(json_object_array_length(log), 8, "fake: every request logged");
    ok(has_violation(log, 0, "model must be a non-empty string"), "fake: missing model recorded");
    ok(has_violation(log, 0, "needs a tool_call_id"), "fake: tool message without id recorded");
    ok(has_violation(log, 1, "tools[0].function.name"), "fake: bad tool name recorded");
    ok(has_violation(log, 1, "\"zzz\", which is not among the tools"),
       "fake: tool_choice naming no tool recorded");
    ok(has_violation(log, 2, "json_schema.schema"), "fake: schema-less json_schema recorded");
    ok(has_violation(log, 3, "input must be"), "fake: empty input recorded");
    ok(has_violation(log, 4, "documents (or texts)"), "fake: missing documents recorded");
    ok(has_violation(log, 5, "chunked"), "fake: chunked recorded");
    is_int(JINT(entry(log, 5), "status"), 411, "fake: logged status");
    ok(!JHAS(entry(log, 0), "body", "model"), "fake: logged body is the request's");
    ok(json_object_array_length(jget(entry(log, 7), "violations", (const char *)NULL)) == 0 &&
           json_object_get_boolean(jget(entry(log, 7), "scripted", (const char *)NULL)),
       "fake: invalid requests did not consume the script");
    json_object_put(log);
    fake_stop(&f);
}

static void test_max_requests(void)
{
    fake f;
    const char *extra[] = {"--max-requests", "2", NULL};
    cn_model *m;
    int status = -1, exited = 0;

    if (!ok(fake_start_args(&f, NULL, extra) == 0, "max-requests: fake server started")) return;
    m = open_cfg(CN_LLM_CHAT, "{\"base_url\":\"%s\"}", f.url);
    is_int(chat_text(m, NULL), 0, "max-requests: first request");
    is_int(chat_text(m, NULL), 0, "max-requests: second request");
    for (int i = 0; i < 1000 && !exited; i++) {
        if (waitpid(f.pid, &status, WNOHANG) == f.pid) exited = 1;
        else usleep(10000);
    }
    ok(exited && WIFEXITED(status) && WEXITSTATUS(status) == 0,
       "max-requests: the server exits 0 after N requests");
    if (exited) {
        f.pid = 0;
        forget(&f);
    }
    cn_llm_close(m);
    fake_stop(&f);
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
    snprintf(tmpdir, sizeof tmpdir, "%s/cn_test_llm_XXXXXX", base && *base ? base : "/tmp");
    if (mkdtemp(tmpdir) == NULL) {
        printf("Bail out! mkdtemp: %s\n", strerror(errno));
        return 1;
    }
    atexit(cleanup_all);
    signal(SIGPIPE, SIG_IGN);
    clear_env();

    test_config_errors();
    test_retry_delays();
    test_chat_round_trip();
    test_tool_calls();
    test_response_format();
    test_env_and_options();
    test_retries();
    test_timeout();
    test_malformed();
    test_refused();
    test_embeddings();
    test_rerank();
    test_usage_and_threads();
    test_host_services();
    test_fake_checks();
    test_max_requests();

    is_int(client_violations, 0, "no request the client sent broke the protocol");
    is_int(bad_exits, 0, "every fake server exited 0 on SIGTERM");
    return tap_done();
}
