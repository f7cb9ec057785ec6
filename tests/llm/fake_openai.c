/* SPDX-License-Identifier: Apache-2.0 */
/* fake_openai: a small OpenAI-compatible HTTP/1.1 server on 127.0.0.1 for
 * the tests of the model client and of the skills that use it.
 *
 *   fake_openai --port-file FILE [--script FILE] [--log FILE] [--dim N]
 *               [--max-requests N]
 *
 * Binds an ephemeral port on 127.0.0.1 and, once it accepts connections,
 * writes the port number to FILE (through FILE.tmp and rename, so a reader
 * never sees half a number).  Serves one connection at a time, one request
 * per connection ("Connection: close"), until SIGTERM or SIGINT or until N
 * requests were answered; then exits 0.
 *
 * Endpoints (POST, with or without the /v1 prefix): /v1/chat/completions,
 * /v1/embeddings, /v1/rerank.
 *
 * Script (JSON Lines, blank lines skipped): each line is one reply, taken
 * in order by the endpoint it names:
 *   {"endpoint": "chat" | "embeddings" | "rerank",
 *    "status": 200,                   HTTP status (default 200)
 *    "body": <any JSON>,              the answer, or
 *    "raw": "literal text",           an answer sent byte for byte
 *    "headers": {"Retry-After": "1"}, extra response headers
 *    "delay_ms": N,                   wait before answering (given up as
 *                                     soon as the client goes away)
 *    "drop": true,                    close without answering
 *    "comment": "..."}                ignored
 * For chat, a 2xx "body" object without "choices" and without "error" is
 * the assistant message: it is wrapped into a full completion (id, object,
 * created, model, choices[0].message and finish_reason -- the message's own
 * "finish_reason" member if it has one, else "tool_calls" when it has
 * tool_calls, else "stop" -- and usage: prompt_tokens = request bytes / 4,
 * completion_tokens = message bytes / 4, prompt_tokens_details.cached_tokens
 * 0).  A request with protocol violations is answered 400 and does not
 * consume a scripted reply.
 *
 * Without a scripted reply: chat answers {"role":"assistant","content":"ok"};
 * embeddings gives each input a vector of --dim (default 8; the request's
 * "dimensions" wins) floats where each lowercase word ([A-Za-z0-9_]+) adds 1
 * to bucket FNV-1a(word) % dim, L2-normalised (a text without words gets
 * bucket 0 = 1); rerank scores each document by the fraction of the query's
 * distinct words it contains, answered as {"results":[{"index",
 * "relevance_score"}]} sorted by score (ties: lower index first), cut to
 * top_n when given.
 *
 * Log (JSON Lines, one per request, written before the answer is sent):
 *   {"n": 1, "method": "POST", "path": "/v1/chat/completions",
 *    "endpoint": "chat" | "embeddings" | "rerank" | null,
 *    "headers": {every request header, lowercased name: value},
 *    "body": <parsed body or null>, "violations": ["..."],
 *    "status": <status answered; 0 for a drop>, "scripted": true|false}
 *
 * Protocol checks (each failure is a violation, answered 400 with an
 * OpenAI-style {"error":{"message","type","param","code"}} unless said
 * otherwise): method POST; Content-Type application/json; a Content-Length
 * body (chunked or no Content-Length: 411; a client that stops sending for
 * 10 s: 408; over 64 MiB: 413); the body a JSON object.  An unknown path is
 * answered 404 (logged with "endpoint": null and no violation).
 * chat: "model" a non-empty string; "messages" a non-empty array of objects
 * with role system/user/assistant/tool; system/user content present;
 * assistant content present unless it has tool_calls; tool_calls entries
 * {id, type "function", function {name, arguments string}}; tool messages
 * with a tool_call_id answering an earlier assistant tool call; "tools"
 * non-empty, each {"type":"function","function":{"name" ([A-Za-z0-9_-],
 * 1..64), "parameters" object}}; "tool_choice" "none"/"auto"/"required" or
 * {"type":"function","function":{"name"}} naming an offered tool, and only
 * with tools; "response_format" {"type":"json_schema","json_schema":{"name",
 * "schema" object}}, {"type":"json_object"} or {"type":"text"}; "stream" not
 * true.  embeddings: "model"; "input" a string or a non-empty array of
 * strings; "dimensions" a positive integer.  rerank: "query" a string;
 * "documents" and/or "texts" non-empty arrays of strings (at least one);
 * "top_n" a positive integer. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>

#define HEADER_MAX (64 * 1024)
#define BODY_MAX ((size_t)64 << 20)
#define IO_TIMEOUT_MS 10000
#define DIM_MAX 65536

enum { EP_CHAT, EP_EMBED, EP_RERANK, EP_COUNT };
static const char *const ep_names[EP_COUNT] = {"chat", "embeddings", "rerank"};
static const char *const ep_paths[EP_COUNT] = {"/chat/completions", "/embeddings", "/rerank"};

static volatile sig_atomic_t stop_flag = 0;

typedef struct server {
    int listen_fd;
    int log_fd;
    int dim;
    long max_requests;
    long served;
    json_object *script[EP_COUNT];   /* arrays of reply objects */
    size_t next[EP_COUNT];
} server;

typedef struct request {
    char method[16];
    char path[2048];
    json_object *headers;            /* lowercased name -> value */
    long content_length;             /* -1: none */
    int chunked;
    int expect_continue;
    char *body;
    size_t body_len;
} request;

typedef struct reply {
    int status;
    char *body;                      /* malloc'd */
    json_object *headers;            /* extra headers, borrowed */
    long delay_ms;
    int drop;
    int scripted;
} reply;

/* ---- small helpers ------------------------------------------------------- */

static void die(const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "fake_openai: ");
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    exit(2);
}

static void on_signal(int sig)
{
    (void)sig;
    stop_flag = 1;
}

static long long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static char *xstrdup(const char *s)
{
    char *d = strdup(s);
    if (d == NULL) die("out of memory");
    return d;
}

