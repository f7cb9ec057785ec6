/* SPDX-License-Identifier: Apache-2.0 */
/* lang-c: the C language backend.
 *
 * Parses C with tree-sitter (tree-sitter-c 0.23.6, compiled in through
 * grammar.c) and emits, in source order:
 *
 *   nodes  functions, prototypes, structs/unions/enums with a body,
 *          typedefs, macros and file-scope variables;
 *   refs   calls, references (identifiers used in expressions, type names,
 *          struct/union/enum tags used without a body) and #includes.
 *
 * The tree is walked by hand (libtree-sitter 0.20 applies no query
 * predicates).  The walk never recurses along the last child of a node
 * (else-if chains, nested parentheses, argument lists) nor along the left
 * operand of a binary expression, and gives up on subtrees nested more
 * than MAX_DEPTH levels otherwise, so no input can exhaust the stack.
 *
 * Macro bodies are opaque tokens in the grammar; each body is parsed again
 * on its own, wrapped in braces, so that the calls and references it
 * contains are found (the macro's parameters count as locals). */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tree_sitter/api.h>

#include <codenib/lang.h>

#include "cn_pp_split.h"
#include "cn_ts_arena.h"
#include "cn_ts_guard.h"

#define LANG_C_VERSION "0.1.0+tree-sitter-c-0.23.6"
#define MAX_DEPTH 1000
/* libtree-sitter 0.20.7 stores a node's child count in 16 bits: at the end
 * of a file with tens of thousands of unclosed brackets or #ifs, or after
 * long runs of junk, an ERROR node overflows it and the library crashes.
 * Brackets and #if blocks nested deeper than this are blanked out (bytes
 * replaced by spaces, so every offset stays valid) before parsing, and
 * every parse runs under cn_ts_parse_guarded() (see cn_ts_guard.h). */
#define MAX_NESTING CN_TS_MAX_NESTING

const TSLanguage *tree_sitter_c(void);

/* What the walker needs to know about a grammar symbol. */
enum {
    K_OTHER = 0,
    K_SKIP,
    K_TRANSLATION_UNIT,
    K_FUNCTION_DEFINITION,
    K_DECLARATION,
    K_TYPE_DEFINITION,
    K_FIELD_DECLARATION,
    K_PARAMETER_DECLARATION,
    K_TYPE_DESCRIPTOR,
    K_STRUCT,
    K_UNION,
    K_ENUM,
    K_FIELD_DECLARATION_LIST,
    K_ENUMERATOR,
    K_PREPROC_DEF,
    K_PREPROC_FUNCTION_DEF,
    K_PREPROC_INCLUDE,
    K_PREPROC_COND, /* #if #ifdef #elif #elifdef #else */
    K_LINKAGE,
    K_DECLARATION_LIST,
    K_IDENTIFIER,
    K_TYPE_IDENTIFIER,
    K_FIELD_IDENTIFIER,
    K_PRIMITIVE_TYPE,
    K_CALL,
    K_FIELD_EXPRESSION,
    K_PARENTHESIZED_EXPRESSION,
    K_BINARY,
    K_POINTER_DECLARATOR,  /* also abstract */
    K_FUNCTION_DECLARATOR, /* also abstract */
    K_ARRAY_DECLARATOR,    /* also abstract */
    K_WRAP_DECLARATOR,     /* parenthesized, attributed (also abstract) */
    K_INIT_DECLARATOR,
    K_PARAMETER_LIST,
    K_STORAGE_CLASS,
    K_ATTRIBUTE, /* attribute_specifier, attribute_declaration, ms_* */
    K_ASM_OPERAND,
    K_GNU_ASM,
    K_MACRO_TYPE_SPECIFIER,
    K_STRING_LITERAL,
    K_SYSTEM_LIB_STRING,
    K_COMMENT,
    K_ERROR
};

static const struct {
    const char *name;
    uint8_t kind;
} symbol_kinds[] = {
    {"translation_unit", K_TRANSLATION_UNIT},
    {"function_definition", K_FUNCTION_DEFINITION},
    {"declaration", K_DECLARATION},
    {"type_definition", K_TYPE_DEFINITION},
    {"field_declaration", K_FIELD_DECLARATION},
    {"parameter_declaration", K_PARAMETER_DECLARATION},
    {"type_descriptor", K_TYPE_DESCRIPTOR},
    {"struct_specifier", K_STRUCT},
    {"union_specifier", K_UNION},
    {"enum_specifier", K_ENUM},
    {"field_declaration_list", K_FIELD_DECLARATION_LIST},
    {"enumerator", K_ENUMERATOR},
    {"preproc_def", K_PREPROC_DEF},
    {"preproc_function_def", K_PREPROC_FUNCTION_DEF},
    {"preproc_include", K_PREPROC_INCLUDE},
    {"preproc_if", K_PREPROC_COND},
    {"preproc_ifdef", K_PREPROC_COND},
    {"preproc_elif", K_PREPROC_COND},
    {"preproc_elifdef", K_PREPROC_COND},
    {"preproc_else", K_PREPROC_COND},
    {"linkage_specification", K_LINKAGE},
    {"declaration_list", K_DECLARATION_LIST},
    {"identifier", K_IDENTIFIER},
    {"type_identifier", K_TYPE_IDENTIFIER},
    {"field_identifier", K_FIELD_IDENTIFIER},
    {"primitive_type", K_PRIMITIVE_TYPE},
    {"call_expression", K_CALL},
    {"field_expression", K_FIELD_EXPRESSION},
    {"parenthesized_expression", K_PARENTHESIZED_EXPRESSION},
    {"binary_expression", K_BINARY},
    {"pointer_declarator", K_POINTER_DECLARATOR},
    {"abstract_pointer_declarator", K_POINTER_DECLARATOR},
    {"function_declarator", K_FUNCTION_DECLARATOR},
    {"abstract_function_declarator", K_FUNCTION_DECLARATOR},
    {"array_declarator", K_ARRAY_DECLARATOR},
    {"abstract_array_declarator", K_ARRAY_DECLARATOR},
    {"parenthesized_declarator", K_WRAP_DECLARATOR},
    {"abstract_parenthesized_declarator", K_WRAP_DECLARATOR},
    {"attributed_declarator", K_WRAP_DECLARATOR},
    {"init_declarator", K_INIT_DECLARATOR},
    {"parameter_list", K_PARAMETER_LIST},
    {"storage_class_specifier", K_STORAGE_CLASS},
    {"attribute_specifier", K_ATTRIBUTE},
    {"attribute_declaration", K_ATTRIBUTE},
    {"ms_declspec_modifier", K_ATTRIBUTE},
    {"ms_based_modifier", K_ATTRIBUTE},
    {"ms_call_modifier", K_ATTRIBUTE},
    {"ms_pointer_modifier", K_ATTRIBUTE},
    {"gnu_asm_input_operand", K_ASM_OPERAND},
    {"gnu_asm_output_operand", K_ASM_OPERAND},
    {"gnu_asm_expression", K_GNU_ASM},
    {"macro_type_specifier", K_MACRO_TYPE_SPECIFIER},
    {"string_literal", K_STRING_LITERAL},
    {"system_lib_string", K_SYSTEM_LIB_STRING},
    {"comment", K_COMMENT},
    /* nothing to find inside these */
    {"statement_identifier", K_SKIP},
    {"char_literal", K_SKIP},
    {"number_literal", K_SKIP},
    {"preproc_call", K_SKIP},
    {"preproc_params", K_SKIP},
    {"preproc_arg", K_SKIP},
    {"gnu_asm_goto_list", K_SKIP},
    {"variadic_parameter", K_SKIP},
    {"true", K_SKIP},
    {"false", K_SKIP},
    {"null", K_SKIP},
};

