/* SPDX-License-Identifier: Apache-2.0 */
/* The repository compiler (see cn_compile.h). */
#include "cn_compile.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cn_bm25.h"
#include "cn_cache.h"
#include "cn_graph.h"
#include "cn_idxfile.h"
#include "cn_index.h"
#include "cn_langs.h"
#include "cn_nodes.h"
#include "cn_records.h"
#include "../config/cn_config.h"
#include "../plugin/cn_host.h"
#include "../util/cn_git.h"

#include <codenib/version.h>

static uint64_t realtime_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void progress(const cn_compile_opts *o, cn_compile_stage stage, size_t done, size_t total,
                     const char *note)
{
    if (o->progress) o->progress(stage, done, total, note, o->progress_data);
}

/* Charges the time since the last mark to `stage`. */
static void mark(cn_compile_result *res, double *last, cn_compile_stage stage)
{
    double t = now_seconds();
    res->stage_seconds[stage] += t - *last;
    *last = t;
}

int cn_cache_dir_for(const char *repo, char **out)
{
    char *real = realpath(repo, NULL), *home = NULL;
    const char *base;
    cn_buf b = CN_BUF_INIT;
    int rc;

    *out = NULL;
    if (real == NULL) return cn_error_set(CN_ENOTFOUND, "repository %s: %s", repo, strerror(errno));
    base = strrchr(real, '/');
    base = base && base[1] ? base + 1 : "root";
    /* $CODENIB_HOME, an older ~/.codenib, else the XDG cache (cn_config.h) */
    if ((rc = cn_config_index_home(&home, NULL)) < 0) {
        free(real);
        return rc;
    }
    cn_buf_printf(&b, "%s/repositories/%s-%016llx", home, base,
                  (unsigned long long)cn_hash64(real, strlen(real), 0));
    free(home);
    free(real);
    *out = cn_buf_steal(&b);
    return *out ? 0 : cn_error_set(CN_ENOMEM, "out of memory");
}

const char *cn_compile_stage_name(cn_compile_stage stage)
{
    static const char *const names[] = {"waiting for another compile", "listing files", "parsing",
                                        "writing nodes", "indexing (BM25)", "linking symbols",
                                        "embedding", "publishing"};
    return (size_t)stage < sizeof names / sizeof names[0] ? names[stage] : "compiling";
}

/* ---- lock --------------------------------------------------------------- */

static int lock_acquire(const cn_compile_opts *o, int cache_fd, const char *cache_dir, int *fd_out)
{
    char *path = cn_path_join(cache_dir, "lock");
    int fd, rc;

    *fd_out = -1;
    if (path == NULL) return cn_error_set(CN_ENOMEM, "out of memory");
    /* never through a link: the note below truncates the file */
    if ((rc = cn_cache_lock_open(cache_fd, cache_dir, &fd)) < 0) {
        free(path);
        return rc;
    }
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        char who[256] = "";
        ssize_t k = pread(fd, who, sizeof who - 1, 0);
        who[k > 0 ? k : 0] = '\0';
        if (who[0] && who[strlen(who) - 1] == '\n') who[strlen(who) - 1] = '\0';
        if (o->no_wait) {
            rc = cn_error_set(CN_ELOCKED, "another compile of this repository is running (%s); "
                                          "try again when it ends", who[0] ? who : "lock held");
            close(fd);
            free(path);
            return rc;
        }
        progress(o, CN_STAGE_LOCK, 0, 0, who[0] ? who : "another compile");
        while (flock(fd, LOCK_EX) != 0) {
            if (errno != EINTR) {
                rc = cn_error_set(CN_EIO, "%s: cannot lock: %s", path, strerror(errno));
                close(fd);
                free(path);
                return rc;
            }
        }
    }
    {
        char who[128];
        int n = snprintf(who, sizeof who, "pid %ld since %ld\n", (long)getpid(), (long)time(NULL));
        if (ftruncate(fd, 0) == 0 && pwrite(fd, who, (size_t)n, 0) < 0) {
            /* the lock holds even if the note cannot be written */
        }
    }
    free(path);
    *fd_out = fd;
    return 0;
}

static void lock_release(int fd)
{
    if (fd < 0) return;
    if (ftruncate(fd, 0) != 0) {
        /* nothing to do: the next holder rewrites it */
    }
    flock(fd, LOCK_UN);
    close(fd);
}

/* ---- cache directory housekeeping --------------------------------------- */

/* Under the lock, anything named gen-* that is neither the generation
 * being served (`keep`) nor this build's (named `mine`, with or without
 * ".tmp") is garbage: an interrupted build, or the generation the last
 * build replaced. */
typedef struct collector {
    char *cache_dir, *keep, *mine;
    int cache_fd;   /* the cache directory: entries are removed relative to it */
    pthread_t tid;
    bool running;
} collector;

static void *collect_garbage(void *data)
{
    const collector *c = data;
    size_t ml = strlen(c->mine);
    int fd = openat(c->cache_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    struct dirent *de;
    if (d == NULL) {
        if (fd >= 0) close(fd);
        return NULL;
    }
    while ((de = readdir(d)) != NULL) {
        if (!cn_cache_is_generation(de->d_name)) continue;
        if (c->keep && strcmp(de->d_name, c->keep) == 0) continue;
        if (strncmp(de->d_name, c->mine, ml) == 0 && (de->d_name[ml] == '\0' || strcmp(de->d_name + ml, ".tmp") == 0))
            continue;
        /* checked before the collector started; one that is not what
         * codenib made by now is left alone (and refused next time) */
        cn_cache_remove(c->cache_fd, c->cache_dir, de->d_name);
    }
    closedir(d);
    cn_error_clear();
    return NULL;
}

/* Removing a generation takes milliseconds (and the disk's discards): it
 * is done on a thread of its own while this build lists and parses, and
 * the generation a build replaces waits for the next build. */
static void collector_start(collector *c, int cache_fd, const char *cache_dir, const char *current,
                            const char *mine)
{
    const char *slash = current ? strrchr(current, '/') : NULL;
    c->cache_fd = cache_fd;
    c->cache_dir = cn_strdup(cache_dir);
    c->keep = current ? cn_strdup(slash ? slash + 1 : current) : NULL;
    c->mine = cn_strdup(mine);
    if (c->cache_dir == NULL || c->mine == NULL || (current && c->keep == NULL)) return;   /* next time */
    if (pthread_create(&c->tid, NULL, collect_garbage, c) == 0) c->running = true;
    else collect_garbage(c);
}

static void collector_wait(collector *c)
{
    if (c->running) pthread_join(c->tid, NULL);
    c->running = false;
    free(c->cache_dir);
    free(c->keep);
    free(c->mine);
    c->cache_dir = c->keep = c->mine = NULL;
}

static void fsync_entry(int dfd, const char *name)
{
    int fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) return;
    fsync(fd);
    close(fd);
}

