// In-process models (SPEC §8): the JS port's createInProcessClient, through a whole run with a
// tool and a durable suspension; a throw ends the run once; wire options are refused.
import assert from 'node:assert/strict'
import { describe, test } from 'node:test'

import { answerOutput, createInProcessClient, createToolkit, defineTool, pending } from '../index.mjs'

const ask = defineTool({
  name: 'ask',
  description: 'Ask the user.',
  inputSchema: { type: 'object', properties: {} },
  run: async (_a, ctx) => (ctx.answer ? `told ${ctx.answer.data.output}` : pending({ id: 'q-1', kind: 'question', prompt: 'Which?' })),
})

describe('createInProcessClient', () => {
  test('a run with a tool halts, and resumes from JSON', async () => {
    const seen = []
    const generate = async (req) => {
      seen.push(req)
      if (seen.length === 1) return { toolCalls: [{ name: 'ask', arguments: {} }], usage: { promptTokens: 2, completionTokens: 1 } }
      return { content: `done: ${req.messages.at(-1).content}` }
    }
    const c = createInProcessClient({ model: 'local', generate, systemPrompt: 'Terse.' })
    const tk = await createToolkit({ builtins: false, extraTools: [ask] })
    const halted = await c.run('pick', { toolkit: tk })
    assert.equal(halted.status, 'pending')
    assert.equal(halted.usage.totalTokens, 3)
    const saved = JSON.parse(JSON.stringify({ messages: halted.messages, pending: halted.pending }))
    const done = await c.runWithAnswer(tk, saved.messages, saved.pending, answerOutput('q-1', 'red'))
    assert.equal(done.text, 'done: told red')
    assert.equal(seen[0].model, 'local')
    assert.deepEqual(seen[0].messages[0], { role: 'system', content: 'Terse.' })
    assert.equal(seen[0].tools[0].function.name, 'ask')
    assert.equal(seen[0].body.model, 'local')
  })

  test('what generate throws ends the run, once', async () => {
    let calls = 0
    const c = createInProcessClient({ model: 'm', generate: () => { calls++; throw new Error('my in-process model blew up') } })
    await assert.rejects(c.run('hi'), /my in-process model blew up/)
    assert.equal(calls, 1)
  })

  test('the wire options are refused; generate must be a function', () => {
    for (const [k, v] of [['baseUrl', 'http://x'], ['apiKey', 'k'], ['style', 'openai'], ['fetch', () => {}]]) {
      assert.throws(() => createInProcessClient({ model: 'm', generate: () => ({}), [k]: v }),
        (e) => e.code === 'invalid_argument' && e.message.includes(`does not take \`${k}\``) && /no wire/.test(e.message))
    }
    for (const [k, v] of [['retries', 3], ['onError', () => 'retry']]) {
      assert.throws(() => createInProcessClient({ model: 'm', generate: () => ({}), [k]: v }),
        (e) => e.code === 'invalid_argument' && e.message.includes(`does not take \`${k}\``) && /nothing is retried/.test(e.message))
    }
    assert.doesNotThrow(() => createInProcessClient({ model: 'm', generate: () => ({}), fetch: null, onError: undefined }))
    assert.throws(() => createInProcessClient({ model: 'm' }), (e) => e.code === 'invalid_argument' && /generate/.test(e.message))
  })
})

describe('content parts', () => {
  const B64 = 'iVBORw0KGgoAAAANSUhEUgAAAAgAAAAICAIAAABLbSncAAAAGUlEQVR42mP4z8AARwyrkBAVJZClkAEVJQBm3VpRJDtqMQAAAABJRU5ErkJggg=='
  const image = { type: 'image', mimeType: 'image/png', data: B64 }
  test('a prompt of parts and a tool returning parts reach the model as its blocks', async () => {
    const seen = []
    const generate = async (req) => {
      seen.push(req)
      return seen.length === 1 ? { toolCalls: [{ id: 'c1', name: 'shot', arguments: {} }] } : { content: 'seen' }
    }
    const shot = defineTool({ name: 'shot', description: 'd', inputSchema: { type: 'object', properties: {} },
      run: async () => ({ output: 'shot output', isError: false, parts: [image] }) })
    const c = createInProcessClient({ model: 'm', generate })
    const tk = await createToolkit({ builtins: false, extraTools: [shot] })
    const r = await c.run(['look', image], { toolkit: tk })
    assert.deepEqual(seen[0].messages.at(-1).content.map((b) => b.type), ['text', 'image_url'])
    const wire = seen[1].messages
    assert.deepEqual(wire.at(-2), { role: 'tool', tool_call_id: 'c1', content: 'shot output' })
    assert.equal(wire.at(-1).content[0].text, 'Output of tool shot (c1):')
    assert.deepEqual(r.messages.find((m) => m.role === 'tool').parts, [image])
  })
  test('a tool part over maxPartBytes is a placeholder, warned about once', async () => {
    const warnings = []
    const listen = (w) => warnings.push(w)
    process.on('warning', listen)
    try {
      let n = 0
      const generate = async () => (++n % 2 === 1 ? { toolCalls: [{ id: `c${n}`, name: 'shot', arguments: {} }] } : { content: 'ok' })
      const shot = defineTool({ name: 'shot', description: 'd', inputSchema: { type: 'object', properties: {} },
        run: async () => ({ output: 'shot output', isError: false, parts: [image] }) })
      const c = createInProcessClient({ model: 'm', maxPartBytes: 10, generate })
      const tk = await createToolkit({ builtins: false, extraTools: [shot] })
      await c.run('look', { toolkit: tk })
      await c.run('again', { toolkit: tk })
      await new Promise((resolve) => setImmediate(resolve))
    } finally {
      process.off('warning', listen)
    }
    const mine = warnings.filter((w) => /over the maxPartBytes limit of 10/.test(w.message))
    assert.equal(mine.length, 1, warnings.map((w) => w.message).join('; '))
    assert.equal(mine[0].code, 'content_part_placeholder')
  })

  test('a prompt part over maxPartBytes is a ContentPartError before any call', async () => {
    let calls = 0
    const c = createInProcessClient({ model: 'm', maxPartBytes: 10, generate: () => { calls++; return { content: 'x' } } })
    await assert.rejects(c.run([image]), (e) => e.code === 'content_part' && /over the maxPartBytes limit of 10/.test(e.message))
    assert.equal(calls, 0)
  })
})
