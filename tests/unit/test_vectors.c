/* SPDX-License-Identifier: Apache-2.0 */
/* The embed-local and vec-flat backends, loaded from the build tree as the
 * core loads them: LSA finds the right topic for a query that shares no
 * word with the document, fits are reproducible byte for byte, the saved
 * state survives save/load exactly and every damaged copy of it is
 * refused, degenerate corpora and bad options fail clearly; the flat store
 * agrees with a brute-force search (exactly in f32, closely in f16 and
 * int8), honours the filter, orders ties by node id, and refuses damaged
 * files. */
#include <dirent.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <codenib/embed.h>
#include <codenib/vectors.h>

#include "index/cn_tokenize.h"
#include "plugin/cn_backends.h"
#include "util/cn_util.h"
#include "tap.h"

static cn_backends backends;
static char tmpdir[64];

/* ---- helpers ---------------------------------------------------------------- */

/* Creates backend id; NULL (with the error in *why) when create fails. */
static cn_backend_instance *create(const char *id, int kind, const char *cfg, char *why, size_t why_len)
{
    cn_backend_instance *inst = NULL;
    if (cn_backend_create(&backends, id, kind, NULL, cfg, &inst) < 0) {
        if (why) snprintf(why, why_len, "%s", cn_error_last()->message);
        return NULL;
    }
    return inst;
}

static cn_embedder *embedder(cn_backend_instance *inst)
{
    return inst ? (cn_embedder *)inst->object : NULL;
}

static cn_vector_store *store(cn_backend_instance *inst)
{
    return inst ? (cn_vector_store *)inst->object : NULL;
}

/* Blobs come from the host allocator, which is malloc's in this host. */
static void host_free(void *p)
{
    free(p);
}

static void rm_tree(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;

    if (d == NULL) return;
    while ((e = readdir(d)) != NULL) {
        char *p;
        struct stat st;
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
        p = cn_path_join(dir, e->d_name);
        if (lstat(p, &st) == 0 && S_ISDIR(st.st_mode)) rm_tree(p);
        else unlink(p);
        free(p);
    }
    closedir(d);
    rmdir(dir);
}

/* A fresh, empty directory below tmpdir. */
static char *subdir(const char *name)
{
    char *p = cn_path_join(tmpdir, name);
    rm_tree(p);
    mkdir(p, 0700);
    return p;
}

static int write_bytes(const char *path, const void *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    int good;
    if (f == NULL) return -1;
    good = fwrite(data, 1, len, f) == len;
    return fclose(f) == 0 && good ? 0 : -1;
}

static size_t count_entries(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    size_t n = 0;
    if (d == NULL) return 0;
    while ((e = readdir(d)) != NULL) n += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
    closedir(d);
    return n;
}

static double dotf(const float *a, const float *b, size_t n)
{
    double s = 0;
    for (size_t i = 0; i < n; i++) s += (double)a[i] * (double)b[i];
    return s;
}

static double norm(const float *a, size_t n)
{
    return sqrt(dotf(a, a, n));
}

/* xorshift64*: reproducible test data. */
static uint64_t rng_state = 88172645463325252ull;

static double rnd(void)
{
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return (double)((rng_state * 2685821657736338717ull) >> 11) * 0x1p-53 * 2 - 1;
}

static void unit_random(float *v, size_t dim)
{
    double s = 0;
    for (size_t j = 0; j < dim; j++) {
        v[j] = (float)rnd();
        s += (double)v[j] * v[j];
    }
    for (size_t j = 0; j < dim; j++) v[j] = (float)(v[j] / sqrt(s));
}

/* ---- the LSA corpus -------------------------------------------------------------
 * Four topics, four documents each.  Words recur inside a topic, so LSA
 * ties them together: "bind accept" (query A) shares no word with
 * documents 0 and 2, yet they are about sockets like 1 and 3, which do
 * contain those words. */
#define N_DOCS 16
static const char *const docs[N_DOCS] = {
    /* sockets */
    "open a socket and connect to the remote host on a tcp port",
    "the server socket will bind to a port then listen and accept each client",
    "tcp connection refused by the remote host when the port is closed",
    "accept a client connection from the socket that does listen and bind",
    /* json */
    "parse the json text into an object and decode every string",
    "json decode error when the text has an unterminated string",
    "serialize the object to json text and encode each string with escapes",
    "parse nested arrays and objects of the json document text",
    /* dates */
    "format the date with the month day and year of the calendar",
    "parse a timestamp into a date and convert the timezone",
    "the calendar month has thirty days so format each day",
    "convert the timestamp to utc timezone before you format the date",
    /* compression */
    "compress the file with gzip and write the archive",
    "decompress a zlib stream and the archive checksum must match",
    "the gzip archive header contains the file name and checksum",
    "zlib compress level nine gives the smallest stream",
};

typedef struct tokset {
    char toks[64][32];
    size_t n;
} tokset;

static int collect(const char *tok, size_t len, void *data)
{
    tokset *s = data;
    if (s->n < 64 && len < 32) {
        memcpy(s->toks[s->n], tok, len);
        s->toks[s->n++][len] = '\0';
    }
    return 0;
}

