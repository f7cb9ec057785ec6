/* SPDX-License-Identifier: Apache-2.0 */
/* Diagnostics on stderr, filtered by a threshold. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <strings.h>

#include "../plugin/cn_host.h"

static int log_level = -1;

static int level_from_env(void)
{
    const char *s = getenv("CODENIB_LOG");
    if (s == NULL || *s == '\0') return CN_LOG_WARNING;
    if (strcasecmp(s, "debug") == 0) return CN_LOG_DEBUG;
    if (strcasecmp(s, "info") == 0) return CN_LOG_INFO;
    if (strcasecmp(s, "error") == 0) return CN_LOG_ERROR;
    return CN_LOG_WARNING;
}

void cn_log_set_level(int level)
{
    log_level = level;
}

int cn_log_get_level(void)
{
    if (log_level < 0) log_level = level_from_env();
    return log_level;
}

static const char *level_name(int level)
{
    if (level >= CN_LOG_ERROR) return "error";
    if (level >= CN_LOG_WARNING) return "warning";
    if (level >= CN_LOG_INFO) return "info";
    return "debug";
}

void cn_logv(int level, const char *who, const char *fmt, va_list ap)
{
    if (level < cn_log_get_level()) return;
    fprintf(stderr, "codenib: %s%s%s%s: ", who ? "[" : "", who ? who : "", who ? "] " : "",
            level_name(level));
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
}

void cn_log(int level, const char *who, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    cn_logv(level, who, fmt, ap);
    va_end(ap);
}
