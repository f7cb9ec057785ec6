/* SPDX-License-Identifier: Apache-2.0 */
/* Parse records (cn_records_write / cn_records_open / cn_records_match):
 * parsed files round-trip with their nodes, references and strings; files
 * left out for good (binary, undecodable, a backend's failure) round-trip
 * with their status and error and are matched like parsed ones; a failure
 * for a passing cause and an unreadable file are not kept; a changed
 * backend version or content matches nothing.  Shards: a build that keeps
 * a shard's files links the previous build's shard, and writes the same
 * bytes as one that does not; where links cannot be made, and when the
 * shard count changes, it writes them; a missing, damaged or foreign shard
 * is refused, naming it. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "index/cn_parse.h"
#include "index/cn_records.h"
#include "tap.h"

static const cn_lang_descriptor desc = {CN_ABI_MAJOR, CN_ABI_MINOR, (uint32_t)sizeof desc, "python", "7", NULL};

static void rec(cn_file_rec *r, const char *path, cn_rec_status status, uint64_t hash, const char *error,
                bool lasting)
{
    memset(r, 0, sizeof *r);
    r->path = strdup(path);
    r->language = "python";
    r->status = status;
    r->hash = hash;
    r->size = 100 + hash;
    r->error = error ? strdup(error) : NULL;
    r->lasting = lasting;
    r->stamp = (cn_file_stamp){1000, 1000, hash, 1};
}


/* ---- shards ------------------------------------------------------------- */

#define MANY 200   /* four shards */

/* Parsed record i of a build: two nodes, a reference, their strings; the
 * variant moves its lines. */
static void parsed(cn_file_rec *r, size_t i, uint32_t variant)
{
    char path[32], strs[96];
    int len;
    snprintf(path, sizeof path, "m/f%03zu.py", i);
    rec(r, path, CN_REC_PARSED, 1000 + i + 7919u * variant, NULL, false);
    r->n_nodes = 2;
    r->nodes = calloc(2, sizeof *r->nodes);
    r->n_refs = 1;
    r->refs = calloc(1, sizeof *r->refs);
    len = snprintf(strs, sizeof strs, "C%c%s:C%cgo%c%s:C.go%cthing", 0, path, 0, 0, path, 0);
    cn_buf_append(&r->pool, strs, (size_t)len + 1);
    r->nodes[0] = (cn_rec_node){1, 0, 1 + variant, 9 + variant, -1, 0, 2};
    r->nodes[1] = (cn_rec_node){3, 0, 2 + variant, 4 + variant, 0, (uint32_t)(strlen(path) + 5),
                                (uint32_t)(strlen(path) + 8)};
    r->refs[0] = (cn_rec_ref){1, 1, 3 + variant, 4, (uint32_t)(len - 5), UINT32_MAX};
}

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    char *d = NULL;
    long n;
    *len = 0;
    if (f == NULL) return NULL;
    if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0 &&
        (d = malloc((size_t)n + 1)) != NULL && fread(d, 1, (size_t)n, f) == (size_t)n)
        *len = (size_t)n;
    fclose(f);
    return d;
}

static bool same_file(const char *a, const char *b)
{
    size_t la, lb;
    char *x = slurp(a, &la), *y = slurp(b, &lb);
    bool same = x && y && la == lb && memcmp(x, y, la) == 0;
    free(x);
    free(y);
    return same;
}

static void in(char *buf, size_t size, const char *dir, const char *name)
{
    snprintf(buf, size, "%s/%s", dir, name);
}

static void shard_name(char *buf, size_t size, const char *dir, int s)
{
    snprintf(buf, size, "%s/records-%02d.bin", dir, s);
}

/* How many of dir's first n shards are the same file as other's. */
static int linked(const char *dir, const char *other, int n)
{
    int k = 0;
    for (int s = 0; s < n; s++) {
        char a[300], b[300];
        struct stat x, y;
        shard_name(a, sizeof a, dir, s);
        shard_name(b, sizeof b, other, s);
        k += stat(a, &x) == 0 && stat(b, &y) == 0 && x.st_ino == y.st_ino && x.st_dev == y.st_dev;
    }
    return k;
}

static void remove_records(const char *dir)
{
    char p[300];
    in(p, sizeof p, dir, "records.bin");
    unlink(p);
    for (int s = 0; s < 64; s++) {
        shard_name(p, sizeof p, dir, s);
        unlink(p);
    }
    rmdir(dir);
}

