/* SPDX-License-Identifier: Apache-2.0 */
/* Symbol seeds of a task text (see cn_seeds.h).
 *
 * A hand-written scanner rather than one big regular expression: the rules
 * (what ends a token, which trailing punctuation is prose, when a quote is
 * an apostrophe) read better as code, and the text is scanned once. */
#include "cn_seeds.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define SEEDS_DEFAULT_LIMIT 8
#define SEED_MAX_LEN 256
#define ERROR_MAX_LEN 200

/* English words and general programming terms that look like code when
 * capitalised or written in capitals; compared case-insensitively. */
static const char *const stopwords[] = {
    "a", "an", "and", "are", "as", "at", "be", "but", "by", "can", "do", "does", "for", "from",
    "has", "have", "how", "if", "in", "is", "it", "its", "not", "of", "on", "or", "so", "the",
    "this", "that", "then", "there", "these", "they", "to", "was", "we", "what", "when", "where",
    "which", "while", "why", "with", "you", "also", "all", "any", "some", "should", "would",
    "could", "will", "shall", "may", "might", "must", "our", "your", "e.g", "i.e", "etc", "vs",
    "note", "todo", "fixme", "xxx", "hack", "warning", "error", "info", "debug", "bug", "fix",
    "api", "url", "uri", "http", "https", "json", "xml", "html", "css", "sql", "yaml", "csv", "pdf",
    "utf", "utf-8", "utf8", "ascii", "eof", "cli", "gui", "cpu", "gpu", "ram", "io", "os", "id",
    "null", "none", "nil", "true", "false", "self", "cls", "args", "kwargs", "readme",
    "tldr", "fyi", "asap", "imo", "afaik", "pr", "ci", "ok", "n/a", "and/or", "traceback",
    "__init__", "__main__", "<module>", "main()"};

static bool is_stopword(const char *s)
{
    for (size_t i = 0; i < sizeof stopwords / sizeof stopwords[0]; i++)
        if (strcasecmp(s, stopwords[i]) == 0) return true;
    return false;
}

static bool is_ident_start(char c) { return isalpha((unsigned char)c) || c == '_'; }
static bool is_ident_char(char c) { return isalnum((unsigned char)c) || c == '_'; }

/* Characters a code-like token may hold (a trailing "()" is read apart). */
static bool is_token_char(char c)
{
    return is_ident_char(c) || c == '.' || c == '/' || c == ':' || c == '#' || c == '-' || c == '$';
}

/* ---- shape tests -------------------------------------------------------- */

static bool has_alpha(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (isalpha((unsigned char)s[i])) return true;
    return false;
}

static bool has_digit(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (isdigit((unsigned char)s[i])) return true;
    return false;
}

/* Python's str.isupper(): some cased letter, none lower case. */
static bool all_upper(const char *s, size_t n)
{
    bool cased = false;
    for (size_t i = 0; i < n; i++) {
        if (islower((unsigned char)s[i])) return false;
        if (isupper((unsigned char)s[i])) cased = true;
    }
    return cased;
}

static bool all_lower(const char *s, size_t n)
{
    bool cased = false;
    for (size_t i = 0; i < n; i++) {
        if (isupper((unsigned char)s[i])) return false;
        if (islower((unsigned char)s[i])) cased = true;
    }
    return cased;
}

static size_t count_alpha(const char *s, size_t n)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++) k += isalpha((unsigned char)s[i]) != 0;
    return k;
}

/* camelCase or CamelCase: a capital after a lower-case letter or digit, or
 * a run of capitals ending a word ("HTTPServer"). */
static bool is_camel(const char *s, size_t n)
{
    for (size_t i = 1; i < n; i++) {
        unsigned char p = (unsigned char)s[i - 1], c = (unsigned char)s[i];
        if (isupper(c) && (islower(p) || isdigit(p))) return true;
        if (i + 1 < n && isupper(p) && isupper(c) && islower((unsigned char)s[i + 1])) return true;
    }
    return false;
}

/* One part of a dotted name that on its own points at code rather than
 * prose: snake_case, camelCase, a capitalised class name, ALLCAPS, or
 * letters with digits ("float64"). */
