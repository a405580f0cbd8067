// Errors (their classes and codes, the host's own error passed through unchanged) and the
// process exiting by itself after runs.
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import v8 from 'node:v8'
import vm from 'node:vm'
import { describe, test } from 'node:test'
import { fileURLToPath } from 'node:url'

import * as tn from '../index.mjs'
import { mockForThisFile, openaiClient, openaiReply, sleep } from './mock.mjs'

const { createClient, createToolkit, defineTool, pending } = tn
const HERE = path.dirname(fileURLToPath(import.meta.url))

const mock = mockForThisFile()
const openai = (extra = {}) => openaiClient(mock, extra)

describe('errors', () => {
  test('a hook answer of the wrong shape is an InvalidArgumentError naming the hook and key', async () => {
    const tk = await createToolkit({ builtins: false, extraTools: [defineTool({ name: 'echo', run: () => 'x' })] })
    for (const [hooks, named] of [
      [{ beforeTool: () => ({ args: 'x' }) }, 'before_tool: "args" must be an object'],
      [{ beforeLLM: () => 5 }, 'before_llm must return an object'],
    ]) {
      mock.script([openaiReply(null, [['c1', 'echo', '{}']]), openaiReply('done')])
      await assert.rejects(openai({ hooks }).run('go', { toolkit: tk }), (e) => e instanceof tn.InvalidArgumentError && e.message.includes(named))
    }
  })

  test('the bad options every binding checks are InvalidArgumentErrors naming the option as written', () => {
    const file = path.join(HERE, '../../tests/options/bad-client-options.json')
    const { base, cases } = JSON.parse(fs.readFileSync(file, 'utf8'))
    const camel = (k) => k.replace(/_([a-z])/g, (_, c) => c.toUpperCase())
    const jsBase = Object.fromEntries(Object.entries(base).map(([k, v]) => [camel(k), v]))
    for (const { option, value } of cases) {
      const name = camel(option)
      assert.throws(
        () => createClient({ ...jsBase, [name]: value }),
        (e) => e instanceof tn.InvalidArgumentError && e.code === 'invalid_argument' && e.message.includes(`"${name}"`),
        `${name}=${JSON.stringify(value)}`,
      )
    }
  })

  class QuotaError extends Error {
    constructor(message) {
      super(message)
      this.name = 'QuotaError'
      this.code = 'QUOTA'
    }
  }

  test('a custom error thrown by waitFor is the error the run rejects with (sync throw and rejection)', async () => {
    const tk = await createToolkit({
      builtins: false,
      extraTools: [defineTool({ name: 'ask', description: '', run: () => pending({ kind: 'input', prompt: 'Name?' }) })],
    })
    for (const waitFor of [
      () => {
        throw new QuotaError('over quota')
      },
      async () => {
        await sleep(1)
        throw new QuotaError('over quota')
      },
    ]) {
      const thrown = []
      const wrapped = (req) => {
        try {
          const v = waitFor(req)
          if (v && typeof v.catch === 'function') v.catch((e) => thrown.push(e))
          return v
        } catch (e) {
          thrown.push(e)
          throw e
        }
      }
      mock.script([openaiReply(null, [['c1', 'ask', '{}']])])
      await assert.rejects(openai({ waitFor: wrapped }).run('x', { toolkit: tk }), (e) => {
        assert.ok(e instanceof QuotaError)
        assert.equal(e.code, 'QUOTA')
        assert.equal(e.name, 'QuotaError')
        assert.equal(e, thrown[0], 'the very object the host threw')
        return true
      })
    }
  })

  test('hooks, onError and fetch pass their own errors through too', async () => {
    const boom = new QuotaError('hook')
    mock.script([openaiReply('x')])
    await assert.rejects(openai({ hooks: { afterLLM: () => Promise.reject(boom) } }).run('x'), (e) => e === boom)
    mock.script([{ status: 503, body: {} }])
    await assert.rejects(
      openai({
        onError: () => {
          throw boom
        },
      }).run('x'),
      (e) => e === boom,
    )
    await assert.rejects(openai({ fetch: async () => Promise.reject(boom) }).run('x'), (e) => e === boom)
  })

  test('a fetch that rejects once with a network error is retried and the run succeeds', async () => {
    let attempts = 0
    const flaky = async (url, init) => {
      attempts++
      if (attempts === 1) throw new TypeError('fetch failed', { cause: Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }) })
      return globalThis.fetch(url, init)
    }
    const infos = []
    mock.script([openaiReply('recovered')])
    const r = await openai({ fetch: flaky, onError: (info) => void infos.push(info) }).run('x')
    assert.equal(r.text, 'recovered')
    assert.equal(attempts, 2)
    assert.equal(mock.seen.length, 1, 'only the second attempt reached the server')
    assert.deepEqual(infos, [{ error: 'fetch failed', attempt: 0, retryable: true }], 'onError saw a network failure')
  })

  test('a fetch that always rejects: retried, then the run rejects with that very error object', async () => {
    for (const [retries, sync] of [
      [3, false],
      [0, false],
      [2, true],
    ]) {
      const boom = new TypeError('fetch failed')
      boom.cause = new Error('connect ECONNREFUSED')
      let attempts = 0
      const down = sync
        ? () => {
            attempts++
            throw boom
          }
        : async () => {
            attempts++
            await sleep(1)
            throw boom
          }
      await assert.rejects(openai({ fetch: down, retries }).run('x'), (e) => {
        assert.equal(e, boom, 'the very object fetch rejected with')
        assert.ok(!(e instanceof tn.ToolnexusError))
        return true
      })
      assert.equal(attempts, retries + 1, `retries ${retries}, ${sync ? 'sync throw' : 'rejection'}`)
    }
  })

  test('a fetch whose body read rejects is retried too; an answer that is not a Response is not', async () => {
    let attempts = 0
    const torn = async (url, init) => {
      attempts++
      if (attempts === 1) {
        return { status: 200, headers: new Headers(), text: () => Promise.reject(new TypeError('terminated')) }
      }
      return globalThis.fetch(url, init)
    }
    mock.script([openaiReply('whole')])
    assert.equal((await openai({ fetch: torn }).run('x')).text, 'whole')
    assert.equal(attempts, 2)

    let calls = 0
    const wrong = async () => {
      calls++
      return 42
    }
    await assert.rejects(openai({ fetch: wrong, retries: 3 }).run('x'), (e) => e instanceof tn.HostError && e.code === 'host')
    assert.equal(calls, 1, 'a host bug is not retried')
  })

  test('a throwing tool becomes an error result and the run goes on', async () => {
    const tk = await createToolkit({
      builtins: false,
      extraTools: [
        defineTool({
          name: 'bad',
          description: '',
          run: () => {
            throw new QuotaError('tool over quota')
          },
        }),
        defineTool({ name: 'big', description: '', run: () => 10n }),
      ],
    })
    mock.script([
      openaiReply(null, [
        ['c1', 'bad', '{}'],
        ['c2', 'big', '{}'],
        ['c3', 'nope', '{}'],
      ]),
      openaiReply('recovered'),
    ])
    const r = await openai().run('x', { toolkit: tk })
    assert.equal(r.text, 'recovered')
    assert.deepEqual(
      r.toolCalls.map((c) => [c.output, c.isError]),
      [
        ['tool over quota', true],
        ['Do not know how to serialize a BigInt', true],
        ['Unknown tool: nope', true],
      ],
    )
  })

  test('a tool that throws or rejects with a non-Error gets its String() form as output, as the JS port', async () => {
    const values = ['boom', 42, { code: 1 }, null, undefined, { toString: () => 'custom' }, Symbol('s'), ['a', 1]]
    const tools = values.flatMap((v, i) => [
      defineTool({
        name: `throws${i}`,
        run: () => {
          throw v
        },
      }),
      defineTool({ name: `rejects${i}`, run: async () => Promise.reject(v) }),
      { name: `object${i}`, description: '', inputSchema: {}, execute: () => Promise.reject(v) },
    ])
    const tk = await createToolkit({ builtins: false, extraTools: tools })
    const expected = ['boom', '42', '[object Object]', 'null', 'undefined', 'custom', 'Symbol(s)', 'a,1']
    for (const t of tk.tools()) {
      const out = await tk.execute(t.name, {})
      assert.deepEqual(out, { output: expected[Number(t.name.replace(/\D/g, ''))], isError: true }, t.name)
    }
    // An Error's message, as before; through a run too.
    mock.script([openaiReply(null, [['c1', 'throws0', '{}'], ['c2', 'rejects2', '{}']]), openaiReply('ok')])
    const r = await openai().run('x', { toolkit: tk })
    assert.deepEqual(r.toolCalls.map((c) => c.output), ['boom', '[object Object]'])
    const messageOnly = defineTool({ name: 'm', run: () => Promise.reject(new RangeError('range')) })
    assert.deepEqual(await messageOnly.execute({}), { output: 'range', isError: true })
  })

  test('bad options and a missing key have their classes and codes', async () => {
    assert.throws(() => createClient({ baseUrl: 'nope', style: 'openai', model: 'm' }), tn.InvalidArgumentError)
    assert.throws(() => createClient({ baseUrl: 'http://x', style: 'gemini', model: 'm' }), { code: 'invalid_argument' })
    const saved = {}
    for (const k of ['OPENROUTER_API_KEY', 'OPENAI_API_KEY', 'ANTHROPIC_API_KEY']) {
      saved[k] = process.env[k]
      delete process.env[k]
    }
    try {
      await assert.rejects(createClient({ baseUrl: mock.url('/v1'), style: 'openai', model: 'm' }).run('x'), (e) => e instanceof tn.ConfigError && e.code === 'config')
    } finally {
      for (const [k, v] of Object.entries(saved)) if (v !== undefined) process.env[k] = v
    }
  })

  test('bad arguments are InvalidArgumentErrors naming the argument, napi\'s conversions included', async () => {
    const tk = await createToolkit({})
    const client = openai()
    const base = { baseUrl: 'http://x', style: 'openai', model: 'm' }
    for (const [call, message] of [
      // The engine reads the options: its messages name each one as written.
      [() => createClient({ style: 'openai', model: 'm', maxTurns: 1 }), /^option "baseUrl" is required$/],
      [() => createClient({ ...base, maxTurns: 'ten' }), /^option "maxTurns" must be a whole number from 0 to 4294967295, got string$/],
      [() => createClient({ ...base, timeoutMs: -1 }), /^option "timeoutMs" must be a non-negative number of milliseconds, got -1$/],
      [() => createClient({ ...base, timeoutMs: NaN }), /^option "timeoutMs" must be a non-negative number of milliseconds/],
      [() => createClient({ ...base, retryableStatuses: [70000] }), /^option "retryableStatuses" must be an array of HTTP statuses/],
      [() => createClient({ ...base, headers: { 'x-key': 5 } }), /^option "headers": the value of "x-key" must be a string, got number$/],
      [() => createClient({ ...base, maxTurn: 3 }), /^unknown client option "maxTurn"$/],
      [() => createClient(), /^createClient: options must be an object, got undefined$/],
      [() => createClient({ ...base, waitFor: 'later' }), /^createClient: options\.waitFor must be a function, got string$/],
      [() => defineTool({ run: () => '' }), /^defineTool: opts\.name is required$/],
      [() => pending({ prompt: 'p' }), /^pending: request\.kind is required$/],
      [() => client.run('x', { toolkit: {} }), /^run: options\.toolkit must be a Toolkit$/],
      [() => client.run(42), /^run: prompt must be a string or an array of content parts, got number$/],
      [() => client.run('x', { signal: {} }), /^run: options\.signal must be an AbortSignal$/],
      [() => client.runWithAnswer({}, [], {}, {}), /^runWithAnswer: toolkit must be a Toolkit, got object$/],
      [() => createToolkit({ extraTools: [42] }), /^createToolkit: opts\.extraTools\[0\] must be a Tool/],
      [() => tk.register('no tool'), /^Toolkit\.register: tools\[0\] must be a Tool/],
      [() => tk.get(1), /^Toolkit\.get: name must be a string, got number$/],
      [() => tk.execute('x', {}, { callId: 5 }), /^Toolkit\.execute: ctx\.callId must be a string$/],
      [() => tn.authRequired(1), /^authRequired: url must be a string, got number$/],
      [() => tn.answerDeclined('p', 42), /^answerDeclined: reason must be/],
      [() => tn.sanitize(1), /^sanitize: value must be a string, got number$/],
    ]) {
      assert.throws(call, (e) => {
        assert.ok(e instanceof tn.InvalidArgumentError, `${message}: got ${e}`)
        assert.equal(e.code, 'invalid_argument')
        assert.match(e.message, message)
        return true
      })
    }
    // A getter of the host's that throws while the options are read: that error, unchanged.
    const mine = new RangeError('mine')
    const options = {
      get baseUrl() {
        throw mine
      },
      style: 'openai',
      model: 'm',
    }
    assert.throws(() => createClient(options), (e) => e === mine)
  })

  test('a malformed provider answer is a ProtocolError', async () => {
    mock.script([{ status: 200, body: 'not an object' }])
    await assert.rejects(openai().run('x'), (e) => e instanceof tn.ProtocolError && e.code === 'protocol')
  })
})

