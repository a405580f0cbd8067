// Loaded into each upstream test process (`node --import`), before the test file.
//
// - Fails a test that used a stand-in, even when it caught the error (standins.mjs).
// - Bounds each test: one still running after UPSTREAM_SUITE_TEST_TIMEOUT seconds (default 60)
//   is written down as timed out and the process exits; suite.mjs then runs the file's
//   remaining tests in a fresh process. Node 20's --test-timeout bounds a whole file, not each
//   test, and a test that fails before closing its mock server (upstream's unit.test.ts has no
//   try/finally) would keep the process alive; --test-force-exit ends it after the last test.
// - Writes each test's start to UPSTREAM_SUITE_STATUS, so a test the process died in is known.
import fs from 'node:fs'
import { afterEach, beforeEach } from 'node:test'
import { MissingFeature, setImporting, standInUses } from './standins.mjs'

const timeoutS = Number(process.env.UPSTREAM_SUITE_TEST_TIMEOUT || 60)
const status = process.env.UPSTREAM_SUITE_STATUS
let timer

setImporting(true)

beforeEach((t) => {
  setImporting(false)
  standInUses().length = 0
  if (status) fs.appendFileSync(status, JSON.stringify({ start: t.name }) + '\n')
  clearTimeout(timer)
  timer = setTimeout(() => {
    if (status) fs.appendFileSync(status, JSON.stringify({ timeout: t.name, seconds: timeoutS }) + '\n')
    process.exit(124)
  }, timeoutS * 1000)
  timer.unref()
})

afterEach(() => {
  clearTimeout(timer)
  const used = standInUses().splice(0)
  if (used.length) throw new MissingFeature(`the test used a stand-in: ${used[0]}`)
})
