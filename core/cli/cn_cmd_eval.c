/* SPDX-License-Identifier: Apache-2.0 */
/* `codenib eval`: localization quality on a dataset of real issues.  The
 * run itself (resume, jobs, time limits, outputs) is cn_eval_run; this file
 * reads the options and draws the progress. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/cn_planner.h"
#include "cn_cli.h"
#include "eval/cn_eval_run.h"

#define DEFAULT_OUT "codenib-eval"

static void eval_usage(FILE *f)
{
    fputs("usage: codenib eval --dataset FILE.jsonl --mirrors DIR [--policy offline|agent]\n"
          "                    [--model M] [--base-url URL] [--harness FILE] [--index LIST]\n"
          "                    [--without SIGNALS]\n"
          "                    [--languages LIST]\n"
          "                    [--jobs N] [--timeout SEC]\n"
          "                    [--out DIR] [--work DIR] [--limit N] [--instances ID,ID,...]\n"
          "                    [--reference NAME=PRED.jsonl]... [--score-only] [--keep-work]\n"
          "                    [--json] [--quiet]\n"
          "\n"
          "Measures how well codenib localizes real issues.  Each instance of the\n"
          "dataset (JSON Lines: instance_id, repo, base_commit, problem_statement,\n"
          "gt_file_changes, as in SWE-bench / LocAgent) is checked out from a bare\n"
          "mirror (the source files of every language with a backend, tests and\n"
          "docs left out), compiled and queried with its issue text; the ranked\n"
          "files, modules, functions and line ranges are scored with Acc@k\n"
          "(LocAgent's definition) and more.  Rows with gold_functions and\n"
          "changed_lines (the multilingual benchmark) are scored by line ranges:\n"
          "file@1/3/5/10, function@5/10, loc-hit@5, also per language.\n"
          "Outputs in the --out directory:\n"
          "\n"
          "  predictions.jsonl  one row per instance, written as it finishes\n"
          "  metrics.json       the scores: overall, per repository, per reference\n"
          "  report.md          the tables and acc_at_k.svg, the plot\n"
          "\n"
          "A run stopped at any point continues where it stopped when started again\n"
          "with the same --out; instances that failed are tried again.\n"
          "\n"
          "  --dataset FILE     the instances (JSON Lines)\n"
          "  --mirrors DIR      bare git mirrors with history: DIR/<owner>+<name>/repo\n"
          "  --policy P         offline (the deterministic planner, default) or agent\n"
          "  --model M          agent: the chat model (default $CODENIB_MODEL)\n"
          "  --base-url URL     agent: the OpenAI-compatible endpoint\n"
          "  --harness FILE     agent: options (YAML or JSON harness spec, as for query)\n"
          "  --index LIST       what each compile builds (default " CN_EVAL_DEFAULT_INDEXES ";\n"
          "                     vector is embed-local, trained on the repository itself)\n"
          "  --without LIST     offline: planner signals switched off, for ablations\n"
          "                     (see codenib query --help for their names)\n"
          "  --languages LIST   index only these languages' files (e.g. c,cpp; default:\n"
          "                     every language backend found)\n"
          "  --jobs N           instances at a time, each in its own process (default 1)\n"
          "  --timeout SEC      an instance still running after SEC seconds is stopped\n"
          "                     and counted as failed (default 900)\n"
          "  --out DIR          where the outputs go (default ./" DEFAULT_OUT ")\n"
          "  --work DIR         checkouts and indexes while running (default OUT/work)\n"
          "  --limit N          only the first N instances\n"
          "  --instances A,B    only these instances\n"
          "  --reference N=F    also score the predictions F (same row format) as N;\n"
          "                     repeatable\n"
          "  --score-only       run nothing: score predictions.jsonl as it is\n"
          "  --keep-work        keep checkouts, indexes and logs\n"
          "  --json             print metrics.json instead of the table\n"
          "  --quiet            no progress display\n"
          "\n"
          "Exit status: 0 the eval ran (failed instances are counted, not fatal),\n"
          "1 error, 2 usage, 130 interrupted (run the same command again to continue).\n",
          f);
}

typedef struct progress_view {
    bool tty;
} progress_view;

/* "2m10s", "45s", "1h02m" */
static void format_duration(double s, char *buf, size_t size)
{
    long t = (long)(s + 0.5);
    if (t >= 3600) snprintf(buf, size, "%ldh%02ldm", t / 3600, t / 60 % 60);
    else if (t >= 60) snprintf(buf, size, "%ldm%02lds", t / 60, t % 60);
    else snprintf(buf, size, "%lds", t);
}

