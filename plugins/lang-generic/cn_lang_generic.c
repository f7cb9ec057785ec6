/* SPDX-License-Identifier: Apache-2.0 */
/* codenib language backends for C++, JavaScript, TypeScript, TSX, Go, Java
 * and Rust: one table-driven source built once per language.
 *
 * Compile with exactly one of -DCN_LANG_CPP, -DCN_LANG_JAVASCRIPT,
 * -DCN_LANG_TYPESCRIPT, -DCN_LANG_TSX, -DCN_LANG_GO, -DCN_LANG_JAVA or
 * -DCN_LANG_RUST; the macro selects the tree-sitter grammar and a table
 * that says, per node type, what the node is to the walker:
 *
 *   R_DEF     a definition: emits a node (how its name is found: NM_*)
 *   R_CALL    a call: emits a CALL reference (where its callee is: CS_*)
 *   R_IMPORT  an import: emits IMPORT references (IM_*)
 *   R_BASES   a base-class clause: the names in it are INHERIT references
 *   R_LIST    a list inside a base clause (its items are bases too)
 *   R_WRAP    wraps one definition (export, template<...>, const x = ...):
 *             the definition's lines start at the wrapper
 *   R_ATTR    an attribute or decorator written before a definition
 *   R_LEAF, R_INNER, R_TARGS, R_SEP
 *             the pieces of a name chain ("a.b.c", "ns::f", "x->y"):
 *             names, the nodes joining them, type arguments (left out),
 *             named separators
 *   R_FUNCVAL a function value: `const f = () => ...` defines f
 *
 * JavaScript (and TypeScript) define functions by assignment as much as
 * by declaration, and name them by where they are stored:
 *
 *   res.send = function send(body) {...}    method  res.send
 *   Foo.prototype.bar = function () {...}   method  Foo.bar
 *   exports.x = () => {...}                 function x
 *   module.exports = function name() {...}  function name
 *   module.exports = (req, res) => {...}    function module.exports
 *   const api = { get: () => {}, run() {} } methods api.get, api.run
 *
 * A prototype method is qualified like the method of a class (Foo.bar),
 * so that the two ways of writing a class give the same names;
 * `module.exports.` and `exports.` are how a module exports, not part of
 * the name (`exports.x` is the module's x); `this.x = function` in a
 * constructor is a method of the constructor (Foo.x).  An object literal
 * stored in a name (a variable, a property, a key) qualifies the
 * functions it holds by that name, without a node of its own.
 *
 * The syntax tree is walked iteratively with a TSTreeCursor (never by
 * recursion), so deep nesting cannot exhaust the stack; brackets nested
 * deeper than CN_TS_MAX_NESTING are blanked out before parsing and the
 * parse runs under cn_ts_parse_guarded(), because libtree-sitter 0.20
 * stores child counts in 16 bits (see plugins/common/cn_ts_guard.h).
 * Emitted nodes live on a context stack tagged with the tree depth that
 * opened them: arriving at a node of depth d closes every context opened
 * at depth >= d. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tree_sitter/api.h>

#include <codenib/lang.h>

#include "cn_ts_arena.h"
#include "cn_ts_guard.h"
#if defined(CN_LANG_CPP)
#include "cn_pp_split.h"
#endif

/* ------------------------------------------------------------------ */
/* Tables                                                              */

enum {
    R_NONE = 0,
    R_DEF,
    R_CALL,
    R_IMPORT,
    R_BASES,
    R_LIST,
    R_WRAP,
    R_ATTR,
    R_COMMENT,
    R_LEAF,
    R_INNER,
    R_TARGS,
    R_SEP,
    R_FUNCVAL
};

/* R_DEF: where the name is */
enum {
    NM_NAME = 0,  /* field "name" */
    NM_NAME_BODY, /* field "name", and only with a "body" */
    NM_CPP_FUNC,  /* the declarator chain of a C++ function_definition */
    NM_VAR_FUNC,  /* field "name" or "property", with a function "value" */
    NM_GO_METHOD, /* field "name", qualified by the receiver's type */
    NM_GO_TYPE,   /* type_spec of a struct or interface type */
    NM_RUST_IMPL, /* the implemented type */
    NM_JS_ASSIGN, /* `left = <function or object>` (see the top) */
    NM_JS_PAIR    /* `key: <function or object>` in an object literal */
};

/* def_resolve's kind for a name that qualifies what a definition holds
 * but is no node itself (an object literal stored in a name). */
#define KIND_PREFIX 255

/* R_CALL: where the callee is */
enum {
    CS_FUNCTION = 0, /* field "function" */
    CS_NEW,          /* field "constructor" (JS new) */
    CS_TYPE,         /* field "type" (Java new) */
    CS_JAVA_INVOKE,  /* fields "object" and "name" */
    CS_MACRO         /* field "macro", reported with a '!' */
};

/* R_IMPORT: the statement's shape */
enum { IM_INCLUDE = 0, IM_JS, IM_GO, IM_JAVA, IM_RUST };

/* R_INNER: what else the node is when it is a callee */
enum {
    IN_PLAIN = 0,
    IN_MEMBER, /* x.field where x is no chain: reported as ".field" */
    IN_UNWRAP  /* generic wrapper: the callee is its "function" field */
};

typedef struct rule {
    const char *type;
    uint8_t role;
    uint8_t kind;      /* R_DEF: CN_NODE_*; CN_NODE_FUNCTION becomes a
                          method directly inside a class-like node */
    uint8_t how;       /* NM_*, CS_*, IM_*, IN_* */
    const char *bases; /* R_DEF: the field holding base types, or NULL */
} rule;

#define DEF(t, k, h) {t, R_DEF, k, h, NULL}
#define DEFB(t, k, h, b) {t, R_DEF, k, h, b}
#define CALL(t, h) {t, R_CALL, 0, h, NULL}
#define IMPORT(t, h) {t, R_IMPORT, 0, h, NULL}
#define ROLE(t, r) {t, r, 0, 0, NULL}
#define INNER(t, h) {t, R_INNER, 0, h, NULL}

#if defined(CN_LANG_TYPESCRIPT) || defined(CN_LANG_TSX)
#define JS_FAMILY 1
#endif

