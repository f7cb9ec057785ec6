/* SPDX-License-Identifier: Apache-2.0 */
/* Repository file access confined to the repository root (cn_beneath.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../util/cn_beneath.h"
#include "../util/cn_util.h"
#include "cn_host.h"

#define FILES_DEFAULT_MAX (8u * 1024u * 1024u)

int cn_confined_read(const char *root, const char *relpath, size_t max_bytes, char **data,
                     size_t *len)
{
    char *rel = NULL;
    int rc, rootfd;

    *data = NULL;
    if (len) *len = 0;
    if (root == NULL) return cn_error_set(CN_ENOCONTEXT, "no repository root is set");
    if (relpath == NULL || *relpath == '\0') return cn_error_set(CN_EINVAL, "empty path");
    if ((rc = cn_beneath_clean(relpath, &rel)) < 0) return rc;
    if ((rootfd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0) {
        free(rel);
        return cn_error_set(CN_EIO, "repository root %s: cannot open: %s", root, strerror(errno));
    }
    /* Beneath the root's descriptor, following no link: a path string
     * checked first and opened after could be redirected in between. */
    rc = cn_read_beneath(rootfd, rel, max_bytes ? max_bytes : FILES_DEFAULT_MAX, data, len);
    close(rootfd);
    free(rel);
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
