/* SPDX-License-Identifier: Apache-2.0 */
/* Index file container: writer and validating reader (see cn_idxfile.h).
 *
 * Layout (little-endian):
 *   0   magic[8]
 *   8   u32 format version      12  u32 container version (1)
 *   16  u64 file size           24  u64 checksum
 *   32  u32 section count       36  u32 reserved, then zeros up to 64
 *   64  section table: count x {u32 id, u32 reserved, u64 offset, u64 size}
 *   ... section bytes, each starting at a multiple of 8
 * The checksum is cn_hash64 of bytes [64, size) seeded with cn_hash64 of
 * the header with its checksum field zeroed. */
#include "cn_idxfile.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#define HEADER_SIZE 64
#define ENTRY_SIZE 24
#define CONTAINER_VERSION 1

typedef struct section {
    uint32_t id;
    void *data;
    size_t size;
    int owned;
    cn_idx_piece *pieces;   /* when not NULL (owned array), the bytes are these */
    size_t n_pieces;
} section;

struct cn_idx_writer {
    char magic[CN_IDX_MAGIC_LEN];
    uint32_t version;
    section sections[CN_IDX_MAX_SECTIONS];
    size_t count;
    uint64_t checksum;   /* of the file last written */
};

struct cn_idx_file {
    char *path;
    const unsigned char *map;
    size_t size;
    uint32_t count;
    const unsigned char *table;
};

static void put32(unsigned char *p, uint32_t v) { memcpy(p, &v, 4); }
static void put64(unsigned char *p, uint64_t v) { memcpy(p, &v, 8); }
static uint32_t get32(const unsigned char *p) { uint32_t v; memcpy(&v, p, 4); return v; }
static uint64_t get64(const unsigned char *p) { uint64_t v; memcpy(&v, p, 8); return v; }

static size_t align8(size_t n)
{
    return (n + 7) & ~(size_t)7;
}

int cn_idx_writer_new(const char magic[CN_IDX_MAGIC_LEN], uint32_t version, cn_idx_writer **out)
{
    cn_idx_writer *w = calloc(1, sizeof *w);
    *out = NULL;
    if (w == NULL) return cn_error_set(CN_ENOMEM, "out of memory");
    memcpy(w->magic, magic, CN_IDX_MAGIC_LEN);
    w->version = version;
    *out = w;
    return 0;
}

static int add(cn_idx_writer *w, uint32_t id, void *data, size_t size, int owned)
{
    for (size_t i = 0; i < w->count; i++) {
        if (w->sections[i].id == id) {
            if (owned) free(data);
            return cn_error_set(CN_EEXISTS, "index section %u added twice", id);
        }
    }
    if (w->count == CN_IDX_MAX_SECTIONS) {
        if (owned) free(data);
        return cn_error_set(CN_EINVAL, "too many index sections");
    }
    w->sections[w->count].id = id;
    w->sections[w->count].data = data;
    w->sections[w->count].size = size;
    w->sections[w->count].owned = owned;
    w->count++;
    return 0;
}

int cn_idx_writer_add(cn_idx_writer *w, uint32_t id, const void *data, size_t size)
{
    void *copy = malloc(size ? size : 1);
    if (copy == NULL) return cn_error_set(CN_ENOMEM, "out of memory copying index section %u", id);
    if (size) memcpy(copy, data, size);
    return add(w, id, copy, size, 1);
}

int cn_idx_writer_add_owned(cn_idx_writer *w, uint32_t id, void *data, size_t size)
{
    return add(w, id, data, size, 1);
}

int cn_idx_writer_add_ref(cn_idx_writer *w, uint32_t id, const void *data, size_t size)
{
    return add(w, id, (void *)data, size, 0);   /* never written through, never freed */
}

int cn_idx_writer_add_pieces(cn_idx_writer *w, uint32_t id, const cn_idx_piece *pieces, size_t n)
{
    cn_idx_piece *copy = malloc((n ? n : 1) * sizeof *copy);
    size_t size = 0, k = 0;
    int rc;
    if (copy == NULL) return cn_error_set(CN_ENOMEM, "out of memory for index section %u", id);
    for (size_t i = 0; i < n; i++) {
        if (pieces[i].size == 0) continue;
        /* pieces that follow one another in memory are written as one */
        if (k > 0 && (const char *)copy[k - 1].data + copy[k - 1].size == (const char *)pieces[i].data)
            copy[k - 1].size += pieces[i].size;
        else
            copy[k++] = pieces[i];
        size += pieces[i].size;
    }
    if ((rc = add(w, id, NULL, size, 0)) < 0) {
        free(copy);
        return rc;
    }
    w->sections[w->count - 1].pieces = copy;
    w->sections[w->count - 1].n_pieces = k;
    return 0;
}

