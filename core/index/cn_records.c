/* SPDX-License-Identifier: Apache-2.0 */
/* Parse records store (see cn_records.h).
 *
 * The records of a build are a head file and its shards.  The head,
 * "CNRECS\0\0" version 7 (all little-endian u32/u64):
 *   1 FILES   per file 96 bytes: path, language, version (STRTAB offsets),
 *             n_lines, hash(u64), size(u64), first node, node count,
 *             first ref, ref count, pool offset, pool length (within the
 *             file's shard), flags, shard; then the stamp: mtime, ctime
 *             (ns), inode, device (u64 each)
 *   5 STRTAB  NUL-terminated strings
 *   6 META    u64 when the build began listing files (ns since the epoch)
 *   7 LEFT    the files left out, per file 72 bytes: path, language,
 *             version, error (STRTAB offsets), status (cn_rec_status),
 *             zero, hash(u64), size(u64), then the stamp as in FILES
 *   8 SHARDS  per shard 16 bytes: the shard file's checksum (u64), its
 *             file count, zero
 * Files, and left-out files, are sorted by path (the walk's order).
 *
 * Shard s is "records-<s>.bin" (two digits) beside the head, "CNRSHRD\0"
 * version 1:
 *   1 META    u32 s, shard count, file count, zero
 *   2 NODES   per node 28 bytes: kind, flags, start, end, parent, name, qualname
 *   3 REFS    per ref 24 bytes: kind, from, line, column, name, target
 *   4 POOLS   the files' string pools, concatenated
 * holding the parsed files whose path hashes to s, in path order.  A
 * build whose files of a shard are all the previous build's, unchanged,
 * would write that shard byte for byte as it was: it links the previous
 * file instead (a one-file edit writes one shard, not the 5 MB of the
 * standard library's records), and the head names each shard by its
 * checksum, so that a shard of another build is never read as this one's.
 *
 * A file is left out when it is binary, not UTF-8, or its backend gave up
 * on it (a parse error or a parse out of time): unchanged, with the same
 * backend, it would be left out again, so the next build takes it as it
 * was without reading or parsing it (`compile --rebuild` retries it).
 *
 * The files' BM25 terms are not kept here: the build's bm25.bin holds the
 * same counts, and the next build takes an unchanged file's documents from
 * it (a build without a usable one re-parses every file). */
#include "cn_records.h"

#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>
#include <sys/types.h>
#include <string.h>
#include <unistd.h>

#include "cn_idxfile.h"

#define RECS_MAGIC "CNRECS\0\0"
#define RECS_VERSION 7
#define SHARD_MAGIC "CNRSHRD\0"
#define SHARD_VERSION 1
#define MAX_SHARDS 64

enum { S_FILES = 1, S_STRTAB = 5, S_META = 6, S_LEFT = 7, S_SHARDS = 8 };
enum { SH_META = 1, SH_NODES = 2, SH_REFS = 3, SH_POOLS = 4 };

typedef struct file_disk {
    uint32_t path, language, version, n_lines;
    uint64_t hash, size;
    uint32_t node0, n_nodes, ref0, n_refs, pool_off, pool_len, flags, shard;
    uint64_t mtime_ns, ctime_ns, ino, dev;
} file_disk;

typedef struct shard_disk {
    uint64_t checksum;
    uint32_t n_files, zero;
} shard_disk;

typedef struct left_disk {
    uint32_t path, language, version, error, status, zero;
    uint64_t hash, size;
    uint64_t mtime_ns, ctime_ns, ino, dev;
} left_disk;

typedef struct node_disk {
    uint32_t kind, flags, start, end;
    int32_t parent;
    uint32_t name, qualname;
} node_disk;

typedef struct ref_disk {
    uint32_t kind;
    int32_t from;
    uint32_t line, column, name, target;
} ref_disk;

/* An opened record's nodes and references are the file's own bytes (the
 * file stays mapped while the records are open): the disk layouts are
 * those of cn_rec_node and cn_rec_ref on the little-endian hosts codenib
 * supports, the kind in the low byte of its word. */
