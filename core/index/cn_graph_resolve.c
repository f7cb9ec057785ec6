/* SPDX-License-Identifier: Apache-2.0 */
/* Name resolution for the symbol graph (cn_graph.h): turns every reference
 * a backend emitted into edges between node ids.
 *
 * CONTAINS: parent -> child for every node (a file node -> its top-level
 * nodes).
 *
 * Python (language "python"), import-aware:
 *   - A file's module name is its path without ".py"/".pyi", '/' -> '.';
 *     "pkg/__init__.py" is "pkg".  A directory's own dots are kept
 *     (".conan/build.py" is ".conan.build"), so relative imports between
 *     files of a dotted directory resolve.  Modules are looked up exactly, then (for
 *     absolute names only) by a unique suffix at a dot boundary ("mylib.x"
 *     finds "src/mylib/x.py"); a .py file wins over a .pyi of the same
 *     module.
 *   - Scope of a file: its top-level definitions (children of the file
 *     node), its import bindings (IMPORT refs: name = local name, target =
 *     dotted target, leading dots relative to the file's package) and its
 *     star imports ("x.*": the public names of module x, i.e. what a
 *     lookup inside x finds for a name not starting with '_').  An
 *     import inside a function binds in that function only (visible to it
 *     and to functions nested in it); elsewhere it binds at file level.
 *   - A CALL/REFERENCE "a.b.c" from node S: the head "a" is looked up in
 *     S's enclosing functions innermost first (their nested definitions,
 *     then their local imports; a class body also sees its own members when
 *     the use is in the class body itself), then the file's top-level
 *     definitions, then the file-level imports (the longest bound dotted
 *     prefix: "import pkg.util" binds "pkg.util" and also "pkg"), then star
 *     imports.  The rest is resolved inside what the head names: inside a
 *     module its top-level symbol (a definition, else what that module
 *     imports under that name, i.e. re-exports are followed, else its
 *     submodule, else its star imports); inside a class its member
 *     (own, then the bases depth-first, up to 8 levels).  Anything that
 *     names a function's attribute or an unknown object stays unresolved.
 *   - "self.m" / "cls.m" inside a method of class C (or inside a function
 *     nested in one): C's member m, else the bases' (INHERIT refs of C,
 *     resolved in the scope enclosing C, depth-first, up to depth 8, each
 *     class visited once).  Longer chains ("self.user.save") stay
 *     unresolved.
 *   - An import target "pkg.mod.y": the top-level symbol y of module
 *     pkg.mod (or its submodule y), else module pkg.mod.y itself, else the
 *     longest module prefix and the rest inside it.  IMPORT refs give an
 *     IMPORTS edge from the node holding the statement (the file node when
 *     from is -1) to that node; "x.*" links to module x's file node.
 *   - INHERIT refs give an INHERITS edge from the class to what the base's
 *     name resolves to in the scope enclosing the class.
 *   - Each import binding's target is resolved once and cached; a binding
 *     met again while it is being resolved (modules importing a name from
 *     each other) is unresolved.  A target naming a namespace package
 *     (modules below it, no __init__.py) resolves "target.rest" as a whole.
 *   - When several top-level definitions share a name, the first (lowest
 *     id) is taken.  Names starting with '.' (calls on call results) and
 *     names not found anywhere (builtins, external modules, unknown
 *     receivers) give an unresolved edge keeping the written name.
 *
 * C (language "c"), by scope:
 *   - #include "x/y.h": the file at x/y.h relative to the including file's
 *     directory ("." and ".." folded), else the one file whose path is
 *     "x/y.h" or ends with "/x/y.h"; <system> headers stay unresolved.
 *   - A CALL/REFERENCE N ("ops->read", "s.fn": unresolved by name): the
 *     file's own static FUNCTION/VARIABLE N; else the file's own
 *     definition of N (not a prototype) by kind rank: FUNCTION, MACRO,
 *     VARIABLE, TYPEDEF, STRUCT/UNION/ENUM; else the repository's C
 *     definitions of N of the best rank present (PROTOTYPE last).  Static
 *     definitions of other files are candidates only in headers this file
 *     includes directly (static inline functions).  Among several
 *     candidates of that rank: those in this file, else those in a file
 *     this file includes or in a .c file with the basename of a header it
 *     includes; when that leaves none, all candidates.  Every remaining
 *     candidate is linked (one edge each) when there are at most 4; more
 *     than 4 give one unresolved edge (too ambiguous to be useful).
 *
 * Other languages: a name is looked up in its own file (the first node
 * with that short name), else a unique node with that name among the
 * files of the same language, else unresolved.  An import links to the
 * file whose path equals its target, else stays unresolved.
 *
 * The written name of an IMPORTS edge is the import's target ("json",
 * ".models.User", "list.h", "<stdio.h>").  Every structure here is either
 * sorted with a total order or walked in record order, so the edges depend
 * only on the records. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <codenib/lang.h>

#include "cn_graph.h"

#define NONE UINT32_MAX
#define MAX_DEPTH 24      /* nested lookups within one binding's resolution */
#define MAX_BIND_NEST 16  /* bindings being resolved at once (C stack bound) */
#define MAX_BASE_DEPTH 8  /* inheritance levels searched for a member */
#define MAX_LINKS 4       /* C: candidates linked for one ambiguous name */
#define NAME_MAX_LEN 512  /* longer dotted names are not resolved */

enum { LANG_OTHER = 0, LANG_PY, LANG_C };

typedef struct gnode {
    const char *name;
    uint32_t nid;       /* the name's id in ctx.names */
    uint32_t parent;    /* node id, NONE for a file node */
    uint32_t file;      /* index in ctx.files */
    uint32_t flags;
    uint8_t kind;
} gnode;

typedef struct gfile {
    const cn_file_rec *rec;
    const char *path;
    uint32_t node;       /* the file node */
    int lang;
    char *module;        /* Python module name (malloc'd), else NULL */
    bool is_pkg;         /* __init__.py(i) */
    bool pyi;
    uint32_t bind_lo, bind_hi;   /* Python import bindings in ctx.binds */
    uint32_t star_lo, star_hi;   /* Python star imports in ctx.stars */
} gfile;

typedef struct bind {
    const char *name;    /* local name ("u", "os.path") */
    uint32_t nid;        /* its id in ctx.names */
    uint32_t head_nid;   /* a plain "import a.b": the id of "a", else NONE */
    const char *target;  /* dotted target */
    uint32_t scope;      /* the function it binds in, or the file node */
    uint32_t order;      /* the ref's index in its record */
    uint32_t file;
    /* [0]: the whole target; [1]: its first component, which a plain
     * "import a.b" also binds ("a") */
    uint32_t node[2];    /* the node it names, once cached (state 2) */
    uint8_t state[2];    /* 0 not yet, 1 being resolved, 2 cached */
    int8_t ns[2];        /* names a namespace package: -1 unknown, 0, 1 */
    int8_t self_sub;     /* -1 unknown; 1: "from . import sub" in sub's package */
} bind;

typedef struct star {
    const char *target;  /* "x.y.*" */
    uint32_t file;
    uint32_t resolved;   /* file node of the module, NONE, or PENDING */
} star;
#define PENDING (UINT32_MAX - 1) /* being resolved */
#define UNSET (UINT32_MAX - 2)   /* not resolved yet */

typedef struct strent {  /* a string and a file, for module/path tables */
    const char *key;
    uint32_t file;
    uint32_t rank;       /* ties: lower first (pyi = 1) */
} strent;

/* Every distinct node and binding name, by id: lookups hash the name they
 * are given once and compare ids from then on. */
typedef struct names {
    uint32_t *slots;     /* name id + 1; 0 = empty */
    size_t mask;
    const char **str;
    uint32_t *len, *hash;
    uint32_t n, cap;
} names;

/* (parent, name id) -> the first child of that name (lowest id). */
typedef struct children {
    uint64_t *keys;
    uint32_t *vals;      /* NONE = empty */
    size_t mask;
} children;

