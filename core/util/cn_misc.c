/* SPDX-License-Identifier: Apache-2.0 */
/* Small string, path and file helpers. */
#include "cn_util.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdarg.h>
#include <sys/stat.h>
#include <unistd.h>

char *cn_strdup(const char *s)
{
    return s ? strdup(s) : NULL;
}

char *cn_strndup(const char *s, size_t n)
{
    return s ? strndup(s, n) : NULL;
}

char *cn_path_join(const char *a, const char *b)
{
    cn_buf buf = CN_BUF_INIT;
    size_t la = strlen(a);
    cn_buf_puts(&buf, a);
    if (la == 0 || a[la - 1] != '/') cn_buf_putc(&buf, '/');
    cn_buf_puts(&buf, b);
    return cn_buf_steal(&buf);
}

int cn_repo_realpath(const char *path, char **out)
{
    struct stat st;
    char *real = realpath(path, NULL);
    *out = NULL;
    if (real == NULL)
        return cn_error_set(errno == ENOMEM ? CN_ENOMEM : CN_ENOTFOUND, "repository %s: %s", path, strerror(errno));
    if (stat(real, &st) != 0 || !S_ISDIR(st.st_mode)) {
        free(real);
        return cn_error_set(CN_ENOTFOUND, "repository %s is not a directory", path);
    }
    *out = real;
    return 0;
}

bool cn_str_has_suffix(const char *s, const char *suffix)
{
    size_t ls = strlen(s), lx = strlen(suffix);
    return ls >= lx && memcmp(s + ls - lx, suffix, lx) == 0;
}

int cn_file_read(const char *path, size_t max_bytes, char **out, size_t *len)
{
    FILE *f;
    struct stat st;
    char *data;
    size_t n;
    int fd;

    *out = NULL;
    if (len) *len = 0;
    /* O_NONBLOCK: opening a FIFO (or a device) someone put in a repository
     * must not wait for a writer; only a regular file is read */
    fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) {
        int code = errno == ENOENT ? CN_ENOTFOUND : CN_EIO;
        return cn_error_set(code, "%s: cannot open: %s", path, strerror(errno));
    }
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return cn_error_set(CN_EIO, "%s: not a regular file", path);
    }
    if ((f = fdopen(fd, "rb")) == NULL) {
        int e = errno;
        close(fd);
        return cn_error_set(e == ENOMEM ? CN_ENOMEM : CN_EIO, "%s: cannot open: %s", path, strerror(e));
    }
    if (max_bytes && (unsigned long long)st.st_size > max_bytes) {
        fclose(f);
        return cn_error_set(CN_EINVAL, "%s: %lld bytes, over the limit of %zu bytes", path,
                            (long long)st.st_size, max_bytes);
    }
    data = malloc((size_t)st.st_size + 1);
    if (data == NULL) {
        fclose(f);
        return cn_error_set(CN_ENOMEM, "%s: out of memory reading %lld bytes", path,
                            (long long)st.st_size);
    }
    n = fread(data, 1, (size_t)st.st_size, f);
    if (ferror(f)) {
        int e = errno;
        fclose(f);
        free(data);
        return cn_error_set(CN_EIO, "%s: read failed: %s", path, strerror(e));
    }
    fclose(f);
    data[n] = '\0';
    *out = data;
    if (len) *len = n;
    return 0;
}

int cn_file_write_atomic(const char *path, const char *data, size_t len)
{
    cn_buf tmp = CN_BUF_INIT;
    size_t off = 0;
    int fd, rc = 0;

    cn_buf_printf(&tmp, "%s.tmp.XXXXXX", path);
    if (tmp.oom || tmp.data == NULL) {
        cn_buf_free(&tmp);
        return cn_error_set(CN_ENOMEM, "out of memory");
    }
    if ((fd = mkstemp(tmp.data)) < 0) {
        rc = cn_error_set(CN_EIO, "%s: cannot create a temporary file: %s", path, strerror(errno));
        cn_buf_free(&tmp);
        return rc;
    }
    while (rc == 0 && off < len) {
        ssize_t w = write(fd, data + off, len - off);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) rc = cn_error_set(CN_EIO, "%s: write failed: %s", tmp.data, strerror(errno));
        else off += (size_t)w;
    }
    /* mkstemp makes the file private; what is written here is meant to be read */
    if (rc == 0 && fchmod(fd, 0644) != 0)
        rc = cn_error_set(CN_EIO, "%s: chmod failed: %s", tmp.data, strerror(errno));
    if (rc == 0 && cn_fsync_defer(fd, tmp.data)) {
        fd = -1;   /* synced later, before its directory is published */
    } else if (rc == 0 && fsync(fd) != 0) {
        rc = cn_error_set(CN_EIO, "%s: fsync failed: %s", tmp.data, strerror(errno));
    }
    if (fd >= 0 && close(fd) != 0 && rc == 0) rc = cn_error_set(CN_EIO, "%s: close failed: %s", tmp.data, strerror(errno));
    if (rc == 0 && rename(tmp.data, path) != 0)
        rc = cn_error_set(CN_EIO, "%s: cannot rename into place: %s", path, strerror(errno));
    if (rc < 0) unlink(tmp.data);
    cn_buf_free(&tmp);
    return rc;
}

char *cn_strprintf(const char *fmt, ...)
{
    cn_buf b = CN_BUF_INIT;
    va_list ap;
    va_start(ap, fmt);
    cn_buf_vprintf(&b, fmt, ap);
    va_end(ap);
    if (b.oom || b.data == NULL) {
        cn_buf_free(&b);
        return b.oom ? NULL : cn_strdup("");
    }
    return cn_buf_steal(&b);
}

bool cn_is_licence_name(const char *base)
{
    static const char *const words[] = {"license", "licence", "copying"};
    static const char *const exts[] = {"", ".txt", ".md", ".rst", ".html", ".htm", ".lib", ".lesser"};
    char low[128];
    size_t n = base ? strlen(base) : 0;
    const char *dot;

    if (n == 0 || n >= sizeof low) return false;
    for (size_t i = 0; i <= n; i++) low[i] = (char)tolower((unsigned char)base[i]);
    dot = strrchr(low, '.');
    if (dot != NULL) {
        bool text = false;
        for (size_t i = 1; i < sizeof exts / sizeof exts[0] && !text; i++) text = strcmp(dot, exts[i]) == 0;
        if (!text) return false;
        low[dot - low] = '\0';
    }
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++) {
        size_t w = strlen(words[i]), m = strlen(low);
        if (strncmp(low, words[i], w) == 0 && (low[w] == '\0' || low[w] == '-' || low[w] == '_')) return true;
        if (m > w && strcmp(low + m - w, words[i]) == 0 && (low[m - w - 1] == '-' || low[m - w - 1] == '_'))
            return true;
    }
    return false;
}

int cn_mkdirs(const char *path)
{
    char *buf = cn_strdup(path);
    int rc = 0;

    if (buf == NULL) return cn_error_set(CN_ENOMEM, "out of memory");
    for (char *p = buf + 1; *p && rc == 0; p++) {
        if (*p != '/') continue;
        *p = '\0';
        if (mkdir(buf, 0755) != 0 && errno != EEXIST)
            rc = cn_error_set(CN_EIO, "cannot create %s: %s", buf, strerror(errno));
        *p = '/';
    }
    if (rc == 0 && mkdir(buf, 0755) != 0 && errno != EEXIST)
        rc = cn_error_set(CN_EIO, "cannot create %s: %s", buf, strerror(errno));
    free(buf);
    return rc;
}