/* A set of names declared locally (function parameters and locals, macro
 * parameters), as slices of the buffer being walked. */
#define LOCAL_VAR 1u
#define LOCAL_TYPE 2u

typedef struct local_entry {
    const char *p;
    uint32_t len;
    uint32_t mask; /* 0: empty slot */
} local_entry;

typedef struct local_set {
    local_entry *slots;
    size_t cap; /* power of two, or 0 */
    size_t count;
} local_set;

typedef struct cursor_slot {
    TSTreeCursor c;
    bool live;
} cursor_slot;

typedef struct c_parser {
    cn_lang_parser pub;
    const cn_host *host;
    TSParser *ts;       /* the long-lived parser, when a parse has no arena */
    TSParser *cur;      /* the parser of the parse under way */
    cn_ts_arena *arena; /* each parse's tree-sitter memory; NULL: none */
    uint8_t *kinds;
    uint32_t nkinds;
    TSFieldId f_type, f_declarator, f_body, f_name, f_value, f_function, f_arguments,
        f_argument, f_parameters, f_path, f_condition, f_alternative, f_left;

    cursor_slot cursors[MAX_DEPTH + 2]; /* one per walk depth */
    cursor_slot aux, aux2;              /* for non-recursive traversals */

    local_set fn_locals, macro_locals;
    local_set *locals; /* active set, or NULL outside functions and macros */

    char *nbuf, *qbuf, *tbuf; /* NUL-terminated copies handed to the sink */
    size_t nbuf_cap, qbuf_cap, tbuf_cap;
    uint32_t *lines; /* byte offset of the start of each line */
    size_t nlines, lines_cap;
    TSNode *spine; /* left operands of binary expression chains */
    size_t spine_len, spine_cap;
    int32_t *ivec; /* node index of each declarator of a declaration */
    size_t ivec_len, ivec_cap;

    /* per parse */
    const cn_lang_sink *sink;
    const char *orig; /* the file */
    size_t orig_len;
    const char *src; /* the buffer walked: the file, or a wrapped macro body */
    size_t base;     /* offset in the file of src[0] (may be one before lo) */
    size_t lo, hi;   /* file offsets that positions in src are clamped to */
    bool in_macro;
    int depth;
    int rc;
    bool grow_ok;
} c_parser;

/* ---- small utilities ---------------------------------------------------- */

/* Makes room for `need` elements of size `elem` in *ptr (capacity *cap,
 * doubled as needed) and returns the block; sets *ok to false, leaving the
 * block as it was, when memory runs out.  GROW assigns the result back
 * through the pointer's own type. */
static void *grow_block(void *ptr, size_t *cap, size_t need, size_t elem, bool *ok)
{
    size_t n;
    void *np;
    *ok = true;
    if (need <= *cap) return ptr;
    n = *cap ? *cap : 64;
    while (n < need) {
        if (n > SIZE_MAX / 2 / elem) {
            *ok = false;
            return ptr;
        }
        n *= 2;
    }
    np = realloc(ptr, n * elem);
    if (np == NULL) {
        *ok = false;
        return ptr;
    }
    *cap = n;
    return np;
}

/* Needs a c_parser *p in scope. */
#define GROW(ptr, cap, need) ((ptr) = grow_block((ptr), &(cap), (need), sizeof *(ptr), &p->grow_ok), p->grow_ok)

static void oom(c_parser *p)
{
    if (p->rc >= 0) p->rc = CN_ENOMEM;
}

static int kind_of(const c_parser *p, TSNode n)
{
    TSSymbol s;
    if (ts_node_is_null(n)) return K_SKIP;
    s = ts_node_symbol(n);
    if (s == (TSSymbol)-1) return K_ERROR; /* ts_builtin_sym_error */
    return s < p->nkinds ? p->kinds[s] : K_OTHER;
}

static bool is_bodied_specifier(const c_parser *p, TSNode n)
{
    int k = kind_of(p, n);
    return (k == K_STRUCT || k == K_UNION || k == K_ENUM) &&
           !ts_node_is_null(ts_node_child_by_field_id(n, p->f_body));
}

static const char *node_text(const c_parser *p, TSNode n, size_t *len)
{
    uint32_t s = ts_node_start_byte(n), e = ts_node_end_byte(n);
    *len = e > s ? e - s : 0;
    return p->src + s;
}

static char *dup_string(const char *s)
{
    size_t len;
    char *d;
    if (s == NULL) return NULL;
    len = strlen(s);
    d = malloc(len + 1);
    if (d) memcpy(d, s, len + 1);
    return d;
}

static bool text_is(const c_parser *p, TSNode n, const char *word)
{
    size_t len;
    const char *t = node_text(p, n, &len);
    return len == strlen(word) && memcmp(t, word, len) == 0;
}

/* Maps an offset in the walked buffer to an offset in the file. */
static size_t file_offset(const c_parser *p, uint32_t b)
{
    size_t o = p->base + b;
    if (o < p->lo) o = p->lo;
    if (o > p->hi) o = p->hi;
    return o;
}

/* 1-based line and 0-based column of a file offset. */
static uint32_t line_of(const c_parser *p, size_t off, uint32_t *col)
{
    size_t lo = 0, hi = p->nlines; /* lines[lo] <= off < lines[hi] */
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (p->lines[mid] <= off)
            lo = mid;
        else
            hi = mid;
    }
    if (col) *col = (uint32_t)(off - p->lines[lo]);
    return (uint32_t)(lo + 1);
}

static bool build_lines(c_parser *p)
{
    p->nlines = 0;
    if (!GROW(p->lines, p->lines_cap, 1)) return false;
    p->lines[p->nlines++] = 0;
    for (const char *q = p->orig, *end = p->orig + p->orig_len;
         (q = memchr(q, '\n', (size_t)(end - q))) != NULL;) {
        q++;
        if (!GROW(p->lines, p->lines_cap, p->nlines + 1)) return false;
        p->lines[p->nlines++] = (uint32_t)(q - p->orig);
    }
    return true;
}

static char *copy_to(c_parser *p, char **buf, size_t *cap, const char *s, size_t len)
{
    if (!GROW(*buf, *cap, len + 1)) {
        oom(p);
        return NULL;
    }
    memcpy(*buf, s, len);
    (*buf)[len] = '\0';
    return *buf;
}

/* A cursor for iterating the children of a node at the current depth. */
static TSTreeCursor *cursor_at(c_parser *p, TSNode n)
{
    cursor_slot *s = &p->cursors[p->depth];
    if (s->live) {
        ts_tree_cursor_reset(&s->c, n);
    } else {
        s->c = ts_tree_cursor_new(n);
        s->live = true;
    }
    return &s->c;
}

static TSTreeCursor *aux_cursor(cursor_slot *s, TSNode n)
{
    if (s->live) {
        ts_tree_cursor_reset(&s->c, n);
    } else {
        s->c = ts_tree_cursor_new(n);
        s->live = true;
    }
    return &s->c;
}

/* Every recursive walker brackets its body with ENTER/LEAVE: past
 * MAX_DEPTH the subtree is skipped. */
#define ENTER(p)                                                              \
    do {                                                                      \
        if ((p)->rc < 0 || (p)->depth >= MAX_DEPTH) return;                   \
        (p)->depth++;                                                         \
    } while (0)
#define LEAVE(p) ((p)->depth--)

/* ---- local names -------------------------------------------------------- */

static uint64_t hash_bytes(const char *s, size_t len)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < len; i++) h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
    return h;
}

