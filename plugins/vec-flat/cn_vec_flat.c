/* SPDX-License-Identifier: Apache-2.0 */
/* vec-flat: exact top-k by dot product over every stored vector.
 *
 * No approximation, no training: one file, memory-mapped, read straight
 * through at query time.  A repository's few hundred thousand nodes at a
 * few hundred dimensions take milliseconds, which is why an approximate
 * index is not worth its recall loss here.
 *
 * Option (JSON): precision "f32" (default) | "f16" | "int8" -- how rows
 * are stored: f16 halves the file (scores within about 1e-3), int8 with
 * one scale per row quarters it (scores within about 1e-2).
 *
 * <dir>/vectors.flat:
 *   0  magic "CNVECFLT"            32 u64 payload bytes (file size - 64)
 *   8  u32 format version (1)      40 u64 checksum of bytes 0..39, 48..63
 *   12 u32 precision (0 f32,               and the payload
 *          1 f16, 2 int8)          48 u32 byte-order mark 0x0A0B0C0D as
 *   16 u32 dim                             written by the builder's CPU
 *   20 u32 padded dim              52 12 bytes zero
 *   24 u64 count
 * header integers little-endian; then, in the builder's byte order, each
 * part starting on a 64-byte boundary: the node ids u32[count]; for int8
 * the row scales f32[count]; the rows, each `padded dim` elements (a
 * multiple of 16, and rows a multiple of 64 bytes) ending in zeros.  The
 * builder writes a temporary file and renames it, so readers never see
 * half a file. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <codenib/backend.h>
#include <codenib/vectors.h>

#include "cn_bytes.h"

#define FLAT_NAME "vectors.flat"
#define FLAT_MAGIC "CNVECFLT"
#define FLAT_VERSION 1u
#define FLAT_HEADER 64u
#define FLAT_BOM 0x0A0B0C0Du
#define FLAT_MAX_DIM 65536u

enum { PREC_F32 = 0, PREC_F16 = 1, PREC_I8 = 2 };

static const char *const prec_names[] = {"f32", "f16", "int8"};
static const size_t prec_size[] = {4, 2, 1};

typedef struct vf_state {
    cn_vector_store vs;
    const cn_host *host;
    int precision;              /* for build() */
    /* the open file */
    unsigned char *map;
    size_t map_len;
    uint32_t prec, dim, pdim;
    size_t count, row_bytes;
    const uint32_t *ids;
    const float *scales;
    const unsigned char *rows;
} vf_state;

static vf_state *state_of(cn_vector_store *self)
{
    return self->data;
}

/* ---- layout and checksum ------------------------------------------------ */

static size_t pad64(size_t n)
{
    return (n + 63) & ~(size_t)63;
}

/* Rows are whole 64-byte lines: 16 floats, 32 halves or 64 bytes. */
static uint32_t padded_dim(uint32_t dim, int prec)
{
    uint32_t per_line = (uint32_t)(64 / prec_size[prec]);
    return (dim + per_line - 1) / per_line * per_line;
}

typedef struct layout {
    size_t ids, scales, rows, row_bytes, total;
} layout;

/* Offsets of the parts for count rows; -1 when the size overflows. */
static int layout_of(size_t count, uint32_t pdim, int prec, layout *l)
{
    size_t id_bytes;

    if (count > (SIZE_MAX / 8 - FLAT_HEADER) / 4) return -1;
    id_bytes = pad64(count * 4);
    l->row_bytes = (size_t)pdim * prec_size[prec];
    l->ids = FLAT_HEADER;
    l->scales = l->ids + id_bytes;
    l->rows = l->scales + (prec == PREC_I8 ? id_bytes : 0);
    if (count != 0 && l->row_bytes > (SIZE_MAX - l->rows) / count) return -1;
    l->total = l->rows + count * l->row_bytes;
    return 0;
}

#define SUM_SEED 0x243f6a8885a308d3ull

/* Over whole 8-byte words (every part of the file is a multiple of 8
 * bytes, so the writer can feed it piece by piece).  Each step is a
 * bijection of the word for a given state and of the state for a given
 * word, so any one changed word changes the sum. */
