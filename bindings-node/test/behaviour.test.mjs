// The binding's behaviour beyond the conformance files: both styles end to end, hooks,
// retries, durable halt + runWithAnswer, relay, AbortSignal, the toolkit API. Errors and the
// process exit are in errors.test.mjs.
import assert from 'node:assert/strict'
import { createRequire } from 'node:module'
import { describe, test } from 'node:test'

import * as tn from '../index.mjs'
import { anthropicReply, mockForThisFile, openaiClient, openaiReply, sleep } from './mock.mjs'

const {
  createClient,
  createToolkit,
  defineTool,
  relayTool,
  pending,
  pendingOf,
  authRequired,
  answerOutput,
  answerDeclined,
} = tn

const mock = mockForThisFile()
const openai = (extra = {}) => openaiClient(mock, extra)

async function weatherToolkit(counter = { n: 0 }) {
  return createToolkit({
    builtins: false,
    extraTools: [
      defineTool({
        name: 'get_weather',
        description: 'Weather.',
        inputSchema: { type: 'object', properties: { city: { type: 'string' } } },
        run: async ({ city }) => {
          counter.n++
          return `Sunny in ${city}`
        },
      }),
      defineTool({
        name: 'add',
        description: 'Add.',
        run: ({ a, b }) => {
          counter.n++
          return a + b
        },
      }),
    ],
  })
}