static void locals_clear(local_set *set)
{
    if (set->cap > 1024) {
        free(set->slots);
        set->slots = NULL;
        set->cap = 0;
    } else if (set->count > 0) {
        memset(set->slots, 0, set->cap * sizeof *set->slots);
    }
    set->count = 0;
}

static local_entry *locals_find(const local_set *set, const char *s, size_t len)
{
    size_t i;
    if (set->cap == 0) return NULL;
    i = (size_t)hash_bytes(s, len) & (set->cap - 1);
    while (set->slots[i].mask != 0) {
        if (set->slots[i].len == len && memcmp(set->slots[i].p, s, len) == 0) return &set->slots[i];
        i = (i + 1) & (set->cap - 1);
    }
    return &set->slots[i];
}

static bool locals_add(local_set *set, const char *s, size_t len, uint32_t mask)
{
    local_entry *e;
    if (len == 0 || len > UINT32_MAX) return true;
    if ((set->count + 1) * 2 > set->cap) {
        size_t ncap = set->cap ? set->cap * 2 : 32;
        local_entry *old = set->slots;
        size_t ocap = set->cap;
        set->slots = calloc(ncap, sizeof *set->slots);
        if (set->slots == NULL) {
            set->slots = old;
            return false;
        }
        set->cap = ncap;
        for (size_t i = 0; i < ocap; i++) {
            if (old[i].mask == 0) continue;
            e = locals_find(set, old[i].p, old[i].len);
            *e = old[i];
        }
        free(old);
    }
    e = locals_find(set, s, len);
    if (e->mask == 0) {
        e->p = s;
        e->len = (uint32_t)len;
        set->count++;
    }
    e->mask |= mask;
    return true;
}

static bool is_local(const c_parser *p, TSNode n, uint32_t mask)
{
    size_t len;
    const char *t;
    const local_entry *e;
    if (p->locals == NULL || p->locals->count == 0) return false;
    t = node_text(p, n, &len);
    e = locals_find(p->locals, t, len);
    return e != NULL && (e->mask & mask) != 0;
}

/* ---- declarators -------------------------------------------------------- */

/* The first named child of a parenthesized or attributed declarator that
 * is itself a declarator. */
static TSNode wrapped_declarator(const c_parser *p, TSNode n)
{
    uint32_t count = ts_node_named_child_count(n);
    for (uint32_t i = 0; i < count; i++) {
        TSNode c = ts_node_named_child(n, i);
        int k = kind_of(p, c);
        if (k != K_ATTRIBUTE && k != K_COMMENT) return c;
    }
    return (TSNode){{0}, NULL, NULL};
}

/* The name a declarator declares (identifier, type_identifier, ...), or a
 * null node.  *is_func tells whether the declared entity is a function:
 * the derivation applied last, i.e. nearest the name, is a function
 * declarator.  *fn is that function declarator. */
static TSNode declarator_name(const c_parser *p, TSNode n, bool *is_func, TSNode *fn)
{
    enum { D_NONE, D_FUNC, D_OTHER } last = D_NONE;
    TSNode null_node = {{0}, NULL, NULL};
    if (fn) *fn = null_node;
    for (;;) {
        if (ts_node_is_null(n) || ts_node_is_missing(n)) return null_node;
        switch (kind_of(p, n)) {
        case K_IDENTIFIER:
        case K_TYPE_IDENTIFIER:
        case K_FIELD_IDENTIFIER:
        case K_PRIMITIVE_TYPE:
            if (is_func) *is_func = last == D_FUNC;
            return n;
        case K_FUNCTION_DECLARATOR:
            last = D_FUNC;
            if (fn) *fn = n;
            n = ts_node_child_by_field_id(n, p->f_declarator);
            break;
        case K_POINTER_DECLARATOR:
        case K_ARRAY_DECLARATOR:
            last = D_OTHER;
            n = ts_node_child_by_field_id(n, p->f_declarator);
            break;
        case K_INIT_DECLARATOR:
            n = ts_node_child_by_field_id(n, p->f_declarator);
            break;
        case K_WRAP_DECLARATOR:
            n = wrapped_declarator(p, n);
            break;
        default:
            return null_node;
        }
    }
}

static bool is_declarator_kind(int k)
{
    return k == K_POINTER_DECLARATOR || k == K_FUNCTION_DECLARATOR || k == K_ARRAY_DECLARATOR ||
           k == K_WRAP_DECLARATOR || k == K_INIT_DECLARATOR;
}

/* Adds to the active local set every name declared inside `root`:
 * declarators of declarations, typedefs, parameters and nested function
 * definitions, and K&R parameter names.  Iterative. */
static void collect_locals(c_parser *p, TSNode root)
{
    TSTreeCursor *c;
    if (ts_node_is_null(root) || p->locals == NULL) return;
    c = aux_cursor(&p->aux, root);
    for (;;) {
        TSNode n = ts_tree_cursor_current_node(c);
        int k = kind_of(p, n);
        if (k == K_DECLARATION || k == K_TYPE_DEFINITION || k == K_PARAMETER_DECLARATION ||
            k == K_FUNCTION_DEFINITION) {
            TSTreeCursor *d = aux_cursor(&p->aux2, n);
            if (ts_tree_cursor_goto_first_child(d)) {
                do {
                    TSNode name;
                    size_t len;
                    const char *t;
                    if (ts_tree_cursor_current_field_id(d) != p->f_declarator) continue;
                    name = declarator_name(p, ts_tree_cursor_current_node(d), NULL, NULL);
                    if (ts_node_is_null(name)) continue;
                    t = node_text(p, name, &len);
                    if (!locals_add(p->locals, t, len,
                                    kind_of(p, name) == K_IDENTIFIER ? LOCAL_VAR : LOCAL_TYPE))
                        oom(p);
                } while (ts_tree_cursor_goto_next_sibling(d));
            }
        } else if (k == K_PARAMETER_LIST) {
            /* K&R parameter names */
            TSTreeCursor *d = aux_cursor(&p->aux2, n);
            if (ts_tree_cursor_goto_first_child(d)) {
                do {
                    TSNode id = ts_tree_cursor_current_node(d);
                    size_t len;
                    const char *t;
                    if (kind_of(p, id) != K_IDENTIFIER) continue;
                    t = node_text(p, id, &len);
                    if (!locals_add(p->locals, t, len, LOCAL_VAR)) oom(p);
                } while (ts_tree_cursor_goto_next_sibling(d));
            }
        }
        if (ts_tree_cursor_goto_first_child(c)) continue;
        while (!ts_tree_cursor_goto_next_sibling(c)) {
            if (!ts_tree_cursor_goto_parent(c)) return;
        }
    }
}

/* ---- emitting ----------------------------------------------------------- */

static int32_t emit_node(c_parser *p, int kind, const char *name, size_t name_len, const char *prefix,
                         TSNode span, int32_t parent, uint32_t flags)
{
    cn_lang_node node;
    size_t s, e, plen;
    int rc;
    char *n, *q;
    if (p->rc < 0) return -1;
    n = copy_to(p, &p->nbuf, &p->nbuf_cap, name, name_len);
    if (n == NULL) return -1;
    plen = prefix ? strlen(prefix) : 0;
    if (!GROW(p->qbuf, p->qbuf_cap, plen + 1 + name_len + 1)) {
        oom(p);
        return -1;
    }
    q = p->qbuf;
    if (prefix) {
        memcpy(q, prefix, plen);
        q[plen++] = '.';
    }
    memcpy(q + plen, name, name_len);
    q[plen + name_len] = '\0';

    s = file_offset(p, ts_node_start_byte(span));
    e = file_offset(p, ts_node_end_byte(span));
    memset(&node, 0, sizeof node);
    node.struct_size = (uint32_t)sizeof node;
    node.kind = kind;
    node.name = n;
    node.qualname = q;
    node.start_line = line_of(p, s, NULL);
    node.end_line = e > s ? line_of(p, e - 1, NULL) : node.start_line;
    node.parent = parent;
    node.flags = flags;
    rc = p->sink->node(p->sink->data, &node);
    if (rc < 0) {
        p->rc = rc;
        return -1;
    }
    return rc;
}