_Static_assert(sizeof(node_disk) == sizeof(cn_rec_node) && offsetof(cn_rec_node, flags) == offsetof(node_disk, flags) &&
                   offsetof(cn_rec_node, start_line) == offsetof(node_disk, start) &&
                   offsetof(cn_rec_node, end_line) == offsetof(node_disk, end) &&
                   offsetof(cn_rec_node, parent) == offsetof(node_disk, parent) &&
                   offsetof(cn_rec_node, name) == offsetof(node_disk, name) &&
                   offsetof(cn_rec_node, qualname) == offsetof(node_disk, qualname) && offsetof(cn_rec_node, kind) == 0,
               "a node record is read and written in place");
_Static_assert(sizeof(ref_disk) == sizeof(cn_rec_ref) && offsetof(cn_rec_ref, from) == offsetof(ref_disk, from) &&
                   offsetof(cn_rec_ref, line) == offsetof(ref_disk, line) &&
                   offsetof(cn_rec_ref, column) == offsetof(ref_disk, column) &&
                   offsetof(cn_rec_ref, name) == offsetof(ref_disk, name) &&
                   offsetof(cn_rec_ref, target) == offsetof(ref_disk, target) && offsetof(cn_rec_ref, kind) == 0,
               "a reference record is read and written in place");

/* A shard as opened: its sections, read in place. */
typedef struct shard {
    cn_idx_file *file;
    const node_disk *nodes;
    const ref_disk *refs;
    const char *pools;
    size_t n_nodes, n_refs, pool_len;
    uint32_t n_files;
} shard;

/* The parse workers look records up while others move records out
 * (cn_records_match): a lookup reads only what no move writes -- the paths
 * in the mapped head, searched through `paths` and `left_paths` -- and a
 * record's own fields only once it has claimed the record in `taken`. */
struct cn_records {
    cn_idx_file *file;     /* the head */
    shard *shards;         /* mapped: the records' nodes, refs and pools */
    uint32_t n_shards;
    cn_file_rec *recs;
    const char **paths;    /* recs[i]'s path in the head's STRTAB, in order */
    char **versions;
    uint32_t *docs;        /* per file n_nodes + 1, as opened (records move out) */
    size_t n;
    cn_file_rec *left;     /* the files left out (status not PARSED) */
    const char **left_paths;
    char **left_versions;
    size_t n_left;
    atomic_bool *taken;    /* recs, then left: handed out (or being checked) */
    uint64_t started_ns;   /* of the build that wrote them; 0 unknown */
};

static const char *version_of(const cn_langs *langs, const char *language)
{
    const cn_lang_entry *e = cn_langs_find(langs, language);
    return e && e->desc && e->desc->version ? e->desc->version : "";
}

static uint32_t st_add(cn_buf *b, const char *s)
{
    uint32_t off = (uint32_t)b->len;
    cn_buf_append(b, s, strlen(s) + 1);
    return off;
}

/* How many shards the records of n parsed files go in: 32 to 64 files
 * each, a power of two from 1 to MAX_SHARDS, so that every file's shard
 * stays where it was until the count of files crosses a power of two. */
static uint32_t shard_count(size_t n)
{
    uint32_t k = 1;
    while (k < MAX_SHARDS && (size_t)k * 64 <= n) k *= 2;
    return k;
}

static uint32_t shard_of(const char *path, uint32_t k)
{
    return (uint32_t)cn_hash64(path, strlen(path), 0x5eed) & (k - 1);
}

/* The path of shard s beside the head at `path`. */
static char *shard_path(const char *path, uint32_t s)
{
    const char *slash = strrchr(path, '/');
    int dir = slash ? (int)(slash - path + 1) : 0;
    cn_buf b = CN_BUF_INIT;
    cn_buf_printf(&b, "%.*srecords-%02u.bin", dir, path, (unsigned)s);
    return cn_buf_steal(&b);
}

/* A shard of the build being written: its files (indexes into the
 * build's records, in path order) and sizes. */
typedef struct shard_out {
    uint32_t first, n_files;   /* its files are order[first, first + n_files) */
    size_t n_nodes, n_refs, pool_len;
    uint64_t checksum;
} shard_out;

/* Whether shard s, as it would be written now, is the previous build's
 * shard s byte for byte: the same number of shards and of files, and the
 * files' nodes, references and strings those of the previous shard, in
 * place and in order (records reused unchanged). */
