"""Check the conformance scenarios' expected request bodies against the providers' own SDK types.

Why: `tests/conformance/*.json` pins the exact bodies the engine sends, and `TOOLNEXUS_BLESS=1`
rewrites them from whatever the engine does; a body a real provider would refuse must not pass
because we wrote both sides. So each body is validated against a spec we did not write, the
official SDKs' request TypedDicts (openai `CompletionCreateParamsNonStreaming`, anthropic
`MessageCreateParamsNonStreaming`, and their `...Streaming` twins for a body with `stream: true`),
plus provider rules the types cannot express (`semantic_errors`).

How the types are applied (found empirically with the pinned pydantic, see requirements.txt):
- `TypeAdapter(SomeTypedDict, config=...)` is refused ("type-adapter-config-unused"), so the root
  is wrapped as `List[T]`. A TypedDict without a config of its own inherits the enclosing one, so
  `extra="forbid"` and `strict=True` then reach every nested TypedDict, except the few the SDK
  opens on purpose (anthropic's `InputSchemaTyped` is `extra="allow"`: a JSON Schema is open).
- The SDKs type list fields as `Iterable[...]`, which pydantic validates lazily: the result holds
  a `ValidatorIterator` whose items are checked only when consumed. Unconsumed, nothing below
  `messages`/`tools` would be checked at all, so `consume` drains every iterator.
- Strict mode works as is: strict `Iterable` accepts a JSON list (and any other iterable, which
  `consume` refuses), strict `float` accepts an int; `"5"` for an int or `1` for a bool fail.

Usage: check_requests.py [SCENARIO_DIR ...]   (default: ../conformance beside this script)
Steps and requests are numbered from 0, as in the file's `steps[N].expect.requests[M]`.
"""

from __future__ import annotations

import collections.abc
import json
import sys
from pathlib import Path
from typing import Any, List

from anthropic.types.message_create_params import MessageCreateParamsNonStreaming, MessageCreateParamsStreaming
from openai.types.chat.completion_create_params import (
    CompletionCreateParamsNonStreaming,
    CompletionCreateParamsStreaming,
)
from pydantic import ConfigDict, TypeAdapter, ValidationError

CONFIG = ConfigDict(strict=True, extra="forbid")
ADAPTERS = {
    "openai": TypeAdapter(List[CompletionCreateParamsNonStreaming], config=CONFIG),
    "anthropic": TypeAdapter(List[MessageCreateParamsNonStreaming], config=CONFIG),
}
# A streamed request's types (`stream: Literal[True]`): the non-streaming ones refuse it.
STREAMING = {
    "openai": TypeAdapter(List[CompletionCreateParamsStreaming], config=CONFIG),
    "anthropic": TypeAdapter(List[MessageCreateParamsStreaming], config=CONFIG),
}
MAX_ERRORS_SHOWN = 8


def fmt_loc(loc: tuple) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "(body)"


def consume(value: Any, raw: Any, path: tuple, errors: list) -> None:
    """Drain every lazy `Iterable` in a validated value (walking the raw input beside it),
    recording item errors with full paths. Strict `Iterable` accepts any iterable, so a JSON
    object or string where a list belongs would slip through: the raw input must be a list."""
    if isinstance(value, dict):
        for k, v in value.items():
            consume(v, raw.get(k) if isinstance(raw, dict) else None, path + (k,), errors)
    elif isinstance(value, (list, tuple)):
        for i, v in enumerate(value):
            consume(v, raw[i] if isinstance(raw, list) else None, path + (i,), errors)
    elif isinstance(value, collections.abc.Iterator):
        if not isinstance(raw, list):
            errors.append({"loc": path, "msg": "Input should be a JSON array", "type": "list_type", "input": raw})
            return
        i = 0
        while True:
            try:
                item = next(value)
            except StopIteration:
                return
            except ValidationError as e:
                errors.extend({**err, "loc": path + tuple(err["loc"])} for err in e.errors())
            else:
                consume(item, raw[i], path + (i,), errors)
            i += 1


