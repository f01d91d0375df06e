// Drives `toolwire acp` with the official TypeScript SDK's ACP v2 client
// (@agentclientprotocol/sdk 2.x, `experimental/v2`).
//
// Usage: node client_v2.mjs PYTHON CWD ARGS...
// Spawns `PYTHON -m toolwire acp ARGS...`, runs initialize (protocol version 2) ->
// session/new -> session/prompt (allowing every permission), then session/resume with
// replay in a second agent process on the same store, and prints one JSON line to
// stdout: {"initialize", "stopReason", "updates", "replayed", "permissions", "wire"}:
// `wire` is every line on each connection, {conn, dir: "in" (to the agent) | "out", msg}. Any failure exits 1.
import { spawn } from "node:child_process";
import { Readable, Transform, Writable } from "node:stream";
import * as acp from "@agentclientprotocol/sdk/experimental/v2";

const [python, cwd, ...args] = process.argv.slice(2);
const wire = [];

let connections = 0;

// Each line through `tee` is kept in `wire` as {conn, dir, msg}.
function lines(conn, dir) {
  let partial = "";
  return new Transform({
    transform(chunk, _encoding, done) {
      partial += chunk.toString("utf8");
      const parts = partial.split("\n");
      partial = parts.pop();
      for (const line of parts) if (line.trim()) wire.push({ conn, dir, msg: JSON.parse(line) });
      done(null, chunk);
    },
  });
}

function start() {
  const conn = connections++;
  const child = spawn(python, ["-m", "toolwire", "acp", ...args], {
    stdio: ["pipe", "pipe", "inherit"],
    env: process.env,
  });
  const out = lines(conn, "out");
  const input = lines(conn, "in");
  child.stdout.pipe(out);
  input.pipe(child.stdin);
  return { child, input, stream: acp.ndJsonStream(Writable.toWeb(input), Readable.toWeb(out)) };
}

async function run(body) {
  const updates = [];
  const permissions = [];
  const { child, input, stream } = start();
  const result = await acp
    .client({ name: "toolwire-node-v2-test" })
    .onNotification(acp.methods.client.session.update, ({ params }) => {
      updates.push(params.update);
    })
    .onRequest(acp.methods.client.session.requestPermission, ({ params }) => {
      permissions.push({ title: params.title, subject: params.subject });
      return { outcome: { outcome: "selected", optionId: "allow_once" } };
    })
    .connectWith(stream, async (ctx) => {
      const init = await ctx.request(acp.methods.agent.initialize, {
        protocolVersion: acp.PROTOCOL_VERSION,
        info: { name: "toolwire-node-v2-test", version: "0" },
        capabilities: {},
      });
      return { init, ...(await body(ctx)) };
    });
  input.end();
  await new Promise((resolve) => child.on("exit", resolve));
  return { ...result, updates, permissions };
}

const first = await run(async (ctx) => {
  const session = await ctx.request(acp.methods.agent.session.new, { cwd, mcpServers: [] });
  const answer = await ctx.request(acp.methods.agent.session.prompt, {
    sessionId: session.sessionId,
    prompt: [{ type: "text", text: "Fix the failing test" }],
  });
  return { sessionId: session.sessionId, messageId: answer.messageId };
});
const second = await run(async (ctx) => {
  await ctx.request(acp.methods.agent.session.resume, {
    sessionId: first.sessionId,
    cwd,
    mcpServers: [],
    replayFrom: { type: "start" },
  });
  return {};
});

process.stdout.write(
  JSON.stringify({
    initialize: first.init,
    sessionId: first.sessionId,
    messageId: first.messageId,
    updates: first.updates,
    permissions: first.permissions,
    replayed: second.updates,
    wire,
  }) + "\n",
);
