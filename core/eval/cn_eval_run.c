/* SPDX-License-Identifier: Apache-2.0 */
/* The run of `codenib eval`: each selected instance in a child process
 * (materialise its commit, compile, query, convert), one row per instance
 * appended to OUT/predictions.jsonl as it finishes, then the scores and the
 * report.
 *
 * Why child processes: an instance can crash a parser, hang on a huge
 * repository or leak; a child is killed (with its process group) at the
 * time limit and its crash becomes an error row, so one bad instance never
 * costs the run.  Why one fsync'd row per instance: a run of an hour must
 * survive Ctrl-C, a reboot or a full disk, and the next run continues
 * from the rows on disk. */
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../agent/cn_planner.h"
#include "../agent/cn_query.h"
#include "../index/cn_compile.h"
#include "cn_eval_run.h"

#define DEFAULT_TIMEOUT_S 900.0
#define POLL_SLICE_NS 50000000L    /* how often running children are checked */
#define TERM_GRACE_S 1.0           /* between SIGTERM and SIGKILL when stopping */
#define ROW_MAX_BYTES (64u << 20)  /* a child's row file larger than this is broken */
/* Long enough lists for the @10 metrics, as the offline planner ranks them. */
#define QUERY_MAX_FILES 10
#define QUERY_MAX_SYMBOLS 30

/* ---- small helpers ------------------------------------------------------ */

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static bool is_dir(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0 && S_ISDIR(sb.st_mode);
}

/* mkdir -p: every missing component of `path`. */
static int make_dirs(const char *path)
{
    char *p = cn_strdup(path);
    int rc = 0;

    if (p == NULL) return cn_error_set(CN_ENOMEM, "out of memory");
    for (char *s = p + 1;; s++) {
        char c = *s;
        if (c != '/' && c != '\0') continue;
        *s = '\0';
        if (mkdir(p, 0755) != 0 && errno != EEXIST) {
            rc = cn_error_set(CN_EIO, "cannot create the directory %s: %s", p, strerror(errno));
            break;
        }
        *s = c;
        if (c == '\0') break;
    }
    if (rc == 0 && !is_dir(path)) rc = cn_error_set(CN_EIO, "%s exists and is not a directory", path);
    free(p);
    return rc;
}

/* A name usable as one path component: [A-Za-z0-9._+-], others become '_',
 * and never "", "." or "..". */
static char *safe_component(const char *s)
{
    cn_buf b = CN_BUF_INIT;

    if (s[0] == '.' || s[0] == '\0') cn_buf_putc(&b, '_');
    for (; *s; s++) {
        char c = *s;
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
                  c == '_' || c == '-' || c == '+';
        cn_buf_putc(&b, ok ? c : '_');
    }
    if (b.oom) {
        cn_buf_free(&b);
        return NULL;
    }
    return cn_buf_steal(&b);
}

/* malloc'd; NULL when out of memory */
static char *row_json(json_object *row)
{
    return cn_json_text(row, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
}

/* A row as written to predictions.jsonl back into a prediction. */
static int pred_from_row(json_object *row, cn_eval_pred *out)
{
    json_object *id = NULL;

    memset(out, 0, sizeof *out);
    if (!json_object_object_get_ex(row, "instance_id", &id) || !json_object_is_type(id, json_type_string))
        return cn_error_set(CN_EPARSE, "a row without instance_id");
    if ((out->instance_id = cn_strdup(json_object_get_string(id))) == NULL) goto oom;
    for (int l = 0; l <= CN_EVAL_LEVELS; l++) {
        json_object *list = NULL;
        cn_strv *to = l < CN_EVAL_LEVELS ? &out->found[l] : &out->locations;
        if (!json_object_object_get_ex(row, l < CN_EVAL_LEVELS ? cn_eval_level_key((cn_eval_level)l) : "found_locations",
                                       &list) ||
            !json_object_is_type(list, json_type_array))
            continue;
        for (size_t i = 0; i < json_object_array_length(list); i++) {
            json_object *v = json_object_array_get_idx(list, i);
            if (json_object_is_type(v, json_type_string) && cn_strv_push(to, json_object_get_string(v)) < 0)
                goto oom;
        }
    }
    out->failed = json_object_object_get_ex(row, "error", &id) && id != NULL;
    return 0;
oom:
    cn_eval_pred_free(out);
    return cn_error_set(CN_ENOMEM, "out of memory");
}

/* ---- SIGINT / SIGTERM ---------------------------------------------------- */

static volatile sig_atomic_t g_stop_signal;

static void on_stop_signal(int sig)
{
    g_stop_signal = sig;
}

typedef struct saved_signals {
    struct sigaction sigint, sigterm;
} saved_signals;

/* Without SA_RESTART, so that the parent's sleep ends at once. */
static void catch_stop_signals(saved_signals *saved)
{
    struct sigaction sa;

    g_stop_signal = 0;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_stop_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &saved->sigint);
    sigaction(SIGTERM, &sa, &saved->sigterm);
}

static void restore_signals(const saved_signals *saved)
{
    sigaction(SIGINT, &saved->sigint, NULL);
    sigaction(SIGTERM, &saved->sigterm, NULL);
}

/* ---- the state of a run -------------------------------------------------- */

typedef struct tree_ref {
    char *path;             /* WORK/trees/<owner>+<name>/<commit> */
    char *git_dir;          /* MIRRORS/<owner>+<name>/repo */
    size_t pending;         /* instances still to finish that need it */
    bool busy;              /* a running child is making it */
} tree_ref;

typedef struct todo_item {
    size_t inst;            /* index into the dataset */
    size_t tree;            /* index into trees, SIZE_MAX when it cannot run */
    char *why_not;          /* why it cannot run (no mirror, no commit), or NULL */
    bool started;
} todo_item;

typedef struct job {
    pid_t pid;              /* 0: a free slot */
    size_t todo;
    double started;
    bool made_tree;         /* the tree was absent at the start: this child makes it */
    bool timed_out;
} job;