static uint64_t sum_update(uint64_t h, const unsigned char *p, size_t len)
{
    for (size_t i = 0; i + 8 <= len; i += 8) {
        uint64_t w = 0;
        for (int b = 0; b < 8; b++) w |= (uint64_t)p[i + (size_t)b] << (8 * b);
        h = cn_rotl64(h ^ (w * 0x9e3779b97f4a7c15ull), 31) * 0xff51afd7ed558ccdull;
    }
    return h;
}

static uint64_t sum_final(uint64_t h, uint64_t total)
{
    h = cn_rotl64(h ^ (total * 0x9e3779b97f4a7c15ull), 31) * 0xff51afd7ed558ccdull;
    return h ^ (h >> 33);
}

static uint64_t header_sum(const unsigned char *hdr)
{
    return sum_update(sum_update(SUM_SEED, hdr, 40), hdr + 48, 16);
}

/* ---- half precision -------------------------------------------------------- */

/* IEEE 754 binary16, rounding to nearest, ties to even. */
static uint16_t f32_to_f16(float f)
{
    uint32_t x, ax, sign, q, rem;

    memcpy(&x, &f, 4);
    sign = (x >> 16) & 0x8000u;
    ax = x & 0x7fffffffu;
    if (ax > 0x7f800000u) return (uint16_t)(sign | 0x7e00u);      /* NaN */
    if (ax >= 0x477ff000u) return (uint16_t)(sign | 0x7c00u);     /* >= 65520 rounds to infinity */
    if (ax >= 0x38800000u) {                                      /* normal: 2^-14 and up */
        uint32_t r = ax - 0x38000000u;                            /* exponent bias 127 -> 15 */
        q = r >> 13;
        rem = r & 0x1fffu;
        if (rem > 0x1000u || (rem == 0x1000u && (q & 1))) q++;   /* a carry moves the exponent: right */
        return (uint16_t)(sign | q);
    }
    if (ax <= 0x33000000u) return (uint16_t)sign;                 /* up to 2^-25 (a tie): zero */
    {                                                             /* subnormal: units of 2^-24 */
        uint32_t e = ax >> 23, m = (ax & 0x7fffffu) | 0x800000u, shift = 126 - e, half;
        q = m >> shift;
        rem = m & ((1u << shift) - 1);
        half = 1u << (shift - 1);
        if (rem > half || (rem == half && (q & 1))) q++;
        return (uint16_t)(sign | q);
    }
}

/* Exact for every finite half: the exponent and mantissa bits moved into
 * a float and rescaled by 2^112 (which also turns subnormals into the
 * right normal floats); the builder never writes infinities or NaNs. */
static void f16_row_to_f32(const uint16_t *restrict h, float *restrict out, size_t n32)
{
    for (size_t i = 0; i < n32; i += 16)
        for (size_t j = 0; j < 16; j++) {
            uint32_t bits = (uint32_t)(h[i + j] & 0x7fffu) << 13, sign = (uint32_t)(h[i + j] & 0x8000u) << 16;
            float f;
            memcpy(&f, &bits, 4);
            f *= 0x1p112f;
            memcpy(&bits, &f, 4);
            bits |= sign;
            memcpy(&out[i + j], &bits, 4);
        }
}

/* ---- dot products ----------------------------------------------------------- */

/* Sixteen partial sums: the loop has no scalar remainder (n16 is a
 * multiple of 16) and no reassociation, so gcc -O2 vectorises it; the
 * partials are added in a fixed order, so a score never depends on more
 * than the two vectors. */
static float dot_f32(const float *restrict a, const float *restrict b, size_t n16)
{
    float acc[16] = {0}, s = 0;
    for (size_t i = 0; i < n16; i += 16)
        for (size_t j = 0; j < 16; j++) acc[j] += a[i + j] * b[i + j];
    for (size_t j = 0; j < 16; j++) s += acc[j];
    return s;
}

static int32_t dot_i8(const int8_t *restrict a, const int8_t *restrict b, size_t n64)
{
    int32_t acc[16] = {0}, s = 0;
    for (size_t i = 0; i < n64; i += 16)
        for (size_t j = 0; j < 16; j++) acc[j] += (int32_t)a[i + j] * (int32_t)b[i + j];
    for (size_t j = 0; j < 16; j++) s += acc[j];
    return s;
}

