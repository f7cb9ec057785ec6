/* SPDX-License-Identifier: Apache-2.0 */
/* Thread-local last error of the core API, and explicit error records for
 * the plugin boundary. */
#include "cn_util.h"

#include <stdio.h>
#include <string.h>

static _Thread_local cn_error last_error;

int cn_error_fillv(cn_error *err, int code, const char *fmt, va_list ap)
{
    if (err != NULL) {
        err->code = code;
        vsnprintf(err->message, sizeof err->message, fmt, ap);
    }
    return code;
}

int cn_error_fill(cn_error *err, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    cn_error_fillv(err, code, fmt, ap);
    va_end(ap);
    return code;
}

int cn_error_setv(int code, const char *fmt, va_list ap)
{
    return cn_error_fillv(&last_error, code, fmt, ap);
}

int cn_error_set(int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    cn_error_setv(code, fmt, ap);
    va_end(ap);
    return code;
}

int cn_error_prefix(const char *fmt, ...)
{
    char prefix[CN_ERROR_MESSAGE_MAX];
    char old[CN_ERROR_MESSAGE_MAX];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(prefix, sizeof prefix, fmt, ap);
    va_end(ap);
    memcpy(old, last_error.message, sizeof old);
    {
        /* Truncation is fine: the message is capped by design. */
        cn_buf b = CN_BUF_INIT;
        cn_buf_printf(&b, "%s: %s", prefix, old);
        if (b.data != NULL) {
            size_t n = b.len < sizeof last_error.message - 1 ? b.len : sizeof last_error.message - 1;
            memcpy(last_error.message, b.data, n);
            last_error.message[n] = '\0';
        }
        cn_buf_free(&b);
    }
    return last_error.code;
}

const cn_error *cn_error_last(void)
{
    return &last_error;
}

void cn_error_clear(void)
{
    last_error.code = CN_OK;
    last_error.message[0] = '\0';
}

int cn_error_export(cn_error *out)
{
    if (out != NULL) *out = last_error;
    return last_error.code;
}
