// Shared harness for the Node runners — no dependencies (Node >= 20). Adapted from the shared
// bench (../shared/bench/runners/node/harness.mjs) with the scenarios of `make bench-peers`:
// `stream` (weather, streamed: ctx.stream), `concurrent-N` (the harness times N weather runs
// at once with Promise.all), `suspend` (the runner's runOnce does an inline suspension and a
// durable halt plus its resume, counting each run of its `approve` tool). A runner that
// cannot do a scenario throws `new NotApplicable(why)` from build.
//
// A runner module exports:
//   async function load(ctx) -> version string   (import the framework; timed as import_ms)
//   async function build(ctx) -> runOnce          (construct agent/client/tools)
//   runOnce: async () => final text
// and calls `main(import.meta, runnerModule, defaultLabel)`.
//
// Frameworks are imported from --node-dir DIR (a folder with node_modules/), or a package
// folder given directly (--pkg-dir DIR), through importFrom() below — so the runner files
// live here and the packages under $CARGO_TARGET_DIR/bench-peers/.
//
// Modes: standalone (warmup W, time N runs, print ONE JSON result line) or --control
// (same stdin protocol as the Python harness: warmup K | run K | done).
// console.log & co. go to stderr so stdout carries only protocol/result JSON.

import fs from "node:fs"
import path from "node:path"
import readline from "node:readline"
import { pathToFileURL } from "node:url"

const protoWrite = (s) => process.stdout.write(s)
console.log = console.error
console.info = console.error
console.debug = console.error

export const SYSTEM_PROMPT = "You are a helpful assistant."
export const FILLER = "The quick brown fox jumps over the lazy dog. ".repeat(4).trim()
export const MODEL = "gpt-4o-mini"
export const API_KEY = "sk-mock"
export const MAX_TURNS = 20

export class NotApplicable extends Error {}

/** Why a peer's suspend row is n/a: what none of them has (each may add what it has instead). */
export const NO_INLINE_SUSPENSION = "no inline suspension: a tool cannot hand the loop a request to resolve and be re-run with the answer"

export const APPROVE_DESC = "Carry out an action once a human approves it."
export const APPROVE_SCHEMA = { type: "object", properties: { action: { type: "string" } }, required: ["action"] }

export class Spec {
  constructor(name) {
    this.name = name
    this.history = 0
    this.concurrency = 1
    this.stream = name === "stream"
    if (name === "weather" || name === "stream") {
      this.kind = "weather"
    } else if (name.startsWith("concurrent-")) {
      this.kind = "weather"
      this.concurrency = parseInt(name.slice("concurrent-".length), 10)
    } else if (name === "suspend") {
      this.kind = "suspend"
    } else if (name.startsWith("chain-")) {
      this.kind = "chain"
      this.k = parseInt(name.slice(6), 10)
    } else if (name.startsWith("history-")) {
      this.kind = "weather"
      this.history = parseInt(name.slice(8), 10)
    } else {
      throw new Error(`unknown scenario ${name}`)
    }
    if (this.kind === "weather") {
      this.expectedTurns = 2 * this.concurrency
      this.expectedTools = 2 * this.concurrency
      this.prompt = "What is the weather in Paris, and what is 2+2?"
      this.expectedText = ["FINAL", "Sunny, 22C in Paris", "4"]
    } else if (this.kind === "suspend") {
      // Two runs of two model calls; `approve` runs twice in each (suspends, then re-runs).
      this.expectedTurns = 4
      this.expectedTools = 4
      this.prompt = "Deploy the release once it is approved."
      this.expectedText = ["FINAL", "approved: deploy"]
    } else {
      this.expectedTurns = this.k + 1
      this.expectedTools = this.k
      this.prompt = "Add the numbers step by step using the add tool."
      this.expectedText = ["FINAL", ...Array.from({ length: this.k }, (_, i) => String(i + 2))]
    }
  }

  /** [[role, text]] — identical in every runner and in the Rust floor client. */
  historyPairs() {
    return Array.from({ length: this.history }, (_, i) => [i % 2 === 0 ? "user" : "assistant", `Earlier message ${i}: ${FILLER}`])
  }
}

