/* SPDX-License-Identifier: Apache-2.0 */
/* Little-endian integers in byte buffers, for backends that write their
 * own file formats (embed-local's state, vec-flat's store): the files read
 * the same on every host whatever its byte order or alignment rules. */
#ifndef CN_BYTES_H
#define CN_BYTES_H

#include <stdint.h>

static inline void cn_put_u32(unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++) p[i] = (unsigned char)(v >> (8 * i));
}

static inline void cn_put_u64(unsigned char *p, uint64_t v)
{
    for (int i = 0; i < 8; i++) p[i] = (unsigned char)(v >> (8 * i));
}

static inline uint32_t cn_get_u32(const unsigned char *p)
{
    uint32_t v = 0;
    for (int i = 0; i < 4; i++) v |= (uint32_t)p[i] << (8 * i);
    return v;
}

static inline uint64_t cn_get_u64(const unsigned char *p)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++) v |= (uint64_t)p[i] << (8 * i);
    return v;
}

static inline uint64_t cn_rotl64(uint64_t x, int r)
{
    return (x << r) | (x >> (64 - r));
}

#endif /* CN_BYTES_H */