/* Square root by Newton's method: keeps the program free of libm. */
static double root(double x)
{
    double r = x > 1 ? x : 1;
    if (x <= 0) return 0;
    for (int i = 0; i < 64; i++) r = 0.5 * (r + x / r);
    return r;
}

static const char *jstr(json_object *o, const char *key)
{
    json_object *v;
    if (json_object_object_get_ex(o, key, &v) && json_object_is_type(v, json_type_string))
        return json_object_get_string(v);
    return NULL;
}

/* Parses exactly one JSON value from text[0..len); NULL when invalid. */
static json_object *parse_json(const char *text, size_t len, int *valid)
{
    json_tokener *tok = json_tokener_new();
    json_object *o;
    size_t end;

    *valid = 0;
    if (tok == NULL || len > 0x7ffffff0) {
        json_tokener_free(tok);
        return NULL;
    }
    o = json_tokener_parse_ex(tok, text, (int)len);
    if (json_tokener_get_error(tok) == json_tokener_continue)
        o = json_tokener_parse_ex(tok, "", 1); /* a bare number needs an end */
    if (json_tokener_get_error(tok) == json_tokener_success) {
        end = json_tokener_get_parse_end(tok);
        *valid = 1;
        for (size_t i = end; i < len; i++)
            if (!isspace((unsigned char)text[i])) *valid = 0;
    }
    json_tokener_free(tok);
    if (!*valid) {
        json_object_put(o);
        return NULL;
    }
    return o;
}

/* ---- options, script ----------------------------------------------------- */

static int endpoint_index(const char *name)
{
    for (int i = 0; i < EP_COUNT; i++)
        if (strcmp(name, ep_names[i]) == 0) return i;
    return -1;
}

static void check_script_entry(json_object *e, const char *file, int line)
{
    static const char *const known[] = {"endpoint", "status", "body", "raw", "headers",
                                        "delay_ms", "drop", "comment"};
    json_object *v;

    if (!json_object_is_type(e, json_type_object))
        die("%s:%d: each line must be a JSON object", file, line);
    json_object_object_foreach(e, key, val) {
        size_t k = 0;
        (void)val;
        while (k < sizeof known / sizeof known[0] && strcmp(key, known[k]) != 0) k++;
        if (k == sizeof known / sizeof known[0]) die("%s:%d: unknown field \"%s\"", file, line, key);
    }
    if (jstr(e, "endpoint") == NULL || endpoint_index(jstr(e, "endpoint")) < 0)
        die("%s:%d: \"endpoint\" must be \"chat\", \"embeddings\" or \"rerank\"", file, line);
    if (json_object_object_get_ex(e, "status", &v) &&
        (!json_object_is_type(v, json_type_int) || json_object_get_int(v) < 100 ||
         json_object_get_int(v) > 599))
        die("%s:%d: \"status\" must be an integer from 100 to 599", file, line);
    if (json_object_object_get_ex(e, "raw", &v) && !json_object_is_type(v, json_type_string))
        die("%s:%d: \"raw\" must be a string", file, line);
    if (json_object_object_get_ex(e, "raw", NULL) && json_object_object_get_ex(e, "body", NULL))
        die("%s:%d: give \"body\" or \"raw\", not both", file, line);
    if (json_object_object_get_ex(e, "delay_ms", &v) &&
        (!json_object_is_type(v, json_type_int) || json_object_get_int64(v) < 0))
        die("%s:%d: \"delay_ms\" must be a non-negative integer", file, line);
    if (json_object_object_get_ex(e, "drop", &v) && !json_object_is_type(v, json_type_boolean))
        die("%s:%d: \"drop\" must be true or false", file, line);
    if (json_object_object_get_ex(e, "headers", &v)) {
        if (!json_object_is_type(v, json_type_object))
            die("%s:%d: \"headers\" must be an object", file, line);
        json_object_object_foreach(v, hk, hv) {
            if (!json_object_is_type(hv, json_type_string) || strpbrk(hk, "\r\n:") != NULL ||
                strpbrk(json_object_get_string(hv), "\r\n") != NULL)
                die("%s:%d: header \"%s\" must be a one-line string", file, line, hk);
        }
    }
}

static void load_script(server *s, const char *file)
{
    FILE *f = fopen(file, "r");
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    int lineno = 0;

    if (f == NULL) die("%s: %s", file, strerror(errno));
    while ((n = getline(&line, &cap, f)) >= 0) {
        json_object *e;
        int valid;
        size_t i = 0;

        lineno++;
        while (i < (size_t)n && isspace((unsigned char)line[i])) i++;
        if (i == (size_t)n) continue;
        e = parse_json(line, (size_t)n, &valid);
        if (!valid) die("%s:%d: not valid JSON", file, lineno);
        check_script_entry(e, file, lineno);
        json_object_array_add(s->script[endpoint_index(jstr(e, "endpoint"))], e);
    }
    free(line);
    fclose(f);
}

static long parse_number(const char *opt, const char *v, long lo, long hi)
{
    char *end;
    long x;

    errno = 0;
    x = strtol(v, &end, 10);
    if (errno || *end || end == v || x < lo || x > hi)
        die("%s wants a number from %ld to %ld, not '%s'", opt, lo, hi, v);
    return x;
}

/* ---- reading a request --------------------------------------------------- */

enum { READ_OK, READ_NOTHING, READ_INCOMPLETE, READ_TOO_BIG };

/* Waits for fd to become readable before the deadline; 1 ready, 0 not. */
static int wait_readable(int fd, long long deadline)
{
    for (;;) {
        long long left = deadline - now_ms();
        struct pollfd p = {fd, POLLIN, 0};
        int r;
        if (left <= 0 || stop_flag) return 0;
        r = poll(&p, 1, (int)(left > 1000 ? 1000 : left));
        if (r > 0) return 1;
        if (r < 0 && errno != EINTR) return 0;
    }
}