/* True when a and b have no token in common (the BM25 tokenizer's view). */
static int share_no_word(const char *a, const char *b)
{
    tokset x = {{{0}}, 0}, y = {{{0}}, 0};
    cn_tokenize(a, strlen(a), collect, &x);
    cn_tokenize(b, strlen(b), collect, &y);
    for (size_t i = 0; i < x.n; i++)
        for (size_t j = 0; j < y.n; j++)
            if (strcmp(x.toks[i], y.toks[j]) == 0) return 0;
    return 1;
}

static int fit_blob(const char *cfg, const char *const *d, size_t n, char **blob, size_t *len)
{
    cn_backend_instance *inst = create("embed-local", CN_BACKEND_EMBEDDER, cfg, NULL, 0);
    cn_embedder *e = embedder(inst);
    cn_error err = {0, ""};
    int rc = e ? e->fit(e, d, n, &err) : -1;

    *blob = NULL;
    if (rc == 0) rc = e->save(e, blob, len, &err);
    cn_backend_instance_free(inst);
    return rc;
}

/* ---- embed-local: learning ---------------------------------------------------- */

/* Position (0 = best) of document d among all documents for query vector q. */
static int rank_of(const float *q, const float *dv, size_t dim, size_t d)
{
    int rank = 0;
    double s = dotf(q, dv + d * dim, dim);
    for (size_t i = 0; i < N_DOCS; i++)
        if (i != d && dotf(q, dv + i * dim, dim) > s) rank++;
    return rank;
}

/* Every document of topic `topic` (4 documents each) scores above every
 * document of the other topics. */
static int topic_first(const float *q, const float *dv, size_t dim, size_t topic)
{
    double worst_in = 2, best_out = -2;
    for (size_t i = 0; i < N_DOCS; i++) {
        double s = dotf(q, dv + i * dim, dim);
        if (i / 4 == topic) worst_in = fmin(worst_in, s);
        else best_out = fmax(best_out, s);
    }
    return worst_in > best_out;
}

static void test_lsa_topics(void)
{
    cn_backend_instance *inst = create("embed-local", CN_BACKEND_EMBEDDER, "{\"dim\":4}", NULL, 0);
    cn_embedder *e = embedder(inst);
    cn_error err = {0, ""};
    float dv[N_DOCS * 4], q[3 * 4];
    const char *queries[3] = {"bind accept", "timezone", "gzip checksum"};
    int unit = 1;

    if (!ok(e != NULL, "embed-local is created with {\"dim\":4}")) return;
    is_str(e->model_id(e), "embed-local/lsa-4", "model_id before fit names the configured rank");
    is_int(e->dim(e), 0, "dim() is 0 before fit");
    is_int(e->embed(e, CN_EMBED_QUERY, queries, 1, q, &err), CN_EINVAL, "embed before fit is refused");
    has_str(err.message, "fit", "... saying to fit or load first");

    is_int(e->fit(e, docs, N_DOCS, &err), 0, "fit on the 16-document corpus");
    is_int(e->dim(e), 4, "rank 4 as configured");
    is_str(e->model_id(e), "embed-local/lsa-4", "model_id after fit");
    is_int(e->embed(e, CN_EMBED_DOCUMENT, docs, N_DOCS, dv, &err), 0, "embed the documents");
    is_int(e->embed(e, CN_EMBED_QUERY, queries, 3, q, &err), 0, "embed three queries");
    for (size_t i = 0; i < N_DOCS; i++) unit &= fabs(norm(dv + i * 4, 4) - 1) < 1e-5;
    ok(unit, "every document vector has unit length");

    /* the point of LSA: no shared word, right topic */
    ok(share_no_word(queries[0], docs[0]) && share_no_word(queries[0], docs[2]),
       "'bind accept' shares no word with documents 0 and 2");
    for (size_t i = 4; i < N_DOCS; i++)
        if (!share_no_word(queries[0], docs[i])) ok(0, "'bind accept' shares no word with other topics");
    ok(topic_first(q, dv, 4, 0), "'bind accept': all four socket documents rank above every other document");
    ok(rank_of(q, dv, 4, 0) <= 3 && rank_of(q, dv, 4, 2) <= 3,
       "'bind accept': documents 0 and 2 are in the top 4 without sharing a word");
    ok(dotf(q, dv + 0, 4) > 0.5 && dotf(q, dv + 2 * 4, 4) > 0.5,
       "'bind accept': cosine with documents 0 and 2 above 0.5");
    ok(share_no_word(queries[1], docs[8]) && share_no_word(queries[1], docs[10]),
       "'timezone' shares no word with documents 8 and 10");
    ok(topic_first(q + 4, dv, 4, 2), "'timezone': all four date documents rank first");
    ok(topic_first(q + 8, dv, 4, 3), "'gzip checksum': all four compression documents rank first");
    cn_backend_instance_free(inst);
}