static int write_all(int fd, const void *buf, size_t n, const char *path)
{
    const unsigned char *p = buf;
    while (n > 0) {
        ssize_t k = write(fd, p, n);
        if (k < 0) {
            if (errno == EINTR) continue;
            return cn_error_set(CN_EIO, "%s: write failed: %s", path, strerror(errno));
        }
        p += k;
        n -= (size_t)k;
    }
    return 0;
}

/* Many small pieces (a file's nodes each) in few system calls. */
static int write_pieces(int fd, const cn_idx_piece *pieces, size_t n, const char *path)
{
    struct iovec iov[256];
    size_t k = 0;
    while (k < n) {
        size_t m = 0, want = 0;
        ssize_t got;
        for (; m < sizeof iov / sizeof *iov && k + m < n; m++) {
            iov[m].iov_base = (void *)(uintptr_t)pieces[k + m].data;
            iov[m].iov_len = pieces[k + m].size;
            want += pieces[k + m].size;
        }
        got = writev(fd, iov, (int)m);
        if (got < 0 && errno == EINTR) continue;
        if (got < 0) return cn_error_set(CN_EIO, "%s: write failed: %s", path, strerror(errno));
        if ((size_t)got == want) {
            k += m;
            continue;
        }
        /* a short write: finish the piece it stopped in, go on from the next */
        for (size_t i = 0;; i++) {
            if ((size_t)got < pieces[k + i].size) {
                int rc = write_all(fd, (const char *)pieces[k + i].data + got, pieces[k + i].size - (size_t)got, path);
                if (rc < 0) return rc;
                k += i + 1;
                break;
            }
            got -= (ssize_t)pieces[k + i].size;
        }
    }
    return 0;
}

/* The file is streamed from the sections as they are, the checksum
 * computed on the way: no image of the whole file is made in memory (for
 * the records of a large repository, tens of megabytes of fresh pages). */
int cn_idx_writer_write(cn_idx_writer *w, const char *path)
{
    size_t table_end = HEADER_SIZE + w->count * ENTRY_SIZE, total = align8(table_end);
    unsigned char *head;
    static const unsigned char zeros[8];
    cn_buf tmp = CN_BUF_INIT;
    cn_hash64_state hs;
    int fd, rc;

    for (size_t i = 0; i < w->count; i++) total = align8(total + w->sections[i].size);
    head = calloc(1, align8(table_end));
    if (head == NULL) return cn_error_set(CN_ENOMEM, "%s: out of memory", path);
    memcpy(head, w->magic, CN_IDX_MAGIC_LEN);
    put32(head + 8, w->version);
    put32(head + 12, CONTAINER_VERSION);
    put64(head + 16, (uint64_t)total);
    put32(head + 32, (uint32_t)w->count);
    {
        size_t off = align8(table_end);
        for (size_t i = 0; i < w->count; i++) {
            unsigned char *e = head + HEADER_SIZE + i * ENTRY_SIZE;
            put32(e, w->sections[i].id);
            put64(e + 8, (uint64_t)off);
            put64(e + 16, (uint64_t)w->sections[i].size);
            off = align8(off + w->sections[i].size);
        }
    }
    cn_hash64_init(&hs, cn_hash64(head, HEADER_SIZE, 0));
    cn_hash64_update(&hs, head + HEADER_SIZE, align8(table_end) - HEADER_SIZE);
    for (size_t i = 0; i < w->count; i++) {
        const section *x = &w->sections[i];
        if (x->pieces != NULL)
            for (size_t k = 0; k < x->n_pieces; k++) cn_hash64_update(&hs, x->pieces[k].data, x->pieces[k].size);
        else if (x->size)
            cn_hash64_update(&hs, x->data, x->size);
        cn_hash64_update(&hs, zeros, align8(x->size) - x->size);
    }
    w->checksum = cn_hash64_final(&hs);
    put64(head + 24, w->checksum);

    cn_buf_printf(&tmp, "%s.tmp.%ld", path, (long)getpid());
    if (tmp.data == NULL) {
        free(head);
        return cn_error_set(CN_ENOMEM, "out of memory");
    }
    fd = open(tmp.data, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0) {
        rc = cn_error_set(CN_EIO, "%s: cannot create: %s", tmp.data, strerror(errno));
    } else {
        rc = write_all(fd, head, align8(table_end), tmp.data);
        for (size_t i = 0; rc == 0 && i < w->count; i++) {
            const section *x = &w->sections[i];
            if (x->pieces != NULL)
                rc = write_pieces(fd, x->pieces, x->n_pieces, tmp.data);
            else if (x->size)
                rc = write_all(fd, x->data, x->size, tmp.data);
            if (rc == 0 && align8(x->size) > x->size) rc = write_all(fd, zeros, align8(x->size) - x->size, tmp.data);
        }
        if (rc == 0 && cn_fsync_defer(fd, tmp.data)) {
            fd = -1;   /* synced later, before its directory is published */
        } else if (rc == 0 && fsync(fd) != 0) {
            rc = cn_error_set(CN_EIO, "%s: fsync failed: %s", tmp.data, strerror(errno));
        }
        if (fd >= 0 && close(fd) != 0 && rc == 0)
            rc = cn_error_set(CN_EIO, "%s: close failed: %s", tmp.data, strerror(errno));
        if (rc == 0 && rename(tmp.data, path) != 0)
            rc = cn_error_set(CN_EIO, "%s: cannot rename into place: %s", path, strerror(errno));
        if (rc < 0) unlink(tmp.data);
    }
    cn_buf_free(&tmp);
    free(head);
    return rc;
}

