/* SPDX-License-Identifier: Apache-2.0 */
/* codenib language backend for Python, built on tree-sitter-python.
 *
 * The syntax tree is walked iteratively with a TSTreeCursor (never by
 * recursion), so arbitrarily deep nesting cannot exhaust the stack.  For
 * every node the walker derives a "mode" from its parent and the field it
 * sits in (an expression that is read, an assignment target, a parameter, a
 * base class, or something to ignore) and decides from its kind and mode
 * what to emit and whether to descend.
 *
 * Contexts (emitted nodes, function bodies with their local names, lambda
 * and comprehension scopes) live on a stack tagged with the tree depth at
 * which they were opened; arriving at a node of depth d closes every
 * context opened at depth >= d.
 *
 * libtree-sitter 0.20 stores child counts in 16 bits: brackets nested
 * deeper than CN_TS_MAX_NESTING are blanked out before parsing, and the
 * parse runs under cn_ts_parse_guarded() (plugins/common/cn_ts_guard.h). */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tree_sitter/api.h>

#include <codenib/lang.h>

#include "cn_ts_arena.h"
#include "cn_ts_guard.h"

const TSLanguage *tree_sitter_python(void);

#define PY_VERSION "0.1.0+tree-sitter-python-0.23.6"

/* ------------------------------------------------------------------ */
/* Node kinds of interest                                              */

enum {
    K_OTHER = 0,
    K_IDENTIFIER,
    K_ATTRIBUTE,
    K_CALL,
    K_SUBSCRIPT,
    K_FUNCTION_DEF,
    K_CLASS_DEF,
    K_DECORATED_DEF,
    K_DECORATOR,
    K_BLOCK,
    K_COMMENT,
    K_IMPORT,
    K_IMPORT_FROM,
    K_FUTURE_IMPORT,
    K_DOTTED_NAME,
    K_RELATIVE_IMPORT,
    K_IMPORT_PREFIX,
    K_ALIASED_IMPORT,
    K_WILDCARD_IMPORT,
    K_GLOBAL,
    K_NONLOCAL,
    K_ASSIGNMENT,
    K_AUG_ASSIGNMENT,
    K_FOR_STATEMENT,
    K_FOR_IN_CLAUSE,
    K_AS_PATTERN,
    K_EXCEPT_CLAUSE,
    K_NAMED_EXPRESSION,
    K_KEYWORD_ARGUMENT,
    K_PARAMETERS,
    K_LAMBDA_PARAMETERS,
    K_DEFAULT_PARAMETER,
    K_TYPED_DEFAULT_PARAMETER,
    K_TYPED_PARAMETER,
    K_LIST_SPLAT_PATTERN,
    K_DICT_SPLAT_PATTERN,
    K_TUPLE_PATTERN,
    K_LIST_PATTERN,
    K_PATTERN_LIST,
    K_TUPLE,
    K_LIST,
    K_PARENTHESIZED,
    K_LIST_SPLAT,
    K_AS_PATTERN_TARGET,
    K_LAMBDA,
    K_LIST_COMP,
    K_SET_COMP,
    K_DICT_COMP,
    K_GENERATOR,
    K_CASE_PATTERN,
    K_CLASS_PATTERN,
    K_TYPE_ALIAS,
    K_MEMBER_TYPE,
    K_ERROR,
    K_COUNT
};

static const char *const kind_type_names[K_COUNT] = {
    [K_IDENTIFIER] = "identifier",
    [K_ATTRIBUTE] = "attribute",
    [K_CALL] = "call",
    [K_SUBSCRIPT] = "subscript",
    [K_FUNCTION_DEF] = "function_definition",
    [K_CLASS_DEF] = "class_definition",
    [K_DECORATED_DEF] = "decorated_definition",
    [K_DECORATOR] = "decorator",
    [K_BLOCK] = "block",
    [K_COMMENT] = "comment",
    [K_IMPORT] = "import_statement",
    [K_IMPORT_FROM] = "import_from_statement",
    [K_FUTURE_IMPORT] = "future_import_statement",
    [K_DOTTED_NAME] = "dotted_name",
    [K_RELATIVE_IMPORT] = "relative_import",
    [K_IMPORT_PREFIX] = "import_prefix",
    [K_ALIASED_IMPORT] = "aliased_import",
    [K_WILDCARD_IMPORT] = "wildcard_import",
    [K_GLOBAL] = "global_statement",
    [K_NONLOCAL] = "nonlocal_statement",
    [K_ASSIGNMENT] = "assignment",
    [K_AUG_ASSIGNMENT] = "augmented_assignment",
    [K_FOR_STATEMENT] = "for_statement",
    [K_FOR_IN_CLAUSE] = "for_in_clause",
    [K_AS_PATTERN] = "as_pattern",
    [K_EXCEPT_CLAUSE] = "except_clause",
    [K_NAMED_EXPRESSION] = "named_expression",
    [K_KEYWORD_ARGUMENT] = "keyword_argument",
    [K_PARAMETERS] = "parameters",
    [K_LAMBDA_PARAMETERS] = "lambda_parameters",
    [K_DEFAULT_PARAMETER] = "default_parameter",
    [K_TYPED_DEFAULT_PARAMETER] = "typed_default_parameter",
    [K_TYPED_PARAMETER] = "typed_parameter",
    [K_LIST_SPLAT_PATTERN] = "list_splat_pattern",
    [K_DICT_SPLAT_PATTERN] = "dictionary_splat_pattern",
    [K_TUPLE_PATTERN] = "tuple_pattern",
    [K_LIST_PATTERN] = "list_pattern",
    [K_PATTERN_LIST] = "pattern_list",
    [K_TUPLE] = "tuple",
    [K_LIST] = "list",
    [K_PARENTHESIZED] = "parenthesized_expression",
    [K_LIST_SPLAT] = "list_splat",
    [K_AS_PATTERN_TARGET] = "as_pattern_target",
    [K_LAMBDA] = "lambda",
    [K_LIST_COMP] = "list_comprehension",
    [K_SET_COMP] = "set_comprehension",
    [K_DICT_COMP] = "dictionary_comprehension",
    [K_GENERATOR] = "generator_expression",
    [K_CASE_PATTERN] = "case_pattern",
    [K_CLASS_PATTERN] = "class_pattern",
    [K_TYPE_ALIAS] = "type_alias_statement",
    [K_MEMBER_TYPE] = "member_type",
    [K_ERROR] = "ERROR",
};

/* Field ids of interest, resolved once per parser. */
typedef struct py_fields {
    TSFieldId name, left, alias, attribute, object, function, parameters, value, type,
        superclasses, type_parameters, definition, module_name;
} py_fields;

/* ------------------------------------------------------------------ */
/* A set of names (slices of the source)                               */

typedef struct name_entry {
    const char *p; /* NULL = empty slot */
    uint32_t len;
    uint32_t global; /* declared global/nonlocal: never a local */
} name_entry;

typedef struct name_set {
    name_entry *slots;
    size_t cap; /* power of two, or 0 */
    size_t count;
} name_set;

static uint64_t name_hash(const char *p, size_t len)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < len; i++) {
        h ^= (unsigned char)p[i];
        h *= 1099511628211ull;
    }
    return h;
}

static name_entry *name_set_find(const name_set *s, const char *p, size_t len)
{
    if (s == NULL || s->cap == 0) return NULL;
    size_t mask = s->cap - 1;
    for (size_t i = (size_t)name_hash(p, len) & mask;; i = (i + 1) & mask) {
        name_entry *e = &s->slots[i];
        if (e->p == NULL) return NULL;
        if (e->len == len && memcmp(e->p, p, len) == 0) return e;
    }
}

