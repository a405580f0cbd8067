// Many concurrent runs with tools and suspensions in one Node process, in rounds, against
// `load-mock` (bench/src/bin/load-mock.rs): half resolve their approval inline (waitFor), half
// halt and are resumed (runWithAnswer). Every result is checked; each round prints one JSON line
// with its time and the process's resident memory.
//
//   node load.mjs --mock PATH [--runs 1000] [--rounds 10] [--package DIR]
import { spawn } from 'node:child_process'
import { createInterface } from 'node:readline'
import { createRequire } from 'node:module'
import path from 'node:path'

const flag = (name, fallback) => {
  const i = process.argv.indexOf(name)
  return i > 0 ? process.argv[i + 1] : fallback
}
const here = path.dirname(new URL(import.meta.url).pathname)
const tn = createRequire(import.meta.url)(flag('--package', path.join(here, '../../bindings-node')))
const runs = Number(flag('--runs', 1000))
const rounds = Number(flag('--rounds', 10))

const mock = spawn(flag('--mock'), { stdio: ['pipe', 'pipe', 'inherit'] })
const port = await new Promise((resolve) => createInterface({ input: mock.stdout }).once('line', resolve))
const baseUrl = `http://127.0.0.1:${port.trim()}/v1`

const durable = tn.createClient({ baseUrl, style: 'openai', model: 'm', apiKey: 'k' })
const inline = tn.createClient({ baseUrl, style: 'openai', model: 'm', apiKey: 'k', waitFor: (req) => tn.answerOutput(req.id, 'yes') })
const tk = await tn.createToolkit({
  builtins: false,
  extraTools: [
    tn.defineTool({ name: 'add', description: 'Add.', run: ({ a, b }) => String(a + b) }),
    tn.defineTool({
      name: 'approve',
      description: 'Ask for approval.',
      run: (_args, ctx) => (ctx?.answer ? 'approved' : tn.pending({ kind: 'approval', prompt: 'Approve?', id: `ap-${ctx.callId}` })),
    }),
  ],
})

async function one(i) {
  const prompt = `run-${i}`
  let r
  let records
  if (i % 2 === 0) {
    r = await inline.run(prompt, { toolkit: tk })
    records = r.toolCalls
  } else {
    const halted = await durable.run(prompt, { toolkit: tk })
    r = await durable.runWithAnswer(tk, halted.messages, halted.pending, tn.answerOutput(halted.pending.id, 'yes'))
    records = [...halted.toolCalls, ...r.toolCalls]
  }
  const outputs = records.map((c) => c.output)
  if (r.text !== `done: ${prompt}` || outputs[0] !== '3' || outputs.at(-1) !== 'approved') {
    throw new Error(`run ${i}: text ${JSON.stringify(r.text)}, outputs ${JSON.stringify(outputs)}`)
  }
}

let status = 0
for (let round = 0; round < rounds; round++) {
  const started = performance.now()
  const outcomes = await Promise.allSettled(Array.from({ length: runs }, (_, i) => one(i)))
  const failed = outcomes.filter((o) => o.status === 'rejected')
  globalThis.gc?.()
  const line = { lang: 'node', round, runs, failed: failed.length, ms: performance.now() - started, rss_kb: Math.round(process.memoryUsage.rss() / 1024), heap_kb: Math.round(process.memoryUsage().heapUsed / 1024) }
  console.log(JSON.stringify(line))
  if (failed.length) {
    console.error(`first failure: ${failed[0].reason}`)
    status = 1
    break
  }
}
mock.kill()
process.exitCode = status