#if defined(CN_LANG_CPP)
#define LANG_IDENT cpp
#define LANG_NAME "cpp"
#define LANG_GRAMMAR "tree-sitter-cpp-0.23.4"
#define LANG_TS_FN tree_sitter_cpp
#define LANG_DIRECTIVES 1
static const rule lang_rules[] = {
    DEF("class_specifier", CN_NODE_CLASS, NM_NAME_BODY),
    DEF("struct_specifier", CN_NODE_STRUCT, NM_NAME_BODY),
    DEF("union_specifier", CN_NODE_UNION, NM_NAME_BODY),
    DEF("enum_specifier", CN_NODE_ENUM, NM_NAME_BODY),
    DEF("namespace_definition", CN_NODE_MODULE, NM_NAME_BODY),
    DEF("function_definition", CN_NODE_FUNCTION, NM_CPP_FUNC),
    CALL("call_expression", CS_FUNCTION),
    IMPORT("preproc_include", IM_INCLUDE),
    ROLE("base_class_clause", R_BASES),
    ROLE("template_declaration", R_WRAP),
    ROLE("comment", R_COMMENT),
    ROLE("identifier", R_LEAF),
    ROLE("field_identifier", R_LEAF),
    ROLE("namespace_identifier", R_LEAF),
    ROLE("type_identifier", R_LEAF),
    ROLE("this", R_LEAF),
    INNER("qualified_identifier", IN_PLAIN),
    INNER("nested_namespace_specifier", IN_PLAIN),
    INNER("field_expression", IN_MEMBER),
    INNER("template_function", IN_PLAIN),
    INNER("template_type", IN_PLAIN),
    INNER("template_method", IN_PLAIN),
    ROLE("template_argument_list", R_TARGS),
};
#elif defined(CN_LANG_JAVASCRIPT) || defined(JS_FAMILY)
#if defined(CN_LANG_JAVASCRIPT)
#define LANG_IDENT javascript
#define LANG_NAME "javascript"
#define LANG_GRAMMAR "tree-sitter-javascript-0.23.1"
#define LANG_TS_FN tree_sitter_javascript
#elif defined(CN_LANG_TYPESCRIPT)
#define LANG_IDENT typescript
#define LANG_NAME "typescript"
#define LANG_GRAMMAR "tree-sitter-typescript-0.23.2"
#define LANG_TS_FN tree_sitter_typescript
#else
#define LANG_IDENT tsx
#define LANG_NAME "tsx"
#define LANG_GRAMMAR "tree-sitter-typescript-0.23.2"
#define LANG_TS_FN tree_sitter_tsx
#endif
static const rule lang_rules[] = {
    DEF("class_declaration", CN_NODE_CLASS, NM_NAME),
    DEF("class", CN_NODE_CLASS, NM_NAME),
    DEF("function_declaration", CN_NODE_FUNCTION, NM_NAME),
    DEF("generator_function_declaration", CN_NODE_FUNCTION, NM_NAME),
    DEF("method_definition", CN_NODE_FUNCTION, NM_NAME),
    DEF("variable_declarator", CN_NODE_FUNCTION, NM_VAR_FUNC),
    DEF("field_definition", CN_NODE_FUNCTION, NM_VAR_FUNC),
    DEF("assignment_expression", CN_NODE_FUNCTION, NM_JS_ASSIGN),
    DEF("pair", CN_NODE_FUNCTION, NM_JS_PAIR),
    ROLE("arrow_function", R_FUNCVAL),
    ROLE("function_expression", R_FUNCVAL),
    ROLE("generator_function", R_FUNCVAL),
    CALL("call_expression", CS_FUNCTION),
    CALL("new_expression", CS_NEW),
    IMPORT("import_statement", IM_JS),
    ROLE("class_heritage", R_BASES),
    ROLE("export_statement", R_WRAP),
    ROLE("lexical_declaration", R_WRAP),
    ROLE("variable_declaration", R_WRAP),
    ROLE("decorator", R_ATTR),
    ROLE("comment", R_COMMENT),
    ROLE("html_comment", R_COMMENT),
    ROLE("identifier", R_LEAF),
    ROLE("property_identifier", R_LEAF),
    ROLE("private_property_identifier", R_LEAF),
    ROLE("this", R_LEAF),
    ROLE("super", R_LEAF),
    ROLE("optional_chain", R_SEP),
    INNER("member_expression", IN_PLAIN),
#if defined(JS_FAMILY)
    DEF("abstract_class_declaration", CN_NODE_CLASS, NM_NAME),
    DEF("interface_declaration", CN_NODE_CLASS, NM_NAME),
    DEF("enum_declaration", CN_NODE_ENUM, NM_NAME),
    DEF("internal_module", CN_NODE_MODULE, NM_NAME_BODY),
    DEF("module", CN_NODE_MODULE, NM_NAME_BODY),
    DEF("public_field_definition", CN_NODE_FUNCTION, NM_VAR_FUNC),
    ROLE("extends_type_clause", R_BASES),
    ROLE("extends_clause", R_LIST),
    ROLE("implements_clause", R_LIST),
    ROLE("ambient_declaration", R_WRAP),
    ROLE("type_identifier", R_LEAF),
    INNER("nested_type_identifier", IN_PLAIN),
    INNER("nested_identifier", IN_PLAIN),
    INNER("generic_type", IN_PLAIN),
    ROLE("type_arguments", R_TARGS),
#endif
};
#elif defined(CN_LANG_GO)
#define LANG_IDENT go
#define LANG_NAME "go"
#define LANG_GRAMMAR "tree-sitter-go-0.23.4"
#define LANG_TS_FN tree_sitter_go
static const rule lang_rules[] = {
    DEF("function_declaration", CN_NODE_FUNCTION, NM_NAME),
    DEF("method_declaration", CN_NODE_METHOD, NM_GO_METHOD),
    DEF("type_spec", CN_NODE_STRUCT, NM_GO_TYPE),
    CALL("call_expression", CS_FUNCTION),
    IMPORT("import_spec", IM_GO),
    ROLE("comment", R_COMMENT),
    ROLE("identifier", R_LEAF),
    ROLE("field_identifier", R_LEAF),
    ROLE("package_identifier", R_LEAF),
    ROLE("type_identifier", R_LEAF),
    INNER("selector_expression", IN_MEMBER),
    INNER("qualified_type", IN_PLAIN),
    INNER("generic_type", IN_PLAIN),
    ROLE("type_arguments", R_TARGS),
};
#elif defined(CN_LANG_JAVA)
#define LANG_IDENT java
#define LANG_NAME "java"
#define LANG_GRAMMAR "tree-sitter-java-0.23.5"
#define LANG_TS_FN tree_sitter_java
static const rule lang_rules[] = {
    DEF("class_declaration", CN_NODE_CLASS, NM_NAME),
    DEF("interface_declaration", CN_NODE_CLASS, NM_NAME),
    DEF("enum_declaration", CN_NODE_ENUM, NM_NAME),
    DEF("record_declaration", CN_NODE_CLASS, NM_NAME),
    DEF("annotation_type_declaration", CN_NODE_CLASS, NM_NAME),
    DEF("method_declaration", CN_NODE_FUNCTION, NM_NAME_BODY),
    DEF("constructor_declaration", CN_NODE_FUNCTION, NM_NAME_BODY),
    DEF("compact_constructor_declaration", CN_NODE_FUNCTION, NM_NAME_BODY),
    CALL("method_invocation", CS_JAVA_INVOKE),
    CALL("object_creation_expression", CS_TYPE),
    IMPORT("import_declaration", IM_JAVA),
    ROLE("superclass", R_BASES),
    ROLE("super_interfaces", R_BASES),
    ROLE("extends_interfaces", R_BASES),
    ROLE("type_list", R_LIST),
    ROLE("line_comment", R_COMMENT),
    ROLE("block_comment", R_COMMENT),
    ROLE("identifier", R_LEAF),
    ROLE("type_identifier", R_LEAF),
    ROLE("this", R_LEAF),
    ROLE("super", R_LEAF),
    INNER("field_access", IN_PLAIN),
    INNER("scoped_identifier", IN_PLAIN),
    INNER("scoped_type_identifier", IN_PLAIN),
    INNER("generic_type", IN_PLAIN),
    ROLE("type_arguments", R_TARGS),
};
#elif defined(CN_LANG_RUST)
#define LANG_IDENT rust
#define LANG_NAME "rust"
#define LANG_GRAMMAR "tree-sitter-rust-0.23.3"
#define LANG_TS_FN tree_sitter_rust
static const rule lang_rules[] = {
    DEF("function_item", CN_NODE_FUNCTION, NM_NAME),
    DEF("struct_item", CN_NODE_STRUCT, NM_NAME),
    DEF("enum_item", CN_NODE_ENUM, NM_NAME),
    DEF("union_item", CN_NODE_UNION, NM_NAME),
    DEFB("trait_item", CN_NODE_CLASS, NM_NAME, "bounds"),
    DEFB("impl_item", CN_NODE_CLASS, NM_RUST_IMPL, "trait"),
    DEF("mod_item", CN_NODE_MODULE, NM_NAME_BODY),
    DEF("macro_definition", CN_NODE_MACRO, NM_NAME),
    CALL("call_expression", CS_FUNCTION),
    CALL("macro_invocation", CS_MACRO),
    IMPORT("use_declaration", IM_RUST),
    ROLE("trait_bounds", R_LIST),
    ROLE("attribute_item", R_ATTR),
    ROLE("line_comment", R_COMMENT),
    ROLE("block_comment", R_COMMENT),
    ROLE("identifier", R_LEAF),
    ROLE("field_identifier", R_LEAF),
    ROLE("type_identifier", R_LEAF),
    ROLE("self", R_LEAF),
    ROLE("crate", R_LEAF),
    ROLE("super", R_LEAF),
    INNER("scoped_identifier", IN_PLAIN),
    INNER("scoped_type_identifier", IN_PLAIN),
    INNER("field_expression", IN_MEMBER),
    INNER("generic_function", IN_UNWRAP),
    INNER("generic_type", IN_PLAIN),
    ROLE("type_arguments", R_TARGS),
};
#else
#error "define one of CN_LANG_CPP, CN_LANG_JAVASCRIPT, CN_LANG_TYPESCRIPT, CN_LANG_TSX, CN_LANG_GO, CN_LANG_JAVA, CN_LANG_RUST"
#endif

#ifndef LANG_DIRECTIVES
#define LANG_DIRECTIVES 0
#endif
/* What cn_ts_blank_deep_nesting() limits: brackets, and #if blocks too
 * where the language has a preprocessor. */
#if LANG_DIRECTIVES
#define LANG_BLANK (CN_TS_BLANK_BRACKETS | CN_TS_BLANK_DIRECTIVES)
#else
#define LANG_BLANK CN_TS_BLANK_BRACKETS
#endif

#define LANG_VERSION "0.1.0+" LANG_GRAMMAR
#define LANG_TAG "lang-" LANG_NAME
#define N_RULES (sizeof lang_rules / sizeof lang_rules[0])
#define NO_RULE 0xFFFFu

const TSLanguage *LANG_TS_FN(void);