static void emit_ref_text(c_parser *p, int kind, int32_t from, const char *name, size_t name_len,
                          const char *target, size_t target_len, uint32_t at)
{
    cn_lang_ref ref;
    uint32_t col;
    int rc;
    if (p->rc < 0 || name_len == 0) return;
    memset(&ref, 0, sizeof ref);
    ref.struct_size = (uint32_t)sizeof ref;
    ref.kind = kind;
    ref.from = from;
    ref.name = copy_to(p, &p->nbuf, &p->nbuf_cap, name, name_len);
    if (ref.name == NULL) return;
    if (target) {
        ref.target = copy_to(p, &p->qbuf, &p->qbuf_cap, target, target_len);
        if (ref.target == NULL) return;
    }
    ref.line = line_of(p, file_offset(p, at), &col);
    ref.column = col;
    rc = p->sink->ref(p->sink->data, &ref);
    if (rc < 0) p->rc = rc;
}

static void emit_ref(c_parser *p, int kind, int32_t from, TSNode name)
{
    size_t len;
    const char *t = node_text(p, name, &len);
    emit_ref_text(p, kind, from, t, len, NULL, 0, ts_node_start_byte(name));
}

/* ---- the generic walk: references and calls ----------------------------- */

static void walk(c_parser *p, TSNode n, int32_t from);
static void walk_declarator(c_parser *p, TSNode n, int32_t from);
static void handle_macro(c_parser *p, TSNode n);

/* Text of an expression without whitespace or comments: its tokens. */
static const char *compact_text(c_parser *p, TSNode n, size_t *len)
{
    TSTreeCursor *c = aux_cursor(&p->aux, n);
    size_t used = 0;
    for (;;) {
        TSNode cur = ts_tree_cursor_current_node(c);
        if (kind_of(p, cur) != K_COMMENT && ts_node_child_count(cur) == 0) {
            size_t tl;
            const char *t = node_text(p, cur, &tl);
            if (!GROW(p->tbuf, p->tbuf_cap, used + tl + 1)) {
                oom(p);
                return NULL;
            }
            for (size_t i = 0; i < tl; i++) {
                char ch = t[i];
                if (ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r' || ch == '\f' ||
                    ch == '\v' || ch == '\\')
                    continue;
                p->tbuf[used++] = ch;
            }
        } else if (ts_tree_cursor_goto_first_child(c)) {
            continue;
        }
        while (!ts_tree_cursor_goto_next_sibling(c)) {
            if (!ts_tree_cursor_goto_parent(c)) {
                *len = used;
                return p->tbuf ? p->tbuf : "";
            }
        }
    }
}

/* Emits the call of a call_expression and walks its callee; returns the
 * argument list, walked by the caller. */
static TSNode walk_call(c_parser *p, TSNode n, int32_t from)
{
    TSNode fn = ts_node_child_by_field_id(n, p->f_function);
    TSNode args = ts_node_child_by_field_id(n, p->f_arguments);
    int k = kind_of(p, fn);
    if (ts_node_is_null(fn) || ts_node_is_missing(fn)) return args;
    if (k == K_IDENTIFIER) {
        emit_ref(p, CN_REF_CALL, from, fn);
    } else if (k == K_FIELD_EXPRESSION) {
        size_t len = 0;
        const char *t = compact_text(p, fn, &len);
        if (t) emit_ref_text(p, CN_REF_CALL, from, t, len, NULL, 0, ts_node_start_byte(fn));
        walk(p, fn, from);
    } else if (k == K_PARENTHESIZED_EXPRESSION) {
        TSNode inner = fn;
        while (kind_of(p, inner) == K_PARENTHESIZED_EXPRESSION && ts_node_named_child_count(inner) == 1)
            inner = ts_node_named_child(inner, 0);
        if (kind_of(p, inner) == K_IDENTIFIER && !ts_node_is_missing(inner)) {
            size_t len;
            const char *t = node_text(p, inner, &len);
            emit_ref_text(p, CN_REF_CALL, from, t, len, NULL, 0, ts_node_start_byte(fn));
        } else {
            walk(p, fn, from);
        }
    } else {
        walk(p, fn, from);
    }
    return args;
}

/* Walks the named children of n except those with field `skip_field` (0:
 * none) and returns the last one, which the caller walks (so chains along
 * the last child do not deepen the recursion). */
static TSNode walk_children_but_last(c_parser *p, TSNode n, int32_t from, TSFieldId skip_field)
{
    TSNode pending = {{0}, NULL, NULL};
    TSTreeCursor *c;
    if (p->rc < 0 || p->depth >= MAX_DEPTH) return pending;
    c = cursor_at(p, n);
    if (!ts_tree_cursor_goto_first_child(c)) return pending;
    p->depth++;
    do {
        TSNode ch = ts_tree_cursor_current_node(c);
        if (!ts_node_is_named(ch)) continue;
        if (skip_field && ts_tree_cursor_current_field_id(c) == skip_field) continue;
        if (!ts_node_is_null(pending)) walk(p, pending, from);
        pending = ch;
    } while (p->rc >= 0 && ts_tree_cursor_goto_next_sibling(c));
    p->depth--;
    return pending;
}

/* declaration, type_definition, field_declaration, parameter_declaration,
 * type_descriptor and nested function definitions: types and initialisers,
 * but not the declared names. */
static void walk_declaration_like(c_parser *p, TSNode n, int32_t from)
{
    TSTreeCursor *c;
    ENTER(p);
    c = cursor_at(p, n);
    if (ts_tree_cursor_goto_first_child(c)) {
        do {
            TSNode ch = ts_tree_cursor_current_node(c);
            if (!ts_node_is_named(ch)) continue;
            if (ts_tree_cursor_current_field_id(c) == p->f_declarator)
                walk_declarator(p, ch, from);
            else
                walk(p, ch, from);
        } while (p->rc >= 0 && ts_tree_cursor_goto_next_sibling(c));
    }
    LEAVE(p);
}

/* Binary operator chains nest along their left operand: walk them from the
 * innermost left operand outwards, without recursion. */
static void walk_binary(c_parser *p, TSNode n, int32_t from)
{
    size_t mark = p->spine_len, i;
    while (kind_of(p, n) == K_BINARY && !ts_node_is_missing(n)) {
        if (!GROW(p->spine, p->spine_cap, p->spine_len + 1)) {
            oom(p);
            p->spine_len = mark;
            return;
        }
        p->spine[p->spine_len++] = n;
        n = ts_node_child_by_field_id(n, p->f_left);
    }
    walk(p, n, from);
    for (i = p->spine_len; i > mark && p->rc >= 0; i--) {
        TSNode last = walk_children_but_last(p, p->spine[i - 1], from, p->f_left);
        walk(p, last, from);
    }
    p->spine_len = mark;
}

static void walk_params(c_parser *p, TSNode list, int32_t from)
{
    TSTreeCursor *c;
    ENTER(p);
    c = cursor_at(p, list);
    if (ts_tree_cursor_goto_first_child(c)) {
        do {
            TSNode ch = ts_tree_cursor_current_node(c);
            if (!ts_node_is_named(ch) || kind_of(p, ch) == K_IDENTIFIER) continue;
            walk(p, ch, from);
        } while (p->rc >= 0 && ts_tree_cursor_goto_next_sibling(c));
    }
    LEAVE(p);
}