typedef struct run_state {
    const cn_eval_opts *o;
    cn_eval_dataset d;
    size_t *sel;            /* the selected instances (dataset indices) */
    size_t nsel;
    cn_eval_preds *refs;    /* one per o->references */
    cn_eval_preds preds;    /* every row so far, for the progress figures */
    json_object *errors;    /* instance_id -> error of its latest row */
    char *work, *pred_path, *trees_dir, *cache_dir, *rows_dir, *logs_dir;
    int fd;                 /* predictions.jsonl, appending */
    todo_item *todo;
    size_t ntodo;
    tree_ref *trees;
    size_t ntrees;
    job *jobs;
    int njobs;
    size_t done;            /* selected instances with a good row, or finished now */
    size_t ran;
    json_object *pace;      /* repo -> [seconds, instances] of this run, for the ETA */
    cn_eval_langs langs;    /* the languages whose files are indexed */
} run_state;

static void state_free(run_state *st)
{
    if (st->refs)
        for (size_t i = 0; i < st->o->n_references; i++) cn_eval_preds_free(&st->refs[i]);
    free(st->refs);
    cn_eval_preds_free(&st->preds);
    json_object_put(st->errors);
    json_object_put(st->pace);
    for (size_t i = 0; i < st->ntodo; i++) free(st->todo[i].why_not);
    free(st->todo);
    for (size_t i = 0; i < st->ntrees; i++) {
        free(st->trees[i].path);
        free(st->trees[i].git_dir);
    }
    free(st->trees);
    free(st->jobs);
    free(st->sel);
    free(st->work);
    free(st->pred_path);
    free(st->trees_dir);
    free(st->cache_dir);
    free(st->rows_dir);
    free(st->logs_dir);
    if (st->fd >= 0) close(st->fd);
    cn_eval_langs_free(&st->langs);
    cn_eval_dataset_free(&st->d);
}

/* The instances to run, in dataset order: --instances, then --limit. */
static int select_instances(run_state *st)
{
    const cn_eval_opts *o = st->o;

    st->sel = calloc(st->d.len ? st->d.len : 1, sizeof *st->sel);
    if (st->sel == NULL) return cn_error_set(CN_ENOMEM, "out of memory");
    if (o->instances)
        for (size_t k = 0; k < o->instances->len; k++) {
            bool found = false;
            for (size_t i = 0; i < st->d.len && !found; i++)
                found = strcmp(st->d.items[i].instance_id, o->instances->items[k]) == 0;
            if (!found)
                return cn_error_set(CN_ENOTFOUND, "%s: no instance '%s' in this dataset", o->dataset,
                                    o->instances->items[k]);
        }
    for (size_t i = 0; i < st->d.len; i++) {
        if (o->limit && st->nsel >= o->limit) break;
        if (o->instances && !cn_strv_contains(o->instances, st->d.items[i].instance_id)) continue;
        st->sel[st->nsel++] = i;
    }
    return 0;
}

/* A subset of the dataset that shares its instances (never freed as a
 * dataset: only `items` is ours). */
static int dataset_view(const run_state *st, bool only_with_rows, cn_eval_dataset *view)
{
    view->len = 0;
    view->items = malloc((st->nsel ? st->nsel : 1) * sizeof *view->items);
    if (view->items == NULL) return cn_error_set(CN_ENOMEM, "out of memory");
    for (size_t k = 0; k < st->nsel; k++) {
        const cn_eval_instance *in = &st->d.items[st->sel[k]];
        if (only_with_rows && cn_eval_preds_find(&st->preds, in->instance_id) == NULL) continue;
        view->items[view->len++] = *in;
    }
    return 0;
}

/* ---- predictions.jsonl: resume -------------------------------------------- */

/* An interrupted writer can leave half a row at the end: cut the file back
 * to the end of its last whole line, so that appending starts clean. */
static int cut_partial_line(const char *path)
{
    char *text = NULL;
    size_t len = 0, keep;
    int rc = cn_file_read(path, 0, &text, &len);

    if (rc < 0) return rc;
    keep = len;
    while (keep > 0 && (text[keep - 1] == '\n' || text[keep - 1] == '\r' || text[keep - 1] == ' ')) keep--;
    while (keep > 0 && text[keep - 1] != '\n') keep--;
    free(text);
    if (truncate(path, (off_t)keep) != 0)
        return cn_error_set(CN_EIO, "cannot cut the partial last line of %s: %s", path, strerror(errno));
    return 0;
}

/* Which instances' latest row is an error row (they run again). */
static int scan_errors(run_state *st)
{
    FILE *f = fopen(st->pred_path, "r");
    char *line = NULL;
    size_t cap = 0;

    if (f == NULL) return errno == ENOENT ? 0 : cn_error_set(CN_EIO, "cannot read %s: %s", st->pred_path, strerror(errno));
    while (getline(&line, &cap, f) >= 0) {
        json_object *row = json_tokener_parse(line), *id = NULL, *err = NULL;
        if (row && json_object_object_get_ex(row, "instance_id", &id) && json_object_is_type(id, json_type_string)) {
            const char *key = json_object_get_string(id);
            if (json_object_object_get_ex(row, "error", &err) && !json_object_is_type(err, json_type_null))
                json_object_object_add(st->errors, key, json_object_get(err));
            else
                json_object_object_del(st->errors, key);
        }
        json_object_put(row);
    }
    free(line);
    fclose(f);
    return 0;
}

/* A last row whole but without its newline would run into the next row
 * appended: end it. */
static int end_last_line(const char *path)
{
    int fd = open(path, O_RDWR | O_CLOEXEC), rc = 0;
    off_t size;
    char c;

    if (fd < 0) return errno == ENOENT ? 0 : cn_error_set(CN_EIO, "cannot open %s: %s", path, strerror(errno));
    size = lseek(fd, 0, SEEK_END);
    if (size > 0 && pread(fd, &c, 1, size - 1) == 1 && c != '\n' && pwrite(fd, "\n", 1, size) != 1)
        rc = cn_error_set(CN_EIO, "cannot write %s: %s", path, strerror(errno));
    close(fd);
    return rc;
}

