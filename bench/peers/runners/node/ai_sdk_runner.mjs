// Vercel AI SDK runner: generateText (or streamText with --stream) + @ai-sdk/openai Chat
// Completions model (provider.chat) + two tools, step limit stepCountIs(MAX_TURNS).
//   node ai_sdk_runner.mjs --node-dir $CARGO_TARGET_DIR/bench-peers/node-peers --base-url http://127.0.0.1:PORT
import { NO_INLINE_SUSPENSION, NotApplicable, Tools, importFrom, main, packageVersion } from "./harness.mjs"

const SUSPEND_NA = `${NO_INLINE_SUSPENSION}; needsApproval ends the step with an approval request and a later call resumes it (the durable half only)`

const M = {}

export async function load(ctx) {
  M.ai = await importFrom(ctx.nodeDir, "ai")
  M.oa = await importFrom(ctx.nodeDir, "@ai-sdk/openai")
  M.zod = await importFrom(ctx.nodeDir, "zod")
  return `ai ${packageVersion(ctx.nodeDir, "ai")} + @ai-sdk/openai ${packageVersion(ctx.nodeDir, "@ai-sdk/openai")}`
}

export async function build(ctx) {
  if (ctx.spec.kind === "suspend") throw new NotApplicable(SUSPEND_NA)
  const { generateText, streamText, tool, stepCountIs } = M.ai
  const z = M.zod.z ?? M.zod.default
  const provider = M.oa.createOpenAI({ baseURL: ctx.v1Url, apiKey: ctx.apiKey })
  const model = provider.chat(ctx.model)
  const [getWeather, add] = ctx.tools.make()
  const tools = {
    get_weather: tool({ description: Tools.WEATHER_DESC, inputSchema: z.object({ city: z.string() }), execute: getWeather }),
    add: tool({ description: Tools.ADD_DESC, inputSchema: z.object({ a: z.number().int(), b: z.number().int() }), execute: add }),
  }
  const spec = ctx.spec
  const history = spec.historyPairs().map(([role, content]) => ({ role, content }))
  const opts = () => ({
    model,
    system: ctx.systemPrompt,
    messages: [...history, { role: "user", content: spec.prompt }],
    tools,
    stopWhen: stepCountIs(ctx.maxTurns),
    maxRetries: 0,
  })
  if (ctx.stream) {
    return async () => {
      const r = streamText(opts())
      return await r.text
    }
  }
  return async () => (await generateText(opts())).text
}

await main({ load, build }, "vercel ai")