typedef struct ctx {
    gnode *nodes;
    uint32_t n_nodes;
    gfile *files;
    uint32_t n_files;
    names names;
    children kids;
    uint32_t *name_off;  /* non-file nodes grouped by name id, in id order: */
    uint32_t *by_name;   /* by_name[name_off[nid], name_off[nid + 1]) */
    uint32_t n_node_names;   /* names [0, this) are nodes' (then bindings') */
    uint32_t n_sym;      /* non-file nodes */
    strent *mods, *msuf, *paths, *bnames;
    size_t n_mods, n_msuf, n_paths, n_bnames;
    bind *binds;
    size_t n_binds;
    star *stars;
    size_t n_stars;
    uint32_t *base_off;  /* INHERIT refs by class node: CSR over node ids */
    uint32_t *base_ref;  /* local ref indices */
    uint32_t cur_inc[256];   /* C: files included by the current file */
    size_t n_cur_inc;
    struct {             /* Python: module lookups under way (cycles) */
        uint32_t file;
        const char *s;
        size_t n;
    } stack[MAX_DEPTH + 8];
    size_t sp;
    int bind_nest;       /* py_bind_node calls under way */
    bool cut;            /* a depth limit or cycle guard cut a lookup short:
                            its result depends on the context, not cached */
    cn_graph_tmp_edges *out;
    bool oom;
} ctx;

/* ---- small helpers ------------------------------------------------------- */

/* Fails a lookup for a reason that depends on where it was made from. */
static uint32_t cut(ctx *c)
{
    c->cut = true;
    return NONE;
}

/* Compares NUL-terminated a with p[0, n). */
static int cmp_sl(const char *a, const char *p, size_t n)
{
    int r = strncmp(a, p, n);
    if (r) return r;
    return a[n] != '\0' ? 1 : 0;
}

static int cmp_u32(uint32_t a, uint32_t b)
{
    return (a > b) - (a < b);
}

static bool is_func(int kind)
{
    return kind == CN_NODE_FUNCTION || kind == CN_NODE_METHOD;
}

static uint32_t last_component(const char *name)
{
    size_t k = 0;
    for (size_t i = 0; name[i]; i++) {
        if (name[i] == '.') k = i + 1;
        else if (name[i] == '-' && name[i + 1] == '>') k = i + 2;
        else if (name[i] == ':' && name[i + 1] == ':') k = i + 2;
    }
    return (uint32_t)k;
}

static void emit(ctx *c, uint8_t type, uint32_t src, uint32_t dst, uint32_t line, uint32_t col,
                 const char *name, bool split_key)
{
    cn_graph_tmp_edges *v = c->out;
    if (v->len == v->cap) {
        size_t cap = v->cap ? v->cap * 2 : 1024;
        cn_graph_tmp_edge *p = realloc(v->items, cap * sizeof *p);
        if (p == NULL) {
            c->oom = true;
            return;
        }
        v->items = p;
        v->cap = cap;
    }
    if (name == NULL) name = "";
    v->items[v->len++] = (cn_graph_tmp_edge){src, dst, line, col, name,
                                             split_key ? last_component(name) : 0, type};
}

/* ---- name indexes --------------------------------------------------------- */

static int cmp_strent(const void *a, const void *b)
{
    const strent *x = a, *y = b;
    int d = strcmp(x->key, y->key);
    if (!d) d = cmp_u32(x->rank, y->rank);
    return d ? d : cmp_u32(x->file, y->file);
}

static int cmp_bind(const void *a, const void *b)
{
    const bind *x = a, *y = b;
    int d = cmp_u32(x->file, y->file);
    if (!d) d = cmp_u32(x->nid, y->nid);
    return d ? d : cmp_u32(x->order, y->order);
}

/* ---- names and children ------------------------------------------------------ */

static uint32_t name_hash(const char *s, size_t n)
{
    uint32_t h = 2166136261u;   /* FNV-1a */
    for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * 16777619u;
    return h;
}

/* The id of name s[0, n), or NONE when no node or binding is so named. */
static uint32_t name_find(const names *t, const char *s, size_t n)
{
    uint32_t h = name_hash(s, n);
    if (t->slots == NULL) return NONE;
    for (size_t i = h & t->mask;; i = (i + 1) & t->mask) {
        uint32_t v = t->slots[i];
        if (v == 0) return NONE;
        v--;
        if (t->hash[v] == h && t->len[v] == n && memcmp(t->str[v], s, n) == 0) return v;
    }
}

static bool names_grow(names *t)
{
    size_t ns = t->mask ? (t->mask + 1) * 2 : 1024;
    uint32_t *slots = calloc(ns, sizeof *slots);
    if (slots == NULL) return false;
    for (uint32_t v = 0; v < t->n; v++) {
        size_t i = t->hash[v] & (ns - 1);
        while (slots[i]) i = (i + 1) & (ns - 1);
        slots[i] = v + 1;
    }
    free(t->slots);
    t->slots = slots;
    t->mask = ns - 1;
    return true;
}

/* Interns s[0, n) (borrowed: it lives as long as the records); NONE on
 * ENOMEM. */
static uint32_t name_add_n(names *t, const char *s, size_t n)
{
    uint32_t h = name_hash(s, n), v;
    size_t i;
    if ((t->n + 1) * 2 > t->mask + 1 && !names_grow(t)) return NONE;
    for (i = h & t->mask; t->slots[i]; i = (i + 1) & t->mask) {
        v = t->slots[i] - 1;
        if (t->hash[v] == h && t->len[v] == n && memcmp(t->str[v], s, n) == 0) return v;
    }
    if (t->n == t->cap) {
        uint32_t cap = t->cap ? t->cap * 2 : 1024;
        const char **str = realloc(t->str, cap * sizeof *str);
        uint32_t *len = str ? realloc(t->len, cap * sizeof *len) : NULL;
        uint32_t *hash = len ? realloc(t->hash, cap * sizeof *hash) : NULL;
        if (str) t->str = str;
        if (len) t->len = len;
        if (hash == NULL) return NONE;
        t->hash = hash;
        t->cap = cap;
    }
    v = t->n++;
    t->str[v] = s;
    t->len[v] = (uint32_t)n;
    t->hash[v] = h;
    t->slots[i] = v + 1;
    return v;
}

static uint32_t name_add(names *t, const char *s)
{
    return name_add_n(t, s, strlen(s));
}

static size_t kid_slot(const children *k, uint64_t key)
{
    uint64_t h = key * 0x9E3779B97F4A7C15ull;
    return (size_t)(h >> 32) & k->mask;
}

/* Records child id of parent named nid unless one came first. */
static void kid_add(children *k, uint32_t parent, uint32_t nid, uint32_t id)
{
    uint64_t key = (uint64_t)parent << 32 | nid;
    size_t i = kid_slot(k, key);
    while (k->vals[i] != NONE && k->keys[i] != key) i = (i + 1) & k->mask;
    if (k->vals[i] == NONE) {
        k->keys[i] = key;
        k->vals[i] = id;
    }
}

/* The first child of `parent` whose name has id nid, or NONE. */
static uint32_t child_of(const ctx *c, uint32_t parent, uint32_t nid)
{
    uint64_t key = (uint64_t)parent << 32 | nid;
    if (nid == NONE) return NONE;
    for (size_t i = kid_slot(&c->kids, key); c->kids.vals[i] != NONE; i = (i + 1) & c->kids.mask)
        if (c->kids.keys[i] == key) return c->kids.vals[i];
    return NONE;
}

/* The first child of `parent` named s[0, n), or NONE. */
static uint32_t child_find(const ctx *c, uint32_t parent, const char *s, size_t n)
{
    return child_of(c, parent, name_find(&c->names, s, n));
}

/* A dotted name's prefixes that some node or binding is named, looked up
 * once for every scope a lookup then tries: len[k], nid[k] for the
 * prefixes ending before a dot or at the end, longest first. */
#define MAX_PREFIXES 16
typedef struct prefixes {
    const char *s;       /* the name */
    size_t s_len;
    bool listed;         /* len/nid are filled in (on first use) */
    bool more;           /* there are shorter prefixes than the n listed */
    size_t n;
    size_t len[MAX_PREFIXES];
    uint32_t nid[MAX_PREFIXES];
    uint32_t head;       /* the id of the first component, or NONE */
    size_t head_len;
} prefixes;

/* The head's id now; the longer prefixes when a binding lookup needs them
 * (prefixes_list), since most names resolve as a scope's child first. */
static void prefixes_of(const ctx *c, const char *s, size_t n, prefixes *p)
{
    const char *dot = memchr(s, '.', n);
    p->s = s;
    p->s_len = n;
    p->listed = false;
    p->head_len = dot ? (size_t)(dot - s) : n;
    p->head = name_find(&c->names, s, p->head_len);
}

static void prefixes_list(const ctx *c, prefixes *p)
{
    size_t plen = p->s_len;
    const char *s = p->s;
    p->listed = true;
    p->more = false;
    p->n = 0;
    while (plen > 0 && p->n < MAX_PREFIXES) {
        p->len[p->n] = plen;
        p->nid[p->n++] = plen == p->head_len ? p->head : name_find(&c->names, s, plen);
        while (plen > 0 && s[plen - 1] != '.') plen--;
        if (plen == 0) break;
        plen--; /* drop the dot */
    }
    p->more = plen > 0 && p->n == MAX_PREFIXES;
}

