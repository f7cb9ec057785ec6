/* SPDX-License-Identifier: Apache-2.0 */
/* The parse stage (see cn_parse.h).  Workers take files by an atomic index
 * and write only their own record slot, so the result does not depend on
 * scheduling.  Each worker owns one parser per language it meets. */
#include "cn_parse.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../plugin/cn_host.h"
#include "../util/cn_beneath.h"
#include "cn_idxfile.h"

#define MAX_LANGS 64

void cn_file_rec_clear(cn_file_rec *r)
{
    free(r->path);
    free(r->error);
    if (!r->borrowed) {
        free(r->nodes);
        free(r->refs);
        cn_buf_free(&r->pool);
    }
    cn_buf_free(&r->terms);
    free(r->dt);
    free(r->doc_off);
    memset(r, 0, sizeof *r);
}

void cn_file_rec_move(cn_file_rec *src, cn_file_rec *dst)
{
    char *path = src->path;
    *dst = *src;
    dst->path = NULL;
    memset(src, 0, sizeof *src);
    src->path = path;   /* lookups by path go on reading it */
    dst->reused = true;
}

static uint32_t pool_add(cn_file_rec *r, const char *s)
{
    uint32_t off;
    if (s == NULL) return UINT32_MAX;
    if (r->pool.len > UINT32_MAX - 4096) return UINT32_MAX;
    off = (uint32_t)r->pool.len;
    if (cn_buf_append(&r->pool, s, strlen(s) + 1) < 0) return UINT32_MAX;
    return off;
}

static int sink_node(void *data, const cn_lang_node *n)
{
    cn_file_rec *r = data;
    cn_rec_node *x;
    if (r->n_nodes >= INT32_MAX) return CN_EINVAL;
    if (r->n_nodes == r->cap_nodes) {
        size_t cap = r->cap_nodes ? r->cap_nodes * 2 : 32;
        cn_rec_node *p = realloc(r->nodes, cap * sizeof *p);
        if (p == NULL) return CN_ENOMEM;
        r->nodes = p;
        r->cap_nodes = cap;
    }
    x = &r->nodes[r->n_nodes];
    memset(x, 0, sizeof *x);   /* written to disk as it is (cn_records.c): no stray padding */
    x->kind = (uint8_t)n->kind;
    x->flags = n->flags;
    /* Clamp what a backend claims to the file, so readers can trust it. */
    x->start_line = n->start_line < 1 ? 1 : n->start_line;
    x->end_line = n->end_line < x->start_line ? x->start_line : n->end_line;
    x->parent = n->parent >= 0 && (size_t)n->parent < r->n_nodes ? n->parent : -1;
    x->name = pool_add(r, n->name ? n->name : "");
    x->qualname = pool_add(r, n->qualname ? n->qualname : (n->name ? n->name : ""));
    if (x->name == UINT32_MAX || x->qualname == UINT32_MAX || r->pool.oom) return CN_ENOMEM;
    return (int)r->n_nodes++;
}

static int sink_ref(void *data, const cn_lang_ref *ref)
{
    cn_file_rec *r = data;
    cn_rec_ref *x;
    if (ref->name == NULL) return 0;
    if (r->n_refs == r->cap_refs) {
        size_t cap = r->cap_refs ? r->cap_refs * 2 : 64;
        cn_rec_ref *p = realloc(r->refs, cap * sizeof *p);
        if (p == NULL) return CN_ENOMEM;
        r->refs = p;
        r->cap_refs = cap;
    }
    x = &r->refs[r->n_refs];
    memset(x, 0, sizeof *x);
    x->kind = (uint8_t)ref->kind;
    x->from = ref->from >= 0 && (size_t)ref->from < r->n_nodes ? ref->from : -1;
    x->line = ref->line < 1 ? 1 : ref->line;
    x->column = ref->column;
    x->name = pool_add(r, ref->name);
    x->target = ref->target ? pool_add(r, ref->target) : UINT32_MAX;
    if (x->name == UINT32_MAX || r->pool.oom) return CN_ENOMEM;
    r->n_refs++;
    return 0;
}