static int send_all(int fd, const char *data, size_t len)
{
    long long deadline = now_ms() + IO_TIMEOUT_MS;
    while (len > 0) {
        ssize_t w = send(fd, data, len, MSG_NOSIGNAL);
        if (w > 0) {
            data += w;
            len -= (size_t)w;
            continue;
        }
        if (w < 0 && (errno == EINTR)) continue;
        if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            struct pollfd p = {fd, POLLOUT, 0};
            if (now_ms() > deadline || poll(&p, 1, 1000) < 0) return -1;
            continue;
        }
        return -1;
    }
    return 0;
}

static void parse_header_line(request *r, char *line)
{
    char *colon = strchr(line, ':'), *v;

    if (colon == NULL) return;
    *colon = '\0';
    for (char *p = line; *p; p++) *p = (char)tolower((unsigned char)*p);
    v = colon + 1;
    while (*v == ' ' || *v == '\t') v++;
    for (size_t n = strlen(v); n > 0 && (v[n - 1] == ' ' || v[n - 1] == '\t'); n--) v[n - 1] = '\0';
    json_object_object_add(r->headers, line, json_object_new_string(v));
    if (strcmp(line, "content-length") == 0) {
        char *end;
        long x = strtol(v, &end, 10);
        r->content_length = (*v && !*end && x >= 0) ? x : -2;
    } else if (strcmp(line, "transfer-encoding") == 0 && strcasestr(v, "chunked") != NULL) {
        r->chunked = 1;
    } else if (strcmp(line, "expect") == 0 && strcasecmp(v, "100-continue") == 0) {
        r->expect_continue = 1;
    }
}

static void parse_head(request *r, char *head)
{
    char *save = NULL, *line = strtok_r(head, "\r\n", &save);

    if (line != NULL) sscanf(line, "%15s %2047s", r->method, r->path);
    while ((line = strtok_r(NULL, "\r\n", &save)) != NULL) parse_header_line(r, line);
}

static int read_request(int fd, request *r)
{
    long long deadline = now_ms() + IO_TIMEOUT_MS;
    char *buf = malloc(HEADER_MAX + 1), *end = NULL;
    size_t len = 0, head_len, have;

    if (buf == NULL) die("out of memory");
    while (end == NULL) {
        ssize_t n;
        if (len == HEADER_MAX) {
            free(buf);
            return READ_TOO_BIG;
        }
        if (!wait_readable(fd, deadline) || (n = recv(fd, buf + len, HEADER_MAX - len, 0)) <= 0) {
            free(buf);
            return len == 0 ? READ_NOTHING : READ_INCOMPLETE;
        }
        len += (size_t)n;
        buf[len] = '\0';
        end = strstr(buf, "\r\n\r\n");
    }
    head_len = (size_t)(end - buf) + 4;
    *end = '\0';
    parse_head(r, buf);
    if (r->chunked || r->content_length < 0) {
        free(buf);
        return READ_OK; /* refused by the caller, body left unread */
    }
    if ((size_t)r->content_length > BODY_MAX) {
        free(buf);
        return READ_TOO_BIG;
    }
    if (r->expect_continue && len == head_len) send_all(fd, "HTTP/1.1 100 Continue\r\n\r\n", 25);
    r->body = malloc((size_t)r->content_length + 1);
    if (r->body == NULL) die("out of memory");
    have = len - head_len < (size_t)r->content_length ? len - head_len : (size_t)r->content_length;
    memcpy(r->body, buf + head_len, have);
    free(buf);
    while (have < (size_t)r->content_length) {
        ssize_t n;
        if (!wait_readable(fd, deadline) ||
            (n = recv(fd, r->body + have, (size_t)r->content_length - have, 0)) <= 0)
            return READ_INCOMPLETE;
        have += (size_t)n;
    }
    r->body[have] = '\0';
    r->body_len = have;
    return READ_OK;
}

/* ---- protocol checks ----------------------------------------------------- */

static void violation(json_object *v, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    json_object_array_add(v, json_object_new_string(msg));
}

static int is_type(json_object *o, const char *key, json_type t, json_object **out)
{
    json_object *v = NULL;
    int ok = json_object_object_get_ex(o, key, &v) && json_object_is_type(v, t);
    if (out) *out = ok ? v : NULL;
    return ok;
}

static int nonempty_string(json_object *o, const char *key)
{
    const char *s = jstr(o, key);
    return s != NULL && *s != '\0';
}

static int valid_name(const char *s)
{
    size_t n = 0;
    if (s == NULL) return 0;
    for (; s[n]; n++)
        if (!isalnum((unsigned char)s[n]) && s[n] != '_' && s[n] != '-') return 0;
    return n >= 1 && n <= 64;
}

static int content_ok(json_object *m)
{
    return is_type(m, "content", json_type_string, NULL) ||
           is_type(m, "content", json_type_array, NULL);
}

static void check_tool_calls(json_object *v, json_object *calls, size_t i, json_object *ids)
{
    if (!json_object_is_type(calls, json_type_array) || json_object_array_length(calls) == 0) {
        violation(v, "messages[%zu].tool_calls must be a non-empty array", i);
        return;
    }
    for (size_t k = 0; k < json_object_array_length(calls); k++) {
        json_object *c = json_object_array_get_idx(calls, k), *fn;
        const char *type = jstr(c, "type");
        if (!nonempty_string(c, "id"))
            violation(v, "messages[%zu].tool_calls[%zu].id must be a non-empty string", i, k);
        else
            json_object_object_add(ids, jstr(c, "id"), json_object_new_boolean(1));
        if (type == NULL || strcmp(type, "function") != 0)
            violation(v, "messages[%zu].tool_calls[%zu].type must be \"function\"", i, k);
        if (!is_type(c, "function", json_type_object, &fn)) {
            violation(v, "messages[%zu].tool_calls[%zu].function must be an object", i, k);
            continue;
        }
        if (!nonempty_string(fn, "name"))
            violation(v, "messages[%zu].tool_calls[%zu].function.name must be a non-empty string",
                      i, k);
        if (!is_type(fn, "arguments", json_type_string, NULL))
            violation(v, "messages[%zu].tool_calls[%zu].function.arguments must be a string "
                         "(JSON text)", i, k);
    }
}