/* A declarator: walks array sizes, parameter types and initialisers, not
 * the declared name nor annotations after a function declarator. */
static void walk_declarator(c_parser *p, TSNode n, int32_t from)
{
    ENTER(p);
    while (p->rc >= 0 && !ts_node_is_null(n) && !ts_node_is_missing(n)) {
        int k = kind_of(p, n);
        if (k == K_IDENTIFIER || k == K_TYPE_IDENTIFIER || k == K_FIELD_IDENTIFIER ||
            k == K_PRIMITIVE_TYPE || k == K_GNU_ASM || k == K_ATTRIBUTE || k == K_COMMENT ||
            k == K_SKIP)
            break;
        if (k == K_POINTER_DECLARATOR) {
            n = ts_node_child_by_field_id(n, p->f_declarator);
        } else if (k == K_WRAP_DECLARATOR) {
            n = wrapped_declarator(p, n);
        } else if (k == K_FUNCTION_DECLARATOR) {
            walk_declarator(p, ts_node_child_by_field_id(n, p->f_declarator), from);
            n = ts_node_child_by_field_id(n, p->f_parameters);
            if (!ts_node_is_null(n)) walk_params(p, n, from);
            break;
        } else if (k == K_ARRAY_DECLARATOR) {
            TSNode d = ts_node_child_by_field_id(n, p->f_declarator);
            walk_declarator(p, d, from);
            /* the size and any qualifiers: everything but the declarator */
            n = walk_children_but_last(p, n, from, p->f_declarator);
            walk(p, n, from);
            break;
        } else if (k == K_INIT_DECLARATOR) {
            walk_declarator(p, ts_node_child_by_field_id(n, p->f_declarator), from);
            walk(p, ts_node_child_by_field_id(n, p->f_value), from);
            break;
        } else {
            walk(p, n, from);
            break;
        }
    }
    LEAVE(p);
}

static void handle_include(c_parser *p, TSNode n, int32_t from)
{
    TSNode path = ts_node_child_by_field_id(n, p->f_path);
    size_t len;
    const char *t;
    if (ts_node_is_null(path) || ts_node_is_missing(path)) return;
    t = node_text(p, path, &len);
    switch (kind_of(p, path)) {
    case K_STRING_LITERAL:
        if (len >= 2 && t[0] == '"' && t[len - 1] == '"')
            emit_ref_text(p, CN_REF_IMPORT, from, t + 1, len - 2, t + 1, len - 2, ts_node_start_byte(n));
        break;
    case K_SYSTEM_LIB_STRING:
        if (len >= 2 && t[0] == '<' && t[len - 1] == '>')
            emit_ref_text(p, CN_REF_IMPORT, from, t + 1, len - 2, t, len, ts_node_start_byte(n));
        break;
    default: /* #include MACRO, #include MACRO(x) */
        walk(p, path, from);
        break;
    }
}

static void walk(c_parser *p, TSNode n, int32_t from)
{
    ENTER(p);
    while (p->rc >= 0 && !ts_node_is_null(n) && !ts_node_is_missing(n)) {
        switch (kind_of(p, n)) {
        case K_IDENTIFIER:
            if (!is_local(p, n, LOCAL_VAR)) emit_ref(p, CN_REF_REFERENCE, from, n);
            goto done;
        case K_TYPE_IDENTIFIER:
            if (!is_local(p, n, LOCAL_TYPE)) emit_ref(p, CN_REF_REFERENCE, from, n);
            goto done;
        case K_SKIP:
        case K_FIELD_IDENTIFIER:
        case K_PRIMITIVE_TYPE:
        case K_STORAGE_CLASS:
        case K_ATTRIBUTE:
        case K_STRING_LITERAL:
        case K_SYSTEM_LIB_STRING:
        case K_COMMENT:
            goto done;
        case K_CALL:
            n = walk_call(p, n, from);
            break;
        case K_FIELD_EXPRESSION:
            n = ts_node_child_by_field_id(n, p->f_argument);
            break;
        case K_ENUMERATOR:
        case K_ASM_OPERAND:
            n = ts_node_child_by_field_id(n, p->f_value);
            break;
        case K_MACRO_TYPE_SPECIFIER:
            n = ts_node_child_by_field_id(n, p->f_type);
            break;
        case K_STRUCT:
        case K_UNION:
        case K_ENUM: {
            TSNode name = ts_node_child_by_field_id(n, p->f_name);
            TSNode body = ts_node_child_by_field_id(n, p->f_body);
            if (ts_node_is_null(body)) {
                if (!ts_node_is_null(name) && !ts_node_is_missing(name))
                    emit_ref(p, CN_REF_REFERENCE, from, name);
                goto done;
            }
            n = body;
            break;
        }
        case K_DECLARATION:
        case K_TYPE_DEFINITION:
        case K_FIELD_DECLARATION:
        case K_PARAMETER_DECLARATION:
        case K_TYPE_DESCRIPTOR:
        case K_FUNCTION_DEFINITION:
            walk_declaration_like(p, n, from);
            goto done;
        case K_POINTER_DECLARATOR:
        case K_FUNCTION_DECLARATOR:
        case K_ARRAY_DECLARATOR:
        case K_WRAP_DECLARATOR:
        case K_INIT_DECLARATOR:
            walk_declarator(p, n, from);
            goto done;
        case K_PARAMETER_LIST:
            walk_params(p, n, from);
            goto done;
        case K_PREPROC_DEF:
        case K_PREPROC_FUNCTION_DEF:
            handle_macro(p, n);
            goto done;
        case K_PREPROC_INCLUDE:
            handle_include(p, n, from);
            goto done;
        case K_BINARY:
            walk_binary(p, n, from);
            goto done;
        default:
            n = walk_children_but_last(p, n, from, 0);
            break;
        }
    }
done:
    LEAVE(p);
}

/* ---- macros ------------------------------------------------------------- */

