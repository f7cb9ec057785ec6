/* Where codenib looks for plugin packages of one kind ("skills",
 * "plugins"): the build tree (when running from it), an environment
 * variable's directories, the installed directory (and the same place
 * relative to a moved installation), and the per-user directory. */
#include <stdlib.h>
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
    {
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

