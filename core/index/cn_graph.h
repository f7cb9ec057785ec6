/* SPDX-License-Identifier: Apache-2.0 */
/* The symbol graph: typed edges between the nodes of the nodes index
 * (cn_nodes.h; node ids are shared) in compact adjacency form, readable in
 * both directions.
 *
 * Edge types:
 *   CONTAINS    parent -> child, for every node (a file node -> its
 *               top-level nodes, a class -> its methods, ...).  Line and
 *               column are 0 and the name is "".
 *   CALLS       a call site in the source node -> the called definition.
 *   REFERENCES  a name used without a call -> what it names.
 *   IMPORTS     an import statement / #include -> the module's file node
 *               or the imported symbol.
 *   INHERITS    a class -> its base class.
 *
 * Every edge but CONTAINS comes from one reference a language backend
 * emitted (cn_filerec.h) and keeps its use site (1-based line, 0-based
 * byte column) and the name as written there ("self.save",
 * "os.path.join"; for imports the imported target, ".models.User",
 * "list.h", "<stdio.h>").  A reference whose target cannot be found in
 * the repository (builtins, external modules, calls on objects of unknown
 * type, field calls through function pointers) still gives an edge, an
 * unresolved one: its other end is UINT32_MAX and only its name tells
 * what it meant; cn_graph_unresolved() finds such edges by name.
 *
 * How names are resolved (per language) is described at the top of
 * cn_graph_resolve.c; the file layout at the top of cn_graph_build.c. */
#ifndef CN_GRAPH_H
#define CN_GRAPH_H

#include <stddef.h>
#include <stdint.h>

#include "cn_filerec.h"

#include <codenib/index.h>

#define CN_GRAPH_FILE "graph.bin"
#define CN_GRAPH_MAGIC "CNGRAPH\0"
#define CN_GRAPH_VERSION 1u

/* cn_edge_type and CN_EDGE_* come from the public <codenib/index.h>. */
#define CN_EDGE_TYPE_MAX 5
/* Mask bit of one edge type, for the type_mask arguments below. */
#define CN_EDGE_BIT(t) (1u << (unsigned)(t))
#define CN_EDGE_ALL                                                                   \
    (CN_EDGE_BIT(CN_EDGE_CONTAINS) | CN_EDGE_BIT(CN_EDGE_CALLS) |                      \
     CN_EDGE_BIT(CN_EDGE_REFERENCES) | CN_EDGE_BIT(CN_EDGE_IMPORTS) |                  \
     CN_EDGE_BIT(CN_EDGE_INHERITS))
/* Every type that comes from a use site (all but CONTAINS). */
#define CN_EDGE_USES (CN_EDGE_ALL & ~CN_EDGE_BIT(CN_EDGE_CONTAINS))

/* Directions for cn_graph_edges(). */
#define CN_GRAPH_OUT 0
#define CN_GRAPH_IN 1

/* Short name of an edge type ("calls"), "unknown" for anything else. */
const char *cn_edge_type_name(int type);

/* ---- building ------------------------------------------------------------ */

typedef struct cn_graph_stats {
    size_t nodes;
    size_t edges;                                /* all, after deduplication */
    size_t by_type[CN_EDGE_TYPE_MAX + 1];        /* indexed by cn_edge_type */
    size_t resolved_by_type[CN_EDGE_TYPE_MAX + 1];
    size_t resolved;        /* use-site edges (not CONTAINS) with a target node */
    size_t unresolved;      /* use-site edges without one */
} cn_graph_stats;

/* Builds the graph of the records `recs[0, n)` and writes it atomically to
 * `path`.  Only records with status CN_REC_PARSED count, in the given
 * order, numbered exactly as cn_nodes_write numbers them (each file node,
 * then that record's nodes in order).  `stats` may be NULL.  The bytes
 * depend only on the input: identical records give an identical file.
 * Errors: CN_ENOMEM, CN_EINVAL (too many nodes/edges, or a record whose
 * node parent or reference source is not an earlier node of its file),
 * CN_EIO. */
int cn_graph_write(const cn_file_rec *recs, size_t n, const char *path, cn_graph_stats *stats);

/* What the resolution of every file's references depends on in record r:
 * its language, its nodes (kind, flags, parent, name -- but not the name of
 * a module-level block, which is its line) and its import and inheritance
 * references (kind, source node, name, target) -- not its calls and other
 * references, nor any line or column.  Two records with the same
 * signature give every other file the same edges. */
uint64_t cn_graph_signature(const cn_file_rec *r);

/* The version of the resolution rules: edges kept from a previous build
 * are only reused by a build whose rules are the same.  Raise it with any
 * change to what cn_graph_resolve produces. */
#define CN_GRAPH_RESOLVER 2

/* ---- reading ------------------------------------------------------------- */

typedef struct cn_graph cn_graph;

/* An incremental cn_graph_write: the edges out of the files with keep[i]
 * set are copied from the previous build's graph `prev` (opened with
 * cn_graph_open), the other files are resolved.  Valid only when the
 * previous build had the same parsed files, in the same order, with the
 * same signatures (cn_graph_signature), under the same CN_GRAPH_RESOLVER;
 * the bytes are then those cn_graph_write would give.  Returns 1 when the
 * re-resolved files' edges differ from their old ones in lines and columns
 * only, and the previous graph's sections were written with those patched
 * in; 0 when the graph was assembled from the old edges and the fresh.
 * CN_EINVAL or CN_ECORRUPT when the previous graph does not fit (another
 * node count, a damaged file): the caller builds in full. */
int cn_graph_write_reusing(const cn_file_rec *recs, size_t n, const bool *keep, const cn_graph *prev,
                           const char *path, cn_graph_stats *stats);