static int load_previous_rows(run_state *st)
{
    bool truncated = false;
    int rc = cn_eval_preds_load(st->pred_path, true, &st->preds, &truncated);

    if (rc < 0) return cn_error_prefix("earlier predictions (delete the file to start over)");
    if (truncated && (rc = cut_partial_line(st->pred_path)) < 0) return rc;
    if (!st->o->score_only && (rc = end_last_line(st->pred_path)) < 0) return rc;
    return scan_errors(st);
}

static bool has_good_row(const run_state *st, const char *id)
{
    return cn_eval_preds_find(&st->preds, id) != NULL && !json_object_object_get_ex(st->errors, id, NULL);
}

/* ---- the plan: instances to run and the trees they share ------------------- */

static size_t tree_for(run_state *st, const char *git_dir, const char *path)
{
    tree_ref *grown;

    for (size_t t = 0; t < st->ntrees; t++)
        if (strcmp(st->trees[t].path, path) == 0) return t;
    grown = realloc(st->trees, (st->ntrees + 1) * sizeof *grown);
    if (grown == NULL) return SIZE_MAX;
    st->trees = grown;
    memset(&grown[st->ntrees], 0, sizeof *grown);
    grown[st->ntrees].path = cn_strdup(path);
    grown[st->ntrees].git_dir = cn_strdup(git_dir);
    if (grown[st->ntrees].path == NULL || grown[st->ntrees].git_dir == NULL) {
        free(grown[st->ntrees].path);
        free(grown[st->ntrees].git_dir);
        return SIZE_MAX;
    }
    return st->ntrees++;
}

/* Where the instance's tree comes from, or why it cannot run. */
static int plan_instance(run_state *st, todo_item *t)
{
    const cn_eval_instance *in = &st->d.items[t->inst];
    const char *slash = strchr(in->repo, '/');
    char *key = NULL, *commit = NULL, *git_dir = NULL, *path = NULL;
    int rc = 0;

    t->tree = SIZE_MAX;
    if (slash == NULL || slash == in->repo || slash[1] == '\0' || strchr(slash + 1, '/')) {
        t->why_not = cn_strprintf("repo '%s' is not owner/name", in->repo);
        return t->why_not ? 0 : cn_error_set(CN_ENOMEM, "out of memory");
    }
    if (in->base_commit == NULL || in->base_commit[0] == '\0') {
        t->why_not = cn_strprintf("no base_commit for %s", in->instance_id);
        return t->why_not ? 0 : cn_error_set(CN_ENOMEM, "out of memory");
    }
    if (in->problem_statement == NULL || in->problem_statement[0] == '\0') {
        t->why_not = cn_strprintf("no problem_statement for %s", in->instance_id);
        return t->why_not ? 0 : cn_error_set(CN_ENOMEM, "out of memory");
    }
    {
        char *owner = cn_strndup(in->repo, (size_t)(slash - in->repo));
        char *sowner = owner ? safe_component(owner) : NULL, *sname = safe_component(slash + 1);
        key = sowner && sname ? cn_strprintf("%s+%s", sowner, sname) : NULL;
        free(owner);
        free(sowner);
        free(sname);
    }
    {
        /* a tree holds the files of the languages asked for: another
         * choice is another tree */
        char *name = st->o->languages ? cn_strprintf("%s+%s", in->base_commit, st->o->languages)
                                      : cn_strdup(in->base_commit);
        commit = name ? safe_component(name) : NULL;
        free(name);
    }
    git_dir = key ? cn_strprintf("%s/%s/repo", st->o->mirrors, key) : NULL;
    path = key && commit ? cn_strprintf("%s/%s/%s", st->trees_dir, key, commit) : NULL;
    if (git_dir == NULL || path == NULL) {
        rc = cn_error_set(CN_ENOMEM, "out of memory");
    } else if (!is_dir(git_dir)) {
        t->why_not = cn_strprintf("no mirror for %s at %s", in->repo, git_dir);
        if (t->why_not == NULL) rc = cn_error_set(CN_ENOMEM, "out of memory");
    } else if ((t->tree = tree_for(st, git_dir, path)) == SIZE_MAX) {
        rc = cn_error_set(CN_ENOMEM, "out of memory");
    } else {
        st->trees[t->tree].pending++;
    }
    free(key);
    free(commit);
    free(git_dir);
    free(path);
    return rc;
}

static int plan(run_state *st)
{
    st->todo = calloc(st->nsel ? st->nsel : 1, sizeof *st->todo);
    if (st->todo == NULL) return cn_error_set(CN_ENOMEM, "out of memory");
    for (size_t k = 0; k < st->nsel; k++) {
        const char *id = st->d.items[st->sel[k]].instance_id;
        int rc;
        if (has_good_row(st, id)) {
            st->done++;
            continue;
        }
        st->todo[st->ntodo].inst = st->sel[k];
        rc = plan_instance(st, &st->todo[st->ntodo]);
        st->ntodo++;
        if (rc < 0) return rc;
    }
    return 0;
}

/* ---- the child: one instance ----------------------------------------------- */

static char *instance_file(const char *dir, const char *id, const char *suffix)
{
    char *safe = safe_component(id), *p = safe ? cn_strprintf("%s/%s%s", dir, safe, suffix) : NULL;
    free(safe);
    return p;
}

/* Tree, compile, query, convert.  *row: the prediction's row, or NULL with
 * the error set. */
