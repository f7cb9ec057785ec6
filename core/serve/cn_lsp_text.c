/* SPDX-License-Identifier: Apache-2.0 */
/* The LSP server's positions and URIs (see cn_lsp.h). */
#include "cn_lsp.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "../util/cn_util.h"

/* The length of the UTF-8 sequence starting with byte c (1 for a stray
 * continuation byte or an invalid lead: each counts as one unit). */
static size_t seq_len(unsigned char c)
{
    if (c >= 0xF0 && c <= 0xF4) return 4;
    if (c >= 0xE0) return c <= 0xEF ? 3 : 1;
    if (c >= 0xC2) return 2;
    return 1;
}

size_t cn_lsp_utf16_to_byte(const char *line, size_t len, size_t col)
{
    size_t off = 0, units = 0;
    while (off < len && units < col) {
        size_t n = seq_len((unsigned char)line[off]);
        if (off + n > len) n = len - off;
        units += n == 4 ? 2 : 1;   /* outside the BMP: a surrogate pair */
        off += n;
    }
    return off;
}

size_t cn_lsp_byte_to_utf16(const char *line, size_t len, size_t off)
{
    size_t at = 0, units = 0;
    if (off > len) off = len;
    while (at < off) {
        size_t n = seq_len((unsigned char)line[at]);
        units += n == 4 ? 2 : 1;
        at += n;
    }
    return units;
}

static int hex(char c)
{
    if (c >= '0' && c <= '9') return c - '0';
    c = (char)tolower((unsigned char)c);
    return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

char *cn_lsp_uri_to_path(const char *uri)
{
    const char *p;
    char *out, *o;
    if (uri == NULL || strncmp(uri, "file://", 7) != 0) return NULL;
    p = uri + 7;
    /* an authority: none, or this machine */
    if (strncmp(p, "localhost/", 10) == 0) p += 9;
    if (*p != '/') return NULL;
    if ((out = malloc(strlen(p) + 1)) == NULL) return NULL;
    for (o = out; *p && *p != '?' && *p != '#'; p++) {
        if (*p == '%') {
            int hi = hex(p[1]), lo = hi < 0 ? -1 : hex(p[2]);
            if (lo < 0 || (hi == 0 && lo == 0)) {
                free(out);
                return NULL;
            }
            *o++ = (char)(hi * 16 + lo);
            p += 2;
        } else {
            *o++ = *p;
        }
    }
    *o = '\0';
    return out;
}

char *cn_lsp_path_to_uri(const char *path)
{
    static const char digits[] = "0123456789ABCDEF";
    cn_buf b = CN_BUF_INIT;
    cn_buf_puts(&b, "file://");
    for (const unsigned char *p = (const unsigned char *)path; *p; p++) {
        if (isalnum(*p) || strchr("/-._~", *p) != NULL) {
            cn_buf_putc(&b, (char)*p);
        } else {
            char esc[3] = {'%', digits[*p >> 4], digits[*p & 15]};
            cn_buf_append(&b, esc, 3);
        }
    }
    return b.oom ? (cn_buf_free(&b), NULL) : cn_buf_steal(&b);
}
