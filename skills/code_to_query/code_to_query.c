/* SPDX-License-Identifier: Apache-2.0 */
/* code_to_query: a code snippet, stack trace or error log -> a search query.
 *
 * Reads only its argument text; needs no index.  Recognises stack frames
 * (Python, Java/JavaScript/Rust "at ...", gdb/sanitizer "#N ... in f file:N",
 * compiler "file:N:C: error: ..."), exception lines ("KeyError: 'x'"),
 * file paths and identifiers, and ranks identifiers so that names specific
 * to the code (compound, frequent, named in frames) come before generic
 * words. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <codenib/skill.h>

#define MAX_TOKEN 256

typedef struct term {
    char *text;
    int score;
    int first;     /* order of first appearance */
} term;

typedef struct terms {
    term *items;
    size_t len, cap;
} terms;

typedef struct frame {
    char *file;
    long line;     /* 1-based as written; 0 when unknown */
    char *function;
} frame;

typedef struct scan {
    const cn_host *h;
    terms idents;
    terms paths;
    frame *frames;
    size_t n_frames, cap_frames;
    char **err_types;
    char **err_msgs;
    size_t n_errs, cap_errs;
    int order;
    int oom;
} scan;

static const char *const stopwords[] = {
    /* keywords of common languages and words that carry no location */
    "and", "as", "assert", "async", "await", "bool", "break", "case", "catch", "char", "class",
    "const", "continue", "def", "default", "del", "do", "double", "elif", "else", "enum",
    "except", "extern", "false", "final", "finally", "float", "for", "from", "func", "function",
    "global", "goto", "if", "import", "in", "int", "is", "lambda", "let", "long", "new", "nil",
    "none", "nonlocal", "not", "null", "or", "pass", "private", "protected", "public", "raise",
    "return", "self", "short", "signed", "sizeof", "static", "struct", "super", "switch", "this",
    "throw", "throws", "true", "try", "typedef", "union", "unsigned", "var", "void", "volatile",
    "while", "with", "yield", "the", "a", "an", "of", "to", "at", "on", "by", "be", "it", "line",
    "file", "most", "recent", "call", "last", "traceback", "error", "warning", "note", "was",
    "were", "has", "have", "not", "but", "when", "that", "got", "this", "there", "which", "into",
    "than", "then", "also", "are", "can", "cannot", "could", "should", "would", "will", "object",
    "type", "value", "main", "std", "string", "str", "list", "dict", "len", "print", "printf",
    NULL,
};

static int is_stopword(const char *w)
{
    char low[64];
    size_t n = strlen(w);
    if (n >= sizeof low) return 0;
    for (size_t i = 0; i <= n; i++) low[i] = (char)tolower((unsigned char)w[i]);
    for (size_t i = 0; stopwords[i]; i++)
        if (strcmp(low, stopwords[i]) == 0) return 1;
    return 0;
}

static const char *const source_exts[] = {
    "py", "pyi", "c", "h", "cc", "cpp", "cxx", "hpp", "hh", "js", "jsx", "mjs", "ts", "tsx", "go",
    "java", "kt", "rs", "rb", "php", "cs", "swift", "scala", "m", "mm", "sh", "pl", "lua", "ex",
    "exs", "erl", "hs", "ml", "clj", "dart", "vue", "sql", "yaml", "yml", "toml", "json", "cfg",
    "ini", "txt", "md", "rst", NULL,
};

static int has_source_ext(const char *s, size_t n)
{
    const char *dot = NULL;
    for (size_t i = n; i-- > 0;) {
        if (s[i] == '.') {
            dot = s + i;
            break;
        }
        if (s[i] == '/' || s[i] == '\\') return 0;
    }
    if (dot == NULL || dot == s) return 0;
    size_t el = (size_t)(s + n - dot - 1);
    for (size_t i = 0; source_exts[i]; i++)
        if (strlen(source_exts[i]) == el && strncmp(dot + 1, source_exts[i], el) == 0) return 1;
    return 0;
}

static char *dup_n(scan *sc, const char *s, size_t n)
{
    char *p = sc->h->alloc(n + 1);
    if (p == NULL) {
        sc->oom = 1;
        return NULL;
    }
    memcpy(p, s, n);
    p[n] = '\0';
    return p;
}

