"""Check the conformance scenarios' expected request bodies against the providers' own SDK types.

Why this exists: `tests/conformance/*.json` pins the exact bodies the engine sends to the
model provider, and `TOOLNEXUS_BLESS=1` can rewrite them from whatever the engine does. A
blessed body that a real provider would refuse must not pass review just because we wrote
both sides. So every expected body is validated here against a spec we did not write: the
request TypedDicts of the official SDKs (`openai.types.chat.completion_create_params.
CompletionCreateParamsNonStreaming`, `anthropic.types.message_create_params.
MessageCreateParamsNonStreaming`), plus a few rules the providers enforce that the types
cannot express (see `semantic_errors`).

How the types are applied (found empirically with the pinned pydantic, see requirements.txt):
- `TypeAdapter(SomeTypedDict, config=...)` is refused by pydantic ("type-adapter-config-unused"),
  so the root type is wrapped as `List[T]`; a TypedDict without a config of its own inherits
  the enclosing config, so `extra="forbid"` and `strict=True` then reach every nested TypedDict.
  The exceptions are the few the SDK marks open on purpose (e.g. anthropic's `InputSchemaTyped`
  is `extra="allow"`: a JSON Schema may carry any keyword).
- The SDKs type every list field as `Iterable[...]`, which pydantic validates lazily: the
  result holds a `ValidatorIterator` and the items are only checked when it is consumed.
  Without consuming, nothing below `messages`/`tools` would be checked at all, so `consume`
  walks the validated result and drains every iterator, collecting each item's errors.
- Strict mode is usable as is: strict `Iterable` still accepts a JSON list, and strict `float`
  accepts an int. It rejects coercions such as `"5"` for an int or `1` for a bool.

Usage: check_requests.py [SCENARIO_DIR]   (default: ../conformance beside this script)
Steps and requests are numbered from 0, as in the file's `steps[N].expect.requests[M]`.
"""

from __future__ import annotations

import collections.abc
import json
import sys
from pathlib import Path
from typing import Any, List

from anthropic.types.message_create_params import MessageCreateParamsNonStreaming
from openai.types.chat.completion_create_params import CompletionCreateParamsNonStreaming
from pydantic import ConfigDict, TypeAdapter, ValidationError

CONFIG = ConfigDict(strict=True, extra="forbid")
ADAPTERS = {
    "openai": TypeAdapter(List[CompletionCreateParamsNonStreaming], config=CONFIG),
    "anthropic": TypeAdapter(List[MessageCreateParamsNonStreaming], config=CONFIG),
}
MAX_ERRORS_SHOWN = 8


def fmt_loc(loc: tuple) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "(body)"


def consume(value: Any, path: tuple, errors: list) -> None:
    """Drain every lazy `Iterable` in a validated value, recording item errors with full paths."""
    if isinstance(value, dict):
        for k, v in value.items():
            consume(v, path + (k,), errors)
    elif isinstance(value, (list, tuple)):
        for i, v in enumerate(value):
            consume(v, path + (i,), errors)
    elif isinstance(value, collections.abc.Iterator):
        i = 0
        while True:
            try:
                item = next(value)
            except StopIteration:
                return
            except ValidationError as e:
                errors.extend({**err, "loc": path + tuple(err["loc"])} for err in e.errors())
            else:
                consume(item, path + (i,), errors)
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
    lines = [f"{fmt_loc(e['loc'])}: {e['msg']} (input: {json.dumps(e.get('input'), default=repr)[:80]})"
             for e in kept[:MAX_ERRORS_SHOWN]]
    if len(kept) > MAX_ERRORS_SHOWN:
        lines.append(f"... and {len(kept) - MAX_ERRORS_SHOWN} more")
    return lines


def type_errors(style: str, body: Any) -> list[str]:
    errors: list = []
    try:
        validated = ADAPTERS[style].validate_python([body], strict=True)
    except ValidationError as e:
        errors = [{**err, "loc": tuple(err["loc"])[1:]} for err in e.errors()]  # drop the List index
    else:
        consume(validated[0], (), errors)
    return readable(errors)


def semantic_errors(style: str, body: Any) -> list[str]:
    """Rules the providers enforce that the SDK types cannot express.

    anthropic: no `system` that is an empty string; no text block with empty text (in
      `system`, message content or tool_result content); no message whose `content` is "" or [];
      tool_result blocks come first in their user message (Anthropic's documented requirement).
    openai: an assistant message has text content or tool calls (`content: null` alone is
      refused), and `tool_calls`, when present, is not an empty list.
    both: every tool call of an assistant message is answered by exactly one result, in call
      order, right after it (openai: the `role: tool` messages that immediately follow;
      anthropic: the `tool_result` blocks of the user message that immediately follows), and no
      result answers a call that does not exist there.
    """
    msgs = body.get("messages")
    if not isinstance(msgs, list) or not all(isinstance(m, dict) for m in msgs):
        return []  # the type check already reports this
    return (anthropic_rules if style == "anthropic" else openai_rules)(body, msgs)


def pairing(where: str, calls: list, results: list) -> list[str]:
    if len(set(calls)) != len(calls):
        return [f"{where}: duplicate tool call ids {calls}"]
    if results == calls:
        return []
    missing = [c for c in calls if c not in results]
    stray = [r for r in results if r not in calls]
    extra = sorted({r for r in results if results.count(r) > 1})
    why = [f"unanswered calls {missing}"] * bool(missing) + [f"results for no such call {stray}"] * bool(stray)
    why += [f"calls answered more than once {extra}"] * bool(extra)
    return [f"{where}: tool calls {calls} answered by {results}: " + ("; ".join(why) or "out of call order")]


def openai_rules(body: dict, msgs: list) -> list[str]:
    out: list[str] = []
    i = 0
    while i < len(msgs):
        m = msgs[i]
        if m.get("role") == "tool":  # not consumed by an assistant turn below: an orphan
            out.append(f"messages[{i}]: tool result {m.get('tool_call_id')!r} follows no assistant tool call")
            i += 1
            continue
        i += 1
        if m.get("role") != "assistant":
            continue
        tcs = m.get("tool_calls")
        if tcs == []:
            out.append(f"messages[{i - 1}]: assistant tool_calls is an empty list")
        if m.get("content") is None and not tcs:
            out.append(f"messages[{i - 1}]: assistant message with null content and no tool calls")
        if not tcs or not isinstance(tcs, list):
            continue
        calls = [tc.get("id") if isinstance(tc, dict) else None for tc in tcs]
        results = []
        while i < len(msgs) and msgs[i].get("role") == "tool":
            results.append(msgs[i].get("tool_call_id"))
            i += 1
        out += pairing(f"messages[{i - len(results) - 1}]", calls, results)
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
        requests = ((step or {}).get("expect") or {}).get("requests") or []
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
    root = Path(argv[1]) if len(argv) > 1 else Path(__file__).resolve().parent.parent / "conformance"
    if not root.is_dir():
        print(f"error: {root} is not a directory", file=sys.stderr)
        return 2
    files = sorted(root.rglob("*.json"))
    if not files:
        print(f"error: no *.json scenario files under {root}", file=sys.stderr)
        return 2
    checked = failed = 0
    for f in files:
        c, bad = check_file(f, str(f.relative_to(root)))
        checked, failed = checked + c, failed + bad
    print(f"{checked} requests checked, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
