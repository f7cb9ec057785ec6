/* SPDX-License-Identifier: Apache-2.0 */
/* Discovery and loading of embedder, vector-store and LSP backends. */
#include "cn_backends.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <codenib/embed.h>
#include <codenib/lsp.h>
#include <codenib/vectors.h>

#include "cn_dl.h"
#include "cn_search_path.h"
#include "cn_yaml.h"

static const char *const kind_names[] = {NULL, "embedder", "vector-store", "lsp"};

const char *cn_backend_kind_name(int kind)
{
    return kind >= CN_BACKEND_EMBEDDER && kind <= CN_BACKEND_LSP ? kind_names[kind] : NULL;
}

int cn_backend_kind_parse(const char *name)
{
    for (int k = CN_BACKEND_EMBEDDER; name && k <= CN_BACKEND_LSP; k++)
        if (strcmp(kind_names[k], name) == 0) return k;
    return 0;
}

static void entry_free(cn_backend_entry *e)
{
    if (e->dl) cn_dl_close(e->dl);
    free(e->id);
    free(e->dir);
    free(e->source);
    free(e->library);
    free(e->reason);
}

static int problem(cn_backends *b, const char *fmt, ...) CN_PRINTF(2, 3);
static int problem(cn_backends *b, const char *fmt, ...)
{
    cn_buf m = CN_BUF_INIT;
    va_list ap;
    va_start(ap, fmt);
    cn_buf_vprintf(&m, fmt, ap);
    va_end(ap);
    return cn_strv_push_owned(&b->problems, cn_buf_steal(&m));
}

/* Reads one package; 1 when it is not a backend of ours (languages have
 * their own registry), 0 when added or recorded as a problem. */
static int add_package(cn_backends *b, const char *dir, const char *source)
{
    char *cfg_path = cn_path_join(dir, "plugin.yaml");
    json_object *cfg = NULL;
    cn_backend_entry e;
    const char *kind, *id, *lib, *abi;
    int rc = 0;

    memset(&e, 0, sizeof e);
    if (cfg_path == NULL) return cn_error_set(CN_ENOMEM, "out of memory");
    if (cn_yaml_load_file(cfg_path, &cfg) < 0) {
        /* the language registry reports unreadable packages already */
        cn_error_clear();
        free(cfg_path);
        return 1;
    }
    kind = cn_json_str_member(cfg, "kind");
    if (kind == NULL || strcmp(kind, "language") == 0) {
        rc = 1;
        goto done;
    }
    id = cn_json_str_member(cfg, "plugin_id");
    lib = cn_json_str_member(cfg, "library");
    abi = cn_json_str_member(cfg, "abi");
    if (cn_backend_kind_parse(kind) == 0) {
        rc = problem(b, "%s: unknown plugin kind '%s' (expected language, embedder, vector-store or lsp)",
                     cfg_path, kind);
        goto done;
    }
    if (id == NULL || lib == NULL || strchr(lib, '/') != NULL || *lib == '\0') {
        rc = problem(b, "%s: a backend package needs `plugin_id:` and `library:` (a file name)", cfg_path);
        goto done;
    }
    if (cn_backends_find(b, id) != NULL) {
        rc = problem(b, "%s: backend '%s' is already provided by %s (the first one found wins)", dir, id,
                     cn_backends_find(b, id)->dir);
        goto done;
    }
    e.id = cn_strdup(id);
    e.kind = cn_backend_kind_parse(kind);
    e.dir = cn_strdup(dir);
    e.source = cn_strdup(source);
    e.library = cn_strdup(lib);
    if (abi != NULL) {
        int major = -1, minor = -1;
        if (sscanf(abi, "%d.%d", &major, &minor) != 2 || major != CN_ABI_MAJOR || minor > CN_ABI_MINOR) {
            cn_buf m = CN_BUF_INIT;
            cn_buf_printf(&m, "%s declares ABI %s; this codenib speaks %d.%d", cfg_path, abi, CN_ABI_MAJOR,
                          CN_ABI_MINOR);
            e.reason = cn_buf_steal(&m);
        }
    }
    if (e.id == NULL || e.dir == NULL || e.source == NULL || e.library == NULL) {
        entry_free(&e);
        rc = cn_error_set(CN_ENOMEM, "out of memory");
        goto done;
    }
    {
        cn_backend_entry *p = realloc(b->items, (b->len + 1) * sizeof *p);
        if (p == NULL) {
            entry_free(&e);
            rc = cn_error_set(CN_ENOMEM, "out of memory");
            goto done;
        }
        b->items = p;
        b->items[b->len++] = e;
    }
done:
    json_object_put(cfg);
    free(cfg_path);
    return rc;
}

static int add_one(void *data, const char *dir, const char *source)
{
    return add_package(data, dir, source);
}

int cn_backends_add_root(cn_backends *b, const char *root, const char *source)
{
    return cn_search_path_scan(root, "plugin.yaml", source, add_one, b);
}

int cn_backends_discover(cn_backends *b)
{
    return cn_search_path_scan_plugins(add_one, b);
}

void cn_backends_free(cn_backends *b)
{
    for (size_t i = 0; i < b->len; i++) entry_free(&b->items[i]);
    free(b->items);
    cn_strv_free(&b->problems);
    memset(b, 0, sizeof *b);
}

cn_backend_entry *cn_backends_find(const cn_backends *b, const char *id)
{
    for (size_t i = 0; id && i < b->len; i++)
        if (strcmp(b->items[i].id, id) == 0) return &b->items[i];
    return NULL;
}