static bool specific_part(const char *s, size_t n)
{
    if (n == 0 || !has_alpha(s, n)) return false;
    if (memchr(s, '_', n) != NULL) return true;
    if (is_camel(s, n)) return true;
    if (isupper((unsigned char)s[0]) && n >= 3) return true;
    if (all_upper(s, n) && count_alpha(s, n) >= 3) return true;
    return has_digit(s, n);
}

static const char *const source_exts[] = {
    "py", "pyi", "c", "h", "cc", "cpp", "cxx", "hpp", "hh", "java", "kt", "go", "rs", "js", "jsx",
    "mjs", "ts", "tsx", "rb", "php", "cs", "swift", "scala", "m", "mm", "sh", "pl", "lua", "r",
    "yaml", "yml", "toml", "json", "cfg", "ini", "md", "rst", "txt", "sql", "proto", "gradle", "xml"};

static bool is_source_ext(const char *e, size_t n)
{
    for (size_t i = 0; i < sizeof source_exts / sizeof source_exts[0]; i++)
        if (strlen(source_exts[i]) == n && strncasecmp(source_exts[i], e, n) == 0) return true;
    return false;
}

/* "name.py": the last dotted part is a source extension. */
static bool is_file_name(const char *s, size_t n)
{
    const char *dot = NULL;
    for (size_t i = 0; i < n; i++)
        if (s[i] == '.') dot = s + i;
    return dot != NULL && dot != s && is_source_ext(dot + 1, (size_t)(s + n - dot - 1));
}

static const char *const tlds[] = {"com", "org", "net", "io", "dev", "edu", "gov", "ai", "co",
                                   "uk", "de", "fr", "info", "app", "cloud"};

/* "example.com", "www.python.org": a host name, not code. */
static bool is_domain(const char *s, size_t n)
{
    const char *dot = NULL;
    if (!all_lower(s, n) && has_alpha(s, n)) return false;
    if (n > 4 && strncasecmp(s, "www.", 4) == 0) return true;
    for (size_t i = 0; i < n; i++)
        if (s[i] == '.') dot = s + i;
    if (dot == NULL) return false;
    for (size_t i = 0; i < sizeof tlds / sizeof tlds[0]; i++)
        if (strlen(tlds[i]) == (size_t)(s + n - dot - 1) && strncasecmp(dot + 1, tlds[i], strlen(tlds[i])) == 0)
            return true;
    return false;
}

/* Whether every dot separates two identifier parts ("a.b.c", not "1.2"). */
static bool is_dotted_name(const char *s, size_t n)
{
    bool dot = false, at_start = true;
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '.') {
            if (at_start) return false;
            dot = at_start = true;
        } else if (at_start) {
            if (!is_ident_start(s[i])) return false;
            at_start = false;
        } else if (!is_ident_char(s[i])) {
            return false;
        }
    }
    return dot && !at_start;
}

/* A seed is a single word of code characters with a letter in it. */
static bool symbol_shape(const char *s, size_t n)
{
    if (n == 0 || !has_alpha(s, n)) return false;
    for (size_t i = 0; i < n; i++)
        if (!is_token_char(s[i]) && s[i] != '<' && s[i] != '>' && s[i] != '~') return false;
    return true;
}

bool cn_seed_is_specific(const char *seed)
{
    const char *s = seed;
    size_t n;
    if (s == NULL) return false;
    while (*s && (isspace((unsigned char)*s) || *s == '`' || *s == '\'' || *s == '"')) s++;
    n = strlen(s);
    while (n > 0 && (isspace((unsigned char)s[n - 1]) || s[n - 1] == '`' || s[n - 1] == '\'' || s[n - 1] == '"'))
        n--;
    if (n >= 2 && s[n - 2] == '(' && s[n - 1] == ')') n -= 2;
    if (!symbol_shape(s, n)) return false;
    if (memchr(s, '/', n) || memchr(s, '#', n)) return true;
    for (size_t i = 0; i + 1 < n; i++)
        if (s[i] == ':' && s[i + 1] == ':') return true;
    if (memchr(s, '.', n) != NULL) {
        size_t a = 0;
        if (is_domain(s, n)) return false;
        if (is_file_name(s, n)) return true;
        for (size_t i = 0; i <= n; i++) {
            if (i == n || s[i] == '.') {
                if (specific_part(s + a, i - a)) return true;
                a = i + 1;
            }
        }
        return false;
    }
    if (memchr(s, '_', n) != NULL) return true;
    if (is_camel(s, n)) return true;
    if (all_upper(s, n) && n >= 3) return true;
    return has_digit(s, n) && !all_lower(s, n);
}