uint64_t cn_idx_writer_checksum(const cn_idx_writer *w)
{
    return w->checksum;
}

void cn_idx_writer_free(cn_idx_writer *w)
{
    if (w == NULL) return;
    for (size_t i = 0; i < w->count; i++) {
        if (w->sections[i].owned) free(w->sections[i].data);
        free(w->sections[i].pieces);
    }
    free(w);
}

static int corrupt(const char *path, const char *what)
{
    return cn_error_set(CN_ECORRUPT, "%s: corrupt index (%s); recompile with `codenib compile --rebuild`",
                        path, what);
}

/* Files whose checksum this process has verified, by identity.  A query
 * checks its index's integrity (status) and then opens it to search: the
 * second open of a file not written since -- same inode, size, mtime and
 * ctime, which every write and every link changes -- need not hash its
 * megabytes again (a long-lived server checks its index often).  A
 * handful of entries: one index has a few files. */
#define VERIFIED_MAX 32
typedef struct verified {
    uint64_t dev, ino, size, sum;
    struct timespec mtime, ctime;
} verified;
static verified verified_files[VERIFIED_MAX];
static size_t verified_next;
static pthread_mutex_t verified_lock = PTHREAD_MUTEX_INITIALIZER;

static verified identity(const struct stat *st, uint64_t sum)
{
    verified v;
    memset(&v, 0, sizeof v);
    v.dev = (uint64_t)st->st_dev;
    v.ino = (uint64_t)st->st_ino;
    v.size = (uint64_t)st->st_size;
    v.sum = sum;
    v.mtime = st->st_mtim;
    v.ctime = st->st_ctim;
    return v;
}

static bool same_identity(const verified *a, const verified *b)
{
    return a->dev == b->dev && a->ino == b->ino && a->size == b->size && a->sum == b->sum &&
           a->mtime.tv_sec == b->mtime.tv_sec && a->mtime.tv_nsec == b->mtime.tv_nsec &&
           a->ctime.tv_sec == b->ctime.tv_sec && a->ctime.tv_nsec == b->ctime.tv_nsec;
}

static bool was_verified(const struct stat *st, uint64_t sum)
{
    verified v = identity(st, sum);
    bool found = false;
    pthread_mutex_lock(&verified_lock);
    for (size_t i = 0; i < VERIFIED_MAX && !found; i++) found = same_identity(&verified_files[i], &v);
    pthread_mutex_unlock(&verified_lock);
    return found;
}

static void remember_verified(const struct stat *st, uint64_t sum)
{
    struct timespec now;
    /* File times come from a coarse clock (a tick of some milliseconds):
     * a write in the same tick as the one before leaves ctime as it was.
     * Only a file untouched for a second is known by its times. */
    if (clock_gettime(CLOCK_REALTIME, &now) != 0 || st->st_ctim.tv_sec + 1 >= now.tv_sec) return;
    pthread_mutex_lock(&verified_lock);
    verified_files[verified_next] = identity(st, sum);
    verified_next = (verified_next + 1) % VERIFIED_MAX;
    pthread_mutex_unlock(&verified_lock);
}

