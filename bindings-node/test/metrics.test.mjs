// Metrics (SPEC §8): onMetric events from real runs, in order and before the run settles, as
// the JS port's objects; client.metrics() as Prometheus text.
import assert from 'node:assert/strict'
import { describe, test } from 'node:test'

import { createToolkit, defineTool, pending } from '../index.mjs'
import { mockForThisFile, openaiClient, openaiReply } from './mock.mjs'

const mock = mockForThisFile()

const askTool = defineTool({
  name: 'ask',
  description: 'Ask the user.',
  inputSchema: { type: 'object', properties: {} },
  run: async (_args, ctx) => (ctx.answer ? `told ${ctx.answer.data.output}` : pending({ kind: 'question', prompt: 'Which?' })),
})

describe('metrics', () => {
  test('every event arrives, in order, before the Promise settles', async () => {
    const events = []
    const client = openaiClient(mock, {
      onMetric: (e) => events.push(e),
      waitFor: (r) => ({ id: r.id, ok: true, data: { output: 'blue' } }),
    })
    const before = client.metrics()
    assert.match(before, /^# HELP toolnexus_llm_requests_total Total LLM requests\.\n/)
    assert.doesNotMatch(before, /^toolnexus_/m)
    mock.script([openaiReply('', [['c1', 'ask', '{}']]), openaiReply('done')])
    const tk = await createToolkit({ builtins: false, extraTools: [askTool] })
    const r = await client.run('go', { toolkit: tk })
    assert.equal(r.toolCalls[0].output, 'told blue')
    assert.deepEqual(events.map((e) => e.event), ['llm', 'tool', 'tool', 'llm', 'run'])
    assert.deepEqual(Object.keys(events[0]).sort(), ['completionTokens', 'event', 'model', 'ms', 'promptTokens', 'status'])
    assert.equal(events[1].pending, true)
    assert.equal(events[1].isError, false)
    assert.equal(events[2].pending, undefined)
    const run = events[4]
    assert.deepEqual([run.turns, run.toolCalls, run.totalTokens, run.model, run.error], [2, 1, 4, 'm', undefined])
    const text = client.metrics()
    assert.ok(text.includes('toolnexus_llm_requests_total{model="m",status="ok"} 2\n'), text)
    assert.ok(text.includes('toolnexus_tool_calls_total{tool="ask",source="native",is_error="false",pending="true"} 1\n'))
    assert.ok(text.endsWith('# TYPE toolnexus_run_errors_total counter\n'))
  })

  test("an llm event lists its call's parts, never their data", async () => {
    const events = []
    const client = openaiClient(mock, { onMetric: (e) => events.push(e) })
    mock.script([openaiReply('a square')])
    const png = { type: 'image', mimeType: 'image/png', data: 'iVBORw0KGgo=' }
    await client.run([{ type: 'text', text: 'look' }, png])
    assert.deepEqual(events[0].parts, [{ type: 'image', mimeType: 'image/png', bytes: 8 }])
    assert.ok(!JSON.stringify(events).includes(png.data))
    assert.equal(events.at(-1).parts, undefined)
  })

  test('a failed run reports its error, never the key', async () => {
    const events = []
    const client = openaiClient(mock, { onMetric: (e) => events.push(e), retries: 0, apiKey: 'sk-node-secret' })
    mock.script([{ status: 401, body: { error: 'bad key sk-node-secret' } }])
    await assert.rejects(client.run('hi'))
    assert.deepEqual(events.map((e) => [e.event, e.status]), [['llm', 'error'], ['run', undefined]])
    assert.ok(events[1].error && !events[1].error.includes('sk-node-secret'), events[1].error)
    assert.ok(client.metrics().includes('toolnexus_run_errors_total{model="m"} 1\n'))
  })

  test('a throwing onMetric is a warning, not a failed run', async () => {
    const warnings = []
    const listen = (w) => warnings.push(w)
    process.on('warning', listen)
    try {
      const client = openaiClient(mock, { onMetric: () => { throw new Error('sink down') } })
      mock.script([openaiReply('fine')])
      assert.equal((await client.run('hi')).text, 'fine')
      await new Promise((r) => setImmediate(r))
      const mine = warnings.filter((w) => w.code === 'metric_sink_failed')
      assert.equal(mine.length, 2)
      assert.match(mine[0].message, /sink down/)
    } finally {
      process.off('warning', listen)
    }
  })

  test('onMetric must be a function', () => {
    assert.throws(() => openaiClient(mock, { onMetric: 5 }), /onMetric/)
  })
})

describe('metrics and the process', () => {
  test('a client with onMetric that never runs does not keep the process alive', async () => {
    const { spawnSync } = await import('node:child_process')
    const script = `const tn = require(${JSON.stringify(new URL('../index.js', import.meta.url).pathname)});
      const c = tn.createClient({ baseUrl: 'http://127.0.0.1:9/v1', style: 'openai', model: 'm', apiKey: 'k', onMetric: () => {} });
      console.log(c.metrics().startsWith('# HELP') ? 'ok' : 'bad')`
    const child = spawnSync(process.execPath, ['-e', script], { timeout: 10000, encoding: 'utf8' })
    assert.equal(child.error, undefined, 'the process did not exit by itself within 10 s')
    assert.equal(child.stdout.trim(), 'ok', child.stderr)
  })
})
