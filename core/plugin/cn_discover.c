/* SPDX-License-Identifier: Apache-2.0 */
/* Discovery of skill packages on disk.  Only config.yaml and skill.md are
 * read here; shared objects are opened on first use (cn_loader.c). */
#include <stdlib.h>
#include <string.h>

#include "cn_registry.h"
#include "cn_search_path.h"

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

static int add_one(void *data, const char *dir, const char *source)
{
    return cn_registry_add_package(data, dir, source);
}

int cn_registry_add_root(cn_registry *reg, const char *root, const char *source)
{
    return cn_search_path_scan(root, "config.yaml", source, add_one, reg);
}

int cn_registry_search_path(cn_strv *dirs, cn_strv *labels)
{
    return cn_search_path("skills", "CODENIB_SKILLS_PATH", dirs, labels);
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
