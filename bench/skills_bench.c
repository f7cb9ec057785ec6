/* SPDX-License-Identifier: Apache-2.0 */
/* Latency of one skill call, in process, for every skill that needs no
 * model endpoint.
 *
 *   skills_bench REPO CACHE_DIR QUERIES_FILE [RUNS]
 *
 * Opens the registry the way `codenib run` does (build-tree skills, REPO's
 * index from CACHE_DIR), derives a symbol for each query (the qualified
 * name of its BM25 top hit, so graph and LSP skills navigate from real
 * symbols), warms every skill once, then calls each skill RUNS times
 * (default 200) cycling through the queries, and prints p50/p99 in
 * microseconds with the ratio of each p50 to bm25_search's -- the peer
 * measured in the same run, since the machine is shared and noisy.
 * A skill whose index part is missing (no vector index, say) is reported
 * as skipped with the reason. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <json-c/json.h>

#include "plugin/cn_registry.h"
#include "util/cn_util.h"

#define MAX_QUERIES 200

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int read_queries(const char *path, cn_strv *out)
{
    char *text = NULL, *p, *save = NULL;
    size_t len;
    if (cn_file_read(path, 1u << 20, &text, &len) < 0) return -1;
    for (p = strtok_r(text, "\n", &save); p && out->len < MAX_QUERIES; p = strtok_r(NULL, "\n", &save))
        if (*p && cn_strv_push(out, p) < 0) break;
    free(text);
    return 0;
}

static char *json_str(json_object *o)
{
    char *s = cn_strdup(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
    json_object_put(o);
    return s;
}

/* The arguments of one call of `skill` for query q and symbol s. */
static char *args_for(const char *skill, const char *q, const char *s)
{
    json_object *o = json_object_new_object();
    if (strcmp(skill, "bm25_search") == 0 || strcmp(skill, "embedding_search") == 0 ||
        strcmp(skill, "hybrid_search") == 0) {
        json_object_object_add(o, "query", json_object_new_string(q));
        json_object_object_add(o, "top_k", json_object_new_int(20));
        json_object_object_add(o, "return_content", json_object_new_boolean(0));
    } else if (strcmp(skill, "code_to_query") == 0) {
        json_object_object_add(o, "code", json_object_new_string(q));
    } else if (strcmp(skill, "find_callers") == 0 || strcmp(skill, "find_callees") == 0 ||
               strcmp(skill, "lsp_definition") == 0 || strcmp(skill, "lsp_references") == 0) {
        json_object_object_add(o, "symbol", json_object_new_string(s));
    } else if (strcmp(skill, "trace") == 0) {
        json_object_object_add(o, "source", json_object_new_string(s));
    } else if (strcmp(skill, "lsp_route") == 0) {
        json_object *a = json_object_new_array();
        json_object_array_add(a, json_object_new_string(s));
        json_object_object_add(o, "symbols", a);
        json_object_object_add(o, "query", json_object_new_string(q));
    } else if (strcmp(skill, "codenib_context") == 0) {
        json_object_object_add(o, "query", json_object_new_string(q));
    }
    return json_str(o);
}

/* The qualified name of the BM25 top hit of q, or q itself. */
static char *symbol_for(cn_registry *reg, const char *q)
{
    char *args = args_for("bm25_search", q, NULL), *res = NULL, *sym = NULL;
    if (cn_registry_run(reg, "bm25_search", args, NULL, &res) == 0) {
        json_object *a = json_tokener_parse(res), *name = NULL;
        if (a && json_object_array_length(a) > 0 &&
            json_object_object_get_ex(json_object_array_get_idx(a, 0), "node_name", &name))
            sym = cn_strdup(json_object_get_string(name));
        json_object_put(a);
    }
    cn_error_clear();
    free(args);
    free(res);
    return sym ? sym : cn_strdup(q);
}

static const char *const skills[] = {
    "bm25_search", "embedding_search", "hybrid_search", "code_to_query", "find_callers",
    "find_callees", "trace", "lsp_definition", "lsp_references", "lsp_route", "codenib_context",
};

int main(int argc, char **argv)
{
    cn_registry *reg = NULL;
    cn_strv queries = CN_STRV_INIT, symbols = CN_STRV_INIT;
    int runs = argc > 4 ? atoi(argv[4]) : 200;
    double peer = 0;

    if (argc < 4 || runs < 1) {
        fprintf(stderr, "usage: skills_bench REPO CACHE_DIR QUERIES_FILE [RUNS]\n");
        return 2;
    }
    if (cn_registry_new(&reg) < 0 || cn_registry_discover(reg) < 0 ||
        cn_registry_set_repo_cache(reg, argv[1], argv[2]) < 0 || read_queries(argv[3], &queries) < 0 ||
        queries.len == 0) {
        fprintf(stderr, "skills_bench: %s\n", cn_error_last()->message[0] ? cn_error_last()->message : "no queries");
        cn_registry_free(reg);
        return 1;
    }
    for (size_t i = 0; i < queries.len; i++) cn_strv_push_owned(&symbols, symbol_for(reg, queries.items[i]));
    printf("%-18s %10s %10s %8s\n", "skill", "p50 us", "p99 us", "p50/bm25");
    for (size_t k = 0; k < sizeof skills / sizeof skills[0]; k++) {
        double *t = malloc((size_t)runs * sizeof *t);
        char *res = NULL, *args = args_for(skills[k], queries.items[0], symbols.items[0]);
        int rc = cn_registry_run(reg, skills[k], args, NULL, &res);  /* warm: load, first page faults */
        free(args);
        free(res);
        if (rc < 0 || t == NULL) {
            printf("%-18s skipped: %s\n", skills[k], cn_error_last()->message);
            cn_error_clear();
            free(t);
            continue;
        }
        for (int r = 0; r < runs; r++) {
            size_t qi = (size_t)r % queries.len;
            double t0;
            args = args_for(skills[k], queries.items[qi], symbols.items[qi]);
            t0 = now_us();
            rc = cn_registry_run(reg, skills[k], args, NULL, &res);
            t[r] = now_us() - t0;
            if (rc < 0) cn_error_clear();
            free(args);
            free(res);
            res = NULL;
        }
        qsort(t, (size_t)runs, sizeof *t, cmp_double);
        if (k == 0) peer = t[runs / 2];
        printf("%-18s %10.0f %10.0f %8.2f\n", skills[k], t[runs / 2], t[(size_t)(runs * 0.99)],
               peer > 0 ? t[runs / 2] / peer : 0.0);
        free(t);
    }
    cn_strv_free(&queries);
    cn_strv_free(&symbols);
    cn_registry_free(reg);
    return 0;
}
