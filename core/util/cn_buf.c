/* SPDX-License-Identifier: Apache-2.0 */
/* Growable NUL-terminated string. */
#include "cn_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int buf_reserve(cn_buf *b, size_t extra)
{
    size_t need, cap;
    char *p;

    if (b->oom) return CN_ENOMEM;
    need = b->len + extra + 1;
    if (need <= b->cap) return 0;
    cap = b->cap ? b->cap : 64;
    while (cap < need) cap *= 2;
    p = realloc(b->data, cap);
    if (p == NULL) {
        b->oom = true;
        return cn_error_set(CN_ENOMEM, "out of memory growing a string to %zu bytes", cap);
    }
    b->data = p;
    b->cap = cap;
    return 0;
}

int cn_buf_append(cn_buf *b, const char *s, size_t n)
{
    int rc = buf_reserve(b, n);
    if (rc < 0) return rc;
    if (n) memcpy(b->data + b->len, s, n);
    b->len += n;
    b->data[b->len] = '\0';
    return 0;
}

int cn_buf_puts(cn_buf *b, const char *s)
{
    return cn_buf_append(b, s, strlen(s));
}

int cn_buf_putc(cn_buf *b, char c)
{
    return cn_buf_append(b, &c, 1);
}

int cn_buf_vprintf(cn_buf *b, const char *fmt, va_list ap)
{
    va_list ap2;
    int n, rc;

    va_copy(ap2, ap);
    n = vsnprintf(NULL, 0, fmt, ap2);
    va_end(ap2);
    if (n < 0) return cn_error_set(CN_EINVAL, "invalid format string '%s'", fmt);
    rc = buf_reserve(b, (size_t)n);
    if (rc < 0) return rc;
    vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
    b->len += (size_t)n;
    return 0;
}

int cn_buf_printf(cn_buf *b, const char *fmt, ...)
{
    va_list ap;
    int rc;
    va_start(ap, fmt);
    rc = cn_buf_vprintf(b, fmt, ap);
    va_end(ap);
    return rc;
}

char *cn_buf_steal(cn_buf *b)
{
    char *s;
    if (b->oom) {
        cn_buf_free(b);
        return NULL;
    }
    if (b->data == NULL && buf_reserve(b, 0) < 0) return NULL;
    s = b->data;
    s[b->len] = '\0';
    b->data = NULL;
    b->len = b->cap = 0;
    return s;
}

void cn_buf_reset(cn_buf *b)
{
    b->len = 0;
    if (b->data) b->data[0] = '\0';
}

void cn_buf_free(cn_buf *b)
{
    free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
    b->oom = false;
}
