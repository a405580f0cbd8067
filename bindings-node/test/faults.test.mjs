// The fault suite through the public JS API: every scenario of tests/faults/scenarios.json
// against tests/faults/fault_server.py (spawned here; it exits when its stdin closes). Each
// must end in its typed error (or the host's own thrown object) or its error tool result within
// its bound, and leave nothing running: no handle or request of the run is left active in this
// process, and the server saw every connection closed. A child process runs every scenario
// again alongside; it must exit by itself.
//
// `TN_FAULTS_CHILD=1 node test/faults.test.mjs` is that child: it runs the scenarios without
// node:test and prints one line per scenario.
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { readFileSync } from 'node:fs'
import net from 'node:net'
import path from 'node:path'
import { after, before, describe, test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { inspect } from 'node:util'

import * as tn from '../index.mjs'

const HERE = path.dirname(fileURLToPath(import.meta.url))
const FAULTS = path.join(HERE, '..', '..', 'tests', 'faults')
const { scenarios } = JSON.parse(readFileSync(path.join(FAULTS, 'scenarios.json'), 'utf8'))
const HOOKS = { before_llm: 'beforeLLM', after_llm: 'afterLLM', before_tool: 'beforeTool', after_tool: 'afterTool' }

/** The host's own failure: the run must reject with this very object. */
class FaultError extends Error {
  constructor(message) {
    super(message)
    this.name = 'FaultError'
  }
}

class FaultServer {
  async start() {
    this.proc = spawn('python3', [path.join(FAULTS, 'fault_server.py')], { stdio: ['pipe', 'pipe', 'inherit'] })
    this.port = await new Promise((resolve, reject) => {
      let text = ''
      this.proc.stdout.on('data', (chunk) => {
        text += chunk
        if (text.includes('\n')) resolve(Number(text.split('\n')[0]))
      })
      this.proc.on('error', reject)
      this.proc.on('exit', (code) => reject(new Error(`fault server exited (${code})`)))
    })
    this.proc.stdout.removeAllListeners('data')
    this.proc.stdout.resume()
    return this
  }

  /** `requests`: the POSTs the server saw for `prefix`; `open`: its connections not closed yet. */
  async stats(prefix) {
    const r = await fetch(`http://127.0.0.1:${this.port}/_stats/${prefix}`)
    return r.json()
  }

  async stop() {
    const exited = new Promise((resolve) => this.proc.once('exit', resolve))
    this.proc.stdin.end() // the server exits on its own
    await exited
  }
}

/** A port nothing listens on. */
async function closedPort() {
  const s = net.createServer()
  await new Promise((resolve) => s.listen(0, '127.0.0.1', resolve))
  const { port } = s.address()
  await new Promise((resolve) => s.close(resolve))
  return port
}

const camel = (k) => k.replace(/_([a-z])/g, (_, c) => c.toUpperCase())
const never = () => new Promise(() => {})

/** The scenario's host functions, recording what they threw. */
class Host {
  constructor() {
    this.raised = []
  }

  misbehave(spec) {
    if (spec.behavior === 'raise') {
      const e = new FaultError(spec.message)
      this.raised.push(e)
      throw e
    }
    assert.equal(spec.behavior, 'hang')
    return never()
  }

  callback(spec) {
    return async () => this.misbehave(spec)
  }

  tool(spec) {
    const { name, description, input_schema: inputSchema, behavior } = spec
    if (behavior === 'wrong_type') {
      return { name, description, inputSchema, execute: () => 42 } // not a ToolResult
    }
    return tn.defineTool({
      name,
      description,
      inputSchema,
      run: async (_args, ctx) => {
        if (behavior === 'text') return spec.output
        if (behavior === 'suspend') return ctx.answer ? 'approved' : tn.pending({ kind: 'approval', prompt: spec.prompt })
        if (behavior === 'garbage') {
          const loop = { note: 'JSON cannot encode me' }
          loop.self = loop
          return loop
        }
        return this.misbehave(spec)
      },
    })
  }
}

function errorTexts(e) {
  const texts = [String(e), inspect(e, { depth: 5 })]
  for (const k of ['message', 'stack', 'body', 'retryAfter']) if (e?.[k] != null) texts.push(String(e[k]))
  try {
    texts.push(JSON.stringify(e))
  } catch {}
  return texts
}

const secretsOf = (sc) => [...(sc.expect.must_not_contain ?? []), sc.client.api_key, ...Object.values(sc.client.headers ?? {})]

function checkError(sc, e, host) {
  const want = sc.expect.error
  const problems = []
  if (want.kind === 'host') {
    if (!host.raised.includes(e)) return [`${inspect(e)} is not the host's own thrown object`]
  } else if (!(e instanceof tn.ToolnexusError) || e.code !== want.kind) {
    return [`${e?.name} ${inspect(e)} (code ${e?.code}), want code ${want.kind}`]
  }
  if ('message' in want && e.message !== want.message) problems.push(`message ${e.message}, want ${want.message}`)
  if ('message_contains' in want && !e.message.includes(want.message_contains)) {
    problems.push(`message ${e.message} lacks ${want.message_contains}`)
  }
  if ('status' in want) {
    if (!(e instanceof tn.HttpError) || e.status !== want.status) {
      problems.push(`${inspect(e)}, want status ${want.status}`)
    } else {
      if ('retry_after' in want && (e.retryAfter ?? null) !== want.retry_after) {
        problems.push(`retryAfter ${e.retryAfter}, want ${want.retry_after}`)
      }
      if ('body' in want && e.body !== want.body) problems.push(`body ${JSON.stringify(e.body)}, want ${JSON.stringify(want.body)}`)
      if ('body_contains' in want && !String(e.body).includes(want.body_contains)) {
        problems.push(`body ${e.body} lacks ${want.body_contains}`)
      }
    }
  }
  const max = sc.expect.max_message_chars
  if (max != null && e.message.length > max) problems.push(`the message is ${e.message.length} chars long`)
  for (const secret of secretsOf(sc)) {
    if (errorTexts(e).some((t) => t.includes(secret))) problems.push(`the error shows the secret ${secret}: ${inspect(e)}`)
  }
  return problems
}

function checkResult(sc, r) {
  const want = sc.expect
  const problems = []
  if (r.status !== 'done') problems.push(`status ${r.status}, want done`)
  if ('text' in want && r.text !== want.text) problems.push(`text ${JSON.stringify(r.text)}, want ${JSON.stringify(want.text)}`)
  if ('text_prefix' in want && !r.text.startsWith(want.text_prefix)) {
    problems.push(`text ${JSON.stringify(r.text)}, want it to start with ${JSON.stringify(want.text_prefix)}`)
  }
  if (want.tool_calls) {
    if (r.toolCalls.length !== want.tool_calls.length) problems.push(`tool calls ${inspect(r.toolCalls)}, want ${inspect(want.tool_calls)}`)
    want.tool_calls.forEach((w, i) => {
      const got = r.toolCalls[i]
      if (!got) return
      const outputOk = w.output === null || got.output === w.output
      if (got.name !== w.name || got.isError !== w.is_error || !outputOk) problems.push(`tool call ${inspect(got)}, want ${inspect(w)}`)
    })
  }
  return problems
}

/** What keeps this process alive, as a multiset of resource names. */
function resources() {
  const counts = new Map()
  for (const r of process.getActiveResourcesInfo()) counts.set(r, (counts.get(r) ?? 0) + 1)
  return counts
}

function grown(before, now) {
  return [...now].filter(([k, n]) => n > (before.get(k) ?? 0)).map(([k, n]) => `${k} x${n - (before.get(k) ?? 0)}`)
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms))