/* Publishes generation `gen` (built in `gen`.tmp) and points `current` at
 * it, relative to the cache directory: nothing there is followed. */
static int publish(int cache_fd, const char *cache_dir, const char *gen)
{
    char tmp_name[96];
    int rc = 0;

    snprintf(tmp_name, sizeof tmp_name, "%s.tmp", gen);
    fsync_entry(cache_fd, tmp_name);
    if (renameat(cache_fd, tmp_name, cache_fd, gen) != 0) {
        rc = cn_error_set(CN_EIO, "cannot publish %s/%s: %s", cache_dir, gen, strerror(errno));
    } else {
        /* a link, if anything: checked with the cache's other entries */
        unlinkat(cache_fd, "current.tmp", 0);
        if (symlinkat(gen, cache_fd, "current.tmp") != 0 || renameat(cache_fd, "current.tmp", cache_fd, "current") != 0)
            rc = cn_error_set(CN_EIO, "cannot switch %s/current to %s: %s", cache_dir, gen, strerror(errno));
        fsync(cache_fd);
    }
    return rc;
}

/* ---- repository identity ------------------------------------------------ */

/* git HEAD and whether tracked files differ from it.  Two git processes
 * (10-20 ms together) that need nothing of the build: they run on a thread
 * from the start of it, and the manifest waits for them at the end. */
typedef struct identity_job {
    const char *root;
    pthread_t tid;
    bool running;
    char *head; /* NULL: not a git checkout, or git not there */
    int dirty;  /* 1, 0, or -1: unknown */
} identity_job;

static void *identity_thread(void *data)
{
    identity_job *j = data;
    static const char *const head_args[] = {"rev-parse", "--verify", "-q", "HEAD", NULL};
    /* submodules ignored: each has a config of its own */
    static const char *const dirty_args[] = {"status", "--porcelain", "--untracked-files=no",
                                             "--ignore-submodules=all", NULL};
    char *out = NULL;
    int status = -1;

    j->head = NULL;
    j->dirty = -1;
    if (cn_git_capture(j->root, false, head_args, 4096, &out, NULL, &status) == 0 && status == 0 && out[0]) {
        out[strcspn(out, "\n")] = '\0';
        j->head = out;
        out = NULL;
        if (cn_git_capture(j->root, false, dirty_args, 0, &out, NULL, &status) == 0 && status == 0)
            j->dirty = out[0] != '\0';
    }
    free(out);
    cn_error_clear();
    return NULL;
}

static void identity_start(identity_job *j, const char *root)
{
    j->root = root;
    j->running = pthread_create(&j->tid, NULL, identity_thread, j) == 0;
    if (!j->running) identity_thread(j); /* no thread to be had: now */
}

/* Waits for the thread; idempotent. */
static void identity_wait(identity_job *j)
{
    if (j->running) pthread_join(j->tid, NULL);
    j->running = false;
}

static void git_identity(identity_job *j, json_object *o)
{
    identity_wait(j);
    json_object_object_add(o, "git_head", j->head ? json_object_new_string(j->head) : NULL);
    json_object_object_add(o, "dirty", j->head && j->dirty >= 0 ? json_object_new_boolean(j->dirty) : NULL);
}

static char *hex64(uint64_t v)
{
    cn_buf b = CN_BUF_INIT;
    cn_buf_printf(&b, "%016llx", (unsigned long long)v);
    return cn_buf_steal(&b);
}

/* What decides which files are indexed: part of the manifest, so a
 * different selection makes the index stale. */
static uint64_t selection_digest(const cn_compile_opts *o)
{
    cn_buf b = CN_BUF_INIT;
    uint64_t h;
    cn_buf_printf(&b, "default_excludes=%d;", !o->no_default_excludes);
    for (size_t i = 0; i < o->exclude_dirs.len; i++) cn_buf_printf(&b, "x=%s;", o->exclude_dirs.items[i]);
    for (size_t i = 0; i < o->languages.len; i++) cn_buf_printf(&b, "l=%s;", o->languages.items[i]);
    h = cn_hash64(b.data ? b.data : "", b.len, 1);
    cn_buf_free(&b);
    return h;
}

static uint64_t source_fingerprint(const cn_file_rec *recs, size_t n)
{
    uint64_t h = 0x636f64656e6962ull;
    for (size_t i = 0; i < n; i++) {
        if (recs[i].status != CN_REC_PARSED) continue;
        h = cn_hash64(recs[i].path, strlen(recs[i].path), h);
        h = cn_hash64(&recs[i].hash, sizeof recs[i].hash, h);
    }
    return h;
}

static char *iso_now(void)
{
    char buf[64];
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return cn_strdup(buf);
}

static long long file_size(const char *dir, const char *name)
{
    char *p = cn_path_join(dir, name);
    struct stat st;
    long long n = p && stat(p, &st) == 0 ? (long long)st.st_size : -1;
    free(p);
    return n;
}

/* ---- BM25 --------------------------------------------------------------- */

/* The parsed files' terms were counted by the parse workers: only the
 * merge into one index is left here.  The documents of unchanged files are
 * taken from the previous index's postings and only the others are added:
 * the same bytes, without interning every file's terms again. */
