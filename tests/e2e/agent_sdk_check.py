"""The seed's exact setup: the Python Agent SDK with an in-process create_sdk_mcp_server tool
search(jurisdiction, terms), ANTHROPIC_BASE_URL pointing at toolmend through
ClaudeAgentOptions(env=...). Prints the arguments the tool function received, as JSON.

Usage: agent_sdk_check.py PROXY_URL CLAUDE_CLI_PATH
PROXY_URL "-" sets none of toolmend's variables: they come from the environment
(`toolmend run -- python agent_sdk_check.py - CLI`)."""
import json
import sys

import anyio
from claude_agent_sdk import ClaudeAgentOptions, create_sdk_mcp_server, query, tool

PROXY, CLI = sys.argv[1], sys.argv[2]
received = []


@tool("search", "Search the regulation database", {
    "type": "object",
    "properties": {
        "jurisdiction": {"type": "string", "enum": ["se", "no", "dk", "fi"]},
        "terms": {"type": "array", "items": {"type": "string"}},
    },
    "required": ["jurisdiction", "terms"],
})
async def search(args):
    received.append(args)
    return {"content": [{"type": "text", "text": "3 results found"}]}


env = {
    "ANTHROPIC_API_KEY": "sk-ant-agent-sdk-test",
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    "DISABLE_AUTOUPDATER": "1",
}
if PROXY != "-":
    env.update({
        "ANTHROPIC_BASE_URL": PROXY,
        "CLAUDE_CODE_ENABLE_FINE_GRAINED_TOOL_STREAMING": "1",
        "ENABLE_TOOL_SEARCH": "false",
    })


async def main():
    server = create_sdk_mcp_server(name="search", version="1.0.0", tools=[search])
    options = ClaudeAgentOptions(
        mcp_servers={"search": server},
        allowed_tools=["mcp__search__search"],
        max_turns=3,
        cli_path=CLI,
        env=env,
    )
    async for _ in query(prompt="Search the Swedish rules on token machine payout percentage.", options=options):
        pass


anyio.run(main)
print(json.dumps(received))