/** Runs one scenario; resolves to what went wrong and the ms it took. */
async function replay(sc, server, tag = 'js') {
  const prefix = `${sc.server}~${tag}-${sc.name}`
  const port = sc.server === 'refused' ? await closedPort() : server.port
  const host = new Host()
  const opts = { baseUrl: `http://127.0.0.1:${port}/${prefix}/v1`, style: sc.style }
  for (const [k, v] of Object.entries(sc.client)) opts[camel(k)] = v
  if (sc.wait_for) opts.waitFor = host.callback(sc.wait_for)
  if (sc.hooks) opts.hooks = Object.fromEntries(Object.entries(sc.hooks).map(([k, s]) => [HOOKS[k], host.callback(s)]))
  if (sc.on_error) opts.onError = host.callback(sc.on_error)
  const client = tn.createClient(opts)
  const toolkit = sc.tool ? await tn.createToolkit({ builtins: false, extraTools: [host.tool(sc.tool)] }) : undefined
  const runs = sc.runs ?? 1
  const expect = sc.expect
  const problems = []
  await sleep(0)
  const before = resources()

  const started = performance.now()
  for (let run = 0; run < runs; run++) {
    if (run) await sleep(sc.pause_ms ?? 0)
    const fails = 'error' in expect && run === runs - 1
    // A hang past the bound (and a grace) is reported, never waited out.
    let timer
    const hung = new Promise((resolve) => {
      timer = setTimeout(() => resolve('hung'), sc.bound_ms + 5000)
    })
    let outcome
    try {
      outcome = await Promise.race([client.run(sc.prompt, { toolkit }).then((r) => ({ r })), hung])
    } catch (e) {
      outcome = { e }
    } finally {
      clearTimeout(timer)
    }
    if (outcome === 'hung') {
      problems.push(`run ${run} hung past ${sc.bound_ms + 5000} ms`)
      break
    }
    if ('e' in outcome) problems.push(...(fails ? checkError(sc, outcome.e, host) : [`run ${run} failed: ${inspect(outcome.e)}`]))
    else problems.push(...(fails ? [`run ${run} succeeded (${outcome.r.text}), want an error`] : checkResult(sc, outcome.r)))
  }
  const took = performance.now() - started

  if (took > sc.bound_ms) problems.push(`took ${took.toFixed(0)} ms, bound ${sc.bound_ms} ms`)
  if (expect.min_ms != null && took < expect.min_ms) problems.push(`took ${took.toFixed(0)} ms, less than ${expect.min_ms} ms`)
  // Nothing left running: no handle or request the run started is still active here.
  let left = grown(before, resources())
  for (let i = 0; i < 50 && left.length; i++) {
    await sleep(10)
    left = grown(before, resources())
  }
  if (left.length) problems.push(`left active after the run: ${left.join(', ')}`)
  let stats = await server.stats(prefix)
  if (expect.requests != null && stats.requests !== expect.requests) {
    problems.push(`the server saw ${stats.requests} requests, want ${expect.requests}`)
  }
  // The engine let go of every connection it opened (a timed-out run's included).
  for (let i = 0; i < 100 && stats.open; i++) {
    await sleep(10)
    stats = await server.stats(prefix)
  }
  if (stats.open) problems.push(`${stats.open} connections still open a second after the run`)
  return { problems, took }
}

