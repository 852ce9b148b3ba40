"""The official MCP SDK client as the gateway tests drive it: one stdio session per `async with`.

`session(command, env, errlog)` spawns `command` (a list: program and arguments) with exactly `env`,
initializes, and yields the `ClientSession`; `result_text(result)` joins a tool result's text blocks.
"""
from contextlib import asynccontextmanager

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client


@asynccontextmanager
async def session(command: list[str], env: dict, errlog, on_message=None):
    "An initialized `ClientSession` on `command`'s stdio; `on_message` receives server notifications and requests."
    params = StdioServerParameters(command=command[0], args=command[1:], env=env)
    async with stdio_client(params, errlog=errlog) as (r, w):
        async with ClientSession(r, w, message_handler=on_message) as s:
            await s.initialize()
            yield s


def result_text(result) -> str:
    "The text of a `CallToolResult`: its text content blocks joined, other blocks skipped."
    return ''.join(b.text for b in result.content if b.type == 'text')
