/* SPDX-License-Identifier: Apache-2.0 */
/* Lazy loading of a skill's shared object.  The descriptor's ABI numbers,
 * size and id are checked before any function of the plugin is called. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cn_registry.h"


void cn_entry_unload(cn_skill_entry *e)
{
    if (e->exec != NULL) {
        e->exec->destroy(e->exec);
        e->exec = NULL;
    }
    e->desc = NULL;
    if (e->dl != NULL) {
        cn_dl_close(e->dl);
        e->dl = NULL;
    }
    if (e->state == CN_STATE_LOADED) e->state = CN_STATE_DISCOVERED;
}

static const cn_skill_context *context_for(cn_registry *reg, const cn_skill_meta *m)
{
    int kind = (int)m->skill_type;
    if (kind < CN_SKILL_RETRIEVAL || kind > CN_SKILL_CUSTOM || !reg->has_context[kind]) return NULL;
    return &reg->contexts[kind];
}

int cn_registry_open(cn_registry *reg, cn_skill_entry *e)
{
    const cn_skill_meta *m = e->meta;
    const cn_skill_descriptor *d;
    char *so_name = NULL, *so_path = NULL, *symbol = NULL;
    struct stat st;
    int rc;

    if (e->state == CN_STATE_LOADED || e->state == CN_STATE_INPROCESS || e->desc != NULL) return 0;
    if (e->state == CN_STATE_FAILED || e->state == CN_STATE_DUPLICATE)
        return cn_error_set(e->error_code ? e->error_code : CN_ELOAD, "%s", e->reason);

    /* A package that declares its ABI is refused before it is opened. */
    if (m->abi_major >= 0 && m->abi_major != CN_ABI_MAJOR)
        return cn_entry_fail(e, CN_EABI,
                             "%s declares skill ABI %d.%d but this codenib speaks %d.%d: rebuild "
                             "the skill against this codenib's SDK",
                             m->config_path, m->abi_major, m->abi_minor, CN_ABI_MAJOR, CN_ABI_MINOR);
    if (m->abi_major == CN_ABI_MAJOR && m->abi_minor > CN_ABI_MINOR)
        return cn_entry_fail(e, CN_EABI,
                             "%s declares skill ABI %d.%d, newer than this codenib's %d.%d: "
                             "upgrade codenib",
                             m->config_path, m->abi_major, m->abi_minor, CN_ABI_MAJOR, CN_ABI_MINOR);

    {
        cn_buf b = CN_BUF_INIT;
        cn_buf_printf(&b, "%s.so", m->library);
        so_name = cn_buf_steal(&b);
    }
    so_path = so_name ? cn_path_join(e->dir, so_name) : NULL;
    symbol = cn_skill_symbol_name(e->id);
    if (so_path == NULL || symbol == NULL) {
        rc = cn_error_set(CN_ENOMEM, "out of memory");
        goto out;
    }
    if (stat(so_path, &st) != 0) {
        rc = cn_entry_fail(e, CN_ELOAD,
                           "skill '%s': shared object %s is missing (build and install the "
                           "skill, or name it with `library:` in config.yaml)",
                           e->id, so_path);
        goto out;
    }
    if ((rc = cn_dl_open(so_path, &e->dl)) < 0) {
        /* libltdl reports "file not found" for a file that exists but does
         * not load; say what that usually means. */
        char why[CN_ERROR_MESSAGE_MAX];
        snprintf(why, sizeof why, "%s", cn_error_last()->message);
        rc = cn_entry_fail(e, CN_ELOAD,
                           "skill '%s': %s (the file exists: it may not be a shared object for "
                           "this machine, or a library it needs is missing; try `ldd %s`)",
                           e->id, why, so_path);
        goto out;
    }
    d = cn_dl_sym(e->dl, symbol);
    if (d == NULL) {
        rc = cn_entry_fail(e, CN_ELOAD,
                           "skill '%s': %s does not export %s (declare it with CN_SKILL_DEFINE "
                           "and the id of config.yaml)",
                           e->id, so_path, symbol);
        goto fail_close;
    }
    e->built_abi_major = d->abi_major;
    e->built_abi_minor = d->abi_minor;
    if (d->abi_major != CN_ABI_MAJOR) {
        rc = cn_entry_fail(e, CN_EABI,
                           "skill '%s': %s was built for skill ABI %u.%u but this codenib "
                           "speaks %d.%d: rebuild it against this codenib's SDK",
                           e->id, so_path, d->abi_major, d->abi_minor, CN_ABI_MAJOR, CN_ABI_MINOR);
        goto fail_close;
    }
    if (d->abi_minor > CN_ABI_MINOR) {
        rc = cn_entry_fail(e, CN_EABI,
                           "skill '%s': %s was built against a newer SDK (ABI %u.%u) than this "
                           "codenib (%d.%d): upgrade codenib",
                           e->id, so_path, d->abi_major, d->abi_minor, CN_ABI_MAJOR, CN_ABI_MINOR);
        goto fail_close;
    }
    if (d->struct_size < offsetof(cn_skill_descriptor, create_executor) + sizeof d->create_executor) {
        rc = cn_entry_fail(e, CN_EABI,
                           "skill '%s': %s has a descriptor of %u bytes, smaller than ABI %d.0's "
                           "%zu: the library is damaged or not built with CN_SKILL_DEFINE",
                           e->id, so_path, d->struct_size, CN_ABI_MAJOR,
                           offsetof(cn_skill_descriptor, create_executor) + sizeof d->create_executor);
        goto fail_close;
    }
    if (d->id == NULL || strcmp(d->id, e->id) != 0) {
        rc = cn_entry_fail(e, CN_EABI,
                           "skill id mismatch: %s says '%s' but %s says '%s'", m->config_path,
                           e->id, so_path, d->id ? d->id : "(none)");
        goto fail_close;
    }
    if (d->create_executor == NULL) {
        rc = cn_entry_fail(e, CN_EABI, "skill '%s': %s has no create_executor", e->id, so_path);
        goto fail_close;
    }

    e->desc = d;
    rc = 0;
    goto out;

