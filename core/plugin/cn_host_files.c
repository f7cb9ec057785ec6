/* Repository file access confined to the repository root. */
#include <errno.h>
#include <stdio.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "../util/cn_util.h"
#include "cn_host.h"

#define FILES_DEFAULT_MAX (8u * 1024u * 1024u)

int cn_confined_path(const char *root, const char *relpath, char **out)
{
    char *joined, *real;
    size_t rl;

    *out = NULL;
    if (root == NULL) return cn_error_set(CN_ENOCONTEXT, "no repository root is set");
    if (relpath == NULL || *relpath == '\0')
        return cn_error_set(CN_EINVAL, "empty path");
    if (relpath[0] == '/')
        return cn_error_set(CN_EDENIED, "'%s': absolute paths are refused; give a path relative "
                                        "to the repository root", relpath);
    /* Refuse any ".." component outright, even one that would resolve back
     * inside the root: the rule is simple to state and to audit. */
    for (const char *p = relpath; *p;) {
        const char *e = strchr(p, '/');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        if (n == 2 && p[0] == '.' && p[1] == '.')
            return cn_error_set(CN_EDENIED, "'%s': '..' is refused; paths stay inside the "
                                            "repository", relpath);
        p += n;
        while (*p == '/') p++;
    }
    joined = cn_path_join(root, relpath);
    if (joined == NULL) return cn_error_set(CN_ENOMEM, "out of memory");
    real = realpath(joined, NULL);
    if (real == NULL) {
        int e = errno;
        free(joined);
        return cn_error_set(e == ENOENT || e == ENOTDIR ? CN_ENOTFOUND : CN_EIO, "'%s': %s",
                            relpath, strerror(e));
    }
    free(joined);
    rl = strlen(root);
    while (rl > 1 && root[rl - 1] == '/') rl--;
    if (!(strncmp(real, root, rl) == 0 && (real[rl] == '/' || real[rl] == '\0'))) {
        free(real);
        return cn_error_set(CN_EDENIED, "'%s' resolves outside the repository (a symlink leaves "
                                        "it); refused", relpath);
    }
    *out = real;
    return 0;
}

int cn_confined_read(const char *root, const char *relpath, size_t max_bytes, char **data,
                     size_t *len)
{
    char *path = NULL;
    int rc;

    *data = NULL;
    if (len) *len = 0;
    if ((rc = cn_confined_path(root, relpath, &path)) < 0) return rc;
    rc = cn_file_read(path, max_bytes ? max_bytes : FILES_DEFAULT_MAX, data, len);
    if (rc < 0) {
        /* Report the repository-relative path, not the resolved one. */
        char msg[CN_ERROR_MESSAGE_MAX];
        const char *m = cn_error_last()->message;
        const char *colon = strstr(m, ": ");
        snprintf(msg, sizeof msg, "%s", colon ? colon + 2 : m);
        cn_error_set(rc, "'%s': %s", relpath, msg);
    }
    free(path);
    return rc;
}

static const char *files_root(const cn_host *host)
{
    const cn_host_data *d = host ? host->host_data : NULL;
    return d ? d->repo_root : NULL;
}

static int files_read(const cn_host *host, const char *relpath, size_t max_bytes, char **data,
                      size_t *len, cn_error *err)
{
    const char *root = files_root(host);
    int rc;

    if (root == NULL) {
        const cn_host_data *d = host ? host->host_data : NULL;
        return cn_error_fill(err, CN_ENOCONTEXT,
                             "skill '%s' read '%s' but was given no repository (pass --repo DIR)",
                             d ? d->skill_id : "?", relpath ? relpath : "");
    }
    rc = cn_confined_read(root, relpath, max_bytes, data, len);
    if (rc < 0) cn_error_export(err);
    return rc;
}

static const cn_files_services files_services = {
    (uint32_t)sizeof(cn_files_services),
    files_root,
    files_read,
};

const cn_files_services *cn_host_files_services(void)
{
    return &files_services;
}
