/* SPDX-License-Identifier: Apache-2.0 */
/* The localization contract parser and renderer (see cn_contract.h).
 *
 * Two passes keep a 1 MB answer linear: the first finds the label lines
 * (and labels later on the same line) and groups them into blocks, a new
 * block starting when a label repeats; the second parses the values of the
 * chosen block only.  Values are read word by word; a word that is neither
 * an item nor a connector ends its comma-separated segment, which is how
 * commentary after an item ("a.py:3-9 - the loop") is left out. */
#include "cn_contract.h"
#include "../plugin/cn_host.h"
#include "../util/cn_utf8.h"

#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

enum { K_FILES, K_SYMBOLS, K_LOCATIONS, K_COUNT };

#define PATH_MAX_LEN 4096
#define CALL_MARK '\x01' /* where "name(args)" was, so "name()" stays a name */

/* ---------------------------------------------------------- string set -- */
/* Open addressing over owned keys: dedupe must stay linear on huge input. */
typedef struct sset {
    char **slots;
    size_t cap, len;
} sset;

static uint64_t hash_str(const char *s)
{
    uint64_t h = 1469598103934665603ULL;
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    return h;
}

static int sset_grow(sset *s)
{
    size_t cap = s->cap ? s->cap * 2 : 64;
    char **slots = calloc(cap, sizeof *slots);
    if (slots == NULL) return CN_ENOMEM;
    for (size_t i = 0; i < s->cap; i++) {
        if (s->slots[i] == NULL) continue;
        size_t j = hash_str(s->slots[i]) & (cap - 1);
        while (slots[j]) j = (j + 1) & (cap - 1);
        slots[j] = s->slots[i];
    }
    free(s->slots);
    s->slots = slots;
    s->cap = cap;
    return 0;
}

/* 1 added, 0 already there, CN_ENOMEM. */
static int sset_add(sset *s, const char *key)
{
    if ((s->len + 1) * 2 > s->cap && sset_grow(s) < 0) return CN_ENOMEM;
    size_t j = hash_str(key) & (s->cap - 1);
    while (s->slots[j]) {
        if (strcmp(s->slots[j], key) == 0) return 0;
        j = (j + 1) & (s->cap - 1);
    }
    char *k = cn_strdup(key);
    if (k == NULL) return CN_ENOMEM;
    s->slots[j] = k;
    s->len++;
    return 1;
}

static void sset_free(sset *s)
{
    for (size_t i = 0; i < s->cap; i++) free(s->slots[i]);
    free(s->slots);
    memset(s, 0, sizeof *s);
}

/* ---------------------------------------------------- contract storage -- */
/* The array has no capacity field: it holds a power of two (at least 8)
 * slots, so it grows exactly when n_locations reaches one. */
static int push_location(cn_contract *c, const char *path, uint32_t a, uint32_t b)
{
    char *p = cn_strdup(path);
    if (p == NULL) return CN_ENOMEM;
    size_t n = c->n_locations;
    if (n == 0 || (n >= 8 && (n & (n - 1)) == 0)) {
        cn_contract_loc *l = realloc(c->locations, (n ? n * 2 : 8) * sizeof *l);
        if (l == NULL) {
            free(p);
            return CN_ENOMEM;
        }
        c->locations = l;
    }
    c->locations[c->n_locations++] = (cn_contract_loc){p, a, b};
    return 0;
}

static bool loc_equal(const cn_contract_loc *l, const char *path, uint32_t a, uint32_t b)
{
    return l->start_line == a && l->end_line == b && strcmp(l->path, path) == 0;
}

int cn_contract_add_file(cn_contract *c, const char *path)
{
    if (cn_strv_contains(&c->files, path)) return 0;
    return cn_strv_push(&c->files, path) < 0 ? CN_ENOMEM : 0;
}

int cn_contract_add_symbol(cn_contract *c, const char *symbol)
{
    if (cn_strv_contains(&c->symbols, symbol)) return 0;
    return cn_strv_push(&c->symbols, symbol) < 0 ? CN_ENOMEM : 0;
}

int cn_contract_add_location(cn_contract *c, const char *path, uint32_t a, uint32_t b)
{
    for (size_t i = 0; i < c->n_locations; i++)
        if (loc_equal(&c->locations[i], path, a, b)) return 0;
    return push_location(c, path, a, b);
}

void cn_contract_free(cn_contract *c)
{
    if (c == NULL) return;
    cn_strv_free(&c->files);
    cn_strv_free(&c->symbols);
    for (size_t i = 0; i < c->n_locations; i++) free(c->locations[i].path);
    free(c->locations);
    memset(c, 0, sizeof *c);
}

size_t cn_contract_symbol_path_len(const char *symbol)
{
    /* names never hold ':' once normalised, so the last one ends the path */
    const char *colon = symbol ? strrchr(symbol, ':') : NULL;
    return colon ? (size_t)(colon - symbol) : 0;
}

int cn_contract_merge_files(cn_contract *c)
{
    for (size_t i = 0; i < c->symbols.len; i++) {
        size_t n = cn_contract_symbol_path_len(c->symbols.items[i]);
        if (n == 0) continue;
        char *p = cn_strndup(c->symbols.items[i], n);
        if (p == NULL) return cn_error_set(CN_ENOMEM, "out of memory merging contract files");
        int rc = cn_contract_add_file(c, p);
        free(p);
        if (rc < 0) return cn_error_set(CN_ENOMEM, "out of memory merging contract files");
    }
    for (size_t i = 0; i < c->n_locations; i++)
        if (cn_contract_add_file(c, c->locations[i].path) < 0)
            return cn_error_set(CN_ENOMEM, "out of memory merging contract files");
    return 0;
}

