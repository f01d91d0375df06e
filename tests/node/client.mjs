// Drives `toolwire acp` with the official TypeScript ACP SDK (@agentclientprotocol/sdk 2.x).
//
// Usage: node client.mjs PYTHON CASSETTE CWD
// Spawns `PYTHON -m toolwire acp --backend replay:CASSETTE`, runs initialize ->
// session/new -> session/prompt (allowing every permission), and prints one JSON line
// to stdout: {"stopReason", "updates": [...], "permissions": [...]}. Any failure exits 1.
import { spawn } from "node:child_process";
import { Readable, Writable } from "node:stream";
import * as acp from "@agentclientprotocol/sdk";

const [python, cassette, cwd] = process.argv.slice(2);
const child = spawn(python, ["-m", "toolwire", "acp", "--backend", `replay:${cassette}`], {
  stdio: ["pipe", "pipe", "inherit"],
  env: process.env,
});

const updates = [];
const permissions = [];
const stream = acp.ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout));

const result = await acp
  .client({ name: "toolwire-node-test" })
  .onNotification(acp.methods.client.session.update, ({ params }) => {
    updates.push(params.update);
  })
  .onRequest(acp.methods.client.session.requestPermission, ({ params }) => {
    permissions.push(params.toolCall.toolCallId);
    return { outcome: { outcome: "selected", optionId: "allow_once" } };
  })
  .connectWith(stream, async (ctx) => {
    const init = await ctx.request(acp.methods.agent.initialize, {
      protocolVersion: acp.PROTOCOL_VERSION,
      clientCapabilities: {},
      clientInfo: { name: "toolwire-node-test", version: "0" },
    });
    if (init.agentInfo?.name !== "toolwire") throw new Error("unexpected agentInfo");
    const session = await ctx.request(acp.methods.agent.session.new, { cwd, mcpServers: [] });
    const answer = await ctx.request(acp.methods.agent.session.prompt, {
      sessionId: session.sessionId,
      prompt: [{ type: "text", text: "Say hello" }],
    });
    return { stopReason: answer.stopReason, sessionId: session.sessionId };
  });

child.stdin.end();
process.stdout.write(JSON.stringify({ ...result, updates, permissions }) + "\n");
await new Promise((resolve) => child.on("exit", resolve));