describe('both styles', () => {
  test('openai: parallel tools, camelCase result', async () => {
    const counter = { n: 0 }
    const tk = await weatherToolkit(counter)
    mock.script([
      openaiReply(null, [
        ['c1', 'get_weather', '{"city":"Paris"}'],
        ['c2', 'add', '{"a":2,"b":2}'],
      ]),
      openaiReply('FINAL', [], { prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 }),
    ])
    const r = await openai({ systemPrompt: 'Be terse.' }).run('weather?', { toolkit: tk })
    assert.equal(r.status, 'done')
    assert.equal(r.text, 'FINAL')
    assert.equal(r.turns, 2)
    assert.equal(r.toolCallCount, 2)
    assert.equal(counter.n, 2)
    assert.deepEqual(
      r.toolCalls.map((c) => [c.name, c.output, c.isError]),
      [
        ['get_weather', 'Sunny in Paris', false],
        ['add', '4', false],
      ],
    )
    assert.deepEqual(r.usage, { promptTokens: 4, completionTokens: 5, totalTokens: 9 })
    assert.equal(mock.seen[0].path, '/v1/chat/completions')
    assert.equal(mock.seen[0].headers.authorization, 'Bearer k')
    assert.deepEqual(mock.seen[0].body.messages[0], { role: 'system', content: 'Be terse.' })
    assert.deepEqual(
      mock.seen[1].body.messages.slice(-2).map((m) => [m.role, m.tool_call_id, m.content]),
      [
        ['tool', 'c1', 'Sunny in Paris'],
        ['tool', 'c2', '4'],
      ],
    )
    assert.equal(r.limit, undefined)
    assert.equal(r.pending, undefined)
  })

  test('anthropic: tool_use round trip, system and headers', async () => {
    const tk = await weatherToolkit()
    mock.script([anthropicReply('Let me check.', [['tu1', 'get_weather', { city: 'Oslo' }]]), anthropicReply('Cold.')])
    const client = createClient({ baseUrl: mock.url(''), style: 'anthropic', model: 'claude', apiKey: 'ak', systemPrompt: 'S' })
    const r = await client.run('weather in Oslo?', { toolkit: tk })
    assert.equal(r.text, 'Cold.')
    assert.equal(mock.seen[0].path, '/v1/messages')
    assert.equal(mock.seen[0].headers['x-api-key'], 'ak')
    assert.equal(mock.seen[0].headers['anthropic-version'], '2023-06-01')
    assert.equal(mock.seen[0].body.system, 'S')
    assert.deepEqual(mock.seen[0].body.tools[0], tk.toAnthropic()[0])
    const last = mock.seen[1].body.messages.at(-1)
    assert.deepEqual(last.content[0], { type: 'tool_result', tool_use_id: 'tu1', content: 'Sunny in Oslo', is_error: false })
    assert.equal(r.usage.totalTokens, 4)
  })

  test('requestParams and bodyTransform shape the body', async () => {
    mock.script([openaiReply('ok')])
    await openai({
      requestParams: { temperature: 0 },
      bodyTransform: (body) => ({ ...body, messages: body.messages.map((m) => ({ ...m, content: m.content.toUpperCase() })) }),
    }).run('quiet')
    assert.equal(mock.seen[0].body.temperature, 0)
    assert.deepEqual(mock.seen[0].body.messages, [{ role: 'user', content: 'QUIET' }])
  })

  test('messages is a plain property once read (spread, JSON, assignment)', async () => {
    mock.script([openaiReply('a')])
    const r = await openai().run('x')
    assert.ok(Object.keys(r).includes('messages'))
    assert.equal(JSON.parse(JSON.stringify(r)).messages.length, 2)
    assert.deepEqual({ ...r }.messages, r.messages)
    assert.equal(r.messages, r.messages, 'built once')
    r.messages = ['replaced']
    assert.deepEqual(r.messages, ['replaced'])
    mock.script([openaiReply('b')])
    const s = await openai().run('y')
    s.messages = []
    assert.deepEqual(Object.getOwnPropertyDescriptor(s, 'messages'), { value: [], writable: true, enumerable: true, configurable: true })
  })

  test('messages is an enumerable accessor until first use; read through an heir it fills the result', async () => {
    mock.script([openaiReply('a')])
    const r = await openai().run('x')
    const before = Object.getOwnPropertyDescriptor(r, 'messages')
    assert.deepEqual([typeof before.get, typeof before.set, before.enumerable, before.configurable], ['function', 'function', true, true])
    assert.equal(before.get.call({}), undefined, 'another object holds nothing')
    assert.equal(before.get.call(7), undefined)
    const client = openai()
    assert.equal(before.get.call(client), undefined, "a class instance's own wrap is left alone")
    before.set.call(client, 'x')
    mock.script([openaiReply('still')])
    assert.equal((await client.run('z')).text, 'still')
    const heir = Object.create(r)
    assert.equal(heir.messages.length, 2)
    assert.equal(Object.hasOwn(heir, 'messages'), false)
    assert.equal(Object.getOwnPropertyDescriptor(r, 'messages').value, heir.messages, 'the result itself was filled')
    assert.equal(before.get.call(r), undefined, 'a kept getter has nothing left to give')

    mock.script([openaiReply('b')])
    const s = await openai().run('y')
    const child = Object.create(s)
    child.messages = ['mine']
    assert.deepEqual(child.messages, ['mine'])
    assert.equal(s.messages.length, 2, 'assigning on an heir leaves the result its own')
  })

  test('an integer past 2^53 in tool arguments is a plain number in the result, which JSON.stringify takes', async () => {
    const tk = await weatherToolkit()
    mock.script([openaiReply(null, [['c1', 'add', '{"a":12345678901234567890,"b":1}']]), openaiReply('big')])
    const r = await openai().run('sum', { toolkit: tk })
    assert.equal(typeof r.toolCalls[0].args.a, 'number')
    assert.equal(r.toolCalls[0].args.a, 12345678901234567890)
    assert.equal(JSON.parse(JSON.stringify(r)).toolCalls[0].args.b, 1)
  })

  test("a tool's arguments are read as JSON.parse reads them: integers past 2^32 are numbers", async () => {
    const tk = await weatherToolkit()
    const args = '{"a":5000000000,"b":12345678901234567890}'
    mock.script([openaiReply(null, [['c1', 'add', args]]), openaiReply('big')])
    const r = await openai().run('sum', { toolkit: tk })
    assert.deepEqual([r.toolCalls[0].isError, r.toolCalls[0].output], [false, String(5000000000 + 12345678901234567890)])
  })

  test('history continues a transcript', async () => {
    mock.script([openaiReply('again')])
    const history = [
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: 'hello' },
    ]
    const r = await openai().run('more', { history })
    assert.deepEqual(mock.seen[0].body.messages, [...history, { role: 'user', content: 'more' }])
    assert.equal(r.messages.length, 4)
    assert.deepEqual(r.messages.slice(2), [{ role: 'user', content: 'more' }, { role: 'assistant', content: 'again' }])
  })

  test("a result's transcript starts with the caller's own history messages, not copies", async () => {
    const tagged = { role: 'user', content: 'hi' }
    const history = [tagged, { role: 'assistant', content: 'hello' }]
    mock.script([openaiReply('again')])
    const r = await openai().run('more', { history })
    assert.equal(r.messages[0], tagged, 'the same object')
    assert.notEqual(r.messages, history, 'a new array: the caller\'s is not changed')
    assert.equal(history.length, 2)
    assert.deepEqual(Object.getOwnPropertyDescriptor(r, 'messages').enumerable, true)
    assert.equal(JSON.parse(JSON.stringify(r)).messages.length, 4)

    // A message the engine does not send as given is not put back as given: the transcript
    // keeps only the unchanged leading ones (here: none past the first).
    const odd = [tagged, { role: 'assistant', content: 'x', extra: undefined }]
    mock.script([openaiReply('ok')])
    const s = await openai().run('again', { history: odd })
    assert.equal(s.messages[0], tagged)
    assert.deepEqual(s.messages.slice(2).map((m) => m.content), ['again', 'ok'])

    // runWithAnswer continues the halted transcript the caller holds.
    const approve = tn.defineTool({
      name: 'approve',
      description: 'needs a yes',
      inputSchema: { type: 'object', properties: {} },
      run: (_args, ctx) => (ctx?.answer ? 'approved' : tn.pending({ kind: 'approval', prompt: 'ok?', id: 'ap-1' })),
    })
    const toolkit = await tn.createToolkit({ builtins: false, extraTools: [approve] })
    mock.script([openaiReply('', [['c1', 'approve', '{}']]), openaiReply('done')])
    const halted = await openai().run('go', { toolkit })
    assert.equal(halted.status, 'pending')
    const resumed = await openai().runWithAnswer(toolkit, halted.messages, halted.pending, tn.answerOutput('ap-1', 'yes'))
    assert.equal(resumed.status, 'done')
    // The halted transcript ends with the pending call's placeholder result, which the
    // resume replaces: every message before it is the caller's own.
    const last = halted.messages.length - 1
    for (let i = 0; i < last; i++) assert.equal(resumed.messages[i], halted.messages[i])
    assert.deepEqual([halted.messages[last].content, resumed.messages[last].content], ['ok?', 'approved'])
    assert.equal(resumed.messages.at(-1).content, 'done')
  })
})