static int child_query(const run_state *st, const todo_item *t, json_object **row)
{
    const cn_eval_opts *o = st->o;
    const cn_eval_instance *in = &st->d.items[t->inst];
    const tree_ref *tr = &st->trees[t->tree];
    cn_query_opts q;
    cn_eval_pred pred;
    cn_eval_tree_stats ts;
    json_object *res = NULL;
    char *cache = instance_file(st->cache_dir, in->instance_id, "");
    int rc;

    *row = NULL;
    if (cache == NULL) return cn_error_set(CN_ENOMEM, "out of memory");
    rc = cn_eval_tree_materialize(tr->git_dir, in->base_commit, &st->langs, tr->path, &ts);
    if (rc == 0 && ts.files == 0) {
        /* an empty index answers nothing: a failure with its reason, not
         * an empty prediction that would pass for a miss */
        char *names = cn_eval_langs_names(&st->langs);
        rc = cn_error_set(CN_ENOTFOUND, "no indexable file at %s: %zu files, none in a language with a backend (%s)%s",
                          in->base_commit, ts.listed, names ? names : "?",
                          ts.missing ? " or their blobs are missing from the mirror" : "");
        free(names);
    }
    if (rc == 0) {
        memset(&q, 0, sizeof q);
        q.repo = tr->path;
        q.cache_dir = cache;
        q.offline = !o->agent;
        q.indexes = o->indexes ? o->indexes : CN_EVAL_DEFAULT_INDEXES;
        q.model = o->agent ? o->model : NULL;
        q.base_url = o->agent ? o->base_url : NULL;
        q.harness = o->agent ? o->harness : NULL;
        q.max_files = QUERY_MAX_FILES;
        q.max_symbols = QUERY_MAX_SYMBOLS;
        q.planner_without = o->agent ? 0 : o->planner_without;
        rc = cn_query_run(&q, in->problem_statement, &res);
        if (rc < 0) cn_error_prefix("query");
    }
    if (rc == 0 && (rc = cn_eval_pred_from_result(in->instance_id, res, &pred)) == 0) {
        *row = cn_eval_pred_json(&pred);
        cn_eval_pred_free(&pred);
        if (*row == NULL) rc = cn_error_set(CN_ENOMEM, "out of memory");
    }
    json_object_put(res);
    free(cache);
    return rc;
}

/* The child's whole life: its row goes to ROWS/<id>.json (written with a
 * rename, so a half-written file is never read as a result). */
static void child_main(const run_state *st, const todo_item *t)
{
    const cn_eval_instance *in = &st->d.items[t->inst];
    char *row_path = instance_file(st->rows_dir, in->instance_id, ".json");
    char *log_path = instance_file(st->logs_dir, in->instance_id, ".log");
    json_object *row = NULL;
    int fd, status = 3;

    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    if ((fd = open("/dev/null", O_RDWR)) >= 0) {
        dup2(fd, 0);
        dup2(fd, 1);
        close(fd);
    }
    /* what the query says on stderr (warnings) is kept per instance */
    if (log_path && (fd = open(log_path, O_WRONLY | O_CREAT | O_TRUNC, 0644)) >= 0) {
        dup2(fd, 2);
        close(fd);
    }
    if (row_path && log_path) {
        if (child_query(st, t, &row) < 0) {
            cn_eval_pred empty;
            const cn_error *e = cn_error_last();
            fprintf(stderr, "codenib eval: %s: %s\n", in->instance_id, e->message);
            if (cn_eval_pred_empty(in->instance_id, &empty) == 0) {
                row = cn_eval_pred_json(&empty);
                cn_eval_pred_free(&empty);
                if (row)
                    json_object_object_add(row, "error",
                                           json_object_new_string(e->message[0] ? e->message
                                                                                : cn_error_code_name(e->code)));
            }
        }
        char *text = row ? row_json(row) : NULL;
        if (text && cn_file_write_atomic(row_path, text, strlen(text)) == 0) status = 0;
        free(text);
    }
    json_object_put(row);
    free(row_path);
    free(log_path);
    /* _exit: the parent's stdio buffers and atexit handlers are not ours */
    _exit(status);
}

/* ---- the parent: rows, children, progress ---------------------------------- */

static int append_row(run_state *st, json_object *row)
{
    char *text = row_json(row);
    cn_buf b = CN_BUF_INIT;
    size_t off = 0;
    int rc = 0;

    if (text) cn_buf_puts(&b, text);
    cn_buf_putc(&b, '\n');
    free(text);
    if (text == NULL || b.oom) {
        cn_buf_free(&b);
        return cn_error_set(CN_ENOMEM, "out of memory");
    }
    while (off < b.len) {
        ssize_t k = write(st->fd, b.data + off, b.len - off);
        if (k < 0 && errno == EINTR) continue;
        if (k < 0) {
            rc = cn_error_set(CN_EIO, "cannot append to %s: %s", st->pred_path, strerror(errno));
            break;
        }
        off += (size_t)k;
    }
    if (rc == 0 && fsync(st->fd) != 0) rc = cn_error_set(CN_EIO, "cannot sync %s: %s", st->pred_path, strerror(errno));
    cn_buf_free(&b);
    return rc;
}

/* Acc@5 at file level over every selected instance that has a row. */
static double file_at_5_so_far(const run_state *st)
{
    cn_eval_dataset view;
    json_object *m = NULL, *v = NULL;
    double x = -1;

    if (dataset_view(st, true, &view) < 0) return -1;
    if (view.len > 0 && cn_eval_score(&view, &st->preds, &m) == 0 && json_object_object_get_ex(m, "overall", &v) &&
        json_object_object_get_ex(v, "file", &v) && json_object_object_get_ex(v, "acc", &v) &&
        json_object_object_get_ex(v, "5", &v) && !json_object_is_type(v, json_type_null))
        x = json_object_get_double(v);
    json_object_put(m);
    free(view.items);
    return x;
}

/* Seconds an instance of `repo` took in this run on average (all
 * instances when none of that repository ran yet); < 0 when nothing ran. */
static double pace_of(const run_state *st, const char *repo)
{
    json_object *v = NULL;
    double sum = 0, n = 0;
    if (json_object_object_get_ex(st->pace, repo, &v)) {
        sum = json_object_get_double(json_object_array_get_idx(v, 0));
        n = json_object_get_double(json_object_array_get_idx(v, 1));
    } else {
        json_object_object_foreach(st->pace, k, x) {
            (void)k;
            sum += json_object_get_double(json_object_array_get_idx(x, 0));
            n += json_object_get_double(json_object_array_get_idx(x, 1));
        }
    }
    return n > 0 ? sum / n : -1;
}

