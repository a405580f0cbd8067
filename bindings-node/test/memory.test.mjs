// Conversation memory: ask({id}) remembers, a host store (values or Promises) is used, a
// durable halt resumes by id alone and exactly once, SQLite keeps it for another process,
// and a conversation object keeps its own transcript.
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, test } from 'node:test'

import {
  ConflictError,
  InMemoryConversationStore,
  PostgresConversationStore,
  SqliteConversationStore,
  StoreError,
  answerOutput,
  createInProcessClient,
  createToolkit,
  defineTool,
  pending,
} from '../index.mjs'

const echo = async (req) => ({ content: `heard ${req.messages.filter((m) => m.role === 'user').length}` })
const gatedModel = async (req) => {
  const last = req.messages.at(-1)
  if (last.role === 'tool') return { content: `finished: ${last.content}` }
  return { toolCalls: [{ id: 'c1', name: 'gated', arguments: {} }] }
}
const gated = defineTool({
  name: 'gated',
  description: 'A step that needs an approval.',
  inputSchema: { type: 'object', properties: {} },
  run: async (_a, ctx) => (ctx.answer ? `approved ${ctx.answer.data.output}` : pending({ id: 'gate-1', kind: 'approval', prompt: 'Go?' })),
})

describe('conversation memory', () => {
  test('ask with an id remembers; without one it does not', async () => {
    const c = createInProcessClient({ model: 'm', generate: echo })
    assert.equal((await c.ask('one', { id: 't' })).text, 'heard 1')
    assert.equal((await c.ask('two', { id: 't' })).text, 'heard 2')
    assert.equal((await c.ask('alone')).text, 'heard 1')
    const store = c.conversationStore()
    assert.ok(store instanceof InMemoryConversationStore)
    assert.equal(store, c.conversationStore())
    const stored = await store.get('t')
    assert.deepEqual(stored.filter((m) => m.role === 'user').map((m) => m.content), ['one', 'two'])
    assert.equal(await store.get('nobody'), undefined)
  })

  for (const kind of ['values', 'promises']) {
    test(`a host store answering ${kind} is used`, async () => {
      const calls = []
      const data = new Map()
      const wrap = (v) => (kind === 'promises' ? Promise.resolve(v) : v)
      const store = {
        get(id) { calls.push(`get ${id}`); return wrap(data.get(id)) },
        save(id, messages) { calls.push(`save ${id}`); data.set(id, messages); return wrap(undefined) },
      }
      const c = createInProcessClient({ model: 'm', generate: echo, store })
      await c.ask('one', { id: 'h' })
      const r = await c.ask('two', { id: 'h' })
      assert.equal(r.text, 'heard 2')
      assert.deepEqual(calls, ['get h', 'save h', 'get h', 'save h'])
      assert.deepEqual(data.get('h'), r.messages)
      assert.equal(c.conversationStore(), store)
    })
  }

  test('a store without get and save is refused', () => {
    assert.throws(() => createInProcessClient({ model: 'm', generate: echo, store: {} }), /options\.store/)
  })

  test('a halted conversation resumes by id alone, exactly once', async () => {
    const c = createInProcessClient({ model: 'm', generate: gatedModel })
    const tk = await createToolkit({ builtins: false, extraTools: [gated] })
    const halted = await c.ask('deploy', { toolkit: tk, id: 'run-1' })
    assert.equal(halted.status, 'pending')
    const queue = await c.conversationStore().pendingRuns()
    assert.deepEqual(queue.map((q) => [q.id, q.request.id]), [['run-1', 'gate-1']])
    await assert.rejects(c.ask('hello?', { toolkit: tk, id: 'run-1' }), ConflictError)
    const done = await c.askWithAnswer(tk, 'run-1', null, answerOutput('gate-1', 'yes'))
    assert.equal(done.text, 'finished: approved yes')
    await assert.rejects(c.askWithAnswer(tk, 'run-1', null, answerOutput('gate-1', 'no')), (e) => e instanceof ConflictError && e.code === 'conflict')
    assert.deepEqual(await c.conversationStore().pendingRuns(), [])
  })

  test('SQLite keeps a halted run for another process, which resumes it by id', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tn-memory-'))
    try {
      const db = join(dir, 'runs.db')
      const c = createInProcessClient({ model: 'm', generate: gatedModel, store: db })
      const tk = await createToolkit({ builtins: false, extraTools: [gated] })
      assert.equal((await c.ask('deploy', { toolkit: tk, id: 'x' })).status, 'pending')
      assert.ok(c.conversationStore() instanceof SqliteConversationStore)
      assert.equal(c.conversationStore().path, db)
      const child = `
        const tn = require(${JSON.stringify(new URL('../index.js', import.meta.url).pathname)})
        const gated = tn.defineTool({ name: 'gated', description: 'd', inputSchema: { type: 'object', properties: {} },
          run: async (_a, ctx) => (ctx.answer ? 'approved ' + ctx.answer.data.output : tn.pending({ id: 'gate-1', kind: 'approval', prompt: 'Go?' })) })
        const model = async (req) => { const last = req.messages.at(-1); return last.role === 'tool' ? { content: 'elsewhere: ' + last.content } : { toolCalls: [{ id: 'c1', name: 'gated', arguments: {} }] } }
        ;(async () => {
          const c = tn.createInProcessClient({ model: 'm', generate: model, store: new tn.SqliteConversationStore(${JSON.stringify(db)}) })
          const tk = await tn.createToolkit({ builtins: false, extraTools: [gated] })
          const r = await c.askWithAnswer(tk, 'x', null, tn.answerOutput('gate-1', 'yes'))
          console.log(r.text)
        })()`
      const out = execFileSync(process.execPath, ['-e', child], { encoding: 'utf8', timeout: 60000 })
      assert.equal(out.trim(), 'elsewhere: approved yes')
      await assert.rejects(c.askWithAnswer(tk, 'x', null, answerOutput('gate-1', 'yes')), ConflictError)
      assert.throws(() => new SqliteConversationStore(join(dir, 'missing', 'x.db')), StoreError)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  test('a postgres:// URL is a store shared by clients', async (t) => {
    const url = process.env.TN_POSTGRES_URL
    if (!url) {
      assert.ok(!process.env.CI, 'TN_POSTGRES_URL is not set (run under tests/postgres/with-postgres.sh)')
      t.skip('no TN_POSTGRES_URL')
      return
    }
    const id = `node-${process.pid}-${Date.now()}`
    const first = createInProcessClient({ model: 'm', generate: gatedModel, store: url })
    const second = createInProcessClient({ model: 'm', generate: gatedModel, store: new PostgresConversationStore(url) })
    const tk = await createToolkit({ builtins: false, extraTools: [gated] })
    assert.equal((await first.ask('deploy', { toolkit: tk, id })).status, 'pending')
    assert.ok(first.conversationStore() instanceof PostgresConversationStore)
    assert.ok((await second.conversationStore().pendingRuns()).some((q) => q.id === id))
    assert.equal((await second.askWithAnswer(tk, id, null, answerOutput('gate-1', 'yes'))).text, 'finished: approved yes')
    await assert.rejects(first.askWithAnswer(tk, id, null, answerOutput('gate-1', 'yes')), ConflictError)
  })

  test('a conversation keeps its own messages', async () => {
    const c = createInProcessClient({ model: 'm', generate: echo })
    const conv = c.conversation()
    await conv.send('one')
    const r = await conv.send('two')
    assert.equal(r.text, 'heard 2')
    assert.deepEqual(conv.messages, r.messages)
    conv.reset()
    assert.equal((await conv.send('three')).text, 'heard 1')
  })
})