test('maxTurns 0 sends nothing and ends incomplete', async () => {
  mock.script([])
  const r = await openai({ maxTurns: 0 }).run('hi')
  assert.deepEqual([r.status, r.limit, r.turns], ['incomplete', 'maxTurns', 0])
  assert.equal(mock.seen.length, 0)
})

describe('hooks', () => {
  test('all four hooks, async or not, on a class instance (this is kept)', async () => {
    class Recorder {
      constructor() {
        this.log = []
      }
      async beforeLLM(ev) {
        this.log.push(`beforeLLM:${ev.turn}:${ev.tools.length}`)
        return ev.turn === 0 ? { model: 'override-model' } : undefined
      }
      afterLLM(ev) {
        this.log.push(`afterLLM:${ev.turn}:${ev.model}`)
      }
      beforeTool(ev) {
        this.log.push(`beforeTool:${ev.name}:${ev.id}`)
        if (ev.name === 'add') return { result: { output: 'denied', isError: true } }
        return { args: { city: 'Rome' } }
      }
      async afterTool(ev) {
        this.log.push(`afterTool:${ev.name}:${ev.result.output}`)
        return { result: { output: ev.result.output.toUpperCase(), isError: false } }
      }
    }
    const hooks = new Recorder()
    const counter = { n: 0 }
    const tk = await weatherToolkit(counter)
    mock.script([
      openaiReply(null, [
        ['c1', 'get_weather', '{"city":"Paris"}'],
        ['c2', 'add', '{"a":1,"b":1}'],
      ]),
      openaiReply('done'),
    ])
    const r = await openai({ hooks }).run('go', { toolkit: tk })
    assert.equal(mock.seen[0].body.model, 'override-model')
    assert.equal(mock.seen[1].body.model, 'm')
    assert.equal(counter.n, 1, 'the short-circuited tool did not run')
    assert.deepEqual(
      r.toolCalls.map((c) => [c.name, c.args, c.output, c.isError]),
      [
        ['get_weather', { city: 'Rome' }, 'SUNNY IN ROME', false],
        ['add', { a: 1, b: 1 }, 'denied', true],
      ],
    )
    assert.deepEqual(hooks.log.slice(0, 2), ['beforeLLM:0:2', 'afterLLM:0:override-model'])
    assert.ok(hooks.log.includes('afterTool:get_weather:Sunny in Rome'))
    assert.ok(!hooks.log.some((l) => l.startsWith('afterTool:add')), 'no afterTool after a short-circuit')
  })

  test('beforeLLM may replace messages and tools', async () => {
    const tk = await weatherToolkit()
    mock.script([openaiReply('ok')])
    await openai({ hooks: { beforeLLM: () => ({ messages: [{ role: 'user', content: 'replaced' }], tools: [] }) } }).run('x', {
      toolkit: tk,
    })
    assert.deepEqual(mock.seen[0].body.messages, [{ role: 'user', content: 'replaced' }])
    assert.equal(mock.seen[0].body.tools, undefined)
  })

  test('hook events and overrides carry ToolResults in the JS shape (isError; a missing isError is false)', async () => {
    const tk = await weatherToolkit()
    const seen = []
    mock.script([
      openaiReply(null, [
        ['c1', 'get_weather', '{"city":"Oslo"}'],
        ['c2', 'add', '{"a":1,"b":2}'],
      ]),
      openaiReply('done'),
    ])
    const r = await openai({
      hooks: {
        beforeTool: (ev) => (ev.name === 'add' ? { result: { output: 'cached', metadata: { hit: true } } } : undefined),
        afterTool: (ev) => {
          seen.push(ev)
          return { result: { ...ev.result, isError: true } }
        },
      },
    }).run('x', { toolkit: tk })
    assert.deepEqual(seen, [
      { name: 'get_weather', args: { city: 'Oslo' }, result: { output: 'Sunny in Oslo', isError: false }, id: 'c1', turn: 0 },
    ])
    assert.deepEqual(
      r.toolCalls.map((c) => [c.output, c.isError, c.metadata]),
      [
        ['Sunny in Oslo', true, undefined],
        ['cached', false, { hit: true }],
      ],
    )
  })

  test('a beforeTool short-circuit with pending() suspends the run', async () => {
    const tk = await weatherToolkit()
    mock.script([openaiReply(null, [['c1', 'get_weather', '{"city":"X"}']])])
    const r = await openai({
      hooks: { beforeTool: () => ({ result: pending({ id: 'guard-1', kind: 'approval', prompt: 'Allow?' }) }) },
    }).run('x', { toolkit: tk })
    assert.equal(r.status, 'pending')
    assert.deepEqual(r.pending, { id: 'guard-1', kind: 'approval', prompt: 'Allow?' })
  })
})

