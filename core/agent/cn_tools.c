/* SPDX-License-Identifier: Apache-2.0 */
/* The default tools: dispatch, schemas, the capped output, argument
 * access and path confinement shared by read, grep, glob and bash. */
#include "cn_tools.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../util/cn_beneath.h"

#define DEFAULT_BASH_TIMEOUT_MS 30000L
#define DEFAULT_CALL_TIMEOUT_MS 5000L
#define DEFAULT_OUTPUT_CAP 30000u
#define DEFAULT_GLOB_CAP 200u

const char *const cn_default_tool_names[] = {"read", "grep", "glob", "bash", NULL};

void cn_tools_config_init(cn_tools_config *c, const char *root)
{
    memset(c, 0, sizeof *c);
    c->root = root;
    c->bash_enabled = false;
    c->bash_timeout_ms = DEFAULT_BASH_TIMEOUT_MS;
    c->call_timeout_ms = DEFAULT_CALL_TIMEOUT_MS;
    c->output_cap = DEFAULT_OUTPUT_CAP;
    c->glob_cap = DEFAULT_GLOB_CAP;
    c->bash_hint = "'enable_bash: true' in the harness spec";
}

bool cn_tool_is_default(const char *name)
{
    if (name == NULL) return false;
    for (size_t i = 0; cn_default_tool_names[i]; i++)
        if (strcmp(name, cn_default_tool_names[i]) == 0) return true;
    return false;
}

/* ---- schemas ------------------------------------------------------------- */

static const char read_schema[] =
    "{\"type\":\"function\",\"function\":{\"name\":\"read\",\"description\":"
    "\"Read a text file of the repository. Lines are shown with their 1-based number, a tab, "
    "then the text. Reads up to `limit` lines starting at line `offset`; a marker at the end "
    "says how to read on. Binary files are refused; very long lines are cut.\","
    "\"parameters\":{\"type\":\"object\",\"properties\":{"
    "\"file_path\":{\"type\":\"string\",\"description\":\"File path relative to the repository "
    "root\"},"
    "\"path\":{\"type\":\"string\",\"description\":\"The same as file_path (either name is "
    "accepted)\"},"
    "\"offset\":{\"type\":\"integer\",\"minimum\":1,\"description\":\"First line to show "
    "(1-based, default 1)\"},"
    "\"limit\":{\"type\":\"integer\",\"minimum\":1,\"description\":\"Number of lines to show "
    "(default 2000)\"}},"
    "\"required\":[\"file_path\"],\"additionalProperties\":false}}}";

static const char grep_schema[] =
    "{\"type\":\"function\",\"function\":{\"name\":\"grep\",\"description\":"
    "\"Search file contents with a Perl-compatible regular expression, line by line. Skips "
    ".git, binary files and build/dependency directories. Results are sorted by path.\","
    "\"parameters\":{\"type\":\"object\",\"properties\":{"
    "\"pattern\":{\"type\":\"string\",\"description\":\"PCRE2 regular expression\"},"
    "\"path\":{\"type\":\"string\",\"description\":\"File or directory to search, relative to "
    "the repository root (default: the whole repository)\"},"
    "\"glob\":{\"type\":\"string\",\"description\":\"Only files matching this glob, e.g. "
    "\\\"*.py\\\", \\\"*.{c,h}\\\" or \\\"src/**/*.ts\\\" (a glob without '/' matches file "
    "names)\"},"
    "\"output_mode\":{\"type\":\"string\",\"enum\":[\"content\",\"files_with_matches\","
    "\"count\"],\"description\":\"content: path:line:text (default); files_with_matches: "
    "paths only; count: path:number of matching lines\"},"
    "\"-i\":{\"type\":\"boolean\",\"description\":\"Case-insensitive match\"},"
    "\"case_insensitive\":{\"type\":\"boolean\",\"description\":\"The same as -i\"},"
    "\"-A\":{\"type\":\"integer\",\"minimum\":0,\"description\":\"Lines of context after each "
    "match (content mode)\"},"
    "\"-B\":{\"type\":\"integer\",\"minimum\":0,\"description\":\"Lines of context before each "
    "match (content mode)\"},"
    "\"-C\":{\"type\":\"integer\",\"minimum\":0,\"description\":\"Lines of context before and "
    "after each match (content mode)\"},"
    "\"head_limit\":{\"type\":\"integer\",\"minimum\":0,\"description\":\"Show at most this "
    "many lines or entries (0: no limit)\"}},"
    "\"required\":[\"pattern\"],\"additionalProperties\":false}}}";