/* ---- the seed list ------------------------------------------------------ */

typedef struct seed_list {
    cn_strv v;
    size_t limit;
} seed_list;

/* The length of a seed without a call's "()": "inner()" and "inner" are
 * one seed. */
static size_t key_len(const char *s, size_t n)
{
    return n > 2 && s[n - 2] == '(' && s[n - 1] == ')' ? n - 2 : n;
}

static bool seen_ci(const cn_strv *v, const char *s, size_t n)
{
    size_t k = key_len(s, n);
    for (size_t i = 0; i < v->len; i++)
        if (key_len(v->items[i], strlen(v->items[i])) == k && strncasecmp(v->items[i], s, k) == 0) return true;
    return false;
}

/* Adds s[0..n) unless full, empty, too long or already there.  Returns
 * CN_ENOMEM or 0. */
static int add_seed(seed_list *l, const char *s, size_t n)
{
    while (n > 0 && isspace((unsigned char)*s)) s++, n--;
    while (n > 0 && isspace((unsigned char)s[n - 1])) n--;
    if (n == 0 || n > SEED_MAX_LEN || l->v.len >= l->limit || seen_ci(&l->v, s, n)) return 0;
    return cn_strv_push_owned(&l->v, cn_strndup(s, n)) < 0 ? CN_ENOMEM : 0;
}

static bool is_prose_tail(char c) { return c == '.' || c == ':' || c == '-' || c == '/' || c == '#' || c == '$'; }

/* Trims a raw token to the code name it holds: prose punctuation at both
 * ends, a leading "./", a trailing ":12" or ":12-30" line suffix. */
static void trim_token(const char **sp, size_t *np)
{
    const char *s = *sp;
    size_t n = *np;
    while (n > 0 && (*s == '.' || *s == ':' || *s == '-' || *s == '#' || *s == '$') &&
           !(n > 1 && s[0] == '.' && s[1] == '/'))
        s++, n--;
    while (n > 1 && s[0] == '.' && s[1] == '/') s += 2, n -= 2;
    for (;;) {
        size_t k = n;
        while (k > 0 && (isdigit((unsigned char)s[k - 1]) || s[k - 1] == '-')) k--;
        if (k < n && k > 0 && s[k - 1] == ':') n = k - 1;
        else break;
    }
    while (n > 0 && is_prose_tail(s[n - 1])) n--;
    *sp = s;
    *np = n;
}

/* Whether a token (trimmed, maybe ending in "()") is code-like. */
static bool is_codeish(const char *s, size_t n)
{
    bool call = n > 2 && s[n - 2] == '(' && s[n - 1] == ')';
    size_t m = call ? n - 2 : n;
    if (!has_alpha(s, m)) return false;
    if (call) return true;
    if (memchr(s, '/', m) != NULL) return true;
    for (size_t i = 0; i + 1 < m; i++)
        if (s[i] == ':' && s[i + 1] == ':') return true;
    if (memchr(s, '#', m) != NULL) return true;
    if (is_dotted_name(s, m) || is_file_name(s, m)) return true;
    {   /* "pool.py:ConnectionPool" names a symbol in a file; "key:value" is prose */
        const char *colon = memchr(s, ':', m);
        if (colon != NULL) return is_file_name(s, (size_t)(colon - s)) && is_ident_start(colon[1]);
    }
    if (memchr(s, '_', m) != NULL) return true;
    if (is_camel(s, m)) return true;
    return all_upper(s, m) && count_alpha(s, m) >= 3;
}

/* Considers one candidate token; a hyphenated word that is not a path is
 * read as its parts ("thread-safe", "non-CamelCase"). */
