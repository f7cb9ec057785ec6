/* Small string, path and file helpers. */
#include "cn_util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

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

    *out = NULL;
    if (len) *len = 0;
    f = fopen(path, "rb");
    if (f == NULL) {
        int code = errno == ENOENT ? CN_ENOTFOUND : CN_EIO;
        return cn_error_set(code, "%s: cannot open: %s", path, strerror(errno));
    }
    if (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode)) {
        fclose(f);
        return cn_error_set(CN_EIO, "%s: not a regular file", path);
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
