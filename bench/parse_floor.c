/* SPDX-License-Identifier: Apache-2.0 */
/* The floor under `codenib compile` for Python: libtree-sitter parsing
 * every file of a list and walking each tree once with a cursor, on one
 * thread, nothing else (no backend, no records, no indexes).  Best of 3.
 *
 *   bench/parse_floor FILE_LIST      (one path per line)
 *
 * Compare its time, halved for two cores, with the parse stage of
 * `codenib compile --json` on the same files. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <tree_sitter/api.h>

const TSLanguage *tree_sitter_python(void);

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
    FILE *list;
    char path[4096];
    char **src = NULL;
    size_t *len = NULL, n = 0, bytes = 0;
    TSParser *p;
    double best = 1e9;

    if (argc != 2 || (list = fopen(argv[1], "r")) == NULL) {
        fprintf(stderr, "usage: parse_floor FILE_LIST (one Python file per line)\n");
        return 2;
    }
    while (fgets(path, sizeof path, list)) {
        FILE *f;
        long size;
        char *b;
        path[strcspn(path, "\n")] = '\0';
        if ((f = fopen(path, "rb")) == NULL) continue;
        if (fseek(f, 0, SEEK_END) != 0 || (size = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0 ||
            (b = malloc((size_t)size + 1)) == NULL) {
            fclose(f);
            continue;
        }
        if (fread(b, 1, (size_t)size, f) == (size_t)size) {
            char **s2 = realloc(src, (n + 1) * sizeof *s2);
            size_t *l2 = realloc(len, (n + 1) * sizeof *l2);
            if (s2) src = s2;
            if (l2) len = l2;
            if (s2 && l2) {
                src[n] = b;
                len[n++] = (size_t)size;
                bytes += (size_t)size;
                b = NULL;
            }
        }
        free(b);
        fclose(f);
    }
    fclose(list);
    p = ts_parser_new();
    if (p == NULL || !ts_parser_set_language(p, tree_sitter_python())) {
        fprintf(stderr, "parse_floor: cannot set up the Python parser\n");
        return 1;
    }
    for (int run = 0; run < 3; run++) {
        double t0 = now();
        size_t nodes = 0;
        for (size_t i = 0; i < n; i++) {
            TSTree *t = ts_parser_parse_string(p, NULL, src[i], (uint32_t)len[i]);
            TSTreeCursor c;
            bool more = t != NULL;
            if (t == NULL) continue;
            c = ts_tree_cursor_new(ts_tree_root_node(t));
            while (more) {
                nodes++;
                if (ts_tree_cursor_goto_first_child(&c)) continue;
                while (!ts_tree_cursor_goto_next_sibling(&c))
                    if (!ts_tree_cursor_goto_parent(&c)) {
                        more = false;
                        break;
                    }
            }
            ts_tree_cursor_delete(&c);
            ts_tree_delete(t);
        }
        if (now() - t0 < best) best = now() - t0;
        if (run == 0) printf("%zu files, %zu bytes, %zu nodes\n", n, bytes, nodes);
    }
    printf("parse + one cursor walk, one thread: best of 3 %.3f s\n", best);
    ts_parser_delete(p);
    for (size_t i = 0; i < n; i++) free(src[i]);
    free(src);
    free(len);
    return 0;
}