fail_close:
    cn_dl_close(e->dl);
    e->dl = NULL;
out:
    free(so_name);
    free(so_path);
    free(symbol);
    return rc;
}

int cn_registry_load(cn_registry *reg, cn_skill_entry *e)
{
    const cn_skill_descriptor *d;
    cn_executor *exec = NULL;
    cn_error err = {0, ""};
    int rc;

    if (e->state == CN_STATE_LOADED || e->state == CN_STATE_INPROCESS) return 0;
    if ((rc = cn_registry_open(reg, e)) < 0) return rc;
    d = e->desc;
    e->host_data.skill_id = e->id;
    e->host_data.skill_dir = e->dir;
    e->host_data.defaults = e->meta->defaults;
    e->host_data.repo_root = reg->repo_root;
    cn_host_init(&e->host, &e->host_data);

    rc = d->create_executor(&e->host, context_for(reg, e->meta), &exec, &err);
    if (rc < 0 || exec == NULL) {
        if (exec != NULL && exec->destroy != NULL) exec->destroy(exec);
        rc = cn_entry_fail(e, rc < 0 ? rc : CN_ESKILL, "skill '%s': create_executor failed: %s",
                           e->id, err.message[0] ? err.message : "no reason given");
        goto fail;
    }
    if (exec->struct_size < offsetof(cn_executor, destroy) + sizeof exec->destroy ||
        exec->run == NULL || exec->destroy == NULL) {
        if (exec->struct_size >= offsetof(cn_executor, destroy) + sizeof exec->destroy &&
            exec->destroy != NULL)
            exec->destroy(exec);
        rc = cn_entry_fail(e, CN_EABI, "skill '%s': its executor lacks run() or destroy()", e->id);
        goto fail;
    }
    e->exec = exec;
    e->state = CN_STATE_LOADED;
    return 0;
fail:
    e->desc = NULL;
    cn_dl_close(e->dl);
    e->dl = NULL;
    return rc;
}

void cn_registry_verify_all(cn_registry *reg)
{
    for (size_t i = 0; i < reg->n_entries; i++) {
        cn_skill_entry *e = reg->entries[i];
        if (e->state == CN_STATE_DISCOVERED) (void)cn_registry_open(reg, e);
    }
    cn_error_clear();
}