describe('retries against a local server', () => {
  test('503 then Retry-After: 0 then success', async () => {
    mock.script([
      { status: 503, body: { error: 'busy' } },
      { status: 429, headers: { 'retry-after': '0' }, body: { error: 'slow down' } },
      openaiReply('finally'),
    ])
    const infos = []
    const r = await openai({ retries: 2, onError: (info) => void infos.push(info) }).run('x')
    assert.equal(r.text, 'finally')
    assert.equal(mock.seen.length, 3)
    assert.deepEqual(infos, [
      { status: 503, attempt: 0, retryable: true },
      { status: 429, attempt: 1, retryable: true },
    ])
  })

  test('exhausted retries throw an HttpError with status, body and retryAfter', async () => {
    mock.script([
      { status: 429, headers: { 'retry-after': '0' }, body: { error: { message: 'rate limited' } } },
      { status: 429, headers: { 'retry-after': '0' }, body: { error: { message: 'rate limited' } } },
    ])
    await assert.rejects(openai({ retries: 1 }).run('x'), (e) => {
      assert.ok(e instanceof tn.HttpError && e instanceof tn.ToolnexusError && e instanceof Error)
      assert.equal(e.name, 'HttpError')
      assert.equal(e.code, 'http')
      assert.equal(e.status, 429)
      assert.equal(e.retryAfter, '0')
      assert.match(e.body, /rate limited/)
      return true
    })
    assert.equal(mock.seen.length, 2)
  })

  test('onError "fail" (from a Promise) stops at the first failure; 400 is never retried', async () => {
    mock.script([{ status: 500, body: {} }])
    await assert.rejects(openai({ retries: 5, onError: async () => 'fail' }).run('x'), { code: 'http', status: 500 })
    assert.equal(mock.seen.length, 1)
    mock.script([{ status: 400, body: { error: 'bad' } }])
    await assert.rejects(openai({ retries: 5 }).run('x'), { code: 'http', status: 400 })
    assert.equal(mock.seen.length, 1)
  })

  test('timeoutMs bounds the whole run', async () => {
    mock.script([{ ...openaiReply('late'), delayMs: 400 }])
    const t0 = performance.now()
    await assert.rejects(openai({ timeoutMs: 60 }).run('x'), (e) => e instanceof tn.TimeoutError && e.code === 'timeout')
    assert.ok(performance.now() - t0 < 350)
    await sleep(400) // let the mock send its late reply before the next test scripts it
  })

  test('timeoutMs with fetch ends the run with its TimeoutError, and aborts the fetch', async () => {
    // A fetch that stops only on its signal: the request's deadline must not race the run's.
    const reasons = []
    const fetch = (_url, init) =>
      new Promise((_, reject) =>
        init.signal.addEventListener('abort', () => {
          reasons.push(init.signal.reason)
          reject(init.signal.reason)
        }),
      )
    for (let i = 0; i < 20; i++) {
      await assert.rejects(openai({ fetch, retries: 0, timeoutMs: 20 }).run('x'), (e) => e instanceof tn.TimeoutError)
    }
    await sleep(20)
    assert.equal(reasons.length, 20, 'every fetch was aborted')
  })
})

