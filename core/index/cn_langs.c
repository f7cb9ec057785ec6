/* SPDX-License-Identifier: Apache-2.0 */
/* Language backend discovery and loading. */
#include "cn_langs.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "../plugin/cn_dl.h"
#include "../plugin/cn_host.h"
#include "../plugin/cn_search_path.h"
#include "../plugin/cn_yaml.h"

static int strv_from_json(const char *cfg, const char *field, json_object *v, cn_strv *out)
{
    if (v == NULL) return 0;
    if (!json_object_is_type(v, json_type_array))
        return cn_error_set(CN_EPARSE, "%s: %s: expected a list of strings", cfg, field);
    for (size_t i = 0; i < json_object_array_length(v); i++) {
        json_object *e = json_object_array_get_idx(v, i);
        if (!json_object_is_type(e, json_type_string))
            return cn_error_set(CN_EPARSE, "%s: %s[%zu]: expected a string", cfg, field, i);
        int rc = cn_strv_push(out, json_object_get_string(e));
        if (rc < 0) return rc;
    }
    return 0;
}

static void entry_free(cn_lang_entry *e)
{
    if (e->dl) cn_dl_close(e->dl);
    free(e->language);
    free(e->plugin_id);
    free(e->dir);
    free(e->source);
    free(e->library);
    free(e->reason);
    cn_strv_free(&e->extensions);
    cn_strv_free(&e->shebangs);
}

/* Reads one package; 1 when it is not a language package, 0 when added. */
static int add_package(cn_langs *langs, const char *dir, const char *source)
{
    char *cfg_path = cn_path_join(dir, "plugin.yaml");
    json_object *cfg = NULL, *v;
    cn_lang_entry e;
    const char *kind, *lang, *lib, *abi, *id;
    int rc;

    memset(&e, 0, sizeof e);
    if (cfg_path == NULL) return cn_error_set(CN_ENOMEM, "out of memory");
    rc = cn_yaml_load_file(cfg_path, &cfg);
    if (rc < 0) {
        rc = cn_strv_push(&langs->problems, cn_error_last()->message);
        free(cfg_path);
        return rc;
    }
    kind = cn_json_str_member(cfg, "kind");
    if (kind == NULL || strcmp(kind, "language") != 0) {
        json_object_put(cfg);
        free(cfg_path);
        return 1;
    }
    lang = cn_json_str_member(cfg, "language");
    lib = cn_json_str_member(cfg, "library");
    abi = cn_json_str_member(cfg, "abi");
    if (lang == NULL || lib == NULL || strchr(lib, '/') != NULL) {
        cn_buf b = CN_BUF_INIT;
        cn_buf_printf(&b, "%s: a language package needs `language:` and `library:` (a file name)",
                      cfg_path);
        rc = cn_strv_push_owned(&langs->problems, cn_buf_steal(&b));
        json_object_put(cfg);
        free(cfg_path);
        return rc;
    }
    for (size_t i = 0; i < langs->len; i++) {
        if (strcmp(langs->items[i].language, lang) == 0) {
            cn_buf b = CN_BUF_INIT;
            cn_buf_printf(&b, "%s: language '%s' is already provided by %s (the first one found wins)",
                          dir, lang, langs->items[i].dir);
            rc = cn_strv_push_owned(&langs->problems, cn_buf_steal(&b));
            json_object_put(cfg);
            free(cfg_path);
            return rc;
        }
    }
    e.language = cn_strdup(lang);
    id = cn_json_str_member(cfg, "plugin_id");
    e.plugin_id = cn_strdup(id ? id : lang);
    e.dir = cn_strdup(dir);
    e.source = cn_strdup(source);
    e.library = cn_strdup(lib);
    rc = 0;
    if (json_object_object_get_ex(cfg, "extensions", &v)) rc = strv_from_json(cfg_path, "extensions", v, &e.extensions);
    if (rc == 0 && json_object_object_get_ex(cfg, "shebangs", &v)) rc = strv_from_json(cfg_path, "shebangs", v, &e.shebangs);
    if (rc < 0) {
        e.reason = cn_strdup(cn_error_last()->message);
        rc = 0;
    }
    if (abi != NULL) {
        int major = -1, minor = -1;
        if (sscanf(abi, "%d.%d", &major, &minor) != 2 || major != CN_ABI_MAJOR || minor > CN_ABI_MINOR) {
            cn_buf b = CN_BUF_INIT;
            cn_buf_printf(&b, "%s declares ABI %s; this codenib speaks %d.%d", cfg_path, abi,
                          CN_ABI_MAJOR, CN_ABI_MINOR);
            free(e.reason);
            e.reason = cn_buf_steal(&b);
        }
    }
    json_object_put(cfg);
    free(cfg_path);
    if (e.language == NULL || e.plugin_id == NULL || e.dir == NULL || e.source == NULL || e.library == NULL) {
        entry_free(&e);
        return cn_error_set(CN_ENOMEM, "out of memory");
    }
    {
        cn_lang_entry *p = realloc(langs->items, (langs->len + 1) * sizeof *p);
        if (p == NULL) {
            entry_free(&e);
            return cn_error_set(CN_ENOMEM, "out of memory");
        }
        langs->items = p;
        langs->items[langs->len++] = e;
    }
    return 0;
}

static int add_one(void *data, const char *dir, const char *source)
{
    return add_package(data, dir, source);
}