static bool same_as_before(const shard_out *o, uint32_t s, uint32_t k, const cn_file_rec *recs,
                           const uint32_t *order, const cn_records *prev)
{
    const shard *p;
    size_t nn = 0, nr = 0, np = 0;
    if (prev == NULL || prev->n_shards != k) return false;
    p = &prev->shards[s];
    if (p->n_files != o->n_files || p->n_nodes != o->n_nodes || p->n_refs != o->n_refs || p->pool_len != o->pool_len)
        return false;
    for (uint32_t i = 0; i < o->n_files; i++) {
        const cn_file_rec *r = &recs[order[o->first + i]];
        if ((r->n_nodes && (const void *)r->nodes != (const void *)(p->nodes + nn)) ||
            (r->n_refs && (const void *)r->refs != (const void *)(p->refs + nr)) ||
            (r->pool.len && r->pool.data != p->pools + np))
            return false;
        nn += r->n_nodes;
        nr += r->n_refs;
        np += r->pool.len;
    }
    return true;
}

static int write_shard(shard_out *o, uint32_t s, uint32_t k, const cn_file_rec *recs, const uint32_t *order,
                       const char *path)
{
    cn_idx_piece *pieces = malloc((3 * (size_t)o->n_files + 1) * sizeof *pieces);
    uint32_t meta[4] = {s, k, o->n_files, 0};
    cn_idx_writer *w = NULL;
    int rc;

    if (pieces == NULL) return cn_error_set(CN_ENOMEM, "out of memory writing %s", path);
    /* written from the records themselves (their layout is the disk's):
     * those of unchanged files read in place from the previous records */
    for (uint32_t i = 0; i < o->n_files; i++) {
        const cn_file_rec *r = &recs[order[o->first + i]];
        pieces[i] = (cn_idx_piece){r->nodes, r->n_nodes * sizeof *r->nodes};
        pieces[o->n_files + i] = (cn_idx_piece){r->refs, r->n_refs * sizeof *r->refs};
        pieces[2 * (size_t)o->n_files + i] = (cn_idx_piece){r->pool.data, r->pool.len};
    }
    rc = cn_idx_writer_new(SHARD_MAGIC, SHARD_VERSION, &w);
    if (rc == 0) rc = cn_idx_writer_add(w, SH_META, meta, sizeof meta);
    if (rc == 0) rc = cn_idx_writer_add_pieces(w, SH_NODES, pieces, o->n_files);
    if (rc == 0) rc = cn_idx_writer_add_pieces(w, SH_REFS, pieces + o->n_files, o->n_files);
    if (rc == 0) rc = cn_idx_writer_add_pieces(w, SH_POOLS, pieces + 2 * (size_t)o->n_files, o->n_files);
    if (rc == 0) rc = cn_idx_writer_write(w, path);
    if (rc == 0) o->checksum = cn_idx_writer_checksum(w);
    cn_idx_writer_free(w);
    free(pieces);
    return rc;
}

/* Shard s of the records at `path`: the previous build's, linked, when it
 * would be written as it was; else written. */
static int put_shard(shard_out *o, uint32_t s, uint32_t k, const cn_file_rec *recs, const uint32_t *order,
                     const cn_records *prev, const char *path)
{
    char *sp = shard_path(path, s);
    int rc = 0;
    if (sp == NULL) return cn_error_set(CN_ENOMEM, "out of memory");
    if (same_as_before(o, s, k, recs, order, prev)) {
        /* the previous generation's file, synced when it was written and
         * never changed since (a published file is only ever replaced) */
        (void)unlink(sp);
        if (link(cn_idx_path(prev->shards[s].file), sp) == 0) {
            o->checksum = cn_idx_checksum(prev->shards[s].file);
            free(sp);
            return 0;
        }
        /* no hard links here (another file system, or none at all; or the
         * records are written where they were read from): write it */
    }
    rc = write_shard(o, s, k, recs, order, sp);
    free(sp);
    return rc;
}