describe('durable halt and runWithAnswer', () => {
  test('halt, store as JSON, resume in a fresh client with the answer', async () => {
    const seen = []
    const deploy = defineTool({
      name: 'deploy',
      description: 'Deploy.',
      run: (args, ctx) => {
        seen.push({ callId: ctx.callId, answer: ctx.answer })
        if (!ctx.answer) return pending({ id: 'pnd-deploy', kind: 'approval', prompt: 'OK to deploy?', expiresAt: '2030-01-01T00:00:00Z' })
        return `deployed to ${args.env} (${ctx.answer.data.output})`
      },
    })
    const tk = await createToolkit({ builtins: false, extraTools: [deploy] })
    mock.script([openaiReply(null, [['call_9', 'deploy', '{"env":"prod"}']])])
    const halted = await openai().run('deploy', { toolkit: tk })
    assert.equal(halted.status, 'pending')
    assert.equal(halted.text, 'OK to deploy?')
    assert.deepEqual(halted.pending, { id: 'pnd-deploy', kind: 'approval', prompt: 'OK to deploy?', expiresAt: '2030-01-01T00:00:00Z' })
    assert.deepEqual(pendingOf(halted.toolCalls[0]), undefined, 'the record holds the placeholder, not the suspension')

    const stored = JSON.parse(JSON.stringify({ messages: halted.messages, pending: halted.pending }))
    mock.script([openaiReply('all done')])
    const resumed = await openai().runWithAnswer(tk, stored.messages, stored.pending, answerOutput('pnd-deploy', 'yes'))
    assert.equal(resumed.status, 'done')
    assert.equal(resumed.text, 'all done')
    assert.deepEqual(
      seen.map((s) => s.callId),
      ['call_9', 'call_9'],
    )
    assert.deepEqual(seen[1].answer, { id: 'pnd-deploy', ok: true, data: { output: 'yes' } })
    const toolMsg = mock.seen[0].body.messages.at(-1)
    assert.deepEqual(toolMsg, { role: 'tool', tool_call_id: 'call_9', content: 'deployed to prod (yes)' })
    assert.equal(mock.seen[0].body.messages.filter((m) => m.role === 'user').length, 1, 'no new user turn')
  })

  test('an answer that does not echo the pending id rejects with AnswerMismatchError', async () => {
    const tk = await createToolkit({
      builtins: false,
      extraTools: [defineTool({ name: 'ask', description: '', run: () => pending({ id: 'p1', kind: 'input', prompt: 'Name?' }) })],
    })
    mock.script([openaiReply(null, [['c1', 'ask', '{}']])])
    const halted = await openai().run('x', { toolkit: tk })
    mock.script([])
    await assert.rejects(
      openai().runWithAnswer(tk, halted.messages, halted.pending, answerOutput('other', 'Bob')),
      (e) => e instanceof tn.AnswerMismatchError && e.code === 'answer_mismatch',
    )
    await assert.rejects(openai().runWithAnswer(tk, halted.messages, halted.pending, { id: 'p1' }), {
      code: 'invalid_argument',
      message: /missing "ok"/,
    })
  })

  test('inline waitFor: approve re-runs the tool once with the answer', async () => {
    let runs = 0
    const tk = await createToolkit({
      builtins: false,
      extraTools: [
        defineTool({
          name: 'ask',
          description: '',
          run: (_a, ctx) => (++runs, ctx.answer ? `hello ${ctx.answer.data.output}` : pending({ kind: 'input', prompt: 'Name?' })),
        }),
      ],
    })
    mock.script([openaiReply(null, [['c1', 'ask', '{}']]), openaiReply('bye')])
    const r = await openai({ waitFor: async (req) => answerOutput(req.id, 'Ada') }).run('x', { toolkit: tk })
    assert.equal(runs, 2)
    assert.equal(r.toolCalls[0].output, 'hello Ada')
  })
})