def readable(errors: list) -> list[str]:
    """Formats pydantic errors, dropping union branches whose `role`/`type` tag did not match
    (a wrong message in a union of six message types otherwise yields six branches of noise)."""
    wrong_branch = [
        e["loc"][:-1]
        for e in errors
        if e["type"] in ("literal_error", "missing") and e["loc"] and e["loc"][-1] in ("role", "type")
    ]
    kept = [e for e in errors if not any(e["loc"][: len(p)] == p for p in wrong_branch)] or errors
    lines = [f"{fmt_loc(e['loc'])}: {e['msg']}" + ("" if e["type"] == "missing" else
             f" (input: {json.dumps(e.get('input'), default=repr)[:80]})") for e in kept[:MAX_ERRORS_SHOWN]]
    if len(kept) > MAX_ERRORS_SHOWN:
        lines.append(f"... and {len(kept) - MAX_ERRORS_SHOWN} more")
    return lines


def type_errors(style: str, body: Any) -> list[str]:
    errors: list = []
    try:
        adapters = STREAMING if isinstance(body, dict) and body.get("stream") is True else ADAPTERS
        validated = adapters[style].validate_python([body], strict=True)
    except ValidationError as e:
        errors = [{**err, "loc": tuple(err["loc"])[1:]} for err in e.errors()]  # drop the List index
    else:
        consume(validated[0], body, (), errors)
    return readable(errors)


def semantic_errors(style: str, body: Any) -> list[str]:
    """Rules the providers enforce that the SDK types cannot express.

    anthropic: no `system` that is an empty string; no text block with empty text (in
      `system`, message content or tool_result content); no message whose `content` is "" or [];
      tool_result blocks come first in their user message (Anthropic's documented requirement).
    openai: an assistant message has text content or tool calls (`content: null` alone is
      refused), and `tool_calls`, when present, is not an empty list.
    both: `messages` is not empty; every tool call of an assistant message is answered by
      exactly one result, in call order, right after it (openai: the `role: tool` messages that
      immediately follow; anthropic: the `tool_result` blocks of the user message that
      immediately follows), and no result answers a call that does not exist there.
    """
    msgs = body.get("messages")
    if not isinstance(msgs, list) or not all(isinstance(m, dict) for m in msgs):
        return []  # the type check already reports this
    if not msgs:
        return ["messages: empty list (both providers require at least one message)"]
    return (anthropic_rules if style == "anthropic" else openai_rules)(body, msgs)


def pairing(where: str, calls: list, results: list) -> list[str]:
    """One assistant turn's call ids against the result ids that answer it."""
    if len(set(calls)) != len(calls):
        return [f"{where}: duplicate tool call ids {calls}"]
    if results == calls:
        return []
    why = []
    if missing := [c for c in calls if c not in results]:
        why.append(f"unanswered calls {missing}")
    if stray := [r for r in results if r not in calls]:
        why.append(f"results for no such call {stray}")
    if twice := list(dict.fromkeys(r for r in results if r in calls and results.count(r) > 1)):
        why.append(f"calls answered more than once {twice}")
    return [f"{where}: tool calls {calls} answered by {results}: " + ("; ".join(why) or "out of call order")]


def openai_rules(body: dict, msgs: list) -> list[str]:
    out: list[str] = []
    i = 0
    while i < len(msgs):
        at, m = i, msgs[i]
        i += 1
        if m.get("role") == "tool":  # one right after a tool turn was consumed below: an orphan
            out.append(f"messages[{at}]: tool result {m.get('tool_call_id')!r} follows no assistant tool call")
        if m.get("role") != "assistant":
            continue
        tcs = m.get("tool_calls")
        if tcs == []:
            out.append(f"messages[{at}]: assistant tool_calls is an empty list")
        if m.get("content") is None and not tcs:
            out.append(f"messages[{at}]: assistant message with null content and no tool calls")
        if not tcs or not isinstance(tcs, list):
            continue
        calls = [tc.get("id") if isinstance(tc, dict) else None for tc in tcs]
        results = []
        while i < len(msgs) and msgs[i].get("role") == "tool":
            results.append(msgs[i].get("tool_call_id"))
            i += 1
        out += pairing(f"messages[{at}]", calls, results)
    return out


