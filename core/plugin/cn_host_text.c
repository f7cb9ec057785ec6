/* SPDX-License-Identifier: Apache-2.0 */
/* cn_host.text: the BM25 tokenizer for plugins. */
#include "cn_host.h"

#include "../index/cn_tokenize.h"

static int text_tokenize(const char *text, size_t len, int (*fn)(const char *, size_t, void *), void *data)
{
    return text ? cn_tokenize(text, len, fn, data) : 0;
}

const cn_text_services *cn_host_text_services(void)
{
    static const cn_text_services svc = {
        (uint32_t)sizeof(cn_text_services),
        text_tokenize,
    };
    return &svc;
}