/* int8 with a scale: q = round(v / scale), scale = max |v| / 127. */
static float quantize_i8(const float *v, size_t n, int8_t *out)
{
    float mx = 0, scale;
    for (size_t i = 0; i < n; i++) mx = fmaxf(mx, fabsf(v[i]));
    scale = mx / 127.0f;
    for (size_t i = 0; i < n; i++) {
        float x = scale > 0 ? v[i] / scale : 0;
        long q = lroundf(x);
        out[i] = (int8_t)(q > 127 ? 127 : q < -127 ? -127 : q);
    }
    return scale;
}

/* ---- build ------------------------------------------------------------------ */

/* Writes through stdio and sums the payload as it goes; bytes wait in
 * `pend` until they make a whole word, so pieces of any size sum as the
 * reader's single pass over the mapped payload does. */
typedef struct writer {
    FILE *f;
    uint64_t sum;
    unsigned char pend[8];
    size_t npend;
    int failed;
} writer;

static void w_put(writer *w, const void *data, size_t len)
{
    const unsigned char *p = data;
    size_t whole;

    if (w->failed || len == 0) return;
    if (fwrite(data, 1, len, w->f) != len) w->failed = 1;
    while (w->npend > 0 && w->npend < 8 && len > 0) {
        w->pend[w->npend++] = *p++;
        len--;
    }
    if (w->npend == 8) {
        w->sum = sum_update(w->sum, w->pend, 8);
        w->npend = 0;
    }
    whole = len & ~(size_t)7;
    w->sum = sum_update(w->sum, p, whole);
    memcpy(w->pend + w->npend, p + whole, len - whole);
    w->npend += len - whole;
}

static void w_zeros(writer *w, size_t len)
{
    static const unsigned char zeros[64];
    while (len > 0) {
        size_t n = len < sizeof zeros ? len : sizeof zeros;
        w_put(w, zeros, n);
        len -= n;
    }
}

static int check_rows(vf_state *st, const float *v, const uint32_t *ids, size_t n, size_t dim, cn_error *err)
{
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < dim; j++) {
            float x = v[i * dim + j];
            if (!isfinite(x))
                return st->host->error_set(err, CN_EINVAL,
                                           "vec-flat: vector %zu (node %u) has a non-finite component %zu", i, ids[i], j);
            if (st->precision == PREC_F16 && fabsf(x) >= 65520.0f)   /* rounds to infinity */
                return st->host->error_set(err, CN_EINVAL,
                                           "vec-flat: vector %zu (node %u) component %zu = %g is beyond the f16 range; "
                                           "use precision f32",
                                           i, ids[i], j, (double)x);
        }
    return 0;
}

/* Encodes row v into buf (row_bytes, zero-padded); *scale for int8. */
static void encode_row(int prec, const float *v, size_t dim, unsigned char *buf, size_t row_bytes, float *scale)
{
    memset(buf, 0, row_bytes);
    if (prec == PREC_F32) {
        memcpy(buf, v, dim * sizeof *v);
    } else if (prec == PREC_F16) {
        for (size_t j = 0; j < dim; j++) {
            uint16_t h = f32_to_f16(v[j]);
            memcpy(buf + 2 * j, &h, 2);
        }
    } else {
        *scale = quantize_i8(v, dim, (int8_t *)buf);
    }
}

static void write_body(writer *w, vf_state *st, const float *v, const uint32_t *ids, size_t n, size_t dim,
                       const layout *l, unsigned char *row)
{
    w_put(w, ids, n * sizeof *ids);
    w_zeros(w, l->scales - l->ids - n * sizeof *ids);
    if (st->precision == PREC_I8) {
        for (size_t i = 0; i < n; i++) {
            float s;
            encode_row(PREC_I8, v + i * dim, dim, row, l->row_bytes, &s);
            w_put(w, &s, sizeof s);
        }
        w_zeros(w, l->rows - l->scales - n * sizeof(float));
    }
    for (size_t i = 0; i < n; i++) {
        float s;
        encode_row(st->precision, v + i * dim, dim, row, l->row_bytes, &s);
        w_put(w, row, l->row_bytes);
    }
}

