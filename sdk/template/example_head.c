/* SPDX-License-Identifier: Apache-2.0 */
/* example_head: a complete codenib skill, to copy.
 *
 * It shows every part a skill needs: the descriptor (CN_SKILL_DEFINE), an
 * executor with run and destroy, the host services for memory, JSON, errors
 * and repository files, and the typed context check.  Line numbers arrive
 * 0-based (the host converts the model's 1-based numbers, because the input
 * is marked is_line_number) and leave 0-based (the host converts the fields
 * listed in outputs.line_fields). */
#include <stdio.h>
#include <string.h>

#include <codenib/skill.h>

typedef struct head_state {
    const cn_host *host;
    const cn_skill_context *ctx;   /* may be NULL: checked when run */
} head_state;

static int head_run(cn_executor *self, const char *args_json, char **result_json, cn_error *err)
{
    head_state *st = self->data;
    const cn_host *h = st->host;
    const cn_json_services *J = h->json;
    cn_json *args, *out;
    const char *path;
    char *data = NULL, *text = NULL;
    size_t len = 0, tlen = 0, cap = 0;
    long long start, count, line = 0, last = -1;
    int rc;

    /* Fail at run time, not at creation, when the context lacks what we need. */
    if ((rc = h->context_require(h, st->ctx, CN_NEEDS_REPO, err)) < 0) return rc;
    if ((args = J->parse(args_json, err)) == NULL) return err->code;
    path = J->get_string(J->object_get(args, "path"));
    start = J->get_int(J->object_get(args, "start_line"));
    count = J->get_int(J->object_get(args, "count"));
    if (count < 1 || count > 1000) {
        J->put(args);
        return h->error_set(err, CN_EINVAL, "count must be between 1 and 1000, got %lld", count);
    }
    if ((rc = h->files->read(h, path, 0, &data, &len, err)) < 0) {
        J->put(args);
        return rc;
    }
    for (size_t i = 0; i < len && line < start + count; line++) {
        size_t j = i;
        while (j < len && data[j] != '\n') j++;
        if (line >= start) {
            char gutter[32];
            int g = snprintf(gutter, sizeof gutter, "%6lld\t", line + 1);
            size_t need = tlen + (size_t)g + (j - i) + 2;
            if (need > cap) {
                char *p = h->realloc(text, cap = need * 2);
                if (p == NULL) {
                    h->free(text);
                    h->free(data);
                    J->put(args);
                    return h->error_set(err, CN_ENOMEM, "out of memory");
                }
                text = p;
            }
            memcpy(text + tlen, gutter, (size_t)g);
            memcpy(text + tlen + g, data + i, j - i);
            tlen += (size_t)g + (j - i);
            text[tlen++] = '\n';
            text[tlen] = '\0';
            last = line;
        }
        i = j + 1;
    }
    if (last < 0) {
        rc = h->error_set(err, CN_EINVAL, "%s has %lld lines; line %lld is past its end", path, line,
                          start + 1);
    } else {
        out = J->new_object();
        J->object_set(out, "path", J->new_string(path));
        J->object_set(out, "start_line", J->new_int(start));
        J->object_set(out, "end_line", J->new_int(last));
        J->object_set(out, "content", J->new_string(text));
        *result_json = J->serialize(out, 0);
        J->put(out);
        rc = *result_json ? 0 : h->error_set(err, CN_ENOMEM, "out of memory");
    }
    h->free(text);
    h->free(data);
    J->put(args);
    return rc;
}

static void head_destroy(cn_executor *self)
{
    head_state *st = self->data;
    const cn_host *h = st->host;
    h->free(st);
    h->free(self);
}

static int head_create(const cn_host *host, const cn_skill_context *ctx, cn_executor **out,
                       cn_error *err)
{
    cn_executor *ex;
    head_state *st;

    /* A service added after ABI 1.0 would be checked the same way. */
    if (!CN_HOST_HAS(host, files) || host->files == NULL)
        return host->error_set(err, CN_EUNSUPPORTED, "this codenib offers no file service");
    ex = host->alloc(sizeof *ex);
    st = host->alloc(sizeof *st);
    if (ex == NULL || st == NULL) {
        host->free(ex);
        host->free(st);
        return host->error_set(err, CN_ENOMEM, "out of memory");
    }
    memset(ex, 0, sizeof *ex);
    st->host = host;
    st->ctx = ctx;
    ex->struct_size = (uint32_t)sizeof *ex;
    ex->data = st;
    ex->run = head_run;
    ex->cancel = NULL;   /* runs are short: nothing to cancel */
    ex->destroy = head_destroy;
    *out = ex;
    return 0;
}

CN_SKILL_DEFINE(example_head, "example_head", "1.0.0", head_create);
