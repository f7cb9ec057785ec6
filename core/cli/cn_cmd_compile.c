/* SPDX-License-Identifier: Apache-2.0 */
/* `codenib compile` and `codenib status`. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cn_cli.h"
#include "index/cn_compile.h"

static void compile_usage(FILE *f)
{
    fputs("usage: codenib compile REPO [--languages L,...] [--index bm25,graph,vector] [--exclude-dir D]...\n"
          "                       [--no-default-excludes] [--rebuild] [--no-wait] [--jobs N]\n"
          "                       [--embedder ID] [--embedder-config JSON] [--vector-store ID]\n"
          "                       [--vector-precision f32|f16|int8]\n"
          "                       [--cache-dir DIR] [--json] [--quiet]\n"
          "\n"
          "Compiles the repository REPO into indexes in a cache directory outside it\n"
          "($CODENIB_HOME/repositories/<name>-<hash>; without CODENIB_HOME under\n"
          "$XDG_CACHE_HOME/codenib, default ~/.cache/codenib, or ~/.codenib when an older\n"
          "codenib left indexes there; 'codenib config show' says which).  A rebuild\n"
          "re-parses only the files that changed.  The default embedder and vector store\n"
          "come from config.yaml (embedder:, vector_store:) when set.\n"
          "\n"
          "  --languages L,...     only these languages (default: every language with a backend)\n"
          "  --index I,...         indexes to build besides the nodes: bm25, graph, vector\n"
          "                        (default: those the index recorded when it was last\n"
          "                        compiled, else bm25,graph; vector embeds every node's\n"
          "                        text; --index bm25,graph drops recorded vectors)\n"
          "  --exclude-dir D       skip directories named D (a glob) or the repository path D\n"
          "                        (with a '/'); repeatable; recorded in the manifest\n"
          "  --no-default-excludes also index what is skipped by default (build outputs,\n"
          "                        node_modules, vendor, third_party, virtualenvs, ...)\n"
          "  --rebuild             parse (and embed) every file again\n"
          "  --no-wait             fail at once when another compile of REPO is running\n"
          "  --jobs N              parser threads (default: all cores)\n"
          "  --cache-dir DIR       where to keep the indexes\n"
          "  --json                print the manifest as JSON\n"
          "  --quiet               no progress display\n"
          "\n"
          "Vector index (--index ...,vector; each node's text is its source lines, the\n"
          "whole file for a file node, cut at 8000 characters):\n"
          "  --embedder ID         embedder backend (default embed-local: LSA fitted on the\n"
          "                        repository, no network; embed-openai: any OpenAI-compatible\n"
          "                        /v1/embeddings endpoint)\n"
          "  --embedder-config JSON  the embedder's options, e.g. '{\"dim\": 128}' for embed-local,\n"
          "                        '{\"base_url\": \"http://localhost:11434/v1\", \"model\": \"nomic-embed-text\",\n"
          "                        \"batch_size\": 64}' for embed-openai (its key comes from\n"
          "                        OPENAI_API_KEY or the variable named by \"api_key_env\"; keys are\n"
          "                        never written to the index)\n"
          "  --vector-store ID     vector-store backend (default vec-flat: exact search)\n"
          "  --vector-precision P  how the store keeps vectors: f32, f16 or int8\n"
          "The manifest records the embedder, store and their options (never a key): a\n"
          "later compile, and the recompiles of `query` and `mcp`, reuse them unless an\n"
          "option says otherwise (an embedder's configuration and a store's precision\n"
          "are kept only with the same embedder or store).\n"
          "A compile embeds again only the nodes whose text changed when the embedder has\n"
          "no learned state (embed-openai); embed-local is refitted on the whole repository.\n",
          f);
}

static void status_usage(FILE *f)
{
    fputs("usage: codenib status REPO [--cache-dir DIR] [--json]\n"
          "\n"
          "Says whether REPO's index is fresh, stale or damaged (a part of it missing or\n"
          "failing its checksum: named), and why.  Exit status 0 when fresh, 3 when stale,\n"
          "damaged or not compiled, 1 on error.\n",
          f);
}

typedef struct progress_state {
    bool tty;
    double started;
    double stage_started;
    int last_stage;
    double last_draw;
} progress_state;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void on_progress(cn_compile_stage stage, size_t done, size_t total, const char *note, void *data)
{
    progress_state *ps = data;
    double t = now();

    if (stage == CN_STAGE_LOCK) {
        fprintf(stderr, "codenib: waiting for another compile of this repository (%s)\n", note ? note : "");
        return;
    }
    if ((int)stage != ps->last_stage) {
        ps->last_stage = (int)stage;
        ps->stage_started = t;
        ps->last_draw = 0;
    }
    if (!ps->tty) return;
    /* redraw at most 10 times a second, and always at the end of a stage */
    if (total && done < total && t - ps->last_draw < 0.1) return;
    ps->last_draw = t;
    if (total) {
        int width = 24, fill = (int)((double)done / (double)total * width);
        double el = t - ps->stage_started, rate = el > 0 ? done / el : 0;
        double eta = rate > 0 ? (total - done) / rate : 0;
        fprintf(stderr, "\r\033[K%-16s [", cn_compile_stage_name(stage));
        for (int i = 0; i < width; i++) fputc(i < fill ? '=' : (i == fill ? '>' : ' '), stderr);
        {
            const char *unit = stage == CN_STAGE_VECTORS ? "nodes" : "files";
            fprintf(stderr, "] %zu/%zu %s  %.0f %s/s  ETA %.0fs", done, total, unit, rate, unit, eta);
        }
    } else {
        fprintf(stderr, "\r\033[K%s ...", cn_compile_stage_name(stage));
    }
    fflush(stderr);
}