static char *path_in(vf_state *st, const char *dir, const char *name)
{
    size_t n = strlen(dir) + strlen(name) + 2;
    char *p = st->host->alloc(n);
    if (p != NULL) snprintf(p, n, "%s/%s", dir, name);
    return p;
}

static int vf_open(cn_vector_store *self, const char *dir, cn_error *err);

/* Creates dir/.vectors.flat.<pid>.<n> exclusively (mode 0644 less the
 * umask, like the other index files; mkstemp would make it 0600). */
static int create_temp(vf_state *st, const char *dir, char **tmp)
{
    for (unsigned n = 0; n < 1000; n++) {
        size_t len = strlen(dir) + 64;
        int fd;
        if ((*tmp = st->host->alloc(len)) == NULL) {
            errno = ENOMEM;
            return -1;
        }
        snprintf(*tmp, len, "%s/.%s.%ld.%u", dir, FLAT_NAME, (long)getpid(), n);
        if ((fd = open(*tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644)) >= 0 || errno != EEXIST) return fd;
        st->host->free(*tmp);
        *tmp = NULL;
    }
    errno = EEXIST;
    return -1;
}

static int vf_build(cn_vector_store *self, const char *dir, const float *vectors, const uint32_t *ids, size_t n,
                    size_t dim, cn_error *err)
{
    vf_state *st = state_of(self);
    unsigned char hdr[FLAT_HEADER], *row = NULL;
    char *path = NULL, *tmp = NULL;
    writer w;
    layout l;
    uint32_t pdim;
    int fd, rc;

    if (dim < 1 || dim > FLAT_MAX_DIM)
        return st->host->error_set(err, CN_EINVAL, "vec-flat: vectors of %zu dimensions (expected 1 to %u)", dim,
                                   FLAT_MAX_DIM);
    if (n > 0 && (vectors == NULL || ids == NULL))
        return st->host->error_set(err, CN_EINVAL, "vec-flat: build() was given no vectors or no ids");
    if ((rc = check_rows(st, vectors, ids, n, dim, err)) < 0) return rc;
    pdim = padded_dim((uint32_t)dim, st->precision);
    if (layout_of(n, pdim, st->precision, &l) < 0)
        return st->host->error_set(err, CN_EINVAL, "vec-flat: %zu vectors of %zu dimensions are too many", n, dim);
    path = path_in(st, dir, FLAT_NAME);
    row = malloc(l.row_bytes);
    memset(&w, 0, sizeof w);
    if (path == NULL || row == NULL) {
        rc = st->host->error_set(err, CN_ENOMEM, "vec-flat: out of memory");
        goto done;
    }
    if ((fd = create_temp(st, dir, &tmp)) < 0 || (w.f = fdopen(fd, "wb")) == NULL) {
        rc = st->host->error_set(err, CN_EIO, "vec-flat: cannot create a file in %s: %s", dir, strerror(errno));
        if (fd >= 0) {
            close(fd);
            unlink(tmp);
        }
        goto done;
    }
    memset(hdr, 0, sizeof hdr);
    memcpy(hdr, FLAT_MAGIC, 8);
    cn_put_u32(hdr + 8, FLAT_VERSION);
    cn_put_u32(hdr + 12, (uint32_t)st->precision);
    cn_put_u32(hdr + 16, (uint32_t)dim);
    cn_put_u32(hdr + 20, pdim);
    cn_put_u64(hdr + 24, n);
    cn_put_u64(hdr + 32, l.total - FLAT_HEADER);
    {
        uint32_t bom = FLAT_BOM;
        memcpy(hdr + 48, &bom, 4);
    }
    if (fwrite(hdr, 1, sizeof hdr, w.f) != sizeof hdr) w.failed = 1;
    w.sum = SUM_SEED;
    write_body(&w, st, vectors, ids, n, dim, &l, row);
    cn_put_u64(hdr + 40, sum_final(w.sum ^ header_sum(hdr), l.total));
    if (w.failed || fseek(w.f, 0, SEEK_SET) != 0 || fwrite(hdr, 1, sizeof hdr, w.f) != sizeof hdr ||
        fflush(w.f) != 0 || fsync(fileno(w.f)) != 0) {
        rc = st->host->error_set(err, CN_EIO, "vec-flat: cannot write %s: %s", tmp, strerror(errno));
        fclose(w.f);
        unlink(tmp);
        goto done;
    }
    if (fclose(w.f) != 0 || rename(tmp, path) != 0) {
        rc = st->host->error_set(err, CN_EIO, "vec-flat: cannot write %s: %s", path, strerror(errno));
        unlink(tmp);
        goto done;
    }
    rc = vf_open(self, dir, err);   /* searchable right away */
done:
    free(row);
    st->host->free(path);
    st->host->free(tmp);
    return rc;
}