/* The q-th prefix's length and id (past the cached ones: looked up now);
 * false when there is none. */
static bool prefix_at(const ctx *c, const prefixes *p, size_t q, size_t *len, uint32_t *nid)
{
    size_t plen;
    if (q < p->n) {
        *len = p->len[q];
        *nid = p->nid[q];
        return true;
    }
    if (!p->more) return false;
    plen = p->len[p->n - 1];
    for (size_t k = p->n - 1; k < q; k++) {
        while (plen > 0 && p->s[plen - 1] != '.') plen--;
        if (plen <= 1) return false;
        plen--;
    }
    *len = plen;
    *nid = name_find(&c->names, p->s, plen);
    return true;
}

/* Range [*lo, *hi) of by_name entries named s (in id order). */
static void name_range(const ctx *c, const char *s, size_t *lo_out, size_t *hi_out)
{
    uint32_t nid = name_find(&c->names, s, strlen(s));
    *lo_out = *hi_out = 0;
    if (nid == NONE || nid >= c->n_node_names) return;   /* no node has it (a binding's name) */
    *lo_out = c->name_off[nid];
    *hi_out = c->name_off[nid + 1];
}

/* Range of by_name entries of file f named s: a file's nodes have
 * consecutive ids, so they are a run within the name's range. */
static void fname_range(const ctx *c, uint32_t f, const char *s, size_t *lo_out, size_t *hi_out)
{
    uint32_t first = c->files[f].node, end = f + 1 < c->n_files ? c->files[f + 1].node : c->n_nodes;
    size_t lo, hi, all, start;
    name_range(c, s, &lo, &all);
    hi = all;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (c->by_name[mid] < first) lo = mid + 1;
        else hi = mid;
    }
    start = lo;
    while (lo < all && c->by_name[lo] < end) lo++;
    *lo_out = start;
    *hi_out = lo;
}

/* First entry of a strent table whose key is s[0, n) (SIZE_MAX if none). */
static size_t strent_find(const strent *t, size_t len, const char *s, size_t n)
{
    size_t lo = 0, hi = len;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (cmp_sl(t[mid].key, s, n) < 0) lo = mid + 1;
        else hi = mid;
    }
    return lo < len && cmp_sl(t[lo].key, s, n) == 0 ? lo : SIZE_MAX;
}

/* ---- Python ---------------------------------------------------------------- */

/* The file index of module s[0, n): exact, else (allow_suffix) the one
 * module whose name ends with "." + s. */
static uint32_t py_module(const ctx *c, const char *s, size_t n, bool allow_suffix)
{
    size_t i = strent_find(c->mods, c->n_mods, s, n);
    if (i != SIZE_MAX) return c->mods[i].file;
    if (!allow_suffix) return NONE;
    i = strent_find(c->msuf, c->n_msuf, s, n);
    if (i == SIZE_MAX) return NONE;
    /* unique: every entry with this suffix belongs to the same module */
    for (size_t k = i + 1; k < c->n_msuf && cmp_sl(c->msuf[k].key, s, n) == 0; k++)
        if (strcmp(c->files[c->msuf[k].file].module, c->files[c->msuf[i].file].module) != 0)
            return NONE;
    return c->msuf[i].file;
}

/* Makes a (possibly relative) dotted target absolute for file f into buf;
 * returns its length, or -1 when it climbs above the root or is too long.
 * *relative tells whether it had leading dots. */
static int py_absolute(const ctx *c, uint32_t f, const char *t, size_t tn, char *buf, size_t cap,
                       bool *relative)
{
    size_t dots = 0, plen;
    const char *mod = c->files[f].module;
    *relative = false;
    while (dots < tn && t[dots] == '.') dots++;
    if (dots == 0) {
        if (tn + 1 > cap) return -1;
        memcpy(buf, t, tn);
        buf[tn] = '\0';
        return (int)tn;
    }
    *relative = true;
    if (mod == NULL) return -1;
    /* the package: the module itself for __init__, else its parent */
    plen = strlen(mod);
    if (!c->files[f].is_pkg) {
        const char *dot = strrchr(mod, '.');
        plen = dot ? (size_t)(dot - mod) : 0;
    }
    for (size_t k = 1; k < dots; k++) {
        if (plen == 0) return -1;
        while (plen > 0 && mod[plen - 1] != '.') plen--;
        if (plen > 0) plen--;
    }
    t += dots;
    tn -= dots;
    if (plen + 1 + tn + 1 > cap) return -1;
    memcpy(buf, mod, plen);
    if (plen && tn) buf[plen++] = '.';
    memcpy(buf + plen, t, tn);
    buf[plen + tn] = '\0';
    return (int)(plen + tn);
}

static uint32_t py_resolve_target(ctx *c, uint32_t f, const char *t, size_t tn, int depth);
static uint32_t py_in_module(ctx *c, uint32_t f, const char *s, size_t n, int depth);
static uint32_t py_lookup(ctx *c, uint32_t f, uint32_t start, const char *s, size_t n, int depth);

typedef struct visited {
    uint32_t ids[64];
    size_t n;
} visited;

static bool visit(visited *v, uint32_t id)
{
    for (size_t i = 0; i < v->n; i++)
        if (v->ids[i] == id) return false;
    if (v->n < 64) v->ids[v->n++] = id;
    return true;
}

/* Member m[0, mn) of class cls: its own, else its bases', depth-first. */
static uint32_t py_member(ctx *c, uint32_t cls, const char *m, size_t mn, int bdepth, visited *v,
                          int depth)
{
    uint32_t id = child_find(c, cls, m, mn);
    const gnode *g = &c->nodes[cls];
    const cn_file_rec *r = c->files[g->file].rec;
    if (id != NONE) return id;
    if (bdepth >= MAX_BASE_DEPTH) return NONE;
    if (depth > MAX_DEPTH) return cut(c);
    for (uint32_t k = c->base_off[cls]; k < c->base_off[cls + 1]; k++) {
        const cn_rec_ref *ref = &r->refs[c->base_ref[k]];
        const char *bn = cn_rec_str(r, ref->name);
        uint32_t start = g->parent, b;
        if (bn == NULL) continue;
        b = py_lookup(c, g->file, start, bn, strlen(bn), depth + 1);
        if (b == NONE || c->nodes[b].kind != CN_NODE_CLASS || !visit(v, b)) continue;
        id = py_member(c, b, m, mn, bdepth + 1, v, depth + 1);
        if (id != NONE) return id;
    }
    return NONE;
}

/* What s[0, n) ("b.c", may be empty) names inside node id. */
static uint32_t py_descend(ctx *c, uint32_t id, const char *s, size_t n, int depth)
{
    const gnode *g;
    const char *dot;
    size_t h;
    if (n == 0 || id == NONE) return id;
    if (depth > MAX_DEPTH) return cut(c);
    g = &c->nodes[id];
    if (g->kind == CN_NODE_FILE) return py_in_module(c, g->file, s, n, depth + 1);
    if (g->kind != CN_NODE_CLASS) return NONE;
    dot = memchr(s, '.', n);
    h = dot ? (size_t)(dot - s) : n;
    {
        visited v = {{0}, 0};
        visit(&v, id);
        id = py_member(c, id, s, h, 0, &v, depth + 1);
    }
    return dot ? py_descend(c, id, dot + 1, n - h - 1, depth + 1) : id;
}

/* Resolves binding target t[0, tn) followed by ".rest" in file f. */
static uint32_t py_follow(ctx *c, uint32_t f, const char *t, size_t tn, const char *rest,
                          size_t rn, int depth)
{
    char buf[NAME_MAX_LEN];
    size_t len = 0;
    if (tn + 1 + rn + 1 > sizeof buf) return NONE;
    memcpy(buf, t, tn);
    len = tn;
    if (rn) {
        if (len && buf[len - 1] != '.') buf[len++] = '.';
        memcpy(buf + len, rest, rn);
        len += rn;
    }
    buf[len] = '\0';
    return py_resolve_target(c, f, buf, len, depth + 1);
}

/* The binding of file f in `scope` for the longest dotted prefix of the
 * name p was made of; *k receives that prefix's length, *tn the length of
 * the target to use (an implicit "import a.b" binding of "a" uses "a"). */
