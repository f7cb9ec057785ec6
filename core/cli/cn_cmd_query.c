/* SPDX-License-Identifier: Apache-2.0 */
/* `codenib query`: a question about a repository in, the localization
 * contract (Files / Symbols / Locations) out -- with a model, or offline. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/cn_planner.h"
#include "agent/cn_query.h"
#include "cn_cli.h"

static void query_usage(FILE *f)
{
    fputs("usage: codenib query [--repo R [--cache-dir D] | --manifest M] [--model M [--base-url URL]]\n"
          "                     [--rerank-model M [--rerank-base-url URL]]\n"
          "                     [--skills A,B,...] [--harness FILE] [--max-turns N] [--trace FILE]\n"
          "                     [--offline] [--max-files N] [--max-symbols N] [--without SIGNALS]\n"
          "                     [--index LIST]\n"
          "                     [--no-compile] [--json] [--quiet] [--] \"question\"\n"
          "\n"
          "Answers where in a repository a change belongs:\n"
          "\n"
          "    Files: path/a.py, path/b.py\n"
          "    Symbols: path/a.py:Class.method, path/b.py:helper\n"
          "    Locations: path/a.py:120-148, path/b.py:33-40\n"
          "\n"
          "followed by the evidence.  Without a model (the default) a deterministic\n"
          "planner runs the skills offline; with --model (or CODENIB_MODEL) a model\n"
          "drives them through tool calls.\n"
          "\n"
          "  --repo R          the repository (default: the current directory); it is\n"
          "                   compiled first when it has no index or a stale one\n"
          "  --cache-dir D    where R's index is kept (as given to `codenib compile`)\n"
          "  --manifest M     use the compiled index whose repo_manifest.json is M\n"
          "  --model M        chat model of an OpenAI-compatible endpoint\n"
          "  --base-url URL   the endpoint (default $CODENIB_BASE_URL, $OPENAI_BASE_URL);\n"
          "                   the key comes from $CODENIB_API_KEY or $OPENAI_API_KEY;\n"
          "                   the skills that call a chat model (llm_rerank,\n"
          "                   extract_keywords) use this one too\n"
          "  --rerank-model M model of a /rerank endpoint for crossencoder_rerank\n"
          "                   (default $CODENIB_RERANK_MODEL; without one that skill\n"
          "                   is not offered)\n"
          "  --rerank-base-url URL  its endpoint (default $CODENIB_RERANK_BASE_URL,\n"
          "                   then the chat endpoint)\n"
          "  --skills A,B     only these skills; with a model, one of them that cannot\n"
          "                   run (its index or its model is missing) is an error\n"
          "                   naming what it needs\n"
          "  --harness FILE   agent options (YAML or JSON harness spec)\n"
          "  --max-turns N    agent turns at most\n"
          "  --trace FILE     write the agent's trace and context ledger (JSON Lines)\n"
          "  --index LIST     what a compile builds (default: what the index recorded,\n"
          "                   vector backends included; bm25,graph on first use; add\n"
          "                   vector for embed-local vectors and hybrid search)\n"
          "  --offline        the offline planner even when CODENIB_MODEL is set\n"
          "  --max-files N    offline: files in the answer (default 5)\n"
          "  --max-symbols N  offline: symbols and locations in the answer (default 10)\n"
          "  --without LIST   offline: switch planner signals off, to see what each is\n"
          "                   worth: route, bm25, bm25-seeds, bm25-errors, title, hybrid,\n"
          "                   names, literals, expand, seed-bonus, paths, file-weight,\n"
          "                   short-seeds, aside, file-bm25, generated, infile, minority,\n"
          "                   vendored\n"
          "  --no-compile     fail instead of compiling a missing or stale index\n"
          "  --json           print the whole result as JSON\n"
          "  --quiet          no progress display\n"
          "\n"
          "Exit status: 0 answered, 1 failed (the reason is on standard error), 2 usage.\n",
          f);
}

static void on_progress(const char *what, size_t done, size_t total, void *data)
{
    (void)data;
    if (total > 0) fprintf(stderr, "\r\033[K%s %zu/%zu", what, done, total);
    else fprintf(stderr, "\r\033[K%s ...", what);
}

/* A third-party retrieval skill that failed was left out of the answer:
 * say so, since its author would otherwise never know. */
static void warn_role_skills(json_object *res)
{
    json_object *steps = NULL;
    json_object_object_get_ex(res, "steps", &steps);
    for (size_t i = 0; json_object_is_type(steps, json_type_array) && i < json_object_array_length(steps); i++) {
        json_object *st = json_object_array_get_idx(steps, i), *role, *status, *skill, *reason;
        if (!json_object_object_get_ex(st, "role", &role) || !json_object_object_get_ex(st, "status", &status) ||
            strcmp(json_object_get_string(status), "failed") != 0)
            continue;
        json_object_object_get_ex(st, "skill", &skill);
        json_object_object_get_ex(st, "reason", &reason);
        fprintf(stderr, "codenib query: warning: retrieval skill '%s' left out: %s\n", json_object_get_string(skill),
                json_object_get_string(reason));
    }
}