/* ---- open ------------------------------------------------------------------- */

static void unmap(vf_state *st)
{
    if (st->map != NULL) munmap(st->map, st->map_len);
    st->map = NULL;
    st->map_len = 0;
    st->count = 0;
    st->dim = 0;
}

static int bad_file(vf_state *st, cn_error *err, const char *path, const char *what)
{
    return st->host->error_set(err, CN_ECORRUPT,
                               "vec-flat: %s %s; compile the vector index again (codenib compile --index vector)", path,
                               what);
}

/* Validates the mapped file; fills the state's view of it. */
static int check_file(vf_state *st, const char *path, const unsigned char *m, size_t size, cn_error *err)
{
    uint32_t prec, dim, pdim, bom;
    uint64_t count;
    layout l;
    char what[200];

    if (size < 8 || memcmp(m, FLAT_MAGIC, 8) != 0) return bad_file(st, err, path, "is not a vec-flat file");
    if (size < FLAT_HEADER) return bad_file(st, err, path, "is truncated (shorter than its header)");
    if (cn_get_u32(m + 8) != FLAT_VERSION) {
        snprintf(what, sizeof what, "has format version %u; this vec-flat reads version %u", cn_get_u32(m + 8),
                 FLAT_VERSION);
        return bad_file(st, err, path, what);
    }
    memcpy(&bom, m + 48, 4);
    if (bom != FLAT_BOM) return bad_file(st, err, path, "was written on a machine of another byte order");
    prec = cn_get_u32(m + 12);
    dim = cn_get_u32(m + 16);
    pdim = cn_get_u32(m + 20);
    count = cn_get_u64(m + 24);
    if (prec > PREC_I8 || dim < 1 || dim > FLAT_MAX_DIM || pdim != padded_dim(dim, (int)prec) ||
        cn_get_u32(m + 52) != 0 || cn_get_u64(m + 56) != 0 || count > SIZE_MAX ||
        layout_of((size_t)count, pdim, (int)prec, &l) < 0)
        return bad_file(st, err, path, "has an impossible header");
    if (cn_get_u64(m + 32) != l.total - FLAT_HEADER || size != l.total) {
        snprintf(what, sizeof what, "has %zu bytes where its header announces %zu: it is truncated or was extended",
                 size, l.total);
        return bad_file(st, err, path, what);
    }
    if (sum_final(sum_update(SUM_SEED, m + FLAT_HEADER, size - FLAT_HEADER) ^ header_sum(m), size) != cn_get_u64(m + 40))
        return bad_file(st, err, path, "is corrupt (checksum mismatch)");
    st->prec = prec;
    st->dim = dim;
    st->pdim = pdim;
    st->count = (size_t)count;
    st->row_bytes = l.row_bytes;
    st->ids = (const uint32_t *)(m + l.ids);
    st->scales = (const float *)(m + l.scales);
    st->rows = m + l.rows;
    return 0;
}