describe('relay', () => {
  test('relay calls halt as one tool_call Request; the answer supplies the results', async () => {
    const tk = await createToolkit({
      builtins: false,
      extraTools: [
        relayTool({ name: 'refund', description: 'Refund an order.', inputSchema: { type: 'object', properties: { order: { type: 'string' } } } }),
        relayTool({ name: 'notify', description: 'Notify.' }),
      ],
    })
    assert.equal(tk.get('refund').source, 'relay')
    mock.script([
      openaiReply(null, [
        ['r1', 'refund', '{"order":"1234"}'],
        ['r2', 'notify', '{}'],
      ]),
    ])
    const halted = await openai().run('refund 1234', { toolkit: tk })
    assert.equal(halted.status, 'pending')
    assert.equal(halted.pending.kind, 'tool_call')
    assert.deepEqual(
      halted.pending.data.calls.map((c) => [c.id, c.name, c.input]),
      [
        ['r1', 'refund', { order: '1234' }],
        ['r2', 'notify', {}],
      ],
    )
    mock.script([openaiReply('refunded')])
    const answer = {
      id: halted.pending.id,
      ok: true,
      data: {
        results: [
          { id: 'r1', output: 'refund ok' },
          { id: 'r2', output: 'mail failed', isError: true },
        ],
      },
    }
    const r = await openai().runWithAnswer(tk, halted.messages, halted.pending, answer)
    assert.equal(r.text, 'refunded')
    assert.deepEqual(
      r.toolCalls.map((c) => [c.name, c.output, c.isError]),
      [
        ['refund', 'refund ok', false],
        ['notify', 'mail failed', true],
      ],
    )
  })

  test('a relay tool named like a built-in tool is refused', async () => {
    await assert.rejects(
      async () => createToolkit({ extraTools: [relayTool({ name: 'bash' })] }),
      (e) => e instanceof tn.InvalidArgumentError && /collides with a built-in/.test(e.message),
    )
  })
})

describe('AbortSignal', () => {
  test('aborting cancels the in-flight request; AbortError carries the reason', async () => {
    mock.script([{ ...openaiReply('late'), delayMs: 500 }])
    const ctrl = new AbortController()
    const t0 = performance.now()
    const run = openai().run('x', { signal: ctrl.signal })
    setTimeout(() => ctrl.abort(new Error('user pressed stop')), 30)
    await assert.rejects(run, (e) => {
      assert.ok(e instanceof tn.AbortError)
      assert.equal(e.code, 'cancelled')
      assert.equal(e.cause.message, 'user pressed stop')
      return true
    })
    assert.ok(performance.now() - t0 < 400, 'the run did not wait for the reply')
    await sleep(500)
  })

  test('an already aborted signal rejects at once; a reused signal keeps no listener', async () => {
    await assert.rejects(openai().run('x', { signal: AbortSignal.abort() }), { code: 'cancelled' })
    const ctrl = new AbortController()
    let added = 0
    let removed = 0
    const add = ctrl.signal.addEventListener.bind(ctrl.signal)
    const remove = ctrl.signal.removeEventListener.bind(ctrl.signal)
    ctrl.signal.addEventListener = (...a) => (added++, add(...a))
    ctrl.signal.removeEventListener = (...a) => (removed++, remove(...a))
    for (let i = 0; i < 3; i++) {
      mock.script([openaiReply('ok')])
      await openai().run('x', { signal: ctrl.signal })
    }
    assert.deepEqual([added, removed], [3, 3])
  })

  test('aborting a run aborts the host fetch in flight; a completed one is left alone', async () => {
    const calls = []
    const fetch = (url, init) => {
      const answer = globalThis.fetch(url, init)
      calls.push({ signal: init.signal, settled: answer.then(() => 'resolved', (e) => e.name) })
      return answer
    }
    mock.script([{ ...openaiReply('late'), delayMs: 1000 }])
    const ctrl = new AbortController()
    const run = openai({ fetch }).run('x', { signal: ctrl.signal })
    // Aborted once the mock has the request, so it cannot take the next script's reply.
    for (let i = 0; mock.seen.length === 0 && i < 1000; i++) await sleep(5)
    ctrl.abort(new Error('user pressed stop'))
    await assert.rejects(run, (e) => e instanceof tn.AbortError && e.cause.message === 'user pressed stop')
    assert.equal(await calls[0].settled, 'AbortError', 'the host fetch was aborted, not left to finish')
    assert.equal(calls[0].signal.aborted, true)

    mock.script([openaiReply('on time')])
    assert.equal((await openai({ fetch }).run('x')).text, 'on time')
    await sleep(20)
    assert.equal(calls[1].signal.aborted, false)
  })
})