static void check_message(json_object *v, json_object *m, size_t i, json_object *ids)
{
    static const char *const roles[] = {"system", "user", "assistant", "tool"};
    const char *role = jstr(m, "role");
    json_object *calls = NULL;
    size_t r = 0;

    if (!json_object_is_type(m, json_type_object)) {
        violation(v, "messages[%zu] must be an object", i);
        return;
    }
    while (role != NULL && r < 4 && strcmp(role, roles[r]) != 0) r++;
    if (role == NULL || r == 4) {
        violation(v, "messages[%zu].role must be system, user, assistant or tool", i);
        return;
    }
    if (r == 2 && json_object_object_get_ex(m, "tool_calls", &calls) && calls != NULL) {
        check_tool_calls(v, calls, i, ids);
    } else if (r == 3) {
        const char *id = jstr(m, "tool_call_id");
        if (id == NULL || *id == '\0')
            violation(v, "messages[%zu] (role tool) needs a tool_call_id", i);
        else if (!json_object_object_get_ex(ids, id, NULL))
            violation(v, "messages[%zu].tool_call_id \"%s\" answers no tool call of an earlier "
                         "assistant message", i, id);
        if (!content_ok(m)) violation(v, "messages[%zu] (role tool) needs content", i);
    } else if (!content_ok(m)) {
        violation(v, "messages[%zu] (role %s) needs content (a string or an array)", i, role);
    }
}

static void check_tools(json_object *v, json_object *req, json_object *names)
{
    json_object *tools;

    if (!json_object_object_get_ex(req, "tools", &tools)) return;
    if (!json_object_is_type(tools, json_type_array) || json_object_array_length(tools) == 0) {
        violation(v, "tools must be a non-empty array");
        return;
    }
    for (size_t i = 0; i < json_object_array_length(tools); i++) {
        json_object *t = json_object_array_get_idx(tools, i), *fn;
        const char *type = jstr(t, "type");
        if (type == NULL || strcmp(type, "function") != 0)
            violation(v, "tools[%zu].type must be \"function\"", i);
        if (!is_type(t, "function", json_type_object, &fn)) {
            violation(v, "tools[%zu].function must be an object", i);
            continue;
        }
        if (!valid_name(jstr(fn, "name")))
            violation(v, "tools[%zu].function.name must match ^[a-zA-Z0-9_-]{1,64}$", i);
        else
            json_object_object_add(names, jstr(fn, "name"), json_object_new_boolean(1));
        if (!is_type(fn, "parameters", json_type_object, NULL))
            violation(v, "tools[%zu].function.parameters must be an object (a JSON schema)", i);
    }
}

static void check_tool_choice(json_object *v, json_object *req, json_object *names)
{
    json_object *tc, *fn;
    int have_tools = json_object_object_get_ex(req, "tools", NULL);

    if (!json_object_object_get_ex(req, "tool_choice", &tc)) return;
    if (!have_tools) violation(v, "tool_choice is only allowed when tools are given");
    if (json_object_is_type(tc, json_type_string)) {
        const char *s = json_object_get_string(tc);
        if (strcmp(s, "none") != 0 && strcmp(s, "auto") != 0 && strcmp(s, "required") != 0)
            violation(v, "tool_choice \"%s\" must be none, auto or required", s);
        return;
    }
    if (!json_object_is_type(tc, json_type_object) || jstr(tc, "type") == NULL ||
        strcmp(jstr(tc, "type"), "function") != 0 ||
        !is_type(tc, "function", json_type_object, &fn) || !nonempty_string(fn, "name")) {
        violation(v, "tool_choice must be a string or {\"type\":\"function\",\"function\":"
                     "{\"name\":...}}");
        return;
    }
    if (have_tools && !json_object_object_get_ex(names, jstr(fn, "name"), NULL))
        violation(v, "tool_choice names \"%s\", which is not among the tools", jstr(fn, "name"));
}

static void check_response_format(json_object *v, json_object *req)
{
    json_object *rf, *js;
    const char *type;

    if (!json_object_object_get_ex(req, "response_format", &rf)) return;
    type = jstr(rf, "type");
    if (type != NULL && (strcmp(type, "json_object") == 0 || strcmp(type, "text") == 0)) return;
    if (type == NULL || strcmp(type, "json_schema") != 0) {
        violation(v, "response_format.type must be json_schema, json_object or text");
        return;
    }
    if (!is_type(rf, "json_schema", json_type_object, &js)) {
        violation(v, "response_format.json_schema must be an object");
        return;
    }
    if (!valid_name(jstr(js, "name")))
        violation(v, "response_format.json_schema.name must match ^[a-zA-Z0-9_-]{1,64}$");
    if (!is_type(js, "schema", json_type_object, NULL))
        violation(v, "response_format.json_schema.schema must be an object");
}

static void check_chat(json_object *v, json_object *req)
{
    json_object *msgs, *names = json_object_new_object(), *ids = json_object_new_object(), *st;

    if (!nonempty_string(req, "model")) violation(v, "model must be a non-empty string");
    if (!is_type(req, "messages", json_type_array, &msgs) || json_object_array_length(msgs) == 0)
        violation(v, "messages must be a non-empty array");
    else
        for (size_t i = 0; i < json_object_array_length(msgs); i++)
            check_message(v, json_object_array_get_idx(msgs, i), i, ids);
    check_tools(v, req, names);
    check_tool_choice(v, req, names);
    check_response_format(v, req);
    if (json_object_object_get_ex(req, "stream", &st) && json_object_get_boolean(st))
        violation(v, "stream: true is not supported here");
    json_object_put(names);
    json_object_put(ids);
}

static int string_array(json_object *a)
{
    if (!json_object_is_type(a, json_type_array) || json_object_array_length(a) == 0) return 0;
    for (size_t i = 0; i < json_object_array_length(a); i++)
        if (!json_object_is_type(json_object_array_get_idx(a, i), json_type_string)) return 0;
    return 1;
}

