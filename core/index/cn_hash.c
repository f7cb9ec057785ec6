/* SPDX-License-Identifier: Apache-2.0 */
/* A fast 64-bit non-cryptographic hash: four independent multiply-rotate
 * lanes over 32-byte stripes, then a tail and an avalanche.  Used for index
 * checksums and content fingerprints, where speed matters (an index is
 * verified on every open) and adversaries do not. */
#include <string.h>

#include "cn_idxfile.h"

#define P1 0x9E3779B185EBCA87ull
#define P2 0xC2B2AE3D27D4EB4Full
#define P3 0x165667B19E3779F9ull
#define P4 0x85EBCA77C2B2AE63ull

static inline uint64_t rotl(uint64_t x, int r)
{
    return (x << r) | (x >> (64 - r));
}

static inline uint64_t load64(const unsigned char *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
    return v;  /* little-endian hosts only: indexes are not portable across endianness */
}

static inline uint64_t lane(uint64_t acc, uint64_t in)
{
    acc ^= in * P2;
    acc = rotl(acc, 29);
    return acc * P1;
}

/* The tail (< 32 bytes) and the avalanche, shared by both forms. */
static uint64_t finish(uint64_t a, uint64_t b, uint64_t c, uint64_t d, uint64_t len, const unsigned char *p,
                       size_t n)
{
    uint64_t h = rotl(a, 1) ^ rotl(b, 7) ^ rotl(c, 12) ^ rotl(d, 18);
    h = (h ^ len) * P3;
    while (n >= 8) {
        h = lane(h, load64(p));
        p += 8;
        n -= 8;
    }
    while (n > 0) {
        h = (h ^ *p++) * P1;
        h = rotl(h, 11);
        n--;
    }
    h ^= h >> 33;
    h *= P2;
    h ^= h >> 29;
    h *= P3;
    h ^= h >> 32;
    return h;
}

uint64_t cn_hash64(const void *data, size_t len, uint64_t seed)
{
    const unsigned char *p = data;
    uint64_t a = seed ^ P1, b = seed ^ P2, c = seed ^ P3, d = seed ^ P4;
    size_t n = len;

    while (n >= 32) {
        a = lane(a, load64(p));
        b = lane(b, load64(p + 8));
        c = lane(c, load64(p + 16));
        d = lane(d, load64(p + 24));
        p += 32;
        n -= 32;
    }
    return finish(a, b, c, d, (uint64_t)len, p, n);
}

void cn_hash64_init(cn_hash64_state *s, uint64_t seed)
{
    s->a = seed ^ P1;
    s->b = seed ^ P2;
    s->c = seed ^ P3;
    s->d = seed ^ P4;
    s->len = 0;
    s->nbuf = 0;
}

static void stripe(cn_hash64_state *s, const unsigned char *p)
{
    s->a = lane(s->a, load64(p));
    s->b = lane(s->b, load64(p + 8));
    s->c = lane(s->c, load64(p + 16));
    s->d = lane(s->d, load64(p + 24));
}

void cn_hash64_update(cn_hash64_state *s, const void *data, size_t len)
{
    const unsigned char *p = data;
    s->len += len;
    if (s->nbuf > 0) {
        size_t take = 32 - s->nbuf < len ? 32 - s->nbuf : len;
        memcpy(s->buf + s->nbuf, p, take);
        s->nbuf += take;
        p += take;
        len -= take;
        if (s->nbuf < 32) return;
        stripe(s, s->buf);
        s->nbuf = 0;
    }
    while (len >= 32) {
        stripe(s, p);
        p += 32;
        len -= 32;
    }
    if (len > 0) memcpy(s->buf, p, len);
    s->nbuf = len;
}

uint64_t cn_hash64_final(const cn_hash64_state *s)
{
    return finish(s->a, s->b, s->c, s->d, s->len, s->buf, s->nbuf);
}
