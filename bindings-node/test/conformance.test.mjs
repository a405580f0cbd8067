// Replays every scenario of tests/conformance/ (see its README) against a loopback mock,
// with the scenario's tools written in JS: once with synchronous tools, once with async
// ones, and once with async tools and the LLM requests going through the `fetch` option.
import assert from 'node:assert/strict'
import fs from 'node:fs'
import path from 'node:path'
import { describe, test, before, after } from 'node:test'
import { fileURLToPath } from 'node:url'

import { createClient, createToolkit, defineTool, relayTool, pending } from '../index.mjs'
import { Mock, sleep } from './mock.mjs'

const DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../tests/conformance')
const FILES = fs.readdirSync(DIR).filter((f) => f.endsWith('.json')).sort()

const PINNED = { openai: ['authorization', 'content-type'], anthropic: ['x-api-key', 'anthropic-version', 'content-type'] }


/** The scenario's tool in JS; `counts[name]` counts how often its function ran. */
function buildTool(spec, counts, asyncTools) {
  const b = spec.behavior
  if (b.type === 'relay') return relayTool({ name: spec.name, description: spec.description, inputSchema: spec.input_schema })
  const behave = (ctx) => {
    switch (b.type) {
      case 'text':
        return b.output
      case 'error_result':
        return { output: b.output, isError: true }
      case 'fail':
        throw new Error(b.message)
      case 'suspend': {
        if (!ctx.answer || b.always) return pending(b.request)
        const out = typeof ctx.answer.data?.output === 'string' ? ctx.answer.data.output : ''
        return b.on_answer.replace('{output}', out)
      }
      default:
        throw new Error(`unknown behaviour ${b.type}`)
    }
  }
  const run = asyncTools
    ? async (_args, ctx) => {
        counts[spec.name] = (counts[spec.name] ?? 0) + 1
        if (b.delay_ms) await sleep(b.delay_ms)
        return behave(ctx)
      }
    : (_args, ctx) => {
        counts[spec.name] = (counts[spec.name] ?? 0) + 1
        return behave(ctx)
      }
  return defineTool({ name: spec.name, description: spec.description, inputSchema: spec.input_schema, run })
}

/** The scenario's `sources` as `createToolkit` options (the JS port's camelCase names). */
const SOURCE_OPTIONS = {
  skills: 'skills',
  skills_filter: 'skillsFilter',
  skill_sample_limit: 'skillSampleLimit',
  disable_skills: 'disableSkills',
  builtins: 'builtins',
  disable_tools: 'disableTools',
}

/**
 * With `sources`, a toolkit built from them (the file's tools as `extraTools`); else the
 * file's tools with the built-ins off; else none.
 */
async function buildToolkit(sc, counts, asyncTools) {
  const extraTools = (sc.tools ?? []).map((t) => buildTool(t, counts, asyncTools))
  if (sc.sources == null) return Array.isArray(sc.tools) ? createToolkit({ builtins: false, extraTools }) : undefined
  const opts = { extraTools }
  for (const [key, value] of Object.entries(sc.sources)) {
    assert.ok(key in SOURCE_OPTIONS, `unknown sources key ${key}`)
    opts[SOURCE_OPTIONS[key]] = value
  }
  return createToolkit(opts)
}

/** What the scenario's failing `beforeLLM` throws: the run must reject with this very error. */
class HookFailure extends Error {}

/** The scenario's hooks: `beforeTool` gates (a suspension instead of the call), `beforeLLM` fails. */
function buildHooks(sc) {
  const hooks = {}
  // A gated tool's call is short-circuited with the listed Request's suspension.
  if (sc.before_tool) hooks.beforeTool = (ev) => (sc.before_tool[ev.name] ? { result: pending(sc.before_tool[ev.name]) } : undefined)
  if (sc.before_llm) {
    hooks.beforeLLM = () => {
      throw new HookFailure(sc.before_llm.fail)
    }
  }
  return Object.keys(hooks).length ? { hooks } : {}
}

/** A RunResult back in the canonical (snake_case) form the scenario files use. */
export function canonical(r) {
  const out = {
    text: r.text,
    messages: r.messages,
    tool_calls: r.toolCalls.map((c) => ({
      name: c.name,
      args: c.args,
      output: c.output,
      is_error: c.isError,
      metadata: c.metadata ?? null,
    })),
    tool_call_count: r.toolCallCount,
    turns: r.turns,
    usage: { prompt_tokens: r.usage.promptTokens, completion_tokens: r.usage.completionTokens, total_tokens: r.usage.totalTokens },
    model: r.model,
    status: r.status,
  }
  if (r.limit !== undefined) out.limit = r.limit
  if (r.pending !== undefined) out.pending = r.pending
  return out
}

