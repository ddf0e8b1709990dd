// A real MCP client on the TypeScript SDK, driven by the tests: connects, calls one tool, answers elicitations.
// Usage: node ts_client.mjs '<json config>'; prints one JSON line: {tools, result, elicitations, protocol}.
// Config: {transport: "stdio"|"http", command, args, url, token?, tool, arguments, answers: [ElicitResult, ...]}
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';

const config = JSON.parse(process.argv[2]);
const client = new Client({ name: 'ts-test-client', version: '1.0.0' }, { capabilities: { elicitation: { form: {} } } });
const elicitations = [];
client.setRequestHandler(ElicitRequestSchema, async (request) => {
  elicitations.push(request.params);
  return config.answers.shift() ?? { action: 'cancel' };
});
const transport =
  config.transport === 'stdio'
    ? new StdioClientTransport({ command: config.command, args: config.args, env: process.env, stderr: 'inherit' })
    : new StreamableHTTPClientTransport(new URL(config.url), {
        requestInit: config.token ? { headers: { Authorization: `Bearer ${config.token}` } } : undefined,
      });
await client.connect(transport);
const tools = await client.listTools();
const result = await client.callTool({ name: config.tool, arguments: config.arguments ?? {} }, undefined, {
  timeout: 600000,
});
console.log(JSON.stringify({ tools: tools.tools, result, elicitations, protocol: transport.protocolVersion ?? null }));
await client.close();