static void handle_macro(c_parser *p, TSNode n)
{
    TSNode name = ts_node_child_by_field_id(n, p->f_name);
    TSNode value = ts_node_child_by_field_id(n, p->f_value);
    TSNode params = ts_node_child_by_field_id(n, p->f_parameters);
    const char *t, *body;
    size_t len, blen, vlen;
    int32_t idx;
    char *vbuf;
    TSTree *tree;
    /* saved walker state */
    const char *s_src;
    size_t s_base, s_lo, s_hi;
    local_set *s_locals;
    uint32_t vs, ve;

    if (p->in_macro || ts_node_is_null(name) || ts_node_is_missing(name)) return;
    t = node_text(p, name, &len);
    idx = emit_node(p, CN_NODE_MACRO, t, len, NULL, n, -1, 0);
    if (idx < 0 || ts_node_is_null(value)) return;

    /* parse "{" BODY "\n;}" on its own */
    body = node_text(p, value, &blen);
    vs = ts_node_start_byte(value);
    ve = ts_node_end_byte(value);
    if (blen == 0 || blen > UINT32_MAX - 8 || file_offset(p, vs) == 0) return;
    vlen = blen + 4;
    vbuf = malloc(vlen + 1);
    if (vbuf == NULL) {
        oom(p);
        return;
    }
    vbuf[0] = '{';
    memcpy(vbuf + 1, body, blen);
    memcpy(vbuf + 1 + blen, "\n;}", 4);
    {
        /* a macro's body is short: a hundredth of a file's time, so that
         * many slow ones cannot add up to minutes */
        cn_ts_guard_opts mo = {0, 0, 0, 0, 0, 0};
        mo.timeout_us = cn_ts_parse_budget_us((uint32_t)vlen) / 100;
        tree = cn_ts_parse_guarded(p->cur, vbuf, (uint32_t)vlen, &mo, NULL);
    }
    if (tree == NULL) {
        free(vbuf);
        return;
    }

    locals_clear(&p->macro_locals);
    if (!locals_add(&p->macro_locals, "__VA_ARGS__", 11, LOCAL_VAR | LOCAL_TYPE)) oom(p);
    if (!ts_node_is_null(params)) {
        TSTreeCursor *c = aux_cursor(&p->aux, params);
        if (ts_tree_cursor_goto_first_child(c)) {
            do {
                TSNode prm = ts_tree_cursor_current_node(c);
                size_t pl;
                const char *pt;
                if (kind_of(p, prm) != K_IDENTIFIER) continue;
                pt = node_text(p, prm, &pl);
                /* these point into the file, which outlives the walk */
                if (!locals_add(&p->macro_locals, pt, pl, LOCAL_VAR | LOCAL_TYPE)) oom(p);
            } while (ts_tree_cursor_goto_next_sibling(c));
        }
    }

    s_src = p->src;
    s_base = p->base;
    s_lo = p->lo;
    s_hi = p->hi;
    s_locals = p->locals;
    p->lo = file_offset(p, vs);
    p->hi = file_offset(p, ve);
    p->base = p->lo - 1;
    p->src = vbuf;
    p->locals = &p->macro_locals;
    p->in_macro = true;
    collect_locals(p, ts_tree_root_node(tree));
    walk(p, ts_tree_root_node(tree), idx);
    p->in_macro = false;
    p->locals = s_locals;
    p->src = s_src;
    p->base = s_base;
    p->lo = s_lo;
    p->hi = s_hi;
    locals_clear(&p->macro_locals);
    ts_tree_delete(tree);
    free(vbuf);
}

/* ---- file scope: nodes -------------------------------------------------- */

typedef struct scope {
    int32_t parent;     /* enclosing struct, or -1 at file scope */
    const char *prefix; /* its qualname, or NULL */
} scope;

static void walk_items(c_parser *p, TSNode container, const scope *sc);

/* A struct, union or enum with a body: its node, then what its body holds
 * (nested definitions become nodes "outer.inner").  `span` is the
 * declaration it appears in; `tdname` names an anonymous one. */
static void emit_specifier(c_parser *p, TSNode spec, TSNode span, const scope *sc, TSNode tdname)
{
    int k = kind_of(p, spec);
    int kind = k == K_STRUCT ? CN_NODE_STRUCT : k == K_UNION ? CN_NODE_UNION : CN_NODE_ENUM;
    TSNode name = ts_node_child_by_field_id(spec, p->f_name);
    TSNode body = ts_node_child_by_field_id(spec, p->f_body);
    char anon[64];
    const char *t;
    size_t len;
    int32_t idx;
    ENTER(p);
    if (!ts_node_is_null(name) && !ts_node_is_missing(name)) {
        t = node_text(p, name, &len);
    } else if (!ts_node_is_null(tdname)) {
        t = node_text(p, tdname, &len);
    } else {
        uint32_t line = line_of(p, file_offset(p, ts_node_start_byte(spec)), NULL);
        len = (size_t)snprintf(anon, sizeof anon, "<anonymous %s:%u>",
                               k == K_STRUCT ? "struct" : k == K_UNION ? "union" : "enum", line);
        t = anon;
    }
    idx = emit_node(p, kind, t, len, sc->prefix, span, sc->parent, 0);
    if (idx >= 0) {
        if (k == K_ENUM) {
            walk(p, body, idx);
        } else {
            scope inner = {idx, dup_string(p->qbuf)};
            if (inner.prefix == NULL) {
                oom(p);
            } else {
                walk_items(p, body, &inner);
                free((char *)inner.prefix);
            }
        }
    }
    LEAVE(p);
}

/* ts_node_child_by_field_id finds nothing in an ERROR node, whose children
 * may still carry fields: look with a cursor. */
static TSNode error_child_by_field(c_parser *p, TSNode n, TSFieldId fid)
{
    TSTreeCursor *c;
    if (kind_of(p, n) != K_ERROR) return ts_node_child_by_field_id(n, fid);
    c = aux_cursor(&p->aux, n);
    if (ts_tree_cursor_goto_first_child(c)) {
        do {
            if (ts_tree_cursor_current_field_id(c) == fid) return ts_tree_cursor_current_node(c);
        } while (ts_tree_cursor_goto_next_sibling(c));
    }
    return (TSNode){{0}, NULL, NULL};
}

static uint32_t storage_flags(c_parser *p, TSNode decl, bool *is_extern)
{
    uint32_t flags = 0;
    TSTreeCursor *c = aux_cursor(&p->aux, decl);
    *is_extern = false;
    if (ts_tree_cursor_goto_first_child(c)) {
        do {
            TSNode ch = ts_tree_cursor_current_node(c);
            if (kind_of(p, ch) != K_STORAGE_CLASS) continue;
            if (text_is(p, ch, "static")) flags |= CN_NODE_F_STATIC;
            if (text_is(p, ch, "extern")) *is_extern = true;
        } while (ts_tree_cursor_goto_next_sibling(c));
    }
    return flags;
}

/* Is this child of a declaration one of its declarators?  In an ERROR node
 * standing for a declaration, declarators have lost their field. */
static bool is_declarator_child(c_parser *p, TSTreeCursor *c, bool in_error)
{
    if (ts_tree_cursor_current_field_id(c) == p->f_declarator) return true;
    return in_error && is_declarator_kind(kind_of(p, ts_tree_cursor_current_node(c)));
}

/* A file-scope declaration or typedef (or a field declaration inside a
 * struct body, which only yields nested type nodes). */
