#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Retrieval quality of bm25_search, embedding_search (embed-local) and
hybrid_search on the localization dev set, side by side.

    bench/embed_bench.py --codenib BUILD/core/codenib --dataset DEV.jsonl \
        --mirrors DIR [--limit N] [--work DIR] [--jobs N]

For each instance: the tree at base_commit is taken from the bare mirror
(DIR/<owner>+<name>/repo, `git archive`), keeping the non-test .py files the
dataset README names; it is compiled with `--index bm25,vector`; each skill
is asked the problem statement (top 50, names only); the ranked nodes become
ranked files, modules (path.py:TopLevel) and entities (path.py:Class.method,
nested functions folded into the outermost one) and are scored with Acc@k
as the dataset README defines it.  The embed-local training time is the
compile's "vectors" stage.

This is a benchmark tool (python3 from Debian), not part of the build; the
scorer of `codenib eval` supersedes its scoring once it exists.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import time

SKILLS = ["bm25_search", "embedding_search", "hybrid_search"]
LEVELS = [("file", "found_files", [1, 3, 5]), ("module", "found_modules", [5, 10]),
          ("function", "found_entities", [5, 10])]
TEST_DIRS = {"test", "tests", "testing"}


def is_indexed(path):
    """Non-test .py files (the dataset README's rule)."""
    if not path.endswith(".py"):
        return False
    parts = path.split("/")
    base = parts[-1]
    if any(p in TEST_DIRS for p in parts[:-1]):
        return False
    return not (base.startswith("test_") or base.endswith("_test.py") or base == "conftest.py")


def materialise(mirror, commit, dest):
    """The indexed files of commit, read blob by blob: a mirror may lack
    some large objects (data files), which `git archive` cannot skip."""
    if os.path.isdir(dest):
        return
    tree = subprocess.run(["git", "--git-dir", mirror, "ls-tree", "-r", "-z", commit],
                          check=True, capture_output=True).stdout.split(b"\0")
    blobs = []
    for entry in tree:
        if not entry:
            continue
        meta, _, path = entry.partition(b"\t")
        mode, kind, oid = meta.split()
        path = path.decode("utf-8", "replace")
        if kind == b"blob" and mode in (b"100644", b"100755") and is_indexed(path):
            blobs.append((oid.decode(), path))
    tmp = dest + ".tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    cat = subprocess.run(["git", "--git-dir", mirror, "cat-file", "--batch"],
                         input=b"".join(o.encode() + b"\n" for o, _ in blobs),
                         check=True, capture_output=True).stdout
    pos = 0
    for oid, path in blobs:
        header_end = cat.index(b"\n", pos)
        header = cat[pos:header_end].split()
        pos = header_end + 1
        if len(header) < 3 or header[1] == b"missing":
            continue
        size = int(header[2])
        data = cat[pos:pos + size]
        pos += size + 1
        out = os.path.join(tmp, path)
        os.makedirs(os.path.dirname(out), exist_ok=True)
        with open(out, "wb") as f:
            f.write(data)
    os.rename(tmp, dest)


def to_levels(nodes):
    files, modules, entities = [], [], []
    for n in nodes:
        name = n.get("node_name") or ""
        path, _, qual = name.partition(":")
        if not path:
            continue
        if path not in files:
            files.append(path)
        if not qual or qual.startswith("<"):
            continue
        parts = qual.split(".")
        mod = path + ":" + parts[0]
        if mod not in modules:
            modules.append(mod)
        # a class's method keeps Class.method; anything nested deeper folds
        # into its outermost function (classes are capitalised by convention)
        keep = 2 if len(parts) > 1 and parts[0][:1].isupper() else 1
        ent = path + ":" + ".".join(parts[:keep])
        if ent not in entities:
            entities.append(ent)
    return {"found_files": files, "found_modules": modules, "found_entities": entities}


def gold(row, level):
    out = []
    for fc in row["gt_file_changes"]:
        if level == "file":
            out.append(fc["file"])
            continue
        for e in fc["changes"].get("edited_entities", []):
            if level == "function":
                out.append(e)
            else:
                f, _, n = e.partition(":")
                m = f + ":" + n.split(".")[0]
                if m not in out:
                    out.append(m)
    return out


