// SPDX-License-Identifier: Apache-2.0
// codenib's MCP server driven by the official MCP TypeScript SDK's client
// (@modelcontextprotocol/sdk, pinned in tests/interop/package.json): the
// SDK checks every message against the protocol's schemas, so a server
// that strays from them fails here.  Prints TAP.
//
//   node mcp_client.mjs CLIENT_DIR REPO CACHE -- COMMAND [ARGS...]
//
// CLIENT_DIR holds the installed SDK (node_modules); COMMAND starts the
// server (codenib, or valgrind around it).
import { createRequire } from "node:module";
import { pathToFileURL } from "node:url";
import path from "node:path";

const [clientDir, repo, cache, sep, command, ...args] = process.argv.slice(2);
if (!clientDir || !repo || !cache || sep !== "--" || !command) {
  console.log("Bail out! usage: mcp_client.mjs CLIENT_DIR REPO CACHE -- COMMAND [ARGS...]");
  process.exit(2);
}
const req = createRequire(path.join(clientDir, "package.json"));
const load = async (name) => import(pathToFileURL(req.resolve(name)).href);
const { Client } = await load("@modelcontextprotocol/sdk/client/index.js");
const { StdioClientTransport } = await load("@modelcontextprotocol/sdk/client/stdio.js");
// the JSON Schema validator the SDK itself depends on
const AjvModule = await load("ajv");
const Ajv = AjvModule.default || AjvModule.Ajv || AjvModule;

let n = 0, failed = 0;
const ok = (cond, what, detail) => {
  n++;
  if (cond) console.log(`ok ${n} - ${what}`);
  else {
    failed++;
    console.log(`not ok ${n} - ${what}`);
    if (detail !== undefined) console.log(`# ${String(detail).split("\n").join("\n# ")}`);
  }
};
const textOf = (r) => (r && r.content && r.content[0] && r.content[0].text) || "";

const transport = new StdioClientTransport({
  command,
  args: [...args, "mcp", "--repo", repo, "--cache-dir", cache, "--quiet"],
  stderr: "inherit",
});
const client = new Client({ name: "codenib-interop-test", version: "1.0.0" });
let connectError;
try {
  await client.connect(transport);
} catch (e) {
  connectError = e;
}
ok(connectError === undefined, "the SDK's client connects (initialize, initialized)", connectError && connectError.stack);
if (connectError === undefined) try {
  const info = client.getServerVersion();
  ok(info && info.name === "codenib", "serverInfo names codenib", JSON.stringify(info));
  ok(client.getServerCapabilities().tools !== undefined, "the tools capability is declared");
  ok(/locate/.test(client.getInstructions() || ""), "the instructions name locate");

  const { tools } = await client.listTools();
  const names = tools.map((t) => t.name);
  ok(["locate", "read", "grep", "glob", "bm25_search", "lsp_definition"].every((x) => names.includes(x)),
     "tools/list passes the SDK's schema and offers locate, read, grep, glob and the skills", names.join(", "));
  ok(tools.every((t) => t.inputSchema && t.inputSchema.type === "object"), "every tool's inputSchema is an object");

  // every inputSchema compiles, refuses undeclared arguments, and each
  // default is valid under its own property's schema (a "default": null
  // on a type that refuses null is not)
  const ajv = new Ajv({ strict: false, allErrors: true });
  const schemaProblems = [];
  for (const t of tools) {
    try {
      ajv.compile(t.inputSchema);
    } catch (e) {
      schemaProblems.push(`${t.name}: ${e.message}`);
      continue;
    }
    if (t.inputSchema.additionalProperties !== false) schemaProblems.push(`${t.name}: takes undeclared arguments`);
    for (const [k, p] of Object.entries(t.inputSchema.properties || {})) {
      if (!("default" in p)) continue;
      const { default: d, ...rest } = p;
      if (!ajv.validate(rest, d)) schemaProblems.push(`${t.name}.${k}: default ${JSON.stringify(d)} ${ajv.errorsText()}`);
    }
  }
  ok(schemaProblems.length === 0, "every inputSchema compiles, is closed, and its defaults are valid under it",
     schemaProblems.join("\n"));
  const refs = tools.find((t) => t.name === "lsp_references");
  ok(refs && refs.inputSchema.properties.top_k.maximum === 500 && refs.inputSchema.properties.offset !== undefined,
     "lsp_references' schema has top_k's bounds and the paging offset", refs && JSON.stringify(refs.inputSchema));

  let r = await client.callTool({ name: "locate", arguments: { question: "x", max_files: 0 } });
  ok(r.isError === true && /max_files/.test(textOf(r)), "bad locate arguments: a tool error naming them, not a protocol error",
     textOf(r));
  r = await client.callTool({ name: "grep", arguments: { pattern: "def", recursive: true } });
  ok(r.isError === true && /unknown argument 'recursive'/.test(textOf(r)), "grep refuses an argument it does not take",
     textOf(r));
  r = await client.callTool({ name: "locate", arguments: { question: "ConnectionPool.get fails in _check when size is an int" } });
  ok(!r.isError && /Files: pkg\/pool\.py/.test(textOf(r)), "locate answers through the SDK", textOf(r));
  r = await client.callTool({ name: "bm25_search", arguments: { query: "pool size", top_k: 3 } });
  ok(!r.isError && JSON.parse(textOf(r)).some((h) => h.file === "pkg/pool.py"), "bm25_search's JSON comes back", textOf(r));
  r = await client.callTool({ name: "read", arguments: { path: "pkg/pool.py", limit: 1 } });
  ok(!r.isError && /from pkg\.base import Base/.test(textOf(r)), "read", textOf(r));
  r = await client.callTool({ name: "read", arguments: { path: "/etc/passwd" } });
  ok(r.isError === true, "a refused read is a tool error, not a protocol error", textOf(r));
  let threw = false;
  try {
    await client.callTool({ name: "no_such_tool", arguments: {} });
  } catch (e) {
    threw = /no_such_tool/.test(String(e && e.message));
  }
  ok(threw, "an unknown tool is a JSON-RPC error naming it");
  const pong = await client.ping();
  ok(pong !== null && typeof pong === "object" && Object.keys(pong).length === 0, "ping: an empty result",
     JSON.stringify(pong));
} catch (e) {
  ok(false, "the session runs to its end", e && e.stack ? e.stack : e);
}
// The end of input ends the server: its exit status is a test point
// (valgrind's 97 for a memory error included), so the process is closed
// here rather than by client.close(), which kills what does not exit in 2 s.
const child = transport._process;
if (child) {
  const closed = new Promise((resolve) => child.once("close", resolve));
  child.stdin.end();
  await closed;
  ok(child.exitCode === 0, "the server exits 0 at the end of its input", `exit code ${child.exitCode}, signal ${child.signalCode}`);
} else {
  ok(false, "the server process can be watched (StdioClientTransport._process)");
}
await client.close().catch(() => {});
console.log(`1..${n}`);
process.exit(failed ? 1 : 0);