int cn_records_write(const cn_file_rec *recs, size_t n, const cn_langs *langs, uint64_t started_ns,
                     const cn_records *prev, const char *path)
{
    size_t nf = 0, nl = 0, nn = 0, nr = 0, np = 0;
    uint32_t k, *order = NULL, *shard_at = NULL;
    file_disk *files = NULL;
    left_disk *left = NULL;
    shard_out *out = NULL;
    shard_disk *sd = NULL;
    cn_buf st = CN_BUF_INIT;
    cn_idx_writer *w = NULL;
    int rc = 0;

    for (size_t i = 0; i < n; i++) {
        const cn_file_rec *r = &recs[i];
        nl += r->status != CN_REC_PARSED && cn_rec_left_out_for_good(r);
        if (r->status != CN_REC_PARSED) continue;
        nf++;
        nn += r->n_nodes;
        nr += r->n_refs;
        np += r->pool.len;
    }
    if (nf > UINT32_MAX || nn > UINT32_MAX || nr > UINT32_MAX || np > UINT32_MAX)
        return cn_error_set(CN_EINVAL, "%s: too many parse records to write", path);
    k = shard_count(nf);
    files = calloc(nf ? nf : 1, sizeof *files);
    left = calloc(nl ? nl : 1, sizeof *left);
    order = malloc((nf ? nf : 1) * sizeof *order);
    shard_at = malloc((nf ? nf : 1) * sizeof *shard_at);
    out = calloc(k, sizeof *out);
    sd = calloc(k, sizeof *sd);
    if (!files || !left || !order || !shard_at || !out || !sd) {
        rc = cn_error_set(CN_ENOMEM, "out of memory writing %s", path);
        goto out;
    }
    /* each file's shard, and the shards' files in path order */
    nf = 0;
    for (size_t i = 0; i < n; i++)
        if (recs[i].status == CN_REC_PARSED) {
            shard_at[nf] = shard_of(recs[i].path, k);
            out[shard_at[nf]].n_files++;
            nf++;
        }
    for (uint32_t s = 1; s < k; s++) out[s].first = out[s - 1].first + out[s - 1].n_files;
    for (uint32_t s = 0; s < k; s++) out[s].n_files = 0;
    st_add(&st, "");
    nf = nl = 0;
    for (size_t i = 0; i < n; i++) {
        const cn_file_rec *r = &recs[i];
        file_disk *f = &files[nf];
        shard_out *o;
        if (r->status != CN_REC_PARSED) {
            left_disk *l = &left[nl];
            if (!cn_rec_left_out_for_good(r)) continue;
            l->path = st_add(&st, r->path);
            l->language = st_add(&st, r->language);
            l->version = st_add(&st, version_of(langs, r->language));
            l->error = st_add(&st, r->error ? r->error : "");
            l->status = (uint32_t)r->status;
            l->hash = r->hash;
            l->size = r->size;
            l->mtime_ns = r->stamp.mtime_ns;
            l->ctime_ns = r->stamp.ctime_ns;
            l->ino = r->stamp.ino;
            l->dev = r->stamp.dev;
            nl++;
            continue;
        }
        o = &out[shard_at[nf]];
        order[o->first + o->n_files++] = (uint32_t)i;
        f->path = st_add(&st, r->path);
        f->language = st_add(&st, r->language);
        f->version = st_add(&st, version_of(langs, r->language));
        f->n_lines = r->n_lines;
        f->hash = r->hash;
        f->size = r->size;
        f->node0 = (uint32_t)o->n_nodes;
        f->n_nodes = (uint32_t)r->n_nodes;
        f->ref0 = (uint32_t)o->n_refs;
        f->n_refs = (uint32_t)r->n_refs;
        f->pool_off = (uint32_t)o->pool_len;
        f->pool_len = (uint32_t)r->pool.len;
        f->flags = r->is_test ? 1u : 0u;
        f->shard = shard_at[nf];
        f->mtime_ns = r->stamp.mtime_ns;
        f->ctime_ns = r->stamp.ctime_ns;
        f->ino = r->stamp.ino;
        f->dev = r->stamp.dev;
        o->n_nodes += r->n_nodes;
        o->n_refs += r->n_refs;
        o->pool_len += r->pool.len;
        nf++;
    }
    if (st.oom) {
        rc = cn_error_set(CN_ENOMEM, "out of memory writing %s", path);
        goto out;
    }
    for (uint32_t s = 0; s < k && rc == 0; s++) {
        rc = put_shard(&out[s], s, k, recs, order, prev, path);
        sd[s] = (shard_disk){out[s].checksum, out[s].n_files, 0};
    }
    if (rc < 0) goto out;
    if ((rc = cn_idx_writer_new(RECS_MAGIC, RECS_VERSION, &w)) < 0) goto out;
    /* the writer takes each array over, even when adding fails */
    rc = cn_idx_writer_add_owned(w, S_FILES, files, nf * sizeof *files);
    files = NULL;
    if (rc == 0) rc = cn_idx_writer_add_ref(w, S_STRTAB, st.data, st.len);
    if (rc == 0) rc = cn_idx_writer_add(w, S_META, &started_ns, sizeof started_ns);
    if (rc == 0) rc = cn_idx_writer_add_owned(w, S_LEFT, left, nl * sizeof *left);
    left = NULL;
    if (rc == 0) rc = cn_idx_writer_add_owned(w, S_SHARDS, sd, k * sizeof *sd);
    sd = NULL;
    if (rc == 0) rc = cn_idx_writer_write(w, path);
out:
    cn_idx_writer_free(w);
    free(files);
    free(left);
    free(order);
    free(shard_at);
    free(out);
    free(sd);
    cn_buf_free(&st);
    return rc;
}