/* -------------------------------------------------------- word helpers -- */
static bool word_is(const char *w, const char *const *list)
{
    for (; *list; list++)
        if (strcasecmp(w, *list) == 0) return true;
    return false;
}

static const char *const NONE_WORDS[] = {"none", "n/a", "na", "null", "nil", "nothing",
                                         "empty", "unknown", "tbd", "-", "\xe2\x80\x94",
                                         "\xe2\x80\x93", NULL};
static const char *const STOP_WORDS[] = {"e.g", "i.e", "etc", "a.k.a", "vs", "w/", "w/o",
                                         "and/or", "n/a", NULL};
static const char *const SOURCE_EXTS[] = {
    "py", "pyi", "pyx", "c", "h", "cc", "cpp", "cxx", "hpp", "hh", "hxx", "js", "jsx",
    "ts", "tsx", "mjs", "cjs", "go", "rs", "java", "kt", "kts", "scala", "rb", "php",
    "cs", "swift", "m", "mm", "lua", "pl", "pm", "sh", "bash", "r", "jl", "ex", "exs",
    "erl", "hs", "ml", "mli", "clj", "dart", "vue", "svelte", "sql", "yaml", "yml",
    "json", "toml", "ini", "cfg", "md", "rst", "txt", "html", "css", "scss", "xml",
    "gradle", "cmake", "mk", "proto", "in", "am", "ac", "lock", "env", "csv", "tsv",
    "svg", "bat", "ps1", "tf", "hcl", "conf", "properties", "rake", "gemspec", "tpl",
    "j2", "jinja", "ejs", "hbs", "less", "sass", "graphql", "gql", "thrift", "fs",
    "vb", "groovy", "nim", "zig", "sv", "vhd", "f90", "asm", "s", "cu", "cuh", "ipynb",
    "tex", "bib", "adoc", "cabal", "nix", "el", "vim", "fish", "cmd", "cfg", "lst",
    "def", "rc", "y", "l", "cl", "lisp", "scm", "elm", "purs", "res", "re", "sol", NULL};
static const char *const BARE_FILES[] = {"Makefile", "Dockerfile", "LICENSE", "README",
                                         "Gemfile", "Rakefile", "Procfile", "Jenkinsfile",
                                         "Vagrantfile", "CMakeLists.txt", NULL};

static bool has_source_ext(const char *s)
{
    const char *dot = strrchr(s, '.');
    return dot && dot != s && word_is(dot + 1, SOURCE_EXTS);
}

static bool path_char(unsigned char ch)
{
    return isalnum(ch) || ch >= 0x80 || strchr("_-./+@~%$", ch) != NULL;
}

/* A repository path as a model writes one: no URL, no prose word. */
static bool is_pathish(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n > PATH_MAX_LEN) return false;
    if (word_is(s, BARE_FILES)) return true;
    if (word_is(s, STOP_WORDS)) return false;
    if (strstr(s, "://") || strncasecmp(s, "www.", 4) == 0) return false;
    bool letter = false, shape = false;
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)s[i];
        if (!path_char(ch)) return false;
        if (isalpha(ch)) letter = true;
        if (ch == '/') shape = true;
    }
    /* without a directory, "Foo.bar" is more likely a name than a file */
    if (!shape) shape = has_source_ext(s) || (s[0] == '.' && isalpha((unsigned char)s[1]));
    return letter && shape;
}


/* "./a\\b.py/" -> "a/b.py"; NULL when not a path (or out of memory). */
static char *norm_path(const char *w, size_t n)
{
    char *p = cn_strndup(w, n);
    if (p == NULL) return NULL;
    for (char *q = p; *q; q++)
        if (*q == '\\') *q = '/';
    char *s = p;
    while (s[0] == '.' && s[1] == '/') s += 2;
    size_t len = strlen(s);
    /* a '.' at the end is the sentence's, as it is when the path stands
     * in prose: without this, a path taken from a link or quotes would
     * not read back the same from the rendered contract */
    while (len > 1 && (s[len - 1] == '/' || s[len - 1] == '.')) s[--len] = '\0';
    if (!is_pathish(s)) {
        free(p);
        return NULL;
    }
    memmove(p, s, len + 1);
    return p;
}

/* Number with optional L prefix and sign; false when no digits. */
static bool parse_num(const char *s, size_t n, size_t *i, uint64_t *v, bool *bad)
{
    if (*i < n && (s[*i] == 'L' || s[*i] == 'l')) (*i)++;
    if (*i < n && s[*i] == '-') {
        *bad = true;
        (*i)++;
    }
    size_t start = *i;
    *v = 0;
    while (*i < n && isdigit((unsigned char)s[*i])) {
        if (*v <= UINT32_MAX) *v = *v * 10 + (uint64_t)(s[*i] - '0');
        (*i)++;
    }
    if (*i == start) return false;
    if (*v == 0 || *v > UINT32_MAX) *bad = true;
    return true;
}

static size_t dash_len(const char *s, size_t n, size_t i)
{
    if (i < n && (s[i] == '-' || s[i] == '~')) return 1;
    if (i + 1 < n && s[i] == '.' && s[i + 1] == '.') return 2;
    if (i + 2 < n && (unsigned char)s[i] == 0xe2 && (unsigned char)s[i + 1] == 0x80 &&
        ((unsigned char)s[i + 2] == 0x93 || (unsigned char)s[i + 2] == 0x94))
        return 3;
    return 0;
}