describe('process', () => {
  test('a host promise garbage-collected unsettled leaves its run waiting, as an await would in JS', async () => {
    v8.setFlagsFromString('--expose-gc')
    const gc = vm.runInNewContext('gc')
    let called = 0
    const tk = await createToolkit({
      builtins: false,
      extraTools: [
        defineTool({
          name: 'stuck',
          run: () => {
            called++
            return new Promise(() => {})
          },
        }),
      ],
    })
    mock.script([openaiReply(null, [['c1', 'stuck', '{}']]), openaiReply('must not be asked')])
    const ac = new AbortController()
    let settled = false
    const run = openai({ retries: 0 }).run('x', { toolkit: tk, signal: ac.signal })
    run.then(
      () => (settled = true),
      () => (settled = true),
    )
    while (called === 0) await sleep(5)
    for (let i = 0; i < 5; i++) {
      gc()
      await sleep(10)
    }
    assert.equal(settled, false, 'the run went on without its tool')
    assert.equal(mock.seen.length, 1, 'the run asked the model again')
    ac.abort()
    await assert.rejects(run, tn.AbortError)
  })

  test('the CommonJS entry works and the process exits by itself after runs of every kind', () => {
    // Done, halted and resumed, failed, aborted and timed out (with and without fetch), a
    // rejecting hook; then a run, an execute and a waitFor left on promises that never settle.
    const started = Date.now()
    const child = spawnSync(process.execPath, [path.join(HERE, 'fixtures', 'exit.cjs')], { timeout: 10000, encoding: 'utf8' })
    assert.equal(child.error, undefined, `the process did not exit by itself within 10 s: ${child.stdout}`)
    assert.equal(child.status, 0, child.stderr)
    assert.equal(
      child.stdout.trim(),
      'ran 13 runs: done,pending,done,http,network,cancelled,timeout,cancelled,timeout,hook,left,left,left',
    )
    assert.ok(Date.now() - started < 5000, `exited after ${Date.now() - started} ms`)
  })
})
