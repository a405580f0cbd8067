"""toolnexus runner, written against the upstream Python API only (create_client /
create_toolkit / define_tool / client.run / client.stream / pending / run_with_answer), so
the same file runs our binding and upstream toolnexus 0.21 from PyPI, each in its own venv.

suspend: `approve` suspends (pending) until it is re-run with an answer. One unit is a run
on a client with `wait_for` (the engine asks it, then re-runs the tool inline) and a run on a
client without it (the run halts with status pending), resumed by `run_with_answer`.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402

tn = None


def load() -> str:
    global tn
    import toolnexus as _tn

    tn = _tn
    v = getattr(tn, "__version__", None)
    if not v:
        from importlib.metadata import version

        v = version("toolnexus")
    return v


def client(ctx: harness.Ctx, **extra):
    return tn.create_client(base_url=ctx.v1_url, style=ctx.style, model=ctx.model, api_key=ctx.api_key,
                            system_prompt=ctx.system_prompt, max_turns=ctx.max_turns, **extra)


async def build_suspend(ctx: harness.Ctx):
    counter = ctx.tools

    async def approve(action: str, ctx: tn.ToolContext) -> object:
        counter.calls += 1
        # Upstream passes no context on a tool's first run, and has no call_id.
        if getattr(ctx, "answer", None) is None:
            call_id = getattr(ctx, "call_id", None)
            return tn.pending(kind="approval", prompt=f"Approve {action}?", id=f"ap-{call_id}" if call_id else None)
        return f"approved: {action}"

    tk = await tn.create_toolkit(builtins=False, extra_tools=[
        tn.define_tool(approve, name="approve", description=harness.APPROVE_DESC)])
    inline = client(ctx, wait_for=lambda req: tn.answer_output(req.id, "yes"))
    durable = client(ctx)
    if not hasattr(durable, "run_with_answer"):
        raise harness.NotApplicable("a run halts on a suspension (status pending) but the client has no "
                                    "way to resume it: no run_with_answer")
    prompt = ctx.spec.prompt

    async def run_once() -> str:
        a = await inline.run(prompt, tk)
        halted = await durable.run(prompt, tk)
        if halted.pending is None:
            raise RuntimeError(f"the durable run did not halt: {halted.status}")
        b = await durable.run_with_answer(tk, halted.messages, halted.pending,
                                          tn.answer_output(halted.pending.id, "yes"))
        return f"{a.text} | {b.text}"

    return run_once


async def build(ctx: harness.Ctx):
    if ctx.spec.kind == "suspend":
        return await build_suspend(ctx)
    get_weather, add = ctx.tools.make(sync=ctx.sync_tools)
    spec = ctx.spec
    history = None
    if spec.history:
        history = [{"role": r, "content": t} for r, t in spec.history_pairs()]
        if ctx.style == "openai":
            # run(history=...) does not re-add the system prompt (openai style): carry it.
            history.insert(0, {"role": "system", "content": ctx.system_prompt})
    c = client(ctx)
    tk = await tn.create_toolkit(builtins=False, extra_tools=[
        tn.define_tool(get_weather, name="get_weather", description=ctx.tools.WEATHER_DESC),
        tn.define_tool(add, name="add", description=ctx.tools.ADD_DESC),
    ])

    if ctx.stream:
        async def run_once() -> str:
            result = None
            async for ev in c.stream(spec.prompt, tk):
                if ev.get("type") == "done":
                    result = ev["result"]
            return result.text

        return run_once

    async def run_once() -> str:
        return (await c.run(spec.prompt, tk, history=history)).text

    return run_once


if __name__ == "__main__":
    harness.main(sys.modules[__name__], "toolnexus (python)")