/* Strict UTF-8 (no overlongs, surrogates or code points past U+10FFFF). */
static bool valid_utf8(const unsigned char *s, size_t n)
{
    size_t i = 0;
    while (i < n) {
        unsigned char c = s[i];
        size_t need;
        uint32_t cp;
        if (c < 0x80) {
            i++;
            continue;
        } else if ((c & 0xE0) == 0xC0) {
            need = 1;
            cp = c & 0x1F;
        } else if ((c & 0xF0) == 0xE0) {
            need = 2;
            cp = c & 0x0F;
        } else if ((c & 0xF8) == 0xF0) {
            need = 3;
            cp = c & 0x07;
        } else {
            return false;
        }
        for (size_t k = 1; k <= need; k++) {
            if (i + k >= n || (s[i + k] & 0xC0) != 0x80) return false;
            cp = (cp << 6) | (s[i + k] & 0x3F);
        }
        if ((need == 1 && cp < 0x80) || (need == 2 && cp < 0x800) || (need == 3 && cp < 0x10000) ||
            cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
            return false;
        i += need + 1;
    }
    return true;
}

typedef struct worker_ctx {
    const cn_parse_opts *opts;
    const cn_walk_file *files;
    cn_file_rec *recs;
    size_t n;
    const uint32_t *order;    /* the files, largest first */
    atomic_size_t next;
    atomic_size_t done;
    pthread_mutex_t lock;     /* progress callback and first fatal error */
    int fatal;
    cn_error fatal_err;
    const cn_lang_descriptor *descs[MAX_LANGS];
    const cn_lang_entry *entries[MAX_LANGS];
    size_t n_langs;
    cn_host host;
    cn_host_data host_data;
    int rootfd;               /* files are read beneath it (cn_beneath.h) */
} worker_ctx;

static size_t lang_slot(const worker_ctx *c, const cn_lang_entry *e)
{
    for (size_t i = 0; i < c->n_langs; i++)
        if (c->entries[i] == e) return i;
    return MAX_LANGS;
}

/* r (holding its path) takes over old's contents, with the listing's view
 * of the file. */
static void reuse(cn_file_rec *r, cn_file_rec *old, const cn_walk_file *f)
{
    char *path = r->path;
    cn_file_rec_move(old, r);
    r->path = path;
    r->language = f->lang->language;
    r->is_test = f->is_test;
    r->stamp = f->stamp;
}

static void parse_one(worker_ctx *c, cn_lang_parser **parsers, size_t i)
{
    const cn_walk_file *f = &c->files[i];
    cn_file_rec *r = &c->recs[i];
    char *abs = cn_path_join(c->opts->root, f->path), *src = NULL;
    size_t len = 0, slot = lang_slot(c, f->lang);
    const cn_lang_descriptor *d = slot < MAX_LANGS ? c->descs[slot] : NULL;
    cn_file_rec *old = NULL;

    memset(r, 0, sizeof *r);
    r->path = cn_strdup(f->path);
    r->language = f->lang->language;
    r->is_test = f->is_test;
    if (abs == NULL || r->path == NULL || d == NULL) {
        r->status = CN_REC_FAILED;
        r->error = cn_strdup(d == NULL ? "no backend" : "out of memory");
        free(abs);
        return;
    }
    /* unchanged since the last build, by its stamp: not even read */
    if (c->opts->lookup && (old = c->opts->lookup(f->path, &f->stamp, f->size, 0, d->version,
                                                  c->opts->lookup_data)) != NULL) {
        reuse(r, old, f);
        r->unread = true;
        free(abs);
        return;
    }
    /* beneath the root, following no link: a directory swapped for one
     * since the listing does not lead the read outside the repository */
    if (cn_read_beneath(c->rootfd, f->path, 0, &src, &len) < 0) {
        r->status = CN_REC_UNREADABLE;
        r->error = cn_strdup(cn_error_last()->message);
        free(abs);
        return;
    }
    free(abs);
    r->size = len;
    r->stamp = f->stamp;
    r->hash = cn_hash64(src, len, 0);
    {
        uint32_t lines = 0;
        for (size_t k = 0; k < len; k++) lines += src[k] == '\n';
        if (len > 0 && src[len - 1] != '\n') lines++;
        r->n_lines = lines;
    }
    /* the same content as last time: parsed, or left out, as it was then
     * (its stamp is the new one) */
    if (c->opts->lookup && (old = c->opts->lookup(f->path, NULL, len, r->hash, d->version,
                                                  c->opts->lookup_data)) != NULL) {
        reuse(r, old, f);
    } else if (memchr(src, '\0', len) != NULL) {
        r->status = CN_REC_BINARY;
    } else if (!valid_utf8((const unsigned char *)src, len)) {
        r->status = CN_REC_UNDECODABLE;
    } else {
        cn_error err = {0, ""};
        cn_lang_sink sink = {(uint32_t)sizeof sink, r, sink_node, sink_ref};
        int prc = 0;
        if (parsers[slot] == NULL && d->create(&c->host, &parsers[slot], &err) < 0) {
            r->status = CN_REC_FAILED;
            r->error = cn_strdup(err.message);
        } else if ((prc = parsers[slot]->parse(parsers[slot], f->path, src, len, &sink, &err)) < 0) {
            r->status = CN_REC_FAILED;
            r->error = cn_strdup(err.message[0] ? err.message : "the backend failed");
            /* the content's fault, unless memory ran out */
            r->lasting = prc != CN_ENOMEM && err.code != CN_ENOMEM && r->error != NULL;
        } else if (cn_docterms_build(r, src, len) < 0) {
            r->status = CN_REC_FAILED;
            r->error = cn_strdup(cn_error_last()->message);
        }
    }
    free(src);
}

static void *worker(void *arg)
{
    worker_ctx *c = arg;
    cn_lang_parser *parsers[MAX_LANGS] = {0};
    size_t i;

    while ((i = atomic_fetch_add(&c->next, 1)) < c->n) {
        size_t done;
        parse_one(c, parsers, c->order ? c->order[i] : i);
        done = atomic_fetch_add(&c->done, 1) + 1;
        if (c->opts->progress) {
            pthread_mutex_lock(&c->lock);
            c->opts->progress(done, c->n, c->opts->progress_data);
            pthread_mutex_unlock(&c->lock);
        }
    }
    for (size_t k = 0; k < MAX_LANGS; k++)
        if (parsers[k]) parsers[k]->destroy(parsers[k]);
    return NULL;
}

/* Largest files first: the last file a worker takes is then a small one,
 * and the workers finish together rather than one waiting on another's
 * big file (a counting sort on the size's power of two, stable). */
static int size_class(uint64_t size)   /* 0 for the largest sizes, 64 for none */
{
    return size ? __builtin_clzll(size) : 64;
}

static uint32_t *largest_first(const cn_walk_file *files, size_t n)
{
    uint32_t *order = malloc((n ? n : 1) * sizeof *order);
    size_t count[65] = {0}, at[65];
    if (order == NULL || n > UINT32_MAX) {
        free(order);
        return NULL;
    }
    for (size_t i = 0; i < n; i++) count[size_class(files[i].size)]++;
    at[0] = 0;
    for (int b = 1; b < 65; b++) at[b] = at[b - 1] + count[b - 1];
    for (size_t i = 0; i < n; i++) order[at[size_class(files[i].size)]++] = (uint32_t)i;
    return order;
}

int cn_parse_files(const cn_parse_opts *opts, const cn_walk_file *files, size_t n,
                   cn_file_rec *recs, cn_parse_stats *stats)
{
    worker_ctx *c = calloc(1, sizeof *c);
    pthread_t tids[64];
    int threads = opts->threads, started = 0, rc = 0;

    memset(stats, 0, sizeof *stats);
    if (c == NULL) return cn_error_set(CN_ENOMEM, "out of memory");
    c->opts = opts;
    c->files = files;
    c->recs = recs;
    c->n = n;
    c->rootfd = -1;
    c->order = largest_first(files, n);   /* NULL: in listing order */
    atomic_init(&c->next, 0);
    atomic_init(&c->done, 0);
    pthread_mutex_init(&c->lock, NULL);

    /* Open every backend the listing needs before any thread starts: the
     * language table is not shared mutably across threads. */
    for (size_t i = 0; i < n; i++) {
        const cn_lang_entry *e = files[i].lang;
        if (lang_slot(c, e) < MAX_LANGS) continue;
        if (c->n_langs == MAX_LANGS) {
            rc = cn_error_set(CN_EINVAL, "more than %d languages in one build", MAX_LANGS);
            goto out;
        }
        if ((rc = cn_langs_open((cn_lang_entry *)e, &c->descs[c->n_langs])) < 0) goto out;
        c->entries[c->n_langs++] = e;
    }
    c->host_data.skill_id = "compile";
    c->host_data.repo_root = opts->root;
    c->host_data.defaults = NULL;
    cn_host_init(&c->host, &c->host_data);
    if ((c->rootfd = open(opts->root, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0) {
        rc = cn_error_set(CN_EIO, "%s: cannot open: %s", opts->root, strerror(errno));
        goto out;
    }

    if (threads <= 0) threads = (int)sysconf(_SC_NPROCESSORS_ONLN);
    if (threads < 1) threads = 1;
    if (threads > 64) threads = 64;
    if ((size_t)threads > n) threads = n ? (int)n : 1;
    for (int t = 1; t < threads; t++) {
        if (pthread_create(&tids[t], NULL, worker, c) != 0) break;
        started++;
    }
    worker(c);
    for (int t = 1; t <= started; t++) pthread_join(tids[t], NULL);

    for (size_t i = 0; i < n; i++) {
        const cn_file_rec *r = &recs[i];
        if (r->status != CN_REC_PARSED) stats->left_unchanged += r->reused;
        switch (r->status) {
        case CN_REC_PARSED:
            if (r->reused) stats->reused++;
            else stats->parsed++;
            if (r->unread) stats->unread++;
            stats->bytes += r->size;
            stats->lines += r->n_lines;
            break;
        case CN_REC_BINARY: stats->binary++; break;
        case CN_REC_UNDECODABLE: stats->undecodable++; break;
        case CN_REC_UNREADABLE: stats->unreadable++; break;
        case CN_REC_FAILED: stats->failed++; break;
        }
    }
out:
    if (c->rootfd >= 0) close(c->rootfd);
    pthread_mutex_destroy(&c->lock);
    free((void *)c->order);
    free(c);
    return rc;
}
