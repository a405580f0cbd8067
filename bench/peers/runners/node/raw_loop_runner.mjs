// Baseline: the agent loop written by hand in plain Node (node:http with a keep-alive Agent,
// JSON, tools awaited with Promise.all). Not a framework: the least any Node loop can cost,
// which is what the binding's overhead is held against (at most half of this loop's).
//
// `stream` reads the server-sent events and joins the deltas; `concurrent-N` needs nothing
// more (the Agent opens a keep-alive socket per request in flight); `suspend` has a tool that
// returns a "pending" marker, which the loop answers inline (asks a callback, re-runs the tool)
// or durably (returns the transcript and the pending call, which a resume re-runs).
import http from "node:http"
import { APPROVE_DESC, APPROVE_SCHEMA, NotApplicable, Tools, main } from "./harness.mjs"

const WEATHER_TOOLS = [
  { type: "function", function: { name: "get_weather", description: Tools.WEATHER_DESC, parameters: Tools.WEATHER_SCHEMA } },
  { type: "function", function: { name: "add", description: Tools.ADD_DESC, parameters: Tools.ADD_SCHEMA } },
]
const APPROVE_TOOLS = [{ type: "function", function: { name: "approve", description: APPROVE_DESC, parameters: APPROVE_SCHEMA } }]
const PENDING = Symbol("pending") // what `approve` returns until it is re-run with an answer

export async function load() {
  return `node ${process.version}`
}

/** The assistant message an OpenAI event stream spells out. */
function foldSse(text) {
  const parts = []
  const calls = []
  for (const line of text.split("\n")) {
    if (!line.startsWith("data: ") || line === "data: [DONE]") continue
    const delta = JSON.parse(line.slice(6)).choices[0].delta
    if (delta.content) parts.push(delta.content)
    for (const tc of delta.tool_calls ?? []) {
      const c = (calls[tc.index] ??= { id: null, type: "function", function: { name: "", arguments: "" } })
      c.id = tc.id ?? c.id
      c.function.name += tc.function?.name ?? ""
      c.function.arguments += tc.function?.arguments ?? ""
    }
  }
  const msg = { role: "assistant", content: parts.join("") || null }
  if (calls.length) msg.tool_calls = calls
  return msg
}

export async function build(ctx) {
  if (ctx.style !== "openai") throw new NotApplicable("the raw loop speaks the OpenAI wire only")
  const spec = ctx.spec
  const agent = new http.Agent({ keepAlive: true, maxSockets: spec.concurrency })
  const u = new URL(ctx.v1Url)
  const post = (p, body) =>
    new Promise((resolve, reject) => {
      const data = Buffer.from(JSON.stringify(body))
      const req = http.request(
        {
          host: u.hostname,
          port: u.port,
          path: u.pathname + p,
          method: "POST",
          agent,
          headers: { "Content-Type": "application/json", "Content-Length": data.length, Authorization: `Bearer ${ctx.apiKey}` },
        },
        (res) => {
          const chunks = []
          res.on("data", (c) => chunks.push(c))
          res.on("end", () => {
            const text = Buffer.concat(chunks).toString("utf8")
            if (res.statusCode !== 200) reject(new Error(`HTTP ${res.statusCode}: ${text.slice(0, 300)}`))
            else resolve(text)
          })
          res.on("error", reject)
        },
      )
      req.on("error", reject)
      req.end(data)
    })
  const [getWeather, add] = ctx.tools.make()
  const counter = ctx.tools
  const approve = async ({ action }, answer) => {
    counter.calls++
    return answer === undefined ? PENDING : `approved: ${action}`
  }
  const fns = { get_weather: getWeather, add, approve }
  const tools = spec.kind === "suspend" ? APPROVE_TOOLS : WEATHER_TOOLS
  const history = spec.historyPairs().map(([role, content]) => ({ role, content }))

  const model = async (messages) => {
    const body = { model: ctx.model, messages, tools, tool_choice: "auto" }
    if (ctx.stream) return foldSse(await post("/chat/completions", { ...body, stream: true }))
    return JSON.parse(await post("/chat/completions", body)).choices[0].message
  }
  const call = (c, answer) => fns[c.function.name](JSON.parse(c.function.arguments), answer)
  const result = (c, out) => ({ role: "tool", tool_call_id: c.id, content: typeof out === "string" ? out : JSON.stringify(out) })

  // Runs turns until the final text (returns it) or, without waitFor, a pending call (returns
  // what a resume needs).
  const loop = async (messages, waitFor) => {
    for (let t = 0; t < ctx.maxTurns; t++) {
      const msg = await model(messages)
      messages.push(msg)
      const calls = msg.tool_calls ?? []
      if (!calls.length) return msg.content ?? ""
      const outs = await Promise.all(calls.map((c) => call(c)))
      for (let i = 0; i < calls.length; i++) {
        let out = outs[i]
        if (out === PENDING) {
          if (!waitFor) {
            for (let j = 0; j < i; j++) messages.push(result(calls[j], outs[j]))
            return { messages, call: calls[i], rest: calls.slice(i + 1), restOuts: outs.slice(i + 1) }
          }
          out = await call(calls[i], waitFor(calls[i]))
        }
        messages.push(result(calls[i], out))
      }
    }
    throw new Error("max turns")
  }
  const resume = async (h, answer) => {
    h.messages.push(result(h.call, await call(h.call, answer)))
    h.rest.forEach((c, j) => h.messages.push(result(c, h.restOuts[j])))
    return loop(h.messages)
  }
  const opening = () => [{ role: "system", content: ctx.systemPrompt }, ...history, { role: "user", content: spec.prompt }]

  if (spec.kind === "suspend") {
    return async () => {
      const a = await loop(opening(), () => "yes")
      const halted = await loop(opening())
      if (typeof halted === "string") throw new Error("the durable run did not halt")
      return `${a} | ${await resume(halted, "yes")}`
    }
  }
  return () => loop(opening())
}

await main({ load, build }, "node raw loop", "baseline")