static void test_lsa_zero_vectors(void)
{
    cn_backend_instance *inst = create("embed-local", CN_BACKEND_EMBEDDER, "{\"dim\":4}", NULL, 0);
    cn_embedder *e = embedder(inst);
    cn_error err = {0, ""};
    const char *texts[3] = {"zebra quokka 12345", "", NULL};
    float v[3 * 4];
    int zero = 1;

    if (!ok(e != NULL && e->fit(e, docs, N_DOCS, &err) == 0, "fit for the zero-vector checks")) return;
    memset(v, 0xff, sizeof v);
    is_int(e->embed(e, CN_EMBED_QUERY, texts, 3, v, &err), 0, "embed unknown words, an empty text, NULL");
    for (size_t i = 0; i < 12; i++) zero &= v[i] == 0.0f;
    ok(zero, "a text without a known term embeds to the zero vector");
    is_int(e->embed(e, 7, texts, 1, v, &err), CN_EINVAL, "an unknown role is refused");
    cn_backend_instance_free(inst);
}

/* ---- embed-local: reproducibility and the saved state -------------------------- */

static void test_lsa_reproducible(void)
{
    char *a = NULL, *b = NULL, *c = NULL;
    size_t la = 0, lb = 0, lc = 0;

    is_int(fit_blob("{\"dim\":4}", docs, N_DOCS, &a, &la), 0, "first fit and save");
    is_int(fit_blob("{\"dim\":4}", docs, N_DOCS, &b, &lb), 0, "second fit and save");
    ok(a && b && la == lb && memcmp(a, b, la) == 0, "two fits of the same documents give identical bytes");
    is_int(fit_blob("{\"dim\":4,\"threads\":1}", docs, N_DOCS, &c, &lc), 0, "a fit on one thread");
    ok(a && c && la == lc && memcmp(a, c, la) == 0, "... gives the same bytes as on several threads");
    free(c);
    is_int(fit_blob("{\"dim\":4,\"seed\":12345}", docs, N_DOCS, &c, &lc), 0, "a fit with another seed");
    ok(a && c && la == lc, "... has the same size");
    host_free(a);
    host_free(b);
    host_free(c);
}

typedef struct embed_job {
    cn_embedder *e;
    float out[N_DOCS * 4];
    int rc;
} embed_job;

static void *embed_thread(void *arg)
{
    embed_job *j = arg;
    cn_error err = {0, ""};
    j->rc = j->e->embed(j->e, CN_EMBED_DOCUMENT, docs, N_DOCS, j->out, &err);
    return NULL;
}

static void test_lsa_save_load(void)
{
    cn_backend_instance *fitted = create("embed-local", CN_BACKEND_EMBEDDER, "{\"dim\":4}", NULL, 0);
    cn_backend_instance *loaded = create("embed-local", CN_BACKEND_EMBEDDER, "{}", NULL, 0);
    cn_embedder *e = embedder(fitted), *l = embedder(loaded);
    const char *texts[N_DOCS + 2];
    float before[(N_DOCS + 2) * 4], after[(N_DOCS + 2) * 4];
    cn_error err = {0, ""};
    char *blob = NULL;
    size_t len = 0;
    embed_job jobs[2];
    pthread_t tid[2];

    if (!ok(e && l && e->fit(e, docs, N_DOCS, &err) == 0, "fit an embedder to save")) goto done;
    memcpy(texts, docs, sizeof docs);
    texts[N_DOCS] = "listen for a tcp client";
    texts[N_DOCS + 1] = "json timestamp";
    is_int(e->embed(e, CN_EMBED_QUERY, texts, N_DOCS + 2, before, &err), 0, "embed with the fitted model");
    is_int(e->save(e, &blob, &len, &err), 0, "save");
    ok(len > 64 && len < 4096, "the saved state of a small corpus is small");
    is_int(l->load(l, blob, len, &err), 0, "load into an embedder created with {}");
    is_int(l->dim(l), 4, "the loaded model has the saved rank, not the configured one");
    is_str(l->model_id(l), "embed-local/lsa-4", "model_id after load is the one recorded at fit");
    is_int(l->embed(l, CN_EMBED_QUERY, texts, N_DOCS + 2, after, &err), 0, "embed with the loaded model");
    ok(memcmp(before, after, sizeof before) == 0, "save -> load -> embed gives bit-identical vectors");

    /* a batch large enough to be spread over threads: the same rows */
    {
        const char *many[80];
        float big[80 * 4], one[4];
        int same = 1;
        for (size_t i = 0; i < 80; i++) many[i] = texts[(i * 7) % (N_DOCS + 2)];
        same = l->embed(l, CN_EMBED_DOCUMENT, many, 80, big, &err) == 0;
        for (size_t i = 0; i < 80; i++)
            same &= l->embed(l, CN_EMBED_DOCUMENT, &many[i], 1, one, &err) == 0 &&
                    memcmp(one, big + i * 4, sizeof one) == 0;
        ok(same, "a batch of 80 texts embeds each exactly as on its own");
    }

    /* concurrent embedding on the loaded model */
    for (int t = 0; t < 2; t++) {
        jobs[t].e = l;
        jobs[t].rc = -1;
        pthread_create(&tid[t], NULL, embed_thread, &jobs[t]);
    }
    for (int t = 0; t < 2; t++) pthread_join(tid[t], NULL);
    ok(jobs[0].rc == 0 && jobs[1].rc == 0 && memcmp(jobs[0].out, before, sizeof jobs[0].out) == 0 &&
           memcmp(jobs[1].out, before, sizeof jobs[1].out) == 0,
       "two threads embedding at once get the same vectors");
done:
    host_free(blob);
    cn_backend_instance_free(fitted);
    cn_backend_instance_free(loaded);
}

