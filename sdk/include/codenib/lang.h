/* SPDX-License-Identifier: Apache-2.0 */
/* codenib SDK: language backends.
 *
 * A language backend turns the source of one file into the nodes (classes,
 * functions, ...) and references (calls, imports, base classes, ...) that
 * the repository compiler indexes.  It is a plugin like a skill: a package
 * directory with plugin.yaml and a shared object exporting one constant
 * descriptor, "cn_lang_descriptor_" followed by the language name with
 * every character other than [A-Za-z0-9_] replaced by '_'.
 *
 * The compiler calls a parser from several threads at once, but each
 * thread creates its own parser with create(): a parser is used by one
 * thread at a time. */
#ifndef CODENIB_LANG_H
#define CODENIB_LANG_H

#include <stddef.h>
#include <stdint.h>

#include <codenib/errors.h>
#include <codenib/host.h>
#include <codenib/version.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CN_LANG_SYMBOL_PREFIX "cn_lang_descriptor_"

/* Node kinds.  Values are stored in indexes: never renumber, only append. */
typedef enum cn_node_kind {
    CN_NODE_FILE = 0,       /* emitted by the compiler, never by a backend */
    CN_NODE_CLASS = 1,      /* class, interface, trait, impl block */
    CN_NODE_FUNCTION = 2,   /* free function (C: a definition with a body) */
    CN_NODE_METHOD = 3,     /* function defined in a class */
    CN_NODE_BLOCK = 4,      /* module-level statements between definitions */
    CN_NODE_STRUCT = 5,
    CN_NODE_UNION = 6,
    CN_NODE_ENUM = 7,
    CN_NODE_TYPEDEF = 8,
    CN_NODE_MACRO = 9,
    CN_NODE_PROTOTYPE = 10, /* a function declared without a body */
    CN_NODE_VARIABLE = 11,  /* module-level assignment or global */
    CN_NODE_MODULE = 12     /* namespace, Go package block, Rust mod */
} cn_node_kind;

/* cn_lang_node.flags */
#define CN_NODE_F_ASYNC 0x01u
#define CN_NODE_F_DECORATED 0x02u
#define CN_NODE_F_PROPERTY 0x04u    /* @property and its setters */
#define CN_NODE_F_STATIC 0x08u      /* static function (C), staticmethod */
#define CN_NODE_F_CLASSMETHOD 0x10u
#define CN_NODE_F_TEST 0x20u        /* a test function/class by convention */

typedef struct cn_lang_node {
    uint32_t struct_size;
    int kind;                 /* cn_node_kind */
    const char *name;         /* short name: "method" */
    const char *qualname;     /* within the file: "Class.method" */
    uint32_t start_line;      /* 1-based, inclusive; decorators included */
    uint32_t end_line;        /* 1-based, inclusive */
    int32_t parent;           /* index returned for an earlier node of this
                                 file, or -1 for the file itself */
    uint32_t flags;           /* CN_NODE_F_* */
} cn_lang_node;

/* Reference kinds (edges from a node to a name).  Stored: only append. */
typedef enum cn_ref_kind {
    CN_REF_CALL = 1,          /* foo(), obj.meth(), pkg.fn() */
    CN_REF_REFERENCE = 2,     /* a name used without a call */
    CN_REF_IMPORT = 3,        /* import / #include / use */
    CN_REF_INHERIT = 4        /* a base class */
} cn_ref_kind;

typedef struct cn_lang_ref {
    uint32_t struct_size;
    int kind;                 /* cn_ref_kind */
    int32_t from;             /* node index returned by sink->node, or -1
                                 for module-level code */
    const char *name;         /* as written: "foo", "self.bar", "os.path.join";
                                 for an import, the local name it binds
                                 ("z" in "from x import y as z"; "x.y" in
                                 "import x.y"; the header path for #include) */
    const char *target;       /* imports: the imported thing, dotted
                                 ("x.y" for "from x import y"; "x" for
                                 "import x"; with leading dots for relative
                                 imports); NULL otherwise */
    uint32_t line;            /* 1-based line of the use site */
    uint32_t column;          /* 0-based byte column of the use site */
} cn_lang_ref;

/* Where a backend sends what it finds: the nodes in source order, and the
 * references in source order, a reference after the node it is `from`
 * (how the two interleave is up to the backend: the Python one sends a
 * top-level statement's references after its nodes).  node() returns the
 * index of the new node (>= 0), to be used as `parent` and `from`, or a
 * negative code to stop (the parse then fails with that code). */
typedef struct cn_lang_sink {
    uint32_t struct_size;
    void *data;
    int (*node)(void *data, const cn_lang_node *node);
    int (*ref)(void *data, const cn_lang_ref *ref);
} cn_lang_sink;

typedef struct cn_lang_parser cn_lang_parser;

struct cn_lang_parser {
    uint32_t struct_size;
    void *data;
    /* Parses one file.  `path` is repository-relative (for module names:
     * "pkg/mod.py" is module "pkg.mod"); `src` holds `len` bytes, not
     * necessarily NUL-terminated.  Syntax errors are not failures: a
     * backend emits what it can recognise. */
    int (*parse)(cn_lang_parser *self, const char *path, const char *src, size_t len,
                 const cn_lang_sink *sink, cn_error *err);
    void (*destroy)(cn_lang_parser *self);
};

typedef struct cn_lang_descriptor {
    uint16_t abi_major;
    uint16_t abi_minor;
    uint32_t struct_size;
    const char *name;         /* "python" */
    const char *version;      /* changes whenever output may change */
    int (*create)(const cn_host *host, cn_lang_parser **out, cn_error *err);
} cn_lang_descriptor;

/* Declares a language backend's descriptor (see CN_SKILL_DEFINE). */
#define CN_LANG_DEFINE(ident, name, version, create_fn)                       \
    extern CN_LANG_EXPORT const cn_lang_descriptor                           \
        cn_lang_descriptor_##ident;                                           \
    const cn_lang_descriptor cn_lang_descriptor_##ident = {                   \
        CN_ABI_MAJOR, CN_ABI_MINOR, (uint32_t)sizeof(cn_lang_descriptor),     \
        (name), (version), (create_fn)}

#if defined(__GNUC__)
#define CN_LANG_EXPORT __attribute__((visibility("default")))
#else
#define CN_LANG_EXPORT
#endif

#ifdef __cplusplus
}
#endif

#endif /* CODENIB_LANG_H */