static void check_positive(json_object *v, json_object *req, const char *key)
{
    json_object *x;
    if (json_object_object_get_ex(req, key, &x) &&
        (!json_object_is_type(x, json_type_int) || json_object_get_int64(x) <= 0))
        violation(v, "%s must be a positive integer", key);
}

static void check_embeddings(json_object *v, json_object *req)
{
    json_object *in;

    if (!nonempty_string(req, "model")) violation(v, "model must be a non-empty string");
    if (!json_object_object_get_ex(req, "input", &in) ||
        !(json_object_is_type(in, json_type_string) || string_array(in)))
        violation(v, "input must be a string or a non-empty array of strings");
    check_positive(v, req, "dimensions");
}

static void check_rerank(json_object *v, json_object *req)
{
    json_object *d = NULL, *t = NULL;
    int hd = json_object_object_get_ex(req, "documents", &d);
    int ht = json_object_object_get_ex(req, "texts", &t);

    if (!is_type(req, "query", json_type_string, NULL)) violation(v, "query must be a string");
    if (!hd && !ht) violation(v, "documents (or texts) must be given");
    if (hd && !string_array(d)) violation(v, "documents must be a non-empty array of strings");
    if (ht && !string_array(t)) violation(v, "texts must be a non-empty array of strings");
    check_positive(v, req, "top_n");
}

static int content_type_json(const char *ct)
{
    size_t n = strlen("application/json");
    return ct != NULL && strncasecmp(ct, "application/json", n) == 0 &&
           (ct[n] == '\0' || ct[n] == ';' || ct[n] == ' ');
}

/* ---- default answers ----------------------------------------------------- */

static uint32_t fnv1a(const char *s, size_t n)
{
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < n; i++) {
        h ^= (unsigned char)tolower((unsigned char)s[i]);
        h *= 16777619u;
    }
    return h;
}

/* Calls fn for each word ([A-Za-z0-9_]+) of text. */
static void each_word(const char *text, void (*fn)(const char *w, size_t n, void *d), void *d)
{
    const char *p = text;
    while (*p) {
        size_t n = 0;
        while (*p && !(isalnum((unsigned char)*p) || *p == '_')) p++;
        while (isalnum((unsigned char)p[n]) || p[n] == '_') n++;
        if (n > 0) fn(p, n, d);
        p += n;
    }
}

typedef struct vec_acc {
    double *v;
    int dim;
} vec_acc;

static void add_word(const char *w, size_t n, void *d)
{
    vec_acc *a = d;
    a->v[fnv1a(w, n) % (uint32_t)a->dim] += 1.0;
}

static json_object *embed_text(const char *text, int dim)
{
    double *v = calloc((size_t)dim, sizeof *v), norm = 0;
    vec_acc acc = {v, dim};
    json_object *a = json_object_new_array();

    if (v == NULL) die("out of memory");
    each_word(text, add_word, &acc);
    for (int i = 0; i < dim; i++) norm += v[i] * v[i];
    if (norm == 0) v[0] = norm = 1;
    norm = root(norm);
    for (int i = 0; i < dim; i++) json_object_array_add(a, json_object_new_double(v[i] / norm));
    free(v);
    return a;
}

static json_object *default_embeddings(json_object *req, int dim, size_t body_len)
{
    json_object *in = NULL, *dims, *data = json_object_new_array(), *out = json_object_new_object();
    json_object *usage = json_object_new_object();
    size_t n;

    if (json_object_object_get_ex(req, "dimensions", &dims) &&
        json_object_get_int64(dims) > 0 && json_object_get_int64(dims) <= DIM_MAX)
        dim = (int)json_object_get_int64(dims);
    json_object_object_get_ex(req, "input", &in);
    n = json_object_is_type(in, json_type_array) ? json_object_array_length(in) : 1;
    for (size_t i = 0; i < n; i++) {
        json_object *row = json_object_new_object();
        json_object *t = json_object_is_type(in, json_type_array) ? json_object_array_get_idx(in, i)
                                                                  : in;
        json_object_object_add(row, "object", json_object_new_string("embedding"));
        json_object_object_add(row, "index", json_object_new_int64((int64_t)i));
        json_object_object_add(row, "embedding", embed_text(json_object_get_string(t), dim));
        json_object_array_add(data, row);
    }
    json_object_object_add(out, "object", json_object_new_string("list"));
    json_object_object_add(out, "data", data);
    json_object_object_add(out, "model", json_object_new_string(jstr(req, "model")));
    json_object_object_add(usage, "prompt_tokens", json_object_new_int64((int64_t)body_len / 4));
    json_object_object_add(usage, "total_tokens", json_object_new_int64((int64_t)body_len / 4));
    json_object_object_add(out, "usage", usage);
    return out;
}

typedef struct word_set {
    json_object *set;   /* lowercased word -> true */
} word_set;

static void collect_word(const char *w, size_t n, void *d)
{
    word_set *ws = d;
    char *low = strndup(w, n);
    if (low == NULL) die("out of memory");
    for (size_t i = 0; i < n; i++) low[i] = (char)tolower((unsigned char)low[i]);
    json_object_object_add(ws->set, low, json_object_new_boolean(1));
    free(low);
}

static json_object *words_of(const char *text)
{
    word_set ws = {json_object_new_object()};
    each_word(text, collect_word, &ws);
    return ws.set;
}

typedef struct scored {
    size_t index;
    double score;
} scored;

static int by_score(const void *a, const void *b)
{
    const scored *x = a, *y = b;
    if (x->score != y->score) return x->score < y->score ? 1 : -1;
    return x->index < y->index ? -1 : (x->index > y->index);
}