static int bad(const char *path, const char *what)
{
    return cn_error_set(CN_ECORRUPT, "%s: corrupt parse records (%s)", path, what);
}

/* Opens shard s of the head at `path` into r->shards[s], checked against
 * what the head says of it. */
static int open_shard(cn_records *r, const char *path, uint32_t s, const shard_disk *sd)
{
    shard *x = &r->shards[s];
    const uint32_t *meta;
    size_t msz, nsz, rsz;
    char *sp = shard_path(path, s);
    const char *name;
    int rc;

    if (sp == NULL) return cn_error_set(CN_ENOMEM, "out of memory");
    rc = cn_idx_open(sp, SHARD_MAGIC, SHARD_VERSION, &x->file);
    if (rc == CN_ENOTFOUND)
        rc = cn_error_set(CN_ECORRUPT, "%s: corrupt parse records (a shard is missing: %s)", path, sp);
    free(sp);
    if (rc < 0) return rc;
    name = cn_idx_path(x->file);
    if (cn_idx_checksum(x->file) != sd->checksum) return bad(name, "not the shard its head was written with");
    meta = cn_idx_section(x->file, SH_META, 4, &msz);
    x->nodes = cn_idx_section(x->file, SH_NODES, sizeof *x->nodes, &nsz);
    x->refs = cn_idx_section(x->file, SH_REFS, sizeof *x->refs, &rsz);
    x->pools = cn_idx_section(x->file, SH_POOLS, 0, &x->pool_len);
    if (meta == NULL || msz != 16 || (nsz && !x->nodes) || (rsz && !x->refs))
        return bad(name, "missing sections");
    if (meta[0] != s || meta[1] != r->n_shards || meta[2] != sd->n_files)
        return bad(name, "shard number or file count disagrees with its head");
    x->n_nodes = nsz / sizeof *x->nodes;
    x->n_refs = rsz / sizeof *x->refs;
    x->n_files = sd->n_files;
    return 0;
}