typedef enum { R_FAIL, R_OK, R_DROP } rres;

/* "120", "120-148", "L120-L148", "120–148"; reversed ranges are swapped,
 * zero, negative or overflowing lines are dropped. */
static rres parse_range(const char *s, size_t n, uint32_t *a, uint32_t *b)
{
    size_t i = 0;
    uint64_t x, y;
    bool bad = false;
    if (!parse_num(s, n, &i, &x, &bad)) return R_FAIL;
    y = x;
    if (i < n) {
        size_t d = dash_len(s, n, i);
        if (d == 0) return R_FAIL;
        i += d;
        if (!parse_num(s, n, &i, &y, &bad) || i != n) return R_FAIL;
    }
    if (bad) return R_DROP;
    *a = (uint32_t)(x < y ? x : y);
    *b = (uint32_t)(x < y ? y : x);
    return R_OK;
}

static bool ident_char(unsigned char ch)
{
    return isalnum(ch) || ch == '_' || ch == '$' || ch >= 0x80;
}

/* "Class::method", "Class#method", "a.b()" -> "Class.method", "a.b";
 * NULL when it is not a dotted identifier chain. */
static char *norm_name(const char *w)
{
    cn_buf b = CN_BUF_INIT;
    for (const char *p = w; *p; p++) {
        if (p[0] == ':' && p[1] == ':') {
            cn_buf_putc(&b, '.');
            p++;
        } else if (*p == '#' || (p[0] == '-' && p[1] == '>')) {
            cn_buf_putc(&b, '.');
            if (*p == '-') p++;
        } else if (*p == ':') {
            uint32_t x, y; /* "Class.method:120-148": the lines are not part of a name */
            if (parse_range(p + 1, strlen(p + 1), &x, &y) == R_FAIL) goto bad;
            break;
        } else if (*p != CALL_MARK) {
            cn_buf_putc(&b, *p);
        }
    }
    char *s = cn_buf_steal(&b);
    if (s == NULL) return NULL;
    bool ok = *s && !isdigit((unsigned char)*s) && !word_is(s, STOP_WORDS) &&
              !word_is(s, NONE_WORDS), letter = false;
    for (char *q = s; *q; q++) letter = letter || isalpha((unsigned char)*q) || *q == '_';
    ok = ok && letter;
    for (char *q = s; ok && *q; q++)
        if (*q == '.' ? (q == s || q[1] == '\0' || q[1] == '.') : !ident_char((unsigned char)*q))
            ok = false;
    if (!ok) {
        free(s);
        return NULL;
    }
    return s;
bad:
    cn_buf_free(&b);
    return NULL;
}

/* --------------------------------------------------- word classification -- */
typedef enum {
    W_FAIL,   /* prose or junk: ends the segment */
    W_NONE,   /* "none", "N/A": an explicit empty value */
    W_SKIP,   /* a connector: "and", "lines", "in" */
    W_RANGE,  /* "120-148" (loc) */
    W_PATH,   /* a path alone */
    W_LOC,    /* path with lines (loc) */
    W_SYM,    /* path and name (sym) */
    W_QNAME,  /* a qualified or called name without path (sym) */
    W_PLAIN   /* a plain identifier: a name only where the context says so */
} wkind;

typedef struct word {
    wkind kind;
    bool colon;   /* written "path:" - the path applies to what follows */
    bool drop;    /* a range with zero or negative lines */
    char *path, *name;
    uint32_t a, b;
} word;

static void word_clear(word *w)
{
    free(w->path);
    free(w->name);
    memset(w, 0, sizeof *w);
}

static const char *const LOC_SKIP[] = {"line", "lines", "ln", "ll", "l", "at", "and", "&", "in", NULL};
static const char *const SYM_SKIP[] = {"and", "&", "in", "from", "at", NULL};
static const char *const FILE_SKIP[] = {"and", "&", NULL};

/* Splits "path<sep>rest" at the first ':' or '#' whose left side is a path. */
static char *split_path(const char *w, const char **rest)
{
    for (const char *p = w; *p; p++) {
        if (*p != ':' && *p != '#') continue;
        char *path = norm_path(w, (size_t)(p - w));
        if (path == NULL) return NULL;
        while (*p == ':' || *p == '#') p++;
        *rest = p;
        return path;
    }
    return NULL;
}

static void classify_loc(const char *w, word *out)
{
    const char *rest = NULL;
    if (parse_range(w, strlen(w), &out->a, &out->b) != R_FAIL) {
        out->kind = W_RANGE;
        out->drop = parse_range(w, strlen(w), &out->a, &out->b) == R_DROP;
    } else if ((out->path = split_path(w, &rest)) != NULL) {
        if (word_is(rest, LOC_SKIP)) rest += strlen(rest); /* "a.py:line 7" */
        rres r = *rest ? parse_range(rest, strlen(rest), &out->a, &out->b) : R_FAIL;
        const char *col = strchr(rest, ':');
        if (r == R_FAIL && col) { /* "a.py:12:5": line and column */
            r = parse_range(rest, (size_t)(col - rest), &out->a, &out->b);
            if (r == R_OK && out->a != out->b) r = R_FAIL;
        }
        out->kind = *rest == '\0' ? W_PATH : r == R_FAIL ? W_FAIL : W_LOC;
        out->drop = r == R_DROP;
        if (*rest == '\0') out->colon = true;
    } else if ((out->path = norm_path(w, strlen(w))) != NULL) {
        out->kind = W_PATH;
    }
}

