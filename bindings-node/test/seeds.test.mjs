// The three Python seed examples (tests/seeds/python/), their behaviour written in JS
// against this package's API.
import assert from 'node:assert/strict'
import { test } from 'node:test'

import {
  InvalidArgumentError,
  answerDeclined,
  createClient,
  createToolkit,
  defineTool,
  pending,
} from '../index.mjs'

test('seed 1: answerDeclined defaults its reason to "declined"', () => {
  const a = answerDeclined('pnd-1')
  assert.equal(a.ok, false)
  assert.equal(a.id, 'pnd-1')
  assert.equal(a.reason, 'declined')
})

test('seed 2: explicit reasons are kept, one outside the closed vocabulary is rejected', () => {
  const cancelled = answerDeclined('pnd-1', 'cancelled')
  assert.equal(cancelled.ok, false)
  assert.equal(cancelled.reason, 'cancelled')
  assert.equal(answerDeclined('pnd-1', 'expired').reason, 'expired')
  assert.throws(
    () => answerDeclined('pnd-1', 'nope'),
    (e) => e instanceof InvalidArgumentError && e.code === 'invalid_argument' && /declined/.test(e.message),
  )
})

test('seed 3: a suspended call declined through waitFor is not re-run and the run finishes', async () => {
  const responses = [
    {
      choices: [
        {
          message: {
            role: 'assistant',
            content: null,
            tool_calls: [{ id: 'c1', type: 'function', function: { name: 'deploy', arguments: '{}' } }],
          },
        },
      ],
      usage: { total_tokens: 5 },
    },
    { choices: [{ message: { role: 'assistant', content: 'ok' } }], usage: { total_tokens: 5 } },
  ]
  // The seed's recording transport, as the JS port spells it: a fetch-compatible function.
  const fetch = async () => new Response(JSON.stringify(responses.shift()), { status: 200 })

  const calls = { n: 0 }
  const approveDeploy = async (_args, ctx) => {
    calls.n += 1
    if (ctx.answer) return { output: 'deployed', isError: false }
    return pending({ kind: 'approval', prompt: 'OK to deploy to prod?' })
  }
  const tk = await createToolkit({
    builtins: false,
    extraTools: [defineTool({ name: 'deploy', description: 'Deploy to prod.', run: approveDeploy })],
  })
  try {
    const client = createClient({
      baseUrl: 'http://mock.local/v1',
      style: 'openai',
      model: 'mock',
      apiKey: 'unused',
      fetch,
      waitFor: (req) => answerDeclined(req.id, 'declined'),
    })
    const result = await client.run('deploy the latest build', { toolkit: tk })
    // A decline settles the pending call without re-running the tool.
    assert.equal(calls.n, 1)
    assert.equal(result.status, 'done')
    assert.equal(result.toolCalls[0].isError, true)
    assert.equal(result.toolCalls[0].output, 'declined/expired: OK to deploy to prod?')
    assert.equal(responses.length, 0)
  } finally {
    await tk.close()
  }
})