/* Returns 0, or -1 when out of memory. */
static int name_set_add(name_set *s, const char *p, size_t len, bool global)
{
    name_entry *e;
    if (len == 0 || len > UINT32_MAX) return 0;
    e = name_set_find(s, p, len);
    if (e != NULL) {
        if (global) e->global = 1;
        return 0;
    }
    if ((s->count + 1) * 2 > s->cap) {
        size_t ncap = s->cap ? s->cap * 2 : 16;
        name_entry *ns = calloc(ncap, sizeof *ns);
        if (ns == NULL) return -1;
        for (size_t i = 0; i < s->cap; i++) {
            if (s->slots[i].p == NULL) continue;
            size_t j = (size_t)name_hash(s->slots[i].p, s->slots[i].len) & (ncap - 1);
            while (ns[j].p != NULL) j = (j + 1) & (ncap - 1);
            ns[j] = s->slots[i];
        }
        free(s->slots);
        s->slots = ns;
        s->cap = ncap;
    }
    size_t mask = s->cap - 1;
    size_t i = (size_t)name_hash(p, len) & mask;
    while (s->slots[i].p != NULL) i = (i + 1) & mask;
    s->slots[i].p = p;
    s->slots[i].len = (uint32_t)len;
    s->slots[i].global = global ? 1 : 0;
    s->count++;
    return 0;
}

static void name_set_free(name_set *s)
{
    if (s == NULL) return;
    free(s->slots);
    free(s);
}

/* ------------------------------------------------------------------ */
/* Parser state                                                        */

/* Modes: a value that is read; an assignment (for, with, except, walrus)
 * target; a parameter; something never reported; a class's argument
 * list and one base in it; a match-case pattern (whose bare names are
 * captures, bound like targets). */
enum { M_EXPR = 0, M_TARGET, M_PARAM, M_SKIP, M_BASES_LIST, M_BASES, M_CASE };

/* frame flags */
#define FR_CALLEE_NAMED 0x01u  /* call: its callee chain was emitted as the call */
#define FR_NONCHAIN 0x02u      /* attribute: not a chain of identifiers */
#define FR_HAS_NODE 0x04u      /* definition: a node was emitted for it */
#define FR_BASE_SUBSCRIPT 0x08u /* subscript base class: value already emitted */

typedef struct frame {
    uint8_t kind;
    uint8_t mode;
    uint8_t flags;
    name_set *locals; /* the function whose locals this node can bind, or NULL */
} frame;

typedef struct frame_vec {
    frame *v;
    size_t cap;
} frame_vec;

enum { C_NODE, C_LOCALS, C_SCOPE };

typedef struct context {
    int type;
    uint32_t depth;
    int32_t index;     /* C_NODE: emitted node index */
    bool is_class;     /* C_NODE */
    size_t path_len;   /* C_NODE: qualname path length to restore */
    name_set *set;     /* C_NODE: the function's locals (owned); C_LOCALS:
                          borrowed from the C_NODE; C_SCOPE: owned */
} context;

/* A reference held back until the end of the top-level statement: a name
 * read in a function is local if the function binds it anywhere, also
 * after the use, and the function's names are collected by the same walk
 * that finds the uses. */
typedef struct pending_ref {
    int kind;
    int32_t from;
    uint32_t line, column;
    size_t name, target;    /* offsets in py_state.qtext; target SIZE_MAX: none */
    const name_set *locals; /* dropped if it binds p[0, plen) (not global) */
    const char *p;
    uint32_t plen;
} pending_ref;

typedef struct py_state {
    cn_ts_arena *arena; /* each parse's tree-sitter memory; NULL: none */
    const cn_host *host;
    TSParser *ts;
    uint8_t *sym_kind; /* symbol id -> K_* */
    uint32_t sym_count;
    py_fields f;

    /* per parse */
    const char *src;
    size_t len;
    const cn_lang_sink *sink;
    cn_error *err;
    int rc;

    context *ctx;
    size_t nctx, capctx;
    char *path; /* qualname of the innermost definition */
    size_t path_len, path_cap;
    char *scratch; /* names handed to the sink */
    size_t scratch_cap;
    char *scratch2;
    size_t scratch2_cap;
    frame_vec fr_main, fr_collect;
    pending_ref *q; /* references of the current top-level statement */
    size_t nq, capq;
    char *qtext;
    size_t qtext_len, qtext_cap;
    name_set **retired; /* locals of closed functions, until the flush */
    size_t nretired, capretired;
} py_state;

static int set_error(py_state *st, int code, const char *msg)
{
    if (st->rc == 0) st->rc = code;
    if (st->err != NULL) {
        if (st->host != NULL && st->host->error_set != NULL) {
            st->host->error_set(st->err, code, "lang-python: %s", msg);
        } else {
            st->err->code = code;
            snprintf(st->err->message, sizeof st->err->message, "lang-python: %s", msg);
        }
    }
    return code;
}

static int oom(py_state *st) { return set_error(st, CN_ENOMEM, "out of memory"); }

static int kind_of(const py_state *st, TSNode n)
{
    TSSymbol s = ts_node_symbol(n);
    if (s == (TSSymbol)-1) return K_ERROR; /* ts_builtin_sym_error */
    return s < st->sym_count ? st->sym_kind[s] : K_OTHER;
}

static uint32_t line_of(TSNode n) { return ts_node_start_point(n).row + 1; }

/* Line of the last character of n. */
static uint32_t end_line_of(TSNode n)
{
    TSPoint e = ts_node_end_point(n);
    if (e.column == 0 && ts_node_end_byte(n) > ts_node_start_byte(n) && e.row > 0) return e.row;
    return e.row + 1;
}

static bool grow(void **buf, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap) return true;
    size_t ncap = *cap ? *cap : 64;
    while (ncap < need) {
        if (ncap > SIZE_MAX / 2 / elem) return false;
        ncap *= 2;
    }
    void *nb = realloc(*buf, ncap * elem);
    if (nb == NULL) return false;
    *buf = nb;
    *cap = ncap;
    return true;
}

static const char *text_of(const py_state *st, TSNode n, size_t *len)
{
    uint32_t a = ts_node_start_byte(n), b = ts_node_end_byte(n);
    if (a > st->len) a = (uint32_t)st->len;
    if (b > st->len) b = (uint32_t)st->len;
    if (b < a) b = a;
    *len = b - a;
    return st->src + a;
}

/* Hard keywords: error recovery may leave them as identifiers. */
static bool is_keyword(const char *p, size_t len)
{
    static const char *const kw[] = {
        "False", "None", "True", "and", "as", "assert", "async", "await", "break",
        "class", "continue", "def", "del", "elif", "else", "except", "finally", "for",
        "from", "global", "if", "import", "in", "is", "lambda", "nonlocal", "not", "or",
        "pass", "raise", "return", "try", "while", "with", "yield"};
    if (len < 2 || len > 8) return false;
    for (size_t i = 0; i < sizeof kw / sizeof kw[0]; i++)
        if (strlen(kw[i]) == len && memcmp(kw[i], p, len) == 0) return true;
    return false;
}

/* Real identifier: not a zero-width MISSING one, not a keyword. */
static bool is_ident(const py_state *st, TSNode n)
{
    if (ts_node_is_null(n) || kind_of(st, n) != K_IDENTIFIER || ts_node_is_missing(n)) return false;
    size_t len;
    const char *p = text_of(st, n, &len);
    return len > 0 && !is_keyword(p, len);
}

/* Is n an identifier or an attribute chain of identifiers?  *base receives
 * the leftmost node of the object spine. */
static bool chain_base(const py_state *st, TSNode n, TSNode *base)
{
    while (kind_of(st, n) == K_ATTRIBUTE) {
        if (!is_ident(st, ts_node_child_by_field_id(n, st->f.attribute))) {
            *base = n;
            return false;
        }
        TSNode o = ts_node_child_by_field_id(n, st->f.object);
        if (ts_node_is_null(o)) {
            *base = n;
            return false;
        }
        n = o;
    }
    *base = n;
    return is_ident(st, n);
}

/* Writes the dotted text of a chain (identifiers joined by '.', without the
 * whitespace, comments and line continuations the source may hold) into
 * a buffer; returns it NUL-terminated, or NULL when out of memory. */