static void classify_sym(const char *w, bool called, word *out)
{
    const char *rest = NULL;
    if (strchr(w, ':') && (out->path = split_path(w, &rest)) != NULL) {
        if (*rest == '\0') {
            out->kind = W_PATH;
            out->colon = true;
        } else if ((out->name = norm_name(rest)) != NULL) {
            out->kind = W_SYM;
        }
        return;
    }
    free(out->path);
    out->path = NULL;
    if ((strchr(w, '/') || has_source_ext(w) || word_is(w, BARE_FILES)) &&
        (out->path = norm_path(w, strlen(w))) != NULL) {
        out->kind = W_PATH;
        return;
    }
    if ((out->name = norm_name(w)) == NULL) return;
    if (has_source_ext(out->name)) { /* "x.py" would read back as a file */
        free(out->name);
        out->name = NULL;
        return;
    }
    out->kind = strchr(out->name, '.') || called ? W_QNAME : W_PLAIN;
}

static void classify_file(const char *w, word *out)
{
    const char *rest = NULL;
    if ((out->path = split_path(w, &rest)) != NULL || (out->path = norm_path(w, strlen(w))))
        out->kind = W_PATH;
}

/* Trims wrapping quotes and trailing punctuation; notes a trailing ':'. */
static void classify(int kind, char *w, word *out)
{
    memset(out, 0, sizeof *out);
    bool colon = false, called = false;
    /* the call mark says "a name", but it does not survive rendering, so
     * it must not change what a word is taken for */
    char *q = w;
    for (char *p = w; *p; p++) {
        if (*p == CALL_MARK) called = true;
        else *q++ = *p;
    }
    *q = '\0';
    while (*w == '\'') w++;
    size_t n = strlen(w);
    while (n > 0 && strchr("'.,!?:", w[n - 1])) {
        if (w[n - 1] == ':') colon = true;
        w[--n] = '\0';
    }
    if (n == 0) return;
    const char *const *skip = kind == K_FILES ? FILE_SKIP : kind == K_SYMBOLS ? SYM_SKIP : LOC_SKIP;
    if (word_is(w, NONE_WORDS)) out->kind = W_NONE;
    else if (word_is(w, skip)) out->kind = W_SKIP;
    else if (kind == K_FILES) classify_file(w, out);
    else if (kind == K_SYMBOLS) classify_sym(w, called, out);
    else classify_loc(w, out);
    if (colon && out->kind == W_PATH) out->colon = true;
}

/* --------------------------------------------------------- line values -- */
typedef struct pctx {
    cn_contract *c;
    sset seen[K_COUNT];
    int err;
} pctx;

/* What a section carries from one line to the next. */
typedef struct lstate {
    char *ctx;     /* the path later ranges or names belong to */
    bool ctx_used; /* a range was given for it (else it is a whole file) */
} lstate;

static void emit_file(pctx *p, const char *path)
{
    int r = sset_add(&p->seen[K_FILES], path);
    if (r == 1) r = cn_strv_push(&p->c->files, path);
    if (r < 0) p->err = CN_ENOMEM;
}

static void emit_symbol(pctx *p, const char *path, const char *name)
{
    char *s = NULL;
    if (path) {
        size_t n = strlen(path) + strlen(name) + 2;
        s = malloc(n);
        if (s) snprintf(s, n, "%s:%s", path, name);
    } else {
        s = cn_strdup(name);
    }
    int r = s ? sset_add(&p->seen[K_SYMBOLS], s) : CN_ENOMEM;
    if (r == 1) {
        r = cn_strv_push_owned(&p->c->symbols, s);
        s = NULL;
    }
    free(s);
    if (r < 0) p->err = CN_ENOMEM;
}

static void emit_location(pctx *p, const char *path, uint32_t a, uint32_t b)
{
    size_t n = strlen(path) + 32;
    char *key = malloc(n);
    int r = CN_ENOMEM;
    if (key) {
        snprintf(key, n, "%u-%u:%s", (unsigned)a, (unsigned)b, path);
        r = sset_add(&p->seen[K_LOCATIONS], key);
        free(key);
    }
    if (r == 1) r = push_location(p->c, path, a, b);
    if (r < 0) p->err = CN_ENOMEM;
}

typedef struct lres {
    bool first_ok; /* the first meaningful word was an item */
    bool all_ok;   /* every word was understood */
} lres;

typedef struct lrun {
    pctx *p;
    int kind;
    bool commit; /* false: a dry run deciding whether the line belongs */
    lstate *st;
    cn_strv pending; /* names waiting for the path that follows them */
} lrun;

static void set_ctx(lrun *r, char *path, bool used)
{
    if (r->kind == K_LOCATIONS && r->st->ctx && !r->st->ctx_used && r->commit)
        emit_location(r->p, r->st->ctx, 0, 0);
    free(r->st->ctx);
    r->st->ctx = path;
    r->st->ctx_used = used;
}

static void flush_pending(lrun *r, const char *path)
{
    for (size_t i = 0; i < r->pending.len; i++)
        if (r->commit) emit_symbol(r->p, path, r->pending.items[i]);
    cn_strv_free(&r->pending);
}

