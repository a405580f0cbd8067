// Translation (SPEC §11): one OpenAI-shaped turn through the client's provider, the JS port's
// names and shapes, no tool run.
import assert from 'node:assert/strict'
import { describe, test } from 'node:test'

import { createClient, createToolkit, defineTool, fromBytes } from '../index.mjs'
import { anthropicReply, mockForThisFile, openaiReply } from './mock.mjs'

const mock = mockForThisFile()
const weather = [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object' } } }]

describe('translate', () => {
  test('an Anthropic tool_use turn comes back as OpenAI tool calls; the toolkit is declared, never run', async () => {
    let ran = 0
    const add = defineTool({ name: 'add', description: 'Add.', inputSchema: { type: 'object' }, run: () => { ran++; return '2' } })
    const toolkit = await createToolkit({ builtins: false, extraTools: [add] })
    const c = createClient({ baseUrl: mock.url(), style: 'anthropic', model: 'm', apiKey: 'k' })
    mock.script([anthropicReply('', [['t1', 'add', { a: 1 }], ['t2', 'get_weather', { city: 'X' }]])])
    const r = await c.translate({
      messages: [{ role: 'system', content: 'Brief.' }, { role: 'user', content: 'go' }],
      tools: weather, toolkit, toolChoice: 'required', maxTokens: 64,
    })
    assert.equal(r.finishReason, 'tool_calls')
    assert.deepEqual(r.toolCalls, [{ id: 't1', name: 'add', arguments: '{"a":1}' }, { id: 't2', name: 'get_weather', arguments: '{"city":"X"}' }])
    assert.deepEqual(r.usage, { promptTokens: 1, completionTokens: 1, totalTokens: 2 })
    assert.equal(r.raw.stop_reason, 'tool_use', 'raw is the provider body, its keys unchanged')
    assert.equal(ran, 0)
    const body = mock.seen[0].body
    assert.deepEqual([body.system, body.max_tokens, body.tool_choice], ['Brief.', 64, { type: 'any' }])
    assert.deepEqual(body.tools.map((t) => t.name), ['add', 'get_weather'])
    assert.equal(mock.seen.length, 1)
  })

  test('OpenAI passes through, arguments byte for byte', async () => {
    const c = createClient({ baseUrl: mock.url('/v1'), style: 'openai', model: 'm', apiKey: 'k' })
    mock.script([openaiReply('', [['c1', 'get_weather', '{ "city" : "Y" }']])])
    const r = await c.translate({ messages: [{ role: 'user', content: 'hi' }], tools: weather })
    assert.equal(r.toolCalls[0].arguments, '{ "city" : "Y" }')
    assert.equal(mock.seen[0].path, '/v1/chat/completions')
    assert.deepEqual(mock.seen[0].body.tools, weather)
  })

  test('content parts go out as the style\'s blocks; the llm event lists them, never their data', async () => {
    const events = []
    const c = createClient({ baseUrl: mock.url(), style: 'anthropic', model: 'm', apiKey: 'k', onMetric: (e) => events.push(e) })
    const png = fromBytes(Buffer.from('\x89PNG\r\n\x1a\n', 'latin1'), 'image/png')
    mock.script([anthropicReply('a chart')])
    const r = await c.translate({
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'what is this' }, png] },
        { role: 'assistant', tool_calls: [{ id: 'c1', type: 'function', function: { name: 'shot', arguments: '{}' } }] },
        { role: 'tool', tool_call_id: 'c1', content: [{ type: 'text', text: 'taken' }, png] },
      ],
    })
    assert.equal(r.text, 'a chart')
    const block = { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } }
    const sent = mock.seen[0].body.messages
    assert.deepEqual(sent[0].content, [{ type: 'text', text: 'what is this' }, block])
    assert.deepEqual(sent[2].content[0].content, [{ type: 'text', text: 'taken' }, block])
    const llm = events.find((e) => e.event === 'llm')
    assert.deepEqual(llm.parts, [{ type: 'image', mimeType: 'image/png', bytes: 8 }, { type: 'image', mimeType: 'image/png', bytes: 8 }])
    assert.ok(!JSON.stringify(events).includes('iVBORw0KGgo='))
    const both = { type: 'image', mimeType: 'image/png', data: 'AA==', url: 'https://x.test/a.png' }
    await assert.rejects(c.translate({ messages: [{ role: 'user', content: [both] }] }), (e) => e.code === 'content_part')
    assert.equal(mock.seen.length, 1, 'a malformed part is refused before anything is sent')
  })

  test('bad requests are InvalidArgumentErrors, nothing sent; an aborted call rejects', async () => {
    const c = createClient({ baseUrl: mock.url('/v1'), style: 'openai', model: 'm', apiKey: 'k' })
    mock.script([])
    assert.throws(() => c.translate({ tools: [] }), (e) => e.code === 'invalid_argument' && /messages/.test(e.message))
    assert.throws(() => c.translate({ messages: [], nope: 1 }), /unknown translate request key "nope"/)
    assert.throws(() => c.translate('hi'), (e) => e.code === 'invalid_argument')
    assert.equal(mock.seen.length, 0)
    mock.script([{ ...openaiReply('late'), delayMs: 2000 }])
    const ac = new AbortController()
    const p = c.translate({ messages: [{ role: 'user', content: 'x' }], signal: ac.signal })
    setTimeout(() => ac.abort(), 20)
    await assert.rejects(p, (e) => e.name === 'AbortError')
  })
})

describe('translate mappings', () => {
  test('are the engine\'s, with the JS port\'s names', async () => {
    const { openAIMessagesToAnthropic, openAIToolsToAnthropic, openAIToolChoiceToAnthropic, finishReasonFor } = await import('../index.mjs')
    const { messages, system } = openAIMessagesToAnthropic([
      { role: 'developer', content: 'D.' },
      { role: 'tool', tool_call_id: 'a', content: '1' },
      { role: 'tool', tool_call_id: 'b', content: '2' },
    ])
    assert.equal(system, 'D.')
    assert.deepEqual(messages[0].content.map((b) => b.tool_use_id), ['a', 'b'])
    assert.deepEqual(openAIToolsToAnthropic(weather), [{ name: 'get_weather', input_schema: { type: 'object' } }])
    assert.deepEqual(openAIToolChoiceToAnthropic('none'), { type: 'none' })
    assert.equal(openAIToolChoiceToAnthropic('auto'), undefined)
    assert.equal(finishReasonFor(false, 'max_tokens'), 'length')
    assert.throws(() => openAIMessagesToAnthropic(5), (e) => e.code === 'invalid_argument')
  })
})