static char *chain_text(py_state *st, TSNode n, char **buf, size_t *cap)
{
    size_t len, o = 0;
    const char *p = text_of(st, n, &len);
    if (!grow((void **)buf, cap, len + 1, 1)) return NULL;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)p[i];
        if (c == '#') {
            while (i < len && p[i] != '\n' && p[i] != '\r') i++;
            continue;
        }
        if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\\' ||
            c == '\v' || c == '\0')
            continue;
        (*buf)[o++] = (char)c;
    }
    (*buf)[o] = '\0';
    return *buf;
}

static char *copy_text(py_state *st, TSNode n, char **buf, size_t *cap)
{
    size_t len;
    const char *p = text_of(st, n, &len);
    if (!grow((void **)buf, cap, len + 1, 1)) return NULL;
    memcpy(*buf, p, len);
    (*buf)[len] = '\0';
    return *buf;
}

/* ------------------------------------------------------------------ */
/* Contexts                                                            */

static context *ctx_push(py_state *st, int type, uint32_t depth)
{
    if (!grow((void **)&st->ctx, &st->capctx, st->nctx + 1, sizeof *st->ctx)) return NULL;
    context *c = &st->ctx[st->nctx++];
    memset(c, 0, sizeof *c);
    c->type = type;
    c->depth = depth;
    c->index = -1;
    c->path_len = st->path_len;
    return c;
}

/* Keeps a closed function's locals until the pending references that
 * may look at them are flushed. */
static void retire_set(py_state *st, name_set *set)
{
    if (set == NULL) return;
    if (!grow((void **)&st->retired, &st->capretired, st->nretired + 1, sizeof *st->retired)) {
        oom(st); /* nothing is flushed after a failure: the set can go */
        name_set_free(set);
        return;
    }
    st->retired[st->nretired++] = set;
}

static void ctx_pop_one(py_state *st)
{
    context *c = &st->ctx[--st->nctx];
    if (c->type == C_NODE) {
        retire_set(st, c->set);
        st->path_len = c->path_len;
        if (st->path != NULL) st->path[st->path_len] = '\0';
    } else if (c->type == C_SCOPE) {
        name_set_free(c->set);
    }
}

/* Closes every context opened at depth >= depth, down to `floor`. */
static void ctx_pop_to_depth(py_state *st, size_t floor, uint32_t depth)
{
    while (st->nctx > floor && st->ctx[st->nctx - 1].depth >= depth) ctx_pop_one(st);
}

static context *ctx_top_node(py_state *st)
{
    for (size_t i = st->nctx; i > 0; i--)
        if (st->ctx[i - 1].type == C_NODE) return &st->ctx[i - 1];
    return NULL;
}

static int32_t current_from(py_state *st)
{
    context *c = ctx_top_node(st);
    return c ? c->index : -1;
}

/* Is the name bound by a lambda or comprehension around the use?  If not,
 * *locals receives the innermost function body's names (NULL outside
 * functions), which are complete only once the function has been walked:
 * the name is local if they hold it, not declared global. */
static bool scope_binds(py_state *st, const char *p, size_t len, const name_set **locals)
{
    *locals = NULL;
    for (size_t i = st->nctx; i > 0; i--) {
        context *c = &st->ctx[i - 1];
        if (c->type == C_SCOPE) {
            if (name_set_find(c->set, p, len) != NULL) return true;
        } else if (c->type == C_LOCALS) {
            *locals = c->set;
            return false;
        }
    }
    return false;
}

/* ------------------------------------------------------------------ */
/* Emission                                                            */

/* The sink failed with rc: the parse stops with it, and with the sink's own
 * message if it left one.  Returns rc. */
static int sink_refused(py_state *st, int rc, const char *what)
{
    st->rc = rc;
    if (st->err != NULL && st->err->code == 0) {
        st->err->code = rc;
        snprintf(st->err->message, sizeof st->err->message, "lang-python: sink refused %s", what);
    }
    return rc;
}

/* Copies s into the pending text; returns its offset, or SIZE_MAX when out
 * of memory. */
static size_t qtext_add(py_state *st, const char *s)
{
    size_t n = strlen(s) + 1, off = st->qtext_len;
    if (!grow((void **)&st->qtext, &st->qtext_cap, off + n, 1)) return SIZE_MAX;
    memcpy(st->qtext + off, s, n);
    st->qtext_len += n;
    return off;
}

/* Queues a reference (see pending_ref); with `locals`, it is dropped at the
 * flush if they bind p[0, plen). */
static int queue_ref(py_state *st, int kind, const char *name, const char *target, TSNode at,
                     const name_set *locals, const char *p, size_t plen)
{
    pending_ref *r;
    TSPoint pt = ts_node_start_point(at);
    if (st->rc < 0) return st->rc;
    if (!grow((void **)&st->q, &st->capq, st->nq + 1, sizeof *st->q)) return oom(st);
    r = &st->q[st->nq];
    r->kind = kind;
    r->from = current_from(st);
    r->line = pt.row + 1;
    r->column = pt.column;
    r->locals = locals;
    r->p = p;
    r->plen = (uint32_t)plen;
    r->name = qtext_add(st, name);
    r->target = target ? qtext_add(st, target) : 0;
    if (r->name == SIZE_MAX || r->target == SIZE_MAX) return oom(st);
    if (target == NULL) r->target = SIZE_MAX;
    st->nq++;
    return 0;
}

static int emit_ref(py_state *st, int kind, const char *name, const char *target, TSNode at)
{
    return queue_ref(st, kind, name, target, at, NULL, NULL, 0);
}

/* A reference to the name p[0, len) read at `at`, unless a local binds it. */
static int emit_read(py_state *st, int kind, const char *name, TSNode at, const char *p, size_t len)
{
    const name_set *locals;
    if (scope_binds(st, p, len, &locals)) return 0;
    return queue_ref(st, kind, name, NULL, at, locals, p, len);
}

/* Drops the pending references (after a failure) and the retired locals. */
static void discard_refs(py_state *st)
{
    st->nq = 0;
    st->qtext_len = 0;
    for (size_t i = 0; i < st->nretired; i++) name_set_free(st->retired[i]);
    st->nretired = 0;
}

/* Hands the pending references to the sink, in the order they were found,
 * and frees the locals of the functions closed since the last flush. */
static int flush_refs(py_state *st)
{
    for (size_t i = 0; i < st->nq && st->rc >= 0; i++) {
        const pending_ref *q = &st->q[i];
        cn_lang_ref r;
        if (q->locals != NULL) {
            const name_entry *e = name_set_find(q->locals, q->p, q->plen);
            if (e != NULL && !e->global) continue;
        }
        memset(&r, 0, sizeof r);
        r.struct_size = (uint32_t)sizeof r;
        r.kind = q->kind;
        r.from = q->from;
        r.name = st->qtext + q->name;
        r.target = q->target == SIZE_MAX ? NULL : st->qtext + q->target;
        r.line = q->line;
        r.column = q->column;
        int rc = st->sink->ref(st->sink->data, &r);
        if (rc < 0) sink_refused(st, rc, "a reference");
    }
    discard_refs(st);
    return st->rc;
}

static int emit_node(py_state *st, int kind, const char *name, uint32_t start, uint32_t end,
                     uint32_t flags, int32_t *index)
{
    cn_lang_node n;
    if (st->rc < 0) return st->rc;
    memset(&n, 0, sizeof n);
    n.struct_size = (uint32_t)sizeof n;
    n.kind = kind;
    n.name = name;
    n.qualname = kind == CN_NODE_BLOCK ? name : st->path;
    n.start_line = start;
    n.end_line = end < start ? start : end;
    n.parent = current_from(st);
    n.flags = flags;
    int rc = st->sink->node(st->sink->data, &n);
    if (rc < 0) return sink_refused(st, rc, "a node");
    *index = rc;
    return 0;
}

/* ------------------------------------------------------------------ */
/* Imports                                                             */