int cn_records_open(const char *path, const cn_langs *langs, cn_records **out)
{
    cn_idx_file *f = NULL;
    const file_disk *files;
    const shard_disk *sd;
    const char *st;
    const uint64_t *meta;
    const left_disk *left;
    size_t fsz, ssz, msz, lsz, dsz, n, nl;
    uint32_t *seen = NULL;
    cn_records *r = NULL;
    int rc;

    *out = NULL;
    if ((rc = cn_idx_open(path, RECS_MAGIC, RECS_VERSION, &f)) < 0) return rc;
    files = cn_idx_section(f, S_FILES, sizeof *files, &fsz);
    st = cn_idx_section(f, S_STRTAB, 0, &ssz);
    meta = cn_idx_section(f, S_META, 8, &msz);
    left = cn_idx_section(f, S_LEFT, sizeof *left, &lsz);
    sd = cn_idx_section(f, S_SHARDS, sizeof *sd, &dsz);
    if ((fsz && !files) || (lsz && !left) || st == NULL || ssz == 0 || st[ssz - 1] != '\0' || sd == NULL) {
        rc = bad(path, "missing sections");
        goto fail;
    }
    n = fsz / sizeof *files;
    nl = left ? lsz / sizeof *left : 0;
    r = calloc(1, sizeof *r);
    if (r == NULL || (r->recs = calloc(n ? n : 1, sizeof *r->recs)) == NULL ||
        (r->paths = calloc(n ? n : 1, sizeof *r->paths)) == NULL ||
        (r->versions = calloc(n ? n : 1, sizeof *r->versions)) == NULL ||
        (r->docs = calloc(n ? n : 1, sizeof *r->docs)) == NULL ||
        (r->left = calloc(nl ? nl : 1, sizeof *r->left)) == NULL ||
        (r->left_paths = calloc(nl ? nl : 1, sizeof *r->left_paths)) == NULL ||
        (r->left_versions = calloc(nl ? nl : 1, sizeof *r->left_versions)) == NULL ||
        (r->taken = calloc(n + nl ? n + nl : 1, sizeof *r->taken)) == NULL ||
        (r->shards = calloc(MAX_SHARDS, sizeof *r->shards)) == NULL ||
        (seen = calloc(MAX_SHARDS, sizeof *seen)) == NULL) {
        rc = cn_error_set(CN_ENOMEM, "out of memory");
        goto fail;
    }
    r->file = f;
    f = NULL;
    r->n_shards = (uint32_t)(dsz / sizeof *sd);
    if (r->n_shards == 0 || r->n_shards > MAX_SHARDS || (r->n_shards & (r->n_shards - 1)) != 0) {
        rc = bad(path, "shard count");
        goto fail;
    }
    for (uint32_t s = 0; s < r->n_shards; s++)
        if ((rc = open_shard(r, path, s, &sd[s])) < 0) goto fail;
    r->started_ns = meta != NULL && msz >= 8 ? meta[0] : 0;
    for (size_t i = 0; i < n; i++) {
        const file_disk *d = &files[i];
        cn_file_rec *x = &r->recs[i];
        const cn_lang_entry *e;
        const shard *h = d->shard < r->n_shards ? &r->shards[d->shard] : NULL;
        if (h == NULL || d->path >= ssz || d->language >= ssz || d->version >= ssz ||
            (uint64_t)d->node0 + d->n_nodes > h->n_nodes || (uint64_t)d->ref0 + d->n_refs > h->n_refs ||
            (uint64_t)d->pool_off + d->pool_len > h->pool_len ||
            (d->pool_len && h->pools[d->pool_off + d->pool_len - 1] != '\0')) {
            rc = bad(path, "file record out of bounds");
            goto fail;
        }
        seen[d->shard]++;
        r->n = i + 1;
        e = cn_langs_find(langs, st + d->language);
        r->paths[i] = st + d->path;
        x->path = cn_strdup(st + d->path);
        x->language = e ? e->language : NULL;
        x->status = e ? CN_REC_PARSED : CN_REC_FAILED;  /* no backend now: never reused */
        x->is_test = d->flags & 1u;
        x->hash = d->hash;
        x->size = d->size;
        x->n_lines = d->n_lines;
        r->docs[i] = d->n_nodes + 1;
        x->stamp = (cn_file_stamp){d->mtime_ns, d->ctime_ns, d->ino, d->dev};
        r->versions[i] = cn_strdup(st + d->version);
        if (x->path == NULL || r->versions[i] == NULL) {
            rc = cn_error_set(CN_ENOMEM, "out of memory");
            goto fail;
        }
        for (uint32_t k = 0; k < d->n_nodes; k++) {
            const node_disk *y = &h->nodes[d->node0 + k];
            if (y->kind > UINT8_MAX || y->name >= d->pool_len || y->qualname >= d->pool_len ||
                (y->parent != -1 && (y->parent < 0 || (uint32_t)y->parent >= k))) {
                rc = bad(path, "node out of bounds");
                goto fail;
            }
        }
        for (uint32_t k = 0; k < d->n_refs; k++) {
            const ref_disk *y = &h->refs[d->ref0 + k];
            if (y->kind > UINT8_MAX || y->name >= d->pool_len || (y->target != UINT32_MAX && y->target >= d->pool_len) ||
                (y->from != -1 && (y->from < 0 || (uint32_t)y->from >= d->n_nodes))) {
                rc = bad(path, "reference out of bounds");
                goto fail;
            }
        }
        /* read in place, not copied (the shard is mapped read-only) */
        x->borrowed = true;
        x->nodes = (cn_rec_node *)(uintptr_t)(d->n_nodes ? h->nodes + d->node0 : NULL);
        x->refs = (cn_rec_ref *)(uintptr_t)(d->n_refs ? h->refs + d->ref0 : NULL);
        x->n_nodes = d->n_nodes;
        x->n_refs = d->n_refs;
        x->pool.data = (char *)(uintptr_t)(d->pool_len ? h->pools + d->pool_off : NULL);
        x->pool.len = d->pool_len;
    }
    for (uint32_t s = 0; s < r->n_shards; s++)
        if (seen[s] != r->shards[s].n_files) {
            rc = bad(path, "a shard's file count disagrees with the files");
            goto fail;
        }
    for (size_t i = 0; i < nl; i++) {
        const left_disk *d = &left[i];
        cn_file_rec *x = &r->left[i];
        const cn_lang_entry *e;
        if (d->path >= ssz || d->language >= ssz || d->version >= ssz || d->error >= ssz ||
            (d->status != CN_REC_BINARY && d->status != CN_REC_UNDECODABLE && d->status != CN_REC_FAILED)) {
            rc = bad(path, "left-out file out of bounds");
            goto fail;
        }
        r->n_left = i + 1;
        e = cn_langs_find(langs, st + d->language);
        r->left_paths[i] = st + d->path;
        x->path = cn_strdup(st + d->path);
        x->language = e ? e->language : NULL;   /* no backend now: never reused */
        x->status = (cn_rec_status)d->status;
        x->lasting = true;
        x->error = st[d->error] ? cn_strdup(st + d->error) : NULL;
        x->hash = d->hash;
        x->size = d->size;
        x->stamp = (cn_file_stamp){d->mtime_ns, d->ctime_ns, d->ino, d->dev};
        r->left_versions[i] = cn_strdup(st + d->version);
        if (x->path == NULL || r->left_versions[i] == NULL || (st[d->error] && x->error == NULL)) {
            rc = cn_error_set(CN_ENOMEM, "out of memory");
            goto fail;
        }
    }
    free(seen);
    *out = r;
    return 0;
fail:
    free(seen);
    cn_records_close(r);
    cn_idx_close(f);
    return rc;
}

