/* Discovery of skill packages on disk.  Only config.yaml and skill.md are
 * read here; shared objects are opened on first use (cn_loader.c). */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cn_registry.h"

#ifndef CN_PKGLIBDIR
#define CN_PKGLIBDIR "/usr/local/lib/codenib"
#endif
#ifndef CN_ABS_BUILDDIR
#define CN_ABS_BUILDDIR ""
#endif
#ifndef CN_BINDIR
#define CN_BINDIR "/usr/local/bin"
#endif

int cn_registry__append(cn_registry *reg, cn_skill_entry *e);

static char *base_name(const char *dir)
{
    size_t n = strlen(dir);
    const char *s;
    while (n > 1 && dir[n - 1] == '/') n--;
    s = dir + n;
    while (s > dir && s[-1] != '/') s--;
    return cn_strndup(s, (size_t)(dir + n - s));
}

int cn_registry_add_package(cn_registry *reg, const char *dir, const char *source)
{
    cn_skill_entry *e = calloc(1, sizeof *e);
    cn_skill_meta *meta = NULL;
    int rc;

    if (e == NULL) return cn_error_set(CN_ENOMEM, "out of memory");
    e->dir = cn_strdup(dir);
    e->source = cn_strdup(source ? source : "explicit");
    rc = cn_meta_load_dir(dir, &meta);
    if (rc < 0) {
        /* Keep the package listed under its directory name, with the reason. */
        e->id = base_name(dir);
        e->reason = cn_strdup(cn_error_last()->message);
        e->error_code = rc;
        e->state = CN_STATE_FAILED;
    } else {
        e->meta = meta;
        e->id = cn_strdup(meta->skill_id);
        e->state = CN_STATE_DISCOVERED;
    }
    if (e->dir == NULL || e->source == NULL || e->id == NULL) {
        cn_meta_free(e->meta);
        free(e->dir);
        free(e->source);
        free(e->id);
        free(e->reason);
        free(e);
        return cn_error_set(CN_ENOMEM, "out of memory");
    }
    rc = cn_registry__append(reg, e);
    return rc == CN_EEXISTS ? 0 : rc;
}

static int name_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int cn_registry_add_root(cn_registry *reg, const char *root, const char *source)
{
    DIR *d = opendir(root);
    struct dirent *de;
    cn_strv names = CN_STRV_INIT;
    int rc = 0;

    if (d == NULL) {
        if (errno == ENOENT || errno == ENOTDIR) return 0;
        return cn_error_set(CN_EIO, "cannot read skills directory %s: %s", root, strerror(errno));
    }
    while ((de = readdir(d)) != NULL) {
        if (de->d_name[0] == '.') continue;
        if ((rc = cn_strv_push(&names, de->d_name)) < 0) break;
    }
    closedir(d);
    if (rc == 0 && names.len) qsort(names.items, names.len, sizeof *names.items, name_cmp);
    for (size_t i = 0; rc == 0 && i < names.len; i++) {
        char *dir = cn_path_join(root, names.items[i]);
        char *cfg = dir ? cn_path_join(dir, "config.yaml") : NULL;
        struct stat st;
        if (dir == NULL || cfg == NULL) {
            rc = cn_error_set(CN_ENOMEM, "out of memory");
        } else if (stat(cfg, &st) == 0) {
            rc = cn_registry_add_package(reg, dir, source);
        }
        free(cfg);
        free(dir);
    }
    cn_strv_free(&names);
    return rc;
}

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
static char *relocated_skills_dir(void)
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
        cn_buf_printf(&b, "%s%s/skills", exe, pkglibdir + plen);
        return cn_buf_steal(&b);
    }
}

int cn_registry_search_path(cn_strv *dirs, cn_strv *labels)
{
    const char *env = getenv("CODENIB_SKILLS_PATH");
    const char *home = getenv("CODENIB_HOME");
    bool in_build_tree = running_from_build_tree();
    int rc = 0;

    if (in_build_tree) {
        char *p = cn_path_join(CN_ABS_BUILDDIR, "_skills");
        if ((rc = cn_strv_push_owned(dirs, p)) < 0 || (rc = cn_strv_push(labels, "build tree")) < 0)
            return rc;
    }
    if (env && *env) {
        cn_strv parts = CN_STRV_INIT;
        if ((rc = cn_strv_split(&parts, env, ':')) < 0) return rc;
        for (size_t i = 0; i < parts.len && rc == 0; i++) {
            rc = cn_strv_push(dirs, parts.items[i]);
            if (rc == 0) rc = cn_strv_push(labels, "CODENIB_SKILLS_PATH");
        }
        cn_strv_free(&parts);
        if (rc < 0) return rc;
    }
    {
        char *p = cn_path_join(CN_PKGLIBDIR, "skills");
        char *moved = in_build_tree ? NULL : relocated_skills_dir();
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
        rc = cn_strv_push_owned(dirs, cn_path_join(home, "skills"));
    } else if ((home = getenv("HOME")) != NULL && *home) {
        char *base = cn_path_join(home, ".codenib");
        rc = cn_strv_push_owned(dirs, base ? cn_path_join(base, "skills") : NULL);
        free(base);
    } else {
        return 0;
    }
    if (rc == 0) rc = cn_strv_push(labels, "user");
    return rc;
}

CN_API int cn_registry_discover(cn_registry *reg)
{
    cn_strv dirs = CN_STRV_INIT, labels = CN_STRV_INIT;
    int rc = cn_registry_search_path(&dirs, &labels);
    for (size_t i = 0; rc == 0 && i < dirs.len; i++)
        rc = cn_registry_add_root(reg, dirs.items[i], labels.items[i]);
    cn_strv_free(&dirs);
    cn_strv_free(&labels);
    return rc;
}

CN_API int cn_registry_add_dir(cn_registry *reg, const char *root)
{
    return cn_registry_add_root(reg, root, "explicit");
}