/* Handles one word; false when it ends the segment. */
static bool take_word(lrun *r, word *w, const word *next)
{
    switch (w->kind) {
    case W_NONE: case W_SKIP: return true;
    case W_FAIL: return false;
    case W_RANGE:
        if (r->st->ctx == NULL) return false;
        if (r->commit && !w->drop) emit_location(r->p, r->st->ctx, w->a, w->b);
        r->st->ctx_used = true;
        return true;
    case W_LOC:
        set_ctx(r, w->path, true); /* first, so a pending whole file keeps its place */
        w->path = NULL;
        if (r->commit && !w->drop) emit_location(r->p, r->st->ctx, w->a, w->b);
        return true;
    case W_PATH:
        if (r->kind == K_FILES) {
            if (r->commit) emit_file(r->p, w->path);
        } else if (r->kind == K_SYMBOLS && r->pending.len && !w->colon) {
            flush_pending(r, w->path);
        } else {
            set_ctx(r, w->path, false);
            w->path = NULL;
        }
        return true;
    case W_SYM:
        if (r->commit) emit_symbol(r->p, w->path, w->name);
        return true;
    case W_PLAIN:
        /* a lone word is a name only at the end of its segment or before
         * the path it belongs to; otherwise it starts a sentence */
        if (next && next->kind != W_PATH && next->kind != W_SKIP) return false;
        /* fallthrough */
    case W_QNAME:
        if (r->st->ctx) {
            if (r->commit) emit_symbol(r->p, r->st->ctx, w->name);
        } else if (cn_strv_push(&r->pending, w->name) < 0) {
            r->p->err = CN_ENOMEM;
        }
        return true;
    }
    return false;
}

static bool is_sep(unsigned char ch) { return ch == ',' || ch == ';' || ch == '|'; }

/* At s[i] == '(': the end of a Go receiver "(*T)." or "(T)." (the index
 * of its ')'), else 0. */
static size_t go_receiver(const char *s, size_t i, size_t n)
{
    size_t j = i + 1;
    if (j < n && s[j] == '*') j++;
    size_t start = j;
    while (j < n && ident_char((unsigned char)s[j])) j++;
    return j > start && j + 1 < n && s[j] == ')' && s[j + 1] == '.' ? j : 0;
}

/* Copies a value line into words-ready text: backticks, emphasis and
 * brackets go, a markdown link becomes its text or its target (below), and
 * for symbols "f(args)" becomes f plus a call mark and "(*T).m" T.m. */
static char *clean_line(const char *s, size_t n, int kind)
{
    cn_buf b = CN_BUF_INIT;
    /* the next ']' and ')' are remembered so a line of '[' stays linear */
    const char *rb = s, *rp = s;
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)s[i];
        if (ch == '[') {
            if (rb && rb <= s + i) rb = memchr(s + i, ']', n - i);
            const char *close = rb, *end = NULL;
            if (close && (size_t)(close - s) + 1 < n && close[1] == '(') {
                if (rp && rp <= close) rp = memchr(close, ')', (size_t)(s + n - close));
                end = rp;
            }
            if (end) {
                const char *t = close + 2;
                size_t tn = (size_t)(end - t);
                /* the text when it is one word ("[a.py:f](a.py#L4)"), else
                 * the target unless that is a URL */
                const char *x = s + i + 1;
                size_t xn = (size_t)(close - x);
                bool url = false, spaced = xn == 0;
                for (size_t k = 0; k + 2 < tn && !url; k++) url = memcmp(t + k, "://", 3) == 0;
                for (size_t k = 0; k < xn && !spaced; k++) spaced = isspace((unsigned char)x[k]);
                if (!spaced || url) cn_buf_append(&b, x, xn);
                else cn_buf_append(&b, t, tn);
                i = (size_t)(end - s);
                continue;
            }
        }
        if (ch == '(' && kind == K_SYMBOLS && b.len && ident_char((unsigned char)b.data[b.len - 1])) {
            size_t depth = 0, j = i;
            for (; j < n; j++) {
                if (s[j] == '(') depth++;
                else if (s[j] == ')' && --depth == 0) break;
            }
            cn_buf_putc(&b, CALL_MARK);
            i = j;
            continue;
        }
        size_t recv = kind == K_SYMBOLS && ch == '(' ? go_receiver(s, i, n) : 0;
        if (recv) { /* Go "(*Cache).Get" names Cache.Get */
            for (size_t k = i + 1; k < recv; k++)
                if (s[k] != '*') cn_buf_putc(&b, s[k]);
            i = recv;
            continue;
        }
        if (ch == '`' || ch == '*') continue;
        if (strchr("()[]{}<>\"\t\r", ch)) ch = ' ';
        cn_buf_putc(&b, (char)ch);
    }
    return cn_buf_steal(&b);
}

typedef struct wref {
    char *text;
    bool seg_end; /* a ',' ';' '|' or the end of the line follows */
} wref;

/* Splits cleaned text in place into words. */
static size_t split_words(char *t, wref **out, int *err)
{
    size_t cap = 0, n = 0;
    wref *v = NULL;
    char *p = t;
    for (;;) {
        while (*p && (isspace((unsigned char)*p) || is_sep((unsigned char)*p))) {
            if (is_sep((unsigned char)*p) && n) v[n - 1].seg_end = true;
            p++;
        }
        if (*p == '\0') break;
        if (n == cap) {
            cap = cap ? cap * 2 : 16;
            wref *nv = realloc(v, cap * sizeof *nv);
            if (nv == NULL) {
                *err = CN_ENOMEM;
                break;
            }
            v = nv;
        }
        v[n].text = p;
        v[n].seg_end = false;
        while (*p && !isspace((unsigned char)*p) && !is_sep((unsigned char)*p)) p++;
        if (*p) {
            if (is_sep((unsigned char)*p)) v[n].seg_end = true;
            *p++ = '\0';
        }
        n++;
    }
    if (n) v[n - 1].seg_end = true;
    *out = v;
    return n;
}

