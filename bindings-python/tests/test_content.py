"""Content parts through the package: the constructors (a path, bytes, a file-like object, data
and http URLs), a prompt of parts and a tool's parts as the model receives them, the size
limit by provenance, and a placeholder said once on stderr."""
from __future__ import annotations

import asyncio
import base64
import io
from pathlib import Path
from typing import Any

import pytest

import toolnexus as tn
from toolnexus import content

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAgAAAAICAIAAABLbSncAAAAGUlEQVR42mP4z8AARwyrkBAVJZClkAEVJQBm3VpRJDtqMQAAAABJRU5ErkJggg=="
)
B64 = base64.b64encode(PNG).decode()


def test_constructors_read_at_the_edge_and_never_keep_a_path(tmp_path: Path) -> None:
    f = tmp_path / "shot.png"
    f.write_bytes(PNG)
    p = tn.image(f)
    assert (p.type, p.mimeType, p.data, p.url, p.name) == ("image", "image/png", B64, None, "shot.png")
    assert str(tmp_path) not in str(content.to_dict(p))
    assert tn.image(io.BytesIO(PNG), mime_type="image/png").data == B64
    with open(f, "rb") as fh:
        assert tn.image(fh).mimeType == "image/png"
    with pytest.raises(tn.ContentPartError, match="binary mode"):
        with open(f, encoding="latin-1") as th:
            tn.image(th)  # type: ignore[arg-type]
    assert tn.image(f"data:image/png;base64,{B64}").data == B64
    assert tn.file("https://x.test/y.pdf").url == "https://x.test/y.pdf"
    with pytest.raises(tn.ContentPartError, match=r'unknown file extension "\.xyz"'):
        tn.image(tmp_path / "thing.xyz")
    with pytest.raises(tn.ContentPartError, match="82 decoded bytes, over the maxPartBytes limit of 10"):
        tn.image(f, max_part_bytes=10)
    with pytest.raises(tn.ContentPartError, match="both data and url"):
        tn.part(type="image", mimeType="image/png", data=B64, url="https://x/y.png")
    assert tn.summarize(p) == {"type": "image", "mimeType": "image/png", "bytes": 82}
    assert content.describe_part(p) == "image (image/png, 82 bytes)"
    assert tn.encode_part(p, "anthropic")["source"]["media_type"] == "image/png"
    with pytest.raises(tn.UnsupportedPartError, match='no "anthropic" block shape for a audio part'):
        tn.encode_part(tn.audio(PNG, mime_type="audio/mpeg"), "anthropic")


def recorder(seen: list[dict], calls_tool: bool = False) -> Any:
    async def generate(req: dict) -> dict:
        seen.append(req)
        if calls_tool and len(seen) == 1:
            return {"tool_calls": [{"id": "c1", "name": "shot", "arguments": {}}]}
        return {"content": "seen"}

    return generate


def test_a_prompt_of_parts_reaches_the_model_in_order() -> None:
    seen: list[dict] = []
    c = tn.create_in_process_client(model="m", generate=recorder(seen))
    r = asyncio.run(c.run([tn.text("before"), tn.image(PNG, mime_type="image/png"), "after"]))
    sent = seen[0]["messages"][-1]["content"]
    assert [b["type"] for b in sent] == ["text", "image_url", "text"]
    assert r.messages[-2]["content"][1] == {"type": "image", "mimeType": "image/png", "data": B64}


def shot_tool() -> tn.Tool:
    def shot(ctx: tn.ToolContext) -> tn.ToolResult:
        """Takes a screenshot."""
        return tn.ToolResult(output="shot output", is_error=False, parts=[tn.image(PNG, mime_type="image/png")])

    return tn.define_tool(shot)


def test_a_tools_image_follows_its_tool_message_and_stays_canonical_in_the_transcript() -> None:
    seen: list[dict] = []
    c = tn.create_in_process_client(model="m", generate=recorder(seen, calls_tool=True))

    async def main() -> tn.RunResult:
        tk = await tn.create_toolkit(builtins=False, extra_tools=[shot_tool()])
        return await c.run("look", tk)

    r = asyncio.run(main())
    wire = seen[1]["messages"]
    assert wire[-2] == {"role": "tool", "tool_call_id": "c1", "content": "shot output"}
    assert wire[-1]["content"][0] == {"type": "text", "text": "Output of tool shot (c1):"}
    assert wire[-1]["content"][1]["image_url"]["url"] == f"data:image/png;base64,{B64}"
    tool_msg = next(m for m in r.messages if m["role"] == "tool")
    assert tool_msg["parts"] == [{"type": "image", "mimeType": "image/png", "data": B64}]


def test_over_the_limit_a_prompts_part_fails_and_a_tools_is_a_placeholder_said_once(capsys: Any) -> None:
    seen: list[dict] = []
    c = tn.create_in_process_client(model="m", generate=recorder(seen, calls_tool=True), max_part_bytes=10)
    with pytest.raises(tn.ContentPartError, match="over the maxPartBytes limit of 10"):
        asyncio.run(c.run([tn.image(PNG, mime_type="image/png")]))
    assert seen == []

    async def main() -> None:
        tk = await tn.create_toolkit(builtins=False, extra_tools=[shot_tool()])
        await c.run("look", tk)
        seen.clear()
        await c.run("again", tk)

    asyncio.run(main())
    assert "[unsupported image part (image/png, 82 bytes)]" in str(seen[1]["messages"])
    assert capsys.readouterr().err.count("over the maxPartBytes limit of 10") == 1


def test_on_unsupported_part_is_read_by_the_engine() -> None:
    with pytest.raises(tn.InvalidArgumentError, match="on_unsupported_part"):
        tn.create_in_process_client(model="m", generate=recorder([]), on_unsupported_part="drop")  # type: ignore[arg-type]