static json_object *default_rerank(json_object *req, size_t body_len)
{
    json_object *docs = NULL, *q = words_of(jstr(req, "query")), *results = json_object_new_array();
    json_object *out = json_object_new_object(), *top, *usage = json_object_new_object();
    size_t n, qn = (size_t)json_object_object_length(q), keep;
    scored *s;

    if (!json_object_object_get_ex(req, "documents", &docs))
        json_object_object_get_ex(req, "texts", &docs);
    n = json_object_array_length(docs);
    s = calloc(n ? n : 1, sizeof *s);
    if (s == NULL) die("out of memory");
    for (size_t i = 0; i < n; i++) {
        json_object *dw = words_of(json_object_get_string(json_object_array_get_idx(docs, i)));
        size_t hit = 0;
        json_object_object_foreach(q, w, val) {
            (void)val;
            if (json_object_object_get_ex(dw, w, NULL)) hit++;
        }
        s[i].index = i;
        s[i].score = qn ? (double)hit / (double)qn : 0.0;
        json_object_put(dw);
    }
    qsort(s, n, sizeof *s, by_score);
    keep = n;
    if (json_object_object_get_ex(req, "top_n", &top) && json_object_get_int64(top) > 0 &&
        (size_t)json_object_get_int64(top) < n)
        keep = (size_t)json_object_get_int64(top);
    for (size_t i = 0; i < keep; i++) {
        json_object *r = json_object_new_object();
        json_object_object_add(r, "index", json_object_new_int64((int64_t)s[i].index));
        json_object_object_add(r, "relevance_score", json_object_new_double(s[i].score));
        json_object_array_add(results, r);
    }
    free(s);
    json_object_put(q);
    if (jstr(req, "model")) json_object_object_add(out, "model", json_object_new_string(jstr(req, "model")));
    json_object_object_add(out, "results", results);
    json_object_object_add(usage, "prompt_tokens", json_object_new_int64((int64_t)body_len / 4));
    json_object_object_add(usage, "total_tokens", json_object_new_int64((int64_t)body_len / 4));
    json_object_object_add(out, "usage", usage);
    return out;
}

/* A full completion around an assistant message (message is consumed). */
static json_object *wrap_completion(json_object *message, json_object *req, size_t body_len,
                                    long seq)
{
    json_object *out = json_object_new_object(), *choices = json_object_new_array();
    json_object *choice = json_object_new_object(), *usage = json_object_new_object();
    json_object *details = json_object_new_object(), *finish = NULL, *calls;
    char id[64];
    size_t mlen;
    int64_t pt, ct;

    if (json_object_object_get_ex(message, "finish_reason", &finish)) {
        finish = json_object_get(finish);
        json_object_object_del(message, "finish_reason");
    } else if (json_object_object_get_ex(message, "tool_calls", &calls) &&
               json_object_is_type(calls, json_type_array) && json_object_array_length(calls) > 0) {
        finish = json_object_new_string("tool_calls");
    } else {
        finish = json_object_new_string("stop");
    }
    mlen = strlen(json_object_to_json_string_ext(message, JSON_C_TO_STRING_PLAIN));
    snprintf(id, sizeof id, "chatcmpl-fake-%ld", seq);
    json_object_object_add(out, "id", json_object_new_string(id));
    json_object_object_add(out, "object", json_object_new_string("chat.completion"));
    json_object_object_add(out, "created", json_object_new_int64(1700000000));
    json_object_object_add(out, "model",
                           json_object_new_string(jstr(req, "model") ? jstr(req, "model") : "fake"));
    json_object_object_add(choice, "index", json_object_new_int(0));
    json_object_object_add(choice, "message", message);
    json_object_object_add(choice, "finish_reason", finish);
    json_object_array_add(choices, choice);
    json_object_object_add(out, "choices", choices);
    pt = (int64_t)body_len / 4;
    ct = (int64_t)mlen / 4;
    json_object_object_add(usage, "prompt_tokens", json_object_new_int64(pt));
    json_object_object_add(usage, "completion_tokens", json_object_new_int64(ct));
    json_object_object_add(usage, "total_tokens", json_object_new_int64(pt + ct));
    json_object_object_add(details, "cached_tokens", json_object_new_int64(0));
    json_object_object_add(usage, "prompt_tokens_details", details);
    json_object_object_add(out, "usage", usage);
    return out;
}

static char *serialize(json_object *o)
{
    return xstrdup(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
                                                         JSON_C_TO_STRING_NOSLASHESCAPE));
}

static char *error_body(const char *message, const char *type)
{
    json_object *o = json_object_new_object(), *e = json_object_new_object();
    char *s;
    json_object_object_add(e, "message", json_object_new_string(message));
    json_object_object_add(e, "type", json_object_new_string(type));
    json_object_object_add(e, "param", NULL);
    json_object_object_add(e, "code", NULL);
    json_object_object_add(o, "error", e);
    s = serialize(o);
    json_object_put(o);
    return s;
}

/* ---- answering ----------------------------------------------------------- */

static json_object *default_answer(int ep, json_object *req, size_t body_len, long seq,
                                   int dim)
{
    json_object *msg;

    switch (ep) {
    case EP_CHAT:
        msg = json_object_new_object();
        json_object_object_add(msg, "role", json_object_new_string("assistant"));
        json_object_object_add(msg, "content", json_object_new_string("ok"));
        return wrap_completion(msg, req, body_len, seq);
    case EP_EMBED:
        return default_embeddings(req, dim, body_len);
    default:
        return default_rerank(req, body_len);
    }
}

static void scripted_answer(json_object *e, int ep, json_object *req, size_t body_len, long seq,
                            reply *out)
{
    json_object *v;

    out->scripted = 1;
    out->status = json_object_object_get_ex(e, "status", &v) ? json_object_get_int(v) : 200;
    out->delay_ms = json_object_object_get_ex(e, "delay_ms", &v) ? (long)json_object_get_int64(v)
                                                                 : 0;
    out->drop = json_object_object_get_ex(e, "drop", &v) && json_object_get_boolean(v);
    if (json_object_object_get_ex(e, "headers", &v)) out->headers = v;
    if (json_object_object_get_ex(e, "raw", &v)) {
        out->body = xstrdup(json_object_get_string(v));
    } else if (json_object_object_get_ex(e, "body", &v)) {
        if (ep == EP_CHAT && out->status / 100 == 2 && json_object_is_type(v, json_type_object) &&
            !json_object_object_get_ex(v, "choices", NULL) &&
            !json_object_object_get_ex(v, "error", NULL)) {
            json_object *full = wrap_completion(json_object_get(v), req, body_len, seq);
            out->body = serialize(full);
            json_object_put(full);
        } else {
            out->body = serialize(v);
        }
    } else {
        out->body = xstrdup("");
    }
}