/* Dotted text of a dotted_name or relative_import into buf. */
static char *module_text(py_state *st, TSNode n, char **buf, size_t *cap)
{
    if (kind_of(st, n) != K_RELATIVE_IMPORT) return chain_text(st, n, buf, cap);
    size_t len, o = 0;
    (void)text_of(st, n, &len);
    if (!grow((void **)buf, cap, len + 1, 1)) return NULL;
    /* the prefix: its dots only */
    uint32_t nc = ts_node_child_count(n);
    for (uint32_t i = 0; i < nc; i++) {
        TSNode c = ts_node_child(n, i);
        int k = kind_of(st, c);
        size_t cl;
        const char *cp = text_of(st, c, &cl);
        if (k == K_IMPORT_PREFIX) {
            for (size_t j = 0; j < cl; j++)
                if (cp[j] == '.') (*buf)[o++] = '.';
        } else if (k == K_DOTTED_NAME) {
            for (size_t j = 0; j < cl; j++) {
                unsigned char ch = (unsigned char)cp[j];
                if (ch == '#') {
                    while (j < cl && cp[j] != '\n') j++;
                    continue;
                }
                if (ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r' || ch == '\\' ||
                    ch == '\f' || ch == '\0')
                    continue;
                (*buf)[o++] = (char)ch;
            }
        }
    }
    (*buf)[o] = '\0';
    return *buf;
}

/* One imported name: `what` is a dotted_name or aliased_import (or a
 * wildcard_import); `module` the dotted module text for from-imports, or
 * NULL for `import x`. */
static int emit_import(py_state *st, TSNode what, const char *module)
{
    int k = kind_of(st, what);
    TSNode name_node = what, alias = {0};
    char *name, *target;
    size_t nlen, mlen = module ? strlen(module) : 0;

    if (k == K_ALIASED_IMPORT) {
        name_node = ts_node_child_by_field_id(what, st->f.name);
        alias = ts_node_child_by_field_id(what, st->f.alias);
        if (ts_node_is_null(name_node)) return 0;
    } else if (k != K_DOTTED_NAME && k != K_WILDCARD_IMPORT) {
        return 0;
    }
    /* target = module [+ "."] + imported name */
    if (k == K_WILDCARD_IMPORT) {
        if (!grow((void **)&st->scratch, &st->scratch_cap, 2, 1)) return oom(st);
        strcpy(st->scratch, "*");
    } else if (chain_text(st, name_node, &st->scratch, &st->scratch_cap) == NULL) {
        return oom(st);
    }
    nlen = strlen(st->scratch);
    if (nlen == 0) return 0;
    if (!grow((void **)&st->scratch2, &st->scratch2_cap, mlen + nlen + 2, 1)) return oom(st);
    target = st->scratch2;
    if (module != NULL) {
        memcpy(target, module, mlen);
        if (mlen > 0 && module[mlen - 1] != '.') target[mlen++] = '.';
    }
    memcpy(target + mlen, st->scratch, nlen + 1);
    /* local name: the alias, or the name as written */
    name = st->scratch;
    if (!ts_node_is_null(alias) && is_ident(st, alias)) {
        if (copy_text(st, alias, &st->scratch, &st->scratch_cap) == NULL) return oom(st);
        name = st->scratch;
    }
    return emit_ref(st, CN_REF_IMPORT, name, target, what);
}

static int handle_import(py_state *st, TSNode n, int k)
{
    char *module = NULL;
    int rc = 0;
    if (k == K_IMPORT_FROM || k == K_FUTURE_IMPORT) {
        if (k == K_FUTURE_IMPORT) {
            module = malloc(sizeof "__future__");
            if (module != NULL) memcpy(module, "__future__", sizeof "__future__");
        } else {
            TSNode m = ts_node_child_by_field_id(n, st->f.module_name);
            char *buf = NULL;
            size_t cap = 0;
            if (ts_node_is_null(m)) return 0;
            if (module_text(st, m, &buf, &cap) == NULL) {
                free(buf);
                return oom(st);
            }
            module = buf;
        }
        if (module == NULL) return oom(st);
    }
    TSTreeCursor c = ts_tree_cursor_new(n);
    if (ts_tree_cursor_goto_first_child(&c)) {
        do {
            TSNode ch = ts_tree_cursor_current_node(&c);
            TSFieldId fid = ts_tree_cursor_current_field_id(&c);
            int ck = kind_of(st, ch);
            if ((fid != 0 && fid == st->f.name) || (k == K_IMPORT_FROM && ck == K_WILDCARD_IMPORT)) {
                rc = emit_import(st, ch, module);
                if (rc < 0) break;
            }
        } while (ts_tree_cursor_goto_next_sibling(&c));
    }
    ts_tree_cursor_delete(&c);
    free(module);
    return rc < 0 ? rc : st->rc;
}

/* ------------------------------------------------------------------ */
/* Names bound by a target (comprehension variables, lambda parameters) */

static bool is_target_container(int k)
{
    switch (k) {
    case K_PATTERN_LIST:
    case K_TUPLE_PATTERN:
    case K_LIST_PATTERN:
    case K_TUPLE:
    case K_LIST:
    case K_PARENTHESIZED:
    case K_LIST_SPLAT_PATTERN:
    case K_LIST_SPLAT:
    case K_AS_PATTERN_TARGET:
    case K_ERROR:
        return true;
    default:
        return false;
    }
}

static bool is_param_container(int k)
{
    switch (k) {
    case K_PARAMETERS:
    case K_LAMBDA_PARAMETERS:
    case K_LIST_SPLAT_PATTERN:
    case K_DICT_SPLAT_PATTERN:
    case K_TUPLE_PATTERN:
    case K_TYPED_PARAMETER:
    case K_DEFAULT_PARAMETER:
    case K_TYPED_DEFAULT_PARAMETER:
        return true;
    default:
        return false;
    }
}

/* Adds the identifiers bound by target/parameter subtree n.  params: n is
 * a parameter list (default values and annotations are not bindings). */
static int collect_bound(py_state *st, TSNode n, bool params, name_set *set)
{
    TSTreeCursor c = ts_tree_cursor_new(n);
    uint32_t depth = 0;
    int rc = 0;
    for (;;) {
        TSNode cur = ts_tree_cursor_current_node(&c);
        int k = kind_of(st, cur);
        bool descend = false;
        TSFieldId fid = depth > 0 ? ts_tree_cursor_current_field_id(&c) : 0;
        bool skip_field = fid != 0 && (fid == st->f.value || fid == st->f.type);
        if (!skip_field) {
            if (k == K_IDENTIFIER) {
                size_t len;
                const char *p = text_of(st, cur, &len);
                if (name_set_add(set, p, len, false) < 0) {
                    rc = oom(st);
                    break;
                }
            } else if (params ? is_param_container(k) : is_target_container(k)) {
                descend = true;
            }
        }
        if (descend && ts_tree_cursor_goto_first_child(&c)) {
            depth++;
            continue;
        }
        while (depth > 0 && !ts_tree_cursor_goto_next_sibling(&c)) {
            ts_tree_cursor_goto_parent(&c);
            depth--;
        }
        if (depth == 0) break;
    }
    ts_tree_cursor_delete(&c);
    return rc;
}

static int push_scope(py_state *st, TSNode n, int k, uint32_t depth)
{
    name_set *set = calloc(1, sizeof *set);
    context *cx;
    int rc = 0;
    if (set == NULL) return oom(st);
    if (k == K_LAMBDA) {
        TSNode p = ts_node_child_by_field_id(n, st->f.parameters);
        if (!ts_node_is_null(p)) rc = collect_bound(st, p, true, set);
    } else {
        TSTreeCursor c = ts_tree_cursor_new(n);
        if (ts_tree_cursor_goto_first_child(&c)) {
            do {
                TSNode ch = ts_tree_cursor_current_node(&c);
                if (ts_node_symbol(ch) < st->sym_count && kind_of(st, ch) == K_FOR_IN_CLAUSE) {
                    TSNode l = ts_node_child_by_field_id(ch, st->f.left);
                    if (!ts_node_is_null(l)) rc = collect_bound(st, l, false, set);
                    if (rc < 0) break;
                }
            } while (ts_tree_cursor_goto_next_sibling(&c));
        }
        ts_tree_cursor_delete(&c);
    }
    if (rc < 0 || (cx = ctx_push(st, C_SCOPE, depth)) == NULL) {
        name_set_free(set);
        return rc < 0 ? rc : oom(st);
    }
    cx->set = set;
    return 0;
}