static void add_term(scan *sc, terms *t, const char *s, size_t n, int score)
{
    if (n == 0 || n > MAX_TOKEN) return;
    for (size_t i = 0; i < t->len; i++) {
        if (strlen(t->items[i].text) == n && strncmp(t->items[i].text, s, n) == 0) {
            t->items[i].score += score;
            return;
        }
    }
    if (t->len == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 32;
        term *p = sc->h->realloc(t->items, cap * sizeof *p);
        if (p == NULL) {
            sc->oom = 1;
            return;
        }
        t->items = p;
        t->cap = cap;
    }
    t->items[t->len].text = dup_n(sc, s, n);
    if (t->items[t->len].text == NULL) return;
    t->items[t->len].score = score;
    t->items[t->len].first = sc->order++;
    t->len++;
}

/* Identifier worth: compound names (snake_case, camelCase, dotted) say more
 * about where code lives than plain words do. */
static int ident_weight(const char *s, size_t n)
{
    int w = 1, upper_inside = 0, underscore = 0;
    for (size_t i = 1; i < n; i++) {
        if (isupper((unsigned char)s[i]) && islower((unsigned char)s[i - 1])) upper_inside = 1;
        if (s[i] == '_' && i + 1 < n) underscore = 1;
    }
    if (upper_inside || underscore) w += 2;
    if (n >= 6) w += 1;
    return w;
}

static void add_ident(scan *sc, const char *s, size_t n, int bonus)
{
    char word[MAX_TOKEN + 1];
    if (n < 3 || n > MAX_TOKEN) return;
    memcpy(word, s, n);
    word[n] = '\0';
    if (is_stopword(word)) return;
    /* all digits and underscores: not a name */
    {
        int alpha = 0;
        for (size_t i = 0; i < n; i++) alpha |= isalpha((unsigned char)s[i]);
        if (!alpha) return;
    }
    add_term(sc, &sc->idents, s, n, ident_weight(s, n) + bonus);
}

static void add_frame(scan *sc, const char *file, size_t fl, long line, const char *fn, size_t fnl)
{
    frame *f;
    if (sc->n_frames == sc->cap_frames) {
        size_t cap = sc->cap_frames ? sc->cap_frames * 2 : 16;
        frame *p = sc->h->realloc(sc->frames, cap * sizeof *p);
        if (p == NULL) {
            sc->oom = 1;
            return;
        }
        sc->frames = p;
        sc->cap_frames = cap;
    }
    f = &sc->frames[sc->n_frames];
    f->file = fl ? dup_n(sc, file, fl) : NULL;
    f->function = fnl ? dup_n(sc, fn, fnl) : NULL;
    f->line = line;
    sc->n_frames++;
    if (fl) add_term(sc, &sc->paths, file, fl, 3);
    if (fnl) {
        /* "pkg.Class.method" or "Class::method": index each part. */
        size_t i = 0;
        while (i < fnl) {
            size_t j = i;
            while (j < fnl && (isalnum((unsigned char)fn[j]) || fn[j] == '_')) j++;
            if (j > i) add_ident(sc, fn + i, j - i, j == fnl ? 6 : 3);
            i = j + 1;
        }
    }
}

static void add_error(scan *sc, const char *type, size_t tl, const char *msg, size_t ml)
{
    if (sc->n_errs == sc->cap_errs) {
        size_t cap = sc->cap_errs ? sc->cap_errs * 2 : 8;
        char **a = sc->h->realloc(sc->err_types, cap * sizeof *a);
        if (a == NULL) {
            sc->oom = 1;
            return;
        }
        sc->err_types = a;
        char **b = sc->h->realloc(sc->err_msgs, cap * sizeof *b);
        if (b == NULL) {
            sc->oom = 1;
            return;
        }
        sc->err_msgs = b;
        sc->cap_errs = cap;
    }
    sc->err_types[sc->n_errs] = dup_n(sc, type, tl);
    sc->err_msgs[sc->n_errs] = dup_n(sc, msg, ml);
    sc->n_errs++;
    add_ident(sc, type, tl, 4);
}