static const char glob_schema[] =
    "{\"type\":\"function\",\"function\":{\"name\":\"glob\",\"description\":"
    "\"List repository files whose path matches a glob such as \\\"**/*.py\\\" or "
    "\\\"src/*.c\\\" ('*' stays within a directory, '**' spans directories, {a,b} gives "
    "alternatives). Paths are relative to the repository root, sorted.\","
    "\"parameters\":{\"type\":\"object\",\"properties\":{"
    "\"pattern\":{\"type\":\"string\",\"description\":\"Glob matched against paths relative to "
    "`path`\"},"
    "\"path\":{\"type\":\"string\",\"description\":\"Directory to search, relative to the "
    "repository root (default: the whole repository)\"}},"
    "\"required\":[\"pattern\"],\"additionalProperties\":false}}}";

static const char bash_schema[] =
    "{\"type\":\"function\",\"function\":{\"name\":\"bash\",\"description\":"
    "\"Run a shell command (/bin/sh -c) in the repository root with no input. Standard output "
    "and standard error are returned together, followed by the exit status. The command is "
    "killed when it runs too long. Prefer read, grep and glob for looking at files.\","
    "\"parameters\":{\"type\":\"object\",\"properties\":{"
    "\"command\":{\"type\":\"string\",\"description\":\"The command line\"},"
    "\"timeout\":{\"type\":\"integer\",\"minimum\":1,\"description\":\"Milliseconds the command may "
    "run before it is stopped (default and most: the server's limit)\"}},"
    "\"required\":[\"command\"],\"additionalProperties\":false}}}";

json_object *cn_tool_schema(const char *name)
{
    const char *text = NULL;
    if (name == NULL) return NULL;
    if (strcmp(name, "read") == 0) text = read_schema;
    else if (strcmp(name, "grep") == 0) text = grep_schema;
    else if (strcmp(name, "glob") == 0) text = glob_schema;
    else if (strcmp(name, "bash") == 0) text = bash_schema;
    return text ? json_tokener_parse(text) : NULL;
}

/* The parameters object of a tool's schema (borrowed from `schema`). */
static json_object *schema_params(json_object *schema)
{
    json_object *fn = NULL, *params = NULL;
    if (json_object_object_get_ex(schema, "function", &fn)) json_object_object_get_ex(fn, "parameters", &params);
    return params;
}

json_object *cn_tools_schema(const cn_tools_config *c, const char *name)
{
    json_object *s = cn_tool_schema(name), *props = NULL, *t = NULL;
    long limit = c && c->bash_timeout_ms > 0 ? c->bash_timeout_ms : DEFAULT_BASH_TIMEOUT_MS;
    /* bash's timeout can only shorten the server's limit: say which */
    if (s != NULL && strcmp(name, "bash") == 0 && json_object_object_get_ex(schema_params(s), "properties", &props) &&
        json_object_object_get_ex(props, "timeout", &t))
        json_object_object_add(t, "maximum", json_object_new_int64(limit));
    return s;
}

/* Refuses an argument the tool's schema does not list, naming it and
 * those it takes: a misspelt argument silently ignored would leave the
 * model believing it was obeyed. */
static int check_known_args(const char *name, json_object *args)
{
    json_object *s, *props = NULL;
    int rc = 0;
    if (args == NULL) return 0;
    s = cn_tool_schema(name);
    if (s == NULL || !json_object_object_get_ex(schema_params(s), "properties", &props)) {
        json_object_put(s);
        return cn_error_set(CN_ENOMEM, "out of memory");
    }
    json_object_object_foreach(args, key, val) {
        (void)val;
        if (!json_object_object_get_ex(props, key, NULL)) {
            cn_buf b = CN_BUF_INIT;
            size_t i = 0;
            json_object_object_foreach(props, pk, pv) {
                (void)pv;
                cn_buf_printf(&b, "%s%s", i++ ? ", " : "", pk);
            }
            rc = cn_error_set(CN_EINVAL, "tool '%s': unknown argument '%s' (it takes: %s)", name, key,
                              b.data ? b.data : "");
            cn_buf_free(&b);
            break;
        }
    }
    json_object_put(s);
    return rc;
}