static bind *py_bind(ctx *c, uint32_t f, uint32_t scope, prefixes *p, size_t *k, size_t *tn)
{
    const gfile *gf = &c->files[f];
    size_t plen;
    uint32_t nid;
    if (gf->bind_lo == gf->bind_hi) return NULL;
    if (!p->listed) prefixes_list(c, p);
    for (size_t q = 0; prefix_at(c, p, q, &plen, &nid); q++) {
        size_t lo = gf->bind_lo, hi = gf->bind_hi;
        if (nid == NONE) continue;
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (c->binds[mid].nid < nid) lo = mid + 1;
            else hi = mid;
        }
        for (; lo < gf->bind_hi && c->binds[lo].nid == nid; lo++)
            if (c->binds[lo].scope == scope) {
                *k = plen;
                *tn = strlen(c->binds[lo].target);
                return &c->binds[lo];
            }
    }
    /* "import a.b" also binds "a" */
    for (uint32_t i = gf->bind_lo; p->head != NONE && i < gf->bind_hi; i++) {
        bind *b = &c->binds[i];
        if (b->head_nid == p->head && b->scope == scope) {
            *k = p->head_len;
            *tn = p->head_len;
            return b;
        }
    }
    return NULL;
}

static size_t bind_target_len(const bind *b, int part)
{
    return part ? strcspn(b->target, ".") : strlen(b->target);
}

/* The node binding b names (part 0: its whole target; part 1: the first
 * component of a plain "import a.b").  Each is resolved once (with a fresh
 * depth budget) and cached, so a name imported through a chain of
 * re-exports costs one lookup per link for the whole build; a binding met
 * again while it is being resolved is a cycle (NONE).  Only a result cut
 * short by the depth or nesting limits is not cached. */
static uint32_t py_bind_node(ctx *c, bind *b, int part)
{
    bool saved = c->cut;
    uint32_t r;
    if (b->state[part] == 2) return b->node[part];
    if (b->state[part] == 1) return cut(c);   /* a cycle: what breaks it depends on where it was entered */
    if (c->bind_nest >= MAX_BIND_NEST) return cut(c);
    b->state[part] = 1;
    c->cut = false;
    c->bind_nest++;
    r = py_resolve_target(c, b->file, b->target, bind_target_len(b, part), 0);
    c->bind_nest--;
    b->state[part] = c->cut ? 0 : 2;
    b->node[part] = r;
    c->cut = c->cut || saved;
    return r;
}

/* Whether a binding's target names a namespace package: no file of its
 * own, but modules below it ("pkg" for "pkg/mod.py" without
 * "pkg/__init__.py"). */
static bool py_bind_namespace(const ctx *c, bind *b, int part)
{
    if (b->ns[part] < 0) {
        char abs[NAME_MAX_LEN];
        bool rel;
        int al = py_absolute(c, b->file, b->target, bind_target_len(b, part), abs, sizeof abs - 1, &rel);
        size_t lo = 0, hi = c->n_mods;
        b->ns[part] = 0;
        if (al > 0) {
            abs[al] = '.';
            while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                if (strncmp(c->mods[mid].key, abs, (size_t)al + 1) < 0) lo = mid + 1;
                else hi = mid;
            }
            b->ns[part] = lo < c->n_mods && strncmp(c->mods[lo].key, abs, (size_t)al + 1) == 0;
        }
    }
    return b->ns[part] == 1;
}

/* What ".rest" names after binding b (part as for py_bind_node). */
static uint32_t py_through_bind(ctx *c, bind *b, int part, const char *rest, size_t rn, int depth)
{
    uint32_t node = py_bind_node(c, b, part);
    if (node != NONE) return py_descend(c, node, rest, rn, depth + 1);
    /* a namespace package has no node: look the whole dotted name up */
    if (rn == 0 || b->state[part] != 2 || !py_bind_namespace(c, b, part)) return NONE;
    return py_follow(c, b->file, b->target, bind_target_len(b, part), rest, rn, depth);
}

/* Resolves s[0, n) through one binding lookup in `scope`; NONE if unbound. */
static uint32_t py_via_bind(ctx *c, uint32_t f, uint32_t scope, const char *s, size_t n, prefixes *p,
                            int depth, bool *bound)
{
    size_t k = 0, tn = 0;
    bind *b = py_bind(c, f, scope, p, &k, &tn);
    *bound = b != NULL;
    if (b == NULL) return NONE;
    return py_through_bind(c, b, tn == strlen(b->target) ? 0 : 1, k < n ? s + k + 1 : "",
                           k < n ? n - k - 1 : 0, depth);
}

/* Length of an import target without its star: "x.y.*" -> "x.y", ".*" -> ".". */
static size_t star_strip(const char *t, size_t tn)
{
    bool dots_only = true;
    if (tn == 0 || t[tn - 1] != '*') return tn;
    tn--;
    for (size_t i = 0; i + 1 < tn; i++)
        if (t[i] != '.') dots_only = false;
    if (tn > 0 && t[tn - 1] == '.' && !(dots_only && tn >= 1 && t[0] == '.')) tn--;
    return tn;
}

static uint32_t py_star_module(ctx *c, star *st, int depth)
{
    if (st->resolved == PENDING) return cut(c); /* a cycle of star imports */
    if (c->bind_nest >= MAX_BIND_NEST) return cut(c);
    if (st->resolved != UNSET) return st->resolved;
    {
        size_t tn = star_strip(st->target, strlen(st->target));
        bool saved = c->cut;
        uint32_t r;
        st->resolved = PENDING;
        c->cut = false;
        c->bind_nest++;
        r = py_resolve_target(c, st->file, st->target, tn, 0);
        c->bind_nest--;
        if (r != NONE && c->nodes[r].kind != CN_NODE_FILE) r = NONE;
        st->resolved = c->cut ? UNSET : r;
        c->cut = c->cut || saved;
        return r;
    }
}

static uint32_t py_in_module_body(ctx *c, uint32_t f, const char *s, size_t n, int depth);

/* Whether binding b of a package's __init__ imports its own submodule of
 * the same name ("from . import sub", "from pkg import sub"). */
static int8_t py_self_sub(const ctx *c, const bind *b)
{
    char abs[NAME_MAX_LEN], self[NAME_MAX_LEN];
    const char *mod = c->files[b->file].module;
    bool rel;
    int al = py_absolute(c, b->file, b->target, strlen(b->target), abs, sizeof abs, &rel);
    int sl = mod ? snprintf(self, sizeof self, "%s.%s", mod, b->name) : -1;
    return al >= 0 && sl > 0 && (size_t)sl < sizeof self && strcmp(abs, self) == 0;
}

/* What s[0, n) ("sym" or "sym.rest") names inside module file f.  A lookup
 * that is already under way (modules importing a name from each other)
 * fails at once instead of going round until the depth limit. */
static uint32_t py_in_module(ctx *c, uint32_t f, const char *s, size_t n, int depth)
{
    uint32_t r;
    for (size_t i = 0; i < c->sp; i++)
        if (c->stack[i].file == f && c->stack[i].n == n && memcmp(c->stack[i].s, s, n) == 0)
            return cut(c);
    if (c->sp == sizeof c->stack / sizeof *c->stack) return cut(c);
    c->stack[c->sp].file = f;
    c->stack[c->sp].s = s;
    c->stack[c->sp].n = n;
    c->sp++;
    r = py_in_module_body(c, f, s, n, depth);
    c->sp--;
    return r;
}

static uint32_t py_in_module_body(ctx *c, uint32_t f, const char *s, size_t n, int depth)
{
    const gfile *gf = &c->files[f];
    const char *dot = memchr(s, '.', n);
    size_t h = dot ? (size_t)(dot - s) : n, rn = dot ? n - h - 1 : 0;
    const char *rest = dot ? dot + 1 : "";
    uint32_t id;
    prefixes p;
    if (gf->lang != LANG_PY) return NONE;
    if (depth > MAX_DEPTH) return cut(c);
    prefixes_of(c, s, h, &p);
    id = child_of(c, gf->node, p.head);
    if (id != NONE) return py_descend(c, id, rest, rn, depth + 1);
    /* an import of that module under this name (a re-export) */
    {
        size_t k = 0, tn = 0;
        bind *b = py_bind(c, f, gf->node, &p, &k, &tn);
        if (b != NULL) {
            int part = tn == strlen(b->target) ? 0 : 1;
            if (part == 0 && b->self_sub < 0) b->self_sub = py_self_sub(c, b);
            /* "from . import sub" in pkg/__init__: the submodule, below */
            if (part == 1 || !b->self_sub) {
                id = py_through_bind(c, b, part, rest, rn, depth);
                if (id != NONE) return id;
            }
        }
    }
    /* a submodule */
    if (gf->module && gf->is_pkg) {
        char sub[NAME_MAX_LEN];
        int sl = snprintf(sub, sizeof sub, "%s.%.*s", gf->module, (int)h, s);
        if (sl > 0 && (size_t)sl < sizeof sub) {
            uint32_t m = py_module(c, sub, (size_t)sl, false);
            if (m != NONE) return py_descend(c, c->files[m].node, rest, rn, depth + 1);
        }
    }
    if (s[0] != '_')
        for (uint32_t i = gf->star_lo; i < gf->star_hi; i++) {
            uint32_t m = py_star_module(c, &c->stars[i], depth + 1);
            if (m == NONE) continue;
            id = py_in_module(c, c->nodes[m].file, s, n, depth + 1);
            if (id != NONE) return id;
        }
    return NONE;
}