/* ------------------------------------------------------------------ */
/* Definitions                                                         */

static bool text_is(const py_state *st, TSNode n, const char *word)
{
    size_t len;
    const char *p = text_of(st, n, &len);
    return len == strlen(word) && memcmp(p, word, len) == 0;
}

/* Flags contributed by the decorators of a decorated_definition. */
static uint32_t decorator_flags(py_state *st, TSNode dd)
{
    uint32_t flags = CN_NODE_F_DECORATED;
    TSTreeCursor c = ts_tree_cursor_new(dd);
    if (ts_tree_cursor_goto_first_child(&c)) {
        do {
            TSNode d = ts_tree_cursor_current_node(&c);
            if (kind_of(st, d) != K_DECORATOR) continue;
            TSNode e = ts_node_named_child(d, 0);
            while (!ts_node_is_null(e) && kind_of(st, e) == K_COMMENT) e = ts_node_next_named_sibling(e);
            if (ts_node_is_null(e)) continue;
            int k = kind_of(st, e);
            if (k == K_IDENTIFIER) {
                if (text_is(st, e, "property")) flags |= CN_NODE_F_PROPERTY;
                else if (text_is(st, e, "staticmethod")) flags |= CN_NODE_F_STATIC;
                else if (text_is(st, e, "classmethod")) flags |= CN_NODE_F_CLASSMETHOD;
            } else if (k == K_ATTRIBUTE) {
                TSNode a = ts_node_child_by_field_id(e, st->f.attribute);
                if (!ts_node_is_null(a) &&
                    (text_is(st, a, "setter") || text_is(st, a, "getter") || text_is(st, a, "deleter")))
                    flags |= CN_NODE_F_PROPERTY;
            }
        } while (ts_tree_cursor_goto_next_sibling(&c));
    }
    ts_tree_cursor_delete(&c);
    return flags;
}

static bool is_async_def(py_state *st, TSNode def)
{
    TSNode first = ts_node_child(def, 0);
    (void)st;
    return !ts_node_is_null(first) && !ts_node_is_named(first) && strcmp(ts_node_type(first), "async") == 0;
}

/* Emits the node for a class or function definition `def` whose extent is
 * `outer` (the decorated_definition when decorated), and opens its
 * context at `depth`.  Returns 1 if a node was emitted, 0 if the
 * definition has no usable name, or a negative code. */
static int open_definition(py_state *st, TSNode def, TSNode outer, bool decorated, uint32_t depth)
{
    int k = kind_of(st, def);
    TSNode nm = ts_node_child_by_field_id(def, st->f.name);
    context *parent = ctx_top_node(st);
    uint32_t flags = 0;
    int kind;
    size_t nlen;
    const char *np;
    context *cx;

    if (!is_ident(st, nm)) return 0;
    np = text_of(st, nm, &nlen);
    if (decorated) flags |= decorator_flags(st, outer);
    if (k == K_CLASS_DEF) {
        kind = CN_NODE_CLASS;
        if (nlen >= 4 && memcmp(np, "Test", 4) == 0) flags |= CN_NODE_F_TEST;
    } else {
        kind = parent != NULL && parent->is_class ? CN_NODE_METHOD : CN_NODE_FUNCTION;
        if (is_async_def(st, def)) flags |= CN_NODE_F_ASYNC;
        if (nlen >= 5 && memcmp(np, "test_", 5) == 0) flags |= CN_NODE_F_TEST;
    }
    /* qualname path: parent path + "." + name */
    size_t saved = st->path_len;
    size_t need = saved + 1 + nlen + 1;
    if (!grow((void **)&st->path, &st->path_cap, need, 1)) return oom(st);
    if (saved > 0) st->path[st->path_len++] = '.';
    memcpy(st->path + st->path_len, np, nlen);
    st->path_len += nlen;
    st->path[st->path_len] = '\0';
    if (!grow((void **)&st->scratch, &st->scratch_cap, nlen + 1, 1)) {
        st->path_len = saved;
        st->path[saved] = '\0';
        return oom(st);
    }
    memcpy(st->scratch, np, nlen);
    st->scratch[nlen] = '\0';

    int32_t index = -1;
    int rc = emit_node(st, kind, st->scratch, line_of(outer), end_line_of(outer), flags, &index);
    if (rc < 0) {
        st->path_len = saved;
        st->path[saved] = '\0';
        return rc;
    }
    cx = ctx_push(st, C_NODE, depth);
    if (cx == NULL) {
        st->path_len = saved;
        st->path[saved] = '\0';
        return oom(st);
    }
    cx->path_len = saved;
    cx->index = index;
    cx->is_class = k == K_CLASS_DEF;
    return 1;
}

/* ------------------------------------------------------------------ */
/* The walker                                                          */

enum { ACT_SKIP = 0, ACT_DESCEND = 1 };

static int walk(py_state *st, TSNode root, bool collect, name_set *out);

/* Mode of a child from its parent's frame and its field. */
static int child_mode(const py_state *st, const frame *pf, TSFieldId fid, int k)
{
    int pk = pf->kind, pm = pf->mode;
    int m = pm;
    const py_fields *f = &st->f;

    if (pm == M_SKIP || k == K_COMMENT) return M_SKIP;
    if (pm == M_CASE || k == K_CASE_PATTERN) return M_CASE;
    if (pm == M_TARGET && !is_target_container(pk)) m = M_EXPR;
    if (pm == M_PARAM && !is_param_container(pk)) m = M_EXPR;
    if (pm == M_BASES_LIST) m = (k == K_KEYWORD_ARGUMENT) ? M_EXPR : M_BASES;
    if (pm == M_BASES) m = M_EXPR;

    switch (pk) {
    case K_ASSIGNMENT:
    case K_AUG_ASSIGNMENT:
    case K_FOR_STATEMENT:
    case K_FOR_IN_CLAUSE:
        if (fid == f->left) m = M_TARGET;
        break;
    case K_AS_PATTERN:
    case K_EXCEPT_CLAUSE:
        if (fid == f->alias) m = M_TARGET;
        break;
    case K_NAMED_EXPRESSION:
        if (fid == f->name) m = M_TARGET;
        break;
    case K_KEYWORD_ARGUMENT:
        if (fid == f->name) m = M_SKIP;
        break;
    case K_ATTRIBUTE:
        if (fid == f->attribute) m = M_SKIP;
        else if (fid == f->object) m = M_EXPR;
        break;
    case K_CALL:
        if (fid == f->function && (pf->flags & FR_CALLEE_NAMED)) m = M_SKIP;
        break;
    case K_SUBSCRIPT:
        if (fid == f->value && (pf->flags & FR_BASE_SUBSCRIPT)) m = M_SKIP;
        else m = M_EXPR;
        break;
    case K_FUNCTION_DEF:
    case K_CLASS_DEF:
        if (fid == f->name || fid == f->type_parameters) m = M_SKIP;
        else if (fid == f->superclasses) m = M_BASES_LIST;
        else m = M_EXPR;
        break;
    case K_PARAMETERS:
    case K_LAMBDA_PARAMETERS:
        m = M_PARAM;
        break;
    case K_DEFAULT_PARAMETER:
    case K_TYPED_DEFAULT_PARAMETER:
    case K_TYPED_PARAMETER:
        if (fid != 0 && (fid == f->value || fid == f->type)) m = M_EXPR;
        break;
    case K_MEMBER_TYPE:
        if (k == K_IDENTIFIER) m = M_SKIP;
        break;
    case K_TYPE_ALIAS:
        if (fid == f->left) m = M_SKIP;
        break;
    case K_DOTTED_NAME:
    case K_GLOBAL:
    case K_NONLOCAL:
        m = M_SKIP;
        break;
    default:
        break;
    }
    return m;
}