static bool copy_file(const char *from, const char *to)
{
    size_t n;
    char *d = slurp(from, &n);
    FILE *f = d ? fopen(to, "wb") : NULL;
    bool done = f && fwrite(d, 1, n, f) == n;
    if (f && fclose(f) != 0) done = false;
    free(d);
    return done;
}

/* The records of a second build, taken from the first (`prev`) but for
 * file `changed`, which is parsed anew; `n` files. */
static void second_build(cn_file_rec *out, size_t n, cn_records *prev, size_t changed)
{
    for (size_t i = 0; i < n; i++) {
        cn_file_rec fresh;
        parsed(&fresh, i, 0);
        if (i != changed) {
            cn_file_rec *m = prev ? cn_records_match(prev, fresh.path, NULL, fresh.size, fresh.hash, "7") : NULL;
            if (m != NULL) {   /* as a build takes it: its own path, the rest moved */
                cn_file_rec_move(m, &out[i]);
                out[i].path = fresh.path;
                fresh.path = NULL;
                cn_file_rec_clear(&fresh);
                continue;
            }
        } else {
            cn_file_rec_clear(&fresh);
            parsed(&fresh, i, 1);
        }
        out[i] = fresh;
    }
}

static void test_shards(const cn_langs *langs)
{
    char a[] = "/tmp/cn-shards-a-XXXXXX", b[] = "/tmp/cn-shards-b-XXXXXX", c[] = "/tmp/cn-shards-c-XXXXXX";
    char pa[300], pb[300], pc[300], x[300], y[300];
    cn_file_rec *first = calloc(MANY + 60, sizeof *first), *second = calloc(MANY + 60, sizeof *second);
    cn_records *prev = NULL, *r = NULL;
    int changed_shard = -1, rc;

    if (!mkdtemp(a) || !mkdtemp(b) || !mkdtemp(c) || !first || !second) {
        ok(0, "shard test set up");
        return;
    }
    in(pa, sizeof pa, a, "records.bin");
    in(pb, sizeof pb, b, "records.bin");
    in(pc, sizeof pc, c, "records.bin");
    for (size_t i = 0; i < MANY; i++) parsed(&first[i], i, 0);
    ok(cn_records_write(first, MANY, langs, 10000000000ull, NULL, pa) == 0, "200 files' records written");
    shard_name(x, sizeof x, a, 3);
    shard_name(y, sizeof y, a, 4);
    ok(access(x, F_OK) == 0 && access(y, F_OK) != 0, "... in four shards");
    ok(cn_records_open(pa, langs, &prev) == 0, "... and opened");
    if (prev == NULL) return;

    /* one file changed: its shard is written, the other three linked */
    second_build(second, MANY, prev, 17);
    ok(cn_records_write(second, MANY, langs, 10000000000ull, prev, pb) == 0, "a build with one file changed written");
    is_int(linked(b, a, 4), 3, "three shards are the previous build's files, linked");
    for (int s = 0; s < 4; s++)
        if (linked(b, a, s + 1) == linked(b, a, s)) changed_shard = s;
    ok(cn_records_write(second, MANY, langs, 10000000000ull, NULL, pc) == 0,
       "the same records written without the previous build");
    is_int(linked(c, a, 4), 0, "... link nothing");
    {
        bool same = same_file(pb, pc);
        for (int s = 0; s < 4; s++) {
            shard_name(x, sizeof x, b, s);
            shard_name(y, sizeof y, c, s);
            same = same && same_file(x, y);
        }
        ok(same, "linked or written, the head and every shard are the same bytes");
    }
    ok(cn_records_open(pb, langs, &r) == 0, "the second build's records open");
    if (r != NULL) {
        cn_file_rec *m = cn_records_match(r, "m/f017.py", NULL, 100 + 1017 + 7919, 1017 + 7919, "7");
        cn_file_rec *o = cn_records_match(r, "m/f150.py", NULL, 100 + 1150, 1150, "7");
        ok(m && m->n_nodes == 2 && m->nodes[1].start_line == 3 &&
               strcmp(cn_rec_str(m, m->nodes[1].qualname), "m/f017.py:C.go") == 0,
           "the changed file's record is the new one");
        ok(o && o->n_refs == 1 && o->refs[0].line == 3 && strcmp(cn_rec_str(o, o->refs[0].name), "thing") == 0,
           "a kept file's record is intact");
        cn_records_close(r);
        r = NULL;
    }

    /* a damaged, a foreign and a missing shard, each refused by name */
    shard_name(x, sizeof x, c, 1);
    {
        int fd = open(x, O_WRONLY);
        ok(fd >= 0 && pwrite(fd, "\x5a", 1, 200) == 1 && close(fd) == 0, "a byte of shard 1 changed");
    }
    rc = cn_records_open(pc, langs, &r);
    ok(rc == CN_ECORRUPT && strstr(cn_error_last()->message, "records-01.bin") &&
           strstr(cn_error_last()->message, "checksum"),
       "a damaged shard is refused, naming it");
    shard_name(y, sizeof y, b, 1);
    ok(copy_file(y, x), "... restored");
    if (changed_shard >= 0) {
        shard_name(x, sizeof x, c, changed_shard);
        shard_name(y, sizeof y, a, changed_shard);
        ok(copy_file(y, x), "the changed shard replaced by the first build's");
        rc = cn_records_open(pc, langs, &r);
        ok(rc == CN_ECORRUPT && strstr(cn_error_last()->message, "not the shard its head was written with"),
           "a shard of another build is refused");
        shard_name(y, sizeof y, b, changed_shard);
        ok(copy_file(y, x), "... restored");
    }
    ok(cn_records_open(pc, langs, &r) == 0, "restored, they open");
    cn_records_close(r);
    r = NULL;
    shard_name(x, sizeof x, c, 0);
    unlink(x);
    rc = cn_records_open(pc, langs, &r);
    ok(rc == CN_ECORRUPT && strstr(cn_error_last()->message, "records.bin") &&
           strstr(cn_error_last()->message, "a shard is missing"),
       "a missing shard is refused");

    /* more files, eight shards: nothing is linked, the rest reused */
    for (size_t i = 0; i < MANY; i++) cn_file_rec_clear(&second[i]);
    second_build(second, MANY + 60, prev, MANY + 100);
    remove_records(c);
    ok(mkdir(c, 0755) == 0 && cn_records_write(second, MANY + 60, langs, 10000000000ull, prev, pc) == 0,
       "a build with 60 files more written");
    shard_name(x, sizeof x, c, 7);
    ok(access(x, F_OK) == 0 && linked(c, a, 8) == 0, "... in eight shards, none of them linked");
    ok(cn_records_open(pc, langs, &r) == 0 && cn_records_count(r) == MANY + 60, "... and they open");
    cn_records_close(r);
    r = NULL;
    for (size_t i = 0; i < MANY + 60; i++) cn_file_rec_clear(&second[i]);

    /* where no link can be made (another file system), shards are written */
    {
        struct stat sa, ss;
        char d[] = "/dev/shm/cn-shards-XXXXXX", pd[300];
        if (stat("/dev/shm", &ss) == 0 && stat(a, &sa) == 0 && ss.st_dev != sa.st_dev && mkdtemp(d)) {
            in(pd, sizeof pd, d, "records.bin");
            second_build(second, MANY, prev, 17);
            ok(cn_records_write(second, MANY, langs, 10000000000ull, prev, pd) == 0,
               "records written on another file system than the previous build's");
            is_int(linked(d, a, 4), 0, "... link nothing");
            shard_name(x, sizeof x, d, 2);
            shard_name(y, sizeof y, b, 2);
            ok(same_file(pd, pb) && same_file(x, y), "... and are the same bytes");
            for (size_t i = 0; i < MANY; i++) cn_file_rec_clear(&second[i]);
            remove_records(d);
        } else {
            diag("no other file system at /dev/shm: the unlinkable case is not run");
        }
    }
    cn_records_close(prev);
    for (size_t i = 0; i < MANY; i++) cn_file_rec_clear(&first[i]);
    free(first);
    free(second);
    remove_records(a);
    remove_records(b);
    remove_records(c);
}

