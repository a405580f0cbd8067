// The approvals inbox in headless Chromium: a real server process (the inbox_demo example:
// the mock model, a SQLite store with two parked runs, the inbox with a token), the pending
// list checked and screenshotted, one run approved, the other declined with a reason, and
// each outcome checked and screenshotted. Every wait is bounded; everything is on 127.0.0.1.
import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import assert from 'node:assert/strict';
import { chromium } from 'playwright-core';
import { decodePng, inspect } from './png.mjs';

const demo = process.env.INBOX_DEMO;
const outDir = process.env.INBOX_SCREENSHOTS;
assert.ok(demo && outDir, 'set INBOX_DEMO (the inbox_demo binary) and INBOX_SCREENSHOTS (a directory)');
mkdirSync(outDir, { recursive: true });
const VIEW = { width: 1000, height: 900 };
const GREEN = [31, 143, 58];   // the Approve button
const RED = [179, 38, 30];     // the Decline button
const BLUE = [47, 95, 208];    // a request's kind badge

function withTimeout(promise, ms, what) {
  let timer;
  const timeout = new Promise((_, reject) => { timer = setTimeout(() => reject(new Error(`timed out: ${what}`)), ms); });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

function startDemo() {
  const child = spawn(demo, [], { stdio: ['pipe', 'pipe', 'inherit'] });
  const url = new Promise((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (d) => {
      out += d;
      const m = out.match(/^INBOX_URL (\S+)$/m);
      if (m) resolve(m[1]);
    });
    child.on('exit', (code) => reject(new Error(`inbox_demo exited (${code}) before printing its URL`)));
  });
  return { child, url: withTimeout(url, 60_000, 'the inbox URL') };
}

async function shot(page, name, expectColours) {
  const file = join(outDir, name);
  const buf = await page.screenshot({ path: file });
  const png = decodePng(buf);
  assert.equal(png.width, VIEW.width, `${name} width`);
  assert.equal(png.height, VIEW.height, `${name} height`);
  const seen = inspect(png, { green: GREEN, red: RED, blue: BLUE });
  assert.ok(seen.ink > 0.01, `${name} is not blank (ink ${seen.ink})`);
  for (const [colour, present] of Object.entries(expectColours)) {
    if (present) assert.ok(seen.counts[colour] > 200, `${name} shows ${colour} (${seen.counts[colour]} px)`);
    else assert.equal(seen.counts[colour], 0, `${name} shows no ${colour}`);
  }
  console.log(`${name}: ${png.width}x${png.height}, ink ${(seen.ink * 100).toFixed(1)}%, ${JSON.stringify(seen.counts)}`);
}

const started = Date.now();
const { child, url } = startDemo();
let browser;
try {
  const inboxUrl = await url;
  const origin = new URL(inboxUrl).origin;
  assert.equal(new URL(inboxUrl).hostname, '127.0.0.1');
  browser = await withTimeout(
    chromium.launch({ executablePath: '/usr/bin/chromium', headless: true, args: ['--no-sandbox'], timeout: 30_000 }),
    40_000, 'launching chromium');
  const context = await browser.newContext({ viewport: VIEW });
  const page = await context.newPage();
  page.setDefaultTimeout(15_000);
  page.setDefaultNavigationTimeout(15_000);

  // The token in the link becomes a cookie and leaves the address bar.
  await page.goto(inboxUrl);
  assert.equal(page.url(), `${origin}/`);
  let text = await page.innerText('body');
  for (const shown of ['Approvals inbox', '2 runs waiting in the sqlite store', 'Deploy build 42 to production?',
    'https://ci.example/builds/42', '"env": "production"', 'deploy-42', 'cleanup-7',
    'Delete the 1,204 stale branches?', 'approval', 'Approve', 'Decline', 'Send answer']) {
    assert.ok(text.includes(shown), `the list shows ${JSON.stringify(shown)}:\n${text}`);
  }
  assert.match(text, /Waiting\s+\d+ (s|min)/);
  await shot(page, 'pending.png', { green: true, red: true, blue: true });

  // Approve the deployment.
  await Promise.all([page.waitForNavigation(), page.click('section[data-conversation="deploy-42"] button.approve')]);
  text = await page.innerText('body');
  assert.ok(text.includes('Run resumed'), text);
  assert.ok(text.includes('Approved'), text);
  assert.match(text, /Status: done/);
  assert.ok(text.includes('Finished: gate passed with "approved"'), text);
  await shot(page, 'outcome-approved.png', { green: false, red: false });

  // Back to the list: one run left; decline it with a reason.
  await page.click('text=Back to the inbox');
  text = await page.innerText('body');
  assert.ok(text.includes('1 run waiting'), text);
  assert.ok(!text.includes('deploy-42'), text);
  const cleanup = 'section[data-conversation="cleanup-7"]';
  // A second tab holds the same list: its answer, sent after the first, must be refused.
  const stale = await context.newPage();
  stale.setDefaultTimeout(15_000);
  await stale.goto(`${origin}/`);
  assert.ok((await stale.innerText('body')).includes('cleanup-7'));
  await page.selectOption(`${cleanup} select[name="reason"]`, 'cancelled');
  await Promise.all([page.waitForNavigation(), page.click(`${cleanup} button.decline`)]);
  text = await page.innerText('body');
  assert.ok(text.includes('Declined (cancelled)'), text);
  assert.match(text, /Status: done/);
  assert.ok(text.includes('Finished: declined/expired: Delete the 1,204 stale branches?'), text);
  await shot(page, 'outcome-declined.png', { green: false, red: false });

  // The stale tab's answer: a conflict page, not a second resume.
  const [again] = await Promise.all([stale.waitForNavigation(), stale.click(`${cleanup} button.approve`)]);
  assert.equal(again?.status(), 409);
  text = await stale.innerText('body');
  assert.ok(text.includes('Already resumed'), text);
  await shot(stale, 'conflict.png', { green: false });

  await page.goto(`${origin}/`);
  assert.ok((await page.innerText('body')).includes('Nothing is waiting for an answer.'));
  writeFileSync(join(outDir, 'final.html'), await page.content());
  console.log(`inbox browser test passed in ${((Date.now() - started) / 1000).toFixed(1)} s`);
} finally {
  if (browser) await withTimeout(browser.close(), 15_000, 'closing chromium').catch(() => {});
  child.stdin.end();
  const exited = new Promise((resolve) => child.on('exit', resolve));
  await withTimeout(exited, 15_000, 'inbox_demo exiting').catch(() => child.kill('SIGKILL'));
}