static void do_declaration(c_parser *p, TSNode d, const scope *sc)
{
    int k = kind_of(p, d);
    bool is_typedef = k == K_TYPE_DEFINITION, in_error = k == K_ERROR, is_field = k == K_FIELD_DECLARATION;
    bool is_extern;
    uint32_t flags = storage_flags(p, d, &is_extern);
    TSNode type = error_child_by_field(p, d, p->f_type);
    bool bodied = is_bodied_specifier(p, type);
    TSNode null_node = {{0}, NULL, NULL}, tdname = null_node;
    TSTreeCursor *c;
    size_t mark = p->ivec_len, i;
    int32_t first = -1;
    ENTER(p);

    /* nodes: the type's definition, then one per declarator (an anonymous
     * struct in a typedef takes the first declared name) */
    c = cursor_at(p, d);
    if (!is_field && ts_tree_cursor_goto_first_child(c)) {
        do {
            if (!is_declarator_child(p, c, in_error)) continue;
            if (is_typedef && ts_node_is_null(tdname))
                tdname = declarator_name(p, ts_tree_cursor_current_node(c), NULL, NULL);
            if (!GROW(p->ivec, p->ivec_cap, p->ivec_len + 1)) {
                oom(p);
                break;
            }
            p->ivec[p->ivec_len++] = -1;
        } while (ts_tree_cursor_goto_next_sibling(c));
    }
    if (bodied) emit_specifier(p, type, d, sc, is_typedef ? tdname : null_node);
    i = mark;
    c = cursor_at(p, d);
    if (!is_field && p->rc >= 0 && ts_tree_cursor_goto_first_child(c)) {
        do {
            TSNode name;
            bool is_func = false;
            size_t len;
            const char *t;
            int32_t idx = -1;
            if (!is_declarator_child(p, c, in_error) || i >= p->ivec_len) continue;
            name = declarator_name(p, ts_tree_cursor_current_node(c), &is_func, NULL);
            if (!ts_node_is_null(name)) {
                t = node_text(p, name, &len);
                if (is_typedef)
                    idx = emit_node(p, CN_NODE_TYPEDEF, t, len, NULL, d, -1, 0);
                else if (is_func)
                    idx = emit_node(p, CN_NODE_PROTOTYPE, t, len, NULL, d, -1, flags);
                else if (!is_extern)
                    idx = emit_node(p, CN_NODE_VARIABLE, t, len, NULL, d, -1, flags);
            }
            p->ivec[i++] = idx;
            if (first < 0) first = idx;
        } while (p->rc >= 0 && ts_tree_cursor_goto_next_sibling(c));
    }
    if (is_field) first = sc->parent;

    /* references, in source order */
    i = mark;
    c = cursor_at(p, d);
    if (p->rc >= 0 && ts_tree_cursor_goto_first_child(c)) {
        p->depth++;
        do {
            TSNode ch = ts_tree_cursor_current_node(c);
            if (!ts_node_is_named(ch)) continue;
            if (!is_field && is_declarator_child(p, c, in_error)) {
                int32_t from = i < p->ivec_len ? p->ivec[i++] : -1;
                walk_declarator(p, ch, from);
            } else if (ts_tree_cursor_current_field_id(c) == p->f_type) {
                if (!bodied) walk(p, ch, first);
            } else if (is_field && ts_tree_cursor_current_field_id(c) == p->f_declarator) {
                walk_declarator(p, ch, first);
            } else {
                walk(p, ch, first);
            }
        } while (p->rc >= 0 && ts_tree_cursor_goto_next_sibling(c));
        p->depth--;
    }
    p->ivec_len = mark;
    LEAVE(p);
}

static void do_function(c_parser *p, TSNode f)
{
    TSNode type = ts_node_child_by_field_id(f, p->f_type);
    TSNode decl = ts_node_child_by_field_id(f, p->f_declarator);
    TSNode null_node = {{0}, NULL, NULL};
    bool bodied = is_bodied_specifier(p, type), is_extern, is_func = false;
    uint32_t flags = storage_flags(p, f, &is_extern);
    TSNode name = declarator_name(p, decl, &is_func, NULL);
    int32_t idx = -1;
    TSTreeCursor *c;
    scope top = {-1, NULL};
    ENTER(p);
    if (bodied) emit_specifier(p, type, f, &top, null_node);
    if (!ts_node_is_null(name)) {
        size_t len;
        const char *t = node_text(p, name, &len);
        if (len > 5 && memcmp(t, "test_", 5) == 0) flags |= CN_NODE_F_TEST;
        idx = emit_node(p, CN_NODE_FUNCTION, t, len, NULL, f, -1, flags);
    }
    locals_clear(&p->fn_locals);
    p->locals = &p->fn_locals;
    c = cursor_at(p, f);
    if (p->rc >= 0 && ts_tree_cursor_goto_first_child(c)) {
        /* parameters, K&R parameter declarations and locals */
        do {
            TSNode ch = ts_tree_cursor_current_node(c);
            if (ts_tree_cursor_current_field_id(c) == p->f_type || !ts_node_is_named(ch)) continue;
            collect_locals(p, ch);
        } while (ts_tree_cursor_goto_next_sibling(c));
    }
    c = cursor_at(p, f);
    if (p->rc >= 0 && ts_tree_cursor_goto_first_child(c)) {
        p->depth++;
        do {
            TSNode ch = ts_tree_cursor_current_node(c);
            if (!ts_node_is_named(ch)) continue;
            if (ts_tree_cursor_current_field_id(c) == p->f_type) {
                if (!bodied) walk(p, ch, idx);
            } else if (ts_tree_cursor_current_field_id(c) == p->f_declarator) {
                walk_declarator(p, ch, idx);
            } else {
                walk(p, ch, idx);
            }
        } while (p->rc >= 0 && ts_tree_cursor_goto_next_sibling(c));
        p->depth--;
    }
    p->locals = NULL;
    locals_clear(&p->fn_locals);
    LEAVE(p);
}

/* An ERROR node that stands for a declaration: a type, then declarators
 * (which have lost their field). */
static bool error_is_declaration(c_parser *p, TSNode n)
{
    TSTreeCursor *c;
    if (ts_node_is_null(error_child_by_field(p, n, p->f_type))) return false;
    c = aux_cursor(&p->aux, n);
    if (ts_tree_cursor_goto_first_child(c)) {
        do {
            if (is_declarator_kind(kind_of(p, ts_tree_cursor_current_node(c)))) return true;
        } while (ts_tree_cursor_goto_next_sibling(c));
    }
    return false;
}

/* The items of a translation unit, an extern "C" block, a preprocessor
 * conditional, a recovered ERROR, or (sc->parent >= 0) a struct body. */
static void walk_items(c_parser *p, TSNode container, const scope *sc)
{
    TSTreeCursor *c;
    ENTER(p);
    c = cursor_at(p, container);
    if (ts_tree_cursor_goto_first_child(c)) {
        p->depth++;
        do {
            TSNode ch = ts_tree_cursor_current_node(c);
            TSFieldId fid = ts_tree_cursor_current_field_id(c);
            int k;
            if (!ts_node_is_named(ch)) continue;
            k = kind_of(p, ch);
            if (fid == p->f_alternative) {
                walk_items(p, ch, sc);
                continue;
            }
            if (fid == p->f_condition || fid == p->f_name) {
                walk(p, ch, sc->parent);
                continue;
            }
            switch (k) {
            case K_FUNCTION_DEFINITION:
                if (sc->parent < 0)
                    do_function(p, ch);
                else
                    walk(p, ch, sc->parent);
                break;
            case K_DECLARATION:
            case K_TYPE_DEFINITION:
                if (sc->parent < 0)
                    do_declaration(p, ch, sc);
                else
                    walk(p, ch, sc->parent);
                break;
            case K_FIELD_DECLARATION:
                do_declaration(p, ch, sc);
                break;
            case K_STRUCT:
            case K_UNION:
            case K_ENUM:
                /* a definition alone, or a forward declaration */
                if (is_bodied_specifier(p, ch)) emit_specifier(p, ch, ch, sc, (TSNode){{0}, NULL, NULL});
                break;
            case K_PREPROC_COND:
            case K_DECLARATION_LIST:
            case K_FIELD_DECLARATION_LIST:
                walk_items(p, ch, sc);
                break;
            case K_LINKAGE: {
                TSNode body = ts_node_child_by_field_id(ch, p->f_body);
                if (kind_of(p, body) == K_DECLARATION_LIST)
                    walk_items(p, body, sc);
                else if (kind_of(p, body) == K_FUNCTION_DEFINITION)
                    do_function(p, body);
                else if (kind_of(p, body) == K_DECLARATION)
                    do_declaration(p, body, sc);
                break;
            }
            case K_ERROR:
                if (sc->parent < 0 && error_is_declaration(p, ch))
                    do_declaration(p, ch, sc);
                else
                    walk_items(p, ch, sc);
                break;
            default:
                walk(p, ch, sc->parent);
                break;
            }
        } while (p->rc >= 0 && ts_tree_cursor_goto_next_sibling(c));
        p->depth--;
    }
    LEAVE(p);
}

/* ---- the parser object -------------------------------------------------- */

static void drop_cursor(cursor_slot *s)
{
    if (s->live) ts_tree_cursor_delete(&s->c);
    s->live = false;
}