static int consider(seed_list *l, const char *s, size_t n)
{
    char buf[SEED_MAX_LEN + 1];
    trim_token(&s, &n);
    if (n == 0 || n > SEED_MAX_LEN) return 0;
    if (memchr(s, '-', n) != NULL && memchr(s, '/', n) == NULL) {
        size_t a = 0;
        for (size_t i = 0; i <= n; i++) {
            if (i == n || s[i] == '-') {
                int rc = i > a ? consider(l, s + a, i - a) : 0;
                if (rc < 0) return rc;
                a = i + 1;
            }
        }
        return 0;
    }
    memcpy(buf, s, n);
    buf[n] = '\0';
    if (is_stopword(buf) || !is_codeish(s, n)) return 0;
    if (memchr(s, '.', n) != NULL && memchr(s, '/', n) == NULL && is_domain(s, n)) return 0;
    return add_seed(l, s, n);
}

/* Skips a URL ("scheme://...") starting at s; returns its length or 0. */
static size_t url_len(const char *s)
{
    size_t i = 0;
    while (isalpha((unsigned char)s[i])) i++;
    if (i == 0 || strncmp(s + i, "://", 3) != 0) return 0;
    i += 3;
    while (s[i] && !isspace((unsigned char)s[i]) && s[i] != '`' && s[i] != '"' && s[i] != '\'' &&
           s[i] != ')' && s[i] != '>')
        i++;
    return i;
}

static int scan_tokens(seed_list *l, const char *text)
{
    const char *p = text;
    while (*p && l->v.len < l->limit) {
        size_t u = url_len(p), n = 0;
        int rc;
        if (u > 0) {
            p += u;
            continue;
        }
        if (!is_token_char(*p)) {
            p++;
            continue;
        }
        while (is_token_char(p[n])) n++;
        if (p[n] == '(' && p[n + 1] == ')' && n > 0 && is_ident_char(p[n - 1])) n += 2;
        if ((rc = consider(l, p, n)) < 0) return rc;
        p += n;
    }
    return 0;
}

/* The code name of a backtick span: "foo(x, y)" is "foo()", "obj.m(1)" is
 * "obj.m()"; a span with blanks that is no call is not a name. */
static int add_backtick(seed_list *l, const char *s, size_t n)
{
    const char *paren;
    while (n > 0 && isspace((unsigned char)*s)) s++, n--;
    while (n > 0 && isspace((unsigned char)s[n - 1])) n--;
    paren = memchr(s, '(', n);
    if (paren != NULL && paren > s && s[n - 1] == ')') {
        char buf[SEED_MAX_LEN + 3];
        size_t m = (size_t)(paren - s);
        if (m > SEED_MAX_LEN || !symbol_shape(s, m)) return 0;
        memcpy(buf, s, m);
        memcpy(buf + m, "()", 3);
        return add_seed(l, buf, m + 2);
    }
    if (!symbol_shape(s, n)) return 0;
    trim_token(&s, &n);
    return add_seed(l, s, n);
}

static int scan_backticks(seed_list *l, const char *text)
{
    const char *p = text;
    while ((p = strchr(p, '`')) != NULL && l->v.len < l->limit) {
        const char *q;
        size_t ticks = 0;
        while (p[ticks] == '`') ticks++;
        if (ticks > 1) {      /* a ``` fence or ``x``: skip the run */
            p += ticks;
            continue;
        }
        q = strchr(p + 1, '`');
        if (q == NULL) break;
        if (memchr(p + 1, '\n', (size_t)(q - p - 1)) == NULL) {
            int rc = add_backtick(l, p + 1, (size_t)(q - p - 1));
            if (rc < 0) return rc;
        }
        p = q + 1;
    }
    return 0;
}

/* ---- stack-trace frames ------------------------------------------------- */