static void pace_add(run_state *st, const char *repo, double elapsed)
{
    json_object *v = NULL;
    if (st->pace == NULL && (st->pace = json_object_new_object()) == NULL) return;
    if (!json_object_object_get_ex(st->pace, repo, &v)) {
        v = json_object_new_array();
        json_object_array_add(v, json_object_new_double(0));
        json_object_array_add(v, json_object_new_double(0));
        json_object_object_add(st->pace, repo, v);
    }
    json_object_array_put_idx(v, 0, json_object_new_double(json_object_get_double(json_object_array_get_idx(v, 0)) + elapsed));
    json_object_array_put_idx(v, 1, json_object_new_double(json_object_get_double(json_object_array_get_idx(v, 1)) + 1));
}

/* Time left: each instance not finished at its repository's pace (large
 * repositories take many times longer than small ones), shared by the
 * jobs. */
static double eta_of(const run_state *st)
{
    double total = 0;
    for (size_t k = 0; k < st->ntodo; k++) {
        const todo_item *t = &st->todo[k];
        bool running = false;
        double p;
        for (int j = 0; j < st->njobs; j++) running |= st->jobs[j].pid != 0 && st->jobs[j].todo == k;
        if (t->started && !running) continue;
        if ((p = pace_of(st, st->d.items[t->inst].repo)) < 0) return -1;
        total += p;
    }
    return total / (st->njobs > 0 ? st->njobs : 1);
}

/* A progress event with the run's counts filled in. */
static cn_eval_event event_of(const run_state *st, cn_eval_event_kind kind)
{
    cn_eval_event ev;
    memset(&ev, 0, sizeof ev);
    ev.kind = kind;
    ev.done = st->done;
    ev.total = st->nsel;
    return ev;
}

/* Records an instance's row: predictions.jsonl, the in-memory rows, the
 * progress; then frees what the instance no longer needs. */
static int finish(run_state *st, size_t ti, json_object *row, double elapsed)
{
    todo_item *t = &st->todo[ti];
    const cn_eval_opts *o = st->o;
    const char *id = st->d.items[t->inst].instance_id;
    json_object *err = NULL;
    cn_eval_pred pred;
    int rc;

    json_object_object_add(row, "elapsed_s", json_object_new_double((double)(long long)(elapsed * 100 + 0.5) / 100));
    if ((rc = append_row(st, row)) < 0) return rc;
    if (!json_object_object_get_ex(row, "error", &err)) err = NULL;
    if (err) json_object_object_add(st->errors, id, json_object_get(err));
    else json_object_object_del(st->errors, id);
    if ((rc = pred_from_row(row, &pred)) < 0 || (rc = cn_eval_preds_add(&st->preds, &pred)) < 0) return rc;
    st->done++;
    st->ran++;
    pace_add(st, st->d.items[t->inst].repo, elapsed);

    if (t->tree != SIZE_MAX) {
        tree_ref *tr = &st->trees[t->tree];
        char *cache = instance_file(st->cache_dir, id, ""), *log = instance_file(st->logs_dir, id, ".log");
        if (--tr->pending == 0 && !o->keep_work) cn_eval_tree_remove(tr->path);
        if (!o->keep_work && cache) cn_eval_tree_remove(cache);
        /* the log explains a failure: kept then */
        if (!o->keep_work && log && err == NULL) unlink(log);
        free(cache);
        free(log);
    }
    if (o->progress) {
        cn_eval_event ev = event_of(st, CN_EVAL_EV_INSTANCE);
        ev.instance_id = id;
        ev.elapsed_s = elapsed;
        ev.error = err ? json_object_get_string(err) : NULL;
        ev.file_at_5 = file_at_5_so_far(st);
        ev.eta_s = eta_of(st);
        o->progress(&ev, o->progress_data);
    }
    return 0;
}

/* A row for an instance that has no prediction. */
static int finish_error(run_state *st, size_t ti, const char *why, double elapsed)
{
    cn_eval_pred empty;
    json_object *row;
    int rc = cn_eval_pred_empty(st->d.items[st->todo[ti].inst].instance_id, &empty);

    if (rc < 0) return rc;
    row = cn_eval_pred_json(&empty);
    cn_eval_pred_free(&empty);
    if (row == NULL) return cn_error_set(CN_ENOMEM, "out of memory");
    json_object_object_add(row, "error", json_object_new_string(why));
    rc = finish(st, ti, row, elapsed);
    json_object_put(row);
    return rc;
}

/* The first instance not started whose tree no running child is making
 * (two children writing one tree would race); SIZE_MAX: none now. */
static size_t pick(const run_state *st)
{
    for (size_t k = 0; k < st->ntodo; k++) {
        const todo_item *t = &st->todo[k];
        if (t->started) continue;
        if (t->tree == SIZE_MAX || !st->trees[t->tree].busy) return k;
    }
    return SIZE_MAX;
}

static int start(run_state *st, size_t ti, job *j)
{
    todo_item *t = &st->todo[ti];
    tree_ref *tr = &st->trees[t->tree];
    char *row_path = instance_file(st->rows_dir, st->d.items[t->inst].instance_id, ".json");
    pid_t pid;

    if (row_path == NULL) return cn_error_set(CN_ENOMEM, "out of memory");
    unlink(row_path);
    free(row_path);
    t->started = true;
    memset(j, 0, sizeof *j);
    j->todo = ti;
    j->made_tree = !is_dir(tr->path);
    j->started = now_s();
    fflush(stdout);
    fflush(stderr);
    pid = fork();
    if (pid < 0) return cn_error_set(CN_ERR, "cannot start a process: %s", strerror(errno));
    if (pid == 0) {
        /* its own process group: a timeout stops git and everything else it started */
        setpgid(0, 0);
        close(st->fd);
        child_main(st, t);
    }
    setpgid(pid, pid);  /* also here, so the group exists before any kill() */
    j->pid = pid;
    if (j->made_tree) tr->busy = true;
    return 0;
}

/* A child stopped while writing its tree leaves the temporary sibling
 * cn_eval_tree_materialize names after the writing process: remove it. */
static void remove_partial_tree(const tree_ref *tr, pid_t pid)
{
    char *pattern = cn_strprintf("%s.tmp-%ld-*", tr->path, (long)pid);
    glob_t g;

    if (pattern && glob(pattern, GLOB_NOSORT, NULL, &g) == 0) {
        for (size_t i = 0; i < g.gl_pathc; i++) cn_eval_tree_remove(g.gl_pathv[i]);
        globfree(&g);
    }
    free(pattern);
}

