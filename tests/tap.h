/* SPDX-License-Identifier: Apache-2.0 */
/* Minimal TAP producer for codenib's C tests (automake tap-driver.sh reads
 * it).  Each check prints "ok N - what" or "not ok N - what" with the
 * location and the values compared, so a failure says what and where. */
#ifndef CN_TEST_TAP_H
#define CN_TEST_TAP_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int tap_count_ = 0;
static int tap_failed_ = 0;

static inline int tap_ok_(int cond, const char *file, int line, const char *what)
{
    tap_count_++;
    printf("%sok %d - %s\n", cond ? "" : "not ", tap_count_, what);
    if (!cond) {
        tap_failed_++;
        printf("#   failed at %s:%d\n", file, line);
    }
    fflush(stdout);
    return cond;
}

static inline int tap_streq_(const char *got, const char *want, const char *file,
                             int line, const char *what)
{
    int cond = (got == NULL && want == NULL) ||
               (got != NULL && want != NULL && strcmp(got, want) == 0);
    tap_ok_(cond, file, line, what);
    if (!cond) {
        printf("#   got:  %s\n#   want: %s\n", got ? got : "(null)", want ? want : "(null)");
    }
    return cond;
}

static inline int tap_inteq_(long long got, long long want, const char *file, int line,
                             const char *what)
{
    int cond = got == want;
    tap_ok_(cond, file, line, what);
    if (!cond) printf("#   got:  %lld\n#   want: %lld\n", got, want);
    return cond;
}

static inline int tap_contains_(const char *hay, const char *needle, const char *file,
                                int line, const char *what)
{
    int cond = hay != NULL && needle != NULL && strstr(hay, needle) != NULL;
    tap_ok_(cond, file, line, what);
    if (!cond)
        printf("#   text: %s\n#   lacks: %s\n", hay ? hay : "(null)", needle ? needle : "(null)");
    return cond;
}

#define ok(cond, what) tap_ok_(!!(cond), __FILE__, __LINE__, (what))
#define is_str(got, want, what) tap_streq_((got), (want), __FILE__, __LINE__, (what))
#define is_int(got, want, what) \
    tap_inteq_((long long)(got), (long long)(want), __FILE__, __LINE__, (what))
#define has_str(hay, needle, what) tap_contains_((hay), (needle), __FILE__, __LINE__, (what))
#define diag(...) (printf("# "), printf(__VA_ARGS__), printf("\n"))

/* Call last: prints the plan and returns the exit status. */
static inline int tap_done(void)
{
    printf("1..%d\n", tap_count_);
    return tap_failed_ ? 1 : 0;
}

#endif /* CN_TEST_TAP_H */
