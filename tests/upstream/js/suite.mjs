// Runs the prepared upstream JS tests (prepare.mjs) and checks each outcome against
// expectations.txt (docs/upstream-suites.md).
//
//   node suite.mjs <tree dir> [--record out.tsv] [file.test.ts ...]
//
// Each test file runs in its own node process, with preload.mjs and reporter.mjs, from its
// place in the tree (so upstream's paths relative to the file, ../../../examples, resolve into
// the checkout). When a process ends before all its tests reported (a test timed out, or the
// process died), the test it was in is failed with why, and the file's remaining tests run in
// a fresh process (--test-name-pattern), until every test has an outcome.
//
// With --record nothing is checked: each test's outcome and first error line are written to
// the file, tab-separated, which is how expectations.txt is drafted.
import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const here = path.dirname(fileURLToPath(import.meta.url))
const args = process.argv.slice(2)
const tree = path.resolve(args.shift())
let record = ''
if (args[0] === '--record') { args.shift(); record = path.resolve(args.shift()) }
const only = args
const expectationsPath = process.env.UPSTREAM_SUITE_EXPECTATIONS || path.join(here, 'expectations.txt')
const timeoutS = Number(process.env.UPSTREAM_SUITE_TEST_TIMEOUT || 60)
const LINE = /^(?<id>\S.*?)\s{2,}(?<verdict>pass|xfail: (?<reason>\S.*))$/

function loadExpectations(file) {
  const expected = new Map() // id -> null (pass) or the xfail reason
  fs.readFileSync(file, 'utf8').split('\n').forEach((raw, n) => {
    const line = raw.trimEnd()
    if (!line || line.startsWith('#')) return
    const m = LINE.exec(line)
    if (!m) throw new Error(`${file}:${n + 1}: not \`<id>  pass\` or \`<id>  xfail: <reason>\`: ${line}`)
    if (expected.has(m.groups.id)) throw new Error(`${file}:${n + 1}: ${m.groups.id} is listed twice`)
    expected.set(m.groups.id, m.groups.reason ?? null)
  })
  return expected
}

const escapeRegExp = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
const readLines = (file) => fs.existsSync(file)
  ? fs.readFileSync(file, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l)) : []

// file -> Map(name -> {outcome, message})
function runFile(file, names) {
  const outcomes = new Map()
  const script = path.join(tree, 'js', 'test', file.replace(/\.ts$/, '.js'))
  const scratch = path.join(tree, 'runs')
  fs.mkdirSync(scratch, { recursive: true })
  let remaining = names.slice()
  for (let attempt = 1; remaining.length > 0; attempt++) {
    const results = path.join(scratch, `${file}.${attempt}.results`)
    const status = path.join(scratch, `${file}.${attempt}.status`)
    const stderr = path.join(scratch, `${file}.${attempt}.stderr`)
    for (const f of [results, status, stderr]) fs.rmSync(f, { force: true })
    const patterns = attempt === 1 ? [] : remaining.map((n) => `--test-name-pattern=^${escapeRegExp(n)}$`)
    const err = fs.openSync(stderr, 'w')
    const child = spawnSync(process.execPath, [
      '--import', path.join(here, 'preload.mjs'),
      '--test-force-exit', `--test-reporter=${path.join(here, 'reporter.mjs')}`,
      '--test-reporter-destination=stdout', ...patterns, script,
    ], {
      cwd: path.dirname(script),
      stdio: ['ignore', 'ignore', err],
      env: { ...process.env, UPSTREAM_SUITE_RESULTS: results, UPSTREAM_SUITE_STATUS: status },
      // A safety net only: preload.mjs bounds each test.
      timeout: (timeoutS * remaining.length + 60) * 1000,
      killSignal: 'SIGKILL',
    })
    fs.closeSync(err)
    let progress = false
    for (const r of readLines(results)) {
      if (r.nesting !== 0 || !remaining.includes(r.name) || outcomes.has(r.name)) continue
      outcomes.set(r.name, { outcome: r.outcome, message: r.message ?? '' })
      progress = true
    }
    remaining = remaining.filter((n) => !outcomes.has(n))
    if (remaining.length === 0) break
    // Which test the process ended in, and why.
    const events = readLines(status)
    const timedOut = events.find((e) => e.timeout !== undefined)
    const started = events.filter((e) => e.start !== undefined).map((e) => e.start)
    const culprit = timedOut?.timeout ?? started.reverse().find((n) => remaining.includes(n))
    const how = child.error ? `was killed (${child.error.code})`
      : child.signal ? `was killed by ${child.signal}` : `exited with status ${child.status}`
    if (culprit !== undefined && remaining.includes(culprit)) {
      outcomes.set(culprit, {
        outcome: 'failed',
        message: timedOut ? `still running after ${timedOut.seconds} s (UPSTREAM_SUITE_TEST_TIMEOUT)`
          : `the test process ${how} while this test ran`,
      })
      remaining = remaining.filter((n) => n !== culprit)
      continue
    }
    if (!progress) {
      // Nothing ran: the file itself failed (a load error), or the tests are not found.
      const text = fs.readFileSync(stderr, 'utf8')
      const line = text.split('\n').find((l) => /\b\w*Error\b|\bError:/.test(l)) ?? text.split('\n').find(Boolean) ?? ''
      for (const n of remaining) {
        outcomes.set(n, { outcome: 'failed', message: `the file did not run (its process ${how}): ${line.trim().slice(0, 250)}` })
      }
      remaining = []
    }
  }
  return outcomes
}