/* Where the dot before s[0, end) is: its index, or SIZE_MAX when none. */
static size_t dot_before(const char *s, size_t end)
{
    while (end > 0)
        if (s[--end] == '.') return end;
    return SIZE_MAX;
}

/* Module s[0, plen) and, past its dot, the rest of s[0, n) inside it. */
static uint32_t py_module_prefix(ctx *c, const char *s, size_t n, size_t plen, bool allow_suffix,
                                 int depth)
{
    uint32_t f;
    if (plen == 0) return NONE;
    f = py_module(c, s, plen, allow_suffix);
    if (f == NONE) return NONE;
    if (plen == n) return c->files[f].node;
    return py_in_module(c, f, s + plen + 1, n - plen - 1, depth + 1);
}

/* An absolute dotted name s[0, n) (see the top of the file).  The module
 * prefixes tried: up to the last dot (a symbol in the parent module), the
 * whole name, then up to each earlier dot.  They are walked on the name
 * itself, not on a table of its dots, so a name of any number of
 * components (directories with dots of their own make many) is tried in
 * full. */
static uint32_t py_resolve_abs(ctx *c, const char *s, size_t n, bool allow_suffix, int depth)
{
    size_t last, plen;
    uint32_t r;
    if (n == 0) return NONE;
    if (depth > MAX_DEPTH) return cut(c);
    last = dot_before(s, n);
    if (last != SIZE_MAX && (r = py_module_prefix(c, s, n, last, allow_suffix, depth)) != NONE) return r;
    if ((r = py_module_prefix(c, s, n, n, allow_suffix, depth)) != NONE) return r;
    plen = last;
    while (plen != SIZE_MAX && (plen = dot_before(s, plen)) != SIZE_MAX)
        if ((r = py_module_prefix(c, s, n, plen, allow_suffix, depth)) != NONE) return r;
    return NONE;
}

static uint32_t py_resolve_target(ctx *c, uint32_t f, const char *t, size_t tn, int depth)
{
    char buf[NAME_MAX_LEN];
    bool rel;
    int len;
    if (depth > MAX_DEPTH) return cut(c);
    len = py_absolute(c, f, t, tn, buf, sizeof buf, &rel);
    if (len <= 0) return NONE;
    return py_resolve_abs(c, buf, (size_t)len, !rel, depth + 1);
}

/* A plain or dotted name s[0, n) used in node `start` of file f. */
static uint32_t py_lookup(ctx *c, uint32_t f, uint32_t start, const char *s, size_t n, int depth)
{
    const gfile *gf = &c->files[f];
    const char *dot = memchr(s, '.', n);
    size_t h = dot ? (size_t)(dot - s) : n, rn = dot ? n - h - 1 : 0;
    const char *rest = dot ? dot + 1 : "";
    uint32_t id;
    bool bound;
    prefixes p;
    if (h == 0) return NONE;
    if (depth > MAX_DEPTH) return cut(c);
    prefixes_of(c, s, n, &p);
    for (uint32_t x = start; x != NONE && x != gf->node; x = c->nodes[x].parent) {
        int kind = c->nodes[x].kind;
        if (!is_func(kind) && !(x == start && kind == CN_NODE_CLASS)) continue;
        id = child_of(c, x, p.head);
        if (id != NONE) return py_descend(c, id, rest, rn, depth + 1);
        if (is_func(kind)) {
            id = py_via_bind(c, f, x, s, n, &p, depth + 1, &bound);
            if (bound) return id;
        }
    }
    id = child_of(c, gf->node, p.head);
    if (id != NONE) return py_descend(c, id, rest, rn, depth + 1);
    id = py_via_bind(c, f, gf->node, s, n, &p, depth + 1, &bound);
    if (bound) return id;
    if (s[0] != '_')
        for (uint32_t i = gf->star_lo; i < gf->star_hi; i++) {
            uint32_t m = py_star_module(c, &c->stars[i], depth + 1);
            if (m == NONE) continue;
            id = py_in_module(c, c->nodes[m].file, s, n, depth + 1);
            if (id != NONE) return id;
        }
    return NONE;
}

/* The class whose method (or a function nested in one) holds node x. */
static uint32_t py_self_class(const ctx *c, uint32_t x)
{
    for (; x != NONE; x = c->nodes[x].parent) {
        const gnode *g = &c->nodes[x];
        if (g->kind == CN_NODE_METHOD || (g->kind == CN_NODE_FUNCTION && g->parent != NONE &&
                                          c->nodes[g->parent].kind == CN_NODE_CLASS))
            return c->nodes[g->parent].kind == CN_NODE_CLASS ? g->parent : NONE;
        if (g->kind == CN_NODE_CLASS || g->kind == CN_NODE_FILE) return NONE;
    }
    return NONE;
}

static void py_file(ctx *c, uint32_t f)
{
    const gfile *gf = &c->files[f];
    const cn_file_rec *r = gf->rec;
    for (size_t i = 0; i < r->n_refs && !c->oom; i++) {
        const cn_rec_ref *ref = &r->refs[i];
        const char *name = cn_rec_str(r, ref->name);
        uint32_t src = ref->from < 0 ? gf->node : gf->node + 1 + (uint32_t)ref->from, dst = NONE;
        size_t n;
        if (name == NULL) name = "";
        n = strlen(name);
        switch (ref->kind) {
        case CN_REF_IMPORT: {
            const char *t = cn_rec_str(r, ref->target);
            size_t tn;
            if (t == NULL) t = name;
            tn = star_strip(t, strlen(t));
            if (tn) dst = py_resolve_target(c, f, t, tn, 0);
            emit(c, CN_EDGE_IMPORTS, src, dst, ref->line, ref->column, t, true);
            break;
        }
        case CN_REF_INHERIT:
            if (n && n < NAME_MAX_LEN)
                dst = py_lookup(c, f, c->nodes[src].kind == CN_NODE_FILE ? src : c->nodes[src].parent,
                                name, n, 0);
            emit(c, CN_EDGE_INHERITS, src, dst, ref->line, ref->column, name, true);
            break;
        case CN_REF_CALL:
        case CN_REF_REFERENCE: {
            uint8_t type = ref->kind == CN_REF_CALL ? CN_EDGE_CALLS : CN_EDGE_REFERENCES;
            const char *dot = memchr(name, '.', n);
            size_t h = dot ? (size_t)(dot - name) : n;
            uint32_t cls;
            if (n == 0 || n >= NAME_MAX_LEN || h == 0) {
                /* ".split": a call on a call's result */
            } else if (((h == 4 && memcmp(name, "self", 4) == 0) ||
                        (h == 3 && memcmp(name, "cls", 3) == 0)) &&
                       (cls = py_self_class(c, src)) != NONE) {
                const char *m = dot ? dot + 1 : "";
                if (dot && strchr(m, '.') == NULL && *m) {
                    visited v = {{0}, 0};
                    visit(&v, cls);
                    dst = py_member(c, cls, m, strlen(m), 0, &v, 0);
                }
            } else {
                dst = py_lookup(c, f, src, name, n, 0);
            }
            emit(c, type, src, dst, ref->line, ref->column, name, true);
            break;
        }
        default:
            break;
        }
    }
}

/* ---- C --------------------------------------------------------------------- */

static int c_rank(int kind)
{
    switch (kind) {
    case CN_NODE_FUNCTION: return 0;
    case CN_NODE_MACRO: return 1;
    case CN_NODE_VARIABLE: return 2;
    case CN_NODE_TYPEDEF: return 3;
    case CN_NODE_STRUCT:
    case CN_NODE_UNION:
    case CN_NODE_ENUM: return 4;
    case CN_NODE_PROTOTYPE: return 5;
    default: return 6;
    }
}

static uint32_t path_find(const ctx *c, const char *p, size_t n)
{
    size_t i = strent_find(c->paths, c->n_paths, p, n);
    return i == SIZE_MAX ? NONE : c->paths[i].file;
}