static int add_file_terms(cn_bm25_builder *bld, const cn_file_rec *r, uint32_t base, uint32_t **handles,
                          size_t *cap_handles)
{
    size_t n_terms = 0;
    int rc = 0;
    if (r->doc_off == NULL)
        return cn_error_set(CN_ECORRUPT, "%s: no BM25 terms in its parse record (compile with --rebuild)", r->path);
    /* intern each distinct term of the file once */
    for (size_t off = 0; off < r->terms.len && rc == 0; n_terms++) {
        const char *t = r->terms.data + off;
        size_t len = strlen(t);
        if (n_terms == *cap_handles) {
            size_t cap = *cap_handles ? *cap_handles * 2 : 4096;
            uint32_t *h = realloc(*handles, cap * sizeof *h);
            if (h == NULL) return cn_error_set(CN_ENOMEM, "out of memory");
            *handles = h;
            *cap_handles = cap;
        }
        rc = cn_bm25_intern(bld, t, len, &(*handles)[n_terms]);
        off += len + 1;
    }
    for (size_t k = 0; k < r->n_nodes + 1 && rc == 0; k++)
        if ((rc = cn_bm25_add_counts(bld, base + (uint32_t)k, *handles, n_terms, r->dt + 2 * (size_t)r->doc_off[k],
                                     r->doc_off[k + 1] - r->doc_off[k])) == CN_EINVAL)
            rc = cn_error_prefix("%s (compile with --rebuild)", r->path);
    return rc;
}

static int build_bm25_with(const cn_compile_opts *o, const cn_file_rec *recs, size_t n, uint32_t n_nodes,
                           const char *path, const uint32_t *remap, const bool *from_old, const cn_bm25 *old)
{
    cn_bm25_builder *bld = NULL;
    uint32_t base = 0, *handles = NULL;
    size_t done = 0, total = 0, cap_handles = 0;
    int rc = cn_bm25_builder_new(CN_BM25_DEFAULT_K1, CN_BM25_DEFAULT_B, &bld);

    for (size_t i = 0; i < n; i++) total += recs[i].status == CN_REC_PARSED;
    for (size_t i = 0; i < n && rc == 0; i++) {
        const cn_file_rec *r = &recs[i];
        if (r->status != CN_REC_PARSED) continue;
        /* a kept file's documents come from the old index */
        if (old == NULL || !from_old[i]) rc = add_file_terms(bld, r, base, &handles, &cap_handles);
        base += (uint32_t)(r->n_nodes + 1);
        progress(o, CN_STAGE_BM25, ++done, total, NULL);
    }
    free(handles);
    if (rc == 0) rc = old ? cn_bm25_write_merged(bld, old, remap, n_nodes, path) : cn_bm25_write(bld, n_nodes, path);
    cn_bm25_builder_free(bld);
    return rc;
}

/* With the previous build's records and BM25 index (opened before parsing
 * by prev_bm25: the records hold no terms, so a file is reused only when
 * its documents can come from there), the unchanged files' documents are
 * taken from the old postings.  Only when no file was reused is the index
 * built from the parsed terms alone. */
static int build_bm25(const cn_compile_opts *o, const cn_file_rec *recs, size_t n, uint32_t n_nodes,
                      const char *path, const cn_records *prev, const cn_bm25 *old, bool *merged)
{
    uint32_t *remap = NULL, n_old = 0, kept = 0;
    bool *from_old = calloc(n ? n : 1, sizeof *from_old);
    int rc;

    if (from_old == NULL) return cn_error_set(CN_ENOMEM, "out of memory");
    if (old != NULL && prev != NULL && (rc = cn_records_doc_map(prev, recs, n, &remap, &n_old, from_old, &kept)) < 0)
        goto out;
    if (kept > 0) {
        rc = build_bm25_with(o, recs, n, n_nodes, path, remap, from_old, old);
        if (rc == CN_EINVAL || rc == CN_ECORRUPT) {   /* checked on open: a codenib bug, or a file changed under it */
            cn_error e = *cn_error_last();
            rc = cn_error_set(rc, "%s; compile with --rebuild", e.message);
        }
        *merged = rc == 0;
    } else {
        rc = build_bm25_with(o, recs, n, n_nodes, path, NULL, NULL, NULL);
    }
out:
    free(from_old);
    free(remap);
    return rc;
}

/* The previous build's BM25 index, when it can give this build the
 * documents of unchanged files: readable, and numbering as many documents
 * as the previous records do.  NULL otherwise (no file is reused then). */
static cn_bm25 *prev_bm25(const cn_records *prev, const char *prev_dir)
{
    char *p = cn_path_join(prev_dir, CN_BM25_INDEX_FILE);
    cn_bm25 *old = NULL;
    if (p == NULL || cn_bm25_open(p, &old) < 0 || cn_bm25_doc_count(old) != cn_records_doc_count(prev) ||
        cn_bm25_k1(old) != CN_BM25_DEFAULT_K1 || cn_bm25_b(old) != CN_BM25_DEFAULT_B) {
        cn_bm25_close(old);
        old = NULL;
    }
    cn_error_clear();
    free(p);
    return old;
}

/* ---- incremental lookup ------------------------------------------------- */

static cn_file_rec *lookup_previous(const char *path, const cn_file_stamp *stamp, uint64_t size, uint64_t hash,
                                    const char *lang_version, void *data)
{
    return cn_records_match(data, path, stamp, size, hash, lang_version);
}

static void parse_progress(size_t done, size_t total, void *data)
{
    progress(data, CN_STAGE_PARSE, done, total, NULL);
}

/* ---- manifest ----------------------------------------------------------- */