static json_object *int_of(json_object *o, const char *k)
{
    json_object *v = NULL;
    json_object_object_get_ex(o, k, &v);
    return v;
}

/* A manifest left_out entry for a file that failed (the backend, or
 * reading it), as opposed to one that is not source text. */
static bool is_failure(json_object *e)
{
    const char *why = json_object_get_string(int_of(e, "reason"));
    return why != NULL && (strcmp(why, "failed") == 0 || strcmp(why, "unreadable") == 0);
}

/* The manifest's left_out list (a compile always writes one). */
static size_t left_count(json_object *left)
{
    return json_object_is_type(left, json_type_array) ? json_object_array_length(left) : 0;
}

int cn_cmd_compile(int argc, char **argv)
{
    cn_compile_opts o;
    cn_compile_result res;
    progress_state ps;
    bool json = false, quiet = false, ended = false;
    const char *vector_opt = NULL;   /* a vector option given, for the check below */
    int rc;

    memset(&o, 0, sizeof o);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *val = i + 1 < argc ? argv[i + 1] : NULL;
        cn_cli_arg_kind kind = cn_cli_arg(a, &ended);
        if (kind == CN_CLI_END_OF_OPTIONS) {
            continue;
        } else if (kind == CN_CLI_OPERAND) {
            if (o.repo != NULL) {
                cn_compile_opts_free(&o);
                return cn_cli_usage_error("compile", "unexpected argument '%s'", a);
            }
            o.repo = a;
        } else if (cn_cli_is_help(a)) {
            compile_usage(stdout);
            cn_compile_opts_free(&o);
            return CN_EXIT_OK;
        } else if (strcmp(a, "--languages") == 0 && val) {
            cn_strv_split(&o.languages, argv[++i], ',');
        } else if (strcmp(a, "--index") == 0 && val) {
            cn_strv_split(&o.indexes, argv[++i], ',');
            for (size_t k = 0; k < o.indexes.len; k++)
                if (!cn_index_name_valid(o.indexes.items[k])) {
                    int code = cn_cli_usage_error("compile", "unknown index '%s' (valid: " CN_INDEX_NAMES ")",
                                                  o.indexes.items[k]);
                    cn_compile_opts_free(&o);
                    return code;
                }
        } else if (strcmp(a, "--embedder") == 0 && val) {
            o.vectors.embedder = argv[++i];
            vector_opt = a;
        } else if (strcmp(a, "--embedder-config") == 0 && val) {
            o.vectors.embedder_config = argv[++i];
            vector_opt = a;
        } else if (strcmp(a, "--vector-store") == 0 && val) {
            o.vectors.store = argv[++i];
            vector_opt = a;
        } else if (strcmp(a, "--vector-precision") == 0 && val) {
            o.vectors.precision = argv[++i];
            vector_opt = a;
            if (strcmp(val, "f32") != 0 && strcmp(val, "f16") != 0 && strcmp(val, "int8") != 0) {
                cn_compile_opts_free(&o);
                return cn_cli_usage_error("compile", "--vector-precision takes f32, f16 or int8, not '%s'", val);
            }
        } else if (strcmp(a, "--exclude-dir") == 0 && val) {
            cn_strv_push(&o.exclude_dirs, argv[++i]);
        } else if (strcmp(a, "--cache-dir") == 0 && val) {
            o.cache_dir = argv[++i];
        } else if (strcmp(a, "--jobs") == 0 && val) {
            char *end;
            long j = strtol(argv[++i], &end, 10);
            if (*end || j < 1 || j > 64) {
                cn_compile_opts_free(&o);
                return cn_cli_usage_error("compile", "--jobs takes a number from 1 to 64, not '%s'", argv[i]);
            }
            o.threads = (int)j;
        } else if (strcmp(a, "--no-default-excludes") == 0) {
            o.no_default_excludes = true;
        } else if (strcmp(a, "--rebuild") == 0) {
            o.rebuild = true;
        } else if (strcmp(a, "--no-wait") == 0) {
            o.no_wait = true;
        } else if (strcmp(a, "--json") == 0) {
            json = true;
        } else if (strcmp(a, "--quiet") == 0 || strcmp(a, "-q") == 0) {
            quiet = true;
        } else {
            cn_compile_opts_free(&o);
            return cn_cli_usage_error("compile", "unknown option '%s' (or it lacks its value)", a);
        }
    }
    if (o.repo == NULL) {
        cn_compile_opts_free(&o);
        return cn_cli_usage_error("compile", "which repository? give its directory");
    }
    if (vector_opt && !cn_strv_contains(&o.indexes, "vector")) {
        cn_compile_opts_free(&o);
        return cn_cli_usage_error("compile", "%s configures the vector index: add --index bm25,graph,vector",
                                  vector_opt);
    }
    memset(&ps, 0, sizeof ps);
    ps.tty = !quiet && !json && cn_cli_escapes_ok(2);
    ps.started = now();
    ps.last_stage = -1;
    o.progress = on_progress;
    o.progress_data = &ps;
    rc = cn_compile(&o, &res);
    if (ps.tty) fprintf(stderr, "\r\033[K");
    cn_compile_opts_free(&o);
    if (rc < 0) return cn_cli_fail();
    if (json) {
        json_object *out = json_object_new_object();
        json_object_object_add(out, "index_dir", json_object_new_string(res.index_dir));
        json_object_object_add(out, "seconds", json_object_new_double(res.seconds));
        json_object_object_add(out, "options_recorded", json_object_new_boolean(res.options_recorded));
        {
            static const char *const names[] = {"lock",  "walk",    "parse",  "nodes",
                                                "bm25",  "graph",   "vectors", "publish"};
            json_object *st = json_object_new_object();
            for (int s = 0; s <= CN_STAGE_PUBLISH; s++)
                json_object_object_add(st, names[s], json_object_new_double(res.stage_seconds[s]));
            json_object_object_add(out, "stage_seconds", st);
        }
        {
            json_object *u = json_object_new_object();
            json_object_object_add(u, "bm25", json_object_new_boolean(res.bm25_updated));
            json_object_object_add(u, "graph", json_object_new_boolean(res.graph_updated));
            json_object_object_add(u, "graph_patched", json_object_new_boolean(res.graph_patched));
            json_object_object_add(out, "updated_from_previous", u);
        }
        {
            json_object *f = json_object_new_array(), *left = int_of(res.manifest, "left_out");
            for (size_t i = 0; i < left_count(left); i++) {
                json_object *e = json_object_array_get_idx(left, i), *x;
                if (!is_failure(e)) continue;
                x = json_object_new_object();
                json_object_object_add(x, "path", json_object_get(int_of(e, "path")));
                json_object_object_add(x, "error", json_object_get(int_of(e, "error")));
                json_object_object_add(x, "unchanged", json_object_get(int_of(e, "unchanged")));
                json_object_array_add(f, x);
            }
            json_object_object_add(out, "failed_files", f);
        }
        json_object_object_add(out, "manifest", json_object_get(res.manifest));
        cn_cli_print_json(out, true);
        json_object_put(out);
    } else if (!quiet) {
        json_object *files = int_of(res.manifest, "files"), *langs = int_of(res.manifest, "languages");
        printf("Compiled %s in %.2f s\n", json_object_get_string(int_of(int_of(res.manifest, "repository"), "path")),
               res.seconds);
        printf("  files:  %zu parsed, %zu reused (%zu unchanged by their stamp), %lld tests", res.parse.parsed,
               res.parse.reused, res.parse.unread, (long long)json_object_get_int64(int_of(files, "tests")));
        if (res.parse.binary + res.parse.undecodable + res.walk.too_large + res.parse.failed + res.parse.unreadable)
            printf("; skipped %zu binary, %zu undecodable, %zu too large, %zu unreadable, %zu failed",
                   res.parse.binary, res.parse.undecodable, res.walk.too_large, res.parse.unreadable,
                   res.parse.failed);
        if (res.parse.left_unchanged)
            printf(" (%zu of them unchanged since the last compile, not tried again: --rebuild retries)",
                   res.parse.left_unchanged);
        if (res.walk.odd_name)
            printf("; left out %zu whose path holds a control character or invalid UTF-8", res.walk.odd_name);
        printf("\n");
        {
            json_object *left = int_of(res.manifest, "left_out");
            size_t shown = 0, failures = res.parse.failed + res.parse.unreadable;
            for (size_t i = 0; i < left_count(left) && shown < 20; i++) {
                json_object *e = json_object_array_get_idx(left, i);
                if (!is_failure(e)) continue;
                printf("  failed%s: %s: %s\n",
                       json_object_get_boolean(int_of(e, "unchanged")) ? " (last compile; unchanged since)" : "",
                       json_object_get_string(int_of(e, "path")), json_object_get_string(int_of(e, "error")));
                shown++;
            }
            if (failures > shown)
                printf("  failed: ... and %zu more (--json lists them all)\n", failures - shown);
        }
        printf("  nodes:  %u from %llu lines\n", res.n_nodes, (unsigned long long)res.parse.lines);
        {
            json_object *g = int_of(int_of(res.manifest, "indexes"), "graph");
            if (g) {
                json_object *t = int_of(g, "edge_types"), *calls = int_of(t, "calls");
                printf("  graph:  %lld edges; %lld of %lld calls resolved\n",
                       (long long)json_object_get_int64(int_of(g, "count")),
                       (long long)json_object_get_int64(int_of(calls, "resolved")),
                       (long long)json_object_get_int64(int_of(calls, "edges")));
            }
        }
        if (res.has_vectors)
            printf("  vectors: %u, %zu dimensions, by %s (%zu embedded, %zu reused)\n", res.vectors.count,
                   res.vectors.dim, res.vectors.model_id, res.vectors.embedded, res.vectors.reused);
        if (res.options_recorded)
            printf("  options: as the previous compile recorded them (%s%s; --index and the vector\n"
                   "           options override)\n",
                   res.has_vectors ? "vectors by " : "no vectors",
                   res.has_vectors ? res.vectors.builder : "");
        printf("  languages:");
        json_object_object_foreach(langs, lname, linfo)
            printf(" %s (%lld)", lname, (long long)json_object_get_int64(int_of(linfo, "files")));
        printf("\n  index:  %s\n", res.index_dir);
    }
    cn_compile_result_free(&res);
    return CN_EXIT_OK;
}