/* ------------------------------------------------------------------ */
/* State                                                               */

typedef struct sbuf {
    char *p;
    size_t len, cap;
} sbuf;

enum { M_NORMAL = 0, M_BASES };

typedef struct frame {
    uint8_t role;
    uint8_t mode;
    uint16_t rule;
    TSFieldId bases;      /* R_DEF: field whose subtree holds base types */
    uint32_t attr_line;   /* first attribute line among the preceding
                             siblings not yet claimed (kept across them) */
} frame;

typedef struct context {
    uint32_t depth;
    int32_t index;
    bool is_class;
    size_t path_len; /* qualname length to restore */
} context;

typedef struct use_item {
    TSNode node;
    size_t prefix_off, prefix_len; /* into the arena */
} use_item;

typedef struct gen_state {
    const cn_host *host;
    TSParser *ts;       /* the long-lived parser, when a parse has no arena */
    cn_ts_arena *ts_arena; /* each parse's tree-sitter memory; NULL: none */
    uint8_t *sym_role;
    uint16_t *sym_rule;
    uint32_t sym_count;
    TSFieldId *rule_bases; /* per rule */
    TSFieldId f_name, f_body, f_declarator, f_value, f_property, f_function, f_constructor, f_object,
        f_type, f_field, f_macro, f_path, f_source, f_alias, f_list, f_argument, f_receiver, f_left, f_right, f_key;

    /* per parse */
    const char *src;
    size_t len;
    const cn_lang_sink *sink;
    cn_error *err;
    int rc;

    context *ctx;
    size_t nctx, capctx;
    frame *fr;
    size_t capfr;
    bool pending;        /* a wrapper opened `target` already */
    TSNode target;
    uint32_t pending_depth; /* the wrapper's depth */
    sbuf path;           /* qualname of the innermost node */
    sbuf name, seg, tmp, tmp2, arena;
    use_item *uses;
    size_t capuses;
} gen_state;

/* ------------------------------------------------------------------ */
/* Helpers                                                             */

static int set_error(gen_state *st, int code, const char *msg)
{
    if (st->rc == 0) st->rc = code;
    if (st->err != NULL) {
        if (st->host != NULL && st->host->error_set != NULL) {
            st->host->error_set(st->err, code, LANG_TAG ": %s", msg);
        } else {
            st->err->code = code;
            snprintf(st->err->message, sizeof st->err->message, LANG_TAG ": %s", msg);
        }
    }
    return code;
}

static int oom(gen_state *st) { return set_error(st, CN_ENOMEM, "out of memory"); }

static bool grow(void **buf, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap) return true;
    size_t ncap = *cap ? *cap : 16;
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

/* Appends n bytes and keeps the buffer NUL-terminated. */
static bool sb_put(sbuf *b, const char *s, size_t n)
{
    if (n > SIZE_MAX - b->len - 1) return false;
    if (!grow((void **)&b->p, &b->cap, b->len + n + 1, 1)) return false;
    if (n > 0) memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = '\0';
    return true;
}

static bool sb_puts(sbuf *b, const char *s) { return sb_put(b, s, strlen(s)); }

static bool sb_set(sbuf *b, const char *s, size_t n)
{
    b->len = 0;
    return sb_put(b, s, n);
}

static void sb_trunc(sbuf *b, size_t len)
{
    b->len = len;
    if (b->p != NULL) b->p[len] = '\0';
}

static int role_of(const gen_state *st, TSNode n)
{
    TSSymbol s = ts_node_symbol(n);
    if (s >= st->sym_count || !ts_node_is_named(n)) return R_NONE;
    return st->sym_role[s];
}

static const rule *rule_of(const gen_state *st, TSNode n)
{
    TSSymbol s = ts_node_symbol(n);
    if (s >= st->sym_count || st->sym_rule[s] == NO_RULE) return NULL;
    return &lang_rules[st->sym_rule[s]];
}

static bool type_is(TSNode n, const char *type)
{
    return !ts_node_is_null(n) && strcmp(ts_node_type(n), type) == 0;
}

static TSNode child_field(TSNode n, TSFieldId f)
{
    if (f == 0 || ts_node_is_null(n)) return (TSNode){0};
    return ts_node_child_by_field_id(n, f);
}

static bool usable(TSNode n)
{
    return !ts_node_is_null(n) && !ts_node_is_missing(n) && ts_node_end_byte(n) > ts_node_start_byte(n);
}

static const char *text_of(const gen_state *st, TSNode n, size_t *len)
{
    uint32_t a = ts_node_start_byte(n), b = ts_node_end_byte(n);
    if (a > st->len) a = (uint32_t)st->len;
    if (b > st->len) b = (uint32_t)st->len;
    if (b < a) b = a;
    *len = b - a;
    return st->src + a;
}

static uint32_t line_of(TSNode n) { return ts_node_start_point(n).row + 1; }

/* Line of the last character of n. */
static uint32_t end_line_of(TSNode n)
{
    TSPoint e = ts_node_end_point(n);
    if (e.column == 0 && ts_node_end_byte(n) > ts_node_start_byte(n) && e.row > 0) return e.row;
    return e.row + 1;
}

static bool is_word_char(unsigned char c)
{
    return c == '_' || c == '$' || (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') ||
           (c >= 'A' && c <= 'Z') || c >= 0x80;
}

/* Appends the text of n without whitespace (one space kept between two
 * words: "operator new"). */
static bool put_stripped(gen_state *st, TSNode n, sbuf *out)
{
    size_t len;
    const char *p = text_of(st, n, &len);
    bool gap = false;
    if (!grow((void **)&out->p, &out->cap, out->len + len + 1, 1)) return false;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)p[i];
        if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v' || c == '\0' ||
            (c == '\\' && i + 1 < len && (p[i + 1] == '\n' || p[i + 1] == '\r'))) {
            gap = true;
            continue;
        }
        if (gap && out->len > 0 && is_word_char((unsigned char)out->p[out->len - 1]) && is_word_char(c))
            out->p[out->len++] = ' ';
        gap = false;
        out->p[out->len++] = (char)c;
    }
    out->p[out->len] = '\0';
    return true;
}

/* Removes one pair of quotes around the last `from`..end of out. */
static void unquote(sbuf *out, size_t from)
{
    size_t n = out->len - from;
    char *p = out->p + from;
    if (n >= 2 && (p[0] == '"' || p[0] == '\'' || p[0] == '`') && p[n - 1] == p[0]) {
        memmove(p, p + 1, n - 2);
        sb_trunc(out, out->len - 2);
    }
}

/* Appends the name chain rooted at n ("a.b.c", "std::vector", "p->f"),
 * leaving type arguments out.  Returns 1, 0 when n is not a chain (out
 * unchanged), or a negative code. */