/* ---- dispatch ------------------------------------------------------------ */

/* A copy of the caller's configuration with unset limits at their defaults. */
static cn_tools_config effective_config(const cn_tools_config *c)
{
    cn_tools_config e = *c;
    if (e.bash_timeout_ms <= 0) e.bash_timeout_ms = DEFAULT_BASH_TIMEOUT_MS;
    if (e.call_timeout_ms <= 0) e.call_timeout_ms = DEFAULT_CALL_TIMEOUT_MS;
    if (e.output_cap == 0) e.output_cap = DEFAULT_OUTPUT_CAP;
    if (e.glob_cap == 0) e.glob_cap = DEFAULT_GLOB_CAP;
    if (e.bash_hint == NULL) e.bash_hint = "'enable_bash: true' in the harness spec";
    return e;
}

int cn_tool_run(const cn_tools_config *c, const char *name, json_object *args, char **output)
{
    cn_tools_config e;
    int rc;

    if (output == NULL) return cn_error_set(CN_EINVAL, "cn_tool_run: output is NULL");
    *output = NULL;
    if (c == NULL || c->root == NULL || c->root[0] != '/')
        return cn_error_set(CN_ENOCONTEXT, "tool '%s' needs a repository root (an absolute "
                                           "path) and none was set", name ? name : "?");
    if (!cn_tool_is_default(name))
        return cn_error_set(CN_ENOTFOUND, "unknown tool '%s'; the default tools are read, grep, "
                                          "glob and bash", name ? name : "(null)");
    if (args != NULL && !json_object_is_type(args, json_type_object))
        return cn_error_set(CN_EINVAL, "tool '%s': arguments must be a JSON object, got %s",
                            name, json_type_to_name(json_object_get_type(args)));
    if ((rc = check_known_args(name, args)) < 0) return rc;
    e = effective_config(c);
    /* One deadline for the whole call: none may hold a worker of the
     * MCP server for long. */
    e.deadline = cn_tools__now_ms() + e.call_timeout_ms;
    if (strcmp(name, "read") == 0) rc = cn_tools__read(&e, args, output);
    else if (strcmp(name, "grep") == 0) rc = cn_tools__grep(&e, args, output);
    else if (strcmp(name, "glob") == 0) rc = cn_tools__glob(&e, args, output);
    else rc = cn_tools__bash(&e, args, output);
    /* a cancelled call answers nothing, whatever it found so far */
    if (e.cancel != NULL && atomic_load(e.cancel))
        rc = cn_error_set(CN_ECANCELED, "tool '%s': the call was cancelled", name);
    if (rc < 0) {
        free(*output);
        *output = NULL;
    }
    return rc;
}

/* ---- capped output ------------------------------------------------------- */

void cn_tools__out_init(cn_tools_out *o, size_t cap)
{
    cn_buf b = CN_BUF_INIT;
    o->buf = b;
    o->cap = cap;
    o->dropped = 0;
}

bool cn_tools__out_full(const cn_tools_out *o)
{
    return o->dropped > 0 || o->buf.len >= o->cap;
}

int cn_tools__out_append(cn_tools_out *o, const char *s, size_t n)
{
    size_t room;
    if (o->dropped > 0) {
        o->dropped += n;
        return 0;
    }
    room = o->cap > o->buf.len ? o->cap - o->buf.len : 0;
    if (n > room) {
        o->dropped = n - room;
        n = room;
    }
    if (n > 0 && cn_buf_append(&o->buf, s, n) < 0)
        return cn_error_set(CN_ENOMEM, "out of memory building tool output");
    return 0;
}

int cn_tools__out_printf(cn_tools_out *o, const char *fmt, ...)
{
    char small[512];
    va_list ap;
    int n;

    va_start(ap, fmt);
    n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0) return cn_error_set(CN_EINVAL, "cannot format tool output");
    if ((size_t)n < sizeof small) return cn_tools__out_append(o, small, (size_t)n);
    {
        cn_buf tmp = CN_BUF_INIT;
        int rc;
        va_start(ap, fmt);
        rc = cn_buf_vprintf(&tmp, fmt, ap);
        va_end(ap);
        if (rc < 0) {
            cn_buf_free(&tmp);
            return cn_error_set(CN_ENOMEM, "out of memory building tool output");
        }
        rc = cn_tools__out_append(o, tmp.data, tmp.len);
        cn_buf_free(&tmp);
        return rc;
    }
}