static void drop_cursors(c_parser *p)
{
    for (size_t i = 0; i < sizeof p->cursors / sizeof p->cursors[0]; i++) drop_cursor(&p->cursors[i]);
    drop_cursor(&p->aux);
    drop_cursor(&p->aux2);
}

/* Deletes the tree (NULL: none) of the parse under way, and the cursors
 * into it (from the parse's arena, when it had one). */
static void end_parse(c_parser *p, TSTree *tree)
{
    drop_cursors(p);
    cn_ts_arena_done(p->arena, p->cur, tree);
    p->cur = NULL;
}

static int c_parse(cn_lang_parser *self, const char *path, const char *src, size_t len,
                   const cn_lang_sink *sink, cn_error *err)
{
    c_parser *p = self->data;
    TSTree *tree;
    scope top = {-1, NULL};
    char *safe;
    bool failed;
    cn_ts_guard_result guard;
    if (sink == NULL || sink->node == NULL || sink->ref == NULL || (src == NULL && len > 0)) {
        if (p->host && p->host->error_set)
            return p->host->error_set(err, CN_EINVAL, "lang-c: parse: no sink or no source");
        return CN_EINVAL;
    }
    if (len > UINT32_MAX - 16) {
        if (p->host && p->host->error_set)
            return p->host->error_set(err, CN_EINVAL, "lang-c: %s: file too large to parse (%zu bytes)",
                                      path ? path : "(input)", len);
        return CN_EINVAL;
    }
    if (src == NULL) src = "";
    safe = cn_ts_blank_deep_nesting(src, len, CN_TS_BLANK_BRACKETS | CN_TS_BLANK_DIRECTIVES, MAX_NESTING,
                                    &failed);
    if (failed) {
        if (p->host && p->host->error_set)
            return p->host->error_set(err, CN_ENOMEM, "lang-c: out of memory");
        return CN_ENOMEM;
    }
    /* a header split by #if branches: one header, so one definition */
    if (!cn_pp_join_split_headers(safe ? safe : src, len, &safe)) {
        free(safe);
        if (p->host && p->host->error_set)
            return p->host->error_set(err, CN_ENOMEM, "lang-c: out of memory");
        return CN_ENOMEM;
    }
    if (safe) src = safe;
    p->sink = sink;
    p->orig = src;
    p->orig_len = len;
    p->src = src;
    p->base = 0;
    p->lo = 0;
    p->hi = len;
    p->in_macro = false;
    p->depth = 0;
    p->rc = 0;
    p->locals = NULL;
    p->spine_len = 0;
    p->ivec_len = 0;
    if (!build_lines(p)) {
        free(safe);
        if (p->host && p->host->error_set)
            return p->host->error_set(err, CN_ENOMEM, "lang-c: out of memory");
        return CN_ENOMEM;
    }
    p->cur = cn_ts_arena_parser(p->arena, p->ts, tree_sitter_c());
    tree = cn_ts_parse_guarded(p->cur, src, (uint32_t)len, NULL, &guard);
    if (tree == NULL) {
        char why[256];
        end_parse(p, NULL);
        free(safe);
        if (p->host && p->host->error_set)
            return p->host->error_set(err, CN_ERR, "lang-c: %s: %s", path ? path : "(input)",
                                      cn_ts_no_tree_reason(&guard, why, sizeof why));
        return CN_ERR;
    }
    if (guard.cut && p->host != NULL && p->host->log != NULL)
        p->host->log(p->host, CN_LOG_WARNING, "lang-c: %s: too broken to parse past %u:%u; rest skipped",
                     path ? path : "(input)", (unsigned)guard.cut_row + 1,
                     (unsigned)guard.cut_col + 1);
    walk_items(p, ts_tree_root_node(tree), &top);
    end_parse(p, tree);
    free(safe);
    p->sink = NULL;
    p->orig = p->src = NULL;
    p->locals = NULL;
    if (p->rc < 0) {
        int rc = p->rc;
        if (p->host && p->host->error_set) {
            if (rc == CN_ENOMEM) return p->host->error_set(err, rc, "lang-c: out of memory");
            return p->host->error_set(err, rc, "lang-c: %s: stopped by the sink",
                                      path ? path : "(input)");
        }
        return rc;
    }
    return 0;
}

static void c_destroy(cn_lang_parser *self)
{
    c_parser *p;
    if (self == NULL) return;
    p = self->data;
    drop_cursors(p);
    if (p->ts) ts_parser_delete(p->ts);
    cn_ts_arena_free(p->arena);
    free(p->fn_locals.slots);
    free(p->macro_locals.slots);
    free(p->kinds);
    free(p->nbuf);
    free(p->qbuf);
    free(p->tbuf);
    free(p->lines);
    free(p->spine);
    free(p->ivec);
    free(p);
}

static TSFieldId field(const TSLanguage *lang, const char *name)
{
    return ts_language_field_id_for_name(lang, name, (uint32_t)strlen(name));
}

static int c_create(const cn_host *host, cn_lang_parser **out, cn_error *err)
{
    const TSLanguage *lang = tree_sitter_c();
    c_parser *p;
    if (out == NULL) {
        if (host && host->error_set) return host->error_set(err, CN_EINVAL, "lang-c: create: no output");
        return CN_EINVAL;
    }
    *out = NULL;
    p = calloc(1, sizeof *p);
    if (p == NULL) goto nomem;
    p->host = host;
    p->pub.struct_size = (uint32_t)sizeof p->pub;
    p->pub.data = p;
    p->pub.parse = c_parse;
    p->pub.destroy = c_destroy;
    p->ts = ts_parser_new();
    if (p->ts == NULL) goto nomem;
    if (!ts_parser_set_language(p->ts, lang)) {
        c_destroy(&p->pub);
        if (host && host->error_set)
            return host->error_set(err, CN_EABI,
                                   "lang-c: the tree-sitter library rejects the C grammar "
                                   "(grammar ABI %u)",
                                   ts_language_version(lang));
        return CN_EABI;
    }
    p->nkinds = ts_language_symbol_count(lang);
    p->kinds = calloc(p->nkinds ? p->nkinds : 1, 1);
    if (p->kinds == NULL) goto nomem;
    for (uint32_t s = 0; s < p->nkinds; s++) {
        const char *name;
        if (ts_language_symbol_type(lang, (TSSymbol)s) != TSSymbolTypeRegular) continue;
        name = ts_language_symbol_name(lang, (TSSymbol)s);
        if (name == NULL) continue;
        for (size_t i = 0; i < sizeof symbol_kinds / sizeof symbol_kinds[0]; i++) {
            if (strcmp(name, symbol_kinds[i].name) == 0) {
                p->kinds[s] = symbol_kinds[i].kind;
                break;
            }
        }
    }
    p->f_type = field(lang, "type");
    p->f_declarator = field(lang, "declarator");
    p->f_body = field(lang, "body");
    p->f_name = field(lang, "name");
    p->f_value = field(lang, "value");
    p->f_function = field(lang, "function");
    p->f_arguments = field(lang, "arguments");
    p->f_argument = field(lang, "argument");
    p->f_parameters = field(lang, "parameters");
    p->f_path = field(lang, "path");
    p->f_condition = field(lang, "condition");
    p->f_alternative = field(lang, "alternative");
    p->f_left = field(lang, "left");
    p->arena = cn_ts_arena_new(); /* none: every parse uses p->ts */
    *out = &p->pub;
    return 0;
nomem:
    if (p) c_destroy(&p->pub);
    if (host && host->error_set) return host->error_set(err, CN_ENOMEM, "lang-c: out of memory");
    return CN_ENOMEM;
}

CN_LANG_DEFINE(c, "c", LANG_C_VERSION, c_create);