static long parse_num(const char *s, size_t *used)
{
    long v = 0;
    size_t i = 0;
    while (isdigit((unsigned char)s[i]) && i < 9) v = v * 10 + (s[i++] - '0');
    *used = i;
    return v;
}

static int is_path_char(char c)
{
    return isalnum((unsigned char)c) || c == '/' || c == '\\' || c == '.' || c == '_' || c == '-' ||
           c == '+' || c == '~' || c == '<' || c == '>' || c == '$';
}

/* Python: File "path", line N, in func */
static int try_python_frame(scan *sc, const char *l, size_t n)
{
    const char *p = l, *end = l + n, *q, *file;
    size_t fl, used;
    long line;
    while (p < end && isspace((unsigned char)*p)) p++;
    if ((size_t)(end - p) < 8 || strncmp(p, "File \"", 6) != 0) return 0;
    file = p + 6;
    q = memchr(file, '"', (size_t)(end - file));
    if (q == NULL) return 0;
    fl = (size_t)(q - file);
    p = q + 1;
    if ((size_t)(end - p) < 7 || strncmp(p, ", line ", 7) != 0) return 0;
    p += 7;
    line = parse_num(p, &used);
    if (used == 0) return 0;
    p += used;
    if ((size_t)(end - p) > 5 && strncmp(p, ", in ", 5) == 0) {
        const char *fn = p + 5, *fe = fn;
        while (fe < end && !isspace((unsigned char)*fe)) fe++;
        add_frame(sc, file, fl, line, fn, (size_t)(fe - fn));
    } else {
        add_frame(sc, file, fl, line, NULL, 0);
    }
    return 1;
}

/* Finds "path:N" starting at p; returns its length or 0. */
static size_t path_line_at(const char *p, const char *end, size_t *path_len, long *line)
{
    const char *q = p;
    size_t used;
    while (q < end && is_path_char(*q) && *q != ':') q++;
    if (q == p || q >= end || *q != ':' || !has_source_ext(p, (size_t)(q - p))) return 0;
    *path_len = (size_t)(q - p);
    *line = parse_num(q + 1, &used);
    if (used == 0) return 0;
    return (size_t)(q + 1 + used - p);
}

/* Java/JS/Rust: "at func (path:N:C)", "at func(File.java:N)", "at path:N:C";
 * gdb/sanitizers: "#3 0x4005d6 in func path:N"; compilers:
 * "path:N:C: error: message". */
static int try_other_frame(scan *sc, const char *l, size_t n)
{
    const char *p = l, *end = l + n;
    while (p < end && isspace((unsigned char)*p)) p++;
    if ((size_t)(end - p) > 3 && strncmp(p, "at ", 3) == 0) {
        const char *fn = p + 3, *fe = fn, *open;
        size_t pl;
        long line;
        while (fe < end && !isspace((unsigned char)*fe) && *fe != '(') fe++;
        open = memchr(fe, '(', (size_t)(end - fe));
        if (open != NULL && path_line_at(open + 1, end, &pl, &line)) {
            add_frame(sc, open + 1, pl, line, fn, (size_t)(fe - fn));
            return 1;
        }
        if (path_line_at(fn, end, &pl, &line)) {
            add_frame(sc, fn, pl, line, NULL, 0);
            return 1;
        }
        return 0;
    }
    if (*p == '#' && p + 1 < end && isdigit((unsigned char)p[1])) {
        const char *in = NULL;
        for (const char *s = p; s + 4 <= end; s++)
            if (strncmp(s, " in ", 4) == 0) {
                in = s + 4;
                break;
            }
        if (in != NULL) {
            const char *fe = in, *s;
            size_t pl;
            long line;
            while (fe < end && !isspace((unsigned char)*fe) && *fe != '(') fe++;
            for (s = fe; s < end; s++) {
                if (s > fe && !isspace((unsigned char)s[-1]) && s[-1] != '(') continue;
                if (path_line_at(s, end, &pl, &line)) {
                    add_frame(sc, s, pl, line, in, (size_t)(fe - in));
                    return 1;
                }
            }
            add_frame(sc, NULL, 0, 0, in, (size_t)(fe - in));
            return 1;
        }
        return 0;
    }
    {
        size_t pl, used = 0;
        long line;
        size_t m = path_line_at(p, end, &pl, &line);
        if (m) {
            const char *rest = p + m;
            if (rest < end && *rest == ':') {
                parse_num(rest + 1, &used);
                rest += 1 + used;
            }
            add_frame(sc, p, pl, line, NULL, 0);
            while (rest < end && (*rest == ':' || *rest == ' ')) rest++;
            {
                const char *kind = rest, *ke = rest;
                while (ke < end && isalpha((unsigned char)*ke)) ke++;
                if (ke < end && *ke == ':' && ke > kind) {
                    const char *msg = ke + 1;
                    while (msg < end && *msg == ' ') msg++;
                    add_error(sc, kind, (size_t)(ke - kind), msg, (size_t)(end - msg));
                }
            }
            return 1;
        }
    }
    return 0;
}