/* Merges "120 - 148" / "120 to 148" written as three words. */
static void join_spaced_range(int kind, wref *v, size_t n, size_t *i, word *w)
{
    if (kind != K_LOCATIONS || w->kind != W_RANGE || w->a != w->b || *i + 2 >= n ||
        v[*i].seg_end || v[*i + 1].seg_end)
        return;
    const char *d = v[*i + 1].text;
    if (!(strcmp(d, "-") == 0 || strcmp(d, "\xe2\x80\x93") == 0 ||
          strcmp(d, "\xe2\x80\x94") == 0 || strcasecmp(d, "to") == 0 ||
          strcasecmp(d, "through") == 0))
        return;
    word e;
    classify(kind, v[*i + 2].text, &e);
    if (e.kind == W_RANGE && e.a == e.b) {
        w->drop = w->drop || e.drop;
        w->b = e.a > w->a ? e.a : w->a;
        w->a = e.a > w->a ? w->a : e.a;
        *i += 2;
    }
    word_clear(&e);
}

static lres run_line(pctx *p, int kind, const char *s, size_t n, lstate *st, bool commit)
{
    lres res = {false, true};
    lrun r = {p, kind, commit, st, CN_STRV_INIT};
    char *t = clean_line(s, n, kind);
    wref *v = NULL;
    size_t nw = t ? split_words(t, &v, &p->err) : 0;
    if (t == NULL) p->err = CN_ENOMEM;
    bool first = true, skipping = false;
    for (size_t i = 0; i < nw; i++) {
        if (skipping) {
            skipping = !v[i].seg_end;
            continue;
        }
        /* only a plain name in Symbols looks at the next word; classify()
         * trims in place, so the lookahead gets its own copy */
        word w, nx;
        bool has_next = kind == K_SYMBOLS && !v[i].seg_end && i + 1 < nw;
        char *ncopy = has_next ? cn_strdup(v[i + 1].text) : NULL;
        classify(kind, v[i].text, &w);
        if (ncopy) classify(kind, ncopy, &nx);
        join_spaced_range(kind, v, nw, &i, &w);
        bool ok = take_word(&r, &w, ncopy ? &nx : NULL);
        if (ncopy) word_clear(&nx);
        free(ncopy);
        if (first && w.kind != W_SKIP) {
            res.first_ok = ok;
            first = false;
        }
        word_clear(&w);
        if (!ok) {
            res.all_ok = false;
            flush_pending(&r, NULL);
            set_ctx(&r, NULL, false);
            skipping = !v[i].seg_end;
        } else if (v[i].seg_end) {
            /* a name waits for its path ("name (a.py)") only in its segment */
            flush_pending(&r, NULL);
        }
    }
    flush_pending(&r, NULL);
    free(v);
    free(t);
    return res;
}

/* ----------------------------------------------------------- labels -- */
typedef struct hit {
    int kind;
    size_t line_start, vstart, vend;
    size_t cont;   /* start of the next line when the hit ends its line, else 0 */
    bool last_on_line;
} hit;

static const struct { const char *word; int kind; } LABELS[] = {
    {"locations", K_LOCATIONS}, {"location", K_LOCATIONS}, {"symbols", K_SYMBOLS},
    {"symbol", K_SYMBOLS},      {"files", K_FILES},        {"file", K_FILES},
};

static size_t skip_set(const char *s, size_t i, size_t n, const char *set)
{
    while (i < n && s[i] && strchr(set, s[i])) i++;
    return i;
}

/* A label at s[i]: "Files:", "**Files**:", "Files =", or at a line start a
 * heading "### Files".  Returns its kind and the value start, or -1. */
static int label_at(const char *s, size_t i, size_t n, bool line_start, size_t *vstart)
{
    bool decorated = false;
    if (line_start) {
        for (;;) {
            size_t j = skip_set(s, i, n, " \t#>*_`");
            if (j > i) decorated = decorated || memchr(s + i, '#', j - i) || memchr(s + i, '*', j - i);
            i = j;
            if (i + 1 < n && (s[i] == '-' || s[i] == '+') && (s[i + 1] == ' ' || s[i + 1] == '\t')) {
                i += 2;
                continue;
            }
            size_t d = i;
            while (d < n && isdigit((unsigned char)s[d])) d++;
            if (d > i && d + 1 < n && (s[d] == '.' || s[d] == ')') && s[d + 1] == ' ') {
                i = d + 2;
                continue;
            }
            if (i + 3 < n && memcmp(s + i, "\xe2\x80\xa2", 3) == 0) {
                i += 3;
                continue;
            }
            break;
        }
    } else {
        i = skip_set(s, i, n, "*_`");
    }
    for (size_t k = 0; k < sizeof LABELS / sizeof LABELS[0]; k++) {
        size_t len = strlen(LABELS[k].word);
        if (i + len > n || strncasecmp(s + i, LABELS[k].word, len) != 0) continue;
        size_t j = i + len;
        if (j < n && isalnum((unsigned char)s[j])) continue;
        j = skip_set(s, j, n, "*_` \t");
        if (j < n && s[j] == '(') { /* "Locations (1-based):" */
            const char *close = memchr(s + j, ')', n - j < 48 ? n - j : 48);
            if (close) j = skip_set(s, (size_t)(close - s) + 1, n, "*_` \t");
        }
        if (j < n && (s[j] == ':' || s[j] == '=')) {
            *vstart = skip_set(s, j + 1, n, "* \t");
            return LABELS[k].kind;
        }
        if (j == n && line_start && (decorated || j > i + len)) {
            *vstart = n;
            return LABELS[k].kind;
        }
        return -1;
    }
    return -1;
}