static ssize_t find_in(const char *const *paths, size_t n, const char *path)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(paths[mid], path);
        if (c == 0) return (ssize_t)mid;
        if (c < 0) lo = mid + 1;
        else hi = mid;
    }
    return -1;
}

static ssize_t find_path(const cn_records *r, const char *path)
{
    return find_in(r->paths, r->n, path);
}

static bool stamp_trusted(const cn_records *r, const cn_file_rec *x, const cn_file_stamp *st, uint64_t size)
{
    const cn_file_stamp *o = &x->stamp;
    if (r->started_ns < CN_RECORDS_STAMP_MARGIN_NS || (o->mtime_ns == 0 && o->ctime_ns == 0)) return false;
    return x->size == size && o->mtime_ns == st->mtime_ns && o->ctime_ns == st->ctime_ns && o->ino == st->ino &&
           o->dev == st->dev && o->mtime_ns < r->started_ns - CN_RECORDS_STAMP_MARGIN_NS &&
           o->ctime_ns < r->started_ns - CN_RECORDS_STAMP_MARGIN_NS;
}

/* Whether record x, with the backend version that made it, still holds. */
static bool still_holds(const cn_records *r, const cn_file_rec *x, const char *version, const cn_file_stamp *stamp,
                        uint64_t size, uint64_t hash, const char *lang_version)
{
    if (x->language == NULL) return false;   /* no backend for it now */
    if (lang_version == NULL || strcmp(version, lang_version) != 0) return false;
    return stamp != NULL ? stamp_trusted(r, x, stamp, size) : x->hash == hash && x->size == size;
}