int cn_idx_open(const char *path, const char magic[CN_IDX_MAGIC_LEN], uint32_t version,
                cn_idx_file **out)
{
    struct stat st;
    int fd, rc = 0;
    void *map;
    const unsigned char *m;
    uint64_t size, sum = 0, seed;
    uint32_t count;
    unsigned char header[HEADER_SIZE];
    cn_idx_file *f;

    *out = NULL;
    /* An index file is one codenib wrote in its cache: never a link (to be
     * read through), never a FIFO (to hang on). */
    fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0 && errno == ELOOP)
        return cn_error_set(CN_ECORRUPT, "%s: a symbolic link where codenib writes an index file; codenib does not "
                                         "follow it: recompile with `codenib compile --rebuild`", path);
    if (fd < 0) {
        return cn_error_set(errno == ENOENT ? CN_ENOTFOUND : CN_EIO, "%s: cannot open: %s", path,
                            strerror(errno));
    }
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return cn_error_set(CN_EIO, "%s: not a regular file", path);
    }
    if ((uint64_t)st.st_size < HEADER_SIZE) {
        close(fd);
        return corrupt(path, "shorter than its header");
    }
    map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (map == MAP_FAILED) return cn_error_set(CN_EIO, "%s: cannot map: %s", path, strerror(errno));
    m = map;

    if (memcmp(m, magic, CN_IDX_MAGIC_LEN) != 0) {
        rc = corrupt(path, "wrong magic: not this kind of index");
    } else if (get32(m + 12) != CONTAINER_VERSION || get32(m + 8) != version) {
        rc = cn_error_set(CN_EUNSUPPORTED,
                          "%s: index format %u.%u, this codenib reads %u.%u; recompile with "
                          "`codenib compile --rebuild`",
                          path, get32(m + 12), get32(m + 8), CONTAINER_VERSION, version);
    } else if ((size = get64(m + 16)) != (uint64_t)st.st_size) {
        char what[128];
        snprintf(what, sizeof what, "truncated or padded: header says %llu bytes, file has %lld",
                 (unsigned long long)size, (long long)st.st_size);
        rc = corrupt(path, what);
    } else if ((count = get32(m + 32)) > CN_IDX_MAX_SECTIONS ||
               HEADER_SIZE + (uint64_t)count * ENTRY_SIZE > size) {
        rc = corrupt(path, "section table out of bounds");
    } else {
        bool known = was_verified(&st, get64(m + 24));
        if (!known) {
            memcpy(header, m, HEADER_SIZE);
            memset(header + 24, 0, 8);
            seed = cn_hash64(header, HEADER_SIZE, 0);
            sum = cn_hash64(m + HEADER_SIZE, (size_t)size - HEADER_SIZE, seed);
        }
        if (!known && sum != get64(m + 24)) {
            rc = corrupt(path, "checksum mismatch");
        } else {
            if (!known) remember_verified(&st, sum);
            uint64_t table_end = HEADER_SIZE + (uint64_t)count * ENTRY_SIZE;
            for (uint32_t i = 0; i < count && rc == 0; i++) {
                const unsigned char *e = m + HEADER_SIZE + (size_t)i * ENTRY_SIZE;
                uint64_t off = get64(e + 8), len = get64(e + 16);
                if (off < table_end || off % 8 != 0 || off > size || len > size - off)
                    rc = corrupt(path, "section out of bounds");
            }
        }
    }
    if (rc < 0) {
        munmap(map, (size_t)st.st_size);
        return rc;
    }
    f = calloc(1, sizeof *f);
    if (f == NULL || (f->path = cn_strdup(path)) == NULL) {
        free(f);
        munmap(map, (size_t)st.st_size);
        return cn_error_set(CN_ENOMEM, "out of memory");
    }
    f->map = m;
    f->size = (size_t)st.st_size;
    f->count = get32(m + 32);
    f->table = m + HEADER_SIZE;
    *out = f;
    return 0;
}

const void *cn_idx_section(const cn_idx_file *f, uint32_t id, size_t elem, size_t *size)
{
    for (uint32_t i = 0; i < f->count; i++) {
        const unsigned char *e = f->table + (size_t)i * ENTRY_SIZE;
        if (get32(e) != id) continue;
        if (elem > 0 && get64(e + 16) % elem != 0) {
            corrupt(f->path, "section size is not a whole number of records");
            if (size) *size = 0;
            return NULL;
        }
        if (size) *size = (size_t)get64(e + 16);
        return f->map + get64(e + 8);
    }
    if (size) *size = 0;
    return NULL;
}

const char *cn_idx_path(const cn_idx_file *f)
{
    return f->path;
}

uint64_t cn_idx_checksum(const cn_idx_file *f)
{
    return get64(f->map + 24);
}

void cn_idx_close(cn_idx_file *f)
{
    if (f == NULL) return;
    munmap((void *)f->map, f->size);
    free(f->path);
    free(f);
}
