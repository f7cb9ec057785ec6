/* SPDX-License-Identifier: Apache-2.0 */
/* `codenib eval`: localization quality on real issues.
 *
 * A dataset is JSON Lines, one issue a line (the SWE-bench / LocAgent
 * shape): instance_id, repo ("owner/name"), base_commit,
 * problem_statement and gt_file_changes (per file: "file" and
 * changes.edited_entities, "path.py:Class.method").  Predictions are JSON
 * Lines too: instance_id, found_files, found_modules, found_entities,
 * each ranked best first.
 *
 * The pieces:
 *   cn_eval_dataset.c  datasets and predictions: loading with file:line
 *                      errors, the gold lists of each level
 *   cn_eval_score.c    the metrics (Acc@k as LocAgent and SweRank define
 *                      it, Recall@k, nDCG@k, MAP@k, CoSIL-style any-hit
 *                      Top-k, OrcaLoca-style Match), overall and per
 *                      repository
 *   cn_eval_report.c   the Markdown report, the plot (SVG) and the
 *                      terminal table
 *   cn_eval_tree.c     a commit's indexed files, taken from a bare mirror
 *   cn_eval_convert.c  a query's answer as ranked files/modules/entities
 *   cn_eval_run.c      the run: resume, jobs, progress, outputs */
#ifndef CN_EVAL_H
#define CN_EVAL_H

#include <stdbool.h>
#include <stddef.h>

#include <json-c/json.h>

#include "../util/cn_util.h"

/* ---- levels ------------------------------------------------------------- */

typedef enum cn_eval_level {
    CN_EVAL_FILE = 0,     /* "path.py" */
    CN_EVAL_MODULE = 1,   /* "path.py:TopLevelName" */
    CN_EVAL_FUNCTION = 2, /* "path.py:Class.method" or "path.py:function" */
    CN_EVAL_LEVELS = 3
} cn_eval_level;

/* "file", "module", "function" */
const char *cn_eval_level_name(cn_eval_level l);
/* "found_files", "found_modules", "found_entities" */
const char *cn_eval_level_key(cn_eval_level l);
/* The cut-offs of a level: file 1, 3, 5; module 5, 10; function 5, 10.
 * Returns how many (at most CN_EVAL_MAX_KS). */
#define CN_EVAL_MAX_KS 3
size_t cn_eval_level_ks(cn_eval_level l, const int **ks);

/* ---- datasets and predictions (cn_eval_dataset.c) ------------------------ */

/* A gold function: its file and its lines (1-based, inclusive). */
typedef struct cn_eval_span {
    char *file;
    long start, end;
} cn_eval_span;

/* The lines a fix changes in one file (the old side's numbers). */
typedef struct cn_eval_changed {
    char *file;
    long *lines;
    size_t n;
} cn_eval_changed;

typedef struct cn_eval_instance {
    char *instance_id;
    char *repo;                 /* "owner/name"; from instance_id when absent */
    char *base_commit;          /* NULL when absent (scoring needs none) */
    char *problem_statement;    /* NULL when absent */
    char *language;             /* "Rust"; NULL when absent */
    cn_strv gold[CN_EVAL_LEVELS];   /* files in order ("gold_files" when the row
                                     * has them, else gt_file_changes' files);
                                     * modules (path:Top, from the entities,
                                     * first occurrence); entities */
    /* Range gold (the multilingual benchmark's rows): scored by lines. */
    bool ranged;                /* the row has gold_functions or changed_lines */
    cn_eval_span *functions;    /* gold_functions */
    size_t n_functions;
    cn_eval_changed *changed;   /* changed_lines */
    size_t n_changed;
} cn_eval_instance;

typedef struct cn_eval_dataset {
    cn_eval_instance *items;
    size_t len;
} cn_eval_dataset;

/* Loads a dataset.  Errors (CN_EIO, CN_EPARSE, CN_EINVAL) say
 * "FILE:LINE: what" (a row that is not JSON, no instance_id, a duplicate
 * instance_id, gt_file_changes of the wrong shape). */
int cn_eval_dataset_load(const char *path, cn_eval_dataset *out);
void cn_eval_dataset_free(cn_eval_dataset *d);

typedef struct cn_eval_pred {
    char *instance_id;
    cn_strv found[CN_EVAL_LEVELS];
    cn_strv locations;          /* found_locations: "path:START-END", ranked */
    bool failed;                /* the row has an "error": a miss everywhere */
} cn_eval_pred;

typedef struct cn_eval_preds {
    cn_eval_pred *items;
    size_t len, cap;
    json_object *by_id;         /* instance_id -> index (int) */
} cn_eval_preds;