export class Tools {
  static WEATHER_DESC = "Get the current weather for a city."
  static ADD_DESC = "Add two integers."
  static WEATHER_SCHEMA = { type: "object", properties: { city: { type: "string" } }, required: ["city"] }
  static ADD_SCHEMA = {
    type: "object",
    properties: { a: { type: "integer" }, b: { type: "integer" } },
    required: ["a", "b"],
  }

  constructor() {
    this.calls = 0
  }

  /** [getWeather({city}), add({a, b})] — async, trivial, counted. */
  make() {
    const self = this
    return [
      async ({ city }) => {
        self.calls++
        return `Sunny, 22C in ${city}`
      },
      async ({ a, b }) => {
        self.calls++
        return a + b
      },
    ]
  }
}

function pickEntry(exp) {
  if (typeof exp === "string") return exp
  if (!exp || typeof exp !== "object") return undefined
  for (const k of ["import", "node", "default", "require"]) {
    if (k in exp) {
      const r = pickEntry(exp[k])
      if (r) return r
    }
  }
  return undefined
}

/** Resolve the ESM entry of a package folder (honours "exports", then module/main). */
export function packageEntry(pkgDir) {
  const pj = JSON.parse(fs.readFileSync(path.join(pkgDir, "package.json"), "utf8"))
  let exp = pj.exports
  if (exp && typeof exp === "object" && "." in exp) exp = exp["."]
  const rel = pickEntry(exp) ?? pj.module ?? pj.main ?? "index.js"
  return { file: path.resolve(pkgDir, rel), version: pj.version }
}

/** import(name) as if from `dir` (a folder holding node_modules/). */
export async function importFrom(dir, name) {
  const pkgDir = path.join(dir, "node_modules", ...name.split("/"))
  const { file } = packageEntry(pkgDir)
  return import(pathToFileURL(file).href)
}

export function packageVersion(dir, name) {
  const pj = JSON.parse(fs.readFileSync(path.join(dir, "node_modules", ...name.split("/"), "package.json"), "utf8"))
  return pj.version
}

export function parseArgs(argv) {
  const a = {
    baseUrl: null,
    scenario: "weather",
    runs: parseInt(process.env.BENCH_RUNS ?? "200", 10),
    warmup: parseInt(process.env.BENCH_WARMUP ?? "20", 10),
    control: false,
    label: null,
    style: "openai",
    stream: false,
    nodeDir: null,
    pkgDir: null,
  }
  const flags = { "--control": "control" }
  const opts = {
    "--base-url": "baseUrl",
    "--scenario": "scenario",
    "--runs": "runs",
    "--warmup": "warmup",
    "--label": "label",
    "--style": "style",
    "--node-dir": "nodeDir",
    "--pkg-dir": "pkgDir",
  }
  for (let i = 0; i < argv.length; i++) {
    const f = argv[i]
    if (f in flags) a[flags[f]] = true
    else if (f in opts && i + 1 < argv.length) {
      const v = argv[++i]
      a[opts[f]] = f === "--runs" || f === "--warmup" ? parseInt(v, 10) : v
    } else throw new Error(`bad argument ${f}`)
  }
  if (!a.baseUrl) throw new Error("--base-url is required")
  return a
}

function pct(sorted, q) {
  const n = sorted.length
  const k = Math.min(Math.max(Math.ceil(q * n), 1), n)
  return sorted[k - 1]
}

function stats(xs) {
  if (!xs.length) return {}
  const s = [...xs].sort((x, y) => x - y)
  const mean = xs.reduce((p, x) => p + x, 0) / xs.length
  const variance = xs.reduce((p, x) => p + (x - mean) ** 2, 0) / xs.length
  return { mean, p50: pct(s, 0.5), p95: pct(s, 0.95), min: s[0], max: s[s.length - 1], stdev: Math.sqrt(variance) }
}

function emit(obj) {
  protoWrite(JSON.stringify(obj) + "\n")
}

