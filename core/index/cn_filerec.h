/* SPDX-License-Identifier: Apache-2.0 */
/* What parsing one file yields, in the compiler's own form: the nodes and
 * references a language backend emitted, with their strings in one pool.
 * Records of unchanged files are reused by incremental builds. */
#ifndef CN_FILEREC_H
#define CN_FILEREC_H

#include <stdbool.h>
#include <stdint.h>

#include "../util/cn_util.h"

/* What stat(2) says of a file, to tell that it has not changed without
 * reading it (as git's index does): any write changes the ctime, which no
 * tool can set back. */
typedef struct cn_file_stamp {
    uint64_t mtime_ns, ctime_ns, ino, dev;
} cn_file_stamp;

typedef struct cn_rec_node {
    uint8_t kind;            /* cn_node_kind */
    uint32_t flags;
    uint32_t start_line;     /* 1-based inclusive */
    uint32_t end_line;
    int32_t parent;          /* index in this file's nodes, -1 = the file */
    uint32_t name;           /* offsets into the record's pool */
    uint32_t qualname;
} cn_rec_node;

typedef struct cn_rec_ref {
    uint8_t kind;            /* cn_ref_kind */
    int32_t from;            /* index in this file's nodes, -1 = the file */
    uint32_t line;           /* 1-based */
    uint32_t column;
    uint32_t name;           /* pool offsets; target UINT32_MAX when absent */
    uint32_t target;
} cn_rec_ref;

typedef enum cn_rec_status {
    CN_REC_PARSED = 0,
    CN_REC_BINARY,           /* a NUL byte: not text */
    CN_REC_UNDECODABLE,      /* not valid UTF-8 */
    CN_REC_UNREADABLE,       /* vanished or unreadable since the listing */
    CN_REC_FAILED            /* the backend reported an error */
} cn_rec_status;

typedef struct cn_file_rec {
    char *path;
    const char *language;    /* borrowed from the language table */
    bool is_test;
    cn_rec_status status;
    char *error;             /* for CN_REC_FAILED / UNREADABLE */
    bool lasting;            /* CN_REC_FAILED: the backend gave up on this
                                content (an error, out of time), not for a
                                passing cause such as memory */
    uint64_t hash;           /* of the content */
    uint64_t size;
    cn_file_stamp stamp;     /* when it was listed (zero: unknown) */
    uint32_t n_lines;
    cn_rec_node *nodes;
    size_t n_nodes, cap_nodes;
    cn_rec_ref *refs;
    size_t n_refs, cap_refs;
    cn_buf pool;             /* NUL-separated strings */
    bool reused;             /* taken from the previous build, not parsed */
    bool unread;             /* ... by its stamp alone: not even read */
    bool borrowed;           /* nodes, refs and pool are the previous build's
                                records file, mapped read-only (cn_records.c):
                                not to be freed or written */

    /* BM25 input, computed once per content (cn_docterms.c): document k is
     * the file node for k = 0, node k-1 otherwise; its distinct terms with
     * their counts are the pairs dt[2i] (the term's ordinal: the n-th
     * string of `terms`), dt[2i+1] (count) for i in [doc_off[k], doc_off[k+1]). */
    cn_buf terms;            /* the file's distinct terms, NUL-separated */
    uint32_t *dt;
    size_t n_dt;
    uint32_t *doc_off;       /* n_nodes + 2 entries, NULL until computed */
} cn_file_rec;

static inline const char *cn_rec_str(const cn_file_rec *r, uint32_t off)
{
    return off == UINT32_MAX ? NULL : r->pool.data + off;
}

/* Whether a record that is not parsed would be left out again as long as
 * its content and backend stay the same: then the next build keeps it as
 * it is (cn_records.h) rather than reading and parsing it again. */
static inline bool cn_rec_left_out_for_good(const cn_file_rec *r)
{
    return r->status == CN_REC_BINARY || r->status == CN_REC_UNDECODABLE ||
           (r->status == CN_REC_FAILED && r->lasting);
}

void cn_file_rec_clear(cn_file_rec *r);   /* frees contents, keeps nothing */

/* Computes the BM25 documents of a parsed record from its source: each
 * node's document is its qualified name, the path and the lines it owns
 * (its lines minus its children's), so every line counts once. */
int cn_docterms_build(cn_file_rec *r, const char *src, size_t len);

#endif /* CN_FILEREC_H */