static int chain_text(gen_state *st, TSNode root, sbuf *out)
{
    size_t start = out->len;
    int r = role_of(st, root);
    bool last_sep = false, any = false, ok = true;
    size_t before_sep = start;
    uint32_t depth = 0;

    if (ts_node_is_null(root) || ts_node_is_missing(root) || (r != R_LEAF && r != R_INNER)) return 0;
    TSTreeCursor c = ts_tree_cursor_new(root);
    for (;;) {
        TSNode n = ts_tree_cursor_current_node(&c);
        bool descend = false;
        const char *sep = NULL;
        if (ts_node_is_missing(n)) {
            ok = false;
        } else if (ts_node_is_named(n)) {
            switch (role_of(st, n)) {
            case R_LEAF: {
                size_t len;
                const char *p = text_of(st, n, &len);
                if (len == 0) {
                    ok = false;
                } else if (!sb_put(out, p, len)) {
                    ts_tree_cursor_delete(&c);
                    sb_trunc(out, start);
                    return oom(st);
                }
                last_sep = false;
                any = true;
                break;
            }
            case R_INNER:
                descend = true;
                break;
            case R_TARGS:
            case R_COMMENT:
                break;
            case R_SEP:
                sep = ".";
                break;
            default:
                ok = false;
                break;
            }
        } else {
            const char *t = ts_node_type(n);
            if (strcmp(t, ".") == 0 || strcmp(t, "->") == 0 || strcmp(t, "::") == 0) sep = t;
            else if (strcmp(t, "?.") == 0) sep = ".";
            else ok = false;
        }
        if (!ok) break;
        if (sep != NULL && !last_sep) {
            before_sep = out->len;
            if (!sb_puts(out, sep)) {
                ts_tree_cursor_delete(&c);
                sb_trunc(out, start);
                return oom(st);
            }
            last_sep = true;
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
    if (!ok || !any) {
        sb_trunc(out, start);
        return 0;
    }
    /* a separator left before type arguments at the end ("f::<T>") */
    if (last_sep) sb_trunc(out, before_sep);
    return out->len > start ? 1 : 0;
}

/* Appends the name written at n: a chain when it is one, else its text
 * without whitespace or quotes.  Returns 1, 0 (nothing usable) or < 0. */
static int name_text(gen_state *st, TSNode n, sbuf *out)
{
    size_t start = out->len;
    if (!usable(n)) return 0;
    int rc = chain_text(st, n, out);
    if (rc != 0) return rc;
    if (!put_stripped(st, n, out)) return oom(st);
    unquote(out, start);
    return out->len > start ? 1 : 0;
}

/* ------------------------------------------------------------------ */
/* Contexts and emission                                               */

static context *ctx_top(gen_state *st) { return st->nctx ? &st->ctx[st->nctx - 1] : NULL; }

static int32_t current_from(gen_state *st)
{
    context *c = ctx_top(st);
    return c ? c->index : -1;
}

static void ctx_pop_to_depth(gen_state *st, uint32_t depth)
{
    while (st->nctx > 0 && st->ctx[st->nctx - 1].depth >= depth) {
        context *c = &st->ctx[--st->nctx];
        sb_trunc(&st->path, c->path_len);
    }
}

static int emit_ref(gen_state *st, int kind, const char *name, const char *target, TSNode at)
{
    cn_lang_ref r;
    TSPoint p = ts_node_start_point(at);
    if (st->rc < 0) return st->rc;
    if (name == NULL || name[0] == '\0') return 0;
    memset(&r, 0, sizeof r);
    r.struct_size = (uint32_t)sizeof r;
    r.kind = kind;
    r.from = current_from(st);
    r.name = name;
    r.target = target;
    r.line = p.row + 1;
    r.column = p.column;
    int rc = st->sink->ref(st->sink->data, &r);
    if (rc < 0) {
        st->rc = rc;
        if (st->err != NULL && st->err->code == 0) {
            st->err->code = rc;
            snprintf(st->err->message, sizeof st->err->message, LANG_TAG ": sink refused a reference");
        }
    }
    return st->rc;
}

static int emit_node(gen_state *st, int kind, const char *name, uint32_t start, uint32_t end,
                     uint32_t flags, int32_t *index)
{
    cn_lang_node n;
    if (st->rc < 0) return st->rc;
    memset(&n, 0, sizeof n);
    n.struct_size = (uint32_t)sizeof n;
    n.kind = kind;
    n.name = name;
    n.qualname = st->path.p;
    n.start_line = start;
    n.end_line = end < start ? start : end;
    n.parent = current_from(st);
    n.flags = flags;
    int rc = st->sink->node(st->sink->data, &n);
    if (rc < 0) {
        st->rc = rc;
        if (st->err != NULL && st->err->code == 0) {
            st->err->code = rc;
            snprintf(st->err->message, sizeof st->err->message, LANG_TAG ": sink refused a node");
        }
        return rc;
    }
    *index = rc;
    return 0;
}

/* ------------------------------------------------------------------ */
/* Definitions                                                         */

/* The C++ declarator chain of a function definition: the name and, in
 * st->seg, the qualified name as written ("Foo::bar"). */
static int cpp_function_name(gen_state *st, TSNode def)
{
    TSNode d = child_field(def, st->f_declarator);
    /* through pointer, reference, parenthesized and function declarators */
    while (!ts_node_is_null(d)) {
        const char *t = ts_node_type(d);
        if (strcmp(t, "function_declarator") == 0 || strcmp(t, "pointer_declarator") == 0 ||
            strcmp(t, "attributed_declarator") == 0) {
            d = child_field(d, st->f_declarator);
        } else if (strcmp(t, "reference_declarator") == 0 || strcmp(t, "parenthesized_declarator") == 0) {
            d = ts_node_named_child(d, 0);
        } else {
            break;
        }
    }
    if (!usable(d)) return 0;
    int rc = name_text(st, d, &st->seg);
    if (rc <= 0) return rc;
    /* the last component */
    while (type_is(d, "qualified_identifier")) {
        TSNode nm = child_field(d, st->f_name);
        if (ts_node_is_null(nm)) break;
        d = nm;
    }
    if (type_is(d, "template_function") || type_is(d, "template_method")) {
        TSNode nm = child_field(d, st->f_name);
        if (!ts_node_is_null(nm)) d = nm;
    }
    return name_text(st, d, &st->name);
}

static int string_contents(gen_state *st, TSNode s, sbuf *out);

static bool is_function_value(const gen_state *st, TSNode v)
{
    while (type_is(v, "parenthesized_expression")) v = ts_node_named_child(v, 0);
    return !ts_node_is_null(v) && role_of(st, v) == R_FUNCVAL;
}

/* What a JS value stored in a name defines: a function (CN_NODE_FUNCTION),
 * names for what it holds (KIND_PREFIX: an object literal), or nothing
 * (-1). */
static int js_value_kind(const gen_state *st, TSNode v)
{
    while (type_is(v, "parenthesized_expression")) v = ts_node_named_child(v, 0);
    if (ts_node_is_null(v)) return -1;
    if (role_of(st, v) == R_FUNCVAL) return CN_NODE_FUNCTION;
    if (type_is(v, "object")) return KIND_PREFIX;
    return -1;
}

/* Whether s[0, n) starts with the component `word` ("a" in "a" or "a.b"). */
static size_t leading_component(const char *s, size_t n, const char *word)
{
    size_t w = strlen(word);
    if (n < w || memcmp(s, word, w) != 0) return 0;
    if (n == w) return w;
    return s[w] == '.' ? w + 1 : 0;
}

/* `left = value` (see the top of the file): st->seg gets the name the
 * left side stores into, with module.exports/exports/this and every
 * `prototype` taken out, st->name its last component.  Returns 1, 0 (no
 * definition) or < 0. */
static int js_assign_name(gen_state *st, TSNode n, int *kind)
{
    TSNode left = child_field(n, st->f_left), value = child_field(n, st->f_right);
    int vk = js_value_kind(st, value), rc;
    sbuf *b = &st->tmp;
    size_t skip;

    if (vk < 0) return 0;
    sb_trunc(b, 0);
    rc = chain_text(st, left, b);
    if (rc <= 0) return rc;
    skip = leading_component(b->p, b->len, "module");
    if (skip > 0 && leading_component(b->p + skip, b->len - skip, "exports") > 0)
        skip += leading_component(b->p + skip, b->len - skip, "exports");
    else
        skip = leading_component(b->p, b->len, "exports");
    if (skip == 0) skip = leading_component(b->p, b->len, "this");
    /* the components left, without `prototype` */
    for (size_t i = skip; i < b->len;) {
        const char *dot = memchr(b->p + i, '.', b->len - i);
        size_t e = dot ? (size_t)(dot - b->p) : b->len;
        if (!(e - i == 9 && memcmp(b->p + i, "prototype", 9) == 0) && e > i) {
            if (st->seg.len > 0 && !sb_puts(&st->seg, ".")) return oom(st);
            if (!sb_put(&st->seg, b->p + i, e - i)) return oom(st);
        }
        i = e + 1;
    }
    if (st->seg.len == 0) {
        /* module.exports = function name() {}: the function's own name */
        while (type_is(value, "parenthesized_expression")) value = ts_node_named_child(value, 0);
        if (vk != CN_NODE_FUNCTION) return 0;
        rc = name_text(st, child_field(value, st->f_name), &st->seg);
        if (rc < 0) return rc;
        if (rc == 0) {
            /* module.exports = (req, res) => {...}: a module that is one
             * function (a route handler, a plugin); it has no name but
             * where it is stored, so that is its name */
            sb_trunc(&st->seg, 0);
            if (skip == 0 || !sb_puts(&st->seg, "module.exports")) return skip == 0 ? 0 : oom(st);
            if (!sb_puts(&st->name, "module.exports")) return oom(st);
            *kind = CN_NODE_FUNCTION;
            return 1;
        }
    }
    const char *last = strrchr(st->seg.p, '.');
    last = last ? last + 1 : st->seg.p;
    if (!sb_puts(&st->name, last)) return oom(st);
    /* stored in a property of an object: a method of that object */
    *kind = vk == KIND_PREFIX ? KIND_PREFIX : strchr(st->seg.p, '.') ? CN_NODE_METHOD : CN_NODE_FUNCTION;
    return 1;
}

/* `key: value` in an object literal: the key's name. */
static int js_pair_name(gen_state *st, TSNode n, int *kind)
{
    TSNode key = child_field(n, st->f_key);
    int vk = js_value_kind(st, child_field(n, st->f_value)), rc;
    if (vk < 0 || !usable(key)) return 0;
    if (role_of(st, key) == R_LEAF || type_is(key, "number")) rc = name_text(st, key, &st->name);
    else if (type_is(key, "string")) rc = string_contents(st, key, &st->name);
    else return 0; /* [computed]: no name known before it runs */
    if (rc <= 0) return rc;
    *kind = vk;
    return 1;
}

/* The receiver type's name of a Go method ("Server" in (s *Server)). */
static int go_receiver(gen_state *st, TSNode def, sbuf *out)
{
    TSNode recv = child_field(def, st->f_receiver);
    TSNode p = ts_node_is_null(recv) ? recv : ts_node_named_child(recv, 0);
    while (!ts_node_is_null(p) && !type_is(p, "parameter_declaration")) p = ts_node_next_named_sibling(p);
    TSNode t = child_field(p, st->f_type);
    while (!ts_node_is_null(t)) {
        if (type_is(t, "pointer_type") || type_is(t, "parenthesized_type")) {
            t = ts_node_named_child(t, 0);
        } else if (type_is(t, "generic_type")) {
            t = child_field(t, st->f_type);
        } else {
            break;
        }
    }
    if (!type_is(t, "type_identifier") || !usable(t)) return 0;
    return name_text(st, t, out);
}

/* The type a Rust impl block is for, without generics or references. */
static int rust_impl_name(gen_state *st, TSNode def)
{
    TSNode t = child_field(def, st->f_type), orig = t;
    while (!ts_node_is_null(t)) {
        if (type_is(t, "generic_type") || type_is(t, "reference_type") || type_is(t, "pointer_type")) {
            t = child_field(t, st->f_type);
        } else if (type_is(t, "scoped_type_identifier")) {
            t = child_field(t, st->f_name);
        } else {
            break;
        }
    }
    if (ts_node_is_null(t)) t = orig;
    if (!usable(t)) return 0;
    if (type_is(t, "type_identifier") || type_is(t, "primitive_type")) {
        size_t len;
        const char *p = text_of(st, t, &len);
        return sb_put(&st->name, p, len) ? 1 : oom(st);
    }
    return name_text(st, t, &st->name);
}

/* Finds the name of definition n: sets st->name (the short name),
 * st->seg (its qualname component) and *kind.  Returns 1, 0 when it has
 * none (no node), or a negative code. */
static int def_resolve(gen_state *st, TSNode n, const rule *ru, int *kind)
{
    int rc;
    sb_trunc(&st->name, 0);
    sb_trunc(&st->seg, 0);
    *kind = ru->kind;
    switch (ru->how) {
    case NM_NAME_BODY:
        if (ts_node_is_null(child_field(n, st->f_body))) return 0;
        /* fall through */
    case NM_NAME:
        rc = name_text(st, child_field(n, st->f_name), &st->name);
        break;
    case NM_CPP_FUNC:
        return cpp_function_name(st, n);
    case NM_VAR_FUNC: {
        TSNode nm = child_field(n, st->f_name);
        if (ts_node_is_null(nm)) nm = child_field(n, st->f_property);
        if (ts_node_is_null(nm) || role_of(st, nm) != R_LEAF) return 0;
        if (!is_function_value(st, child_field(n, st->f_value))) {
            /* `const api = { ... }` names the functions it holds */
            if (js_value_kind(st, child_field(n, st->f_value)) != KIND_PREFIX) return 0;
            *kind = KIND_PREFIX;
        }
        rc = name_text(st, nm, &st->name);
        break;
    }
    case NM_JS_ASSIGN:
        return js_assign_name(st, n, kind);
    case NM_JS_PAIR:
        rc = js_pair_name(st, n, kind);
        break;
    case NM_GO_METHOD:
        rc = name_text(st, child_field(n, st->f_name), &st->name);
        if (rc <= 0) return rc;
        rc = go_receiver(st, n, &st->seg);
        if (rc < 0) return rc;
        if (rc > 0 && !sb_puts(&st->seg, ".")) return oom(st);
        return sb_put(&st->seg, st->name.p, st->name.len) ? 1 : oom(st);
    case NM_GO_TYPE: {
        TSNode t = child_field(n, st->f_type);
        if (type_is(t, "struct_type")) *kind = CN_NODE_STRUCT;
        else if (type_is(t, "interface_type")) *kind = CN_NODE_CLASS;
        else return 0;
        rc = name_text(st, child_field(n, st->f_name), &st->name);
        break;
    }
    case NM_RUST_IMPL:
        rc = rust_impl_name(st, n);
        break;
    default:
        return 0;
    }
    if (rc <= 0) return rc;
    return sb_put(&st->seg, st->name.p, st->name.len) ? 1 : oom(st);
}

static bool is_class_kind(int kind)
{
    return kind == CN_NODE_CLASS || kind == CN_NODE_STRUCT || kind == CN_NODE_UNION || kind == CN_NODE_ENUM;
}

/* "static" and "async" written on a function (directly or in its
 * modifier list). */
static uint32_t function_flags(TSNode n)
{
    uint32_t flags = 0;
    uint32_t nc = ts_node_child_count(n);
    for (uint32_t i = 0; i < nc && i < 64; i++) {
        TSNode c = ts_node_child(n, i);
        const char *t = ts_node_type(c);
        if (!ts_node_is_named(c)) {
            if (strcmp(t, "static") == 0) flags |= CN_NODE_F_STATIC;
            else if (strcmp(t, "async") == 0) flags |= CN_NODE_F_ASYNC;
        } else if (strcmp(t, "modifiers") == 0 || strcmp(t, "storage_class_specifier") == 0 ||
                   strcmp(t, "function_modifiers") == 0) {
            uint32_t mc = ts_node_child_count(c);
            for (uint32_t j = 0; j < mc && j < 64; j++) {
                const char *mt = ts_node_type(ts_node_child(c, j));
                if (strcmp(mt, "static") == 0) flags |= CN_NODE_F_STATIC;
                else if (strcmp(mt, "async") == 0) flags |= CN_NODE_F_ASYNC;
            }
        }
    }
    return flags;
}

/* Emits the node for definition n whose lines start at start_line and
 * opens its context at depth.  Returns 1, 0 (no name) or < 0. */
static int open_definition(gen_state *st, TSNode n, const rule *ru, uint32_t depth, uint32_t start_line)
{
    int kind;
    int rc = def_resolve(st, n, ru, &kind);
    context *top = ctx_top(st);
    uint32_t flags = 0;
    if (rc <= 0) return rc;
    if (kind == CN_NODE_FUNCTION || kind == CN_NODE_METHOD) {
        if (kind == CN_NODE_FUNCTION && top != NULL && top->is_class) kind = CN_NODE_METHOD;
        flags = function_flags(n);
        if (ru->how == NM_VAR_FUNC || ru->how == NM_JS_ASSIGN || ru->how == NM_JS_PAIR) {
            TSNode v = child_field(n, ru->how == NM_JS_ASSIGN ? st->f_right : st->f_value);
            if (!ts_node_is_null(v)) flags |= function_flags(v) & CN_NODE_F_ASYNC;
        }
    }
    size_t saved = st->path.len;
    if ((saved > 0 && !sb_puts(&st->path, ".")) || !sb_put(&st->path, st->seg.p, st->seg.len)) {
        sb_trunc(&st->path, saved);
        return oom(st);
    }
    int32_t index = current_from(st);
    if (kind != KIND_PREFIX) {
        rc = emit_node(st, kind, st->name.p, start_line, end_line_of(n), flags, &index);
        if (rc < 0) {
            sb_trunc(&st->path, saved);
            return rc;
        }
    }
    if (!grow((void **)&st->ctx, &st->capctx, st->nctx + 1, sizeof *st->ctx)) {
        sb_trunc(&st->path, saved);
        return oom(st);
    }
    context *cx = &st->ctx[st->nctx++];
    cx->depth = depth;
    cx->index = index;
    /* the functions an object literal holds are its methods */
    cx->is_class = is_class_kind(kind) || kind == KIND_PREFIX;
    cx->path_len = saved;
    return 1;
}

/* The one definition a wrapper (chain) holds, or a null node. */
static TSNode wrap_target(gen_state *st, TSNode w)
{
    for (int guard = 0; guard < 64; guard++) {
        TSNode cand = {0};
        int count = 0;
        TSTreeCursor c = ts_tree_cursor_new(w);
        if (ts_tree_cursor_goto_first_child(&c)) {
            do {
                TSNode ch = ts_tree_cursor_current_node(&c);
                int r = role_of(st, ch);
                if (r == R_DEF || r == R_WRAP) {
                    count++;
                    cand = ch;
                }
            } while (count < 2 && ts_tree_cursor_goto_next_sibling(&c));
        }
        ts_tree_cursor_delete(&c);
        if (count != 1) return (TSNode){0};
        if (role_of(st, cand) == R_DEF) return cand;
        w = cand;
    }
    return (TSNode){0};
}

/* ------------------------------------------------------------------ */
/* Calls                                                               */

/* Callee names that are operators, not calls. */
static bool is_not_a_call(const char *name)
{
#if defined(CN_LANG_CPP)
    static const char *const casts[] = {"static_cast", "dynamic_cast", "reinterpret_cast", "const_cast"};
    for (size_t i = 0; i < sizeof casts / sizeof casts[0]; i++)
        if (strcmp(name, casts[i]) == 0) return true;
#endif
    (void)name;
    return false;
}

static int handle_call(gen_state *st, TSNode n, const rule *ru)
{
    sbuf *b = &st->tmp;
    TSNode callee = {0};
    int rc;
    sb_trunc(b, 0);
    switch (ru->how) {
    case CS_FUNCTION:
        callee = child_field(n, st->f_function);
        break;
    case CS_NEW:
        callee = child_field(n, st->f_constructor);
        break;
    case CS_TYPE:
        callee = child_field(n, st->f_type);
        break;
    case CS_MACRO:
        callee = child_field(n, st->f_macro);
        rc = chain_text(st, callee, b);
        if (rc <= 0) return rc;
        if (!sb_puts(b, "!")) return oom(st);
        return emit_ref(st, CN_REF_CALL, b->p, NULL, callee);
    case CS_JAVA_INVOKE: {
        TSNode obj = child_field(n, st->f_object), nm = child_field(n, st->f_name);
        if (!usable(nm) || role_of(st, nm) != R_LEAF) return 0;
        /* at the start of the receiver, like a member callee elsewhere */
        TSNode at = ts_node_is_null(obj) ? nm : n;
        if (!ts_node_is_null(obj)) {
            rc = chain_text(st, obj, b);
            if (rc < 0) return rc;
            if (rc > 0 && !sb_puts(b, ".")) return oom(st);
        }
        size_t len;
        const char *p = text_of(st, nm, &len);
        if (!sb_put(b, p, len)) return oom(st);
        return emit_ref(st, CN_REF_CALL, b->p, NULL, at);
    }
    default:
        return 0;
    }
    if (ts_node_is_null(callee)) return 0;
    rc = chain_text(st, callee, b);
    if (rc < 0) return rc;
    if (rc > 0) return is_not_a_call(b->p) ? 0 : emit_ref(st, CN_REF_CALL, b->p, NULL, callee);
    /* x.f() where x is no chain: ".f" */
    const rule *cr = rule_of(st, callee);
    if (cr != NULL && cr->role == R_INNER && cr->how == IN_UNWRAP) {
        TSNode inner = child_field(callee, st->f_function);
        if (!ts_node_is_null(inner)) {
            callee = inner;
            cr = rule_of(st, callee);
        }
    }
    if (cr != NULL && cr->role == R_INNER && cr->how == IN_MEMBER) {
        TSNode f = child_field(callee, st->f_field);
        if (usable(f) && role_of(st, f) == R_LEAF) {
            size_t len;
            const char *p = text_of(st, f, &len);
            if (!sb_set(b, ".", 1) || !sb_put(b, p, len)) return oom(st);
            return emit_ref(st, CN_REF_CALL, b->p, NULL, callee);
        }
    }
    return 0;
}

/* ------------------------------------------------------------------ */
/* Imports                                                             */

/* #include "x/y.h" (name and target x/y.h) or <vector> (name vector,
 * target <vector>). */
static int import_include(gen_state *st, TSNode n)
{
    TSNode path = child_field(n, st->f_path);
    size_t len;
    const char *t;
    if (!usable(path)) return 0;
    t = text_of(st, path, &len);
    if (len < 3) return 0;
    if (t[0] == '"' && t[len - 1] == '"') {
        if (!sb_set(&st->tmp, t + 1, len - 2)) return oom(st);
        return emit_ref(st, CN_REF_IMPORT, st->tmp.p, st->tmp.p, n);
    }
    if (t[0] == '<' && t[len - 1] == '>') {
        if (!sb_set(&st->tmp, t + 1, len - 2) || !sb_set(&st->tmp2, t, len)) return oom(st);
        return emit_ref(st, CN_REF_IMPORT, st->tmp.p, st->tmp2.p, n);
    }
    return 0;
}

/* A string literal's contents (quotes removed) into out. */
static int string_contents(gen_state *st, TSNode s, sbuf *out)
{
    size_t len;
    const char *t;
    sb_trunc(out, 0);
    if (!usable(s)) return 0;
    t = text_of(st, s, &len);
    if (len >= 2 && (t[0] == '"' || t[0] == '\'' || t[0] == '`') && t[len - 1] == t[0]) {
        t++;
        len -= 2;
    }
    if (len == 0) return 0;
    return sb_put(out, t, len) ? 1 : oom(st);
}

/* One JS binding: local name `local`, target module [+ "." + imported]. */
static int js_binding(gen_state *st, TSNode local, TSNode imported, TSNode at)
{
    sbuf *name = &st->tmp, *target = &st->tmp2;
    int rc;
    sb_trunc(name, 0);
    rc = name_text(st, local, name);
    if (rc <= 0) return rc;
    if (!sb_set(target, st->arena.p, st->arena.len)) return oom(st);
    if (!ts_node_is_null(imported)) {
        if (!sb_puts(target, ".")) return oom(st);
        rc = name_text(st, imported, target);
        if (rc <= 0) return rc;
    }
    return emit_ref(st, CN_REF_IMPORT, name->p, target->p, at);
}

static int import_js(gen_state *st, TSNode n)
{
    TSNode src = child_field(n, st->f_source);
    TSNode clause = {0};
    int rc = 0;
    for (uint32_t i = 0, nc = ts_node_named_child_count(n); i < nc; i++) {
        TSNode c = ts_node_named_child(n, i);
        if (type_is(c, "import_clause") || type_is(c, "import_require_clause")) {
            clause = c;
            break;
        }
    }
    if (type_is(clause, "import_require_clause")) src = child_field(clause, st->f_source);
    rc = string_contents(st, src, &st->arena); /* the module specifier */
    if (rc <= 0) return rc;
    if (ts_node_is_null(clause)) { /* import "./side-effect.js" */
        return emit_ref(st, CN_REF_IMPORT, st->arena.p, st->arena.p, src);
    }
    if (type_is(clause, "import_require_clause")) {
        TSNode id = ts_node_named_child(clause, 0);
        return type_is(id, "identifier") ? js_binding(st, id, (TSNode){0}, id) : 0;
    }
    TSTreeCursor c = ts_tree_cursor_new(clause);
    if (ts_tree_cursor_goto_first_child(&c)) {
        do {
            TSNode ch = ts_tree_cursor_current_node(&c);
            if (type_is(ch, "identifier")) { /* default import */
                rc = js_binding(st, ch, (TSNode){0}, ch);
            } else if (type_is(ch, "namespace_import")) {
                TSNode id = ts_node_named_child(ch, 0);
                if (type_is(id, "identifier")) rc = js_binding(st, id, (TSNode){0}, ch);
            } else if (type_is(ch, "named_imports")) {
                for (uint32_t i = 0, nc = ts_node_named_child_count(ch); i < nc && rc >= 0; i++) {
                    TSNode sp = ts_node_named_child(ch, i);
                    if (!type_is(sp, "import_specifier")) continue;
                    TSNode nm = child_field(sp, st->f_name), al = child_field(sp, st->f_alias);
                    if (ts_node_is_null(nm)) continue;
                    rc = js_binding(st, ts_node_is_null(al) ? nm : al, nm, sp);
                }
            }
        } while (rc >= 0 && ts_tree_cursor_goto_next_sibling(&c));
    }
    ts_tree_cursor_delete(&c);
    return rc;
}

/* Go: name = alias or the path's last element, target = the path. */
static int import_go(gen_state *st, TSNode n)
{
    TSNode alias = child_field(n, st->f_name);
    int rc = string_contents(st, child_field(n, st->f_path), &st->tmp2);
    if (rc <= 0) return rc;
    sb_trunc(&st->tmp, 0);
    if (usable(alias)) {
        rc = name_text(st, alias, &st->tmp);
        if (rc < 0) return rc;
    }
    if (st->tmp.len == 0) {
        const char *slash = strrchr(st->tmp2.p, '/');
        const char *last = slash ? slash + 1 : st->tmp2.p;
        if (!sb_puts(&st->tmp, last)) return oom(st);
    }
    return emit_ref(st, CN_REF_IMPORT, st->tmp.p, st->tmp2.p, n);
}

/* Java: name = the last component ("*" for on-demand imports), target =
 * the full dotted name. */
static int import_java(gen_state *st, TSNode n)
{
    TSNode path = {0};
    bool star = false;
    for (uint32_t i = 0, nc = ts_node_named_child_count(n); i < nc; i++) {
        TSNode c = ts_node_named_child(n, i);
        if (type_is(c, "scoped_identifier") || type_is(c, "identifier")) path = c;
        else if (type_is(c, "asterisk")) star = true;
    }
    sb_trunc(&st->tmp2, 0);
    int rc = chain_text(st, path, &st->tmp2);
    if (rc <= 0) return rc;
    if (star && !sb_puts(&st->tmp2, ".*")) return oom(st);
    const char *dot = strrchr(st->tmp2.p, '.');
    const char *last = dot ? dot + 1 : st->tmp2.p;
    if (!sb_set(&st->tmp, last, strlen(last))) return oom(st);
    return emit_ref(st, CN_REF_IMPORT, st->tmp.p, st->tmp2.p, path);
}

/* Rust: every path a use declaration brings in, through nested lists
 * (an explicit stack).  Prefixes live in st->arena. */
static int import_rust(gen_state *st, TSNode n)
{
    size_t nuse = 0;
    int rc = 0;
    TSNode arg = child_field(n, st->f_argument);
    if (ts_node_is_null(arg)) return 0;
    sb_trunc(&st->arena, 0);
    if (!grow((void **)&st->uses, &st->capuses, 1, sizeof *st->uses)) return oom(st);
    st->uses[nuse++] = (use_item){arg, 0, 0};
    while (nuse > 0 && rc >= 0) {
        use_item it = st->uses[--nuse];
        TSNode x = it.node;
        sbuf *full = &st->tmp2, *name = &st->tmp;
        if (!sb_set(full, st->arena.p + it.prefix_off, it.prefix_len)) return oom(st);
        if (type_is(x, "use_list")) {
            uint32_t nc = ts_node_named_child_count(x);
            if (!grow((void **)&st->uses, &st->capuses, nuse + nc, sizeof *st->uses)) return oom(st);
            for (uint32_t i = nc; i > 0; i--) { /* reversed: popped in source order */
                TSNode c = ts_node_named_child(x, i - 1);
                if (role_of(st, c) == R_COMMENT) continue;
                st->uses[nuse++] = (use_item){c, it.prefix_off, it.prefix_len};
            }
            continue;
        }
        if (type_is(x, "scoped_use_list")) {
            TSNode p = child_field(x, st->f_path), l = child_field(x, st->f_list);
            if (ts_node_is_null(l)) continue;
            if (!ts_node_is_null(p)) {
                if (full->len > 0 && !sb_puts(full, "::")) return oom(st);
                rc = chain_text(st, p, full);
                if (rc <= 0) {
                    if (rc < 0) return rc;
                    continue;
                }
            }
            size_t off = st->arena.len;
            if (!sb_put(&st->arena, full->p, full->len)) return oom(st);
            if (!grow((void **)&st->uses, &st->capuses, nuse + 1, sizeof *st->uses)) return oom(st);
            st->uses[nuse++] = (use_item){l, off, full->len};
            continue;
        }
        TSNode path = x, alias = {0};
        bool wildcard = false;
        if (type_is(x, "use_as_clause")) {
            path = child_field(x, st->f_path);
            alias = child_field(x, st->f_alias);
        } else if (type_is(x, "use_wildcard")) {
            wildcard = true;
            path = ts_node_named_child(x, 0);
            if (!ts_node_is_null(path) && role_of(st, path) == R_COMMENT) path = (TSNode){0};
        }
        bool self_only = type_is(path, "self") && full->len > 0;
        if (!ts_node_is_null(path) && !self_only) {
            size_t before = full->len;
            if (full->len > 0 && !sb_puts(full, "::")) return oom(st);
            rc = chain_text(st, path, full);
            if (rc < 0) return rc;
            if (rc == 0) {
                sb_trunc(full, before);
                if (!wildcard) continue;
            }
        }
        if (wildcard && !sb_puts(full, full->len > 0 ? "::*" : "*")) return oom(st);
        if (full->len == 0) continue;
        sb_trunc(name, 0);
        if (usable(alias)) {
            rc = name_text(st, alias, name);
            if (rc < 0) return rc;
        }
        if (name->len == 0) {
            const char *last = full->p;
            for (const char *q = full->p; (q = strstr(q, "::")) != NULL; q += 2) last = q + 2;
            if (!sb_puts(name, last)) return oom(st);
        }
        rc = emit_ref(st, CN_REF_IMPORT, name->p, full->p, x);
    }
    return rc;
}

static int handle_import(gen_state *st, TSNode n, const rule *ru)
{
    switch (ru->how) {
    case IM_INCLUDE:
        return import_include(st, n);
    case IM_JS:
        return import_js(st, n);
    case IM_GO:
        return import_go(st, n);
    case IM_JAVA:
        return import_java(st, n);
    case IM_RUST:
        return import_rust(st, n);
    default:
        return 0;
    }
}

/* ------------------------------------------------------------------ */
/* The walk                                                            */

enum { ACT_SKIP = 0, ACT_DESCEND = 1 };

/* Handles one named node; returns ACT_* or a negative code. */
static int visit(gen_state *st, TSNode n, frame *fr, uint32_t depth, uint32_t attr_line)
{
    const rule *ru = fr->rule == NO_RULE ? NULL : &lang_rules[fr->rule];
    int rc;

    if (fr->mode == M_BASES) {
        switch (fr->role) {
        case R_LEAF:
        case R_INNER:
            sb_trunc(&st->tmp, 0);
            rc = chain_text(st, n, &st->tmp);
            if (rc < 0) return rc;
            if (rc > 0) {
                rc = emit_ref(st, CN_REF_INHERIT, st->tmp.p, NULL, n);
                return rc < 0 ? rc : ACT_SKIP;
            }
            break;
        case R_LIST:
        case R_BASES:
            return ACT_DESCEND;
        case R_COMMENT:
            return ACT_SKIP;
        default:
            break;
        }
        fr->mode = M_NORMAL;
    }
    switch (fr->role) {
    case R_COMMENT:
        return ACT_SKIP;
    case R_IMPORT:
        rc = handle_import(st, n, ru);
        return rc < 0 ? rc : ACT_SKIP;
    case R_CALL:
        rc = handle_call(st, n, ru);
        return rc < 0 ? rc : ACT_DESCEND;
    case R_BASES:
        fr->mode = M_BASES;
        return ACT_DESCEND;
    case R_WRAP:
        if (!st->pending) {
            TSNode t = wrap_target(st, n);
            if (!ts_node_is_null(t)) {
                uint32_t start = attr_line && attr_line < line_of(n) ? attr_line : line_of(n);
                rc = open_definition(st, t, rule_of(st, t), depth, start);
                if (rc < 0) return rc;
                if (rc > 0) {
                    st->pending = true;
                    st->target = t;
                    st->pending_depth = depth;
                }
            }
        }
        return ACT_DESCEND;
    case R_DEF:
        if (st->pending && ts_node_eq(n, st->target)) {
            st->pending = false;
        } else {
            uint32_t start = attr_line && attr_line < line_of(n) ? attr_line : line_of(n);
            rc = open_definition(st, n, ru, depth, start);
            if (rc < 0) return rc;
        }
        fr->bases = ru->bases != NULL ? st->rule_bases[fr->rule] : 0;
        return ACT_DESCEND;
    default:
        return ACT_DESCEND;
    }
}

static int walk(gen_state *st, TSNode root)
{
    TSTreeCursor c = ts_tree_cursor_new(root);
    uint32_t depth = 0;
    int rc = 0;

    if (!grow((void **)&st->fr, &st->capfr, 1, sizeof *st->fr)) {
        ts_tree_cursor_delete(&c);
        return oom(st);
    }
    st->fr[0].attr_line = 0;
    for (;;) {
        TSNode n = ts_tree_cursor_current_node(&c);
        frame *fr = &st->fr[depth];
        const frame *pf = depth > 0 ? &st->fr[depth - 1] : NULL;
        int act = ACT_SKIP;

        ctx_pop_to_depth(st, depth);
        if (st->pending && depth <= st->pending_depth) st->pending = false; /* left the wrapper */
        if (ts_node_is_named(n)) {
            TSSymbol s = ts_node_symbol(n);
            uint32_t attr = 0;
            fr->role = (uint8_t)role_of(st, n);
            fr->rule = s < st->sym_count ? st->sym_rule[s] : (uint16_t)NO_RULE;
            fr->bases = 0;
            fr->mode = M_NORMAL;
            if (pf != NULL) {
                TSFieldId fid = ts_tree_cursor_current_field_id(&c);
                if (pf->mode == M_BASES || (pf->bases != 0 && fid == pf->bases)) fr->mode = M_BASES;
            }
            if (fr->role == R_ATTR) {
                if (fr->attr_line == 0) fr->attr_line = line_of(n);
            } else if (fr->role != R_COMMENT) {
                attr = fr->attr_line;
                fr->attr_line = 0;
            }
            act = visit(st, n, fr, depth, attr);
            if (act < 0) {
                rc = act;
                break;
            }
            if (st->rc < 0) {
                rc = st->rc;
                break;
            }
        }
        if (act == ACT_DESCEND && ts_node_child_count(n) > 0) {
            if (!grow((void **)&st->fr, &st->capfr, (size_t)depth + 2, sizeof *st->fr)) {
                rc = oom(st);
                break;
            }
            if (ts_tree_cursor_goto_first_child(&c)) {
                depth++;
                st->fr[depth].attr_line = 0;
                continue;
            }
        }
        while (depth > 0 && !ts_tree_cursor_goto_next_sibling(&c)) {
            ts_tree_cursor_goto_parent(&c);
            depth--;
        }
        if (depth == 0) break;
    }
    ts_tree_cursor_delete(&c);
    ctx_pop_to_depth(st, 0);
    return rc;
}

/* ------------------------------------------------------------------ */
/* The parser                                                          */

static int gen_parse(cn_lang_parser *self, const char *path, const char *src, size_t len,
                     const cn_lang_sink *sink, cn_error *err)
{
    gen_state *st = self ? self->data : NULL;
    TSParser *ts;
    TSTree *tree;
    char *safe;
    bool failed;
    cn_ts_guard_result guard;
    int rc;

    if (st == NULL || sink == NULL || sink->node == NULL || sink->ref == NULL || (src == NULL && len > 0)) {
        if (err != NULL) {
            err->code = CN_EINVAL;
            snprintf(err->message, sizeof err->message, LANG_TAG ": parse: invalid arguments");
        }
        return CN_EINVAL;
    }
    st->err = err;
    st->rc = 0;
    if (len > UINT32_MAX - 1) return set_error(st, CN_EINVAL, "file too large for tree-sitter (4 GiB)");
    if (src == NULL) src = "";
    safe = cn_ts_blank_deep_nesting(src, len, LANG_BLANK, CN_TS_MAX_NESTING, &failed);
    if (failed) return oom(st);
#if defined(CN_LANG_CPP)
    /* a header split by #if branches: one header, so one definition */
    if (!cn_pp_join_split_headers(safe ? safe : src, len, &safe)) {
        free(safe);
        return oom(st);
    }
#endif
    st->src = safe ? safe : src;
    st->len = len;
    st->sink = sink;
    st->nctx = 0;
    st->pending = false;
    if (!sb_set(&st->path, "", 0)) {
        free(safe);
        return oom(st);
    }

    ts = cn_ts_arena_parser(st->ts_arena, st->ts, LANG_TS_FN());
    tree = cn_ts_parse_guarded(ts, st->src, (uint32_t)len, NULL, &guard);
    if (tree == NULL) {
        char why[256];
        cn_ts_arena_done(st->ts_arena, ts, NULL);
        free(safe);
        return set_error(st, CN_EPARSE, cn_ts_no_tree_reason(&guard, why, sizeof why));
    }
    if (guard.cut && st->host != NULL && st->host->log != NULL)
        st->host->log(st->host, CN_LOG_WARNING,
                      LANG_TAG ": %s: too broken to parse past %u:%u; rest skipped",
                      path ? path : "(input)", (unsigned)guard.cut_row + 1,
                      (unsigned)guard.cut_col + 1);
    rc = walk(st, ts_tree_root_node(tree));
    st->nctx = 0;
    cn_ts_arena_done(st->ts_arena, ts, tree);
    free(safe);
    st->src = NULL;
    st->sink = NULL;
    st->err = NULL;
    if (rc < 0) return rc;
    return st->rc < 0 ? st->rc : 0;
}

static void state_free(gen_state *st)
{
    if (st == NULL) return;
    if (st->ts) ts_parser_delete(st->ts);
    cn_ts_arena_free(st->ts_arena);
    free(st->sym_role);
    free(st->sym_rule);
    free(st->rule_bases);
    free(st->ctx);
    free(st->fr);
    free(st->path.p);
    free(st->name.p);
    free(st->seg.p);
    free(st->tmp.p);
    free(st->tmp2.p);
    free(st->arena.p);
    free(st->uses);
    free(st);
}

static void gen_destroy(cn_lang_parser *self)
{
    if (self == NULL) return;
    state_free(self->data);
    free(self);
}

static TSFieldId field(const TSLanguage *lang, const char *name)
{
    return ts_language_field_id_for_name(lang, name, (uint32_t)strlen(name));
}

static int gen_create(const cn_host *host, cn_lang_parser **out, cn_error *err)
{
    const TSLanguage *lang = LANG_TS_FN();
    cn_lang_parser *p;
    gen_state *st;

    if (out == NULL) return CN_EINVAL;
    *out = NULL;
    p = calloc(1, sizeof *p);
    st = calloc(1, sizeof *st);
    if (p == NULL || st == NULL) goto nomem;
    st->host = host;
    st->sym_count = ts_language_symbol_count(lang);
    st->sym_role = calloc(st->sym_count ? st->sym_count : 1, sizeof *st->sym_role);
    st->sym_rule = malloc((st->sym_count ? st->sym_count : 1) * sizeof *st->sym_rule);
    st->rule_bases = calloc(N_RULES, sizeof *st->rule_bases);
    if (st->sym_role == NULL || st->sym_rule == NULL || st->rule_bases == NULL) goto nomem;
    for (uint32_t s = 0; s < st->sym_count; s++) {
        const char *name = ts_language_symbol_name(lang, (TSSymbol)s);
        st->sym_rule[s] = (uint16_t)NO_RULE;
        if (name == NULL || ts_language_symbol_type(lang, (TSSymbol)s) != TSSymbolTypeRegular) continue;
        for (size_t r = 0; r < N_RULES; r++) {
            if (strcmp(lang_rules[r].type, name) == 0) {
                st->sym_role[s] = lang_rules[r].role;
                st->sym_rule[s] = (uint16_t)r;
                break;
            }
        }
    }
    for (size_t r = 0; r < N_RULES; r++)
        if (lang_rules[r].bases != NULL) st->rule_bases[r] = field(lang, lang_rules[r].bases);
    st->f_name = field(lang, "name");
    st->f_body = field(lang, "body");
    st->f_declarator = field(lang, "declarator");
    st->f_value = field(lang, "value");
    st->f_property = field(lang, "property");
    st->f_function = field(lang, "function");
    st->f_constructor = field(lang, "constructor");
    st->f_object = field(lang, "object");
    st->f_type = field(lang, "type");
    st->f_field = field(lang, "field");
    st->f_macro = field(lang, "macro");
    st->f_path = field(lang, "path");
    st->f_source = field(lang, "source");
    st->f_alias = field(lang, "alias");
    st->f_list = field(lang, "list");
    st->f_argument = field(lang, "argument");
    st->f_receiver = field(lang, "receiver");
    st->f_left = field(lang, "left");
    st->f_right = field(lang, "right");
    st->f_key = field(lang, "key");
    st->ts = ts_parser_new();
    if (st->ts == NULL) goto nomem;
    if (!ts_parser_set_language(st->ts, lang)) {
        state_free(st);
        free(p);
        if (err != NULL) {
            err->code = CN_EABI;
            snprintf(err->message, sizeof err->message,
                     LANG_TAG ": the tree-sitter library does not accept grammar ABI %u",
                     ts_language_version(lang));
        }
        return CN_EABI;
    }
    st->ts_arena = cn_ts_arena_new(); /* none: every parse uses st->ts */
    p->struct_size = (uint32_t)sizeof *p;
    p->data = st;
    p->parse = gen_parse;
    p->destroy = gen_destroy;
    *out = p;
    return 0;

nomem:
    state_free(st);
    free(p);
    if (err != NULL) {
        err->code = CN_ENOMEM;
        snprintf(err->message, sizeof err->message, LANG_TAG ": out of memory");
    }
    return CN_ENOMEM;
}

/* CN_LANG_DEFINE pastes its first argument: expand LANG_IDENT first. */
#define GEN_LANG_DEFINE(ident, name, version, create) CN_LANG_DEFINE(ident, name, version, create)
GEN_LANG_DEFINE(LANG_IDENT, LANG_NAME, LANG_VERSION, gen_create);
