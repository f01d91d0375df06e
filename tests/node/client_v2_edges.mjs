// Drives `toolwire acp` with the official TypeScript SDK's ACP v2 client
// (@agentclientprotocol/sdk 2.x, `experimental/v2`) through the edges of v2.
//
// Usage: node client_v2_edges.mjs PYTHON CWD EDGE ARGS...
// Spawns `PYTHON -m toolwire acp ARGS...` and, on one connection: initialize (version 2,
// advertising auth.terminal and elicitation.form; timed), session/new with the MCP test
// server EDGE (`python EDGE serve`), one prompt (every permission allowed, a form answered
// {name: "Ada"}), session/resume with an unknown replayFrom cursor, auth/logout. Prints
// one JSON line: {initialize, initializeMs, turnUpdates (how many of `updates` the turn
// sent), elicitations, updates, resume, logout, wire}; a request that fails is
// {error: {code, message}}. Other failures exit 1.
import { spawn } from "node:child_process";
import { Readable, Transform, Writable } from "node:stream";
import * as acp from "@agentclientprotocol/sdk/experimental/v2";

const [python, cwd, edge, ...args] = process.argv.slice(2);
const wire = [];

function lines(dir) {
  let partial = "";
  return new Transform({
    transform(chunk, _encoding, done) {
      partial += chunk.toString("utf8");
      const parts = partial.split("\n");
      partial = parts.pop();
      for (const line of parts) if (line.trim()) wire.push({ dir, msg: JSON.parse(line) });
      done(null, chunk);
    },
  });
}

async function outcome(promise) {
  try {
    return await promise;
  } catch (error) {
    return { error: { code: error.code, message: error.message, data: error.data } };
  }
}

const child = spawn(python, ["-m", "toolwire", "acp", ...args], {
  stdio: ["pipe", "pipe", "inherit"],
  env: process.env,
});
const out = lines("out");
const input = lines("in");
child.stdout.pipe(out);
input.pipe(child.stdin);
const stream = acp.ndJsonStream(Writable.toWeb(input), Readable.toWeb(out));
const updates = [];
const elicitations = [];
const result = await acp
  .client({ name: "toolwire-node-v2-edges" })
  .onNotification(acp.methods.client.session.update, ({ params }) => {
    updates.push(params.update);
  })
  .onRequest(acp.methods.client.session.requestPermission, () => {
    return { outcome: { outcome: "selected", optionId: "allow_once" } };
  })
  .onRequest(acp.methods.client.elicitation.create, ({ params }) => {
    elicitations.push(params);
    return { action: "accept", content: { name: "Ada" } };
  })
  .connectWith(stream, async (ctx) => {
    const began = performance.now();
    const initialize = await ctx.request(acp.methods.agent.initialize, {
      protocolVersion: acp.PROTOCOL_VERSION,
      info: { name: "toolwire-node-v2-edges", version: "0" },
      capabilities: { auth: { terminal: {} }, elicitation: { form: {} } },
    });
    const initializeMs = performance.now() - began;
    const mcpServers = [{ name: "edge", command: python, args: [edge, "serve"], env: [] }];
    const session = await ctx.request(acp.methods.agent.session.new, { cwd, mcpServers });
    const answer = await ctx.request(acp.methods.agent.session.prompt, {
      sessionId: session.sessionId,
      prompt: [{ type: "text", text: "Greet someone, then say hello" }],
    });
    const turnUpdates = updates.length; // what the turn sent; a replay would come after
    const resume = await outcome(
      ctx.request(acp.methods.agent.session.resume, {
        sessionId: session.sessionId,
        cwd,
        mcpServers: [],
        replayFrom: { type: "_toolwire_unknown_cursor" },
      }),
    );
    const logout = await outcome(ctx.request(acp.methods.agent.auth.logout, {}));
    return { initialize, initializeMs, turnUpdates, messageId: answer.messageId, resume, logout };
  });
input.end();
await new Promise((resolve) => child.on("exit", resolve));
process.stdout.write(JSON.stringify({ ...result, updates, elicitations, wire }) + "\n");
