/* SPDX-License-Identifier: Apache-2.0 */
/* cn_str_ranks and cn_rank_order: ranks agree with strcmp on inputs shaped
 * to hurt a string sort (long shared prefixes, one string a prefix of
 * another, bytes above 0x7f, runs of one byte, many repeats), interned and
 * not; the counting sort is stable. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "index/cn_strsort.h"
#include "util/cn_util.h"
#include "tap.h"

static uint64_t rng = 0x9E3779B97F4A7C15ull;

static uint32_t next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)(rng >> 11);
}

/* Every pair of strings ordered alike by rank and by strcmp, and the ranks
 * dense: 0 .. n_ranks-1 each used. */
static bool ranks_agree(char **s, size_t n, const uint32_t *rank, uint32_t nr)
{
    char *used = calloc(nr ? nr : 1, 1);
    bool good = used != NULL;
    for (size_t i = 0; good && i < n; i++) {
        if (rank[i] >= nr) good = false;
        else used[rank[i]] = 1;
    }
    for (uint32_t r = 0; good && r < nr; r++) good = used[r];
    /* sorted by rank, neighbours must be in strcmp order, equal iff same rank */
    if (good) {
        uint32_t *idx = calloc(n ? n : 1, sizeof *idx), *ord = calloc(n ? n : 1, sizeof *ord);
        good = idx != NULL && ord != NULL;
        for (size_t i = 0; good && i < n; i++) idx[i] = (uint32_t)i;
        good = good && cn_rank_order(rank, n, nr, idx, ord) == 0;
        for (size_t i = 1; good && i < n; i++) {
            int c = strcmp(s[ord[i - 1]], s[ord[i]]);
            uint32_t a = rank[ord[i - 1]], b = rank[ord[i]];
            if (c > 0 || (c == 0) != (a == b) || (c == 0 && ord[i - 1] > ord[i])) good = false;
        }
        free(idx);
        free(ord);
    }
    free(used);
    return good;
}

static void check_set(const char *what, char **s, size_t n)
{
    uint32_t *rank = malloc((n ? n : 1) * sizeof *rank), nr = 0;
    char label[200];
    snprintf(label, sizeof label, "%s (%zu strings): ranks follow strcmp", what, n);
    ok(cn_str_ranks((const char *const *)s, n, false, rank, &nr) == 0 && ranks_agree(s, n, rank, nr), label);
    free(rank);
}

/* n strings from `alphabet`, lengths up to maxlen, after a shared prefix */
static char **random_set(size_t n, const char *prefix, const char *alphabet, size_t maxlen)
{
    char **s = malloc(n * sizeof *s);
    size_t pl = strlen(prefix), al = strlen(alphabet);
    for (size_t i = 0; i < n; i++) {
        size_t len = maxlen ? next() % (maxlen + 1) : 0;
        s[i] = malloc(pl + len + 1);
        memcpy(s[i], prefix, pl);
        for (size_t k = 0; k < len; k++) s[i][pl + k] = alphabet[next() % al];
        s[i][pl + len] = '\0';
    }
    return s;
}

static void free_set(char **s, size_t n)
{
    for (size_t i = 0; i < n; i++) free(s[i]);
    free(s);
}