/* Largest cut <= n that does not split a UTF-8 sequence. */
static size_t utf8_cut(const char *s, size_t n)
{
    /* s[n] is readable (the next byte or the NUL); a cut at k is clean
     * when s[k] is not a continuation byte.  Look back at most 3 bytes. */
    size_t k = n;
    while (k > 0 && n - k < 3 && ((unsigned char)s[k] & 0xC0) == 0x80) k--;
    return ((unsigned char)s[k] & 0xC0) == 0x80 ? n : k;
}

int cn_tools__out_line_part(cn_tools_out *o, const char *s, size_t kept, size_t total)
{
    size_t cut;
    int rc;
    if (total == kept && kept > 0 && s[kept - 1] == '\r') total = --kept;
    if (total <= CN_TOOLS_LINE_MAX) return cn_tools__out_append(o, s, total);
    cut = utf8_cut(s, CN_TOOLS_LINE_MAX);
    if ((rc = cn_tools__out_append(o, s, cut)) < 0) return rc;
    return cn_tools__out_printf(o, " [... line cut: %zu more bytes]", total - cut);
}

int cn_tools__out_line(cn_tools_out *o, const char *s, size_t n)
{
    return cn_tools__out_line_part(o, s, n, n);
}

int cn_tools__out_finish(cn_tools_out *o, char **output)
{
    return cn_tools__out_finish_with(o, NULL, output);
}

int cn_tools__out_finish_with(cn_tools_out *o, const char *footer, char **output)
{
    *output = NULL;
    if (o->dropped > 0) {
        /* End the kept text at a line boundary so no line is shown half. */
        char *nl = o->buf.len ? memrchr(o->buf.data, '\n', o->buf.len) : NULL;
        size_t keep = nl ? (size_t)(nl - o->buf.data) + 1 : utf8_cut(o->buf.data, o->buf.len);
        o->dropped += o->buf.len - keep;
        o->buf.len = keep;
        if (o->buf.data) o->buf.data[keep] = '\0';
        if (keep > 0 && o->buf.data[keep - 1] != '\n') cn_buf_putc(&o->buf, '\n');
        cn_buf_printf(&o->buf, "[output capped at %zu bytes: %zu more bytes left out]\n", o->cap,
                      o->dropped);
    }
    if (footer && footer[0]) {
        if (o->buf.len > 0 && o->buf.data[o->buf.len - 1] != '\n') cn_buf_putc(&o->buf, '\n');
        cn_buf_puts(&o->buf, footer);
    }
    if (o->buf.oom) {
        cn_buf_free(&o->buf);
        return cn_error_set(CN_ENOMEM, "out of memory building tool output");
    }
    *output = cn_buf_steal(&o->buf);
    return *output ? 0 : cn_error_set(CN_ENOMEM, "out of memory");
}

void cn_tools__out_free(cn_tools_out *o)
{
    cn_buf_free(&o->buf);
}

/* ---- arguments ------------------------------------------------------------ */

static json_object *arg_get(json_object *args, const char *key)
{
    json_object *v = NULL;
    if (args == NULL || !json_object_object_get_ex(args, key, &v)) return NULL;
    return json_object_is_type(v, json_type_null) ? NULL : v;
}

int cn_tools__arg_str(json_object *args, const char *key, bool required, const char **out)
{
    json_object *v = arg_get(args, key);
    *out = NULL;
    if (v == NULL)
        return required ? cn_error_set(CN_EINVAL, "missing required argument '%s' (a string)", key)
                        : 0;
    if (!json_object_is_type(v, json_type_string))
        return cn_error_set(CN_EINVAL, "argument '%s' must be a string, got %s", key,
                            json_type_to_name(json_object_get_type(v)));
    *out = json_object_get_string(v);
    if (strlen(*out) != (size_t)json_object_get_string_len(v)) {
        *out = NULL;
        return cn_error_set(CN_EINVAL, "argument '%s' contains a NUL byte; refused", key);
    }
    return 0;
}