int main(void)
{
    char dir[] = "/tmp/cn-records-XXXXXX", path[300];
    cn_lang_entry entry = {0};
    cn_langs langs = {0}, other = {0};
    cn_lang_descriptor changed = desc;
    cn_lang_entry entry2 = {0};
    cn_file_rec recs[6];
    cn_records *r = NULL;
    cn_file_rec *m;

    if (mkdtemp(dir) == NULL) return 1;
    snprintf(path, sizeof path, "%s/records.bin", dir);
    entry.language = "python";
    entry.desc = &desc;
    langs.items = &entry;
    langs.len = 1;

    /* in path order, as a build has them */
    rec(&recs[0], "a.py", CN_REC_PARSED, 1, NULL, false);
    recs[0].n_nodes = 1;
    recs[0].nodes = calloc(1, sizeof *recs[0].nodes);
    cn_buf_append(&recs[0].pool, "f\0a.py:f\0", 9);
    recs[0].nodes[0].kind = 3;   /* calloc'd: no stray padding (it is written as it is) */
    recs[0].nodes[0].start_line = 1;
    recs[0].nodes[0].end_line = 2;
    recs[0].nodes[0].parent = -1;
    recs[0].nodes[0].qualname = 2;
    rec(&recs[1], "b.py", CN_REC_BINARY, 2, NULL, false);
    rec(&recs[2], "c.py", CN_REC_FAILED, 3, "lang-python: parsing gave up after 5.0 s", true);
    rec(&recs[3], "d.py", CN_REC_FAILED, 4, "out of memory", false);
    rec(&recs[4], "e.py", CN_REC_UNDECODABLE, 5, NULL, false);
    rec(&recs[5], "f.py", CN_REC_UNREADABLE, 6, "cannot open f.py", false);
    ok(cn_records_write(recs, 6, &langs, 10000000000ull, NULL, path) == 0, "records with left-out files are written");
    ok(cn_records_open(path, &langs, &r) == 0, "... and read back");
    if (r == NULL) return tap_done();
    is_int(cn_records_count(r), 1, "one parsed file");
    is_int(cn_records_left_count(r), 3, "three left out for good: binary, undecodable, a lasting failure");
    ok(cn_records_has(r, "b.py") && cn_records_has(r, "c.py") && cn_records_has(r, "e.py"),
       "the left-out files are known");
    ok(!cn_records_has(r, "d.py") && !cn_records_has(r, "f.py"),
       "a failure for memory and an unreadable file are not kept (the next build tries again)");

    m = cn_records_match(r, "a.py", NULL, 101, 1, "7");
    ok(m != NULL && m->status == CN_REC_PARSED && m->n_nodes == 1 && strcmp(cn_rec_str(m, m->nodes[0].qualname),
                                                                            "a.py:f") == 0,
       "a parsed file matches by its content, nodes and strings intact");
    ok(cn_records_match(r, "c.py", NULL, 103, 99, "7") == NULL, "a failed file whose content changed: no match");
    ok(cn_records_match(r, "c.py", NULL, 103, 3, "8") == NULL, "... nor with another backend version");
    m = cn_records_match(r, "c.py", NULL, 103, 3, "7");
    ok(m != NULL && m->status == CN_REC_FAILED && m->lasting, "an unchanged failed file matches, failed");
    is_str(m ? m->error : NULL, "lang-python: parsing gave up after 5.0 s", "... with its error");
    if (m != NULL) {
        cn_file_rec taken;
        cn_file_rec_move(m, &taken);
        ok(taken.reused && taken.status == CN_REC_FAILED, "moved out, it is a reused failure");
        ok(cn_records_match(r, "c.py", NULL, 103, 3, "7") == NULL, "a record moved out is not handed out again");
        taken.path = NULL;
        cn_file_rec_clear(&taken);
    }
    {
        cn_file_stamp st = {1000, 1000, 2, 1}, moved = {1000, 1000, 77, 1};
        m = cn_records_match(r, "b.py", &st, 102, 0, "7");
        ok(m != NULL && m->status == CN_REC_BINARY, "a binary file is known unchanged by its stamp");
        ok(cn_records_match(r, "e.py", &moved, 105, 0, "7") == NULL, "another inode: not by its stamp");
        m = cn_records_match(r, "e.py", &(cn_file_stamp){1000, 1000, 5, 1}, 105, 0, "7");
        ok(m != NULL && m->status == CN_REC_UNDECODABLE, "an undecodable one too");
    }
    cn_records_close(r);

    /* a backend that is gone: its left-out files are never handed out */
    changed.name = "c";
    entry2.language = "c";
    entry2.desc = &changed;
    other.items = &entry2;
    other.len = 1;
    ok(cn_records_open(path, &other, &r) == 0, "records open without the backend that wrote them");
    if (r != NULL) {
        ok(cn_records_match(r, "c.py", NULL, 103, 3, "7") == NULL, "... and hand out no left-out file of it");
        cn_records_close(r);
    }

    for (int i = 0; i < 6; i++) cn_file_rec_clear(&recs[i]);
    {
        char shard0[300];
        shard_name(shard0, sizeof shard0, dir, 0);
        shard_name(path, sizeof path, dir, 1);
        ok(access(shard0, F_OK) == 0 && access(path, F_OK) != 0, "one file's records: one shard");
    }
    remove_records(dir);
    test_shards(&langs);
    return tap_done();
}