/* The row of a child that ended (status from waitpid). */
static int reap(run_state *st, job *j, int status)
{
    const char *id = st->d.items[st->todo[j->todo].inst].instance_id;
    char *row_path = instance_file(st->rows_dir, id, ".json");
    char *log_path = instance_file(st->logs_dir, id, ".log");
    double elapsed = now_s() - j->started;
    json_object *row = NULL;
    char *why = NULL;
    size_t ti = j->todo;
    int rc;

    /* whatever the instance started and left behind goes with it */
    kill(-j->pid, SIGKILL);
    if (j->made_tree) st->trees[st->todo[ti].tree].busy = false;
    if (j->timed_out || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
        remove_partial_tree(&st->trees[st->todo[ti].tree], j->pid);
    j->pid = 0;
    if (row_path == NULL || log_path == NULL) {
        free(row_path);
        free(log_path);
        return cn_error_set(CN_ENOMEM, "out of memory");
    }
    if (j->timed_out) {
        why = cn_strprintf("timed out after %.0f s (stopped)", st->o->timeout_s > 0 ? st->o->timeout_s : DEFAULT_TIMEOUT_S);
    } else if (WIFSIGNALED(status)) {
        why = cn_strprintf("crashed: %s (signal %d); see %s", strsignal(WTERMSIG(status)), WTERMSIG(status), log_path);
    } else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        why = cn_strprintf("the instance's process exited with status %d; see %s",
                         WIFEXITED(status) ? WEXITSTATUS(status) : -1, log_path);
    } else {
        char *text = NULL;
        json_object *id_v = NULL;
        if (cn_file_read(row_path, ROW_MAX_BYTES, &text, NULL) == 0) row = json_tokener_parse(text);
        free(text);
        if (row == NULL || !json_object_object_get_ex(row, "instance_id", &id_v) ||
            strcmp(json_object_get_string(id_v), id) != 0) {
            json_object_put(row);
            row = NULL;
            why = cn_strprintf("the instance's process left no result; see %s", log_path);
        }
    }
    unlink(row_path);
    free(row_path);
    free(log_path);
    if (row) {
        rc = finish(st, ti, row, elapsed);
        json_object_put(row);
    } else {
        rc = why ? finish_error(st, ti, why, elapsed) : cn_error_set(CN_ENOMEM, "out of memory");
    }
    free(why);
    return rc;
}

/* Stops every running child (SIGTERM to its group, SIGKILL after a grace
 * period) and waits for them; their rows are not written. */
static void stop_children(run_state *st)
{
    double until = now_s() + TERM_GRACE_S;
    bool any = true;

    for (int i = 0; i < st->njobs; i++)
        if (st->jobs[i].pid > 0) kill(-st->jobs[i].pid, SIGTERM);
    while (any) {
        any = false;
        for (int i = 0; i < st->njobs; i++) {
            job *j = &st->jobs[i];
            int status;
            pid_t w;
            if (j->pid <= 0) continue;
            w = waitpid(j->pid, &status, WNOHANG);
            if (w == j->pid || (w < 0 && errno == ECHILD)) {
                char *row = instance_file(st->rows_dir, st->d.items[st->todo[j->todo].inst].instance_id, ".json");
                if (row) unlink(row);
                free(row);
                remove_partial_tree(&st->trees[st->todo[j->todo].tree], j->pid);
                j->pid = 0;
                continue;
            }
            any = true;
            if (now_s() > until) kill(-j->pid, SIGKILL);
        }
        if (any) {
            struct timespec ts = {0, POLL_SLICE_NS};
            nanosleep(&ts, NULL);
        }
    }
}

/* Starts, watches and reaps children until every instance has its row. */
static int run_all(run_state *st)
{
    double timeout = st->o->timeout_s > 0 ? st->o->timeout_s : DEFAULT_TIMEOUT_S;
    int running = 0, rc = 0;

    for (;;) {
        bool progressed = false;
        if (g_stop_signal) break;
        while (running < st->njobs) {
            size_t ti = pick(st);
            if (ti == SIZE_MAX) break;
            if (st->todo[ti].tree == SIZE_MAX) {
                st->todo[ti].started = true;
                if ((rc = finish_error(st, ti, st->todo[ti].why_not, 0)) < 0) return rc;
                continue;
            }
            for (int i = 0; i < st->njobs; i++)
                if (st->jobs[i].pid == 0) {
                    if ((rc = start(st, ti, &st->jobs[i])) < 0) return rc;
                    running++;
                    break;
                }
        }
        if (running == 0 && pick(st) == SIZE_MAX) break;
        for (int i = 0; i < st->njobs; i++) {
            job *j = &st->jobs[i];
            int status = 0;
            pid_t w;
            if (j->pid <= 0) continue;
            w = waitpid(j->pid, &status, WNOHANG);
            if (w == j->pid) {
                running--;
                progressed = true;
                if ((rc = reap(st, j, status)) < 0) return rc;
            } else if (!j->timed_out && now_s() - j->started > timeout) {
                j->timed_out = true;
                kill(-j->pid, SIGKILL);
            }
        }
        if (!progressed) {
            struct timespec ts = {0, POLL_SLICE_NS};
            nanosleep(&ts, NULL);
        }
    }
    return 0;
}

/* What decides the predictions of a run. */
static json_object *settings_json(const cn_eval_opts *o)
{
    json_object *j = json_object_new_object();
    char *without = o->agent ? cn_strdup("") : cn_planner_signals_string(o->planner_without);
    const char *model = o->model ? o->model : getenv("CODENIB_MODEL");
    if (j == NULL || without == NULL) {
        json_object_put(j);
        free(without);
        return NULL;
    }
    json_object_object_add(j, "policy", json_object_new_string(o->agent ? "agent" : "offline"));
    json_object_object_add(j, "model", o->agent && model ? json_object_new_string(model) : NULL);
    if (o->agent && o->harness) json_object_object_add(j, "harness", json_object_new_string(o->harness));
    json_object_object_add(j, "indexes", json_object_new_string(o->indexes ? o->indexes : CN_EVAL_DEFAULT_INDEXES));
    json_object_object_add(j, "without", json_object_new_string(without));
    /* only when chosen, so that runs made before the option continue */
    if (o->languages) json_object_object_add(j, "languages", json_object_new_string(o->languages));
    free(without);
    return j;
}