static int vf_open(cn_vector_store *self, const char *dir, cn_error *err)
{
    vf_state *st = state_of(self);
    char *path = path_in(st, dir, FLAT_NAME);
    struct stat sb;
    void *m;
    int fd, rc;

    unmap(st);
    if (path == NULL) return st->host->error_set(err, CN_ENOMEM, "vec-flat: out of memory");
    if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0) {
        rc = st->host->error_set(err, errno == ENOENT ? CN_ENOTFOUND : CN_EIO,
                                 "vec-flat: cannot open %s: %s; compile the vector index "
                                 "(codenib compile --index vector)",
                                 path, strerror(errno));
        st->host->free(path);
        return rc;
    }
    if (fstat(fd, &sb) != 0 || sb.st_size < 0) {
        rc = st->host->error_set(err, CN_EIO, "vec-flat: cannot stat %s: %s", path, strerror(errno));
    } else if (sb.st_size == 0) {
        rc = bad_file(st, err, path, "is empty");
    } else if ((m = mmap(NULL, (size_t)sb.st_size, PROT_READ, MAP_PRIVATE, fd, 0)) == MAP_FAILED) {
        rc = st->host->error_set(err, CN_EIO, "vec-flat: cannot map %s: %s", path, strerror(errno));
    } else {
        st->map = m;
        st->map_len = (size_t)sb.st_size;
        if ((rc = check_file(st, path, m, (size_t)sb.st_size, err)) < 0) unmap(st);
    }
    close(fd);
    st->host->free(path);
    return rc;
}

static size_t vf_count(cn_vector_store *self)
{
    return state_of(self)->count;
}

static size_t vf_dim(cn_vector_store *self)
{
    return state_of(self)->dim;
}

/* ---- search ----------------------------------------------------------------- */

/* Better: higher score, then the smaller node id (a total order, so the
 * result never depends on the order of the rows). */
static int better(const cn_search_hit *a, const cn_search_hit *b)
{
    return a->score > b->score || (a->score == b->score && a->node < b->node);
}

/* Min-heap on `better`: the root is the worst hit kept. */
static void sift_down(cn_search_hit *h, size_t n, size_t i)
{
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, w = i;
        cn_search_hit t;
        if (l < n && better(&h[w], &h[l])) w = l;
        if (r < n && better(&h[w], &h[r])) w = r;
        if (w == i) return;
        t = h[i];
        h[i] = h[w];
        h[w] = t;
        i = w;
    }
}

static void sift_up(cn_search_hit *h, size_t i)
{
    while (i > 0) {
        size_t p = (i - 1) / 2;
        cn_search_hit t;
        if (!better(&h[p], &h[i])) return;
        t = h[i];
        h[i] = h[p];
        h[p] = t;
        i = p;
    }
}

static int hit_order(const void *a, const void *b)
{
    const cn_search_hit *x = a, *y = b;
    return better(x, y) ? -1 : better(y, x) ? 1 : 0;
}

typedef struct scorer {
    const vf_state *st;
    float *q;           /* padded query (f32, f16) */
    int8_t *q8;         /* quantized query (int8) */
    float q8_scale;
    float *row;         /* decoded f16 row */
} scorer;

static double score_row(scorer *s, size_t i)
{
    const vf_state *st = s->st;
    const unsigned char *r = st->rows + i * st->row_bytes;

    if (st->prec == PREC_F32) return dot_f32((const float *)r, s->q, st->pdim);
    if (st->prec == PREC_F16) {
        f16_row_to_f32((const uint16_t *)r, s->row, st->pdim);
        return dot_f32(s->row, s->q, st->pdim);
    }
    return (double)dot_i8((const int8_t *)r, s->q8, st->pdim) * (double)st->scales[i] * (double)s->q8_scale;
}