async function replay(file, mock, variant) {
  const sc = JSON.parse(fs.readFileSync(path.join(DIR, file), 'utf8'))
  assert.equal(sc.name, file.replace(/\.json$/, ''))
  const counts = {}
  const asyncTools = variant !== 'sync'
  const toolkit = await buildToolkit(sc, counts, asyncTools)
  const answers = Array.isArray(sc.wait_for) ? [...sc.wait_for] : undefined
  const waitSeen = []
  const errorsSeen = []
  const c = sc.client
  const client = createClient({
    baseUrl: sc.style === 'openai' ? mock.url('/v1') : mock.url(''),
    style: sc.style,
    model: c.model,
    apiKey: c.api_key ?? 'test-key',
    systemPrompt: c.system_prompt,
    maxTurns: c.max_turns,
    retries: c.retries,
    timeoutMs: c.timeout_ms,
    retryBaseMs: c.retry_base_ms ?? 1,
    requestParams: c.request_params,
    // The scenario's onError answers its tier and records what it was told.
    ...(sc.on_error
      ? {
          onError: (info) => {
            errorsSeen.push(Object.fromEntries(['status', 'attempt', 'retryable'].filter((k) => info[k] !== undefined).map((k) => [k, info[k]])))
            return sc.on_error
          },
        }
      : {}),
    ...(answers
      ? {
          waitFor: async (request) => {
            waitSeen.push(request)
            // An answer may name the Request it is for; the others go in order.
            let at = answers.findIndex((a) => a !== null && a.for === request.id)
            if (at < 0) at = answers.findIndex((a) => a === null || !('for' in a))
            assert.ok(at >= 0, 'waitFor called more often than scripted')
            const [next] = answers.splice(at, 1)
            if (next === null) return null
            const { for: _named, ...answer } = next
            return { ...answer, id: request.id }
          },
        }
      : {}),
    ...(variant === 'fetch' ? { fetch: globalThis.fetch } : {}),
    ...buildHooks(sc),
  })
  let previous
  for (const [i, step] of sc.steps.entries()) {
    // The mock holds a reply back `delayMs`.
    mock.script((step.replies ?? []).map((r) => (r.delay_ms ? { ...r, delayMs: r.delay_ms } : r)))
    for (const k of Object.keys(counts)) delete counts[k]
    waitSeen.length = 0
    errorsSeen.length = 0
    const got = {}
    try {
      let r
      if (step.run) {
        r = await client.run(step.run.prompt, { toolkit, history: step.run.history })
      } else {
        // The previous step's transcript and Request, unless the step gives its own.
        const { history, pending: stored, answer } = step.resume
        assert.ok(previous !== undefined || history !== undefined || step.expect.error, 'a resume step needs a previous result')
        const prev = previous ?? { messages: [], pending: undefined }
        r = await client.runWithAnswer(toolkit, history ?? prev.messages, stored ?? prev.pending ?? { id: '', kind: '', prompt: '' }, answer)
      }
      got.result = canonical(r)
      previous = r
    } catch (e) {
      if (e instanceof HookFailure) {
        got.error = { kind: 'host' }
      } else {
        assert.ok(typeof e.code === 'string', `unexpected error without code: ${e.stack}`)
        got.error = { kind: e.code }
        if (e.status !== undefined) got.error.status = e.status
      }
      previous = undefined
    }
    got.requests = mock.seen.map((s) => ({
      path: s.path,
      headers: Object.fromEntries(PINNED[sc.style].filter((h) => h in s.headers).map((h) => [h, s.headers[h]])),
      body: s.body,
    }))
    got.calls = { ...counts }
    const expect = step.expect ?? {}
    const where = `${sc.name} step ${i} (${variant})`
    assert.equal(mock.replies.length, 0, `${where}: ${mock.replies.length} scripted replies were never requested`)
    assert.deepStrictEqual(got.requests, expect.requests, `${where}: requests differ`)
    if (expect.error) assert.deepStrictEqual(got.error, expect.error, `${where}: error differs`)
    else assert.deepStrictEqual(got.result, expect.result, `${where}: result differs (error: ${JSON.stringify(got.error)})`)
    assert.deepStrictEqual(got.calls, expect.calls ?? {}, `${where}: tool calls differ`)
    // One turn's suspensions are waited for concurrently: compared as a set.
    const bySet = (list) => [...(list ?? [])].sort((a, b) => String(a?.id).localeCompare(String(b?.id)))
    if (answers) assert.deepStrictEqual(bySet(waitSeen), bySet(expect.wait_for_requests), `${where}: waitFor requests differ`)
    if (expect.metrics) assert.deepStrictEqual(maskedMetrics(client.metrics()), expect.metrics, `${where}: metrics differ`)
    if (sc.on_error) assert.deepStrictEqual(errorsSeen, expect.on_error_calls, `${where}: onError calls differ`)
  }
}

// The Prometheus text as lines, each duration sample's value (`_bucket`, `_sum`) made `*`: how
// long a call took is the one thing a replay cannot fix.
function maskedMetrics(text) {
  return text
    .replace(/\n$/, '')
    .split('\n')
    .map((line) => {
      const name = line.split(/[{ ]/, 1)[0]
      const duration = !line.startsWith('#') && /_seconds_(bucket|sum)$/.test(name)
      return duration ? `${line.slice(0, line.lastIndexOf(' '))} *` : line
    })
}

for (const variant of ['sync', 'async', 'fetch']) {
  describe(`conformance (${variant} tools${variant === 'fetch' ? ', fetch option' : ''})`, () => {
    let mock
    before(async () => {
      mock = await new Mock().start()
    })
    after(async () => {
      await mock.stop()
    })
    for (const file of FILES) test(file.replace(/\.json$/, ''), () => replay(file, mock, variant))
  })
}

test('the scenario set is complete', () => {
  assert.ok(FILES.length >= 28, `expected 28 scenarios, found ${FILES.length}`)
})