typedef struct hits {
    hit *v;
    size_t n, cap;
} hits;

static int hits_push(hits *h, hit x)
{
    if (h->n == h->cap) {
        size_t cap = h->cap ? h->cap * 2 : 16;
        hit *v = realloc(h->v, cap * sizeof *v);
        if (v == NULL) return CN_ENOMEM;
        h->v = v;
        h->cap = cap;
    }
    h->v[h->n++] = x;
    return 0;
}

/* Labels later on a label line ("Files: a.py Symbols: a.py:f"). */
static int find_inline_label(const char *s, size_t from, size_t n, size_t *at, size_t *vstart)
{
    for (size_t j = from; j < n; j++) {
        /* only at a word start, so a run of '*' is not rescanned per byte */
        if (!isalpha((unsigned char)s[j])) continue;
        if (j > from && !strchr(" \t*`|;,", s[j - 1])) continue;
        int k = label_at(s, j, n, false, vstart);
        if (k >= 0) {
            *at = j;
            return k;
        }
    }
    return -1;
}

static int scan_line(hits *h, const char *text, size_t ls, size_t le, size_t next)
{
    size_t n = le - ls, vs;
    const char *s = text + ls;
    int k = label_at(s, 0, n, true, &vs);
    while (k >= 0) {
        size_t at, vs2;
        int k2 = find_inline_label(s, vs, n, &at, &vs2);
        hit x = {k, ls, ls + vs, ls + (k2 >= 0 ? at : n), k2 >= 0 ? 0 : next, k2 < 0};
        if (hits_push(h, x) < 0) return CN_ENOMEM;
        k = k2;
        vs = vs2;
    }
    return 0;
}

static int scan_labels(const char *text, hits *h)
{
    size_t n = strlen(text), pos = 0;
    while (pos < n) {
        const char *nl = memchr(text + pos, '\n', n - pos);
        size_t eol = nl ? (size_t)(nl - text) : n, le = eol;
        while (le > pos && (text[le - 1] == '\r' || text[le - 1] == ' ' || text[le - 1] == '\t'))
            le--;
        if (scan_line(h, text, pos, le, eol < n ? eol + 1 : n) < 0) return CN_ENOMEM;
        pos = eol + 1;
    }
    return 0;
}

bool cn_contract_present(const char *answer)
{
    hits h = {0};
    unsigned mask = 0;
    if (answer && scan_labels(answer, &h) == 0)
        for (size_t i = 0; i < h.n; i++) mask |= 1u << h.v[i].kind;
    free(h.v);
    return mask == 7;
}

/* ---------------------------------------------------------- sections -- */
static bool strip_bullet(const char **s, size_t *n)
{
    const char *p = *s;
    size_t len = *n, d = 0;
    while (d < len && isdigit((unsigned char)p[d])) d++;
    size_t skip = 0;
    if (len >= 2 && (p[0] == '-' || p[0] == '*' || p[0] == '+') && (p[1] == ' ' || p[1] == '\t')) skip = 2;
    else if (len >= 4 && memcmp(p, "\xe2\x80\xa2", 3) == 0) skip = 3;
    else if (d && d + 1 < len && (p[d] == '.' || p[d] == ')') && p[d + 1] == ' ') skip = d + 2;
    if (skip == 0) return false;
    *s = p + skip;
    *n = len - skip;
    return true;
}

/* One continuation line; false when the section ends before it. */
static bool take_cont_line(pctx *p, int kind, const char *s, size_t n, lstate *st, bool *blank)
{
    while (n && isspace((unsigned char)*s)) s++, n--;
    while (n && isspace((unsigned char)s[n - 1])) n--;
    if (n == 0) {
        *blank = true;
        return true;
    }
    if (n >= 3 && (memcmp(s, "```", 3) == 0 || memcmp(s, "~~~", 3) == 0)) return true;
    bool bullet = strip_bullet(&s, &n);
    lstate dry = {cn_strdup(st->ctx), st->ctx_used};
    lres r = run_line(p, kind, s, n, &dry, false);
    free(dry.ctx);
    /* after a blank line only a list item or a line of nothing but items
     * continues the section; prose ends it */
    if (!r.first_ok || (*blank && !bullet && !r.all_ok)) return false;
    run_line(p, kind, s, n, st, true);
    *blank = false;
    return true;
}

static void parse_section(pctx *p, const char *text, const hit *h, size_t cont_end)
{
    lstate st = {NULL, false};
    run_line(p, h->kind, text + h->vstart, h->vend - h->vstart, &st, true);
    if (h->last_on_line) {
        bool blank = false;
        size_t pos = h->cont;
        while (pos < cont_end && p->err == 0) {
            const char *nl = memchr(text + pos, '\n', cont_end - pos);
            size_t eol = nl ? (size_t)(nl - text) : cont_end;
            if (!take_cont_line(p, h->kind, text + pos, eol - pos, &st, &blank)) break;
            pos = eol + 1;
        }
    }
    lrun r = {p, h->kind, true, &st, CN_STRV_INIT};
    set_ctx(&r, NULL, false);
}