int cn_backends_open(cn_backend_entry *e, const cn_backend_descriptor **out)
{
    char *so = NULL, *symbol = NULL;
    const cn_backend_descriptor *d;
    cn_buf m = CN_BUF_INIT;
    int rc;

    *out = NULL;
    if (e->desc != NULL) {
        *out = e->desc;
        return 0;
    }
    if (e->reason != NULL) return cn_error_set(CN_ELOAD, "backend '%s': %s", e->id, e->reason);
    cn_buf_printf(&m, "%s/%s.so", e->dir, e->library);
    so = cn_buf_steal(&m);
    cn_buf_puts(&m, CN_BACKEND_SYMBOL_PREFIX);
    for (const char *p = e->id; *p; p++) cn_buf_putc(&m, (isalnum((unsigned char)*p) || *p == '_') ? *p : '_');
    symbol = cn_buf_steal(&m);
    if (so == NULL || symbol == NULL) {
        rc = cn_error_set(CN_ENOMEM, "out of memory");
        goto done;
    }
    if ((rc = cn_dl_open(so, &e->dl)) < 0) goto fail;
    d = cn_dl_sym(e->dl, symbol);
    if (d == NULL) {
        rc = cn_error_set(CN_ELOAD, "%s does not export %s", so, symbol);
    } else if (d->abi_major != CN_ABI_MAJOR || d->abi_minor > CN_ABI_MINOR) {
        rc = cn_error_set(CN_EABI, "%s was built for ABI %u.%u; this codenib speaks %d.%d", so, d->abi_major,
                          d->abi_minor, CN_ABI_MAJOR, CN_ABI_MINOR);
    } else if (d->struct_size < offsetof(cn_backend_descriptor, create) + sizeof d->create || d->id == NULL ||
               strcmp(d->id, e->id) != 0 || d->create == NULL) {
        rc = cn_error_set(CN_EABI, "%s: its descriptor does not describe backend '%s'", so, e->id);
    } else if (d->kind != e->kind) {
        rc = cn_error_set(CN_EABI, "%s: plugin.yaml says kind %s but the library is of kind %s", so,
                          cn_backend_kind_name(e->kind),
                          cn_backend_kind_name(d->kind) ? cn_backend_kind_name(d->kind) : "backend of unknown kind");
    } else {
        e->desc = d;
        *out = d;
        rc = 0;
        goto done;
    }
fail:
    e->reason = cn_strdup(cn_error_last()->message);
    if (e->dl) {
        cn_dl_close(e->dl);
        e->dl = NULL;
    }
    rc = cn_error_set(rc, "backend '%s': %s", e->id, e->reason ? e->reason : "cannot load");
done:
    free(so);
    free(symbol);
    return rc;
}

static int known_of_kind(const cn_backends *b, int kind, cn_buf *out)
{
    int n = 0;
    for (size_t i = 0; i < b->len; i++)
        if (b->items[i].kind == kind) cn_buf_printf(out, "%s%s", n++ ? ", " : "", b->items[i].id);
    return n;
}

int cn_backend_create(cn_backends *b, const char *id, int kind, const cn_skill_context *ctx,
                      const char *config_json, cn_backend_instance **out)
{
    cn_backend_entry *e = cn_backends_find(b, id);
    const cn_backend_descriptor *d;
    cn_backend_instance *inst;
    cn_error err;
    int rc;

    *out = NULL;
    if (e == NULL || e->kind != kind) {
        cn_buf known = CN_BUF_INIT;
        if (known_of_kind(b, kind, &known) == 0) cn_buf_puts(&known, "none");
        rc = cn_error_set(CN_ENOTFOUND, "no %s backend '%s' is installed (known: %s; see `codenib plugins list`)",
                          cn_backend_kind_name(kind), id ? id : "(none)", known.data ? known.data : "none");
        cn_buf_free(&known);
        return rc;
    }
    if ((rc = cn_backends_open(e, &d)) < 0) return rc;
    inst = calloc(1, sizeof *inst);
    if (inst == NULL || (inst->defaults = json_object_new_object()) == NULL) {
        free(inst);
        return cn_error_set(CN_ENOMEM, "out of memory");
    }
    inst->kind = kind;
    inst->host_data.skill_id = e->id;
    inst->host_data.skill_dir = e->dir;
    inst->host_data.defaults = inst->defaults;
    inst->host_data.repo_root = ctx ? ctx->repo_root : NULL;
    cn_host_init(&inst->host, &inst->host_data);
    memset(&err, 0, sizeof err);
    rc = d->create(&inst->host, ctx, config_json ? config_json : "{}", &inst->object, &err);
    if (rc >= 0 && inst->object == NULL)
        rc = cn_error_fill(&err, CN_EABI, "create() returned success and no object");
    if (rc < 0) {
        json_object_put(inst->defaults);
        free(inst);
        return cn_error_set(rc < 0 ? rc : CN_ERR, "%s backend '%s': %s", cn_backend_kind_name(kind), id,
                            err.message[0] ? err.message : "create() failed without a message");
    }
    *out = inst;
    return 0;
}

void cn_backend_instance_free(cn_backend_instance *inst)
{
    if (inst == NULL) return;
    switch (inst->kind) {
    case CN_BACKEND_EMBEDDER: {
        cn_embedder *o = inst->object;
        o->destroy(o);
        break;
    }
    case CN_BACKEND_VECTOR_STORE: {
        cn_vector_store *o = inst->object;
        o->destroy(o);
        break;
    }
    case CN_BACKEND_LSP: {
        cn_lsp_provider *o = inst->object;
        o->destroy(o);
        break;
    }
    }
    json_object_put(inst->defaults);
    free(inst);
}
