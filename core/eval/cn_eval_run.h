/* SPDX-License-Identifier: Apache-2.0 */
/* `codenib eval` on real issues: the pieces a run needs besides the
 * dataset and the scorer (cn_eval.h).
 *
 *   cn_eval_tree.c     a commit's indexed files, taken from a bare mirror
 *                      (one `git ls-tree`, one `git cat-file --batch`)
 *   cn_eval_convert.c  a query's answer (cn_query_run) as a ranked
 *                      prediction: files, modules, entities
 *   cn_eval_run.c      the run itself (below) */
#ifndef CN_EVAL_RUN_H
#define CN_EVAL_RUN_H

#include <stdbool.h>
#include <stddef.h>

#include <json-c/json.h>

#include "cn_eval.h"

/* ---- which files are indexed (cn_eval_rule.c) ------------------------- */

/* The languages an eval indexes: their names and their extensions (".py",
 * with the dot), as the language backends' plugin.yaml list them. */
typedef struct cn_eval_langs {
    cn_strv names;
    cn_strv exts;
} cn_eval_langs;

/* Every usable language backend found on the plugin path, or only those
 * named in `only` (a comma-separated list such as "c,cpp"; NULL: all).
 * CN_EINVAL for an unknown name (the message lists the known ones),
 * CN_ENOTFOUND when there is no backend at all. */
int cn_eval_langs_load(const char *only, cn_eval_langs *out);
/* Adds a language by hand (tests; *l zeroed first by the caller). */
int cn_eval_langs_add(cn_eval_langs *l, const char *name, const char *const *exts, size_t n);
/* "c, cpp, go" (malloc'd; NULL on ENOMEM). */
char *cn_eval_langs_names(const cn_eval_langs *l);
void cn_eval_langs_free(cn_eval_langs *l);

/* Tests and documentation, the same rule for every language: a path under
 * a test or doc directory at any depth (test, tests, testing, __tests__,
 * __mocks__, spec, specs, testdata, test_data, e2e, doc, docs,
 * documentation, man, ...), or a test file by its language's naming
 * (Python test_*.py, *_test.py, conftest.py; Java *Test.java, *Tests.java,
 * *IT.java, *TestCase.java, Test*.java; *.test.js, *.spec.ts; elsewhere
 * *_test.EXT, *-test.EXT, *_tests.EXT, *_unittest.EXT). */
bool cn_eval_is_test_or_doc(const char *path);

/* The indexing rule: a file whose extension belongs to one of `l`'s
 * languages, not a declaration stub (.pyi, .d.ts), not a test or doc
 * (cn_eval_is_test_or_doc).  `path` is relative to the repository root,
 * '/'-separated. */
bool cn_eval_is_indexed(const cn_eval_langs *l, const char *path);
/* Whether `path` is a licence file ("LICENSE", "COPYING.txt",
 * "ICU-license.html") outside test and doc trees: written beside the
 * indexed files, as a checkout has them, since the planner reads a
 * directory's own licence as the mark of vendored code. */
bool cn_eval_is_licence(const char *path);

/* ---- a commit's indexed files (cn_eval_tree.c) -------------------------- */

typedef struct cn_eval_tree_stats {
    size_t listed;           /* regular files in the commit, indexed or not */
    size_t files;            /* indexed files written (or found, when reused);
                              * the licence files written beside them are not counted */
    size_t missing;          /* blobs the mirror lacks: skipped, not an error */
    size_t skipped;          /* entries the indexing rule leaves out */
    size_t not_regular;      /* indexed names that are symlinks or submodules */
    size_t rejected;         /* hostile paths: absolute, "..", ".", ".git", empty
                              * components; or a name already written */
    unsigned long long bytes;    /* bytes written (or found, when reused) */
    bool reused;             /* DEST was there already and was left as is */
} cn_eval_tree_stats;

/* Writes the indexed files (cn_eval_is_indexed with `langs`) and the
 * licence files (cn_eval_is_licence) of `commit`
 * (any name git resolves to a commit) in the bare repository `git_dir`
 * under `dest`, with
 * their modes (0644, or 0755 for an executable).  Only regular files are
 * written; symlinks, submodules, hostile paths and blobs the mirror lacks
 * are skipped and counted in *st (may be NULL).
 *
 * The files are written into a sibling "DEST.tmp-<pid>-<n>" and published
 * with rename(), so DEST is complete or absent.  An existing DEST directory
 * is a cache of that commit and is reused as is (st->reused; files and
 * bytes then count the indexed files found in it; when it holds none, the
 * commit is listed again so that `listed` says how many files it has).
 *
 * Errors, each naming the mirror and the commit: CN_ENOTFOUND when git
 * cannot be run, `git_dir` does not exist or the commit is not in it;
 * CN_EIO when `git_dir` is no git repository, git fails or a file cannot
 * be written; CN_EINVAL for an empty or option-like commit or a DEST that
 * is not a directory; CN_ENOMEM. */
int cn_eval_tree_materialize(const char *git_dir, const char *commit, const cn_eval_langs *langs,
                             const char *dest, cn_eval_tree_stats *st);

/* Removes `dest` and everything under it without following symlinks (a
 * symlink is removed, not its target).  A `dest` that does not exist is
 * not an error.  CN_EIO (naming the entry) when something cannot be
 * removed. */
int cn_eval_tree_remove(const char *dest);

/* ---- a query's answer as a prediction (cn_eval_convert.c) ---------------- */