int main(void)
{
    char **s;

    check_set("no strings", NULL, 0);
    {
        char *one[] = {"x"};
        check_set("one string", one, 1);
    }
    {
        char *few[] = {"b", "", "a", "ab", "a", "", "abc", "b\x80", "b\x7f", "B"};
        check_set("the empty string, prefixes, high bytes, repeats", few, sizeof few / sizeof few[0]);
    }
    s = random_set(5000, "", "ab", 12);
    check_set("two letters, many repeats", s, 5000);
    free_set(s, 5000);
    s = random_set(3000, "Lib/asyncio/base_events.py:BaseEventLoop.", "abcxyz_.\xc3\xa9", 20);
    check_set("a long shared prefix", s, 3000);
    free_set(s, 3000);
    s = random_set(2000, "", "a", 400);
    check_set("one byte repeated: every string a prefix of a longer one", s, 2000);
    free_set(s, 2000);
    {
        /* already sorted and reversed: no quadratic or deep recursion */
        size_t n = 20000;
        char **t = malloc(n * sizeof *t);
        for (size_t i = 0; i < n; i++) {
            t[i] = malloc(16);
            snprintf(t[i], 16, "%08zu", i);
        }
        check_set("ascending", t, n);
        for (size_t i = 0; i < n / 2; i++) {
            char *x = t[i];
            t[i] = t[n - 1 - i];
            t[n - 1 - i] = x;
        }
        check_set("descending", t, n);
        free_set(t, n);
    }
    {
        /* not interned: pointers that repeat, and equal strings at
         * different addresses (a copy of each pool string) */
        const char *pool[] = {"get", "__init__", "len", "self.save", "self", "os.path.join", "os.path"};
        size_t n = 4000, np = sizeof pool / sizeof pool[0];
        char *copies[sizeof pool / sizeof pool[0]], **t = malloc(n * sizeof *t);
        uint32_t *rank = malloc(n * sizeof *rank), nr = 0;
        for (size_t k = 0; k < np; k++) copies[k] = cn_strdup(pool[k]);
        for (size_t i = 0; i < n; i++) {
            size_t k = next() % np;
            t[i] = next() % 2 ? copies[k] : (char *)pool[k];
        }
        ok(cn_str_ranks((const char *const *)t, n, false, rank, &nr) == 0 && nr == np &&
               ranks_agree(t, n, rank, nr), "repeated pointers and copies: equal strings, equal ranks");
        for (size_t k = 0; k < np; k++) free(copies[k]);
        free(rank);
        free(t);
    }
    {
        /* interned: one pointer per distinct string */
        const char *pool[] = {"get", "__init__", "len", "self.save", "self", "os.path.join", "os.path"};
        size_t n = 4000, np = sizeof pool / sizeof pool[0];
        char **t = malloc(n * sizeof *t);
        uint32_t *rank = malloc(n * sizeof *rank), nr = 0;
        for (size_t i = 0; i < n; i++) t[i] = (char *)pool[next() % np];
        ok(cn_str_ranks((const char *const *)t, n, true, rank, &nr) == 0 && nr == np &&
               ranks_agree(t, n, rank, nr), "interned strings: ranks follow strcmp");
        free(rank);
        free(t);
    }
    {
        /* merged ranks: old strings sorted and distinct, fresh ones any
         * (some equal to old ones, some between, before and after them) */
        const char *olds[] = {"b", "d", "d.x", "f", "self.get"};
        const char *fresh[] = {"a", "d", "e", "self.get", "zz", "e", "", "d.w"};
        const char *all[13];
        uint32_t orank[5], frank[8], nr = 0, rank[13];
        bool good = cn_str_ranks_merge(olds, 5, fresh, 8, orank, frank, &nr) == 0;
        for (int i = 0; i < 5; i++) {
            all[i] = olds[i];
            rank[i] = orank[i];
        }
        for (int j = 0; j < 8; j++) {
            all[5 + j] = fresh[j];
            rank[5 + j] = frank[j];
        }
        /* any pair: ranks ordered as strcmp orders the strings */
        for (int x = 0; good && x < 13; x++)
            for (int y = 0; good && y < 13; y++) {
                int c = strcmp(all[x], all[y]);
                good = rank[x] < nr && ((c < 0) == (rank[x] < rank[y])) && ((c == 0) == (rank[x] == rank[y]));
            }
        ok(good, "merged ranks follow strcmp across old and fresh strings, equal ones shared");
        ok(cn_str_ranks_merge(olds, 5, NULL, 0, orank, frank, &nr) == 0 && nr == 5 && orank[4] == 4,
           "merged ranks with nothing fresh are the old order");
    }
    return tap_done();
}