/* A dotted_name in a match-case pattern: the class of a class pattern or
 * a value (a.b) are read; a lone name is a capture.  Returns the first
 * identifier for a read, a null node for a capture. */
static TSNode case_name_read(py_state *st, TSNode n, const frame *pf)
{
    TSNode first = ts_node_named_child(n, 0);
    if (!is_ident(st, first)) return (TSNode){0};
    if ((pf != NULL && pf->kind == K_CLASS_PATTERN) || !ts_node_is_null(ts_node_next_named_sibling(first)))
        return first;
    return (TSNode){0};
}

/* Emitting walk inside a match-case pattern. */
static int visit_case_pattern(py_state *st, TSNode n, const frame *pf)
{
    int k = kind_of(st, n);
    if (k == K_DOTTED_NAME) {
        TSNode base = case_name_read(st, n, pf);
        size_t len;
        const char *p;
        if (ts_node_is_null(base)) return ACT_SKIP;
        p = text_of(st, base, &len);
        if (chain_text(st, n, &st->scratch, &st->scratch_cap) == NULL) return oom(st);
        emit_read(st, CN_REF_REFERENCE, st->scratch, n, p, len);
        return ACT_SKIP;
    }
    return k == K_IDENTIFIER || k == K_COMMENT ? ACT_SKIP : ACT_DESCEND;
}

/* Handles one node of the main (emitting) walk. */
static int visit_emit(py_state *st, TSNode n, frame *fr, const frame *pf, uint32_t depth)
{
    int k = fr->kind;
    int m = fr->mode;

    if (m == M_SKIP) return ACT_SKIP;
    if (m == M_CASE) return visit_case_pattern(st, n, pf);

    switch (k) {
    case K_COMMENT:
    case K_DOTTED_NAME:
    case K_GLOBAL:
    case K_NONLOCAL:
        return ACT_SKIP;
    case K_IMPORT:
    case K_IMPORT_FROM:
    case K_FUTURE_IMPORT:
        handle_import(st, n, k);
        return ACT_SKIP;
    case K_DECORATED_DEF: {
        TSNode def = ts_node_child_by_field_id(n, st->f.definition);
        int dk = ts_node_is_null(def) ? K_OTHER : kind_of(st, def);
        if (dk == K_FUNCTION_DEF || dk == K_CLASS_DEF) {
            int rc = open_definition(st, def, n, true, depth);
            if (rc < 0) return rc;
            if (rc > 0) fr->flags |= FR_HAS_NODE;
        }
        return ACT_DESCEND;
    }
    case K_FUNCTION_DEF:
    case K_CLASS_DEF: {
        bool has_node;
        if (pf != NULL && pf->kind == K_DECORATED_DEF) {
            has_node = (pf->flags & FR_HAS_NODE) != 0;
        } else {
            int rc = open_definition(st, n, n, false, depth);
            if (rc < 0) return rc;
            has_node = rc > 0;
        }
        if (has_node) {
            fr->flags |= FR_HAS_NODE;
            if (k == K_FUNCTION_DEF) {
                /* its locals, filled in as the walk goes through it */
                context *cx = ctx_top_node(st);
                name_set *set = calloc(1, sizeof *set);
                if (set == NULL) return oom(st);
                name_set_free(cx->set);
                cx->set = set;
                fr->locals = set;
            }
        }
        return ACT_DESCEND;
    }
    case K_BLOCK:
        if (pf != NULL && pf->kind == K_FUNCTION_DEF && (pf->flags & FR_HAS_NODE)) {
            context *top = ctx_top_node(st);
            context *cx = ctx_push(st, C_LOCALS, depth);
            if (cx == NULL) return oom(st);
            cx->set = top ? top->set : NULL;
        }
        return ACT_DESCEND;
    case K_LAMBDA:
    case K_LIST_COMP:
    case K_SET_COMP:
    case K_DICT_COMP:
    case K_GENERATOR: {
        int rc = push_scope(st, n, k, depth);
        return rc < 0 ? rc : ACT_DESCEND;
    }
    case K_IDENTIFIER: {
        size_t len;
        const char *p;
        if (!is_ident(st, n)) return ACT_SKIP;
        if (m == M_BASES) {
            if (copy_text(st, n, &st->scratch, &st->scratch_cap) == NULL) return oom(st);
            emit_ref(st, CN_REF_INHERIT, st->scratch, NULL, n);
            return ACT_SKIP;
        }
        if (m != M_EXPR) return ACT_SKIP;
        p = text_of(st, n, &len);
        if ((len == 4 && memcmp(p, "self", 4) == 0) || (len == 3 && memcmp(p, "cls", 3) == 0))
            return ACT_SKIP;
        if (copy_text(st, n, &st->scratch, &st->scratch_cap) == NULL) return oom(st);
        emit_read(st, CN_REF_REFERENCE, st->scratch, n, p, len);
        return ACT_SKIP;
    }
    case K_ATTRIBUTE: {
        TSNode base;
        if (pf != NULL && pf->kind == K_ATTRIBUTE) { /* object of a non-chain */
            fr->flags |= FR_NONCHAIN;
            fr->mode = M_EXPR;
            return ACT_DESCEND;
        }
        if (!chain_base(st, n, &base)) {
            fr->flags |= FR_NONCHAIN;
            fr->mode = M_EXPR;
            return ACT_DESCEND;
        }
        if (m == M_TARGET || m == M_PARAM) return ACT_SKIP;
        if (m == M_BASES) {
            if (chain_text(st, n, &st->scratch, &st->scratch_cap) == NULL) return oom(st);
            emit_ref(st, CN_REF_INHERIT, st->scratch, NULL, n);
            return ACT_SKIP;
        }
        size_t len;
        const char *p = text_of(st, base, &len);
        bool selfish = (len == 4 && memcmp(p, "self", 4) == 0) || (len == 3 && memcmp(p, "cls", 3) == 0);
        if (chain_text(st, n, &st->scratch, &st->scratch_cap) == NULL) return oom(st);
        if (selfish) emit_ref(st, CN_REF_REFERENCE, st->scratch, NULL, n);
        else emit_read(st, CN_REF_REFERENCE, st->scratch, n, p, len);
        return ACT_SKIP;
    }
    case K_CALL: {
        TSNode fn = ts_node_child_by_field_id(n, st->f.function);
        int fk = ts_node_is_null(fn) ? K_OTHER : kind_of(st, fn);
        fr->mode = M_EXPR;
        if (fk == K_IDENTIFIER && is_ident(st, fn)) {
            if (copy_text(st, fn, &st->scratch, &st->scratch_cap) == NULL) return oom(st);
            emit_ref(st, CN_REF_CALL, st->scratch, NULL, fn);
            fr->flags |= FR_CALLEE_NAMED;
        } else if (fk == K_ATTRIBUTE) {
            TSNode base;
            if (chain_base(st, fn, &base)) {
                if (chain_text(st, fn, &st->scratch, &st->scratch_cap) == NULL) return oom(st);
                emit_ref(st, CN_REF_CALL, st->scratch, NULL, fn);
                fr->flags |= FR_CALLEE_NAMED;
            } else {
                TSNode a = ts_node_child_by_field_id(fn, st->f.attribute);
                if (is_ident(st, a)) {
                    size_t len;
                    const char *p = text_of(st, a, &len);
                    if (!grow((void **)&st->scratch, &st->scratch_cap, len + 2, 1)) return oom(st);
                    st->scratch[0] = '.';
                    memcpy(st->scratch + 1, p, len);
                    st->scratch[len + 1] = '\0';
                    emit_ref(st, CN_REF_CALL, st->scratch, NULL, fn);
                }
            }
        }
        return ACT_DESCEND;
    }
    case K_SUBSCRIPT:
        if (m == M_BASES) {
            TSNode v = ts_node_child_by_field_id(n, st->f.value), base;
            if (!ts_node_is_null(v) && chain_base(st, v, &base)) {
                if (chain_text(st, v, &st->scratch, &st->scratch_cap) == NULL) return oom(st);
                emit_ref(st, CN_REF_INHERIT, st->scratch, NULL, v);
                fr->flags |= FR_BASE_SUBSCRIPT;
            }
        }
        fr->mode = M_EXPR;
        return ACT_DESCEND;
    default:
        if (m == M_BASES) fr->mode = M_EXPR;
        return ACT_DESCEND;
    }
}