/* #include "name" from file f: a file index or NONE. */
static uint32_t c_include(const ctx *c, uint32_t f, const char *name)
{
    char buf[NAME_MAX_LEN];
    size_t len = 0, n = strlen(name);
    const char *path = c->files[f].path, *slash = strrchr(path, '/'), *base;
    uint32_t found = NONE;
    if (n == 0 || n >= sizeof buf / 2) return NONE;
    /* relative to the including file's directory, folding "." and ".." */
    if (slash && (size_t)(slash - path) < sizeof buf / 2) {
        len = (size_t)(slash - path);
        memcpy(buf, path, len);
    }
    if (name[0] != '/') {
        const char *p = name;
        bool ok = true;
        while (*p && ok) {
            const char *e = strchr(p, '/');
            size_t cl = e ? (size_t)(e - p) : strlen(p);
            if (cl == 0 || (cl == 1 && p[0] == '.')) {
            } else if (cl == 2 && p[0] == '.' && p[1] == '.') {
                if (len == 0) ok = false;
                while (len > 0 && buf[len - 1] != '/') len--;
                if (len > 0) len--;
            } else {
                if (len) buf[len++] = '/';
                memcpy(buf + len, p, cl);
                len += cl;
            }
            p += cl;
            if (*p == '/') p++;
        }
        if (ok && len) {
            uint32_t r = path_find(c, buf, len);
            if (r != NONE) return r;
        }
    }
    /* else the one file that is `name` or ends with "/name" */
    base = strrchr(name, '/');
    base = base ? base + 1 : name;
    {
        size_t i = strent_find(c->bnames, c->n_bnames, base, strlen(base));
        for (; i != SIZE_MAX && i < c->n_bnames && strcmp(c->bnames[i].key, base) == 0; i++) {
            const char *fp = c->files[c->bnames[i].file].path;
            size_t fl = strlen(fp);
            if (strcmp(fp, name) == 0 ||
                (fl > n && fp[fl - n - 1] == '/' && strcmp(fp + fl - n, name) == 0)) {
                if (found != NONE && found != c->bnames[i].file) return NONE;
                found = c->bnames[i].file;
            }
        }
    }
    return found;
}

static bool c_includes(const ctx *c, uint32_t file)
{
    for (size_t i = 0; i < c->n_cur_inc; i++)
        if (c->cur_inc[i] == file) return true;
    return false;
}

/* Whether file g is a .c with the basename of a header the current file includes. */
static bool c_related_source(const ctx *c, uint32_t g)
{
    const char *p = c->files[g].path, *b = strrchr(p, '/');
    size_t bl;
    b = b ? b + 1 : p;
    bl = strlen(b);
    if (bl < 3 || strcmp(b + bl - 2, ".c") != 0) return false;
    for (size_t i = 0; i < c->n_cur_inc; i++) {
        const char *h = c->files[c->cur_inc[i]].path, *hb = strrchr(h, '/');
        size_t hl;
        hb = hb ? hb + 1 : h;
        hl = strlen(hb);
        if (hl == bl && strncmp(hb, b, bl - 2) == 0 && strcmp(hb + hl - 2, ".h") == 0) return true;
    }
    return false;
}

/* Resolves C name N used in file f into up to MAX_LINKS targets. */
static size_t c_lookup(const ctx *c, uint32_t f, const char *name, uint32_t *out)
{
    size_t lo, hi, n = 0, best_rank = 99;
    uint32_t cand[64];
    size_t nc = 0, total = 0;
    uint32_t best = NONE;
    if (*name == '\0' || strchr(name, '.') || strstr(name, "->")) return 0;
    fname_range(c, f, name, &lo, &hi);
    for (size_t i = lo; i < hi; i++) {
        const gnode *g = &c->nodes[c->by_name[i]];
        if ((g->flags & CN_NODE_F_STATIC) && (g->kind == CN_NODE_FUNCTION || g->kind == CN_NODE_VARIABLE)) {
            out[0] = c->by_name[i];
            return 1;
        }
    }
    for (size_t i = lo; i < hi; i++) {
        const gnode *g = &c->nodes[c->by_name[i]];
        int rk = c_rank(g->kind);
        if (g->kind == CN_NODE_PROTOTYPE || rk > 4) continue;
        if ((size_t)rk < best_rank) {
            best_rank = (size_t)rk;
            best = c->by_name[i];
        }
    }
    if (best != NONE) {
        out[0] = best;
        return 1;
    }
    /* the repository's definitions of the best rank present */
    name_range(c, name, &lo, &hi);
    best_rank = 99;
    for (size_t i = lo; i < hi; i++) {
        const gnode *g = &c->nodes[c->by_name[i]];
        int rk = c_rank(g->kind);
        if (c->files[g->file].lang != LANG_C || rk > 5) continue;
        if (g->file != f && (g->flags & CN_NODE_F_STATIC) && !c_includes(c, g->file)) continue;
        if ((size_t)rk < best_rank) {
            best_rank = (size_t)rk;
            nc = total = 0;
        }
        if ((size_t)rk == best_rank) {
            if (nc < 64) cand[nc++] = c->by_name[i];
            total++;
        }
    }
    if (total == 0 || total > 64) return 0;
    if (total == 1) {
        out[0] = cand[0];
        return 1;
    }
    /* own file, else related files */
    for (size_t i = 0; i < nc; i++)
        if (c->nodes[cand[i]].file == f && n < MAX_LINKS) out[n++] = cand[i];
    if (n) return n;
    for (size_t i = 0; i < nc; i++) {
        uint32_t g = c->nodes[cand[i]].file;
        if (c_includes(c, g) || c_related_source(c, g)) {
            if (n == MAX_LINKS) return 0;
            out[n++] = cand[i];
        }
    }
    if (n) return n;
    if (nc > MAX_LINKS) return 0;
    for (size_t i = 0; i < nc; i++) out[n++] = cand[i];
    return n;
}

static void c_file(ctx *c, uint32_t f)
{
    const gfile *gf = &c->files[f];
    const cn_file_rec *r = gf->rec;
    c->n_cur_inc = 0;
    for (size_t i = 0; i < r->n_refs && !c->oom; i++) {
        const cn_rec_ref *ref = &r->refs[i];
        const char *name = cn_rec_str(r, ref->name), *t = cn_rec_str(r, ref->target);
        uint32_t src = ref->from < 0 ? gf->node : gf->node + 1 + (uint32_t)ref->from, dst = NONE;
        if (ref->kind != CN_REF_IMPORT) continue;
        if (name == NULL) name = "";
        if (t == NULL) t = name;
        if (t[0] != '<') {
            uint32_t file = c_include(c, f, name);
            if (file != NONE && file != f) {
                dst = c->files[file].node;
                if (!c_includes(c, file) && c->n_cur_inc < 256) c->cur_inc[c->n_cur_inc++] = file;
            }
        }
        emit(c, CN_EDGE_IMPORTS, src, dst, ref->line, ref->column, t, false);
    }
    for (size_t i = 0; i < r->n_refs && !c->oom; i++) {
        const cn_rec_ref *ref = &r->refs[i];
        const char *name = cn_rec_str(r, ref->name);
        uint32_t src = ref->from < 0 ? gf->node : gf->node + 1 + (uint32_t)ref->from;
        uint32_t dst[MAX_LINKS];
        uint8_t type;
        size_t nd;
        switch (ref->kind) {
        case CN_REF_CALL: type = CN_EDGE_CALLS; break;
        case CN_REF_REFERENCE: type = CN_EDGE_REFERENCES; break;
        case CN_REF_INHERIT: type = CN_EDGE_INHERITS; break;
        default: continue;
        }
        if (name == NULL) name = "";
        nd = c_lookup(c, f, name, dst);
        if (nd == 0) emit(c, type, src, NONE, ref->line, ref->column, name, true);
        for (size_t k = 0; k < nd; k++) emit(c, type, src, dst[k], ref->line, ref->column, name, true);
    }
}

/* ---- other languages --------------------------------------------------------- */