int cn_cmd_query(int argc, char **argv)
{
    cn_query_opts o;
    const char *question = NULL;
    bool json = false, quiet = false, ended = false;
    json_object *res = NULL;
    int rc;

    memset(&o, 0, sizeof o);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
        cn_cli_arg_kind kind = cn_cli_arg(a, &ended);
        if (kind == CN_CLI_END_OF_OPTIONS) {
            continue;
        } else if (kind == CN_CLI_OPERAND) {
            if (question != NULL)
                return cn_cli_usage_error("query", "one question at a time; quote it (unexpected '%s')", a);
            question = a;
        } else if (cn_cli_is_help(a)) {
            query_usage(stdout);
            return CN_EXIT_OK;
        } else if (strcmp(a, "--repo") == 0 && val) {
            o.repo = argv[++i];
        } else if (strcmp(a, "--cache-dir") == 0 && val) {
            o.cache_dir = argv[++i];
        } else if (strcmp(a, "--manifest") == 0 && val) {
            o.manifest = argv[++i];
        } else if (strcmp(a, "--model") == 0 && val) {
            o.model = argv[++i];
        } else if (strcmp(a, "--base-url") == 0 && val) {
            o.base_url = argv[++i];
        } else if (strcmp(a, "--rerank-model") == 0 && val) {
            o.rerank_model = argv[++i];
        } else if (strcmp(a, "--rerank-base-url") == 0 && val) {
            o.rerank_base_url = argv[++i];
        } else if (strcmp(a, "--skills") == 0 && val) {
            o.skills = argv[++i];
        } else if (strcmp(a, "--harness") == 0 && val) {
            o.harness = argv[++i];
        } else if (strcmp(a, "--trace") == 0 && val) {
            o.trace = argv[++i];
        } else if (strcmp(a, "--max-turns") == 0 && val) {
            char *end;
            long n = strtol(argv[++i], &end, 10);
            if (*end != '\0' || n < 1 || n > 1000)
                return cn_cli_usage_error("query", "--max-turns takes a number from 1 to 1000, not '%s'", argv[i]);
            o.max_turns = (int)n;
        } else if ((strcmp(a, "--max-files") == 0 || strcmp(a, "--max-symbols") == 0) && val) {
            char *end;
            long n = strtol(argv[++i], &end, 10);
            if (*end != '\0' || n < 1 || n > 500)
                return cn_cli_usage_error("query", "%s takes a number from 1 to 500, not '%s'", a, argv[i]);
            if (a[6] == 'f') o.max_files = (size_t)n;
            else o.max_symbols = (size_t)n;
        } else if (strcmp(a, "--index") == 0 && val) {
            o.indexes = argv[++i];
        } else if (strcmp(a, "--without") == 0 && val) {
            if (cn_planner_signals_parse(argv[++i], &o.planner_without) < 0)
                return cn_cli_usage_error("query", "--without: %s", cn_error_last()->message);
        } else if (strcmp(a, "--offline") == 0) {
            o.offline = true;
        } else if (strcmp(a, "--no-compile") == 0) {
            o.no_compile = true;
        } else if (strcmp(a, "--json") == 0) {
            json = true;
        } else if (strcmp(a, "--quiet") == 0) {
            quiet = true;
        } else {
            return cn_cli_usage_error("query", "unknown option '%s' (or it lacks its value); a question "
                                      "that starts with '-' goes after --", a);
        }
    }
    if (question == NULL) return cn_cli_usage_error("query", "what is the question? give it as the last argument");
    if (o.repo != NULL && o.manifest != NULL)
        return cn_cli_usage_error("query", "--repo and --manifest name the index twice: give one");
    if (o.repo == NULL && o.manifest == NULL) o.repo = ".";
    if (!quiet && !json && cn_cli_escapes_ok(STDERR_FILENO)) o.progress = on_progress;
    rc = cn_query_run(&o, question, &res);
    if (o.progress) fputs("\r\033[K", stderr);
    if (rc < 0) return cn_cli_fail();
    warn_role_skills(res);
    if (!quiet) { /* the run's warnings, also in --json's "warnings" */
        json_object *w = NULL;
        json_object_object_get_ex(res, "warnings", &w);
        for (size_t i = 0; w && json_object_is_type(w, json_type_array) && i < json_object_array_length(w); i++)
            fprintf(stderr, "codenib: warning: %s\n", json_object_get_string(json_object_array_get_idx(w, i)));
    }
    if (json) {
        cn_cli_print_json(res, true);
    } else {
        json_object *answer = NULL;
        json_object_object_get_ex(res, "answer", &answer);
        cn_cli_print_text(answer ? json_object_get_string(answer) : "");
    }
    json_object_put(res);
    return CN_EXIT_OK;
}