void cn_eval_preds_init(cn_eval_preds *p);
/* Loads predictions; a later row for the same instance replaces an earlier
 * one.  With `missing_ok` a file that does not exist gives no rows.  A
 * last line cut short (an interrupted writer) is ignored with *truncated
 * set (may be NULL); any other bad row is an error "FILE:LINE: what".
 * Rows are added to *out (initialised with cn_eval_preds_init), which
 * keeps the rows read before an error: free it either way.  A missing
 * file without `missing_ok` is CN_EIO naming the path. */
int cn_eval_preds_load(const char *path, bool missing_ok, cn_eval_preds *out, bool *truncated);
/* Adds (or replaces) a prediction, taking ownership of *pred's contents
 * (zeroed on return, freed on failure too). */
int cn_eval_preds_add(cn_eval_preds *p, cn_eval_pred *pred);
const cn_eval_pred *cn_eval_preds_find(const cn_eval_preds *p, const char *instance_id);
void cn_eval_preds_free(cn_eval_preds *p);
void cn_eval_pred_free(cn_eval_pred *pred);
/* Parses "path:START-END" (or "path:LINE") into its parts; false when
 * the string is neither. *path_len is the length of the path. */
bool cn_eval_location_parse(const char *loc, size_t *path_len, long *start, long *end);
/* The JSON row of a prediction (the shape of the input files, with
 * found_locations; an "error" is the run's to add). */
json_object *cn_eval_pred_json(const cn_eval_pred *pred);

/* ---- scoring (cn_eval_score.c) -------------------------------------------- */

/* Scores predictions against a dataset.  *metrics:
 *
 *   {"instances": N, "predicted": M, "missing": [ids without a prediction],
 *    "overall": LEVELS,
 *    "per_repo": {"owner/name": {"instances": n, "levels": LEVELS}, ...}}
 *
 *   LEVELS = {"file": {"n": 65, "acc": {"1": x, "3": x, "5": x},
 *                      "recall": {...}, "ndcg": {...}, "map": {...},
 *                      "top": {...}, "match": x}, "module": ..., "function": ...}
 *
 * An instance whose gold is empty at a level is left out of that level
 * (n counts the rest); a missing prediction counts as an empty list.  The
 * values are unrounded fractions (0..1); a level with n = 0 has null
 * values.  When rows have a "language", "per_language" is there too, in
 * the shape of per_repo.
 *
 * When rows have range gold (gold_functions, changed_lines: the
 * multilingual benchmark), "localization" holds the scores it defines
 * (its mlocscore.py gives the same numbers):
 *
 *   {"overall": LOC, "per_language": {"C": LOC, ...}, "per_repo": {...}}
 *   LOC = {"instances": n, "failed": rows missing or with an error,
 *          "file": {"n": n, "acc": {"1","3","5","10"}},
 *          "function": {"n": rows with gold functions, "acc": {"5","10"}},
 *          "loc": {"n": n, "hit": {"5"}}}
 *
 *   file@k      the gold files found among the first k distinct
 *               found_files number min(|gold|, k)
 *   function@k  the gold functions matched by the first k distinct
 *               locations number min(|gold|, k); a location matches a
 *               gold function in the same file when their ranges overlap
 *               by at least half the function's length
 *   loc-hit@5   one of the first 5 locations holds a changed line
 *
 * A row with an "error" is a miss everywhere. */
int cn_eval_score(const cn_eval_dataset *d, const cn_eval_preds *p, json_object **metrics);

/* Semi-private (cn_eval_score_ranges.c): whether any row has range gold,
 * and the "localization" object (NULL on ENOMEM). */
bool cn_eval__ranged(const cn_eval_dataset *d);
json_object *cn_eval__score_ranges(const cn_eval_dataset *d, const cn_eval_preds *p);

/* ---- reports (cn_eval_report.c) ------------------------------------------ */

/* One scored row of a report: this run, or a reference prediction file
 * scored on the same dataset. */
typedef struct cn_eval_row {
    const char *name;
    json_object *metrics;       /* from cn_eval_score (borrowed) */
} cn_eval_row;

/* The Acc@k table (one line per row, a column per level@k), plain text for
 * a terminal.  Returns a malloc'd string or NULL on ENOMEM. */
char *cn_eval_table_text(const cn_eval_row *rows, size_t n);
/* Writes DIR/report.md (title, the Acc@k table of all rows, the other
 * metrics of rows[0], its per-repository table, the plot) and
 * DIR/acc_at_k.svg (grouped bars of Acc@k by level, one colour per row).
 * Both are written atomically. */
int cn_eval_report_write(const char *dir, const char *title, const cn_eval_row *rows, size_t n);

#endif /* CN_EVAL_H */