static void test_lsa_damaged(void)
{
    cn_backend_instance *inst = create("embed-local", CN_BACKEND_EMBEDDER, "{\"dim\":4}", NULL, 0);
    cn_backend_instance *probe = create("embed-local", CN_BACKEND_EMBEDDER, "{}", NULL, 0);
    cn_embedder *e = embedder(inst), *p = embedder(probe);
    cn_error err = {0, ""};
    char *blob = NULL, *copy;
    size_t len = 0, refused = 0, corrupt_code = 0, truncated = 0;
    float v1[4], v2[4];
    const char *q = "listen on a port";

    if (!ok(e && p && e->fit(e, docs, N_DOCS, &err) == 0 && e->save(e, &blob, &len, &err) == 0,
            "a saved state to damage"))
        goto done;
    copy = malloc(len + 1);
    for (size_t i = 0; i < len; i++) {
        memcpy(copy, blob, len);
        copy[i] ^= 0x5a;
        if (p->load(p, copy, len, &err) < 0) {
            refused++;
            corrupt_code += err.code == CN_ECORRUPT;
        }
    }
    is_int(refused, len, "every single flipped byte of the saved state is refused");
    is_int(corrupt_code, len, "... as CN_ECORRUPT");
    for (size_t n = 0; n < len; n++) truncated += p->load(p, blob, n, &err) == CN_ECORRUPT;
    is_int(truncated, len, "every truncation of the saved state is refused");
    memcpy(copy, blob, len);
    copy[len] = 0;
    is_int(p->load(p, copy, len + 1, &err), CN_ECORRUPT, "a trailing byte is refused");
    has_str(err.message, "truncated or extended", "... saying so");
    memcpy(copy, blob, len);
    copy[8] = 2;
    is_int(p->load(p, copy, len, &err), CN_ECORRUPT, "another format version is refused");
    has_str(err.message, "format version 2", "... naming the version");
    copy[0] = 'X';
    is_int(p->load(p, copy, len, &err), CN_ECORRUPT, "a bad magic is refused");
    has_str(err.message, "bad magic", "... saying so");
    is_int(p->load(p, NULL, 0, &err), CN_ECORRUPT, "no state at all is refused");
    is_int(p->dim(p), 0, "failed loads leave the embedder without a model");

    /* a failed load keeps the model already there */
    is_int(p->load(p, blob, len, &err), 0, "load the intact state");
    p->embed(p, CN_EMBED_QUERY, &q, 1, v1, &err);
    copy[0] = 'C';
    copy[8] = 1;
    copy[len / 2] ^= 1;
    is_int(p->load(p, copy, len, &err), CN_ECORRUPT, "a damaged state over a loaded one is refused");
    ok(p->embed(p, CN_EMBED_QUERY, &q, 1, v2, &err) == 0 && memcmp(v1, v2, sizeof v1) == 0,
       "... and the loaded model keeps working unchanged");
    free(copy);
done:
    host_free(blob);
    cn_backend_instance_free(inst);
    cn_backend_instance_free(probe);
}

/* ---- embed-local: degenerate corpora and options -------------------------------- */

static int fit_error(const char *cfg, const char *const *d, size_t n, char *msg, size_t msg_len)
{
    cn_backend_instance *inst = create("embed-local", CN_BACKEND_EMBEDDER, cfg, NULL, 0);
    cn_embedder *e = embedder(inst);
    cn_error err = {0, ""};
    int rc = e ? e->fit(e, d, n, &err) : -1000;
    snprintf(msg, msg_len, "%s", err.message);
    cn_backend_instance_free(inst);
    return rc;
}

