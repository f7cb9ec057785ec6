/* SPDX-License-Identifier: Apache-2.0 */
/* The container every index file uses: a fixed header, a table of typed
 * sections, and a checksum over all of it.  Writers build the file in
 * memory and publish it with write-to-temporary + fsync + rename; readers
 * map it read-only and validate magic, version, sizes, section bounds and
 * the checksum before handing out any pointer, so a truncated or corrupted
 * file is refused with a message and never read out of bounds. */
#ifndef CN_IDXFILE_H
#define CN_IDXFILE_H

#include <stddef.h>
#include <stdint.h>

#include "../util/cn_util.h"

#define CN_IDX_MAGIC_LEN 8
#define CN_IDX_MAX_SECTIONS 64

/* ---- writing ------------------------------------------------------------ */
typedef struct cn_idx_writer cn_idx_writer;

/* magic: exactly 8 bytes ("CNBM25\0\0"); version: the format's version. */
int cn_idx_writer_new(const char magic[CN_IDX_MAGIC_LEN], uint32_t version, cn_idx_writer **out);
/* Adds a section (copied).  Section ids are the format's own; each id once.
 * Sections are 8-byte aligned in the file. */
int cn_idx_writer_add(cn_idx_writer *w, uint32_t id, const void *data, size_t size);
/* Adds a section whose bytes the writer takes over (malloc'd). */
int cn_idx_writer_add_owned(cn_idx_writer *w, uint32_t id, void *data, size_t size);
/* Adds a section by reference: its bytes are neither copied nor freed, and
 * must stay as they are until the writer is written and freed (a copy of a
 * large array is as many fresh pages). */
int cn_idx_writer_add_ref(cn_idx_writer *w, uint32_t id, const void *data, size_t size);
/* Adds a section made of pieces, by reference like cn_idx_writer_add_ref:
 * its bytes are the pieces' in order (the array itself is copied; pieces
 * that follow one another in memory are written with one call). */
typedef struct cn_idx_piece {
    const void *data;
    size_t size;
} cn_idx_piece;
int cn_idx_writer_add_pieces(cn_idx_writer *w, uint32_t id, const cn_idx_piece *pieces, size_t n);
/* Writes `path` atomically (temporary file in the same directory, fsync,
 * rename; the fsync deferred in a directory under cn_fsync_dir_begin).
 * The writer stays usable for another path. */
int cn_idx_writer_write(cn_idx_writer *w, const char *path);
/* The checksum of the file cn_idx_writer_write last wrote (what
 * cn_idx_checksum gives for it once opened). */
uint64_t cn_idx_writer_checksum(const cn_idx_writer *w);
void cn_idx_writer_free(cn_idx_writer *w);

/* ---- reading ------------------------------------------------------------ */
typedef struct cn_idx_file cn_idx_file;

/* Maps and validates `path` against the expected magic and version.
 * Errors (CN_ENOTFOUND, CN_ECORRUPT with what is wrong, CN_EUNSUPPORTED for
 * another format version) name the path. */
int cn_idx_open(const char *path, const char magic[CN_IDX_MAGIC_LEN], uint32_t version,
                cn_idx_file **out);
/* A section's bytes (NULL and size 0 when absent).  The pointer stays valid
 * until cn_idx_close.  `elem` > 0 additionally requires the size to be a
 * multiple of elem (else NULL with CN_ECORRUPT set). */
const void *cn_idx_section(const cn_idx_file *f, uint32_t id, size_t elem, size_t *size);
const char *cn_idx_path(const cn_idx_file *f);
/* The checksum in its header (verified at open): tells one version of a
 * file from another, for a file that refers to it. */
uint64_t cn_idx_checksum(const cn_idx_file *f);
void cn_idx_close(cn_idx_file *f);

/* 64-bit checksum used by the container (exposed for tests and for content
 * fingerprints). */
uint64_t cn_hash64(const void *data, size_t len, uint64_t seed);

/* The same hash over data given in pieces: init, update with each piece in
 * order, final gives what cn_hash64 gives for their concatenation. */
typedef struct cn_hash64_state {
    uint64_t a, b, c, d, len;
    unsigned char buf[32];
    size_t nbuf;
} cn_hash64_state;
void cn_hash64_init(cn_hash64_state *s, uint64_t seed);
void cn_hash64_update(cn_hash64_state *s, const void *data, size_t len);
uint64_t cn_hash64_final(const cn_hash64_state *s);

#endif /* CN_IDXFILE_H */