describe('toolkit and vocabulary', () => {
  test('tools, get, adapters, execute, register', async () => {
    const tk = await weatherToolkit()
    assert.deepEqual(
      tk.tools().map((t) => [t.name, t.source]),
      [
        ['get_weather', 'native'],
        ['add', 'native'],
      ],
    )
    assert.equal(tk.get('missing'), undefined)
    assert.deepEqual(tk.toOpenAI()[0], {
      type: 'function',
      function: { name: 'get_weather', description: 'Weather.', parameters: { type: 'object', properties: { city: { type: 'string' } } } },
    })
    assert.deepEqual(Object.keys(tk.toAnthropic()[1]), ['name', 'description', 'input_schema'])
    assert.equal(tk.toGemini()[0].functionDeclarations.length, 2)
    assert.deepEqual(await tk.execute('add', { a: 1, b: 2 }), { output: '3', isError: false })
    assert.deepEqual(await tk.execute('nope', {}), { output: 'Unknown tool: nope', isError: true })
    const extra = defineTool({ name: 'my tool!', description: '', run: () => ({ output: 'o', isError: false, metadata: { k: 1 } }) })
    assert.equal(tk.register(extra, [relayTool({ name: 'later' })]), tk)
    assert.deepEqual(tk.tools().map((t) => t.name).slice(2), ['my_tool_', 'later'])
    assert.deepEqual(await tk.get('my_tool_').execute({}), { output: 'o', isError: false, metadata: { k: 1 } })
    assert.deepEqual(await tk.execute('add', {}, { callId: 'x' }), { output: 'null', isError: false })
    await tk.close()
  })

  test('defineTool(opts, fn) as the JS port: the second argument is ignored; run and execute are checked when the tool runs', async () => {
    let ran = 0
    // Upstream's own tests call it so (js/test/translate.test.ts); its defineTool takes one argument.
    const declared = defineTool({ name: 'danger', description: 'must not run' }, async () => {
      ran++
      return 'RAN'
    })
    assert.deepEqual([declared.name, declared.description, declared.source], ['danger', 'must not run', 'native'])
    assert.deepEqual(await declared.execute({}), { output: 'opts.run is not a function', isError: true })
    assert.deepEqual(await defineTool({ name: 'five', run: 5 }).execute({}), { output: 'opts.run is not a function', isError: true })
    const bare = { name: 'bare', description: '', inputSchema: { type: 'object' } }
    const tk = await createToolkit({ builtins: false, extraTools: [declared, bare] })
    mock.script([openaiReply(null, [['c1', 'danger', '{}'], ['c2', 'bare', '{}']]), openaiReply('done')])
    const r = await openai().run('x', { toolkit: tk })
    assert.equal(r.text, 'done')
    assert.deepEqual(
      r.toolCalls.map((c) => [c.name, c.output, c.isError]),
      [
        ['danger', 'opts.run is not a function', true],
        ['bare', 'tool.execute is not a function', true],
      ],
    )
    assert.equal(ran, 0)
  })

  test('Tool.execute runs one tool alone: its ctx, a throw as an error result, a relay tool', async () => {
    const echo = defineTool({
      name: 'echo',
      description: '',
      run: async (args, ctx) => JSON.stringify({ args, callId: ctx.callId, answer: ctx.answer ?? null }),
    })
    assert.deepEqual(JSON.parse((await echo.execute()).output), { args: {}, callId: '', answer: null })
    const answer = answerOutput('p-1', 'yes')
    const out = await echo.execute({ q: 1 }, { callId: 'c-9', answer })
    assert.deepEqual(JSON.parse(out.output), { args: { q: 1 }, callId: 'c-9', answer })
    const bad = defineTool({
      name: 'bad',
      description: '',
      run: () => {
        throw new Error('nope')
      },
    })
    assert.deepEqual(await bad.execute({}), { output: 'nope', isError: true })
    const relay = await relayTool({ name: 'later' }).execute({})
    assert.equal(relay.isError, true)
    assert.match(relay.output, /later/)
  })

  test('pending, authRequired, pendingOf, answerOutput, answerDeclined', () => {
    const p = pending({ kind: 'approval', prompt: 'OK?', url: 'https://x/approve', data: { n: 1 } })
    assert.equal(p.isError, true)
    assert.equal(p.output, 'OK?\nhttps://x/approve')
    const req = pendingOf(p)
    assert.match(req.id, /^pnd-/)
    assert.deepEqual({ ...req, id: 'x' }, { id: 'x', kind: 'approval', prompt: 'OK?', url: 'https://x/approve', data: { n: 1 } })
    assert.equal(pendingOf({ output: 'plain', isError: false }), undefined)
    const auth = pendingOf(authRequired('https://login'))
    assert.equal(auth.kind, 'authorization')
    assert.equal(auth.prompt, 'Authorization required to continue')
    assert.deepEqual(answerOutput('p', 'yes'), { id: 'p', ok: true, data: { output: 'yes' } })
    assert.deepEqual(answerDeclined('p', 'expired'), { id: 'p', ok: false, reason: 'expired' })
    assert.equal(typeof tn.version(), 'string')
  })

  test('the answers refuse a missing id and a non-string output with a TypeError, as the JS port does', () => {
    for (const [make, message] of [
      [() => answerOutput('', 'yes'), /^answerOutput: id is required/],
      [() => answerOutput(undefined, 'yes'), /^answerOutput: id is required/],
      [() => answerOutput('p', 42), /^answerOutput: output must be a string, got number$/],
      [() => answerDeclined(''), /^answerDeclined: id is required/],
      [() => answerDeclined(null, 'cancelled'), /^answerDeclined: id is required/],
    ]) {
      assert.throws(make, (e) => {
        assert.ok(e instanceof TypeError, String(e))
        assert.equal(e.code, 'invalid_argument')
        assert.match(e.message, message)
        return true
      })
    }
  })

  test('objects shaped like the JS port\'s Tool interface are tools too', async () => {
    class Lookup {
      constructor() {
        this.name = 'lookup'
        this.description = 'Look up.'
        this.inputSchema = { type: 'object', properties: { q: { type: 'string' } } }
        this.source = 'http'
        this.prefix = 'found'
      }

      async execute(args, ctx) {
        return { output: `${this.prefix} ${args.q} (${ctx.callId})`, isError: false, metadata: { hits: 1 } }
      }
    }
    const echo = { name: 'echo', description: 'Echo.', inputSchema: { type: 'object' }, execute: (args) => ({ output: JSON.stringify(args) }) }
    const down = {
      name: 'down',
      description: '',
      inputSchema: { type: 'object' },
      execute: async () => {
        throw new Error('service down')
      },
    }
    const tk = await createToolkit({ builtins: false, extraTools: [new Lookup(), echo] })
    assert.equal(tk.register(down), tk)
    assert.deepEqual(
      tk.tools().map((t) => [t.name, t.source]),
      [
        ['lookup', 'http'],
        ['echo', 'custom'],
        ['down', 'custom'],
      ],
    )
    assert.deepEqual(tk.toOpenAI()[0].function.parameters, new Lookup().inputSchema)
    assert.deepEqual(await tk.execute('echo', { a: 1 }), { output: '{"a":1}', isError: false })
    mock.script([
      openaiReply(null, [
        ['c1', 'lookup', '{"q":"x"}'],
        ['c2', 'down', '{}'],
      ]),
      openaiReply('done'),
    ])
    const r = await openai().run('go', { toolkit: tk })
    assert.equal(r.text, 'done')
    assert.deepEqual(
      r.toolCalls.map((c) => [c.name, c.output, c.isError, c.metadata]),
      [
        ['lookup', 'found x (c1)', false, { hits: 1 }],
        ['down', 'service down', true, undefined],
      ],
    )
  })

  test('sanitize, from both entries, names tools as the toolkit does', () => {
    const cjs = createRequire(import.meta.url)('../index.js')
    assert.equal(typeof tn.sanitize, 'function')
    assert.equal(cjs.sanitize, tn.sanitize)
    assert.equal(tn.sanitize('my tool.v2/x-y_z'), 'my_tool_v2_x-y_z')
    assert.equal(tn.sanitize('my tool!'), defineTool({ name: 'my tool!', run: () => '' }).name)
  })

  test('the adapters as free functions, as the JS port exports them', async () => {
    const cjs = createRequire(import.meta.url)('../index.js')
    const tools = [defineTool({ name: 'add', description: 'Add.', run: () => '' }), tn.relayTool({ name: 'refund', description: 'Refund.' })]
    const tk = await createToolkit({ builtins: false, extraTools: tools })
    assert.deepEqual(tn.toOpenAI(tools), tk.toOpenAI())
    assert.deepEqual(tn.toAnthropic(tools), tk.toAnthropic())
    assert.deepEqual(tn.toGemini(tools), tk.toGemini())
    assert.equal(cjs.toOpenAI, tn.toOpenAI)
    assert.deepEqual(tn.toAnthropic(tools)[1], { name: 'refund', description: 'Refund.', input_schema: { type: 'object', properties: {} } })
    assert.throws(() => tn.toOpenAI('x'), (e) => e instanceof tn.InvalidArgumentError && /toOpenAI: tools must be an array/.test(e.message))
  })
})