static int route(const char *path)
{
    char p[2048];
    const char *q = strchr(path, '?');
    size_t n = q ? (size_t)(q - path) : strlen(path);

    if (n >= sizeof p) return -1;
    memcpy(p, path, n);
    p[n] = '\0';
    while (n > 1 && p[n - 1] == '/') p[--n] = '\0';
    for (int i = 0; i < EP_COUNT; i++) {
        if (strcmp(p, ep_paths[i]) == 0) return i;
        if (strncmp(p, "/v1", 3) == 0 && strcmp(p + 3, ep_paths[i]) == 0) return i;
    }
    return -1;
}

/* Decides the reply to a complete request and fills the log's violations. */
static void decide(server *s, request *r, int rd, json_object *body, long seq,
                   json_object *violations, int *ep, reply *out)
{
    char msg[4096];
    size_t used = 0;

    *ep = route(r->path);
    if (rd == READ_INCOMPLETE) violation(violations, "incomplete request (client stopped sending)");
    else if (rd == READ_TOO_BIG) violation(violations, "request headers or body too large");
    else if (r->chunked) violation(violations, "chunked request body; send Content-Length");
    if (json_object_array_length(violations) == 0 && *ep < 0) {
        out->status = 404;
        snprintf(msg, sizeof msg, "no endpoint at %s", r->path);
        out->body = error_body(msg, "invalid_request_error");
        return;
    }
    if (json_object_array_length(violations) == 0 && strcmp(r->method, "POST") == 0) {
        if (r->content_length == -2) violation(violations, "invalid Content-Length");
        else if (r->content_length < 0) violation(violations, "no Content-Length");
    }
    if (json_object_array_length(violations) > 0) {
        out->status = rd == READ_INCOMPLETE ? 408 : rd == READ_TOO_BIG ? 413 : 411;
        out->body = error_body(json_object_get_string(json_object_array_get_idx(violations, 0)),
                               "invalid_request_error");
        return;
    }
    if (strcmp(r->method, "POST") != 0) violation(violations, "method is %s; expected POST", r->method);
    if (!content_type_json(jstr(r->headers, "content-type")))
        violation(violations, "Content-Type must be application/json");
    if (!json_object_is_type(body, json_type_object))
        violation(violations, "the body must be a JSON object");
    else if (*ep == EP_CHAT) check_chat(violations, body);
    else if (*ep == EP_EMBED) check_embeddings(violations, body);
    else check_rerank(violations, body);
    if (json_object_array_length(violations) > 0) {
        msg[0] = '\0';
        for (size_t i = 0; i < json_object_array_length(violations) && used < sizeof msg - 4; i++) {
            int w = snprintf(msg + used, sizeof msg - used, "%s%s", i ? "; " : "",
                             json_object_get_string(json_object_array_get_idx(violations, i)));
            used += w > 0 ? (size_t)w : 0;
        }
        out->status = 400;
        out->body = error_body(msg, "invalid_request_error");
        return;
    }
    if (s->next[*ep] < json_object_array_length(s->script[*ep])) {
        json_object *e = json_object_array_get_idx(s->script[*ep], s->next[*ep]++);
        scripted_answer(e, *ep, body, r->body_len, seq, out);
    } else {
        json_object *a = default_answer(*ep, body, r->body_len, seq, s->dim);
        out->status = 200;
        out->body = serialize(a);
        json_object_put(a);
    }
}

static void write_log(server *s, long seq, request *r, int ep, json_object *body,
                      json_object *violations, const reply *rep)
{
    json_object *o = json_object_new_object();
    const char *line;

    if (s->log_fd < 0) return;
    json_object_object_add(o, "n", json_object_new_int64(seq));
    json_object_object_add(o, "method", json_object_new_string(r->method));
    json_object_object_add(o, "path", json_object_new_string(r->path));
    json_object_object_add(o, "endpoint", ep >= 0 ? json_object_new_string(ep_names[ep]) : NULL);
    json_object_object_add(o, "headers", json_object_get(r->headers));
    json_object_object_add(o, "body", json_object_get(body));
    json_object_object_add(o, "violations", json_object_get(violations));
    json_object_object_add(o, "status", json_object_new_int(rep->drop ? 0 : rep->status));
    json_object_object_add(o, "scripted", json_object_new_boolean(rep->scripted));
    line = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
    {
        size_t n = strlen(line);
        char *buf = malloc(n + 2);
        if (buf == NULL) die("out of memory");
        memcpy(buf, line, n);
        buf[n] = '\n';
        /* One write per line: O_APPEND keeps lines whole. */
        if (write(s->log_fd, buf, n + 1) != (ssize_t)(n + 1)) die("log: %s", strerror(errno));
        free(buf);
    }
    json_object_put(o);
}

/* Waits delay_ms unless the client goes away first; 1 when it is gone. */
static int client_gone_during(int fd, long delay_ms)
{
    long long deadline = now_ms() + delay_ms;
    char junk[512];

    for (;;) {
        long long left = deadline - now_ms();
        struct pollfd p = {fd, POLLIN, 0};
        int r;
        if (left <= 0) return 0;
        if (stop_flag) return 1;
        r = poll(&p, 1, (int)(left > 200 ? 200 : left));
        if (r < 0 && errno != EINTR) return 1;
        if (r > 0) {
            if (p.revents & (POLLHUP | POLLERR)) return 1;
            if (recv(fd, junk, sizeof junk, MSG_DONTWAIT) <= 0) return 1;
        }
    }
}

static const char *reason(int status)
{
    switch (status) {
    case 200: return "OK";
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 408: return "Request Timeout";
    case 411: return "Length Required";
    case 413: return "Payload Too Large";
    case 429: return "Too Many Requests";
    case 500: return "Internal Server Error";
    case 502: return "Bad Gateway";
    case 503: return "Service Unavailable";
    default: return "Status";
    }
}