static void other_file(ctx *c, uint32_t f)
{
    const gfile *gf = &c->files[f];
    const cn_file_rec *r = gf->rec;
    for (size_t i = 0; i < r->n_refs && !c->oom; i++) {
        const cn_rec_ref *ref = &r->refs[i];
        const char *name = cn_rec_str(r, ref->name);
        uint32_t src = ref->from < 0 ? gf->node : gf->node + 1 + (uint32_t)ref->from, dst = NONE;
        uint8_t type;
        size_t lo, hi;
        if (name == NULL) name = "";
        switch (ref->kind) {
        case CN_REF_CALL: type = CN_EDGE_CALLS; break;
        case CN_REF_REFERENCE: type = CN_EDGE_REFERENCES; break;
        case CN_REF_INHERIT: type = CN_EDGE_INHERITS; break;
        case CN_REF_IMPORT: {
            const char *t = cn_rec_str(r, ref->target);
            uint32_t file;
            if (t == NULL) t = name;
            file = *t ? path_find(c, t, strlen(t)) : NONE;
            emit(c, CN_EDGE_IMPORTS, src, file != NONE && file != f ? c->files[file].node : NONE,
                 ref->line, ref->column, t, true);
            continue;
        }
        default: continue;
        }
        fname_range(c, f, name, &lo, &hi);
        if (lo < hi) {
            dst = c->by_name[lo];
        } else if (*name) {
            uint32_t one = NONE;
            size_t count = 0;
            name_range(c, name, &lo, &hi);
            for (size_t k = lo; k < hi; k++) {
                const gnode *g = &c->nodes[c->by_name[k]];
                if (strcmp(c->files[g->file].rec->language, r->language) != 0) continue;
                one = c->by_name[k];
                count++;
            }
            if (count == 1) dst = one;
        }
        emit(c, type, src, dst, ref->line, ref->column, name, true);
    }
}

/* ---- setup ---------------------------------------------------------------- */

static int lang_of(const char *language)
{
    if (language == NULL) return LANG_OTHER;
    if (strcmp(language, "python") == 0) return LANG_PY;
    if (strcmp(language, "c") == 0) return LANG_C;
    return LANG_OTHER;
}

/* Python module name of a path into *out (malloc'd), or NULL when it is not
 * a .py/.pyi path; CN_ENOMEM.  A directory's own dots stay in the name
 * (".conan/build.py" is ".conan.build"), so a module name can have more
 * dots than its path has slashes. */
static int py_module_name(const char *path, char **out, bool *is_pkg, bool *pyi)
{
    size_t n = strlen(path), ext;
    char *m;
    *out = NULL;
    *is_pkg = *pyi = false;
    if (n > 3 && strcmp(path + n - 3, ".py") == 0) ext = 3;
    else if (n > 4 && strcmp(path + n - 4, ".pyi") == 0) ext = 4, *pyi = true;
    else return 0;
    n -= ext;
    if (n >= 8 && strncmp(path + n - 8, "__init__", 8) == 0 && (n == 8 || path[n - 9] == '/')) {
        *is_pkg = true;
        n = n == 8 ? 0 : n - 9;
    }
    m = malloc(n + 1);
    if (m == NULL) return cn_error_set(CN_ENOMEM, "out of memory building the symbol graph");
    for (size_t i = 0; i < n; i++) m[i] = path[i] == '/' ? '.' : path[i];
    m[n] = '\0';
    *out = m;
    return 0;
}

/* The suffixes of a module name that start after one of its dots ("b.c"
 * and "c" for "a.b.c"), written to out[] (when not NULL) as entries of
 * file f; returns how many.  The table is sized by calling this with out
 * NULL, so its size and its filling cannot disagree. */
static size_t py_suffixes(const char *module, strent *out, uint32_t f, uint32_t rank)
{
    size_t k = 0;
    for (const char *p = module; *p; p++)
        if (*p == '.' && p[1]) {
            if (out) out[k] = (strent){p + 1, f, rank};
            k++;
        }
    return k;
}

static void ctx_free(ctx *c)
{
    for (uint32_t i = 0; i < c->n_files; i++) free(c->files[i].module);
    free(c->nodes);
    free(c->files);
    free(c->names.slots);
    free(c->names.str);
    free(c->names.len);
    free(c->names.hash);
    free(c->kids.keys);
    free(c->kids.vals);
    free(c->name_off);
    free(c->by_name);
    free(c->mods);
    free(c->msuf);
    free(c->paths);
    free(c->bnames);
    free(c->binds);
    free(c->stars);
    free(c->base_off);
    free(c->base_ref);
}

