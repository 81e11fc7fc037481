// The official MCP TypeScript SDK's client, driven by skillgate's Go tests
// (gateway/mcp_test.go over Streamable HTTP, cmd/skillgate/mcp_test.go over
// stdio through a real `skillgate mcp` process). It runs one scenario and
// writes what the server answered, one JSON object a line on stdout; the Go
// test judges it. Nothing here decides whether skillgate is right.
//
//   node client.mjs '{"transport": "http", "url": "http://127.0.0.1:PORT/mcp", "token": "…",
//                     "search": "notes", "load": "notes", "file": {"name": "notes", "path": "scripts/run.sh"},
//                     "unavailable": ["github", "tool"], "resource": "skill://main/skills/notes/SKILL.md",
//                     "otherResource": "skill://other/skills/secret/SKILL.md", "waitChange": true}'
//   node client.mjs '{"transport": "stdio", "command": "/path/skillgate", "args": ["mcp", …], "env": {…}, …}'
//
// With waitChange it writes {"step": "ready"} and waits (at most 30 s) for
// notifications/resources/list_changed, then lists the skills again.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ResourceListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";

const cfg = JSON.parse(process.argv[2]);
const out = (obj) => process.stdout.write(JSON.stringify(obj) + "\n");

let transport;
if (cfg.transport === "http") {
  const headers = cfg.token ? { Authorization: `Bearer ${cfg.token}` } : {};
  transport = new StreamableHTTPClientTransport(new URL(cfg.url), { requestInit: { headers } });
} else {
  transport = new StdioClientTransport({ command: cfg.command, args: cfg.args, env: cfg.env, stderr: "inherit" });
}

const client = new Client({ name: "skillgate-test-ts-client", version: "1.0.0" }, { capabilities: {} });
let changed = 0;
let onChange = null;
client.setNotificationHandler(ResourceListChangedNotificationSchema, () => {
  changed++;
  if (onChange) onChange();
});

// call runs one request and records its answer or its error.
async function call(step, f) {
  try {
    out({ step, result: await f() });
  } catch (e) {
    out({ step, error: { message: String(e && e.message), code: e && e.code } });
  }
}

try {
  await client.connect(transport);
  out({ step: "initialize", capabilities: client.getServerCapabilities(), server: client.getServerVersion() });
  await call("tools/list", () => client.listTools());
  await call("list_skills", () => client.callTool({ name: "list_skills", arguments: {} }));
  if (cfg.search) await call("search_skills", () => client.callTool({ name: "search_skills", arguments: { query: cfg.search, limit: 5 } }));
  if (cfg.load) await call("load_skill", () => client.callTool({ name: "load_skill", arguments: { name: cfg.load } }));
  if (cfg.file) await call("read_skill_file", () => client.callTool({ name: "read_skill_file", arguments: cfg.file }));
  for (const name of cfg.unavailable || []) {
    await call("unavailable:" + name, () => client.callTool({ name: "load_skill", arguments: { name } }));
  }
  await call("resources/list", () => client.listResources());
  if (cfg.resource) await call("resources/read", () => client.readResource({ uri: cfg.resource }));
  if (cfg.otherResource) await call("resources/read:other", () => client.readResource({ uri: cfg.otherResource }));
  await call("prompts/list", () => client.listPrompts());
  await call("prompts/get", () => client.getPrompt({ name: "available_skills" }));
  if (cfg.waitChange) {
    const before = changed;
    const got = new Promise((resolve) => {
      onChange = resolve;
      if (changed > before) resolve();
    });
    out({ step: "ready" });
    const timeout = new Promise((resolve) => setTimeout(() => resolve("timeout"), 30000));
    const r = await Promise.race([got, timeout]);
    out({ step: "list_changed", received: r !== "timeout", count: changed });
    await call("list_skills:after", () => client.callTool({ name: "list_skills", arguments: {} }));
    await call("resources/list:after", () => client.listResources());
  }
  await client.close();
  out({ step: "done" });
  process.exit(0);
} catch (e) {
  out({ step: "fatal", error: String(e && e.stack) });
  process.exit(1);
}