/* The settings of the rows in OUT: OUT/settings.json, or this run's when
 * there is none yet.  NULL with the error set. */
static json_object *run_settings(const cn_eval_opts *o)
{
    char *path = cn_path_join(o->out_dir, "settings.json"), *text = NULL;
    json_object *j = NULL;
    if (path == NULL) {
        cn_error_set(CN_ENOMEM, "out of memory");
    } else if (access(path, F_OK) != 0) {
        if ((j = settings_json(o)) == NULL) cn_error_set(CN_ENOMEM, "out of memory");
    } else if (cn_file_read(path, 1 << 20, &text, NULL) == 0 && cn_json_parse(text, path, &j) == 0 &&
               !json_object_is_type(j, json_type_object)) {
        json_object_put(j);
        j = NULL;
        cn_error_set(CN_EPARSE, "%s is not a JSON object: remove it to start over", path);
    }
    free(text);
    free(path);
    return j;
}

/* OUT/settings.json: written by the first run, checked by every later one
 * that would add rows. */
static int check_settings(const run_state *st)
{
    char *path = cn_path_join(st->o->out_dir, "settings.json");
    json_object *now = settings_json(st->o), *before = NULL;
    int rc = 0;

    struct stat sb;

    if (path == NULL || now == NULL) {
        rc = cn_error_set(CN_ENOMEM, "out of memory");
    } else if (access(path, F_OK) != 0 || stat(st->pred_path, &sb) != 0 || sb.st_size == 0) {
        rc = cn_json_write_file(path, now);   /* no rows yet: nothing to mix with */
    } else {
        char *text = NULL;
        if ((rc = cn_file_read(path, 1 << 20, &text, NULL)) == 0 && (rc = cn_json_parse(text, path, &before)) == 0 &&
            !json_object_equal(before, now))
            rc = cn_error_set(CN_EINVAL,
                              "%s holds rows made with other settings (%s in %s; this run: %s): give another "
                              "--out, or remove %s to start over",
                              st->o->out_dir, json_object_to_json_string_ext(before, JSON_C_TO_STRING_PLAIN), path,
                              json_object_to_json_string_ext(now, JSON_C_TO_STRING_PLAIN), st->pred_path);
        free(text);
    }
    json_object_put(before);
    json_object_put(now);
    free(path);
    return rc;
}

/* ---- scoring and the outputs -------------------------------------------------- */

static const char *row_name(const cn_eval_opts *o, char *buf, size_t size)
{
    if (!o->agent) return "codenib offline";
    snprintf(buf, size, "codenib agent (%s)", o->model ? o->model : getenv("CODENIB_MODEL") ? getenv("CODENIB_MODEL") : "model");
    return buf;
}

static int score_and_report(run_state *st, cn_eval_summary *out)
{
    const cn_eval_opts *o = st->o;
    cn_eval_dataset view = {NULL, 0};
    cn_eval_preds rows;
    json_object *metrics = NULL, *refs, *failed, *settings = NULL, *v = NULL;
    cn_eval_row *table_rows = NULL;
    char name[256], *title = NULL, *metrics_path = NULL;
    const char *base;
    int rc;

    cn_eval_preds_init(&rows);
    if ((rc = cn_eval_preds_load(st->pred_path, !o->score_only, &rows, NULL)) < 0) goto done;
    if ((rc = dataset_view(st, false, &view)) < 0) goto done;
    if ((rc = cn_eval_score(&view, &rows, &metrics)) < 0) goto done;
    if ((settings = run_settings(o)) == NULL) {
        rc = cn_error_last()->code;
        goto done;
    }
    json_object_object_get_ex(settings, "policy", &v);
    json_object_object_add(metrics, "policy", json_object_get(v));
    if (json_object_object_get_ex(settings, "model", &v) && v != NULL)
        json_object_object_add(metrics, "model", json_object_get(v));
    json_object_object_add(metrics, "settings", json_object_get(settings));
    json_object_object_add(metrics, "dataset", json_object_new_string(o->dataset));
    failed = json_object_new_array();
    for (size_t k = 0; k < st->nsel; k++) {
        const char *id = st->d.items[st->sel[k]].instance_id;
        if (json_object_object_get_ex(st->errors, id, NULL)) json_object_array_add(failed, json_object_new_string(id));
    }
    out->failed = json_object_array_length(failed);
    json_object_object_add(metrics, "failed", failed);
    refs = json_object_new_object();
    json_object_object_add(metrics, "references", refs);
    table_rows = calloc(1 + o->n_references, sizeof *table_rows);
    if (table_rows == NULL) {
        rc = cn_error_set(CN_ENOMEM, "out of memory");
        goto done;
    }
    table_rows[0].name = row_name(o, name, sizeof name);
    table_rows[0].metrics = metrics;
    for (size_t r = 0; r < o->n_references; r++) {
        json_object *m = NULL;
        if ((rc = cn_eval_score(&view, &st->refs[r], &m)) < 0) goto done;
        json_object_object_add(refs, o->references[r].name, m);
        table_rows[1 + r].name = o->references[r].name;
        table_rows[1 + r].metrics = m;
    }
    base = strrchr(o->dataset, '/');
    title = cn_strprintf("codenib eval: %s", base ? base + 1 : o->dataset);
    metrics_path = cn_path_join(o->out_dir, "metrics.json");
    if (title == NULL || metrics_path == NULL) {
        rc = cn_error_set(CN_ENOMEM, "out of memory");
        goto done;
    }
    if ((rc = cn_json_write_file(metrics_path, metrics)) < 0) goto done;
    if ((rc = cn_eval_report_write(o->out_dir, title, table_rows, 1 + o->n_references)) < 0) goto done;
    if ((out->table = cn_eval_table_text(table_rows, 1 + o->n_references)) == NULL) {
        rc = cn_error_set(CN_ENOMEM, "out of memory");
        goto done;
    }
    out->metrics = metrics;
    metrics = NULL;
done:
    json_object_put(settings);
    json_object_put(metrics);
    free(table_rows);
    free(view.items);
    free(title);
    free(metrics_path);
    cn_eval_preds_free(&rows);
    return rc;
}

