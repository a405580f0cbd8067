// @openai/agents (JS) runner: Agent + OpenAIChatCompletionsModel + two tools, tracing off.
//   node openai_agents_runner.mjs --node-dir $CARGO_TARGET_DIR/bench-peers/node-peers --base-url ...
import { NO_INLINE_SUSPENSION, NotApplicable, Tools, importFrom, main, packageVersion } from "./harness.mjs"

const SUSPEND_NA = `${NO_INLINE_SUSPENSION}; needsApproval interrupts the run and a RunState resumes it (the durable half only)`

const M = {}

export async function load(ctx) {
  M.agents = await importFrom(ctx.nodeDir, "@openai/agents")
  M.openai = await importFrom(ctx.nodeDir, "openai")
  M.zod = await importFrom(ctx.nodeDir, "zod")
  return `@openai/agents ${packageVersion(ctx.nodeDir, "@openai/agents")} (openai ${packageVersion(ctx.nodeDir, "openai")})`
}

export async function build(ctx) {
  if (ctx.spec.kind === "suspend") throw new NotApplicable(SUSPEND_NA)
  const { Agent, run, tool, setTracingDisabled, OpenAIChatCompletionsModel, user, assistant } = M.agents
  const OpenAI = M.openai.default ?? M.openai.OpenAI
  const z = M.zod.z ?? M.zod.default
  setTracingDisabled(true)
  const client = new OpenAI({ baseURL: ctx.v1Url, apiKey: ctx.apiKey, maxRetries: 0 })
  const model = new OpenAIChatCompletionsModel(client, ctx.model)
  const [getWeather, add] = ctx.tools.make()
  const agent = new Agent({
    name: "bench",
    instructions: ctx.systemPrompt,
    model,
    tools: [
      tool({ name: "get_weather", description: Tools.WEATHER_DESC, parameters: z.object({ city: z.string() }), execute: getWeather }),
      tool({ name: "add", description: Tools.ADD_DESC, parameters: z.object({ a: z.number().int(), b: z.number().int() }), execute: add }),
    ],
  })
  const spec = ctx.spec
  const history = spec.historyPairs().map(([role, text]) => (role === "user" ? user(text) : assistant(text)))
  const input = () => (history.length ? [...history, user(spec.prompt)] : spec.prompt)
  if (ctx.stream) {
    return async () => {
      const r = await run(agent, input(), { maxTurns: ctx.maxTurns, stream: true })
      await r.completed
      return r.finalOutput
    }
  }
  return async () => (await run(agent, input(), { maxTurns: ctx.maxTurns })).finalOutput
}

await main({ load, build }, "openai-agents (js)")