function cpuMs() {
  const u = process.cpuUsage()
  return (u.user + u.system) / 1e3
}

export async function main(runner, defaultLabel, kind = "framework") {
  let args
  try {
    args = parseArgs(process.argv.slice(2))
  } catch (e) {
    emit({ event: "error", error: String(e) })
    process.exit(2)
  }
  const label = args.label ?? defaultLabel
  try {
    const spec = new Spec(args.scenario)
    const baseUrl = args.baseUrl.replace(/\/$/, "")
    const ctx = {
      args,
      spec,
      baseUrl,
      v1Url: `${baseUrl}/s/${spec.name}/v1`,
      style: args.style,
      stream: spec.stream,
      tools: new Tools(),
      systemPrompt: SYSTEM_PROMPT,
      model: MODEL,
      apiKey: API_KEY,
      maxTurns: MAX_TURNS,
      nodeDir: args.nodeDir,
      pkgDir: args.pkgDir,
    }
    const t0 = performance.now()
    const version = await runner.load(ctx)
    const t1 = performance.now()
    let runOnce
    try {
      runOnce = await runner.build(ctx)
    } catch (e) {
      if (!(e instanceof NotApplicable)) throw e
      emit({ event: "na", framework: label, scenario: args.scenario, reason: e.message })
      process.exit(0)
    }
    const t2 = performance.now()
    const samples = []
    let cpu = 0
    let firstRunMs = null

    const one = async () => {
      const before = ctx.tools.calls
      const ts = performance.now()
      const texts = spec.concurrency === 1 ? [await runOnce()] : await Promise.all(Array.from({ length: spec.concurrency }, runOnce))
      const dt = performance.now() - ts
      const got = ctx.tools.calls - before
      const bad = texts.filter((t) => typeof t !== "string" || spec.expectedText.some((s) => !t.includes(s)))
      if (got !== spec.expectedTools || bad.length) {
        throw new Error(`bad run: tool calls ${got} (want ${spec.expectedTools}), text ${JSON.stringify(bad[0])}`)
      }
      if (firstRunMs === null) firstRunMs = dt
      return dt
    }
    const warm = async (k) => {
      for (let i = 0; i < k; i++) await one()
    }
    const timed = async (k) => {
      const c0 = cpuMs()
      for (let i = 0; i < k; i++) samples.push(await one())
      cpu += cpuMs() - c0
    }

    if (args.control) {
      emit({ event: "ready", init_ms: t2 - t0, import_ms: t1 - t0, version })
      const rl = readline.createInterface({ input: process.stdin, terminal: false })
      for await (const line of rl) {
        const parts = line.trim().split(/\s+/)
        if (!parts[0]) continue
        if (parts[0] === "warmup") {
          await warm(parseInt(parts[1], 10))
          emit({ event: "ok" })
        } else if (parts[0] === "run") {
          await timed(parseInt(parts[1], 10))
          emit({ event: "ok", n: samples.length })
        } else if (parts[0] === "done") {
          break
        } else {
          emit({ event: "error", error: `bad command ${line}` })
        }
      }
    } else {
      await warm(args.warmup)
      await timed(args.runs)
    }
    const n = Math.max(samples.length, 1)
    emit({
      event: "result",
      framework: label,
      version,
      lang: "node",
      kind,
      style: ctx.style,
      scenario: spec.name,
      runs: samples.length,
      init_ms: t2 - t0,
      import_ms: t1 - t0,
      first_run_ms: firstRunMs,
      per_run_ms: stats(samples),
      cpu_ms_per_run: cpu / n,
      peak_rss_mb: process.resourceUsage().maxRSS / 1024,
      turns_per_run: spec.expectedTurns,
      tool_calls_per_run: spec.expectedTools,
      node: process.version,
    })
    process.exit(0)
  } catch (e) {
    console.error(e?.stack ?? e)
    emit({ event: "error", framework: label, scenario: args.scenario, error: String(e?.stack ?? e).slice(0, 2000) })
    process.exit(1)
  }
}
