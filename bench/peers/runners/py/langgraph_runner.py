"""langgraph runner: ChatOpenAI (langchain-openai, Chat Completions) + a ReAct agent graph.

Uses the current factory `langchain.agents.create_agent` when the `langchain` package is
installed (LangGraph v1 moved it there); falls back to the deprecated
`langgraph.prebuilt.create_react_agent` otherwise (BENCH_LANGGRAPH_FACTORY=prebuilt forces it).
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402

m = {}

# Why the suspend row is n/a (shown in docs/benchmarks.md).
SUSPEND_NA = (harness.NO_INLINE_SUSPENSION + "; interrupt() with a checkpointer and "
              "Command(resume=...) cover the durable half only")


def load() -> str:
    import warnings
    from importlib.metadata import version

    from langchain_core.messages import AIMessage, HumanMessage, SystemMessage
    from langchain_core.tools import StructuredTool
    from langchain_openai import ChatOpenAI

    factory = None
    if os.environ.get("BENCH_LANGGRAPH_FACTORY") != "prebuilt":
        try:
            from langchain.agents import create_agent

            factory = "create_agent"
        except ImportError:
            pass
    if factory is None:
        warnings.filterwarnings("ignore", category=DeprecationWarning)
        from langgraph.prebuilt import create_react_agent

        factory = "create_react_agent"
    m.update(locals())
    return f"langgraph {version('langgraph')} + langchain-openai {version('langchain-openai')} ({factory})"


async def build(ctx: harness.Ctx):
    if ctx.spec.kind == "suspend":
        raise harness.NotApplicable(SUSPEND_NA)
    get_weather, add = ctx.tools.make(sync=ctx.sync_tools)
    ST = m["StructuredTool"]
    if ctx.sync_tools:
        tools = [ST.from_function(func=get_weather), ST.from_function(func=add)]
    else:
        tools = [ST.from_function(coroutine=get_weather), ST.from_function(coroutine=add)]
    llm = m["ChatOpenAI"](model=ctx.model, base_url=ctx.v1_url, api_key=ctx.api_key, streaming=ctx.stream)
    if m["factory"] == "create_agent":
        agent = m["create_agent"](llm, tools, system_prompt=ctx.system_prompt)
    else:
        agent = m["create_react_agent"](llm, tools, prompt=ctx.system_prompt)
    spec = ctx.spec
    HM, AM = m["HumanMessage"], m["AIMessage"]
    history = [HM(content=t) if r == "user" else AM(content=t) for r, t in spec.history_pairs()]
    config = {"recursion_limit": 2 * ctx.max_turns + 1}

    async def run_once() -> str:
        out = await agent.ainvoke({"messages": history + [HM(content=spec.prompt)]}, config=config)
        return out["messages"][-1].content

    return run_once


if __name__ == "__main__":
    harness.main(sys.modules[__name__], "langgraph")
