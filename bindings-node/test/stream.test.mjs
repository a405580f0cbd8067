// Streaming (SPEC §8) with the JS port's `stream`: an async iterator of the run's steps in the
// port's shapes, text arriving while the answer still streams, then `done`.
import assert from 'node:assert/strict'
import http from 'node:http'
import { after, before, describe, test } from 'node:test'

import { createClient, createToolkit, defineTool, pending } from '../index.mjs'

const sse = (...events) => [...events.map((e) => `data: ${JSON.stringify(e)}\n\n`), 'data: [DONE]\n\n']
const text = (...parts) =>
  sse(...parts.map((p) => ({ choices: [{ delta: { content: p } }] })),
    { choices: [{ delta: {}, finish_reason: 'stop' }], usage: { prompt_tokens: 2, completion_tokens: 1, total_tokens: 3 } })
const call = (id, name) =>
  sse({ choices: [{ delta: { tool_calls: [{ index: 0, id, function: { name, arguments: '{}' } }] } }] },
    { choices: [{ delta: {}, finish_reason: 'tool_calls' }] })

// One scripted event stream per request; '<wait>' holds the rest until `gate()` is called.
let answers = []
let gate = () => {}
let heldTooLong = false
const server = http.createServer((req, res) => {
  req.resume()
  req.on('end', async () => {
    res.writeHead(200, { 'content-type': 'text/event-stream' })
    for (const ev of answers.shift() ?? []) {
      if (ev === '<wait>') {
        heldTooLong = !(await Promise.race([new Promise((r) => { gate = () => r(true) }), new Promise((r) => setTimeout(() => r(false), 5000).unref())]))
        continue
      }
      res.write(ev)
    }
    res.end()
  })
})
before(() => new Promise((r) => server.listen(0, '127.0.0.1', r)))
after(() => { server.closeAllConnections(); return new Promise((r) => server.close(r)) })
const client = (extra = {}) => createClient({ baseUrl: `http://127.0.0.1:${server.address().port}/v1`, style: 'openai', model: 'm', apiKey: 'k', ...extra })

describe('stream', () => {
  test('text arrives while the answer still streams, then done', async () => {
    answers = [[text('Hel')[0], '<wait>', ...text('lo')]]
    const events = []
    for await (const ev of client().stream('hi')) {
      if (ev.type === 'text') gate()
      events.push(ev)
    }
    assert.equal(heldTooLong, false, 'the first delta came only with the whole answer')
    assert.deepEqual(events.map((e) => e.type), ['text', 'text', 'usage', 'done'])
    assert.deepEqual(events[2].usage, { promptTokens: 2, completionTokens: 1, totalTokens: 3 })
    assert.equal(events[3].result.text, 'Hello')
  })

  test('tool calls, a suspension and its result, in the port\'s shapes', async () => {
    answers = [call('c1', 'ask'), text('ok')]
    const ask = defineTool({ name: 'ask', description: 'Ask.', inputSchema: { type: 'object' },
      run: async (_a, ctx) => (ctx.answer ? 'told' : pending({ id: 'q-1', kind: 'question', prompt: 'Which?' })) })
    const tk = await createToolkit({ builtins: false, extraTools: [ask] })
    const events = []
    for await (const ev of client({ waitFor: (r) => ({ id: r.id, ok: true }) }).stream('go', { toolkit: tk })) events.push(ev)
    assert.deepEqual(events.map((e) => e.type), ['tool_call', 'pending', 'tool_result', 'text', 'usage', 'done'])
    assert.equal(events[1].request.id, 'q-1')
    assert.deepEqual(events[2], { type: 'tool_result', id: 'c1', name: 'ask', output: 'told', isError: false })
  })

  test('leaving the loop early aborts the run', async () => {
    answers = [[text('Hel')[0], '<wait>', ...text('lo')]]
    const metrics = []
    for await (const ev of client({ onMetric: (m) => metrics.push(m) }).stream('hi')) {
      if (ev.type === 'text') break
    }
    // The server holds the rest for 5 s; the run ends at once, cancelled, when the loop is left.
    const run = metrics.find((m) => m.event === 'run')
    assert.ok(run && /cancel/.test(run.error), JSON.stringify(metrics))
    gate()
  })

  test('a failed run throws from the iteration', async () => {
    answers = [['data: {nope\n\n']]
    await assert.rejects(async () => { for await (const _ of client().stream('hi')) { /* drain */ } }, (e) => e.code === 'protocol')
  })

  test('with an id the stream is a turn of a stored conversation, and ask streams on_text', async () => {
    const c = client()
    answers = [text('one'), text('two')]
    for await (const _ of c.stream('first', { id: 's' })) { /* drain */ }
    const deltas = []
    const r = await c.ask('second', { id: 's', on_text: (d) => deltas.push(d) })
    assert.equal(r.text, 'two')
    assert.deepEqual(deltas, ['two'])
    const stored = await c.conversationStore().get('s')
    assert.deepEqual(stored.filter((m) => m.role === 'user').map((m) => m.content), ['first', 'second'])
  })
})