if (process.env.TN_FAULTS_CHILD) {
  const server = await new FaultServer().start()
  let failed = 0
  for (const sc of scenarios) {
    if (sc.skip?.node) {
      console.log(`skip ${sc.name}`)
      continue
    }
    const { problems, took } = await replay(sc, server, 'js-child')
    console.log(`${problems.length ? 'FAIL' : 'ok  '} ${sc.name} (${took.toFixed(0)} ms) ${problems.join('; ')}`)
    if (problems.length) failed++
  }
  await server.stop()
  console.log(`ran ${scenarios.length} scenarios, ${failed} failed`)
} else {
  describe('faults', () => {
    const server = new FaultServer()
    const failedHere = new Set()
    let child
    before(async () => {
      await server.start()
      // The child runs alongside this process's own runs (its own tag keeps the counts apart).
      child = runChild()
    })
    after(() => server.stop())

    for (const sc of scenarios) {
      test(sc.name, { skip: sc.skip?.node }, async () => {
        const { problems } = await replay(sc, server)
        if (problems.length) failedHere.add(sc.name)
        assert.deepEqual(problems, [])
      })
    }

    test('a process that ran every fault exits by itself', async () => {
      const { code, signal, stdout, stderr } = await child
      assert.equal(signal, null, `the child did not exit by itself within 90 s:\n${stdout}`)
      assert.equal(code, 0, stdout + stderr)
      assert.equal(stderr, '')
      assert.match(stdout, new RegExp(`^ran ${scenarios.length} scenarios`, 'm'), stdout)
      // A scenario may fail here only if it failed in this process too (reported there).
      const failedThere = [...stdout.matchAll(/^FAIL (\S+)/gm)].map((m) => m[1])
      assert.deepEqual(failedThere.filter((n) => !failedHere.has(n)), [], stdout)
    })
  })
}

/** Every scenario again in a child process; resolves when it exits (killed after 90 s). */
function runChild() {
  const proc = spawn(process.execPath, [fileURLToPath(import.meta.url)], {
    env: { ...process.env, TN_FAULTS_CHILD: '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let stdout = ''
  let stderr = ''
  proc.stdout.on('data', (c) => (stdout += c))
  proc.stderr.on('data', (c) => (stderr += c))
  const killer = setTimeout(() => proc.kill('SIGKILL'), 90_000)
  return new Promise((resolve) => {
    proc.on('close', (code, signal) => {
      clearTimeout(killer)
      resolve({ code, signal, stdout, stderr })
    })
  })
}