static int vf_search(cn_vector_store *self, const float *query, size_t k, int (*allow)(uint32_t node, void *data),
                     void *allow_data, cn_search_hit *hits, size_t *n_hits, cn_error *err)
{
    vf_state *st = state_of(self);
    scorer s = {st, NULL, NULL, 0, NULL};
    size_t n = 0;

    *n_hits = 0;
    if (st->map == NULL)
        return st->host->error_set(err, CN_EINVAL, "vec-flat: no vectors are open (build() or open() them first)");
    for (uint32_t j = 0; j < st->dim; j++)
        if (!isfinite(query[j]))
            return st->host->error_set(err, CN_EINVAL, "vec-flat: query component %u is not finite", j);
    if (k == 0 || st->count == 0) return 0;
    s.q = calloc(st->pdim, sizeof *s.q);
    s.row = calloc(st->pdim, sizeof *s.row);
    s.q8 = calloc(st->pdim, 1);
    if (s.q == NULL || s.row == NULL || s.q8 == NULL) {
        free(s.q);
        free(s.row);
        free(s.q8);
        return st->host->error_set(err, CN_ENOMEM, "vec-flat: out of memory");
    }
    memcpy(s.q, query, st->dim * sizeof *query);
    if (st->prec == PREC_I8) s.q8_scale = quantize_i8(s.q, st->dim, s.q8);
    for (size_t i = 0; i < st->count; i++) {
        cn_search_hit h;
        if (allow != NULL && !allow(st->ids[i], allow_data)) continue;
        h.node = st->ids[i];
        h.score = score_row(&s, i);
        if (n < k) {
            hits[n] = h;
            sift_up(hits, n++);
        } else if (better(&h, &hits[0])) {
            hits[0] = h;
            sift_down(hits, n, 0);
        }
    }
    if (n > 1) qsort(hits, n, sizeof *hits, hit_order);
    *n_hits = n;
    free(s.q);
    free(s.row);
    free(s.q8);
    return 0;
}

/* ---- create ----------------------------------------------------------------- */

static int option(const char *key, cn_json *val, void *data)
{
    void **ctx = data;
    vf_state *st = ctx[0];
    cn_error *err = ctx[1];
    const char *s = st->host->json->get_string(val);

    if (strcmp(key, "precision") != 0)
        return st->host->error_set(err, CN_EINVAL, "vec-flat: unknown option '%s' (known: precision)", key);
    for (int p = PREC_F32; s != NULL && p <= PREC_I8; p++)
        if (strcmp(s, prec_names[p]) == 0) {
            st->precision = p;
            return 0;
        }
    return st->host->error_set(err, CN_EINVAL,
                               "vec-flat: option 'precision' must be \"f32\", \"f16\" or \"int8\" (got %s%s%s)",
                               s ? "\"" : "a non-string", s ? s : "", s ? "\"" : "");
}

static int parse_options(vf_state *st, const char *config_json, cn_error *err)
{
    const cn_json_services *js = st->host->json;
    cn_json *cfg = js->parse(config_json ? config_json : "{}", err);
    void *ctx[2] = {st, err};
    int rc;

    if (cfg == NULL) {
        char why[CN_ERROR_MESSAGE_MAX];
        memcpy(why, err ? err->message : "", err ? sizeof why : 1);
        return st->host->error_set(err, CN_EPARSE, "vec-flat: options are not valid JSON: %s", why);
    }
    if (js->type(cfg) != CN_JSON_OBJECT) {
        js->put(cfg);
        return st->host->error_set(err, CN_EINVAL, "vec-flat: options must be a JSON object");
    }
    rc = js->object_foreach(cfg, option, ctx);
    js->put(cfg);
    return rc < 0 ? rc : 0;
}

static void vf_destroy(cn_vector_store *self)
{
    vf_state *st;
    if (self == NULL) return;
    st = state_of(self);
    unmap(st);
    st->host->free(st);
}

static int vf_create(const cn_host *host, const struct cn_skill_context *ctx, const char *config_json, void **out,
                     cn_error *err)
{
    vf_state *st;
    int rc;

    (void)ctx;
    *out = NULL;
    if (host->json == NULL)
        return host->error_set(err, CN_EUNSUPPORTED, "vec-flat needs the host's JSON services");
    if ((st = host->alloc(sizeof *st)) == NULL) return host->error_set(err, CN_ENOMEM, "vec-flat: out of memory");
    memset(st, 0, sizeof *st);
    st->host = host;
    st->precision = PREC_F32;
    if ((rc = parse_options(st, config_json, err)) < 0) {
        host->free(st);
        return rc;
    }
    st->vs.struct_size = (uint32_t)sizeof st->vs;
    st->vs.data = st;
    st->vs.build = vf_build;
    st->vs.open = vf_open;
    st->vs.count = vf_count;
    st->vs.dim = vf_dim;
    st->vs.search = vf_search;
    st->vs.destroy = vf_destroy;
    *out = &st->vs;
    return 0;
}

CN_BACKEND_DEFINE(vec_flat, "vec-flat", "1.0.0", CN_BACKEND_VECTOR_STORE, vf_create);