/* `File "a/b.py", line 12, in func`: the path and the function. */
static int python_frame(seed_list *l, const char *p)
{
    const char *path = p + 6, *end = strchr(path, '"'), *in;
    int rc;
    if (end == NULL || memchr(path, '\n', (size_t)(end - path)) != NULL) return 0;
    {
        const char *s = path;
        size_t n = (size_t)(end - path);
        trim_token(&s, &n);
        if ((rc = add_seed(l, s, n)) < 0) return rc;
    }
    in = strstr(end, ", in ");
    if (in == NULL || memchr(end, '\n', (size_t)(in - end)) != NULL) return 0;
    in += 5;
    if (is_ident_start(*in)) {
        size_t n = 0;
        char buf[SEED_MAX_LEN + 1];
        while (is_ident_char(in[n]) || in[n] == '.') n++;
        if (n <= SEED_MAX_LEN) {
            memcpy(buf, in, n);
            buf[n] = '\0';
            if (!is_stopword(buf) && (rc = add_seed(l, in, n)) < 0) return rc;
        }
    }
    return 0;
}

/* `at pkg.Class.method(File.java:12)`: the method and the file. */
static int java_frame(seed_list *l, const char *p)
{
    const char *name = p + 3, *open, *close;
    size_t n = 0;
    int rc;
    while (is_ident_char(name[n]) || name[n] == '.' || name[n] == '$' || name[n] == '<' || name[n] == '>') n++;
    open = name + n;
    if (n == 0 || *open != '(' || (close = strchr(open, ')')) == NULL) return 0;
    if (memchr(name, '.', n) == NULL) return 0;
    if ((rc = add_seed(l, name, n)) < 0) return rc;
    {
        const char *f = open + 1;
        size_t m = (size_t)(close - f);
        trim_token(&f, &m);
        if (m > 0 && is_file_name(f, m)) return add_seed(l, f, m);
    }
    return 0;
}

/* Python prints the innermost call last, so its frames are read last to
 * first: the frame that raised comes first among the seeds. */
static int scan_python_frames(seed_list *l, const char *text)
{
    const char *frames[64];
    size_t n = 0;
    for (const char *p = text; (p = strstr(p, "File \"")) != NULL && n < 64; p += 6)
        if (p == text || !is_token_char(p[-1])) frames[n++] = p;
    while (n > 0) {
        int rc = python_frame(l, frames[--n]);
        if (rc < 0) return rc;
    }
    return 0;
}

static int scan_frames(seed_list *l, const char *text)
{
    int rc = scan_python_frames(l, text);
    for (const char *p = text; rc == 0 && *p && l->v.len < l->limit; p++) {
        bool bol = p == text || !is_token_char(p[-1]);
        if (bol && strncmp(p, "at ", 3) == 0 && is_ident_start(p[3])) rc = java_frame(l, p);
    }
    return rc;
}

int cn_seeds_extract(const char *text, const cn_strv *explicit_seeds, size_t limit, cn_strv *out)
{
    seed_list l = {CN_STRV_INIT, limit ? limit : SEEDS_DEFAULT_LIMIT};
    int rc = 0;

    if (text == NULL) text = "";
    for (size_t i = 0; explicit_seeds && i < explicit_seeds->len && rc == 0; i++)
        if (explicit_seeds->items[i]) rc = add_seed(&l, explicit_seeds->items[i], strlen(explicit_seeds->items[i]));
    if (rc == 0) rc = scan_backticks(&l, text);
    if (rc == 0) rc = scan_frames(&l, text);
    if (rc == 0) rc = scan_tokens(&l, text);
    if (rc < 0) {
        cn_strv_free(&l.v);
        *out = (cn_strv)CN_STRV_INIT;
        return cn_error_set(CN_ENOMEM, "seed extraction: out of memory");
    }
    *out = l.v;
    return (int)out->len;
}

/* ---- policy ------------------------------------------------------------- */

const char *cn_seeds_policy_name(const char *policy)
{
    size_t a = 0, n;
    if (policy == NULL) return "all";
    while (isspace((unsigned char)policy[a])) a++;
    n = strlen(policy + a);
    while (n > 0 && isspace((unsigned char)policy[a + n - 1])) n--;
    if (n == 0 || (n == 3 && strncasecmp(policy + a, "all", 3) == 0)) return "all";
    if (n == 8 && strncasecmp(policy + a, "specific", 8) == 0) return "specific";
    return NULL;
}

