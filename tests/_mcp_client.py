"""The official MCP SDK client as the gateway tests drive it: one stdio session per `async with`.

`session(command, env, errlog)` spawns `command` (a list: program and arguments) with exactly `env`,
initializes, and yields the `ClientSession`; `result_text(result)` joins a tool result's text blocks; `tools_of(s, name, limit)` waits for a tool to be listed.
"""
import asyncio, time
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


async def tools_of(s, name: str, limit: float) -> list[str]:
    "`tools/list` names once `name` is among them, or after `limit` seconds (an upstream slow to start joins later)."
    t0 = time.monotonic()
    while True:
        names = [t.name for t in (await s.list_tools()).tools]
        if name in names or time.monotonic() - t0 > limit: return names
        await asyncio.sleep(0.3)