/* "KeyError: 'x'", "java.lang.IllegalStateException: msg",
 * "TypeError: undefined is not a function" */
static int try_error_line(scan *sc, const char *l, size_t n)
{
    const char *p = l, *end = l + n, *q;
    while (p < end && isspace((unsigned char)*p)) p++;
    q = p;
    while (q < end && (isalnum((unsigned char)*q) || *q == '_' || *q == '.')) q++;
    if (q == p || q >= end || *q != ':' || !isupper((unsigned char)*(q - 1 - (q - p > 1 ? 0 : 0)))) {
        /* need a name ending the usual way */
    }
    if (q == p || q >= end || *q != ':') return 0;
    {
        const char *last = q;
        while (last > p && last[-1] != '.') last--;
        size_t ln = (size_t)(q - last);
        int looks = 0;
        static const char *const suffixes[] = {"Error", "Exception", "Warning", "Exit", "Interrupt",
                                               "Fault", "Failure", "Panic", NULL};
        for (size_t i = 0; suffixes[i]; i++) {
            size_t sl = strlen(suffixes[i]);
            if (ln >= sl && strncmp(q - sl, suffixes[i], sl) == 0) looks = 1;
        }
        if (!looks || !isupper((unsigned char)*last)) return 0;
        const char *msg = q + 1;
        while (msg < end && *msg == ' ') msg++;
        add_error(sc, last, ln, msg, (size_t)(end - msg));
        /* quoted words in the message are often keys or names */
        for (const char *s = msg; s < end; s++) {
            if (*s == '\'' || *s == '"' || *s == '`') {
                const char *e = memchr(s + 1, *s, (size_t)(end - s - 1));
                if (e && e - s - 1 <= MAX_TOKEN) {
                    const char *a = s + 1;
                    int ident = e > a;
                    for (const char *c = a; c < e; c++)
                        if (!(isalnum((unsigned char)*c) || *c == '_' || *c == '.')) ident = 0;
                    if (ident) add_ident(sc, a, (size_t)(e - a), 3);
                    s = e;
                }
            }
        }
    }
    return 1;
}

static void scan_tokens(scan *sc, const char *l, size_t n)
{
    size_t i = 0;
    while (i < n) {
        unsigned char c = (unsigned char)l[i];
        if (is_path_char((char)c) && (c == '/' || c == '.' || c == '~' || isalnum(c) || c == '_')) {
            size_t j = i;
            int slash = 0;
            while (j < n && is_path_char(l[j])) {
                if (l[j] == '/' || l[j] == '\\') slash = 1;
                j++;
            }
            /* trim sentence punctuation */
            while (j > i && (l[j - 1] == '.' || l[j - 1] == '-')) j--;
            if (j > i && (slash || has_source_ext(l + i, j - i)) && has_source_ext(l + i, j - i)) {
                add_term(sc, &sc->paths, l + i, j - i, 1);
            }
            /* identifiers inside the token; of a file path only the file's
             * own name counts (directory names say little) */
            {
                size_t k = i;
                if (slash && has_source_ext(l + i, j - i)) {
                    size_t b = j;
                    while (b > i && l[b - 1] != '/' && l[b - 1] != '\\') b--;
                    k = b;
                }
                while (k < j) {
                    while (k < j && !(isalpha((unsigned char)l[k]) || l[k] == '_')) k++;
                    size_t s = k;
                    while (k < j && (isalnum((unsigned char)l[k]) || l[k] == '_')) k++;
                    if (k > s) {
                        /* skip file extensions */
                        if (!(s > i && l[s - 1] == '.' && k == j && has_source_ext(l + i, j - i)))
                            add_ident(sc, l + s, k - s, 0);
                    }
                }
            }
            i = j > i ? j : i + 1;
        } else {
            i++;
        }
    }
}

