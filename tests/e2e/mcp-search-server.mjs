// A stdio MCP server with the seed's tool, search(jurisdiction, terms). Every call's arguments
// are appended as one JSON line to the file named by TOOLMEND_E2E_CALLS.
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { appendFileSync } from "node:fs";

const server = new Server({ name: "search", version: "1.0.0" }, { capabilities: { tools: {} } });

server.setRequestHandler(ListToolsRequestSchema, async () => ({
  tools: [
    {
      name: "search",
      description: "Search the regulation database",
      inputSchema: {
        type: "object",
        properties: {
          jurisdiction: { type: "string", enum: ["se", "no", "dk", "fi"], description: "Country code" },
          terms: { type: "array", items: { type: "string" }, description: "Search terms" },
        },
        required: ["jurisdiction", "terms"],
        additionalProperties: false,
      },
    },
  ],
}));

server.setRequestHandler(CallToolRequestSchema, async (request) => {
  appendFileSync(process.env.TOOLMEND_E2E_CALLS, JSON.stringify(request.params.arguments) + "\n");
  return { content: [{ type: "text", text: "3 results found" }] };
});

await server.connect(new StdioServerTransport());