static json_object *index_entry(const char *type, const char *file, const char *builder, int version,
                                json_object *languages, const char *dir, const char *built_at)
{
    json_object *e = json_object_new_object();
    json_object_object_add(e, "type", json_object_new_string(type));
    json_object_object_add(e, "path", json_object_new_string(file));
    json_object_object_add(e, "builder", json_object_new_string(builder));
    json_object_object_add(e, "version", json_object_new_int(version));
    json_object_object_add(e, "languages", languages);
    json_object_object_add(e, "bytes", json_object_new_int64(file_size(dir, file)));
    json_object_object_add(e, "built_at", json_object_new_string(built_at));
    json_object_object_add(e, "status", json_object_new_string("ok"));
    return e;
}

static json_object *vector_entry(const cn_vectors_stats *v, json_object *languages, const char *built_at)
{
    json_object *e = json_object_new_object();
    json_object_object_add(e, "type", json_object_new_string("vector"));
    json_object_object_add(e, "path", json_object_new_string(CN_VECTORS_DIR));
    json_object_object_add(e, "builder", json_object_new_string(v->builder));
    json_object_object_add(e, "version", json_object_new_int(CN_VECTORS_FORMAT));
    json_object_object_add(e, "languages", languages);
    json_object_object_add(e, "bytes", json_object_new_int64(v->bytes));
    json_object_object_add(e, "built_at", json_object_new_string(built_at));
    json_object_object_add(e, "status", json_object_new_string("ok"));
    json_object_object_add(e, "count", json_object_new_int64(v->count));
    json_object_object_add(e, "dim", json_object_new_int64((int64_t)v->dim));
    json_object_object_add(e, "model", json_object_new_string(v->model_id));
    json_object_object_add(e, "embedded", json_object_new_int64((int64_t)v->embedded));
    json_object_object_add(e, "reused", json_object_new_int64((int64_t)v->reused));
    json_object_object_add(e, "build_seconds", json_object_new_double(v->seconds));
    return e;
}

/* The files listed but not indexed, and why: a list for the user, since
 * the counts alone do not say which files to look at. */
static json_object *left_out_list(const cn_file_rec *recs, size_t n)
{
    static const char *const why[] = {"parsed", "binary", "undecodable", "unreadable", "failed"};
    json_object *a = json_object_new_array();
    for (size_t i = 0; i < n; i++) {
        const cn_file_rec *r = &recs[i];
        json_object *x;
        if (r->status == CN_REC_PARSED) continue;
        x = json_object_new_object();
        json_object_object_add(x, "path", json_object_new_string(r->path));
        json_object_object_add(x, "reason", json_object_new_string(why[r->status]));
        if (r->error || r->status == CN_REC_FAILED || r->status == CN_REC_UNREADABLE)
            json_object_object_add(x, "error", json_object_new_string(r->error ? r->error : "failed"));
        json_object_object_add(x, "unchanged", json_object_new_boolean(r->reused));
        json_object_array_add(a, x);
    }
    return a;
}

