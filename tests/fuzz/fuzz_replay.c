/* SPDX-License-Identifier: Apache-2.0 */
/* The driver of a fuzz target without libFuzzer: feeds it each file named
 * on the command line (directories: each file in them, sorted), one TAP
 * test point per file.  A broken property aborts the process, which the
 * test harness reports; ASan and valgrind runs catch memory errors. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz.h"

static int n_points;

static int cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int run_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    uint8_t *buf = NULL;
    size_t len = 0, cap = 0, got;
    if (f == NULL) {
        printf("not ok %d - %s: cannot open\n", ++n_points, path);
        return 1;
    }
    do {
        if (len + 65536 > cap) {
            uint8_t *nb = realloc(buf, cap = len + 65536);
            if (nb == NULL) {
                free(buf);
                fclose(f);
                printf("not ok %d - %s: out of memory\n", ++n_points, path);
                return 1;
            }
            buf = nb;
        }
        got = fread(buf + len, 1, cap - len, f);
        len += got;
    } while (got > 0);
    fclose(f);
    fflush(stdout);
    LLVMFuzzerTestOneInput(buf, len);
    free(buf);
    printf("ok %d - %s\n", ++n_points, path);
    return 0;
}

static int run_path(const char *path)
{
    struct stat st;
    DIR *d;
    struct dirent *de;
    char **names = NULL;
    size_t n = 0, cap = 0;
    int bad = 0;

    if (stat(path, &st) != 0 || !S_ISDIR(st.st_mode)) return run_file(path);
    if ((d = opendir(path)) == NULL) {
        printf("not ok %d - %s: cannot open the directory\n", ++n_points, path);
        return 1;
    }
    while ((de = readdir(d)) != NULL) {
        size_t l;
        char *p;
        if (de->d_name[0] == '.') continue;
        l = strlen(path) + strlen(de->d_name) + 2;
        if ((p = malloc(l)) == NULL) break;
        snprintf(p, l, "%s/%s", path, de->d_name);
        if (n == cap) {
            char **nn = realloc(names, (cap = cap ? cap * 2 : 64) * sizeof *names);
            if (nn == NULL) {
                free(p);
                break;
            }
            names = nn;
        }
        names[n++] = p;
    }
    closedir(d);
    if (n) qsort(names, n, sizeof *names, cmp);
    for (size_t i = 0; i < n; i++) {
        bad |= run_path(names[i]);
        free(names[i]);
    }
    free(names);
    return bad;
}

int main(int argc, char **argv)
{
    int bad = 0;
    if (argc < 2) {
        fprintf(stderr, "usage: %s FILE|DIR...\n", argv[0]);
        return 2;
    }
    for (int i = 1; i < argc; i++) bad |= run_path(argv[i]);
    printf("1..%d\n", n_points);
    return bad;
}
