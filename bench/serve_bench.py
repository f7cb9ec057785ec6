#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Latency of the long-lived servers against a process per call.

    bench/serve_bench.py CODENIB REPO [--calls N]

On a compiled REPO, times (wall clock, in the client):
  - `codenib mcp`: tools/call bm25_search (top 20) cycling through
    bench/queries.txt, and tools/call locate with the same queries;
  - `codenib lsp`: workspace/symbol with each query's first word;
  - the peer: a cold `codenib run bm25_search` process per query (start,
    open, query, print), as an agent without a server would call it.
Every server call includes the check that the repository has not changed
since its index was built (a stat of every indexed file).  Prints p50/p99
of each and the ratio of the server's bm25_search p50 to the cold process.
"""
import argparse
import json
import os
import statistics
import subprocess
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100.0 * (len(xs) - 1))))]


def line(name, xs):
    print("   %-44s p50 %8.2f ms  p99 %8.2f ms  (%d calls)" % (name, pct(xs, 50), pct(xs, 99), len(xs)))


class Mcp:
    def __init__(self, argv):
        self.p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self.n = 0

    def call(self, method, params):
        self.n += 1
        self.p.stdin.write(json.dumps({"jsonrpc": "2.0", "id": self.n, "method": method, "params": params}) + "\n")
        self.p.stdin.flush()
        r = json.loads(self.p.stdout.readline())
        if "error" in r or r.get("result", {}).get("isError"):
            raise SystemExit("serve_bench: %s failed: %s" % (method, r))
        return r

    def close(self):
        self.p.stdin.close()
        self.p.wait()


class Lsp:
    def __init__(self, argv):
        self.p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        self.n = 0

    def call(self, method, params):
        self.n += 1
        body = json.dumps({"jsonrpc": "2.0", "id": self.n, "method": method, "params": params}).encode()
        self.p.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.p.stdin.flush()
        header = b""
        while not header.endswith(b"\r\n\r\n"):
            c = self.p.stdout.read(1)
            if not c:
                raise SystemExit("serve_bench: the LSP server ended")
            header += c
        length = int(header.split(b":")[1].split(b"\r")[0])
        r = json.loads(self.p.stdout.read(length))
        if "error" in r:
            raise SystemExit("serve_bench: %s failed: %s" % (method, r))
        return r

    def close(self):
        self.call("shutdown", None)
        body = b'{"jsonrpc":"2.0","method":"exit"}'
        self.p.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.p.stdin.close()
        self.p.wait()


def timed(fn, queries):
    out = []
    for q in queries:
        t = time.perf_counter()
        fn(q)
        out.append((time.perf_counter() - t) * 1000.0)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("codenib")
    ap.add_argument("repo")
    ap.add_argument("--calls", type=int, default=200)
    a = ap.parse_args()
    with open(os.path.join(HERE, "queries.txt")) as f:
        words = [l.strip() for l in f if l.strip()]
    queries = [words[i % len(words)] for i in range(a.calls)]
    with tempfile.TemporaryDirectory() as tmp:
        cache = os.path.join(tmp, "cache")
        subprocess.run([a.codenib, "compile", a.repo, "--cache-dir", cache, "--quiet"], check=True)
        print("== %s" % a.repo)

        mcp = Mcp([a.codenib, "mcp", "--repo", a.repo, "--cache-dir", cache, "--quiet"])
        mcp.call("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                "clientInfo": {"name": "bench", "version": "1"}})
        mcp.call("tools/list", {})
        bm25 = timed(lambda q: mcp.call("tools/call", {"name": "bm25_search", "arguments": {
            "query": q, "top_k": 20, "return_content": False}}), queries)
        locate = timed(lambda q: mcp.call("tools/call", {"name": "locate", "arguments": {"question": q}}),
                       queries[: max(1, a.calls // 4)])
        mcp.close()

        lsp = Lsp([a.codenib, "lsp", "--repo", a.repo, "--cache-dir", cache, "--quiet"])
        lsp.call("initialize", {"capabilities": {}})
        lsp.call("workspace/symbol", {"query": "warm"})
        sym = timed(lambda q: lsp.call("workspace/symbol", {"query": q.split()[0]}), queries)
        lsp.close()

        env = dict(os.environ, CODENIB_SKILLS_PATH="")
        cold = timed(lambda q: subprocess.run(
            [a.codenib, "run", "bm25_search", "--repo", a.repo, "--cache-dir", cache, "--args",
             json.dumps({"query": q, "top_k": 20, "return_content": False})],
            check=True, stdout=subprocess.DEVNULL, env=env), queries[: max(1, a.calls // 10)])

        line("mcp tools/call bm25_search (top 20)", bm25)
        line("mcp tools/call locate", locate)
        line("lsp workspace/symbol", sym)
        line("peer: cold `codenib run bm25_search` process", cold)
        print("   mcp bm25_search p50 / cold process p50: %.2f" % (pct(bm25, 50) / pct(cold, 50)))
        print("   mean mcp bm25_search %.2f ms" % statistics.mean(bm25))


if __name__ == "__main__":
    main()