static void send_reply(int fd, const reply *rep)
{
    char head[8192];
    size_t blen = strlen(rep->body);
    int n = snprintf(head, sizeof head,
                     "HTTP/1.1 %d %s\r\nContent-Type: application/json\r\n"
                     "Content-Length: %zu\r\nConnection: close\r\n",
                     rep->status, reason(rep->status), blen);

    if (rep->headers != NULL) {
        json_object_object_foreach(rep->headers, k, v) {
            if (n > 0 && (size_t)n < sizeof head)
                n += snprintf(head + n, sizeof head - (size_t)n, "%s: %s\r\n", k,
                              json_object_get_string(v));
        }
    }
    if (n > 0 && (size_t)n < sizeof head) n += snprintf(head + n, sizeof head - (size_t)n, "\r\n");
    if (n <= 0 || (size_t)n >= sizeof head) return;
    if (send_all(fd, head, (size_t)n) == 0) send_all(fd, rep->body, blen);
}

/* Half-closes and reads until the client closes, so that unread request
 * bytes do not turn the close into a reset that eats the answer. */
static void linger_close(int fd)
{
    long long deadline = now_ms() + 1000;
    char junk[4096];

    shutdown(fd, SHUT_WR);
    while (wait_readable(fd, deadline) && recv(fd, junk, sizeof junk, 0) > 0) {
    }
    close(fd);
}

static void serve_one(server *s, int fd)
{
    request r;
    reply rep;
    json_object *body = NULL, *violations;
    int rd, ep = -1, valid = 0;
    long seq;

    memset(&r, 0, sizeof r);
    memset(&rep, 0, sizeof rep);
    r.headers = json_object_new_object();
    r.content_length = -1;
    rd = read_request(fd, &r);
    if (rd == READ_NOTHING) {
        json_object_put(r.headers);
        close(fd);
        return;
    }
    seq = ++s->served;
    violations = json_object_new_array();
    if (rd == READ_OK && r.body != NULL) {
        body = parse_json(r.body, r.body_len, &valid);
        if (!valid) violation(violations, "the body is not valid JSON");
    }
    decide(s, &r, rd, body, seq, violations, &ep, &rep);
    write_log(s, seq, &r, ep, body, violations, &rep);
    if (rep.drop || (rep.delay_ms > 0 && client_gone_during(fd, rep.delay_ms))) {
        close(fd);
    } else {
        send_reply(fd, &rep);
        linger_close(fd);
    }
    free(rep.body);
    free(r.body);
    json_object_put(body);
    json_object_put(violations);
    json_object_put(r.headers);
}

/* ---- main ---------------------------------------------------------------- */

static void write_port_file(const char *file, int port)
{
    size_t n = strlen(file);
    char *tmp = malloc(n + 5);
    FILE *f;

    if (tmp == NULL) die("out of memory");
    memcpy(tmp, file, n);
    memcpy(tmp + n, ".tmp", 5);
    f = fopen(tmp, "w");
    if (f == NULL || fprintf(f, "%d\n", port) < 0 || fclose(f) != 0)
        die("%s: %s", tmp, strerror(errno));
    if (rename(tmp, file) != 0) die("%s: %s", file, strerror(errno));
    free(tmp);
}

static int open_listener(void)
{
    struct sockaddr_in a;
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;

    if (fd < 0) die("socket: %s", strerror(errno));
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = 0;
    if (bind(fd, (struct sockaddr *)&a, sizeof a) != 0) die("bind: %s", strerror(errno));
    if (listen(fd, 64) != 0) die("listen: %s", strerror(errno));
    return fd;
}

static int bound_port(int fd)
{
    struct sockaddr_in a;
    socklen_t len = sizeof a;
    if (getsockname(fd, (struct sockaddr *)&a, &len) != 0) die("getsockname: %s", strerror(errno));
    return ntohs(a.sin_port);
}

static void usage(void)
{
    die("usage: fake_openai --port-file FILE [--script FILE] [--log FILE] [--dim N] "
        "[--max-requests N]");
}

int main(int argc, char **argv)
{
    server s;
    const char *port_file = NULL, *script = NULL, *log = NULL;
    struct sigaction sa;

    memset(&s, 0, sizeof s);
    s.dim = 8;
    s.log_fd = -1;
    for (int i = 1; i < argc; i++) {
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (v == NULL) usage();
        if (strcmp(argv[i], "--port-file") == 0) port_file = v;
        else if (strcmp(argv[i], "--script") == 0) script = v;
        else if (strcmp(argv[i], "--log") == 0) log = v;
        else if (strcmp(argv[i], "--dim") == 0) s.dim = (int)parse_number("--dim", v, 1, DIM_MAX);
        else if (strcmp(argv[i], "--max-requests") == 0)
            s.max_requests = parse_number("--max-requests", v, 1, 1000000000L);
        else usage();
        i++;
    }
    if (port_file == NULL) usage();
    for (int i = 0; i < EP_COUNT; i++) s.script[i] = json_object_new_array();
    if (script != NULL) load_script(&s, script);
    if (log != NULL && (s.log_fd = open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644)) < 0)
        die("%s: %s", log, strerror(errno));

    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal; /* no SA_RESTART: poll returns EINTR */
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);

    s.listen_fd = open_listener();
    write_port_file(port_file, bound_port(s.listen_fd));
    while (!stop_flag && (s.max_requests == 0 || s.served < s.max_requests)) {
        struct pollfd p = {s.listen_fd, POLLIN, 0};
        int fd;
        if (poll(&p, 1, 250) <= 0) continue;
        fd = accept4(s.listen_fd, NULL, NULL, SOCK_CLOEXEC);
        if (fd < 0) continue;
        serve_one(&s, fd);
    }
    close(s.listen_fd);
    if (s.log_fd >= 0) close(s.log_fd);
    for (int i = 0; i < EP_COUNT; i++) json_object_put(s.script[i]);
    return 0;
}
