/* Parse records (cn_records_write / cn_records_open / cn_records_match):
 * parsed files round-trip with their nodes, references and strings; files
 * left out for good (binary, undecodable, a backend's failure) round-trip
 * with their status and error and are matched like parsed ones; a failure
 * for a passing cause and an unreadable file are not kept; a changed
 * backend version or content matches nothing. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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
    ok(cn_records_write(recs, 6, &langs, 10000000000ull, path) == 0, "records with left-out files are written");
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
    unlink(path);
    rmdir(dir);
    return tap_done();
}