static void on_progress(const cn_eval_event *ev, void *data)
{
    const progress_view *pv = data;
    char eta[32] = "", score[48] = "";

    if (ev->kind == CN_EVAL_EV_RESUME) {
        if (ev->done == 0) return;
        if (ev->done == ev->total)
            fprintf(stderr, "codenib eval: all %zu instances already done, nothing to run\n", ev->total);
        else
            fprintf(stderr, "codenib eval: %zu of %zu already done, continuing\n", ev->done, ev->total);
        return;
    }
    if (ev->file_at_5 >= 0) snprintf(score, sizeof score, " \xc2\xb7 file@5 %.2f so far", ev->file_at_5);
    if (ev->eta_s >= 0.5) {
        char d[24];
        format_duration(ev->eta_s, d, sizeof d);
        snprintf(eta, sizeof eta, " \xc2\xb7 ETA %s", d);
    }
    if (ev->error) {
        /* a failure stays on screen, the progress line is drawn again below it */
        fprintf(stderr, "%s[%zu/%zu] %s failed after %.1fs: %s\n", pv->tty ? "\r\033[K" : "", ev->done, ev->total,
                ev->instance_id, ev->elapsed_s, ev->error);
        if (!pv->tty) return;
    }
    if (pv->tty) {
        fprintf(stderr, "\r\033[K[%zu/%zu] %s %.1fs%s%s", ev->done, ev->total, ev->instance_id, ev->elapsed_s, score,
                eta);
        fflush(stderr);
    } else {
        fprintf(stderr, "[%zu/%zu] %s %.1fs%s%s\n", ev->done, ev->total, ev->instance_id, ev->elapsed_s, score, eta);
    }
}

static int parse_count(const char *opt, const char *s, long max, long *out)
{
    char *end;
    long n = strtol(s, &end, 10);
    if (*s == '\0' || *end != '\0' || n < 1 || n > max)
        return cn_cli_usage_error("eval", "%s takes a number from 1 to %ld, not '%s'", opt, max, s);
    *out = n;
    return 0;
}

/* NAME=FILE, appended to *refs */
static int add_reference(const char *arg, cn_eval_reference **refs, size_t *n, char **names_owner)
{
    const char *eq = strchr(arg, '=');
    cn_eval_reference *grown;
    char *name;

    if (eq == NULL || eq == arg || eq[1] == '\0')
        return cn_cli_usage_error("eval", "--reference takes NAME=PREDICTIONS.jsonl, not '%s'", arg);
    if ((name = cn_strndup(arg, (size_t)(eq - arg))) == NULL) return cn_cli_fail();
    grown = realloc(*refs, (*n + 1) * sizeof *grown);
    if (grown == NULL) {
        free(name);
        return cn_cli_fail();
    }
    *refs = grown;
    grown[*n].name = name;
    grown[*n].path = eq + 1;
    names_owner[*n] = name;
    (*n)++;
    return 0;
}

typedef struct eval_args {
    cn_eval_opts o;
    cn_strv instances;
    cn_eval_reference *refs;
    char **ref_names;
    size_t nrefs;
    const char *policy;
    bool json, quiet;
    bool ended;   /* "--" seen */
} eval_args;

static void args_free(eval_args *a)
{
    for (size_t i = 0; i < a->nrefs; i++) free(a->ref_names[i]);
    free(a->ref_names);
    free(a->refs);
    cn_strv_free(&a->instances);
}