typedef struct cn_graph_edge {
    uint32_t node;          /* the other end; UINT32_MAX for an unresolved target
                               (for cn_graph_unresolved: the source) */
    uint8_t type;           /* cn_edge_type */
    uint8_t resolved;       /* 1 when the target is a node */
    uint32_t line;          /* 1-based use site, 0 for contains */
    uint32_t column;        /* 0-based byte column of the use site */
    const char *name;       /* the name as written at the use site, "" for
                               contains; valid until cn_graph_close */
} cn_graph_edge;

/* Maps and validates `path`: the container (magic, version, checksum) and
 * this format's own consistency (section sizes agree with the counts,
 * offsets monotonic, every node id < count, every name in bounds, index
 * entries pointing at edges that match them).  Errors: CN_ENOTFOUND,
 * CN_EUNSUPPORTED (another format version), CN_ECORRUPT naming the path,
 * CN_ENOMEM, CN_EIO.  A reader is never modified after opening: any number
 * of threads may query it at once. */
int cn_graph_open(const char *path, cn_graph **out);
void cn_graph_close(cn_graph *g);
uint32_t cn_graph_node_count(const cn_graph *g);
size_t cn_graph_edge_count(const cn_graph *g);

/* The edges of `node` whose type is in `type_mask` (CN_EDGE_BIT), going out
 * of it (direction CN_GRAPH_OUT: out[i].node is the target, UINT32_MAX when
 * unresolved) or coming into it (CN_GRAPH_IN: out[i].node is the source;
 * only resolved edges have a target to come into).  Sorted by (type, line,
 * column, other node); unresolved targets come after resolved ones at the
 * same site.  Fills at most `max` entries and returns how many match in
 * all (0 for a node out of range). */
size_t cn_graph_edges(const cn_graph *g, uint32_t node, uint32_t type_mask, int direction,
                      cn_graph_edge *out, size_t max);

/* The unresolved edges (types in type_mask) whose written name is exactly
 * `name`, or whose last component (after the last '.', "->" or "::") is
 * `name`: "loads" finds calls written "json.loads" and "loads".  out[i].node
 * is the edge's source.  Sorted by (source, type, line, column); fills at
 * most `max`, returns the total. */
size_t cn_graph_unresolved(const cn_graph *g, const char *name, uint32_t type_mask,
                           cn_graph_edge *out, size_t max);

/* The use-site edge (CALLS, REFERENCES, IMPORTS or INHERITS, going out of
 * `node`) written at (line, column): one on that line whose written name
 * spans the column, i.e. edge.column <= column <= edge.column +
 * strlen(edge.name) (the whole written text; it contains the span of the
 * name's last component).  `node` is the innermost node containing the
 * position (find it with cn_nodes_at).  When several edges span the
 * column, the one starting last wins, then a resolved one, then the first
 * in edge order.  CN_ENOTFOUND when none does. */
int cn_graph_at(const cn_graph *g, uint32_t node, uint32_t line, uint32_t column,
                cn_graph_edge *out);

/* ---- internal: between cn_graph_resolve.c and cn_graph_build.c ---------- */

/* One edge before sorting: names are borrowed from the records' pools (or
 * are string literals) and stay valid while the records do. */
/* The file layout shared by cn_graph_build.c (which documents it) and
 * cn_graph_read.c: section ids and the on-disk records. */
enum {
    CN_GRAPH__META = 1,
    CN_GRAPH__OUT_OFFS,
    CN_GRAPH__EDGES,
    CN_GRAPH__IN_OFFS,
    CN_GRAPH__IN_EDGES,
    CN_GRAPH__UNRES_NAME,
    CN_GRAPH__UNRES_LAST,
    CN_GRAPH__STRTAB
};

typedef struct cn_graph__edge_disk {
    uint32_t src, dst, line, column, name;
    uint8_t type, resolved;
    uint16_t reserved;
} cn_graph__edge_disk;

typedef struct cn_graph__unres_disk {
    uint32_t key, edge;
} cn_graph__unres_disk;

typedef struct cn_graph_tmp_edge {
    uint32_t src;
    uint32_t dst;           /* UINT32_MAX: unresolved */
    uint32_t line;
    uint32_t column;
    const char *name;
    uint32_t key;           /* offset in name of its last component */
    uint8_t type;
} cn_graph_tmp_edge;

typedef struct cn_graph_tmp_edges {
    cn_graph_tmp_edge *items;
    size_t len, cap;
} cn_graph_tmp_edges;

/* Resolves the references of the parsed records into edges (unsorted,
 * possibly with duplicates) appended to *out: all of them, or with `only`
 * (n entries) those of the records with only[i] set, whose CONTAINS edges
 * too; *n_nodes receives the node count of all records.  The edges of one
 * file do not depend on which others are resolved with it, nor in what
 * order (a lookup cut short by a cycle is never cached).
 * CN_ENOMEM / CN_EINVAL. */
int cn_graph_resolve(const cn_file_rec *recs, size_t n, const bool *only, cn_graph_tmp_edges *out,
                     uint32_t *n_nodes);

/* The mapped arrays of a graph (semi-private, for cn_graph_write_reusing),
 * valid until cn_graph_close. */
typedef struct cn_graph__raw {
    const cn_graph__edge_disk *edges;
    const uint32_t *out_offs, *in_offs, *in_edges;
    const uint32_t *unres_name;
    const cn_graph__unres_disk *unres_last;
    const char *strtab;
    size_t strtab_size;
    uint32_t n_nodes, n_edges, n_in, n_unres;
} cn_graph__raw;
void cn_graph__raw_of(const cn_graph *g, cn_graph__raw *r);

#endif /* CN_GRAPH_H */
