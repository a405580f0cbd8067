"""An MCP server on the official Python SDK (`mcp`), for core/tests/mcp.rs.

    python py_server.py stdio
    python py_server.py http PORT      # streamable HTTP at http://127.0.0.1:PORT/mcp

Each tool exercises one mapping of the client: plain text, structured content, an error, an
image with no text, a crash in the middle of a call, a slow call, both elicitation modes, and
what reached the server (a header, an environment variable, the working directory).
"""
import asyncio
import os
import sys

from pydantic import BaseModel

from mcp.server.mcpserver import Context, Image, MCPServer
from mcp.server.mcpserver.exceptions import ToolError

server = MCPServer("py-fixture")

# A 1x1 PNG.
PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c63f8cf00000301010018dd8db00000000049454e44ae426082"
)


class Weather(BaseModel):
    city: str
    celsius: int


class Name(BaseModel):
    name: str


@server.tool(structured_output=False)
def echo(text: str) -> str:
    """Echo the text back."""
    return text


@server.tool()
def weather(city: str) -> Weather:
    """Structured weather for a city."""
    return Weather(city=city, celsius=21)


@server.tool(structured_output=False)
def fail(reason: str) -> str:
    """Always fails with the reason."""
    raise ToolError(reason)


@server.tool(structured_output=False)
def picture() -> Image:
    """An image and no text."""
    return Image(data=PNG, format="png")


@server.tool(structured_output=False)
def crash() -> str:
    """The process dies in the middle of the call."""
    os._exit(3)


@server.tool(structured_output=False)
async def slow(seconds: float) -> str:
    """Answers after a while."""
    await asyncio.sleep(seconds)
    return "slept"


@server.tool(structured_output=False)
async def ask_name(ctx: Context) -> str:
    """Asks the user for a name (form elicitation)."""
    r = await ctx.elicit("Your name?", Name)
    if r.action == "accept":
        return f"Hello {r.data.name}"
    return f"no name: {r.action}"


@server.tool(structured_output=False)
async def login(ctx: Context) -> str:
    """Sends the user to a login page (URL elicitation)."""
    r = await ctx.elicit_url("Log in to continue", "https://auth.example/login", "login-1")
    return f"login: {r.action}"


@server.tool(structured_output=False)
def header(name: str, ctx: Context) -> str:
    """The value of a request header (HTTP only)."""
    return (ctx.headers or {}).get(name.lower(), "<none>")


@server.tool(structured_output=False)
def env(name: str) -> str:
    """The value of an environment variable."""
    return os.environ.get(name, "<unset>")


@server.tool(structured_output=False)
def cwd() -> str:
    """The working directory."""
    return os.getcwd()


if __name__ == "__main__":
    if sys.argv[1:2] == ["http"]:
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        server.run("stdio")
