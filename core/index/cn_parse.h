/* SPDX-License-Identifier: Apache-2.0 */
/* The parse stage of the compiler: reads every listed file, fingerprints
 * it, and runs its language backend, on several threads. */
#ifndef CN_PARSE_H
#define CN_PARSE_H

#include "cn_filerec.h"
#include "cn_langs.h"
#include "cn_walk.h"

typedef struct cn_parse_stats {
    size_t parsed;
    size_t reused;
    size_t unread;          /* of the reused, those known unchanged by their stamp */
    size_t binary;
    size_t undecodable;
    size_t unreadable;
    size_t failed;
    size_t left_unchanged;  /* of the binary, undecodable and failed, those
                               left out as the last build did (unchanged
                               since: not read again, or not parsed) */
    uint64_t bytes;
    uint64_t lines;
} cn_parse_stats;

/* Called (from worker threads, serialised by the stage) after each file. */
typedef void (*cn_parse_progress_fn)(size_t done, size_t total, void *data);

/* Optional: a previous build's record of `path`, handed over for reuse
 * (incremental builds) when the backend version matches and either the
 * file's stamp and size (stamp non-NULL: the file is not read at all) or
 * its content hash (stamp NULL) say it is unchanged.  The caller moves the
 * record's contents out (cn_file_rec_move).  Returns NULL when the file
 * must be read, or parsed.  Called from the worker threads, each path at
 * most once per way. */
typedef cn_file_rec *(*cn_parse_lookup_fn)(const char *path, const cn_file_stamp *stamp, uint64_t size,
                                           uint64_t hash, const char *lang_version, void *data);

typedef struct cn_parse_opts {
    const char *root;
    cn_langs *langs;
    int threads;                    /* <= 0: the number of online CPUs */
    cn_parse_progress_fn progress;
    void *progress_data;
    cn_parse_lookup_fn lookup;
    void *lookup_data;
} cn_parse_opts;

/* Fills recs[i] for files[i].  Per-file problems are recorded in the
 * record's status, not returned; only a backend that cannot be loaded or
 * an allocation failure fails the stage. */
int cn_parse_files(const cn_parse_opts *opts, const cn_walk_file *files, size_t n,
                   cn_file_rec *recs, cn_parse_stats *stats);

/* Moves a record's contents into dst (for reuse across builds), leaving in
 * src only its path, which dst does not take. */
void cn_file_rec_move(cn_file_rec *src, cn_file_rec *dst);

#endif /* CN_PARSE_H */