/* Handles one node of a locals-collecting walk over a function. */
static int visit_collect(py_state *st, TSNode n, frame *fr, uint32_t depth, name_set *out)
{
    int k = fr->kind;
    int m = fr->mode;

    if (m == M_SKIP) return ACT_SKIP;
    if (m == M_CASE && k == K_DOTTED_NAME) { /* a capture binds a name */
        const frame *pf = depth > 0 ? fr - 1 : NULL;
        TSNode first = ts_node_named_child(n, 0);
        if (ts_node_is_null(case_name_read(st, n, pf)) && is_ident(st, first)) {
            size_t len;
            const char *p = text_of(st, first, &len);
            if (name_set_add(out, p, len, false) < 0) return oom(st);
        }
        return ACT_SKIP;
    }
    switch (k) {
    case K_FUNCTION_DEF:
        return depth == 0 ? ACT_DESCEND : ACT_SKIP;
    case K_CLASS_DEF:
    case K_DECORATED_DEF:
    case K_COMMENT:
    case K_DOTTED_NAME:
    case K_IMPORT:
    case K_IMPORT_FROM:
    case K_FUTURE_IMPORT:
        return ACT_SKIP;
    case K_GLOBAL:
    case K_NONLOCAL: {
        uint32_t nc = ts_node_named_child_count(n);
        TSNode c = nc ? ts_node_named_child(n, 0) : (TSNode){0};
        for (; !ts_node_is_null(c); c = ts_node_next_named_sibling(c)) {
            if (!is_ident(st, c)) continue;
            size_t len;
            const char *p = text_of(st, c, &len);
            if (name_set_add(out, p, len, true) < 0) return oom(st);
        }
        return ACT_SKIP;
    }
    case K_IDENTIFIER:
        if ((m == M_TARGET || m == M_PARAM || m == M_CASE) && is_ident(st, n)) {
            size_t len;
            const char *p = text_of(st, n, &len);
            if (name_set_add(out, p, len, false) < 0) return oom(st);
        }
        return ACT_SKIP;
    case K_ATTRIBUTE:
        if (m == M_TARGET) fr->mode = M_EXPR; /* nothing below binds */
        return ACT_DESCEND;
    default:
        return ACT_DESCEND;
    }
}

/* The main walk also collects the names each function binds (what
 * visit_collect() does on its own), into the `locals` of the frames below
 * the function's node.  A function's locals leave out what its nested
 * functions, classes and imports bind, as visit_collect() does. */
static bool binds_in_parent(int k)
{
    switch (k) {
    case K_FUNCTION_DEF: /* opens its own locals (visit_emit) */
    case K_CLASS_DEF:
    case K_DECORATED_DEF:
    case K_COMMENT:
    case K_IMPORT:
    case K_IMPORT_FROM:
    case K_FUTURE_IMPORT:
        return false;
    default:
        return true;
    }
}

/* Adds what node n binds to fr->locals, as visit_collect() would. */
static int bind_names(py_state *st, TSNode n, const frame *fr, const frame *pf)
{
    name_set *out = fr->locals;
    int k = fr->kind, m = fr->mode;
    size_t len;
    const char *p;

    if (m == M_CASE && k == K_DOTTED_NAME) { /* a capture binds a name */
        TSNode first = ts_node_named_child(n, 0);
        if (ts_node_is_null(case_name_read(st, n, pf)) && is_ident(st, first)) {
            p = text_of(st, first, &len);
            if (name_set_add(out, p, len, false) < 0) return oom(st);
        }
    } else if (k == K_GLOBAL || k == K_NONLOCAL) {
        uint32_t nc = ts_node_named_child_count(n);
        TSNode c = nc ? ts_node_named_child(n, 0) : (TSNode){0};
        for (; !ts_node_is_null(c); c = ts_node_next_named_sibling(c)) {
            if (!is_ident(st, c)) continue;
            p = text_of(st, c, &len);
            if (name_set_add(out, p, len, true) < 0) return oom(st);
        }
    } else if (k == K_IDENTIFIER && (m == M_TARGET || m == M_PARAM || m == M_CASE) && is_ident(st, n)) {
        p = text_of(st, n, &len);
        if (name_set_add(out, p, len, false) < 0) return oom(st);
    }
    return 0;
}

/* Walks the subtree at root without recursion.  collect: only record the
 * names bound in the subtree into `out` (visit_collect). */
static int walk(py_state *st, TSNode root, bool collect, name_set *out)
{
    frame_vec *fv = collect ? &st->fr_collect : &st->fr_main;
    TSTreeCursor c = ts_tree_cursor_new(root);
    size_t floor = st->nctx;
    uint32_t depth = 0;
    int rc = 0;

    for (;;) {
        TSNode n = ts_tree_cursor_current_node(&c);
        frame *fr, *pf;
        int act = ACT_SKIP;

        if (!collect) ctx_pop_to_depth(st, floor, depth);
        if (!grow((void **)&fv->v, &fv->cap, (size_t)depth + 1, sizeof *fv->v)) {
            rc = oom(st);
            break;
        }
        fr = &fv->v[depth];
        pf = depth > 0 ? &fv->v[depth - 1] : NULL;
        fr->kind = (uint8_t)kind_of(st, n);
        fr->flags = 0;
        fr->locals = NULL;
        if (ts_node_is_named(n)) {
            TSFieldId fid = pf ? ts_tree_cursor_current_field_id(&c) : 0;
            fr->mode = pf ? (uint8_t)child_mode(st, pf, fid, fr->kind) : M_EXPR;
            if (collect) {
                act = visit_collect(st, n, fr, depth, out);
            } else {
                if (pf != NULL && pf->locals != NULL && fr->mode != M_SKIP && binds_in_parent(fr->kind)) {
                    fr->locals = pf->locals;
                    if ((act = bind_names(st, n, fr, pf)) < 0) {
                        rc = act;
                        break;
                    }
                }
                act = visit_emit(st, n, fr, pf, depth);
                /* An attribute chain the emitting walk goes no further into
                 * (a read, a target, a named callee) binds nothing, unless
                 * error recovery put something inside it: collect there. */
                if (act == ACT_SKIP && fr->kind == K_ATTRIBUTE && pf != NULL && pf->locals != NULL &&
                    ts_node_has_error(n) &&
                    (fr->locals != NULL || (pf->kind == K_CALL && (pf->flags & FR_CALLEE_NAMED) &&
                                            fid == st->f.function)))
                    act = walk(st, n, true, pf->locals);
            }
            if (act < 0) {
                rc = act;
                break;
            }
            if (st->rc < 0) {
                rc = st->rc;
                break;
            }
        }
        if (act == ACT_DESCEND && ts_tree_cursor_goto_first_child(&c)) {
            depth++;
            continue;
        }
        while (depth > 0 && !ts_tree_cursor_goto_next_sibling(&c)) {
            ts_tree_cursor_goto_parent(&c);
            depth--;
        }
        if (depth == 0) break;
    }
    ts_tree_cursor_delete(&c);
    if (!collect) ctx_pop_to_depth(st, floor, 0);
    return rc;
}

/* ------------------------------------------------------------------ */
/* The module                                                          */

static bool is_definition(int k) { return k == K_FUNCTION_DEF || k == K_CLASS_DEF || k == K_DECORATED_DEF; }

