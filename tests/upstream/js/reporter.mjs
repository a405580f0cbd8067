// node:test reporter for the upstream suite: one JSON line per finished test, appended
// synchronously to UPSTREAM_SUITE_RESULTS (so a process that exits on a timeout has written
// everything before it). Its own output stream gets nothing.
import fs from 'node:fs'

const results = process.env.UPSTREAM_SUITE_RESULTS

function firstLine(error) {
  let e = error
  // A failing hook or a timeout wraps the real error as its cause.
  if (e && e.code === 'ERR_TEST_FAILURE' && e.cause !== undefined) e = e.cause
  const text = e instanceof Error ? `${e.name}: ${e.message}` : String(e)
  return (text.split('\n').find((l) => l.trim() !== '') ?? '').trim().slice(0, 300)
}

export default async function* reporter(source) {
  for await (const event of source) {
    if (event.type !== 'test:pass' && event.type !== 'test:fail') continue
    const d = event.data
    let outcome = event.type === 'test:pass' ? 'passed' : 'failed'
    if (d.skip !== undefined || d.todo !== undefined) outcome = 'skipped'
    const line = { name: d.name, nesting: d.nesting, outcome }
    if (outcome === 'failed') line.message = firstLine(d.details?.error)
    if (results) fs.appendFileSync(results, JSON.stringify(line) + '\n')
  }
}