int cn_tools__arg_str2(json_object *args, const char *key, const char *alias, bool required, const char **out)
{
    const char *a = NULL, *b = NULL;
    int rc;

    *out = NULL;
    if ((rc = cn_tools__arg_str(args, key, false, &a)) < 0 || (rc = cn_tools__arg_str(args, alias, false, &b)) < 0)
        return rc;
    if (a != NULL && b != NULL && strcmp(a, b) != 0)
        return cn_error_set(CN_EINVAL, "arguments '%s' (\"%s\") and '%s' (\"%s\") name the same thing "
                                       "differently; give one of them", key, a, alias, b);
    *out = a ? a : b;
    if (*out == NULL && required)
        return cn_error_set(CN_EINVAL, "missing required argument '%s' (a string; '%s' is accepted too)", key,
                            alias);
    return 0;
}

const char *cn_tool_read_path(json_object *args)
{
    const char *p = NULL;
    if (cn_tools__arg_str2(args, "file_path", "path", false, &p) < 0) {
        cn_error_clear();
        return NULL;
    }
    return p;
}

int cn_tools__arg_long(json_object *args, const char *key, long def, long min, long *out)
{
    json_object *v = arg_get(args, key);
    long x;

    *out = def;
    if (v == NULL) return 0;
    if (json_object_is_type(v, json_type_int)) {
        int64_t i = json_object_get_int64(v);
        x = i > 1000000000 ? 1000000000 : i < -1000000000 ? -1000000000 : (long)i;
    } else if (json_object_is_type(v, json_type_double)) {
        double d = json_object_get_double(v);
        if (d != (double)(long)d)
            return cn_error_set(CN_EINVAL, "argument '%s' must be a whole number, got %g", key, d);
        x = (long)d;
    } else if (json_object_is_type(v, json_type_string)) {
        /* Models sometimes quote numbers; accept "12" but nothing looser. */
        const char *s = json_object_get_string(v);
        char *end = NULL;
        x = strtol(s, &end, 10);
        if (*s == '\0' || end == NULL || *end != '\0')
            return cn_error_set(CN_EINVAL, "argument '%s' must be an integer, got \"%s\"", key, s);
    } else {
        return cn_error_set(CN_EINVAL, "argument '%s' must be an integer, got %s", key,
                            json_type_to_name(json_object_get_type(v)));
    }
    if (x < min) return cn_error_set(CN_EINVAL, "argument '%s' must be at least %ld, got %ld", key,
                                     min, x);
    *out = x;
    return 0;
}

int cn_tools__arg_bool(json_object *args, const char *key, bool def, bool *out)
{
    json_object *v = arg_get(args, key);
    *out = def;
    if (v == NULL) return 0;
    if (json_object_is_type(v, json_type_boolean)) {
        *out = json_object_get_boolean(v) != 0;
        return 0;
    }
    if (json_object_is_type(v, json_type_string)) {
        const char *s = json_object_get_string(v);
        if (strcmp(s, "true") == 0 || strcmp(s, "false") == 0) {
            *out = s[0] == 't';
            return 0;
        }
    }
    return cn_error_set(CN_EINVAL, "argument '%s' must be true or false, got %s", key,
                        json_object_to_json_string(v));
}

/* ---- paths --------------------------------------------------------------- */

int cn_tools__open_root(const cn_tools_config *c)
{
    int fd = open(c->root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return cn_error_set(CN_EIO, "repository root %s: cannot open: %s", c->root,
                            strerror(errno));
    return fd;
}

int cn_tools__open(int rootfd, const char *rel, int flags)
{
    if (rel[0] == '\0') {
        int fd = openat(rootfd, ".", flags | O_CLOEXEC);
        return fd >= 0 ? fd : cn_error_set(CN_EIO, "repository root: cannot open: %s",
                                           strerror(errno));
    }
    return cn_open_beneath(rootfd, rel, flags);
}

int cn_tools__is_dir(int rootfd, const char *rel)
{
    struct stat st;
    int fd = cn_tools__open(rootfd, rel, O_PATH), dir;
    if (fd < 0) return fd;
    dir = fstat(fd, &st) == 0 && S_ISDIR(st.st_mode);
    close(fd);
    return dir;
}

bool cn_tools__late(const cn_tools_config *c)
{
    if (c->cancel != NULL && atomic_load(c->cancel)) return true;
    return c->deadline > 0 && cn_tools__now_ms() > c->deadline;
}

bool cn_tools__is_binary(const char *data, size_t len)
{
    return memchr(data, '\0', len < CN_TOOLS_BINARY_PROBE ? len : CN_TOOLS_BINARY_PROBE) != NULL;
}

long long cn_tools__now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}