static int setup(ctx *c, const cn_file_rec *recs, size_t n)
{
    size_t n_nodes = 0, n_files = 0, n_sym = 0, n_binds = 0, n_stars = 0, n_inherit = 0, n_suf = 0;
    int rc;
    uint32_t id = 0, fi = 0;
    for (size_t i = 0; i < n; i++) {
        const cn_file_rec *r = &recs[i];
        if (r->status != CN_REC_PARSED) continue;
        n_files++;
        n_nodes += 1 + r->n_nodes;
        for (size_t k = 0; k < r->n_refs; k++) {
            if (r->refs[k].kind == CN_REF_IMPORT) n_binds++;
            if (r->refs[k].kind == CN_REF_INHERIT) n_inherit++;
        }
    }
    if (n_nodes >= UINT32_MAX / 2 || n_inherit >= UINT32_MAX / 2 || n_binds >= UINT32_MAX / 2)
        return cn_error_set(CN_EINVAL, "too many nodes or references for the symbol graph");
    n_sym = n_nodes - n_files;
    c->n_nodes = (uint32_t)n_nodes;
    c->n_files = (uint32_t)n_files;
    c->n_sym = (uint32_t)n_sym;
    c->nodes = calloc(n_nodes + 1, sizeof *c->nodes);
    c->files = calloc(n_files + 1, sizeof *c->files);
    c->by_name = malloc((n_sym + 1) * sizeof *c->by_name);
    {
        size_t ks = 1024;
        while (ks < 2 * (n_sym + 1)) ks *= 2;
        c->kids.keys = malloc(ks * sizeof *c->kids.keys);
        c->kids.vals = malloc(ks * sizeof *c->kids.vals);
        c->kids.mask = ks - 1;
        if (c->kids.vals) memset(c->kids.vals, 0xff, ks * sizeof *c->kids.vals);
    }
    c->mods = calloc(n_files + 1, sizeof *c->mods);
    c->paths = calloc(n_files + 1, sizeof *c->paths);
    c->bnames = calloc(n_files + 1, sizeof *c->bnames);
    c->binds = calloc(n_binds + 1, sizeof *c->binds);
    c->stars = calloc(n_binds + 1, sizeof *c->stars);
    c->base_off = calloc(n_nodes + 2, sizeof *c->base_off);
    c->base_ref = calloc(n_inherit + 1, sizeof *c->base_ref);
    if (!c->nodes || !c->files || !c->by_name || !c->kids.keys || !c->kids.vals || !c->mods ||
        !c->paths || !c->bnames || !c->binds || !c->stars || !c->base_off || !c->base_ref)
        return cn_error_set(CN_ENOMEM, "out of memory building the symbol graph");
    n_sym = 0;
    for (size_t i = 0; i < n; i++) {
        const cn_file_rec *r = &recs[i];
        gfile *gf;
        uint32_t base = id;
        if (r->status != CN_REC_PARSED) continue;
        gf = &c->files[fi];
        gf->rec = r;
        gf->path = r->path;
        gf->node = base;
        gf->lang = lang_of(r->language);
        if (gf->lang == LANG_PY) {
            if ((rc = py_module_name(r->path, &gf->module, &gf->is_pkg, &gf->pyi)) < 0) return rc;
            if (gf->module) n_suf += py_suffixes(gf->module, NULL, 0, 0);
        }
        {
            const char *b = strrchr(r->path, '/');
            c->nodes[id] = (gnode){b ? b + 1 : r->path, NONE, NONE, fi, 0, CN_NODE_FILE};
        }
        id++;
        for (size_t k = 0; k < r->n_nodes; k++) {
            const cn_rec_node *x = &r->nodes[k];
            const char *nm = cn_rec_str(r, x->name);
            uint32_t parent = base;
            if (x->parent >= 0) {
                if ((size_t)x->parent >= k)
                    return cn_error_set(CN_EINVAL, "%s: node %zu has parent %d, not an earlier node",
                                        r->path, k, (int)x->parent);
                parent = base + 1 + (uint32_t)x->parent;
            }
            c->nodes[id] = (gnode){nm ? nm : "", name_add(&c->names, nm ? nm : ""), parent, fi, x->flags, x->kind};
            if (c->nodes[id].nid == NONE) return cn_error_set(CN_ENOMEM, "out of memory building the symbol graph");
            kid_add(&c->kids, parent, c->nodes[id].nid, id);
            n_sym++;
            id++;
        }
        for (size_t k = 0; k < r->n_refs; k++)
            if (r->refs[k].from >= 0 && (size_t)r->refs[k].from >= r->n_nodes)
                return cn_error_set(CN_EINVAL, "%s: reference %zu is from node %d of %zu", r->path, k,
                                    (int)r->refs[k].from, r->n_nodes);
        fi++;
    }
    /* by_name: a counting sort by name id, ids ascending within each */
    if ((c->name_off = calloc((size_t)c->names.n + 2, sizeof *c->name_off)) == NULL)
        return cn_error_set(CN_ENOMEM, "out of memory building the symbol graph");
    for (uint32_t v = 0; v < c->n_nodes; v++)
        if (c->nodes[v].nid != NONE) c->name_off[c->nodes[v].nid + 1]++;
    c->n_node_names = c->names.n;
    for (uint32_t k = 0; k < c->names.n; k++) c->name_off[k + 1] += c->name_off[k];
    {
        uint32_t *fill = calloc((size_t)c->names.n + 1, sizeof *fill);
        if (fill == NULL) return cn_error_set(CN_ENOMEM, "out of memory building the symbol graph");
        for (uint32_t v = 0; v < c->n_nodes; v++) {
            uint32_t k = c->nodes[v].nid;
            if (k != NONE) c->by_name[c->name_off[k] + fill[k]++] = v;
        }
        free(fill);
    }

    /* modules, paths, basenames; the suffix table is sized from the module
     * names themselves (see py_suffixes) */
    if ((c->msuf = calloc(n_suf + 1, sizeof *c->msuf)) == NULL)
        return cn_error_set(CN_ENOMEM, "out of memory building the symbol graph");
    for (uint32_t f = 0; f < c->n_files; f++) {
        gfile *gf = &c->files[f];
        const char *b = strrchr(gf->path, '/');
        c->paths[c->n_paths++] = (strent){gf->path, f, 0};
        c->bnames[c->n_bnames++] = (strent){b ? b + 1 : gf->path, f, 0};
        if (gf->module && gf->module[0]) {
            c->mods[c->n_mods++] = (strent){gf->module, f, gf->pyi ? 1u : 0u};
            c->n_msuf += py_suffixes(gf->module, c->msuf + c->n_msuf, f, gf->pyi ? 1u : 0u);
        }
    }
    qsort(c->mods, c->n_mods, sizeof *c->mods, cmp_strent);
    qsort(c->msuf, c->n_msuf, sizeof *c->msuf, cmp_strent);
    qsort(c->paths, c->n_paths, sizeof *c->paths, cmp_strent);
    qsort(c->bnames, c->n_bnames, sizeof *c->bnames, cmp_strent);

    /* Python import bindings and star imports; INHERIT refs by class */
    for (uint32_t f = 0; f < c->n_files; f++) {
        gfile *gf = &c->files[f];
        const cn_file_rec *r = gf->rec;
        for (size_t k = 0; k < r->n_refs; k++) {
            const cn_rec_ref *ref = &r->refs[k];
            uint32_t from = ref->from < 0 ? gf->node : gf->node + 1 + (uint32_t)ref->from;
            if (ref->kind == CN_REF_INHERIT) c->base_off[from + 1]++;
            if (gf->lang != LANG_PY || ref->kind != CN_REF_IMPORT) continue;
            {
                const char *nm = cn_rec_str(r, ref->name), *t = cn_rec_str(r, ref->target);
                uint32_t scope = gf->node;
                if (nm == NULL) continue;
                if (t == NULL) t = nm;
                for (uint32_t x = from; x != NONE && x != gf->node; x = c->nodes[x].parent)
                    if (is_func(c->nodes[x].kind)) {
                        scope = x;
                        break;
                    }
                if (strcmp(nm, "*") == 0 || cn_str_has_suffix(t, "*")) {
                    if (scope == gf->node) c->stars[n_stars++] = (star){t, f, UNSET};
                } else {
                    uint32_t nid = name_add(&c->names, nm), head = NONE;
                    const char *dot = strchr(nm, '.');
                    if (dot != NULL && strcmp(nm, t) == 0) head = name_add_n(&c->names, nm, (size_t)(dot - nm));
                    if (nid == NONE || (dot != NULL && strcmp(nm, t) == 0 && head == NONE))
                        return cn_error_set(CN_ENOMEM, "out of memory building the symbol graph");
                    c->binds[c->n_binds++] =
                        (bind){nm, nid, head, t, scope, (uint32_t)k, f, {NONE, NONE}, {0, 0}, {-1, -1}, -1};
                }
            }
        }
    }
    /* star ranges: stars were appended file by file */
    {
        size_t s = 0;
        for (uint32_t f = 0; f < c->n_files; f++) {
            c->files[f].star_lo = (uint32_t)s;
            while (s < n_stars && c->stars[s].file == f) s++;
            c->files[f].star_hi = (uint32_t)s;
        }
        c->n_stars = n_stars;
    }
    qsort(c->binds, c->n_binds, sizeof *c->binds, cmp_bind);
    {
        size_t s = 0;
        for (uint32_t f = 0; f < c->n_files; f++) {
            c->files[f].bind_lo = (uint32_t)s;
            while (s < c->n_binds && c->binds[s].file == f) s++;
            c->files[f].bind_hi = (uint32_t)s;
        }
    }
    for (uint32_t i = 0; i < c->n_nodes; i++) c->base_off[i + 1] += c->base_off[i];
    {
        uint32_t *fill = calloc(c->n_nodes + 1, sizeof *fill);
        if (fill == NULL) return cn_error_set(CN_ENOMEM, "out of memory building the symbol graph");
        for (uint32_t f = 0; f < c->n_files; f++) {
            const gfile *gf = &c->files[f];
            const cn_file_rec *r = gf->rec;
            for (size_t k = 0; k < r->n_refs; k++) {
                const cn_rec_ref *ref = &r->refs[k];
                uint32_t from = ref->from < 0 ? gf->node : gf->node + 1 + (uint32_t)ref->from;
                if (ref->kind != CN_REF_INHERIT) continue;
                c->base_ref[c->base_off[from] + fill[from]++] = (uint32_t)k;
            }
        }
        free(fill);
    }
    return 0;
}

int cn_graph_resolve(const cn_file_rec *recs, size_t n, const bool *only, cn_graph_tmp_edges *out, uint32_t *n_nodes)
{
    ctx c;
    int rc;
    memset(&c, 0, sizeof c);
    c.out = out;
    if ((rc = setup(&c, recs, n)) < 0) {
        ctx_free(&c);
        return rc;
    }
    for (uint32_t i = 0; i < c.n_nodes && !c.oom; i++)
        if (c.nodes[i].parent != NONE && (only == NULL || only[c.files[c.nodes[i].file].rec - recs]))
            emit(&c, CN_EDGE_CONTAINS, c.nodes[i].parent, i, 0, 0, "", false);
    for (uint32_t f = 0; f < c.n_files && !c.oom; f++) {
        if (only != NULL && !only[c.files[f].rec - recs]) continue;
        switch (c.files[f].lang) {
        case LANG_PY: py_file(&c, f); break;
        case LANG_C: c_file(&c, f); break;
        default: other_file(&c, f); break;
        }
    }
    *n_nodes = c.n_nodes;
    ctx_free(&c);
    if (c.oom) return cn_error_set(CN_ENOMEM, "out of memory building the symbol graph");
    return 0;
}

/* ---- signatures ------------------------------------------------------------ */

static uint64_t mix(uint64_t h, uint64_t v)
{
    h ^= v + 0x9E3779B97F4A7C15ull + (h << 6) + (h >> 2);
    return h * 0xff51afd7ed558ccdull;
}

static uint64_t mix_str(uint64_t h, const char *s)
{
    if (s == NULL) return mix(h, 0x5bd1e995u);
    for (; *s; s++) h = mix(h, (unsigned char)*s);
    return mix(h, 0x100);
}

uint64_t cn_graph_signature(const cn_file_rec *r)
{
    uint64_t h = mix_str(0x6a09e667f3bcc908ull, r->language);
    h = mix(h, r->n_nodes);
    for (size_t k = 0; k < r->n_nodes; k++) {
        const cn_rec_node *x = &r->nodes[k];
        h = mix(h, x->kind);
        h = mix(h, x->flags);
        h = mix(h, (uint64_t)(int64_t)x->parent);
        /* a block's name is its line ("<block:86>"), which no reference
         * can name: a line added above it changes nothing for others */
        h = mix_str(h, x->kind == CN_NODE_BLOCK ? "" : cn_rec_str(r, x->name));
    }
    for (size_t k = 0; k < r->n_refs; k++) {
        const cn_rec_ref *x = &r->refs[k];
        if (x->kind != CN_REF_IMPORT && x->kind != CN_REF_INHERIT) continue;
        h = mix(h, x->kind);
        h = mix(h, (uint64_t)(int64_t)x->from);
        h = mix_str(h, cn_rec_str(r, x->name));
        h = mix_str(h, cn_rec_str(r, x->target));
    }
    return h;
}