static int parse_module(py_state *st, TSNode root)
{
    TSTreeCursor c = ts_tree_cursor_new(root);
    size_t floor = st->nctx;
    bool in_block = false;
    int rc = 0;
    char label[32];

    if (ts_tree_cursor_goto_first_child(&c)) {
        do {
            TSNode n = ts_tree_cursor_current_node(&c);
            int k = kind_of(st, n);
            if (k == K_COMMENT) continue;
            if (ts_node_end_byte(n) == ts_node_start_byte(n)) continue;
            if (is_definition(k)) {
                if (in_block) ctx_pop_to_depth(st, floor, 0);
                in_block = false;
            } else if (!in_block) {
                /* a new run of statements: find where it ends */
                TSTreeCursor scan = ts_tree_cursor_copy(&c);
                TSNode last = n;
                while (ts_tree_cursor_goto_next_sibling(&scan)) {
                    TSNode s = ts_tree_cursor_current_node(&scan);
                    int sk = kind_of(st, s);
                    if (is_definition(sk)) break;
                    if (sk == K_COMMENT) continue;
                    if (ts_node_end_byte(s) == ts_node_start_byte(s)) continue;
                    last = s;
                }
                ts_tree_cursor_delete(&scan);
                snprintf(label, sizeof label, "<block:%u>", line_of(n));
                int32_t index = -1;
                rc = emit_node(st, CN_NODE_BLOCK, label, line_of(n), end_line_of(last), 0, &index);
                if (rc < 0) break;
                context *cx = ctx_push(st, C_NODE, 0);
                if (cx == NULL) {
                    rc = oom(st);
                    break;
                }
                cx->index = index;
                in_block = true;
            }
            rc = walk(st, n, false, NULL);
            if (rc >= 0) rc = flush_refs(st);
            if (rc < 0) break;
        } while (ts_tree_cursor_goto_next_sibling(&c));
    }
    ts_tree_cursor_delete(&c);
    ctx_pop_to_depth(st, floor, 0);
    return rc;
}

static int py_parse(cn_lang_parser *self, const char *path, const char *src, size_t len,
                    const cn_lang_sink *sink, cn_error *err)
{
    py_state *st = self ? self->data : NULL;
    TSParser *ts;
    TSTree *tree;
    char *safe;
    bool failed;
    cn_ts_guard_result guard;
    int rc;

    if (st == NULL || sink == NULL || sink->node == NULL || sink->ref == NULL || (src == NULL && len > 0)) {
        if (err != NULL) {
            err->code = CN_EINVAL;
            snprintf(err->message, sizeof err->message, "lang-python: parse: invalid arguments");
        }
        return CN_EINVAL;
    }
    st->err = err;
    st->rc = 0;
    if (len > UINT32_MAX - 1) return set_error(st, CN_EINVAL, "file too large for tree-sitter (4 GiB)");
    if (src == NULL) src = "";
    safe = cn_ts_blank_deep_nesting(src, len, CN_TS_BLANK_BRACKETS, CN_TS_MAX_NESTING, &failed);
    if (failed) return oom(st);
    st->src = safe ? safe : src;
    st->len = len;
    st->sink = sink;
    st->nctx = 0;
    st->path_len = 0;
    if (!grow((void **)&st->path, &st->path_cap, 1, 1)) {
        free(safe);
        st->src = NULL;
        return oom(st);
    }
    st->path[0] = '\0';

    ts = cn_ts_arena_parser(st->arena, st->ts, tree_sitter_python());
    tree = cn_ts_parse_guarded(ts, st->src, (uint32_t)len, NULL, &guard);
    if (tree == NULL) {
        char why[256];
        cn_ts_arena_done(st->arena, ts, NULL);
        free(safe);
        st->src = NULL;
        return set_error(st, CN_EPARSE, cn_ts_no_tree_reason(&guard, why, sizeof why));
    }
    if (guard.cut && st->host != NULL && st->host->log != NULL)
        st->host->log(st->host, CN_LOG_WARNING,
                      "lang-python: %s: too broken to parse past %u:%u; rest skipped",
                      path ? path : "(input)", (unsigned)guard.cut_row + 1,
                      (unsigned)guard.cut_col + 1);
    rc = parse_module(st, ts_tree_root_node(tree));
    while (st->nctx > 0) ctx_pop_one(st);
    discard_refs(st);
    cn_ts_arena_done(st->arena, ts, tree);
    free(safe);
    st->src = NULL;
    st->sink = NULL;
    st->err = NULL;
    if (rc < 0) return rc;
    return st->rc < 0 ? st->rc : 0;
}

static void py_destroy(cn_lang_parser *self)
{
    if (self == NULL) return;
    py_state *st = self->data;
    if (st != NULL) {
        while (st->nctx > 0) ctx_pop_one(st);
        discard_refs(st);
        if (st->ts) ts_parser_delete(st->ts);
        cn_ts_arena_free(st->arena);
        free(st->q);
        free(st->qtext);
        free(st->retired);
        free(st->sym_kind);
        free(st->ctx);
        free(st->path);
        free(st->scratch);
        free(st->scratch2);
        free(st->fr_main.v);
        free(st->fr_collect.v);
        free(st);
    }
    free(self);
}

static TSFieldId field(const TSLanguage *lang, const char *name)
{
    return ts_language_field_id_for_name(lang, name, (uint32_t)strlen(name));
}

static int py_create(const cn_host *host, cn_lang_parser **out, cn_error *err)
{
    const TSLanguage *lang = tree_sitter_python();
    cn_lang_parser *p;
    py_state *st;

    if (out == NULL) return CN_EINVAL;
    *out = NULL;
    p = calloc(1, sizeof *p);
    st = calloc(1, sizeof *st);
    if (p == NULL || st == NULL) goto nomem;
    st->host = host;
    st->sym_count = ts_language_symbol_count(lang);
    st->sym_kind = calloc(st->sym_count ? st->sym_count : 1, 1);
    if (st->sym_kind == NULL) goto nomem;
    for (uint32_t s = 0; s < st->sym_count; s++) {
        const char *name = ts_language_symbol_name(lang, (TSSymbol)s);
        if (name == NULL || ts_language_symbol_type(lang, (TSSymbol)s) != TSSymbolTypeRegular) continue;
        for (int k = 1; k < K_COUNT; k++) {
            if (kind_type_names[k] != NULL && strcmp(kind_type_names[k], name) == 0) {
                st->sym_kind[s] = (uint8_t)k;
                break;
            }
        }
    }
    /* ERROR is not in the language's symbol table: see kind_of() */
    st->f.name = field(lang, "name");
    st->f.left = field(lang, "left");
    st->f.alias = field(lang, "alias");
    st->f.attribute = field(lang, "attribute");
    st->f.object = field(lang, "object");
    st->f.function = field(lang, "function");
    st->f.parameters = field(lang, "parameters");
    st->f.value = field(lang, "value");
    st->f.type = field(lang, "type");
    st->f.superclasses = field(lang, "superclasses");
    st->f.type_parameters = field(lang, "type_parameters");
    st->f.definition = field(lang, "definition");
    st->f.module_name = field(lang, "module_name");
    st->ts = ts_parser_new();
    if (st->ts == NULL) goto nomem;
    if (!ts_parser_set_language(st->ts, lang)) {
        ts_parser_delete(st->ts);
        free(st->sym_kind);
        free(st);
        free(p);
        if (err != NULL) {
            err->code = CN_EABI;
            snprintf(err->message, sizeof err->message,
                     "lang-python: the tree-sitter library does not accept grammar ABI %u",
                     ts_language_version(lang));
        }
        return CN_EABI;
    }
    st->arena = cn_ts_arena_new(); /* none: every parse uses st->ts */
    p->struct_size = (uint32_t)sizeof *p;
    p->data = st;
    p->parse = py_parse;
    p->destroy = py_destroy;
    *out = p;
    return 0;

nomem:
    if (st != NULL) {
        free(st->sym_kind);
        free(st);
    }
    free(p);
    if (err != NULL) {
        err->code = CN_ENOMEM;
        snprintf(err->message, sizeof err->message, "lang-python: out of memory");
    }
    return CN_ENOMEM;
}

CN_LANG_DEFINE(python, "python", PY_VERSION, py_create);