int cn_seeds_filter(const cn_strv *in, const char *policy, cn_strv *out)
{
    const char *name = cn_seeds_policy_name(policy);
    bool all;
    *out = (cn_strv)CN_STRV_INIT;
    if (name == NULL)
        return cn_error_set(CN_EINVAL, "unsupported lsp_route seed policy '%s': use \"all\" or \"specific\"",
                            policy);
    all = strcmp(name, "all") == 0;
    for (size_t i = 0; in && i < in->len; i++) {
        if (!all && !cn_seed_is_specific(in->items[i])) continue;
        if (cn_strv_push(out, in->items[i]) < 0) {
            cn_strv_free(out);
            return cn_error_set(CN_ENOMEM, "seed filter: out of memory");
        }
    }
    return (int)out->len;
}

/* ---- error strings ------------------------------------------------------ */

/* A quoted message: a letter and a blank inside, not a path. */
static bool is_message(const char *s, size_t n)
{
    bool blank = false;
    for (size_t i = 0; i < n; i++) blank |= s[i] == ' ';
    return n >= 3 && blank && has_alpha(s, n) && memchr(s, '\n', n) == NULL;
}

static int add_message(seed_list *l, const char *s, size_t n)
{
    if (n > ERROR_MAX_LEN) n = ERROR_MAX_LEN;
    return add_seed(l, s, n);
}

/* "..." anywhere; '...' only where the quotes are not apostrophes (no
 * letter or digit right outside them). */
static int scan_quotes(seed_list *l, const char *text)
{
    for (const char *p = text; *p && l->v.len < l->limit; p++) {
        const char *q;
        char c = *p;
        int rc;
        if (c != '"' && c != '\'') continue;
        if (c == '\'' && p > text && isalnum((unsigned char)p[-1])) continue;
        q = p + 1;
        while (*q && *q != c && *q != '\n') q++;
        if (*q != c) continue;
        if (c == '\'' && isalnum((unsigned char)q[1])) continue;
        if (is_message(p + 1, (size_t)(q - p - 1)) && (rc = add_message(l, p + 1, (size_t)(q - p - 1))) < 0)
            return rc;
        p = q;
    }
    return 0;
}

/* "ValueError: bad value" on a line of its own: the message after the
 * exception name (quotes around it removed). */
static int scan_exception_lines(seed_list *l, const char *text)
{
    for (const char *line = text; *line && l->v.len < l->limit;) {
        const char *end = strchr(line, '\n'), *p = line, *name;
        size_t len;
        if (end == NULL) end = line + strlen(line);
        while (p < end && isspace((unsigned char)*p)) p++;
        name = p;
        while (p < end && (is_ident_char(*p) || *p == '.')) p++;
        len = (size_t)(p - name);
        if (len > 5 && p < end && *p == ':' &&
            ((len >= 5 && strncmp(p - 5, "Error", 5) == 0) || (len >= 9 && strncmp(p - 9, "Exception", 9) == 0) ||
             (len >= 7 && strncmp(p - 7, "Warning", 7) == 0))) {
            const char *m = p + 1, *e = end;
            while (m < e && isspace((unsigned char)*m)) m++;
            while (e > m && isspace((unsigned char)e[-1])) e--;
            if (e - m >= 2 && (*m == '"' || *m == '\'') && e[-1] == *m) m++, e--;
            if (e - m >= 3 && has_alpha(m, (size_t)(e - m))) {
                int rc = add_message(l, m, (size_t)(e - m));
                if (rc < 0) return rc;
            }
        }
        line = *end ? end + 1 : end;
    }
    return 0;
}

int cn_seeds_error_strings(const char *text, size_t limit, cn_strv *out)
{
    seed_list l = {CN_STRV_INIT, limit ? limit : SEEDS_DEFAULT_LIMIT};
    int rc;
    if (text == NULL) text = "";
    rc = scan_quotes(&l, text);
    if (rc == 0) rc = scan_exception_lines(&l, text);
    if (rc < 0) {
        cn_strv_free(&l.v);
        *out = (cn_strv)CN_STRV_INIT;
        return cn_error_set(CN_ENOMEM, "error-string extraction: out of memory");
    }
    *out = l.v;
    return (int)out->len;
}