/* ---- the entry point -------------------------------------------------------- */


static int open_dirs(run_state *st)
{
    const cn_eval_opts *o = st->o;
    int rc;

    st->work = o->work_dir ? cn_strdup(o->work_dir) : cn_path_join(o->out_dir, "work");
    st->pred_path = cn_path_join(o->out_dir, "predictions.jsonl");
    if (st->work == NULL || st->pred_path == NULL) return cn_error_set(CN_ENOMEM, "out of memory");
    st->trees_dir = cn_path_join(st->work, "trees");
    st->cache_dir = cn_path_join(st->work, "cache");
    st->rows_dir = cn_path_join(st->work, "rows");
    st->logs_dir = cn_path_join(st->work, "logs");
    if (!st->trees_dir || !st->cache_dir || !st->rows_dir || !st->logs_dir)
        return cn_error_set(CN_ENOMEM, "out of memory");
    if ((rc = make_dirs(o->out_dir)) < 0) return rc;
    if (o->score_only) return 0;
    if ((rc = make_dirs(st->trees_dir)) < 0 || (rc = make_dirs(st->cache_dir)) < 0 ||
        (rc = make_dirs(st->rows_dir)) < 0 || (rc = make_dirs(st->logs_dir)) < 0)
        return rc;
    return 0;
}

static int load_references(run_state *st)
{
    const cn_eval_opts *o = st->o;

    st->refs = calloc(o->n_references ? o->n_references : 1, sizeof *st->refs);
    if (st->refs == NULL) return cn_error_set(CN_ENOMEM, "out of memory");
    for (size_t r = 0; r < o->n_references; r++) {
        cn_eval_preds_init(&st->refs[r]);
        if (cn_eval_preds_load(o->references[r].path, false, &st->refs[r], NULL) < 0)
            return cn_error_prefix("reference '%s'", o->references[r].name);
    }
    return 0;
}

/* Removes the directories a run leaves empty (rmdir: never anything in use). */
static void tidy_work(const run_state *st)
{
    for (size_t t = 0; t < st->ntrees; t++) {
        char *parent = cn_strdup(st->trees[t].path), *slash = parent ? strrchr(parent, '/') : NULL;
        if (slash) {
            *slash = '\0';
            rmdir(parent);
        }
        free(parent);
    }
    rmdir(st->trees_dir);
    rmdir(st->cache_dir);
    rmdir(st->rows_dir);
    rmdir(st->logs_dir);
    if (st->o->work_dir == NULL) rmdir(st->work);
}

static int run_instances(run_state *st)
{
    const cn_eval_opts *o = st->o;
    saved_signals saved;
    int rc;

    if ((rc = plan(st)) < 0) return rc;
    if (o->progress) {
        cn_eval_event ev = event_of(st, CN_EVAL_EV_RESUME);
        ev.file_at_5 = -1;
        ev.eta_s = -1;
        o->progress(&ev, o->progress_data);
    }
    if (st->ntodo == 0) return 0;
    st->njobs = o->jobs > 0 ? o->jobs : 1;
    st->jobs = calloc((size_t)st->njobs, sizeof *st->jobs);
    if (st->jobs == NULL) return cn_error_set(CN_ENOMEM, "out of memory");
    st->fd = open(st->pred_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (st->fd < 0) return cn_error_set(CN_EIO, "cannot write %s: %s", st->pred_path, strerror(errno));
    catch_stop_signals(&saved);
    rc = run_all(st);
    if (rc < 0 || g_stop_signal) stop_children(st);
    restore_signals(&saved);
    if (rc == 0 && g_stop_signal)
        rc = cn_error_set(CN_ECANCELED,
                          "interrupted (%s): %zu of %zu instances have their row in %s; run the same command "
                          "again to continue",
                          strsignal(g_stop_signal), st->done, st->nsel, st->pred_path);
    return rc;
}

int cn_eval_run(const cn_eval_opts *o, cn_eval_summary *out)
{
    run_state st;
    int rc;

    memset(out, 0, sizeof *out);
    memset(&st, 0, sizeof st);
    st.o = o;
    st.fd = -1;
    cn_eval_preds_init(&st.preds);
    if (o->dataset == NULL || o->out_dir == NULL || (!o->score_only && o->mirrors == NULL))
        return cn_error_set(CN_EINVAL, "cn_eval_run: a dataset, an output directory and the mirrors are needed");
    if ((st.errors = json_object_new_object()) == NULL) return cn_error_set(CN_ENOMEM, "out of memory");
    if ((rc = cn_eval_dataset_load(o->dataset, &st.d)) < 0) goto done;
    if ((rc = select_instances(&st)) < 0 || (rc = load_references(&st)) < 0 || (rc = open_dirs(&st)) < 0) goto done;
    if (o->score_only && access(st.pred_path, F_OK) != 0) {
        rc = cn_error_set(CN_ENOTFOUND, "%s: no predictions yet: run without --score-only first", st.pred_path);
        goto done;
    }
    if (!o->score_only && (rc = cn_eval_langs_load(o->languages, &st.langs)) < 0) goto done;
    if ((rc = load_previous_rows(&st)) < 0) goto done;
    if (!o->score_only && (rc = check_settings(&st)) < 0) goto done;
    if (!o->score_only) {
        rc = run_instances(&st);
        if (!o->keep_work) tidy_work(&st);
        if (rc < 0) goto done;
    }
    out->instances = st.nsel;
    out->ran = st.ran;
    rc = score_and_report(&st, out);
done:
    state_free(&st);
    if (rc < 0) cn_eval_summary_free(out);
    return rc;
}

void cn_eval_summary_free(cn_eval_summary *s)
{
    json_object_put(s->metrics);
    free(s->table);
    s->metrics = NULL;
    s->table = NULL;
}
