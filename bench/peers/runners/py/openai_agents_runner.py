"""openai-agents runner: Agent + OpenAIChatCompletionsModel + two function tools, tracing off."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402

m = {}

# Why the suspend row is n/a (shown in docs/benchmarks.md).
SUSPEND_NA = harness.NO_INLINE_SUSPENSION


def load() -> str:
    from importlib.metadata import version

    from agents import Agent, OpenAIChatCompletionsModel, Runner, function_tool, set_tracing_disabled
    from openai import AsyncOpenAI

    m.update(locals())
    return version("openai-agents")


async def build(ctx: harness.Ctx):
    if ctx.spec.kind == "suspend":
        raise harness.NotApplicable(SUSPEND_NA)
    m["set_tracing_disabled"](True)
    get_weather, add = ctx.tools.make(sync=ctx.sync_tools)
    client = m["AsyncOpenAI"](base_url=ctx.v1_url, api_key=ctx.api_key)
    agent = m["Agent"](
        name="bench",
        instructions=ctx.system_prompt,
        model=m["OpenAIChatCompletionsModel"](model=ctx.model, openai_client=client),
        tools=[m["function_tool"](get_weather), m["function_tool"](add)],
    )
    spec = ctx.spec
    Runner = m["Runner"]
    history = [{"role": r, "content": t} for r, t in spec.history_pairs()]

    def make_input():
        if not history:
            return spec.prompt
        return history + [{"role": "user", "content": spec.prompt}]

    if ctx.stream:
        async def run_once() -> str:
            r = Runner.run_streamed(agent, make_input(), max_turns=ctx.max_turns)
            async for _ in r.stream_events():
                pass
            return r.final_output

        return run_once

    async def run_once() -> str:
        r = await Runner.run(agent, make_input(), max_turns=ctx.max_turns)
        return r.final_output

    return run_once


if __name__ == "__main__":
    harness.main(sys.modules[__name__], "openai-agents")