int cn_langs_add_root(cn_langs *langs, const char *root, const char *source)
{
    return cn_search_path_scan(root, "plugin.yaml", source, add_one, langs);
}

int cn_langs_discover(cn_langs *langs)
{
    return cn_search_path_scan_plugins(add_one, langs);
}

void cn_langs_free(cn_langs *langs)
{
    for (size_t i = 0; i < langs->len; i++) entry_free(&langs->items[i]);
    free(langs->items);
    cn_strv_free(&langs->problems);
    memset(langs, 0, sizeof *langs);
}

const cn_lang_entry *cn_langs_find(const cn_langs *langs, const char *language)
{
    for (size_t i = 0; i < langs->len; i++)
        if (strcmp(langs->items[i].language, language) == 0) return &langs->items[i];
    return NULL;
}

const cn_lang_entry *cn_langs_by_path(const cn_langs *langs, const char *path)
{
    const char *base = strrchr(path, '/');
    const char *dot;
    base = base ? base + 1 : path;
    dot = strrchr(base, '.');
    if (dot == NULL || dot == base) return NULL;
    for (size_t i = 0; i < langs->len; i++)
        for (size_t j = 0; j < langs->items[i].extensions.len; j++)
            if (strcasecmp(langs->items[i].extensions.items[j], dot) == 0) return &langs->items[i];
    return NULL;
}

const cn_lang_entry *cn_langs_by_shebang(const cn_langs *langs, const char *line, size_t len)
{
    char interp[64];
    size_t i = 2, n = 0;
    const char *word;
    size_t wl;

    if (len < 3 || line[0] != '#' || line[1] != '!') return NULL;
    /* the interpreter path, then for "/usr/bin/env" the next word */
    for (int pass = 0; pass < 2; pass++) {
        while (i < len && (line[i] == ' ' || line[i] == '\t')) i++;
        word = line + i;
        while (i < len && !isspace((unsigned char)line[i])) i++;
        wl = (size_t)(line + i - word);
        {
            const char *slash = word;
            for (const char *p = word; p < word + wl; p++)
                if (*p == '/') slash = p + 1;
            wl -= (size_t)(slash - word);
            word = slash;
        }
        if (wl == 3 && memcmp(word, "env", 3) == 0 && pass == 0) {
            /* skip env options such as -S */
            while (i < len && (line[i] == ' ' || line[i] == '\t')) i++;
            while (i < len && line[i] == '-') {
                while (i < len && !isspace((unsigned char)line[i])) i++;
                while (i < len && (line[i] == ' ' || line[i] == '\t')) i++;
            }
            continue;
        }
        break;
    }
    if (wl == 0 || wl >= sizeof interp) return NULL;
    memcpy(interp, word, wl);
    interp[wl] = '\0';
    n = wl;
    /* "python3.11" matches a package that lists "python3" */
    for (size_t k = 0; k < langs->len; k++) {
        for (size_t j = 0; j < langs->items[k].shebangs.len; j++) {
            const char *s = langs->items[k].shebangs.items[j];
            size_t sl = strlen(s);
            if (strcmp(interp, s) == 0) return &langs->items[k];
            if (n > sl && strncmp(interp, s, sl) == 0 &&
                (interp[sl] == '.' || isdigit((unsigned char)interp[sl])))
                return &langs->items[k];
        }
    }
    return NULL;
}

int cn_langs_open(cn_lang_entry *e, const cn_lang_descriptor **out)
{
    char *so = NULL, *symbol = NULL;
    const cn_lang_descriptor *d;
    cn_buf b = CN_BUF_INIT;
    int rc;

    *out = NULL;
    if (e->desc != NULL) {
        *out = e->desc;
        return 0;
    }
    if (e->reason != NULL) return cn_error_set(CN_ELOAD, "language '%s': %s", e->language, e->reason);
    cn_buf_printf(&b, "%s/%s.so", e->dir, e->library);
    so = cn_buf_steal(&b);
    cn_buf_printf(&b, "%s", CN_LANG_SYMBOL_PREFIX);
    for (const char *p = e->language; *p; p++)
        cn_buf_putc(&b, (isalnum((unsigned char)*p) || *p == '_') ? *p : '_');
    symbol = cn_buf_steal(&b);
    if (so == NULL || symbol == NULL) {
        rc = cn_error_set(CN_ENOMEM, "out of memory");
        goto done;
    }
    if ((rc = cn_dl_open(so, &e->dl)) < 0) goto fail;
    d = cn_dl_sym(e->dl, symbol);
    if (d == NULL) {
        rc = cn_error_set(CN_ELOAD, "%s does not export %s", so, symbol);
    } else if (d->abi_major != CN_ABI_MAJOR || d->abi_minor > CN_ABI_MINOR) {
        rc = cn_error_set(CN_EABI, "%s was built for ABI %u.%u; this codenib speaks %d.%d", so,
                          d->abi_major, d->abi_minor, CN_ABI_MAJOR, CN_ABI_MINOR);
    } else if (d->struct_size < offsetof(cn_lang_descriptor, create) + sizeof d->create ||
               d->name == NULL || strcmp(d->name, e->language) != 0 || d->create == NULL) {
        rc = cn_error_set(CN_EABI, "%s: its descriptor does not describe language '%s'", so,
                          e->language);
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
    rc = cn_error_set(rc, "language '%s': %s", e->language, e->reason ? e->reason : "cannot load");
done:
    free(so);
    free(symbol);
    return rc;
}