static void test_lsa_degenerate(void)
{
    const char *one[1] = {"parse the json text"};
    const char *blank[3] = {"+++", "", "... --- ..."};
    const char *same[5] = {"read the file", "read the file", "read the file", "read the file", "read the file"};
    const char *q[2] = {"json parse", "nothing known here"};
    cn_backend_instance *inst;
    cn_embedder *e;
    cn_error err = {0, ""};
    char msg[CN_ERROR_MESSAGE_MAX], *blob = NULL;
    size_t len = 0;
    float v[2];

    is_int(fit_error("{}", docs, 0, msg, sizeof msg), CN_EINVAL, "0 documents: fit fails");
    has_str(msg, "0 documents", "... saying there are no documents");
    /* the default thresholds step aside for a corpus they would empty; the
     * user's own do not */
    is_int(fit_error("{\"min_df\":2}", one, 1, msg, sizeof msg), CN_EINVAL,
           "1 document with min_df 2 given: fit fails");
    has_str(msg, "min_df", "... naming the options to change");
    inst = create("embed-local", CN_BACKEND_EMBEDDER, "{\"dim\":4}", NULL, 0);
    e = embedder(inst);
    ok(e && e->fit(e, one, 1, &err) == 0 && e->dim(e) == 1,
       "1 document with the default options: every term is kept, rank 1");
    cn_backend_instance_free(inst);
    is_int(fit_error("{}", blank, 3, msg, sizeof msg), CN_EINVAL, "documents without words: fit fails");
    has_str(msg, "no words", "... saying so");

    inst = create("embed-local", CN_BACKEND_EMBEDDER, "{\"dim\":4,\"min_df\":1,\"max_df_ratio\":1}", NULL, 0);
    e = embedder(inst);
    if (ok(e && e->fit(e, one, 1, &err) == 0, "1 document with min_df 1 and max_df_ratio 1: fit succeeds")) {
        is_int(e->dim(e), 1, "... with rank 1 (one document)");
        is_str(e->model_id(e), "embed-local/lsa-1", "... and model_id saying so");
        ok(e->embed(e, CN_EMBED_QUERY, q, 2, v, &err) == 0 && v[0] == 1.0f && v[1] == 0.0f,
           "... a query with its words embeds to [1], one without to [0]");
        ok(e->save(e, &blob, &len, &err) == 0 && e->load(e, blob, len, &err) == 0 && e->dim(e) == 1,
           "... and its state saves and loads");
        host_free(blob);
    }
    cn_backend_instance_free(inst);

    inst = create("embed-local", CN_BACKEND_EMBEDDER, "{\"dim\":4,\"min_df\":1,\"max_df_ratio\":1}", NULL, 0);
    e = embedder(inst);
    if (ok(e && e->fit(e, same, 5, &err) == 0, "5 identical documents: fit succeeds")) {
        is_int(e->dim(e), 1, "... with rank 1, below the configured 4");
        ok(e->embed(e, CN_EMBED_QUERY, same, 1, v, &err) == 0 && v[0] == 1.0f, "... and embeds them to [1]");
    }
    cn_backend_instance_free(inst);
}

static void option_error(const char *id, int kind, const char *cfg, const char *want, const char *what)
{
    char why[CN_ERROR_MESSAGE_MAX] = "";
    cn_backend_instance *inst = create(id, kind, cfg, why, sizeof why);
    char label[256];

    snprintf(label, sizeof label, "%s %s is refused", id, cfg);
    ok(inst == NULL, label);
    snprintf(label, sizeof label, "... %s", what);
    has_str(why, want, label);
    cn_backend_instance_free(inst);
}

static void test_options(void)
{
    const int emb = CN_BACKEND_EMBEDDER, vec = CN_BACKEND_VECTOR_STORE;

    option_error("embed-local", emb, "{\"dim\":0}", "'dim' must be an integer from 1 to 1024 (got 0)",
                 "dim 0: the range and the value");
    option_error("embed-local", emb, "{\"dim\":\"big\"}", "'dim' must be an integer", "dim of the wrong type");
    option_error("embed-local", emb, "{\"max_df_ratio\":0}", "'max_df_ratio' must be a number in (0, 1]",
                 "max_df_ratio out of range");
    option_error("embed-local", emb, "{\"power_iters\":11}", "'power_iters' must be an integer from 0 to 10",
                 "power_iters out of range");
    option_error("embed-local", emb, "{\"dims\":4}", "unknown option 'dims'", "naming the unknown option");
    option_error("embed-local", emb, "[4]", "must be a JSON object", "options that are not an object");
    option_error("embed-local", emb, "{\"dim\":", "not valid JSON", "options that are not JSON");
    option_error("vec-flat", vec, "{\"precision\":\"f64\"}", "must be \"f32\", \"f16\" or \"int8\" (got \"f64\")",
                 "unknown precision: the choices and the value");
    option_error("vec-flat", vec, "{\"precision\":16}", "(got a non-string)", "precision of the wrong type");
    option_error("vec-flat", vec, "{\"metric\":\"l2\"}", "unknown option 'metric'", "naming the unknown option");
}

/* ---- vec-flat ----------------------------------------------------------------- */

#define VN 300
#define VDIM 37
static float vecs[VN * VDIM];
static uint32_t vids[VN];

static void make_vectors(void)
{
    for (size_t i = 0; i < VN; i++) {
        unit_random(vecs + i * VDIM, VDIM);
        vids[i] = 1000 + (uint32_t)((i * 7919) % VN) * 3;   /* distinct, shuffled */
    }
}

typedef struct ref_hit {
    uint32_t node;
    double score;
} ref_hit;

static int ref_order(const void *a, const void *b)
{
    const ref_hit *x = a, *y = b;
    if (x->score != y->score) return x->score > y->score ? -1 : 1;
    return x->node < y->node ? -1 : x->node > y->node;
}

static int even_only(uint32_t node, void *data)
{
    (*(int *)data)++;
    return node % 2 == 0;
}

/* Brute force in double: all rows (or the even nodes), best first. */
static size_t reference(const float *q, int even, ref_hit *out)
{
    size_t n = 0;
    for (size_t i = 0; i < VN; i++) {
        if (even && vids[i] % 2) continue;
        out[n].node = vids[i];
        out[n++].score = dotf(q, vecs + i * VDIM, VDIM);
    }
    qsort(out, n, sizeof *out, ref_order);
    return n;
}