/* Returns -1 when parsed, else the exit status to return at once. */
static int parse_args(int argc, char **argv, eval_args *a)
{
    cn_eval_opts *o = &a->o;

    if ((a->ref_names = calloc((size_t)argc, sizeof *a->ref_names)) == NULL) return cn_cli_fail();
    for (int i = 1; i < argc; i++) {
        const char *s = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
        cn_cli_arg_kind kind = cn_cli_arg(s, &a->ended);
        long n;
        if (kind == CN_CLI_END_OF_OPTIONS) {
            continue;
        } else if (kind == CN_CLI_OPERAND) {
            return cn_cli_usage_error("eval", "unexpected argument '%s'", s);
        } else if (cn_cli_is_help(s)) {
            eval_usage(stdout);
            return CN_EXIT_OK;
        } else if (strcmp(s, "--dataset") == 0 && val) {
            o->dataset = argv[++i];
        } else if (strcmp(s, "--mirrors") == 0 && val) {
            o->mirrors = argv[++i];
        } else if (strcmp(s, "--policy") == 0 && val) {
            a->policy = argv[++i];
            if (strcmp(val, "offline") != 0 && strcmp(val, "agent") != 0)
                return cn_cli_usage_error("eval", "--policy takes offline or agent, not '%s'", val);
            o->agent = strcmp(val, "agent") == 0;
        } else if (strcmp(s, "--model") == 0 && val) {
            o->model = argv[++i];
        } else if (strcmp(s, "--base-url") == 0 && val) {
            o->base_url = argv[++i];
        } else if (strcmp(s, "--harness") == 0 && val) {
            o->harness = argv[++i];
        } else if (strcmp(s, "--index") == 0 && val) {
            o->indexes = argv[++i];
        } else if (strcmp(s, "--without") == 0 && val) {
            if (cn_planner_signals_parse(argv[++i], &o->planner_without) < 0)
                return cn_cli_usage_error("eval", "--without: %s", cn_error_last()->message);
        } else if (strcmp(s, "--languages") == 0 && val) {
            cn_eval_langs langs;
            o->languages = argv[++i];
            if (cn_eval_langs_load(o->languages, &langs) < 0) {
                if (cn_error_last()->code == CN_EINVAL)
                    return cn_cli_usage_error("eval", "--languages: %s", cn_error_last()->message);
                return cn_cli_fail();
            }
            cn_eval_langs_free(&langs);
        } else if (strcmp(s, "--jobs") == 0 && val) {
            if (parse_count(s, argv[++i], 64, &n) != 0) return CN_EXIT_USAGE;
            o->jobs = (int)n;
        } else if (strcmp(s, "--timeout") == 0 && val) {
            if (parse_count(s, argv[++i], 7 * 86400, &n) != 0) return CN_EXIT_USAGE;
            o->timeout_s = (double)n;
        } else if (strcmp(s, "--limit") == 0 && val) {
            if (parse_count(s, argv[++i], 100000000, &n) != 0) return CN_EXIT_USAGE;
            o->limit = (size_t)n;
        } else if (strcmp(s, "--instances") == 0 && val) {
            if (cn_strv_split(&a->instances, argv[++i], ',') < 0) return cn_cli_fail();
            if (a->instances.len == 0) return cn_cli_usage_error("eval", "--instances names no instance");
            o->instances = &a->instances;
        } else if (strcmp(s, "--reference") == 0 && val) {
            int rc = add_reference(argv[++i], &a->refs, &a->nrefs, a->ref_names);
            if (rc != 0) return rc;
        } else if (strcmp(s, "--out") == 0 && val) {
            o->out_dir = argv[++i];
        } else if (strcmp(s, "--work") == 0 && val) {
            o->work_dir = argv[++i];
        } else if (strcmp(s, "--score-only") == 0) {
            o->score_only = true;
        } else if (strcmp(s, "--keep-work") == 0) {
            o->keep_work = true;
        } else if (strcmp(s, "--json") == 0) {
            a->json = true;
        } else if (strcmp(s, "--quiet") == 0 || strcmp(s, "-q") == 0) {
            a->quiet = true;
        } else {
            return cn_cli_usage_error("eval", "unknown option '%s' (or it lacks its value)", s);
        }
    }
    if (o->dataset == NULL) return cn_cli_usage_error("eval", "which dataset? give --dataset FILE.jsonl");
    if (o->mirrors == NULL && !o->score_only)
        return cn_cli_usage_error("eval", "where are the repositories? give --mirrors DIR (DIR/<owner>+<name>/repo)");
    if (!o->agent && (o->model || o->base_url || o->harness))
        return cn_cli_usage_error("eval", "%s is for --policy agent",
                                  o->model ? "--model" : o->base_url ? "--base-url" : "--harness");
    if (o->harness && access(o->harness, R_OK) != 0)
        return cn_cli_usage_error("eval", "--harness %s: %s", o->harness, strerror(errno));
    if (o->harness) { /* the instances run in their own processes and trees: an absolute path */
        static char abs_harness[PATH_MAX];
        if (realpath(o->harness, abs_harness) != NULL) o->harness = abs_harness;
    }
    if (o->agent && o->planner_without != 0)
        return cn_cli_usage_error("eval", "--without switches off signals of the offline planner, not the agent's");
    if (o->agent && !o->score_only && o->model == NULL && (getenv("CODENIB_MODEL") == NULL || !*getenv("CODENIB_MODEL")))
        return cn_cli_usage_error("eval", "--policy agent needs a model: give --model M or set CODENIB_MODEL");
    if (o->out_dir == NULL) o->out_dir = DEFAULT_OUT;
    o->references = a->refs;
    o->n_references = a->nrefs;
    return -1;
}

int cn_cmd_eval(int argc, char **argv)
{
    eval_args a;
    cn_eval_summary sum;
    progress_view pv;
    int rc;

    memset(&a, 0, sizeof a);
    rc = parse_args(argc, argv, &a);
    if (rc >= 0) {
        args_free(&a);
        return rc;
    }
    pv.tty = cn_cli_escapes_ok(STDERR_FILENO);
    if (!a.quiet) {
        a.o.progress = on_progress;
        a.o.progress_data = &pv;
    }
    rc = cn_eval_run(&a.o, &sum);
    if (pv.tty && !a.quiet) fputs("\r\033[K", stderr);
    args_free(&a);
    if (rc == CN_ECANCELED) {
        fprintf(stderr, "codenib eval: %s\n", cn_error_last()->message);
        return 130;
    }
    if (rc < 0) return cn_cli_fail();
    if (a.json) {
        cn_cli_print_json(sum.metrics, true);
    } else {
        fputs(sum.table, stdout);
        printf("\n%zu instances: %zu run now, %zu failed (their rows in predictions.jsonl say why).\n"
               "Report: %s/report.md\n",
               sum.instances, sum.ran, sum.failed, a.o.out_dir);
    }
    cn_eval_summary_free(&sum);
    return CN_EXIT_OK;
}