/* "left out: 1 failed (a.py), 2 undecodable" from the manifest's list. */
static void print_left_out(json_object *list)
{
    static const char *const reasons[] = {"failed", "unreadable", "undecodable", "binary"};
    size_t n = left_count(list);
    const char *sep = "  left out:";
    if (n == 0) return;
    for (size_t k = 0; k < sizeof reasons / sizeof *reasons; k++) {
        size_t count = 0;
        const char *first = NULL;
        for (size_t i = 0; i < n; i++) {
            json_object *x = json_object_array_get_idx(list, i);
            const char *why = json_object_get_string(int_of(x, "reason"));
            const char *path = json_object_get_string(int_of(x, "path"));
            if (why == NULL || path == NULL || strcmp(why, reasons[k]) != 0) continue;
            if (count++ == 0) first = path;
        }
        if (count == 0) continue;
        printf("%s %zu %s (%s%s)", sep, count, reasons[k], first, count > 1 ? ", ..." : "");
        sep = ",";
    }
    printf("; `status --json` lists them under manifest.left_out\n");
}

int cn_cmd_status(int argc, char **argv)
{
    const char *repo = NULL, *cache = NULL;
    bool json = false, ended = false;
    cn_status st;

    for (int i = 1; i < argc; i++) {
        cn_cli_arg_kind kind = cn_cli_arg(argv[i], &ended);
        if (kind == CN_CLI_END_OF_OPTIONS) {
            continue;
        } else if (kind == CN_CLI_OPERAND) {
            if (repo != NULL) return cn_cli_usage_error("status", "unexpected argument '%s'", argv[i]);
            repo = argv[i];
        } else if (cn_cli_is_help(argv[i])) {
            status_usage(stdout);
            return CN_EXIT_OK;
        } else if (strcmp(argv[i], "--cache-dir") == 0 && i + 1 < argc) {
            cache = argv[++i];
        } else if (strcmp(argv[i], "--json") == 0) {
            json = true;
        } else {
            return cn_cli_usage_error("status", "unknown option '%s'", argv[i]);
        }
    }
    if (repo == NULL) return cn_cli_usage_error("status", "which repository? give its directory");
    if (cn_status_check(repo, cache, &st) < 0) return cn_cli_fail();
    if (json) {
        json_object *o = json_object_new_object(), *r = json_object_new_array();
        for (size_t i = 0; i < st.reasons.len; i++) json_object_array_add(r, json_object_new_string(st.reasons.items[i]));
        json_object_object_add(o, "compiled", json_object_new_boolean(st.compiled));
        json_object_object_add(o, "fresh", json_object_new_boolean(st.fresh));
        json_object_object_add(o, "damaged", json_object_new_boolean(st.damaged));
        json_object_object_add(o, "damage", st.damage ? json_object_new_string(st.damage) : NULL);
        json_object_object_add(o, "reasons", r);
        json_object_object_add(o, "changed", json_object_new_int64((int64_t)st.changed));
        json_object_object_add(o, "added", json_object_new_int64((int64_t)st.added));
        json_object_object_add(o, "removed", json_object_new_int64((int64_t)st.removed));
        json_object_object_add(o, "manifest", json_object_get(st.manifest));
        if (st.has_vectors) {
            json_object *v = json_object_new_object(), *m = st.vectors;
            json_object_object_add(v, "present", json_object_new_boolean(1));
            json_object_object_add(v, "usable", json_object_new_boolean(st.vectors_usable));
            json_object_object_add(v, "embedder", json_object_get(int_of(m, "embedder")));
            json_object_object_add(v, "model", json_object_get(int_of(m, "model_id")));
            json_object_object_add(v, "dim", json_object_get(int_of(m, "dim")));
            json_object_object_add(v, "count", json_object_get(int_of(m, "count")));
            json_object_object_add(v, "store", json_object_get(int_of(m, "store")));
            json_object_object_add(o, "vectors", v);
        } else if (st.compiled) {
            json_object_object_add(o, "vectors", NULL);
        }
        cn_cli_print_json(o, true);
        json_object_put(o);
    } else {
        printf("%s: %s\n", repo, !st.compiled ? "not compiled" : st.damaged ? "damaged" : st.fresh ? "fresh" : "stale");
        for (size_t i = 0; i < st.reasons.len; i++) printf("  %s\n", st.reasons.items[i]);
        if (st.compiled && st.manifest) {
            json_object *b = int_of(st.manifest, "built_at");
            printf("  built at %s\n", json_object_get_string(b));
            print_left_out(int_of(st.manifest, "left_out"));
        }
        if (st.has_vectors && st.vectors)
            printf("  vectors: %s, %lld nodes x %lld dimensions by %s in %s%s\n",
                   json_object_get_string(int_of(st.vectors, "model_id")),
                   (long long)json_object_get_int64(int_of(st.vectors, "count")),
                   (long long)json_object_get_int64(int_of(st.vectors, "dim")),
                   json_object_get_string(int_of(st.vectors, "embedder")),
                   json_object_get_string(int_of(st.vectors, "store")),
                   st.vectors_usable ? "" : " (unusable: see above)");
        else if (st.compiled)
            printf("  vectors: none (compile with --index bm25,graph,vector to build them)\n");
    }
    {
        int code = st.compiled && st.fresh ? CN_EXIT_OK : 3;
        cn_status_free(&st);
        return code;
    }
}