static int cmp_terms(const void *a, const void *b)
{
    const term *x = a, *y = b;
    if (x->score != y->score) return y->score - x->score;
    return x->first - y->first;
}

static void free_scan(scan *sc)
{
    const cn_host *h = sc->h;
    for (size_t i = 0; i < sc->idents.len; i++) h->free(sc->idents.items[i].text);
    for (size_t i = 0; i < sc->paths.len; i++) h->free(sc->paths.items[i].text);
    h->free(sc->idents.items);
    h->free(sc->paths.items);
    for (size_t i = 0; i < sc->n_frames; i++) {
        h->free(sc->frames[i].file);
        h->free(sc->frames[i].function);
    }
    h->free(sc->frames);
    for (size_t i = 0; i < sc->n_errs; i++) {
        h->free(sc->err_types[i]);
        h->free(sc->err_msgs[i]);
    }
    h->free(sc->err_types);
    h->free(sc->err_msgs);
}

static const char *base_of(const char *p)
{
    const char *b = p;
    for (const char *s = p; *s; s++)
        if (*s == '/' || *s == '\\') b = s + 1;
    return b;
}

/* Appends a term to the query unless present (case-insensitive). */
static int query_add(const cn_host *h, char **q, size_t *qlen, int *count, int max, const char *t)
{
    size_t tl = strlen(t), ql = *qlen;
    char *p;
    if (*count >= max || tl == 0) return 0;
    for (const char *s = *q; s && *s;) {
        const char *e = strchr(s, ' ');
        size_t wl = e ? (size_t)(e - s) : strlen(s);
        if (wl == tl && strncasecmp(s, t, tl) == 0) return 0;
        s = e ? e + 1 : s + wl;
    }
    p = h->realloc(*q, ql + tl + 2);
    if (p == NULL) return CN_ENOMEM;
    if (ql) p[ql++] = ' ';
    memcpy(p + ql, t, tl);
    p[ql + tl] = '\0';
    *q = p;
    *qlen = ql + tl;
    (*count)++;
    return 0;
}

