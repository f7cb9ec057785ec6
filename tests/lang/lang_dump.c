/* SPDX-License-Identifier: Apache-2.0 */
/* lang_dump: loads one language backend and prints, in a canonical text
 * form, every node and reference it emits for the given files:
 *
 *   lang_dump PLUGIN.so LANGUAGE FILE...
 *
 *   == FILE
 *   node IDX KIND QUALNAME START-END parent=P [flags]
 *   ref KIND from=IDX NAME [-> TARGET] @LINE:COL
 *
 * The golden tests compare this output with the expected files. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <codenib/lang.h>

#include "plugin/cn_dl.h"
#include "plugin/cn_host.h"
#include "util/cn_util.h"

static const char *const kind_names[] = {
    "file", "class", "function", "method", "block", "struct", "union", "enum",
    "typedef", "macro", "prototype", "variable", "module",
};
static const char *const ref_names[] = {"?", "call", "reference", "import", "inherit"};

typedef struct dump_state {
    int next;
} dump_state;

static int on_node(void *data, const cn_lang_node *n)
{
    dump_state *st = data;
    const char *kind = n->kind >= 0 && n->kind <= CN_NODE_MODULE ? kind_names[n->kind] : "?";
    printf("node %d %s %s %u-%u parent=%d", st->next, kind, n->qualname ? n->qualname : "(null)",
           n->start_line, n->end_line, n->parent);
    if (n->flags & CN_NODE_F_ASYNC) printf(" async");
    if (n->flags & CN_NODE_F_DECORATED) printf(" decorated");
    if (n->flags & CN_NODE_F_PROPERTY) printf(" property");
    if (n->flags & CN_NODE_F_STATIC) printf(" static");
    if (n->flags & CN_NODE_F_CLASSMETHOD) printf(" classmethod");
    if (n->flags & CN_NODE_F_TEST) printf(" test");
    if (n->name == NULL || n->qualname == NULL || n->start_line == 0 || n->end_line < n->start_line ||
        n->parent >= st->next)
        printf(" INVALID");
    printf("\n");
    return st->next++;
}

static int on_ref(void *data, const cn_lang_ref *r)
{
    dump_state *st = data;
    const char *kind = r->kind >= 1 && r->kind <= CN_REF_INHERIT ? ref_names[r->kind] : "?";
    printf("ref %s from=%d %s", kind, r->from, r->name ? r->name : "(null)");
    if (r->target) printf(" -> %s", r->target);
    printf(" @%u:%u", r->line, r->column);
    if (r->name == NULL || r->line == 0 || r->from >= st->next) printf(" INVALID");
    printf("\n");
    return 0;
}

int main(int argc, char **argv)
{
    cn_dl *dl = NULL;
    const cn_lang_descriptor *d;
    cn_lang_parser *parser = NULL;
    cn_host host;
    cn_host_data hd = {"lang_dump", NULL, NULL, NULL};
    cn_error err = {0, ""};
    char symbol[128];
    int rc = 0;

    if (argc < 4) {
        fprintf(stderr, "usage: lang_dump PLUGIN.so LANGUAGE FILE...\n");
        return 2;
    }
    if (cn_dl_open(argv[1], &dl) < 0) {
        fprintf(stderr, "lang_dump: %s\n", cn_error_last()->message);
        return 1;
    }
    snprintf(symbol, sizeof symbol, "%s%s", CN_LANG_SYMBOL_PREFIX, argv[2]);
    d = cn_dl_sym(dl, symbol);
    if (d == NULL || d->abi_major != CN_ABI_MAJOR || d->create == NULL) {
        fprintf(stderr, "lang_dump: %s: no usable %s\n", argv[1], symbol);
        cn_dl_close(dl);
        return 1;
    }
    hd.defaults = json_object_new_object();
    cn_host_init(&host, &hd);
    if (d->create(&host, &parser, &err) < 0) {
        fprintf(stderr, "lang_dump: create: %s\n", err.message);
        json_object_put(hd.defaults);
        cn_dl_close(dl);
        return 1;
    }
    for (int i = 3; i < argc; i++) {
        char *src = NULL;
        size_t len = 0;
        dump_state st = {0};
        cn_lang_sink sink = {(uint32_t)sizeof sink, &st, on_node, on_ref};
        if (cn_file_read(argv[i], 64u * 1024 * 1024, &src, &len) < 0) {
            fprintf(stderr, "lang_dump: %s\n", cn_error_last()->message);
            rc = 1;
            continue;
        }
        printf("== %s\n", argv[i]);
        if (parser->parse(parser, argv[i], src, len, &sink, &err) < 0) {
            printf("parse failed: %s\n", err.message);
            rc = 1;
        }
        free(src);
    }
    parser->destroy(parser);
    json_object_put(hd.defaults);
    cn_dl_close(dl);
    return rc;
}