def acc(rows, preds):
    res = {}
    for level, key, ks in LEVELS:
        n, hits = 0, {k: 0 for k in ks}
        for row in rows:
            g = gold(row, level)
            if not g:
                continue
            n += 1
            p = preds.get(row["instance_id"], {}).get(key, [])
            for k in ks:
                if sum(1 for x in p[:k] if x in g) == min(len(g), k):
                    hits[k] += 1
        for k in ks:
            res[f"{level}@{k}"] = hits[k] / n if n else float("nan")
    return res


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--codenib", required=True)
    ap.add_argument("--dataset", required=True)
    ap.add_argument("--mirrors", required=True)
    ap.add_argument("--work", default="/tmp/codenib-embed-bench")
    ap.add_argument("--limit", type=int, default=0)
    ap.add_argument("--embedder-config", default="{}")
    ap.add_argument("--hybrid-args", default="{}", help="extra hybrid_search arguments (weights, rrf_k)")
    a = ap.parse_args()
    rows = [json.loads(l) for l in open(a.dataset) if l.strip()]
    if a.limit:
        rows = rows[: a.limit]
    os.makedirs(a.work, exist_ok=True)
    env = dict(os.environ, CODENIB_HOME=os.path.join(a.work, "home"))
    preds = {s: {} for s in SKILLS}
    fit_seconds, compile_seconds = [], []
    for i, row in enumerate(rows, 1):
        owner_name = row["repo"].replace("/", "+")
        tree = os.path.join(a.work, "trees", owner_name + "@" + row["base_commit"][:12])
        cache = tree + ".cache"
        materialise(os.path.join(a.mirrors, owner_name, "repo"), row["base_commit"], tree)
        t0 = time.time()
        out = subprocess.run([a.codenib, "compile", tree, "--cache-dir", cache, "--index", "bm25,vector",
                              "--embedder-config", a.embedder_config, "--json", "--quiet"],
                             env=env, capture_output=True, text=True)
        if out.returncode != 0:
            sys.exit(f"compile of {tree} failed: {out.stderr.strip()}")
        compile_seconds.append(time.time() - t0)
        fit_seconds.append(json.loads(out.stdout).get("stage_seconds", {}).get("vectors", 0.0))
        for s in SKILLS:
            args = {"query": row["problem_statement"], "top_k": 50, "names_only": True}
            if s == "hybrid_search":
                args.update(json.loads(a.hybrid_args))
            args = json.dumps(args)
            r = subprocess.run([a.codenib, "run", s, "--repo", tree, "--cache-dir", cache, "--args", "-"],
                               input=args, env=env, capture_output=True, text=True)
            if r.returncode != 0:
                sys.exit(f"{s} on {row['instance_id']} failed: {r.stderr.strip()}")
            preds[s][row["instance_id"]] = to_levels(json.loads(r.stdout))
        print(f"[{i}/{len(rows)}] {row['instance_id']}: compile {compile_seconds[-1]:.1f} s, "
              f"vectors stage {fit_seconds[-1]:.1f} s", file=sys.stderr)
    cols = ["file@1", "file@3", "file@5", "module@5", "module@10", "function@5", "function@10"]
    print(f"n = {len(rows)} instances; vectors stage (embed-local fit + embed) median "
          f"{sorted(fit_seconds)[len(fit_seconds) // 2]:.2f} s, max {max(fit_seconds):.2f} s")
    print("| method | " + " | ".join(cols) + " |")
    print("|---|" + "---|" * len(cols))
    print("| reference BM25 (ref_bm25_dev.jsonl) | 0.3231 | 0.5385 | 0.6615 | 0.3692 | 0.4615 | 0.2000 | 0.2769 |")
    for s in SKILLS:
        r = acc(rows, preds[s])
        print(f"| codenib {s} | " + " | ".join(f"{r[c]:.4f}" for c in cols) + " |")


if __name__ == "__main__":
    main()