static int c2q_run(cn_executor *self, const char *args_json, char **result_json, cn_error *err)
{
    const cn_host *h = self->data;
    const cn_json_services *J = h->json;
    cn_json *args = J->parse(args_json, err), *out, *arr;
    const char *code;
    int max_terms, include_paths, count = 0;
    char *query = NULL;
    size_t qlen = 0;
    scan sc;

    if (args == NULL) return CN_EINVAL;
    code = J->get_string(J->object_get(args, "code"));
    max_terms = (int)J->get_int(J->object_get(args, "max_terms"));
    include_paths = J->get_bool(J->object_get(args, "include_paths"));
    if (code == NULL) {
        J->put(args);
        return h->error_set(err, CN_EINVAL, "argument 'code' must be a string");
    }
    if (max_terms < 1 || max_terms > 1000) {
        J->put(args);
        return h->error_set(err, CN_EINVAL, "argument 'max_terms' must be between 1 and 1000, got %d",
                            max_terms);
    }
    memset(&sc, 0, sizeof sc);
    sc.h = h;
    for (const char *l = code; *l && !sc.oom;) {
        const char *e = strchr(l, '\n');
        size_t n = e ? (size_t)(e - l) : strlen(l);
        if (n > 0 && l[n - 1] == '\r') n--;
        if (!try_python_frame(&sc, l, n) && !try_other_frame(&sc, l, n)) try_error_line(&sc, l, n);
        scan_tokens(&sc, l, n);
        l += e ? (size_t)(e - l) + 1 : n;
    }
    if (sc.oom) {
        free_scan(&sc);
        J->put(args);
        return h->error_set(err, CN_ENOMEM, "out of memory");
    }
    if (sc.idents.len > 1) qsort(sc.idents.items, sc.idents.len, sizeof *sc.idents.items, cmp_terms);
    if (sc.paths.len > 1) qsort(sc.paths.items, sc.paths.len, sizeof *sc.paths.items, cmp_terms);

    /* Query: frame functions innermost first, exception types, then the
     * ranked identifiers, then file names. */
    for (size_t i = sc.n_frames; i-- > 0;) {
        const char *fn = sc.frames[i].function;
        if (fn == NULL) continue;
        const char *last = fn;
        for (const char *s = fn; *s; s++)
            if (*s == '.' || *s == ':') last = s + 1;
        char word[MAX_TOKEN + 1];
        snprintf(word, sizeof word, "%s", last);
        if (*word && word[0] != '<' && !is_stopword(word)) query_add(h, &query, &qlen, &count, max_terms, word);
    }
    for (size_t i = 0; i < sc.n_errs; i++)
        if (strcmp(sc.err_types[i], "error") != 0 && strcmp(sc.err_types[i], "warning") != 0)
            query_add(h, &query, &qlen, &count, max_terms, sc.err_types[i]);
    for (size_t i = 0; i < sc.idents.len; i++)
        query_add(h, &query, &qlen, &count, max_terms, sc.idents.items[i].text);
    if (include_paths)
        for (size_t i = 0; i < sc.paths.len; i++)
            query_add(h, &query, &qlen, &count, max_terms, base_of(sc.paths.items[i].text));

    out = J->new_object();
    J->object_set(out, "query", J->new_string(query ? query : ""));
    arr = J->new_array();
    for (size_t i = 0; i < sc.idents.len; i++) J->array_append(arr, J->new_string(sc.idents.items[i].text));
    J->object_set(out, "identifiers", arr);
    arr = J->new_array();
    for (size_t i = 0; i < sc.paths.len; i++) J->array_append(arr, J->new_string(sc.paths.items[i].text));
    J->object_set(out, "paths", arr);
    arr = J->new_array();
    for (size_t i = 0; i < sc.n_frames; i++) {
        cn_json *f = J->new_object();
        J->object_set(f, "file", sc.frames[i].file ? J->new_string(sc.frames[i].file) : J->new_null());
        /* 0-based inside codenib; the host adds one on the way out. */
        J->object_set(f, "line", sc.frames[i].line > 0 ? J->new_int(sc.frames[i].line - 1) : J->new_null());
        J->object_set(f, "function",
                      sc.frames[i].function ? J->new_string(sc.frames[i].function) : J->new_null());
        J->array_append(arr, f);
    }
    J->object_set(out, "frames", arr);
    arr = J->new_array();
    for (size_t i = 0; i < sc.n_errs; i++) {
        cn_json *e = J->new_object();
        J->object_set(e, "type", J->new_string(sc.err_types[i]));
        J->object_set(e, "message", J->new_string(sc.err_msgs[i]));
        J->array_append(arr, e);
    }
    J->object_set(out, "errors", arr);
    *result_json = J->serialize(out, 0);
    J->put(out);
    h->free(query);
    free_scan(&sc);
    J->put(args);
    return *result_json ? 0 : h->error_set(err, CN_ENOMEM, "out of memory");
}

static void c2q_destroy(cn_executor *self)
{
    const cn_host *h = self->data;
    h->free(self);
}

static int c2q_create(const cn_host *host, const cn_skill_context *ctx, cn_executor **out,
                      cn_error *err)
{
    cn_executor *ex;
    (void)ctx;
    if (!CN_HOST_HAS(host, json) || host->json == NULL)
        return host->error_set(err, CN_EUNSUPPORTED, "code_to_query needs the host's JSON services");
    ex = host->alloc(sizeof *ex);
    if (ex == NULL) return host->error_set(err, CN_ENOMEM, "out of memory");
    memset(ex, 0, sizeof *ex);
    ex->struct_size = (uint32_t)sizeof *ex;
    ex->data = (void *)host;
    ex->run = c2q_run;
    ex->destroy = c2q_destroy;
    *out = ex;
    return 0;
}

CN_SKILL_DEFINE(code_to_query, "code_to_query", "0.1.0", c2q_create);