static cn_backend_instance *build_store(const char *cfg, const char *dir, const float *v, const uint32_t *ids,
                                        size_t n, size_t dim)
{
    cn_backend_instance *inst = create("vec-flat", CN_BACKEND_VECTOR_STORE, cfg, NULL, 0);
    cn_error err = {0, ""};
    if (inst == NULL) return NULL;
    if (store(inst)->build(store(inst), dir, v, ids, n, dim, &err) < 0) {
        diag("build: %s", err.message);
        cn_backend_instance_free(inst);
        return NULL;
    }
    return inst;
}

static off_t file_size(const char *dir)
{
    char *p = cn_path_join(dir, "vectors.flat");
    struct stat st;
    off_t n = stat(p, &st) == 0 ? st.st_size : -1;
    free(p);
    return n;
}

static void test_flat_exact(void)
{
    char *dir = subdir("f32");
    cn_backend_instance *built = build_store("{}", dir, vecs, vids, VN, VDIM), *opened;
    cn_vector_store *s = store(built), *o;
    cn_search_hit hits[VN + 10], hits2[VN + 10];
    ref_hit ref[VN];
    cn_error err = {0, ""};
    float q[VDIM];
    size_t n = 0, n2 = 0, calls_ok = 1;
    int same_ids = 1, close_scores = 1, reopened_same = 1, filtered = 1, calls = 0;

    if (!ok(s != NULL, "build 300 f32 vectors of 37 dimensions")) goto done;
    is_int(count_entries(dir), 1, "build leaves exactly one file (no temporary)");
    is_int(file_size(dir), 64 + 1216 + VN * 48 * 4, "vectors.flat: header, ids padded to 64, rows of 48 floats");
    is_int(s->count(s), VN, "count() after build");
    is_int(s->dim(s), VDIM, "dim() after build");
    opened = create("vec-flat", CN_BACKEND_VECTOR_STORE, "{\"precision\":\"int8\"}", NULL, 0);
    o = store(opened);
    is_int(o->count(o), 0, "a new store counts 0");
    is_int(o->search(o, q, 5, NULL, NULL, hits, &n, &err), CN_EINVAL, "search before open is refused");
    is_int(o->open(o, dir, &err), 0, "open what build wrote (its precision comes from the file)");
    is_int(o->count(o), VN, "count() after open");
    for (int t = 0; t < 20; t++) {
        size_t nr;
        unit_random(q, VDIM);
        nr = reference(q, 0, ref);
        calls_ok &= s->search(s, q, 10, NULL, NULL, hits, &n, &err) == 0 && n == 10;
        for (size_t i = 0; i < n && i < nr; i++) {
            same_ids &= hits[i].node == ref[i].node;
            close_scores &= fabs(hits[i].score - ref[i].score) < 1e-5;
        }
        calls_ok &= o->search(o, q, 10, NULL, NULL, hits2, &n2, &err) == 0 && n2 == n;
        for (size_t i = 0; i < n && i < n2; i++)
            reopened_same &= hits[i].node == hits2[i].node && hits[i].score == hits2[i].score;
        nr = reference(q, 1, ref);
        calls = 0;
        calls_ok &= s->search(s, q, 10, even_only, &calls, hits, &n, &err) == 0 && n == 10;
        for (size_t i = 0; i < n && i < nr; i++) filtered &= hits[i].node == ref[i].node;
        filtered &= calls == VN;
    }
    ok(calls_ok, "20 searches for the top 10 succeed");
    ok(same_ids, "f32 top-10 ids equal the brute-force ranking");
    ok(close_scores, "f32 scores equal the brute-force dot products within 1e-5");
    ok(reopened_same, "the reopened store answers identically");
    ok(filtered, "with a filter: allow() is asked once per vector and the top 10 are the best allowed ones");

    calls_ok = s->search(s, q, VN + 10, NULL, NULL, hits, &n, &err) == 0;
    ok(calls_ok && n == VN, "k > count returns every vector");
    for (size_t i = 1; i < n; i++) calls_ok &= hits[i - 1].score >= hits[i].score;
    ok(calls_ok, "... best first");
    ok(s->search(s, q, 0, NULL, NULL, hits, &n, &err) == 0 && n == 0, "k = 0 returns nothing");
    cn_backend_instance_free(opened);
done:
    cn_backend_instance_free(built);
    free(dir);
}

