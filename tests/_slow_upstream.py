"""An MCP server on the official Python SDK (`mcp.server.MCPServer`) with one slow tool, for the gateway's
cancellation test: `sleep(seconds)` appends `start <seconds>`, then `finished <seconds>` or — when the SDK
delivers the client's `notifications/cancelled` and interrupts the handler — `cancelled <seconds>`, one line
each, to the file `$SLOW_UPSTREAM_LOG`. Run as `python tests/_slow_upstream.py` (stdio).
"""
import os

import anyio
from mcp.server import MCPServer

app = MCPServer('slow')


def note(line: str):
    with open(os.environ['SLOW_UPSTREAM_LOG'], 'a') as f: f.write(line + '\n')


@app.tool()
async def sleep(seconds: float) -> str:
    "Sleep `seconds` seconds, then say so."
    note(f'start {seconds:g}')
    try: await anyio.sleep(seconds)
    except anyio.get_cancelled_exc_class():
        note(f'cancelled {seconds:g}')
        raise
    note(f'finished {seconds:g}')
    return f'slept {seconds:g} s'


if __name__ == '__main__':
    app.run()
