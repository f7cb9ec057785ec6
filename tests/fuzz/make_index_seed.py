#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Turns real index files into a seed of the fuzz_index target.

    make_index_seed.py KIND INDEX_FILE [SHARD_FILE...] > seed

KIND is nodes, bm25, graph, records or reuse (the target's kind byte);
each file's sections are written as {u8 id, u32 size, bytes}, files
separated by a 0xff byte (see tests/fuzz/fuzz_index.c).  The container
(header, table, checksum) is left out: the target writes it again."""
import struct
import sys

KINDS = ["nodes", "bm25", "graph", "records", "reuse"]


def sections(path):
    data = open(path, "rb").read()
    count = struct.unpack_from("<I", data, 32)[0]
    out = b""
    for i in range(count):
        sid, _, off, size = struct.unpack_from("<IIQQ", data, 64 + 24 * i)
        if sid > 254:
            sys.exit("%s: section id %d does not fit the seed format" % (path, sid))
        out += struct.pack("<BI", sid, size) + data[off:off + size]
    return out


def main():
    if len(sys.argv) < 3 or sys.argv[1] not in KINDS:
        sys.exit(__doc__)
    seed = bytes([KINDS.index(sys.argv[1])]) + b"\xff".join(sections(p) for p in sys.argv[2:])
    sys.stdout.buffer.write(seed)


main()