cn_file_rec *cn_records_match(cn_records *r, const char *path, const cn_file_stamp *stamp, uint64_t size,
                              uint64_t hash, const char *lang_version)
{
    ssize_t i = find_path(r, path);
    size_t slot;
    cn_file_rec *x;
    const char *version;
    if (i >= 0) {
        x = &r->recs[i];
        version = r->versions[i];
        slot = (size_t)i;
    } else if ((i = find_in(r->left_paths, r->n_left, path)) >= 0) {
        x = &r->left[i];
        version = r->left_versions[i];
        slot = r->n + (size_t)i;
    } else {
        return NULL;
    }
    /* claimed before its fields are read, since a worker that matched it
     * may be moving it out; a match keeps the claim.  The same path listed
     * twice is then handed out once (the other is parsed). */
    if (atomic_exchange(&r->taken[slot], true)) return NULL;
    if ((slot < r->n ? x->status == CN_REC_PARSED : x->status != CN_REC_PARSED) &&
        still_holds(r, x, version, stamp, size, hash, lang_version))
        return x;
    atomic_store(&r->taken[slot], false);
    return NULL;
}

int cn_records_doc_map(const cn_records *r, const cn_file_rec *recs, size_t n, uint32_t **remap, uint32_t *n_old,
                       bool *from_old, uint32_t *kept)
{
    uint64_t total = 0, base = 0;
    uint32_t *old_base = malloc((r->n ? r->n : 1) * sizeof *old_base), *m = NULL;
    *remap = NULL;
    *n_old = *kept = 0;
    if (old_base == NULL) return cn_error_set(CN_ENOMEM, "out of memory");
    for (size_t i = 0; i < r->n; i++) {
        old_base[i] = (uint32_t)total;
        total += r->docs[i];
    }
    if (total >= UINT32_MAX || (m = malloc((total ? total : 1) * sizeof *m)) == NULL) {
        free(old_base);
        return cn_error_set(CN_ENOMEM, "out of memory");
    }
    memset(m, 0xff, total * sizeof *m);
    for (size_t k = 0; k < n; k++) {
        const cn_file_rec *x = &recs[k];
        ssize_t i;
        from_old[k] = false;
        if (x->status != CN_REC_PARSED) continue;
        if (x->reused && (i = find_path(r, x->path)) >= 0 && r->docs[i] == x->n_nodes + 1) {
            for (uint32_t d = 0; d < r->docs[i]; d++) m[old_base[i] + d] = (uint32_t)(base + d);
            *kept += r->docs[i];
            from_old[k] = true;
        }
        base += x->n_nodes + 1;
    }
    free(old_base);
    *remap = m;
    *n_old = (uint32_t)total;
    return 0;
}

bool cn_records_has(const cn_records *r, const char *path)
{
    return find_path(r, path) >= 0 || find_in(r->left_paths, r->n_left, path) >= 0;
}

uint64_t cn_records_doc_count(const cn_records *r)
{
    uint64_t total = 0;
    for (size_t i = 0; i < r->n; i++) total += r->docs[i];
    return total;
}

size_t cn_records_count(const cn_records *r)
{
    return r->n;
}

const cn_file_rec *cn_records_at(const cn_records *r, size_t i)
{
    return i < r->n ? &r->recs[i] : NULL;
}

size_t cn_records_left_count(const cn_records *r)
{
    return r->n_left;
}

void cn_records_close(cn_records *r)
{
    if (r == NULL) return;
    for (size_t i = 0; i < r->n; i++) {
        cn_file_rec_clear(&r->recs[i]);
        free(r->versions[i]);
    }
    for (size_t i = 0; i < r->n_left; i++) {
        cn_file_rec_clear(&r->left[i]);
        free(r->left_versions[i]);
    }
    free(r->recs);
    free(r->paths);
    free(r->versions);
    free(r->left);
    free(r->left_paths);
    free(r->left_versions);
    free(r->taken);
    free(r->docs);
    /* after the records that read them */
    for (uint32_t s = 0; r->shards != NULL && s < MAX_SHARDS; s++) cn_idx_close(r->shards[s].file);
    free(r->shards);
    cn_idx_close(r->file);
    free(r);
}
