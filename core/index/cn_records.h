/* SPDX-License-Identifier: Apache-2.0 */
/* The per-file parse records of a build, kept beside its indexes so that
 * the next build re-parses only files whose content or backend changed. */
#ifndef CN_RECORDS_H
#define CN_RECORDS_H

#include <stdbool.h>

#include "cn_filerec.h"
#include "cn_langs.h"

typedef struct cn_records cn_records;

/* Writes the parsed records (without their BM25 terms: the build's own
 * bm25.bin has them), and those of files left out for good
 * (cn_rec_left_out_for_good), with each file's backend version, taken from
 * the opened backends in `langs`).  `started_ns` is when the build began
 * listing files (CLOCK_REALTIME): stamps older than that, by a margin, can
 * be trusted by the next build (cn_records_match).  The records go in
 * `path` and in shards beside it (records-NN.bin); a shard that would be
 * written as the previous build `prev` (opened, or NULL) wrote it is linked
 * to that one's file instead. */
int cn_records_write(const cn_file_rec *recs, size_t n, const cn_langs *langs, uint64_t started_ns,
                     const cn_records *prev, const char *path);
/* Loads a records file; language names are mapped onto `langs`. */
int cn_records_open(const char *path, const cn_langs *langs, cn_records **out);
/* The record of `path` when it still holds -- parsed, or left out for good
 * (binary, undecodable, failed: a record with that status and its error) --
 * that is when its backend version matches and:
 * with `stamp`, its stamp and size equal these and the stamp is older than
 * the build that made it by more than CN_RECORDS_STAMP_MARGIN_NS (a file
 * changed within the same clock tick as it was read would otherwise look
 * unchanged: git's "racy" case); without, its content hash equals `hash`.
 * A record matched is handed out once: it is not matched again (nor
 * while another caller is checking it), and its caller may move its
 * contents out (cn_file_rec_move) while other threads match other paths;
 * the lookups read only the paths of the mapped file, never a record's
 * fields, until they have claimed it.  Their nodes, references and strings
 * stay in the mapped file (`borrowed`): the records are closed after the
 * build is done with what it moved out. */
#define CN_RECORDS_STAMP_MARGIN_NS 2000000000ull
cn_file_rec *cn_records_match(cn_records *r, const char *path, const cn_file_stamp *stamp, uint64_t size,
                              uint64_t hash, const char *lang_version);
/* Where the documents of the previous build (a file node and each of its
 * nodes, files in order: the numbering of the nodes and BM25 indexes) went
 * in this one: *remap (malloc'd, *n_old entries) gives each old document's
 * new number, or UINT32_MAX when its file is not among recs[0, n) as a
 * reused record (it changed, or is gone).  from_old[k] (n entries, set
 * here) tells whether recs[k]'s documents are among the kept ones; *kept
 * counts the documents kept. */
int cn_records_doc_map(const cn_records *r, const cn_file_rec *recs, size_t n, uint32_t **remap, uint32_t *n_old,
                       bool *from_old, uint32_t *kept);
/* How many documents the build numbered: a file node and each of its
 * nodes, for every record (what its bm25.bin must hold). */
uint64_t cn_records_doc_count(const cn_records *r);
/* Whether the build had a record for `path` at all, parsed or left out. */
bool cn_records_has(const cn_records *r, const char *path);
/* How many files the build parsed (the records cn_records_at numbers), and
 * how many it left out for good. */
size_t cn_records_count(const cn_records *r);
size_t cn_records_left_count(const cn_records *r);
/* The i-th record as opened; a record taken by a build (cn_file_rec_move)
 * keeps only its path. */
const cn_file_rec *cn_records_at(const cn_records *r, size_t i);
void cn_records_close(cn_records *r);

#endif /* CN_RECORDS_H */
