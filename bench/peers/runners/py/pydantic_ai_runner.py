"""pydantic-ai runner: Agent + OpenAIChatModel (Chat Completions) + two plain tools."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402

m = {}

# Why the suspend row is n/a (shown in docs/benchmarks.md).
SUSPEND_NA = (harness.NO_INLINE_SUSPENSION + "; its deferred tools (an approval ends the run, "
              "DeferredToolResults resumes it) cover the durable half only")


def load() -> str:
    from importlib.metadata import version

    import pydantic_ai
    from pydantic_ai import Agent, Tool
    from pydantic_ai.messages import ModelRequest, ModelResponse, TextPart, UserPromptPart
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider

    m.update(locals())
    return version("pydantic-ai-slim")


async def build(ctx: harness.Ctx):
    if ctx.spec.kind == "suspend":
        raise harness.NotApplicable(SUSPEND_NA)
    get_weather, add = ctx.tools.make(sync=ctx.sync_tools)
    model = m["OpenAIChatModel"](ctx.model, provider=m["OpenAIProvider"](base_url=ctx.v1_url, api_key=ctx.api_key))
    agent = m["Agent"](
        model,
        instructions=ctx.system_prompt,
        tools=[m["Tool"](get_weather, name="get_weather"), m["Tool"](add, name="add")],
    )
    spec = ctx.spec
    history = []
    for role, text in spec.history_pairs():
        if role == "user":
            history.append(m["ModelRequest"](parts=[m["UserPromptPart"](content=text)]))
        else:
            history.append(m["ModelResponse"](parts=[m["TextPart"](content=text)]))

    if ctx.stream:
        async def run_once() -> str:
            async with agent.run_stream(spec.prompt, message_history=history or None) as r:
                return await r.get_output()

        return run_once

    async def run_once() -> str:
        r = await agent.run(spec.prompt, message_history=history or None)
        return r.output

    return run_once


if __name__ == "__main__":
    harness.main(sys.modules[__name__], "pydantic-ai")