static json_object *build_manifest(const cn_compile_opts *o, const char *root, identity_job *id, const char *dir,
                                   const cn_langs *langs, const cn_walk_file *files, size_t n,
                                   const cn_file_rec *recs, const cn_walk_stats *ws,
                                   const cn_parse_stats *ps, uint32_t n_nodes, bool with_bm25,
                                   const cn_graph_stats *graph, const cn_vectors_stats *vec,
                                   const char *built_at)
{
    json_object *m = json_object_new_object(), *repo = json_object_new_object();
    json_object *sel = json_object_new_object(), *fs = json_object_new_object();
    json_object *lang_obj = json_object_new_object(), *idx = json_object_new_object();
    json_object *builder = json_object_new_object(), *lang_list = json_object_new_array();
    const char *base = strrchr(root, '/');
    char *fp = hex64(source_fingerprint(recs, n)), *sd = hex64(selection_digest(o));
    size_t tests = 0;

    json_object_object_add(m, "schema_version", json_object_new_int(CN_MANIFEST_SCHEMA));
    json_object_object_add(repo, "path", json_object_new_string(root));
    json_object_object_add(repo, "name", json_object_new_string(base && base[1] ? base + 1 : root));
    git_identity(id, repo);
    json_object_object_add(m, "repository", repo);
    json_object_object_add(m, "source_fingerprint", json_object_new_string(fp));
    json_object_object_add(sel, "digest", json_object_new_string(sd));
    json_object_object_add(sel, "default_excludes", json_object_new_boolean(!o->no_default_excludes));
    json_object_object_add(sel, "exclude_dirs", cn_json_strv(&o->exclude_dirs));
    json_object_object_add(sel, "languages", cn_json_strv(&o->languages));
    json_object_object_add(sel, "used_git", json_object_new_boolean(ws->used_git));
    json_object_object_add(m, "selection", sel);
    json_object_object_add(builder, "name", json_object_new_string("codenib"));
    json_object_object_add(builder, "version", json_object_new_string(CN_VERSION_STRING));
    json_object_object_add(m, "builder", builder);
    json_object_object_add(m, "built_at", json_object_new_string(built_at));

    for (size_t i = 0; i < n; i++) tests += recs[i].status == CN_REC_PARSED && recs[i].is_test;
    json_object_object_add(fs, "listed", json_object_new_int64((int64_t)ws->listed));
    json_object_object_add(fs, "selected", json_object_new_int64((int64_t)ws->selected));
    json_object_object_add(fs, "excluded", json_object_new_int64((int64_t)ws->excluded));
    json_object_object_add(fs, "no_language", json_object_new_int64((int64_t)ws->no_language));
    json_object_object_add(fs, "too_large", json_object_new_int64((int64_t)ws->too_large));
    json_object_object_add(fs, "odd_name", json_object_new_int64((int64_t)ws->odd_name));
    json_object_object_add(fs, "parsed", json_object_new_int64((int64_t)ps->parsed));
    json_object_object_add(fs, "reused", json_object_new_int64((int64_t)ps->reused));
    json_object_object_add(fs, "unread", json_object_new_int64((int64_t)ps->unread));
    json_object_object_add(fs, "binary", json_object_new_int64((int64_t)ps->binary));
    json_object_object_add(fs, "undecodable", json_object_new_int64((int64_t)ps->undecodable));
    json_object_object_add(fs, "unreadable", json_object_new_int64((int64_t)ps->unreadable));
    json_object_object_add(fs, "failed", json_object_new_int64((int64_t)ps->failed));
    json_object_object_add(fs, "left_unchanged", json_object_new_int64((int64_t)ps->left_unchanged));
    json_object_object_add(fs, "tests", json_object_new_int64((int64_t)tests));
    json_object_object_add(fs, "lines", json_object_new_int64((int64_t)ps->lines));
    json_object_object_add(fs, "bytes", json_object_new_int64((int64_t)ps->bytes));
    json_object_object_add(m, "files", fs);
    json_object_object_add(m, "left_out", left_out_list(recs, n));

    for (size_t i = 0; i < langs->len; i++) {
        const cn_lang_entry *e = &langs->items[i];
        size_t count = 0;
        json_object *l;
        for (size_t k = 0; k < n; k++) count += files[k].lang == e && recs[k].status == CN_REC_PARSED;
        if (count == 0) continue;
        l = json_object_new_object();
        json_object_object_add(l, "files", json_object_new_int64((int64_t)count));
        json_object_object_add(l, "backend", json_object_new_string(e->plugin_id));
        json_object_object_add(l, "version", json_object_new_string(e->desc ? e->desc->version : "?"));
        json_object_object_add(lang_obj, e->language, l);
        json_object_array_add(lang_list, json_object_new_string(e->language));
    }
    json_object_object_add(m, "languages", lang_obj);

    {
        json_object *e = index_entry("nodes", CN_NODES_FILE, "codenib-nodes", 1, json_object_get(lang_list),
                                     dir, built_at);
        json_object_object_add(e, "count", json_object_new_int64(n_nodes));
        json_object_object_add(idx, "nodes", e);
    }
    if (with_bm25) {
        json_object *e = index_entry("bm25", CN_BM25_INDEX_FILE, "codenib-bm25", (int)CN_BM25_VERSION,
                                     json_object_get(lang_list), dir, built_at);
        json_object_object_add(e, "count", json_object_new_int64(n_nodes));
        json_object_object_add(e, "k1", json_object_new_double(CN_BM25_DEFAULT_K1));
        json_object_object_add(e, "b", json_object_new_double(CN_BM25_DEFAULT_B));
        json_object_object_add(idx, "bm25", e);
    }
    if (graph) {
        json_object *e = index_entry("graph", CN_GRAPH_FILE, "codenib-graph", (int)CN_GRAPH_VERSION,
                                     json_object_get(lang_list), dir, built_at);
        json_object *types = json_object_new_object();
        json_object_object_add(e, "count", json_object_new_int64((int64_t)graph->edges));
        for (int t = CN_EDGE_CONTAINS; t <= CN_EDGE_TYPE_MAX; t++) {
            json_object *x = json_object_new_object();
            json_object_object_add(x, "edges", json_object_new_int64((int64_t)graph->by_type[t]));
            json_object_object_add(x, "resolved", json_object_new_int64((int64_t)graph->resolved_by_type[t]));
            json_object_object_add(types, cn_edge_type_name(t), x);
        }
        json_object_object_add(e, "edge_types", types);
        json_object_object_add(e, "resolver", json_object_new_int(CN_GRAPH_RESOLVER));
        json_object_object_add(idx, "graph", e);
    }
    if (vec) json_object_object_add(idx, "vector", vector_entry(vec, json_object_get(lang_list), built_at));
    json_object_put(lang_list);
    json_object_object_add(m, "indexes", idx);
    json_object_object_add(m, "options", cn_compile_options_json(o));
    free(fp);
    free(sd);
    return m;
}

int cn_json_write_file(const char *path, json_object *o)
{
    char *text = cn_json_text(o, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED | JSON_C_TO_STRING_NOSLASHESCAPE);
    char *line = text ? cn_strprintf("%s\n", text) : NULL;
    int rc = line ? cn_file_write_atomic(path, line, strlen(line)) : cn_error_set(CN_ENOMEM, "out of memory");
    free(line);
    free(text);
    return rc;
}

/* ---- the compile -------------------------------------------------------- */

static bool wants(const cn_compile_opts *o, const char *index)
{
    if (strcmp(index, "vector") == 0) return cn_strv_contains(&o->indexes, index);
    return o->indexes.len == 0 || cn_strv_contains(&o->indexes, index);
}

bool cn_index_name_valid(const char *x)
{
    return strcmp(x, "bm25") == 0 || strcmp(x, "nodes") == 0 || strcmp(x, "graph") == 0 ||
           strcmp(x, "vector") == 0;
}

static void vectors_progress(size_t done, size_t total, void *data)
{
    progress(data, CN_STAGE_VECTORS, done, total, NULL);
}

/* The symbol graph needs only the parse records, as do the nodes and BM25
 * files: it is built on a thread of its own while they are written. */
typedef struct graph_job {
    const cn_file_rec *recs;
    size_t n;
    char *path;
    bool *keep;          /* files whose edges the previous graph holds, or NULL */
    const cn_graph *prev;   /* that graph */
    bool reused;         /* out: the previous graph's edges were used */
    bool patched;        /* ... its very sections, with lines moved */
    cn_graph_stats stats;
    int rc;
    cn_error err;   /* the thread's error, when rc < 0 */
} graph_job;

static void *graph_thread(void *data)
{
    graph_job *j = data;
    j->rc = CN_ENOTFOUND;
    if (j->keep != NULL) {
        j->rc = cn_graph_write_reusing(j->recs, j->n, j->keep, j->prev, j->path, &j->stats);
        j->reused = j->rc >= 0;
        j->patched = j->rc == 1;
        if (j->rc > 0) j->rc = 0;
        if (j->rc == CN_EINVAL || j->rc == CN_ECORRUPT || j->rc == CN_ENOTFOUND || j->rc == CN_EUNSUPPORTED) {
            cn_error_clear();   /* the previous graph does not fit: in full */
            j->rc = CN_ENOTFOUND;
        }
    }
    if (j->rc == CN_ENOTFOUND) j->rc = cn_graph_write(j->recs, j->n, j->path, &j->stats);
    if (j->rc < 0) j->err = *cn_error_last();
    return NULL;
}