const tests = JSON.parse(fs.readFileSync(path.join(tree, 'tests.json'), 'utf8'))
const files = Object.keys(tests).filter((f) => only.length === 0 || only.includes(f))
for (const f of only) if (!(f in tests)) throw new Error(`no upstream test file ${f}`)
const expected = record ? new Map() : loadExpectations(expectationsPath)
const outcome = new Map() // id -> {outcome, message}
for (const file of files) {
  const started = Date.now()
  for (const [name, o] of runFile(file, tests[file])) outcome.set(`${file}::${name}`, o)
  console.log(`upstream js: ${file}: ${tests[file].length} tests, ${((Date.now() - started) / 1000).toFixed(1)} s`)
}

if (record) {
  const rows = [...outcome].sort(([a], [b]) => a.localeCompare(b))
    .map(([id, o]) => `${id}\t${o.outcome}\t${o.message.replace(/[\t\n]/g, ' ')}`)
  fs.writeFileSync(record, rows.join('\n') + '\n')
}

const bad = []
let passed = 0, xfail = 0, failed = 0
for (const [id, o] of [...outcome].sort(([a], [b]) => a.localeCompare(b))) {
  if (o.outcome === 'passed') passed++
  if (o.outcome === 'failed') failed++
  if (record) continue
  if (!expected.has(id)) { bad.push(`${id}: not in expectations.txt (it ${o.outcome}${o.message ? `: ${o.message}` : ''})`); continue }
  const reason = expected.get(id)
  if (o.outcome === 'skipped') bad.push(`${id}: skipped, expected ${reason === null ? 'pass' : 'xfail'}`)
  else if (reason === null && o.outcome === 'failed') bad.push(`${id}: expected pass, failed: ${o.message}`)
  else if (reason !== null && o.outcome === 'passed') bad.push(`${id}: passes now: make its line \`pass\` (it was xfail: ${reason})`)
  else if (reason !== null) xfail++
}
if (!record && only.length === 0) {
  for (const id of expected.keys()) if (!outcome.has(id)) bad.push(`${id}: in expectations.txt but no such upstream test`)
}
if (bad.length) {
  console.log('upstream suite: mismatches with tests/upstream/js/expectations.txt')
  for (const line of bad) console.log(`  ${line}`)
}
const tail = record ? `, ${failed} failed (recorded to ${record})` : bad.length ? `, ${bad.length} mismatched` : ''
if (record) console.log(`upstream js: ${passed} passed, ${failed} failed (recorded to ${record})`)
else console.log(`upstream js: ${passed} passed, ${xfail} xfail${tail}`)
process.exitCode = !record && bad.length ? 1 : 0