def blocks(content: Any) -> list[dict]:
    return [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []


def anthropic_rules(body: dict, msgs: list) -> list[str]:
    out: list[str] = []
    system = body.get("system")
    if system == "":
        out.append("system: empty string (omit the key instead)")
    texts = [("system", b) for b in blocks(system)]
    prev_calls: list = []
    for i, m in enumerate(msgs):
        content = m.get("content")
        if content in ("", []):
            out.append(f"messages[{i}]: empty content {content!r}")
        bs = blocks(content)
        texts += [(f"messages[{i}].content", b) for b in bs]
        for b in bs:
            if b.get("type") == "tool_result":
                texts += [(f"messages[{i}].content.tool_result", c) for c in blocks(b.get("content"))]
        results = [b.get("tool_use_id") for b in bs if b.get("type") == "tool_result"]
        kinds = [b.get("type") == "tool_result" for b in bs]
        if results and kinds != sorted(kinds, reverse=True):
            out.append(f"messages[{i}]: tool_result blocks must come before any other block")
        if prev_calls:
            if m.get("role") != "user":
                results = []
            out += pairing(f"messages[{i - 1}]", prev_calls, results)
        elif results:
            out.append(f"messages[{i}]: tool results {results} follow no assistant tool_use")
        prev_calls = [b.get("id") for b in bs if b.get("type") == "tool_use"] if m.get("role") == "assistant" else []
    if prev_calls:
        out += pairing(f"messages[{len(msgs) - 1}]", prev_calls, [])
    out += [f"{where}: text block with empty text" for where, b in texts
            if b.get("type") == "text" and b.get("text") == ""]
    return out


def check_file(path: Path, shown: str) -> tuple[int, int]:
    """Checks one scenario file; returns (requests checked, failures)."""
    try:
        scenario = json.loads(path.read_text(encoding="utf-8"))
        style = scenario["style"]
        steps = scenario["steps"]
        if style not in ADAPTERS:
            raise ValueError(f"unknown style {style!r}")
        if not isinstance(steps, list):
            raise ValueError("steps is not a list")
    except (OSError, ValueError, KeyError, TypeError) as e:
        print(f"FAIL {shown}: unreadable scenario: {type(e).__name__}: {e}")
        return 0, 1
    checked = failed = 0
    for n, step in enumerate(steps):
        expect = step.get("expect") if isinstance(step, dict) else None
        requests = (expect.get("requests") if isinstance(expect, dict) else None) or []
        for m, request in enumerate(requests):
            checked += 1
            body = request.get("body") if isinstance(request, dict) else None
            if not isinstance(body, dict):
                problems = ["body: missing or not a JSON object"]
            else:
                problems = [f"type: {p}" for p in type_errors(style, body)]
                problems += [f"rule: {p}" for p in semantic_errors(style, body)]
            if problems:
                failed += 1
                print(f"FAIL {shown} step {n} request {m} ({style})")
                for p in problems:
                    print(f"    {p}")
            else:
                print(f"ok {shown} step {n} request {m}")
    return checked, failed


def main(argv: list[str]) -> int:
    roots = [Path(a) for a in argv[1:]] or [Path(__file__).resolve().parent.parent / "conformance"]
    checked = failed = 0
    for root in roots:
        if not root.is_dir():
            print(f"error: {root} is not a directory", file=sys.stderr)
            return 2
        files = sorted(root.rglob("*.json"))
        if not files:
            print(f"error: no *.json scenario files under {root}", file=sys.stderr)
            return 2
        for f in files:
            c, bad = check_file(f, str(f.relative_to(root)))
            checked, failed = checked + c, failed + bad
    print(f"{checked} requests checked, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