/* Whether the previous build's graph can give this one the edges of its
 * unchanged files: the same parsed files in the same order, the changed
 * ones with the signature they had (their references to others'
 * definitions may have changed, not the definitions), and the same
 * resolution rules and codenib.  Returns the files to keep, or NULL. */
static bool *graph_reuse_plan(const cn_file_rec *recs, size_t n, const cn_records *prev, json_object *manifest)
{
    json_object *idx = NULL, *g = NULL, *v = NULL;
    bool *keep = NULL;
    size_t k = 0, kept = 0;

    if (json_object_object_get_ex(manifest, "indexes", &idx) && json_object_object_get_ex(idx, "graph", &g) &&
        json_object_object_get_ex(g, "resolver", &v) && json_object_get_int(v) == CN_GRAPH_RESOLVER)
        keep = calloc(n ? n : 1, sizeof *keep);
    for (size_t i = 0; keep != NULL && i < n; i++) {
        const cn_file_rec *r = &recs[i], *o;
        if (r->status != CN_REC_PARSED) continue;
        if ((o = cn_records_at(prev, k++)) == NULL || strcmp(o->path, r->path) != 0 ||
            (!r->reused && (o->status != CN_REC_PARSED || cn_graph_signature(o) != cn_graph_signature(r)))) {
            free(keep);
            keep = NULL;
            break;
        }
        keep[i] = r->reused;
        kept += r->reused;
    }
    if (keep != NULL && (k != cn_records_count(prev) || kept == 0)) {
        free(keep);
        keep = NULL;
    }
    return keep;
}

/* The previous build's manifest, when that build was made by this very
 * codenib (another may have tokenized, resolved or recorded otherwise:
 * then nothing of it is reused); NULL otherwise. */
static json_object *prev_manifest(const char *prev_dir)
{
    char *mpath = cn_path_join(prev_dir, CN_MANIFEST_FILE), *text = NULL;
    json_object *m = NULL, *b = NULL, *v = NULL;
    if (mpath && cn_file_read(mpath, 1 << 20, &text, NULL) == 0 && cn_json_parse(text, mpath, &m) == 0 &&
        !(json_object_object_get_ex(m, "builder", &b) && json_object_object_get_ex(b, "version", &v) &&
          strcmp(json_object_get_string(v), CN_VERSION_STRING) == 0)) {
        json_object_put(m);
        m = NULL;
    }
    cn_error_clear();
    free(text);
    free(mpath);
    return m;
}

/* The previous build's graph, opened (read, checked) on a thread of its
 * own while the files are listed and parsed: a re-compile needs it as soon
 * as parsing ends. */
typedef struct graph_opener {
    char *path;
    cn_graph *g;   /* NULL when it could not be opened: the graph is built in full */
    pthread_t tid;
    bool running;
} graph_opener;

static void *open_graph_thread(void *data)
{
    graph_opener *op = data;
    if (cn_graph_open(op->path, &op->g) < 0) op->g = NULL;
    cn_error_clear();
    return NULL;
}

static void graph_opener_start(graph_opener *op, const char *prev_dir)
{
    if ((op->path = cn_path_join(prev_dir, CN_GRAPH_FILE)) == NULL) return;
    if (pthread_create(&op->tid, NULL, open_graph_thread, op) == 0) op->running = true;
    else open_graph_thread(op);   /* no thread to be had: here and now */
}

/* The opened graph, or NULL; waits for the thread. */
static cn_graph *graph_opener_wait(graph_opener *op)
{
    if (op->running) {
        pthread_join(op->tid, NULL);
        op->running = false;
    }
    return op->g;
}

static atomic_uint generation_seq;

static int compile_resolved(const cn_compile_opts *o, cn_compile_result *res);

int cn_compile(const cn_compile_opts *o, cn_compile_result *res)
{
    cn_compile_opts eff;
    cn_compile_recorded keep;
    int rc = cn_compile_opts_resolve(o, &eff, &keep);
    if (rc < 0) {
        memset(res, 0, sizeof *res);
        cn_compile_recorded_free(&keep);
        return rc;
    }
    rc = compile_resolved(&eff, res);
    if (rc == 0) res->options_recorded = keep.reused_indexes || keep.reused_vectors;
    cn_compile_recorded_free(&keep);
    return rc;
}