/* Turns the result of cn_query_run into a prediction for `instance_id`
 * (*out initialised here; free it with cn_eval_pred_free).
 *
 * The ranked lists are read from the offline shape ("files":
 * [{"path",...}], "symbols": [{"symbol":"path:Qual.name",...}]) when they
 * are there, else from "contract" ({"files","symbols","locations"}, the
 * agent shape; a null contract gives empty lists).
 *
 *   found_entities  the symbols in order, `Class.__init__` named `Class`
 *                   (LocAgent's naming), deduplicated keeping the first
 *                   rank; a symbol naming no file is left out
 *   found_files     the ranked files, then the files of the entities and
 *                   of the contract's locations not listed yet
 *   found_modules   "path:" + the first dotted part of each entity, in
 *                   entity order, deduplicated
 *   locations       "path:START-END" (1-based, inclusive): the symbols'
 *                   ranges in symbol order (offline: each symbols[] item's
 *                   path, start_line, end_line), then the contract's
 *                   locations not listed yet; no range is listed twice
 *
 * `result` may be NULL (an empty prediction).  CN_EINVAL for an empty
 * instance_id; CN_ENOMEM. */
int cn_eval_pred_from_result(const char *instance_id, json_object *result, cn_eval_pred *out);

/* An empty prediction (a failed query still counts as a miss). */
int cn_eval_pred_empty(const char *instance_id, cn_eval_pred *out);

/* ---- the run (cn_eval_run.c) ---- */

/* A reference prediction file scored next to the run ("bm25=ref.jsonl"). */
typedef struct cn_eval_reference {
    const char *name;
    const char *path;
} cn_eval_reference;

typedef enum cn_eval_event_kind {
    CN_EVAL_EV_RESUME,      /* before the first instance: done of total already there */
    CN_EVAL_EV_INSTANCE     /* an instance finished (its row is written) */
} cn_eval_event_kind;

/* What a progress callback is told.  Strings are borrowed for the call. */
typedef struct cn_eval_event {
    cn_eval_event_kind kind;
    size_t done;            /* instances with a row (including earlier runs) */
    size_t total;           /* instances selected */
    const char *instance_id;
    double elapsed_s;       /* this instance, wall clock */
    const char *error;      /* why it failed, or NULL */
    double file_at_5;       /* Acc@5 (file) over every instance done; < 0: none yet */
    double eta_s;           /* time left, each instance at its repository's pace in
                             * this run (or the run's); < 0: unknown */
} cn_eval_event;

typedef void (*cn_eval_progress_fn)(const cn_eval_event *ev, void *data);

/* BM25, the symbol graph and embed-local vectors (trained on each
 * repository at compile time: no model involved). */
#define CN_EVAL_DEFAULT_INDEXES "bm25,graph,vector"

typedef struct cn_eval_opts {
    const char *dataset;        /* JSON Lines (cn_eval_dataset_load) */
    const char *mirrors;        /* MIRRORS/<owner>+<name>/repo: bare git mirrors */
    const char *out_dir;        /* predictions.jsonl, metrics.json, report.md, acc_at_k.svg */
    const char *work_dir;       /* trees/, cache/, rows/, logs/; NULL: OUT/work */
    bool agent;                 /* the agent with a model, instead of the offline planner */
    const char *indexes;        /* what each compile builds; NULL: CN_EVAL_DEFAULT_INDEXES */
    const char *model;          /* agent: chat model (NULL: CODENIB_MODEL) */
    const char *base_url;       /* agent: the endpoint (NULL: the environment's) */
    const char *harness;        /* agent: harness spec file (its options; --model still wins), or NULL */
    unsigned planner_without;   /* offline: planner signals switched off (CN_PL_SIG_*) */
    const char *languages;      /* "c,cpp": only these backends' files; NULL: every backend */
    int jobs;                   /* instances at a time (child processes); 0 means 1 */
    double timeout_s;           /* per instance; 0: 900 s */
    size_t limit;               /* the first N selected instances; 0: all */
    const cn_strv *instances;   /* only these ids (dataset order kept); NULL: all */
    const cn_eval_reference *references;
    size_t n_references;
    bool score_only;            /* run nothing: score what predictions.jsonl holds */
    bool keep_work;             /* keep trees, index caches and logs */
    cn_eval_progress_fn progress;   /* may be NULL */
    void *progress_data;
} cn_eval_opts;

/* What a finished run hands back (free with cn_eval_summary_free). */
typedef struct cn_eval_summary {
    json_object *metrics;       /* as written to OUT/metrics.json */
    char *table;                /* the Acc@k table of the run and the references */
    size_t instances;           /* selected */
    size_t ran;                 /* run now (not resumed) */
    size_t failed;              /* selected instances whose row is an error row */
} cn_eval_summary;

/* Runs the instances that have no good row in OUT/predictions.jsonl yet,
 * one child process each (at most `jobs` at a time, each killed after
 * `timeout_s`), appending one row per instance as it finishes (fsync'd):
 * the prediction, "elapsed_s" and, for a failure, "error" with empty
 * lists.  A failed instance is a row, never a failed run; it is retried by
 * the next run.  Then scores the rows (and each reference) on the selected
 * instances and writes metrics.json, report.md and acc_at_k.svg.
 *
 * What decides the predictions (policy, model, indexes, signals switched
 * off) is kept in OUT/settings.json; continuing a run with other settings
 * is refused (CN_EINVAL), so one predictions.jsonl never mixes two.
 *
 * Errors name the file and line or the instance: a bad dataset or
 * reference, an unknown --instances id, an unwritable OUT.  SIGINT or
 * SIGTERM during the run stops the children and returns CN_ECANCELED
 * with the rows written so far kept (running the same command again
 * continues). */
int cn_eval_run(const cn_eval_opts *o, cn_eval_summary *out);
void cn_eval_summary_free(cn_eval_summary *s);

#endif /* CN_EVAL_RUN_H */
