/* SPDX-License-Identifier: Apache-2.0 */
/* Where codenib looks for plugin packages of one kind ("skills",
 * "plugins"): the build tree (when running from it), an environment
 * variable's directories, the installed directory (and the same place
 * relative to a moved installation), and the per-user directory. */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <string.h>
#include <unistd.h>

#include "cn_search_path.h"

#ifndef CN_PKGLIBDIR
#define CN_PKGLIBDIR "/usr/local/lib/codenib"
#endif
#ifndef CN_ABS_BUILDDIR
#define CN_ABS_BUILDDIR ""
#endif
#ifndef CN_BINDIR
#define CN_BINDIR "/usr/local/bin"
#endif

static bool exe_path(char *buf, size_t size)
{
    ssize_t len = readlink("/proc/self/exe", buf, size - 1);
    if (len <= 0) return false;
    buf[len] = '\0';
    return true;
}

/* True when the running executable lives in this source tree's build
 * directory: then the freshly built skills come first. */
static bool running_from_build_tree(void)
{
    char exe[4096];
    size_t n = strlen(CN_ABS_BUILDDIR);

    if (n == 0 || !exe_path(exe, sizeof exe)) return false;
    return strncmp(exe, CN_ABS_BUILDDIR, n) == 0 && exe[n] == '/';
}

/* An installed tree that was moved (or staged with DESTDIR) keeps its
 * layout: when the executable is not in the configured bindir, look for the
 * skills at the same place relative to it.  Returns NULL when not
 * applicable. */
static char *relocated_dir(const char *kind)
{
    char exe[4096];
    const char *bindir = CN_BINDIR, *pkglibdir = CN_PKGLIBDIR;
    const char *bin_slash = strrchr(bindir, '/');
    char *slash;
    size_t plen;

    if (!exe_path(exe, sizeof exe) || bin_slash == NULL) return NULL;
    slash = strrchr(exe, '/');
    if (slash == NULL) return NULL;
    *slash = '\0';                      /* exe is now the executable's directory */
    if (strcmp(exe, bindir) == 0) return NULL;
    plen = (size_t)(bin_slash - bindir);   /* the prefix both share */
    if (strncmp(pkglibdir, bindir, plen) != 0 || pkglibdir[plen] != '/') return NULL;
    slash = strrchr(exe, '/');
    if (slash == NULL) return NULL;
    *slash = '\0';                      /* the relocated prefix */
    {
        cn_buf b = CN_BUF_INIT;
        cn_buf_printf(&b, "%s%s/%s", exe, pkglibdir + plen, kind);
        return cn_buf_steal(&b);
    }
}

/* A variable set to anything but "" or "0" */
static bool env_on(const char *name)
{
    const char *v = getenv(name);
    return v != NULL && *v != '\0' && strcmp(v, "0") != 0;
}

int cn_search_path(const char *kind, const char *env_var, cn_strv *dirs, cn_strv *labels)
{
    const char *env = getenv(env_var);
    const char *home = getenv("CODENIB_HOME");
    bool in_build_tree = running_from_build_tree();
    int rc = 0;

    if (in_build_tree) {
        cn_buf b = CN_BUF_INIT;
        char *p;
        cn_buf_printf(&b, "%s/_%s", CN_ABS_BUILDDIR, kind);
        p = cn_buf_steal(&b);
        if ((rc = cn_strv_push_owned(dirs, p)) < 0 || (rc = cn_strv_push(labels, "build tree")) < 0)
            return rc;
    }
    if (env && *env) {
        cn_strv parts = CN_STRV_INIT;
        if ((rc = cn_strv_split(&parts, env, ':')) < 0) return rc;
        for (size_t i = 0; i < parts.len && rc == 0; i++) {
            rc = cn_strv_push(dirs, parts.items[i]);
            if (rc == 0) rc = cn_strv_push(labels, env_var);
        }
        cn_strv_free(&parts);
        if (rc < 0) return rc;
    }
    /* CODENIB_IGNORE_SYSTEM_DIRS: a test suite (or a user) that must not
     * see what is installed in the configured prefix -- another build of
     * codenib, a distribution's packages -- leaves the installed
     * directories out */
    if (!env_on("CODENIB_IGNORE_SYSTEM_DIRS")) {
        char *p = cn_path_join(CN_PKGLIBDIR, kind);
        char *moved = in_build_tree ? NULL : relocated_dir(kind);
        if (moved != NULL && strcmp(moved, p) != 0) {
            if ((rc = cn_strv_push_owned(dirs, moved)) < 0 ||
                (rc = cn_strv_push(labels, "installed (relocated)")) < 0) {
                free(p);
                return rc;
            }
        } else {
            free(moved);
        }
        if ((rc = cn_strv_push_owned(dirs, p)) < 0 || (rc = cn_strv_push(labels, "installed")) < 0)
            return rc;
    }
    if (home && *home) {
        rc = cn_strv_push_owned(dirs, cn_path_join(home, kind));
    } else if ((home = getenv("HOME")) != NULL && *home) {
        char *base = cn_path_join(home, ".codenib");
        rc = cn_strv_push_owned(dirs, base ? cn_path_join(base, kind) : NULL);
        free(base);
    } else {
        return 0;
    }
    if (rc == 0) rc = cn_strv_push(labels, "user");
    return rc;
}


static int name_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int cn_search_path_scan(const char *root, const char *marker, const char *source,
                        int (*add)(void *data, const char *dir, const char *source), void *data)
{
    DIR *d = opendir(root);
    struct dirent *de;
    cn_strv names = CN_STRV_INIT;
    int rc = 0;

    if (d == NULL) {
        /* an absent directory on the path is normal; an unreadable one is not */
        if (errno == ENOENT || errno == ENOTDIR) return 0;
        return cn_error_set(CN_EIO, "cannot read plugin directory %s: %s", root, strerror(errno));
    }
    while ((de = readdir(d)) != NULL)
        if (de->d_name[0] != '.' && (rc = cn_strv_push(&names, de->d_name)) < 0) break;
    closedir(d);
    if (rc == 0 && names.len) qsort(names.items, names.len, sizeof *names.items, name_cmp);
    for (size_t i = 0; rc == 0 && i < names.len; i++) {
        char *dir = cn_path_join(root, names.items[i]);
        char *cfg = dir ? cn_path_join(dir, marker) : NULL;
        struct stat st;
        if (dir == NULL || cfg == NULL) rc = cn_error_set(CN_ENOMEM, "out of memory");
        else if (stat(cfg, &st) == 0) rc = add(data, dir, source);
        if (rc > 0) rc = 0;
        free(cfg);
        free(dir);
    }
    cn_strv_free(&names);
    return rc;
}

int cn_search_path_scan_plugins(int (*add)(void *data, const char *dir, const char *source), void *data)
{
    cn_strv dirs = CN_STRV_INIT, labels = CN_STRV_INIT;
    int rc = cn_search_path("plugins", "CODENIB_PLUGINS_PATH", &dirs, &labels);
    for (size_t i = 0; rc == 0 && i < dirs.len; i++)
        rc = cn_search_path_scan(dirs.items[i], "plugin.yaml", labels.items[i], add, data);
    cn_strv_free(&dirs);
    cn_strv_free(&labels);
    return rc;
}
