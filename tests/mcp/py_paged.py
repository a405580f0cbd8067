"""A low-level MCP server on the official Python SDK whose tools/list comes in pages of
two (`nextCursor`), for core/tests/mcp.rs: `python py_paged.py`, over stdio."""
import anyio

import mcp.types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

NAMES = ["t0", "t1", "t2", "t3", "t4"]
PAGE = 2


async def list_tools(ctx, params):
    start = int(params.cursor) if params is not None and params.cursor else 0
    tools = [
        types.Tool(name=n, description=f"tool {n}", input_schema={"type": "object"})
        for n in NAMES[start : start + PAGE]
    ]
    end = start + PAGE
    return types.ListToolsResult(tools=tools, next_cursor=str(end) if end < len(NAMES) else None)


async def call_tool(ctx, params):
    return types.CallToolResult(content=[types.TextContent(type="text", text=f"called {params.name}")])


server = Server("py-paged", on_list_tools=list_tools, on_call_tool=call_tool)


async def main():
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


if __name__ == "__main__":
    anyio.run(main)
