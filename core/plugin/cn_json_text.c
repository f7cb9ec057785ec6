/* SPDX-License-Identifier: Apache-2.0 */
/* JSON text as codenib prints it: always valid UTF-8.
 *
 * json-c escapes '"', '\\' and the C0 controls but copies every other
 * byte of a string as it is, so a file name or a line of a file that is
 * not UTF-8 would come out as JSON no strict parser accepts (RFC 8259
 * requires UTF-8).  Every JSON text codenib writes (--json, the MCP and
 * LSP servers, traces, eval rows, plugin results, model requests) goes
 * through here.  Only string contents hold bytes >= 0x7f in json-c's
 * output, so the text is repaired after serialising: an ill-formed
 * sequence becomes U+FFFD, and DEL and the C1 controls become \u escapes
 * (lossless, and a terminal showing the JSON never sees them raw). */
#include <stdio.h>

#include "../util/cn_utf8.h"
#include "cn_host.h"

char *cn_json_text(json_object *o, int flags)
{
    size_t n = 0, run = 0, i = 0, bad;
    const char *s = json_object_to_json_string_length(o, flags, &n);
    cn_buf b = CN_BUF_INIT;
    uint32_t cp;

    if (s == NULL) {
        cn_error_set(CN_ENOMEM, "out of memory writing JSON");
        return NULL;
    }
    while (i < n) {
        size_t k;
        if ((unsigned char)s[i] < 0x7f) { /* the bulk: ASCII */
            i++;
            continue;
        }
        k = cn_utf8_decode(s + i, n - i, &cp, &bad);
        if (k > 0 && !cn_utf8_is_control(cp)) {
            i += k;
            continue;
        }
        cn_buf_append(&b, s + run, i - run);
        if (k > 0) cn_buf_printf(&b, "\\u%04x", (unsigned)cp);
        else cn_buf_puts(&b, CN_UTF8_REPLACEMENT);
        i += k > 0 ? k : bad;
        run = i;
    }
    cn_buf_append(&b, s + run, n - run);
    if (b.oom) {
        cn_buf_free(&b);
        cn_error_set(CN_ENOMEM, "out of memory writing JSON");
        return NULL;
    }
    return cn_buf_steal(&b);
}