static void test_flat_ties(void)
{
    char *dir = subdir("ties");
    const float v[4 * 3] = {0.6f, 0.8f, 0, 0.6f, 0.8f, 0, 0, 0, 1, 0.6f, 0.8f, 0};
    const uint32_t ids[4] = {9, 3, 5, 7};
    const float q[3] = {0.6f, 0.8f, 0};
    const char *precs[3] = {"{}", "{\"precision\":\"f16\"}", "{\"precision\":\"int8\"}"};

    for (int p = 0; p < 3; p++) {
        cn_backend_instance *inst = build_store(precs[p], dir, v, ids, 4, 3);
        cn_vector_store *s = store(inst);
        cn_search_hit hits[4];
        cn_error err = {0, ""};
        size_t n = 0;
        char label[128];

        snprintf(label, sizeof label, "%s: equal scores come in node order 3, 7, 9, then 5", precs[p]);
        ok(s && s->search(s, q, 4, NULL, NULL, hits, &n, &err) == 0 && n == 4 && hits[0].node == 3 &&
               hits[1].node == 7 && hits[2].node == 9 && hits[3].node == 5 && hits[0].score == hits[1].score &&
               hits[1].score == hits[2].score,
           label);
        snprintf(label, sizeof label, "%s: k = 2 keeps the two smallest ids of the tie", precs[p]);
        ok(s && s->search(s, q, 2, NULL, NULL, hits, &n, &err) == 0 && n == 2 && hits[0].node == 3 &&
               hits[1].node == 7,
           label);
        cn_backend_instance_free(inst);
    }
    free(dir);
}

/* Queries close to stored vectors: the right answer is clear, so a lower
 * precision must find it too. */
static void test_flat_lower_precision(const char *cfg, off_t want_size, double tol)
{
    char *dir = subdir("low");
    cn_backend_instance *inst = build_store(cfg, dir, vecs, vids, VN, VDIM);
    cn_vector_store *s = store(inst);
    cn_search_hit hits[10];
    ref_hit ref[VN];
    cn_error err = {0, ""};
    float q[VDIM], noise[VDIM];
    size_t n = 0;
    int top1 = 1, good = 1;
    double worst = 0;
    char label[160];

    snprintf(label, sizeof label, "%s: build", cfg);
    if (!ok(s != NULL, label)) goto done;
    snprintf(label, sizeof label, "%s: file size (rows padded to whole 64-byte lines)", cfg);
    is_int(file_size(dir), want_size, label);
    for (int t = 0; t < 20; t++) {
        size_t row = (size_t)(t * 13) % VN;
        unit_random(noise, VDIM);
        for (size_t j = 0; j < VDIM; j++) q[j] = vecs[row * VDIM + j] + 0.3f * noise[j];
        reference(q, 0, ref);
        good &= s->search(s, q, 10, NULL, NULL, hits, &n, &err) == 0 && n == 10;
        top1 &= hits[0].node == ref[0].node && ref[0].node == vids[row];
        for (size_t i = 0; i < n; i++) {
            double exact = 0;
            for (size_t r = 0; r < VN; r++)
                if (vids[r] == hits[i].node) exact = dotf(q, vecs + r * VDIM, VDIM);
            worst = fmax(worst, fabs(hits[i].score - exact));
        }
    }
    snprintf(label, sizeof label, "%s: the top hit agrees with the exact search for 20 queries", cfg);
    ok(good && top1, label);
    snprintf(label, sizeof label, "%s: every score within %g of the exact dot product", cfg, tol);
    ok(worst <= tol, label);
    if (worst > tol) diag("largest error %g", worst);
done:
    cn_backend_instance_free(inst);
    free(dir);
}

/* f16 rounding: to nearest, ties to even, subnormals included. */
static void test_flat_f16_values(void)
{
    char *dir = subdir("half");
    const float v[8] = {1.0f / 3, 1 + 0x1p-11f, 1 + 3 * 0x1p-11f, 0x1p-24f, 0x1p-25f, 3 * 0x1p-26f, -65504, 65519};
    const double want[8] = {0.333251953125, 1, 1.001953125, 0x1p-24, 0, 0x1p-24, -65504, 65504};
    const float too_big[2] = {65520, 0};
    const uint32_t ids[1] = {1};
    cn_backend_instance *inst = build_store("{\"precision\":\"f16\"}", dir, v, ids, 1, 8);
    cn_vector_store *s = store(inst);
    cn_error err = {0, ""};
    int exact = 1;

    if (ok(s != NULL, "f16: build one vector of chosen values")) {
        for (size_t j = 0; j < 8; j++) {
            float e[8] = {0};
            cn_search_hit h;
            size_t n = 0;
            e[j] = 1;
            exact &= s->search(s, e, 1, NULL, NULL, &h, &n, &err) == 0 && n == 1 && h.score == want[j];
            if (h.score != want[j]) diag("component %zu: got %.17g, want %.17g", j, h.score, want[j]);
        }
        ok(exact, "f16: each component reads back as the correctly rounded half");
        is_int(s->build(s, dir, too_big, ids, 1, 2, &err), CN_EINVAL, "f16: 65520 (rounds to infinity) is refused");
        has_str(err.message, "use precision f32", "... suggesting f32");
    }
    cn_backend_instance_free(inst);
    free(dir);
}