static int compile_resolved(const cn_compile_opts *o, cn_compile_result *res)
{
    double t0 = now_seconds(), tm = t0;
    char *root = NULL, *cache = NULL, *tmp_dir = NULL, *cur_dir = NULL, *built_at = NULL;
    const char *prev_dir = NULL;   /* cur_dir, when this build may reuse it */
    char gen[64];
    cn_langs langs = {0};
    cn_walk_file *files = NULL;
    size_t n = 0;
    cn_file_rec *recs = NULL;
    cn_records *prev = NULL;
    cn_bm25 *prev_index = NULL;
    json_object *prev_m = NULL;
    cn_graph_stats graph_stats;
    graph_job gj;
    graph_opener gopen;
    collector gc;
    identity_job identity;
    pthread_t graph_tid;
    bool graph_running = false;
    uint64_t started_ns;
    int lock_fd = -1, cache_fd = -1, rc;
    bool syncing = false, made_tmp = false;

    memset(res, 0, sizeof *res);
    memset(&graph_stats, 0, sizeof graph_stats);
    memset(&gj, 0, sizeof gj);
    memset(&gopen, 0, sizeof gopen);
    memset(&gc, 0, sizeof gc);
    memset(&identity, 0, sizeof identity);
    for (size_t i = 0; i < o->indexes.len; i++) {
        const char *x = o->indexes.items[i];
        if (!cn_index_name_valid(x))
            return cn_error_set(CN_EINVAL, "unknown index '%s' (this codenib builds: " CN_INDEX_NAMES ")", x);
    }
    /* a misspelt embedder fails now, not after minutes of parsing */
    if (wants(o, "vector") && (rc = cn_vectors_check_opts(&o->vectors)) < 0) return rc;
    root = realpath(o->repo, NULL);
    if (root == NULL) return cn_error_set(CN_ENOTFOUND, "repository %s: %s", o->repo, strerror(errno));
    {
        struct stat st;
        if (stat(root, &st) != 0 || !S_ISDIR(st.st_mode)) {
            rc = cn_error_set(CN_ENOTFOUND, "repository %s is not a directory", o->repo);
            goto out;
        }
    }
    if (o->cache_dir) cache = cn_strdup(o->cache_dir);
    else if ((rc = cn_cache_dir_for(root, &cache)) < 0) goto out;
    if (cache == NULL) {
        rc = cn_error_set(CN_ENOMEM, "out of memory");
        goto out;
    }
    {
        size_t rl = strlen(root);
        char *cache_real;
        if ((rc = cn_mkdirs(cache)) < 0) goto out;
        cache_real = realpath(cache, NULL);
        /* "nothing is written into the repository" */
        if (cache_real && strncmp(cache_real, root, rl) == 0 && (cache_real[rl] == '/' || cache_real[rl] == '\0')) {
            free(cache_real);
            rc = cn_error_set(CN_EINVAL, "the cache directory %s is inside the repository; choose "
                                         "another --cache-dir", cache);
            goto out;
        }
        free(cache_real);
    }
    if ((rc = cn_cache_dir_open(cache, &cache_fd)) < 0 || (rc = lock_acquire(o, cache_fd, cache, &lock_fd)) < 0)
        goto out;
    mark(res, &tm, CN_STAGE_LOCK);
    /* under the lock: every entry the collector and the publishing below
     * may remove or replace is what codenib made, or nothing is done */
    if ((rc = cn_cache_check(cache_fd, cache)) < 0) goto out;
    /* time and process tell builds of different processes apart; the
     * sequence, two builds of one process within the same second */
    snprintf(gen, sizeof gen, "gen-%ld-%ld-%u", (long)time(NULL), (long)getpid(),
             atomic_fetch_add(&generation_seq, 1u));
    /* the generation being served stays until this one replaces it, with
     * --rebuild too */
    if (cn_cache_current(cache, &cur_dir) < 0) {
        cn_error_clear();
        cur_dir = NULL;
    }
    collector_start(&gc, cache_fd, cache, cur_dir, gen);

    if ((rc = cn_langs_discover(&langs)) < 0) goto out;
    if (langs.len == 0) {
        rc = cn_error_set(CN_ENOTFOUND, "no language backends found (see `codenib plugins list "
                                        "--verbose` for the plugin search path; build them with "
                                        "scripts/fetch-grammars.sh and configure)");
        goto out;
    }
    for (size_t i = 0; i < o->languages.len; i++)
        if (cn_langs_find(&langs, o->languages.items[i]) == NULL) {
            rc = cn_error_set(CN_ENOTFOUND, "no backend for language '%s'", o->languages.items[i]);
            goto out;
        }

    identity_start(&identity, root);
    progress(o, CN_STAGE_WALK, 0, 0, NULL);
    started_ns = realtime_ns();
    {
        cn_walk_opts wo = {&langs, &o->exclude_dirs, &o->languages, o->no_default_excludes, false, 0};
        if ((rc = cn_walk(root, &wo, &files, &n, &res->walk)) < 0) goto out;
    }
    mark(res, &tm, CN_STAGE_WALK);
    recs = calloc(n ? n : 1, sizeof *recs);
    if (recs == NULL) {
        rc = cn_error_set(CN_ENOMEM, "out of memory");
        goto out;
    }
    if (!o->rebuild) prev_dir = cur_dir;
    if (prev_dir != NULL && (prev_m = prev_manifest(prev_dir)) != NULL) {
        char *p = cn_path_join(prev_dir, CN_RECORDS_FILE);
        if (wants(o, "graph")) graph_opener_start(&gopen, prev_dir);
        /* A previous build that cannot be read is not an error: parse all. */
        if (p == NULL || cn_records_open(p, &langs, &prev) < 0) prev = NULL;
        free(p);
        cn_error_clear();
        /* unchanged files' BM25 documents come from the previous index */
        if (prev != NULL && wants(o, "bm25") && (prev_index = prev_bm25(prev, prev_dir)) == NULL) {
            cn_records_close(prev);
            prev = NULL;
        }
    }
    {
        cn_parse_opts po;
        memset(&po, 0, sizeof po);
        po.root = root;
        po.langs = &langs;
        po.threads = o->threads;
        if (o->progress) {
            po.progress = parse_progress;
            po.progress_data = (void *)o;
        }
        if (prev) {
            po.lookup = lookup_previous;
            po.lookup_data = prev;
        }
        progress(o, CN_STAGE_PARSE, 0, n, NULL);
        if ((rc = cn_parse_files(&po, files, n, recs, &res->parse)) < 0) goto out;
        progress(o, CN_STAGE_PARSE, n, n, NULL);
    }
    mark(res, &tm, CN_STAGE_PARSE);

    {
        cn_buf b = CN_BUF_INIT;
        cn_buf_printf(&b, "%s/%s.tmp", cache, gen);
        tmp_dir = cn_buf_steal(&b);
    }
    if (tmp_dir == NULL || mkdirat(cache_fd, strrchr(tmp_dir, '/') + 1, 0755) != 0) {
        rc = cn_error_set(CN_EIO, "cannot create %s: %s", tmp_dir ? tmp_dir : "a build directory",
                          strerror(errno));
        goto out;
    }
    made_tmp = true;
    /* its files are synced on a thread while the next ones are built */
    if ((rc = cn_fsync_dir_begin(tmp_dir)) < 0) goto out;
    syncing = true;
    built_at = iso_now();
    if (wants(o, "graph")) {
        gj.recs = recs;
        gj.n = n;
        if ((gj.path = cn_path_join(tmp_dir, CN_GRAPH_FILE)) == NULL) {
            rc = cn_error_set(CN_ENOMEM, "out of memory");
            goto out;
        }
        if (prev != NULL && (gj.prev = graph_opener_wait(&gopen)) != NULL)
            gj.keep = graph_reuse_plan(recs, n, prev, prev_m);
        progress(o, CN_STAGE_GRAPH, 0, 0, NULL);
        if (pthread_create(&graph_tid, NULL, graph_thread, &gj) == 0) graph_running = true;
        else graph_thread(&gj);   /* no thread to be had: build it here, first */
    }
    /* The largest file first, the smallest last: publishing waits for the
     * last file's fsync, which starts only once it is written. */
    if (wants(o, "bm25")) {
        /* its documents are numbered as the nodes file numbers its nodes */
        char *p = cn_path_join(tmp_dir, CN_BM25_INDEX_FILE);
        size_t docs = cn_nodes_numbered(recs, n);
        if (docs > UINT32_MAX / 2) rc = cn_error_set(CN_EINVAL, "%s: too many nodes to index (%zu)", root, docs);
        else rc = p ? build_bm25(o, recs, n, (uint32_t)docs, p, prev, prev_index, &res->bm25_updated)
                    : cn_error_set(CN_ENOMEM, "out of memory");
        free(p);
        if (rc < 0) goto out;
    }
    mark(res, &tm, CN_STAGE_BM25);
    progress(o, CN_STAGE_NODES, 0, 0, NULL);
    {
        char *p = cn_path_join(tmp_dir, CN_RECORDS_FILE);
        rc = p ? cn_records_write(recs, n, &langs, started_ns, prev, p) : cn_error_set(CN_ENOMEM, "out of memory");
        free(p);
        if (rc < 0) goto out;
        p = cn_path_join(tmp_dir, CN_NODES_FILE);
        rc = p ? cn_nodes_write(recs, n, p, &res->n_nodes) : cn_error_set(CN_ENOMEM, "out of memory");
        free(p);
        if (rc < 0) goto out;
    }
    mark(res, &tm, CN_STAGE_NODES);
    if (graph_running) {
        pthread_join(graph_tid, NULL);
        graph_running = false;
    }
    if (gj.rc < 0) {
        rc = cn_error_set(gj.rc, "%s", gj.err.message);
        goto out;
    }
    graph_stats = gj.stats;
    res->graph_updated = gj.reused;
    res->graph_patched = gj.patched;
    /* the graph's own time is what it took beyond the nodes and BM25 */
    mark(res, &tm, CN_STAGE_GRAPH);
    if (wants(o, "vector")) {
        progress(o, CN_STAGE_VECTORS, 0, res->n_nodes, NULL);
        rc = cn_vectors_build(&o->vectors, root, tmp_dir, prev_dir,
                              o->progress ? vectors_progress : NULL, (void *)o, &res->vectors);
        if (rc < 0) goto out;
        res->has_vectors = true;
    }
    mark(res, &tm, CN_STAGE_VECTORS);
    res->manifest = build_manifest(o, root, &identity, tmp_dir, &langs, files, n, recs, &res->walk, &res->parse,
                                   res->n_nodes, wants(o, "bm25"), wants(o, "graph") ? &graph_stats : NULL,
                                   res->has_vectors ? &res->vectors : NULL, built_at);
    if ((rc = cn_index_manifest_write(tmp_dir, res->manifest)) < 0) goto out;

    progress(o, CN_STAGE_PUBLISH, 0, 0, NULL);
    collector_wait(&gc);   /* done long ago, as a rule */
    syncing = false;
    if ((rc = cn_fsync_dir_finish(tmp_dir)) < 0 || (rc = publish(cache_fd, cache, gen)) < 0) goto out;
    mark(res, &tm, CN_STAGE_PUBLISH);
    res->cache_dir = cache;
    cache = NULL;
    res->index_dir = cn_path_join(res->cache_dir, gen);
    res->seconds = now_seconds() - t0;
    rc = 0;
out:
    if (graph_running) pthread_join(graph_tid, NULL);   /* before recs and tmp_dir go */
    identity_wait(&identity);   /* before root goes */
    free(identity.head);
    free(gj.path);
    free(gj.keep);
    cn_graph_close(graph_opener_wait(&gopen));
    free(gopen.path);
    collector_wait(&gc);
    if (syncing) {   /* failed already: its error stands */
        cn_error saved = *cn_error_last();
        cn_fsync_dir_finish(tmp_dir);
        cn_error_set(saved.code, "%s", saved.message);
    }
    if (rc < 0 && made_tmp) {   /* this build's own directory */
        cn_error saved = *cn_error_last();
        char tmp_name[96];
        snprintf(tmp_name, sizeof tmp_name, "%s.tmp", gen);
        cn_cache_remove(cache_fd, cache, tmp_name);
        cn_error_set(saved.code, "%s", saved.message);
    }
    lock_release(lock_fd);
    if (cache_fd >= 0) close(cache_fd);
    if (recs)
        for (size_t i = 0; i < n; i++) cn_file_rec_clear(&recs[i]);
    free(recs);
    cn_bm25_close(prev_index);
    json_object_put(prev_m);
    cn_records_close(prev);
    cn_walk_free(files, n);
    cn_langs_free(&langs);
    free(root);
    free(cache);
    free(tmp_dir);
    free(cur_dir);
    free(built_at);
    if (rc < 0) {
        json_object_put(res->manifest);
        res->manifest = NULL;
        cn_vectors_stats_free(&res->vectors);
        res->has_vectors = false;
    }
    return rc;
}

void cn_compile_result_free(cn_compile_result *r)
{
    free(r->cache_dir);
    free(r->index_dir);
    json_object_put(r->manifest);
    cn_vectors_stats_free(&r->vectors);
    memset(r, 0, sizeof *r);
}

void cn_compile_opts_free(cn_compile_opts *o)
{
    cn_strv_free(&o->languages);
    cn_strv_free(&o->exclude_dirs);
    cn_strv_free(&o->indexes);
}
