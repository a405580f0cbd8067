"""Translation (SPEC §11) through the package: one call, the OpenAI shape back, no tool run."""
from __future__ import annotations

import asyncio
import json

import pytest

import toolnexus as tn
from toolnexus.translate import openai_messages_to_anthropic, openai_tool_choice_to_anthropic

from .mock import MockModel, anthropic_calls, openai_text


def weather() -> list[dict]:
    return [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}]


def test_an_anthropic_turn_comes_back_openai_shaped(mock: MockModel) -> None:
    ran: list[str] = []

    def add(a: int) -> str:
        """Add."""
        ran.append("add")
        return str(a)

    async def main() -> tn.TranslateResult:
        tk = await tn.create_toolkit(builtins=False, extra_tools=[tn.define_tool(add)])
        c = tn.create_client(base_url=mock.url(), style="anthropic", model="m", api_key="k")
        return await c.translate(
            [{"role": "system", "content": "Brief."}, {"role": "user", "content": "go"}],
            tools=weather(), toolkit=tk, tool_choice="required", max_tokens=77,
        )

    mock.script([anthropic_calls(("t1", "add", {"a": 2}), ("t2", "get_weather", {"city": "X"}))])
    r = asyncio.run(main())
    assert isinstance(r, tn.TranslateResult) and r.finish_reason == "tool_calls"
    assert [(c.id, c.name, json.loads(c.arguments)) for c in r.tool_calls] == [
        ("t1", "add", {"a": 2}), ("t2", "get_weather", {"city": "X"})]
    assert r.tool_calls_json()[0] == {"id": "t1", "type": "function", "function": {"name": "add", "arguments": '{"a":2}'}}
    assert r.usage == {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5} and r.model == "m"
    assert ran == [], "translate runs no tool"
    body = mock.seen[0]["body"]
    assert body["system"] == "Brief." and body["max_tokens"] == 77 and body["tool_choice"] == {"type": "any"}
    assert [t["name"] for t in body["tools"]] == ["add", "get_weather"]
    assert len(mock.seen) == 1


def test_bad_input_raises_before_sending(mock: MockModel) -> None:
    c = tn.create_client(base_url=mock.url("/v1"), style="openai", model="m", api_key="k")
    both = {"type": "image", "mimeType": "image/png", "data": "AA==", "url": "https://x.test/a.png"}
    with pytest.raises(tn.ContentPartError, match="both data and url"):
        asyncio.run(c.translate([{"role": "user", "content": [both]}]))
    with pytest.raises(tn.InvalidArgumentError, match="tools"):
        asyncio.run(c.translate([], tools={"x": 1}))  # type: ignore[arg-type]
    assert mock.seen == []


def test_parts_go_out_as_openai_blocks(mock: MockModel) -> None:
    mock.script([openai_text("a square")])
    c = tn.create_client(base_url=mock.url("/v1"), style="openai", model="m", api_key="k")
    part = tn.image(b"\x89PNG", mime_type="image/png")
    r = asyncio.run(c.translate([{"role": "user", "content": [tn.content.to_dict(part)]}]))
    assert r.text == "a square"
    sent = mock.seen[0]["body"]["messages"][0]["content"][0]
    assert sent == {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw=="}}


def test_the_mappings_are_the_engines() -> None:
    msgs, system = openai_messages_to_anthropic([
        {"role": "developer", "content": "D."},
        {"role": "tool", "tool_call_id": "a", "content": "1"},
        {"role": "tool", "tool_call_id": "b", "content": "2"},
    ])
    assert system == "D." and len(msgs) == 1 and [b["tool_use_id"] for b in msgs[0]["content"]] == ["a", "b"]
    assert openai_tool_choice_to_anthropic("none") == {"type": "none"}
    assert openai_tool_choice_to_anthropic("auto") is None