/* The last block holding all three labels, else the last block. */
static void choose_block(const hits *h, size_t *first, size_t *last)
{
    size_t start = 0, best_first = 0, best_last = 0;
    bool best = false;
    unsigned mask = 0;
    for (size_t i = 0; i < h->n; i++) {
        unsigned bit = 1u << h->v[i].kind;
        if (mask & bit) {
            mask = 0;
            start = i;
        }
        mask |= bit;
        if (mask == 7) {
            best = true;
            best_first = start;
            best_last = i;
        }
    }
    if (!best) {
        best_first = start;
        best_last = h->n ? h->n - 1 : 0;
    }
    *first = best_first;
    *last = best_last;
}

int cn_contract_parse(const char *raw, cn_contract *out)
{
    cn_contract empty = CN_CONTRACT_INIT;
    *out = empty;
    if (raw == NULL) return 0;
    /* read as UTF-8: what is kept holds no ill-formed byte and no C1
     * control, so it renders as it is and reads back the same */
    char *answer = cn_utf8_scrub_dup(raw, strlen(raw), CN_UTF8_KEEP_C0);
    if (answer == NULL) return cn_error_set(CN_ENOMEM, "out of memory parsing the localization contract");
    hits h = {0};
    pctx p = {out, {{0}}, 0};
    p.err = scan_labels(answer, &h);
    if (p.err == 0 && h.n) {
        size_t first, last, n = strlen(answer);
        choose_block(&h, &first, &last);
        for (size_t i = first; i <= last && p.err == 0; i++) {
            bool *flag = h.v[i].kind == K_FILES ? &out->has_files
                         : h.v[i].kind == K_SYMBOLS ? &out->has_symbols : &out->has_locations;
            *flag = true;
            size_t cont_end = i + 1 < h.n ? h.v[i + 1].line_start : n;
            parse_section(&p, answer, &h.v[i], cont_end);
        }
    }
    for (int k = 0; k < K_COUNT; k++) sset_free(&p.seen[k]);
    free(h.v);
    free(answer);
    if (p.err) {
        cn_contract_free(out);
        return cn_error_set(CN_ENOMEM, "out of memory parsing the localization contract");
    }
    return 0;
}

/* ------------------------------------------------------------ output -- */
/* An entry as given (the planner's come from the index, any bytes): a
 * control character in it would start a forged line ("a.py\nFiles: x")
 * or reach a terminal, so controls and ill-formed bytes print as U+FFFD.
 * Parsed entries hold neither and print unchanged. */
static void put_entry(cn_buf *b, bool first, const char *s)
{
    cn_buf_puts(b, first ? " " : ", ");
    if (cn_utf8_scrub(b, s, strlen(s), 0) < 0) b->oom = true;
}

static void render_list(cn_buf *b, const char *label, char **items, size_t n)
{
    cn_buf_puts(b, label);
    if (n == 0) cn_buf_puts(b, " none");
    for (size_t i = 0; i < n; i++) put_entry(b, i == 0, items[i]);
    cn_buf_putc(b, '\n');
}

char *cn_contract_render(const cn_contract *c)
{
    cn_buf b = CN_BUF_INIT;
    render_list(&b, "Files:", c->files.items, c->files.len);
    render_list(&b, "Symbols:", c->symbols.items, c->symbols.len);
    cn_buf_puts(&b, "Locations:");
    if (c->n_locations == 0) cn_buf_puts(&b, " none");
    for (size_t i = 0; i < c->n_locations; i++) {
        const cn_contract_loc *l = &c->locations[i];
        put_entry(&b, i == 0, l->path);
        if (l->start_line == 0) continue;
        if (l->start_line == l->end_line) cn_buf_printf(&b, ":%u", (unsigned)l->start_line);
        else cn_buf_printf(&b, ":%u-%u", (unsigned)l->start_line, (unsigned)l->end_line);
    }
    if (b.oom) {
        cn_buf_free(&b);
        cn_error_set(CN_ENOMEM, "out of memory rendering the localization contract");
        return NULL;
    }
    return cn_buf_steal(&b);
}

static json_object *loc_json(const cn_contract_loc *l)
{
    json_object *o = json_object_new_object();
    if (o == NULL) return NULL;
    bool whole = l->start_line == 0;
    json_object_object_add(o, "path", json_object_new_string(l->path));
    json_object_object_add(o, "start_line", whole ? NULL : json_object_new_int64(l->start_line));
    json_object_object_add(o, "end_line", whole ? NULL : json_object_new_int64(l->end_line));
    return o;
}

json_object *cn_contract_to_json(const cn_contract *c)
{
    json_object *o = json_object_new_object();
    json_object *files = cn_json_strv(&c->files), *syms = cn_json_strv(&c->symbols);
    json_object *locs = json_object_new_array();
    for (size_t i = 0; locs && i < c->n_locations; i++) {
        json_object *l = loc_json(&c->locations[i]);
        if (l == NULL || json_object_array_add(locs, l) != 0) {
            json_object_put(l);
            json_object_put(locs);
            locs = NULL;
        }
    }
    if (o == NULL || files == NULL || syms == NULL || locs == NULL) {
        json_object_put(o);
        json_object_put(files);
        json_object_put(syms);
        json_object_put(locs);
        cn_error_set(CN_ENOMEM, "out of memory converting the localization contract to JSON");
        return NULL;
    }
    json_object_object_add(o, "files", files);
    json_object_object_add(o, "symbols", syms);
    json_object_object_add(o, "locations", locs);
    return o;
}
