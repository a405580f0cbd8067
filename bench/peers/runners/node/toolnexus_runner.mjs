// toolnexus runner for the Node binding, written against the JS port's public API
// (createClient / createToolkit / defineTool / client.run / client.stream / pending /
// runWithAnswer). --pkg-dir is the package folder (bench/peers/setup.sh assembles one with a
// release build of the addon).
//
// suspend: `approve` suspends (pending) until it is re-run with an answer. One unit is a run on
// a client with `waitFor` (the engine asks it, then re-runs the tool inline) and a run on a
// client without it (the run halts with status pending), resumed by `runWithAnswer`.
import { pathToFileURL } from "node:url"
import { APPROVE_DESC, APPROVE_SCHEMA, Tools, main, packageEntry } from "./harness.mjs"

const M = {}

export async function load(ctx) {
  const { file, version } = packageEntry(ctx.pkgDir)
  const mod = await import(pathToFileURL(file).href)
  M.tn = mod.createClient ? mod : mod.default
  return version
}

export async function build(ctx) {
  const tn = M.tn
  const spec = ctx.spec
  const client = (extra = {}) =>
    tn.createClient({
      baseUrl: ctx.v1Url,
      style: ctx.style,
      model: ctx.model,
      apiKey: ctx.apiKey,
      systemPrompt: ctx.systemPrompt,
      maxTurns: ctx.maxTurns,
      ...extra,
    })
  if (spec.kind === "suspend") {
    const counter = ctx.tools
    const approve = tn.defineTool({
      name: "approve",
      description: APPROVE_DESC,
      inputSchema: APPROVE_SCHEMA,
      run: ({ action }, tctx) => {
        counter.calls++
        if (!tctx?.answer) return tn.pending({ kind: "approval", prompt: `Approve ${action}?`, id: `ap-${tctx.callId}` })
        return `approved: ${action}`
      },
    })
    const toolkit = await tn.createToolkit({ builtins: false, extraTools: [approve] })
    const inline = client({ waitFor: (req) => tn.answerOutput(req.id, "yes") })
    const durable = client()
    return async () => {
      const a = await inline.run(spec.prompt, { toolkit })
      const halted = await durable.run(spec.prompt, { toolkit })
      if (!halted.pending) throw new Error(`the durable run did not halt: ${halted.status}`)
      const b = await durable.runWithAnswer(toolkit, halted.messages, halted.pending, tn.answerOutput(halted.pending.id, "yes"))
      return `${a.text} | ${b.text}`
    }
  }
  const [getWeather, add] = ctx.tools.make()
  let history
  if (spec.history) {
    history = spec.historyPairs().map(([role, content]) => ({ role, content }))
    // run({history}) does not re-add the system prompt (openai style): carry it.
    if (ctx.style === "openai") history.unshift({ role: "system", content: ctx.systemPrompt })
  }
  const c = client()
  const toolkit = await tn.createToolkit({
    builtins: false,
    extraTools: [
      tn.defineTool({ name: "get_weather", description: Tools.WEATHER_DESC, inputSchema: Tools.WEATHER_SCHEMA, run: getWeather }),
      tn.defineTool({ name: "add", description: Tools.ADD_DESC, inputSchema: Tools.ADD_SCHEMA, run: add }),
    ],
  })
  if (ctx.stream) {
    return async () => {
      let result
      for await (const ev of c.stream(spec.prompt, { toolkit })) if (ev.type === "done") result = ev.result
      return result.text
    }
  }
  return async () => (await c.run(spec.prompt, { toolkit, history })).text
}

await main({ load, build }, "toolnexus (node)")