static void test_flat_damaged(void)
{
    char *dir = subdir("bad"), *path = cn_path_join(dir, "vectors.flat"), *data = NULL;
    cn_backend_instance *inst = build_store("{\"precision\":\"int8\"}", dir, vecs, vids, VN, VDIM);
    cn_vector_store *s = store(inst);
    cn_error err = {0, ""};
    cn_search_hit h;
    size_t len = 0, tried = 0, refused = 0, named = 0, n = 0;
    const size_t cuts[5] = {0, 7, 63, 64, 1000};
    float q[VDIM] = {1};

    if (!ok(s && cn_file_read(path, 1 << 24, &data, &len) == 0, "an int8 store to damage")) goto done;
    for (size_t i = 0; i < len; i += i < 64 ? 1 : 97) {
        data[i] ^= 0x10;
        write_bytes(path, data, len);
        data[i] ^= 0x10;
        tried++;
        if (s->open(s, dir, &err) == CN_ECORRUPT) refused++;
        named += strstr(err.message, path) != NULL;
    }
    is_int(refused, tried, "every flipped byte tried (the whole header, every 97th after) is refused");
    is_int(named, tried, "... with a message naming the file");
    is_int(s->count(s), 0, "a store whose open failed is empty");
    is_int(s->search(s, q, 1, NULL, NULL, &h, &n, &err), CN_EINVAL, "... and refuses to search");
    refused = 0;
    for (size_t c = 0; c < 6; c++) {
        size_t cut = c < 5 ? cuts[c] : len - 1;
        write_bytes(path, data, cut);
        refused += s->open(s, dir, &err) == CN_ECORRUPT && strstr(err.message, path) != NULL;
    }
    is_int(refused, 6, "files cut at 0, 7, 63, 64, 1000 and size-1 bytes are refused, naming the file");
    write_bytes(path, data, len);
    {
        FILE *f = fopen(path, "ab");
        fputs("extra", f);
        fclose(f);
    }
    is_int(s->open(s, dir, &err), CN_ECORRUPT, "a file with bytes appended is refused");
    has_str(err.message, "truncated or was extended", "... saying so");
    memcpy(data + 8, "\x02", 1);
    write_bytes(path, data, len);
    is_int(s->open(s, dir, &err), CN_ECORRUPT, "another format version is refused");
    has_str(err.message, "format version 2", "... naming it");
    unlink(path);
    is_int(s->open(s, dir, &err), CN_ENOTFOUND, "a missing file is CN_ENOTFOUND");
    has_str(err.message, path, "... naming the file");
done:
    free(data);
    cn_backend_instance_free(inst);
    free(path);
    free(dir);
}

static void test_flat_build_errors(void)
{
    char *dir = subdir("err");
    cn_backend_instance *inst = create("vec-flat", CN_BACKEND_VECTOR_STORE, "{}", NULL, 0);
    cn_vector_store *s = store(inst);
    const float bad[2] = {0.5f, NAN}, unit_x[2] = {1, 0};
    const uint32_t ids[1] = {42};
    cn_search_hit h;
    cn_error err = {0, ""};
    size_t n = 1;
    char *nowhere = cn_path_join(dir, "missing");

    is_int(s->build(s, dir, bad, ids, 1, 2, &err), CN_EINVAL, "a NaN component is refused");
    has_str(err.message, "node 42", "... naming the node");
    is_int(s->build(s, dir, bad, ids, 1, 0, &err), CN_EINVAL, "0 dimensions are refused");
    is_int(s->build(s, nowhere, bad, ids, 0, 2, &err), CN_EIO, "a directory that does not exist is an I/O error");
    has_str(err.message, nowhere, "... naming it");
    is_int(count_entries(dir), 0, "failed builds leave no file behind");
    is_int(s->build(s, dir, NULL, NULL, 0, 2, &err), 0, "an empty store builds");
    ok(s->count(s) == 0 && s->dim(s) == 2, "... with count 0 and its dimension");
    ok(s->search(s, bad, 3, NULL, NULL, &h, &n, &err) == CN_EINVAL, "a NaN query is refused");
    ok(s->search(s, unit_x, 3, NULL, NULL, &h, &n, &err) == 0 && n == 0,
       "... and a search in the empty store finds nothing");
    free(nowhere);
    cn_backend_instance_free(inst);
    free(dir);
}

int main(void)
{
    const char *builddir = getenv("CN_BUILDDIR");
    char *root;

    strcpy(tmpdir, "/tmp/cn_vectors_test_XXXXXX");
    if (!ok(builddir != NULL, "CN_BUILDDIR is set (run through make check)") || mkdtemp(tmpdir) == NULL)
        return tap_done();
    root = cn_path_join(builddir, "_plugins");
    cn_backends_add_root(&backends, root, "test");
    free(root);
    test_lsa_topics();
    test_lsa_zero_vectors();
    test_lsa_reproducible();
    test_lsa_save_load();
    test_lsa_damaged();
    test_lsa_degenerate();
    test_options();
    make_vectors();
    test_flat_exact();
    test_flat_ties();
    test_flat_lower_precision("{\"precision\":\"f16\"}", 64 + 1216 + VN * 64 * 2, 2e-3);
    test_flat_lower_precision("{\"precision\":\"int8\"}", 64 + 1216 + 1216 + VN * 64, 2e-2);
    test_flat_f16_values();
    test_flat_damaged();
    test_flat_build_errors();
    cn_backends_free(&backends);
    rm_tree(tmpdir);
    return tap_done();
}
