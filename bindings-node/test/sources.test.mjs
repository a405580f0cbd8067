// The engine's tool sources through the binding: built-ins (confined to a temp folder), an HTTP
// tool against a local server, skills from the core's fixture folder (byte for byte what
// core/tests/skills.rs expects), MCP against @modelcontextprotocol/server-everything over
// stdio, the toolkit served over MCP to the official JS SDK client, one agent run through all
// of them ending in a durable `question`, and a process that exits by itself after MCP toolkits.
//
// The MCP servers and the SDK come from tests/mcp (`npm ci` there, as core/tests/mcp_env does);
// when they cannot be installed the MCP tests skip loudly, and fail under CI.
import { test, describe, before, after } from 'node:test'
import assert from 'node:assert/strict'
import http from 'node:http'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { spawnSync } from 'node:child_process'
import { fileURLToPath, pathToFileURL } from 'node:url'

import * as tn from '../index.mjs'
import { mockForThisFile, openaiClient, openaiReply } from './mock.mjs'

const HERE = path.dirname(fileURLToPath(import.meta.url))
const REPO = path.resolve(HERE, '..', '..')
const SKILLS = path.join(REPO, 'core', 'tests', 'fixtures', 'skills')
const MCP_DIR = path.join(REPO, 'tests', 'mcp')
const EVERYTHING = path.join(MCP_DIR, 'node_modules', '@modelcontextprotocol', 'server-everything', 'dist', 'index.js')
const SDK = path.join(MCP_DIR, 'node_modules', '@modelcontextprotocol', 'sdk', 'dist', 'esm')

const BUILTINS = ['bash', 'read', 'write', 'edit', 'grep', 'glob', 'webfetch', 'question', 'apply_patch', 'todowrite']

/** The MCP packages of tests/mcp, installed as core/tests/mcp_env does; a reason when not. */
function mcpPackages() {
  const lock = path.join(MCP_DIR, 'package-lock.json')
  const stamp = path.join(MCP_DIR, 'node_modules', '.toolnexus-installed-lock.json')
  const same = () => fs.existsSync(stamp) && fs.readFileSync(stamp).equals(fs.readFileSync(lock))
  if (!same()) {
    const r = spawnSync('npm', ['ci', '--no-audit', '--no-fund', '--ignore-scripts', '--loglevel=error'], {
      cwd: MCP_DIR,
      encoding: 'utf8',
    })
    if (r.status !== 0) return `npm ci in tests/mcp failed: ${r.error ?? r.stderr}`
    fs.writeFileSync(stamp, fs.readFileSync(lock))
  }
  return fs.existsSync(EVERYTHING) && fs.existsSync(SDK) ? undefined : 'the MCP packages are missing after npm ci'
}

const mcpMissing = mcpPackages()
if (mcpMissing) {
  if (process.env.CI) throw new Error(`MCP tests: ${mcpMissing} (CI installs them)`)
  console.error(`\n*** SKIPPING the MCP tests: ${mcpMissing}. CI runs them. ***\n`)
}
const mcpTest = (name, fn) => test(name, { skip: mcpMissing ? `MCP packages unavailable: ${mcpMissing}` : false }, fn)

const everything = (extra = {}) => ({ mcpServers: { everything: { command: ['node', EVERYTHING, 'stdio'], ...extra } } })

/** Warnings emitted while `fn` runs. */
async function warningsOf(fn) {
  const seen = []
  const on = (w) => w.name === 'ToolnexusWarning' && seen.push(w)
  process.on('warning', on)
  try {
    await fn()
    await new Promise((r) => setImmediate(r))
  } finally {
    process.off('warning', on)
  }
  return seen
}

function tempDir() {
  return fs.mkdtempSync(path.join(os.tmpdir(), 'tn-node-sources-'))
}

// ---- built-ins ------------------------------------------------------------------------------

describe('built-in tools', () => {
  test('createBuiltinTools gives the ten in upstream order, as builtin Tools', () => {
    const tools = tn.createBuiltinTools()
    assert.deepEqual(tools.map((t) => t.name), BUILTINS)
    assert.ok(tools.every((t) => t instanceof tn.Tool && t.source === 'builtin'))
  })

  test('selectBuiltins and builtinsEnabled follow the switches; the engine checks the options', async () => {
    assert.deepEqual(tn.selectBuiltins(false), [])
    assert.deepEqual(tn.selectBuiltins({ disabled: true }), [])
    assert.deepEqual(tn.selectBuiltins({ tools: { bash: false, webfetch: false } }).map((t) => t.name), BUILTINS.filter((n) => n !== 'bash' && n !== 'webfetch'))
    assert.equal(tn.builtinsEnabled(), true)
    assert.equal(tn.builtinsEnabled({ enabled: false }), false)
    assert.equal(tn.builtinsEnabled({ enabled: true, disabled: true }), false)
    assert.throws(() => tn.selectBuiltins({ rooot: '/tmp' }), (e) => e instanceof tn.InvalidArgumentError && /unknown option "builtins.rooot"/.test(e.message))
    const warnings = await warningsOf(() => tn.selectBuiltins({ tools: { nope: false } }))
    assert.deepEqual(warnings.map((w) => w.code), ['unknown_builtin'])
  })

  test('with root, the file tools act inside the folder and refuse a path leading out', async () => {
    const dir = tempDir()
    const outside = tempDir()
    fs.writeFileSync(path.join(outside, 'secret.txt'), 'secret')
    fs.symlinkSync(outside, path.join(dir, 'link'))
    const tk = await tn.createToolkit({ builtins: { root: dir } })
    assert.deepEqual(tk.tools().map((t) => t.name), BUILTINS)
    const w = await tk.execute('write', { path: 'notes/a.txt', content: 'hello\n' })
    assert.equal(w.isError, false, w.output)
    assert.equal(fs.readFileSync(path.join(dir, 'notes', 'a.txt'), 'utf8'), 'hello\n')
    const r = await tk.execute('read', { path: 'notes/a.txt' })
    assert.equal(r.isError, false, r.output)
    assert.match(r.output, /hello/)
    const g = await tk.get('glob').execute({ pattern: '**/*.txt' })
    assert.match(g.output, /a\.txt/)
    for (const escape of ['../x.txt', path.join(outside, 'secret.txt'), 'link/secret.txt']) {
      const read = await tk.execute('read', { path: escape })
      assert.equal(read.isError, true, `${escape}: ${read.output}`)
      assert.match(read.output, /resolves outside root/)
      assert.doesNotMatch(read.output, /secret$/)
    }
    const write = await tk.execute('write', { path: '../escaped.txt', content: 'x' })
    assert.equal(write.isError, true)
    assert.equal(fs.existsSync(path.join(path.dirname(dir), 'escaped.txt')), false)
    const bash = await tk.execute('bash', { command: 'pwd' })
    assert.equal(bash.output.trim().split('\n')[0], fs.realpathSync(dir))
    await tk.close()
  })

  test('a host tool of the same name replaces a built-in; disableTools drops by name', async () => {
    const mine = tn.defineTool({ name: 'read', description: 'mine', run: () => 'my read' })
    const tk = await tn.createToolkit({ extraTools: [mine], disableTools: ['bash', 'webfetch'] })
    assert.deepEqual(tk.tools().map((t) => t.name), [...BUILTINS.filter((n) => !['bash', 'webfetch', 'read'].includes(n)), 'read'])
    assert.equal((await tk.execute('read', {})).output, 'my read')
  })

  test('the toolkit options are the engine\'s: unknown keys and agents are refused', () => {
    assert.throws(() => tn.createToolkit({ mcpConfg: {} }), (e) => e instanceof tn.InvalidArgumentError && /mcpConfg/.test(e.message))
    assert.throws(() => tn.createToolkit({ agents: [{ card: 'http://x' }] }), (e) => e.code === 'invalid_argument' && /agents/.test(e.message))
    assert.throws(() => tn.createToolkit({ skillProvider: 3 }), /createToolkit: opts\.skillProvider must be a function, got number/)
    assert.throws(() => tn.createToolkit({ signal: 'now' }), /createToolkit: opts\.signal must be an AbortSignal/)
  })
})

// ---- HTTP tools -----------------------------------------------------------------------------

describe('HTTP tools', () => {
  const seen = []
  const server = http.createServer((req, res) => {
    const chunks = []
    req.on('data', (c) => chunks.push(c))
    req.on('end', () => {
      seen.push({ method: req.method, url: req.url, headers: req.headers, body: Buffer.concat(chunks).toString() })
      if (req.url.startsWith('/fail')) {
        res.writeHead(503, { 'content-type': 'text/plain' })
        return res.end('down')
      }
      res.writeHead(200, { 'content-type': 'application/json' })
      res.end(JSON.stringify({ ok: true, path: req.url }))
    })
  })
  let base
  before(async () => {
    await new Promise((r) => server.listen(0, '127.0.0.1', r))
    base = `http://127.0.0.1:${server.address().port}`
  })
  after(() => {
    server.closeAllConnections()
    server.close()
  })

  test('httpTool sends the call as declared and answers with the body', async () => {
    process.env.TN_NODE_HTTP_TOKEN = 'tok-from-env'
    const get = tn.httpTool({
      name: 'get user',
      description: 'Fetch a user.',
      method: 'get',
      url: `${base}/users/{id}`,
      headers: { authorization: 'Bearer ${TN_NODE_HTTP_TOKEN}' },
      timeout: 5000,
    })
    assert.ok(get instanceof tn.Tool)
    assert.equal(get.name, 'get_user')
    assert.equal(get.source, 'http')
    assert.deepEqual(get.inputSchema, { type: 'object', properties: {}, additionalProperties: false })
    seen.length = 0
    const r = await get.execute({ id: 'a b', verbose: 'yes' })
    assert.deepEqual([r.output, r.isError], [JSON.stringify({ ok: true, path: '/users/a%20b?verbose=yes' }), false])
    assert.equal(seen[0].method, 'GET')
    assert.equal(seen[0].headers.authorization, 'Bearer tok-from-env')

    const post = tn.httpTool({ name: 'create', description: 'Create.', method: 'POST', url: `${base}/items`, query: ['dry'], resultMode: 'status+text' })
    seen.length = 0
    const p = await post.execute({ dry: 1, name: 'x' })
    assert.equal(p.isError, false)
    assert.match(p.output, /^200\n/)
    assert.equal(seen[0].url, '/items?dry=1')
    assert.deepEqual(JSON.parse(seen[0].body), { name: 'x' })
    assert.match(seen[0].headers['content-type'], /application\/json/)

    const fail = tn.httpTool({ name: 'down', description: '', method: 'GET', url: `${base}/fail` })
    assert.equal((await fail.execute({})).isError, true)
  })

  test('an HTTP tool runs in a toolkit; the engine checks its options', async () => {
    const tk = await tn.createToolkit({ builtins: false, extraTools: [tn.httpTool({ name: 'ping', description: '', method: 'GET', url: `${base}/ping` })] })
    assert.equal((await tk.execute('ping', {})).isError, false)
    assert.throws(() => tn.httpTool({ name: 'x', description: '', method: 'GET' }), (e) => e instanceof tn.InvalidArgumentError && /"url" is required/.test(e.message))
    assert.throws(() => tn.httpTool({ name: 'x', description: '', method: 'GET', url: 'ftp://x' }), /http:\/\/ or https:\/\//)
    assert.throws(() => tn.httpTool({ name: 'x', description: '', method: 'GET', url: base, body: 'xml' }), /"body" must be/)
  })

  test('expandEnvHeaders expands ${VAR} from the environment', () => {
    process.env.TN_NODE_HDR = 'v1'
    delete process.env.TN_NODE_UNSET
    assert.deepEqual(tn.expandEnvHeaders({ a: 'x ${TN_NODE_HDR} y', b: '${TN_NODE_UNSET}', c: '${not closed' }), { a: 'x v1 y', b: '', c: '${not closed' })
    assert.equal(tn.expandEnvHeaders(), undefined)
  })
})

// ---- skills ---------------------------------------------------------------------------------

/** DIR_OUTPUTS of core/tests/skills.rs: what upstream's skill tool answers per fixture skill. */
function coreSkillOutputs() {
  const text = fs.readFileSync(path.join(REPO, 'core', 'tests', 'skills.rs'), 'utf8')
  const start = text.indexOf('const DIR_OUTPUTS')
  const block = text.slice(start, text.indexOf('\n];', start))
  const outputs = new Map()
  for (const m of block.matchAll(/\(\s*"([^"]+)",\s*r#"([\s\S]*?)"#,\s*\)/g)) outputs.set(m[1], m[2])
  return outputs
}

/** `{ROOT}` of those texts: the fixture folder (percent-encoded in a file:// URI). */
function expandRoot(text) {
  let uri = ''
  for (const b of Buffer.from(SKILLS)) {
    const c = String.fromCharCode(b)
    uri += /[A-Za-z0-9_.\-~/]/.test(c) ? c : `%${b.toString(16).toUpperCase().padStart(2, '0')}`
  }
  return text.replaceAll('file://{ROOT}', `file://${uri}`).replaceAll('{ROOT}', SKILLS)
}

describe('skills', () => {
  test('the skill tool answers byte for byte what the core\'s tests expect of upstream', async () => {
    const want = coreSkillOutputs()
    assert.ok(want.size >= 10, `read ${want.size} outputs from core/tests/skills.rs`)
    const source = await tn.loadSkills(SKILLS)
    assert.ok(source instanceof tn.SkillSource)
    assert.equal(source.tool?.name, 'skill')
    assert.equal(source.tool.source, 'skill')
    for (const [name, text] of want) {
      const r = await source.tool.execute({ name })
      assert.equal(r.isError, false, name)
      assert.equal(r.output, expandRoot(text), name)
    }
    const hello = source.skills['hello-world']
    assert.equal(hello.origin, 'fs')
    assert.equal(hello.location, path.join(SKILLS, 'hello-world', 'SKILL.md'))
    assert.match(source.prompt(), /## Available Skills/)
  })

  test('a toolkit with skillsDir holds the skill tool and the catalog of the same source', async () => {
    const source = await tn.loadSkills({ dirs: [SKILLS], filter: { 'hello-world': true } })
    assert.deepEqual(Object.keys(source.skills), ['hello-world'])
    const tk = await tn.createToolkit({ builtins: false, skillsDir: SKILLS, skillsFilter: { 'hello-world': true } })
    assert.deepEqual(tk.tools().map((t) => t.name), ['skill'])
    assert.equal(tk.skillsPrompt(), source.prompt())
    assert.equal((await tk.execute('skill', { name: 'hello-world' })).output, (await source.tool.execute({ name: 'hello-world' })).output)
    const none = await tn.createToolkit({ builtins: false })
    assert.equal(none.skillsPrompt(), '')
  })

  test('data skills, a provider and disableSkills compose; listSkills reports the refusals', async () => {
    const tk = await tn.createToolkit({
      builtins: false,
      skills: [{ name: 'data-one', description: 'First.', content: 'Do one.' }],
      skillProvider: async () => [{ name: 'data-two', description: 'Second.', content: 'Do two.', resources: ['a.md'] }, { name: 'gone', description: 'x', content: 'x' }],
      disableSkills: ['gone'],
    })
    const prompt = tk.skillsPrompt()
    assert.match(prompt, /data-one/)
    assert.match(prompt, /data-two/)
    assert.doesNotMatch(prompt, /gone/)
    assert.match((await tk.execute('skill', { name: 'data-two' })).output, /Do two\.[\s\S]*a\.md/)
    const failed = await warningsOf(() => tn.createToolkit({ builtins: false, skillProvider: () => { throw new Error('no skills today') } }))
    assert.deepEqual(failed.map((w) => [w.code, w.message]), [['skill_provider_failed', '[toolnexus] skill provider failed: no skills today']])

    const inv = await tn.listSkills(SKILLS)
    assert.ok(inv.skills.some((s) => s.name === 'hello-world'))
    const reasons = new Set(inv.skipped.map((s) => s.reason))
    for (const r of ['missing-name', 'malformed-frontmatter', 'duplicate-name']) assert.ok(reasons.has(r), `${r} in ${[...reasons]}`)
    await assert.rejects(async () => tn.loadSkills({ sampleLimit: -2, dirs: SKILLS }), (e) => e instanceof tn.InvalidArgumentError)
  })
})

// ---- MCP, the client side -------------------------------------------------------------------

describe('MCP servers', () => {
  mcpTest('a toolkit connects to server-everything over stdio and calls its tools', async () => {
    const tk = await tn.createToolkit({ builtins: false, mcpConfig: everything() })
    try {
      assert.deepEqual(tk.mcpStatus(), { everything: 'connected' })
      const echo = tk.get('everything_echo')
      assert.ok(echo)
      assert.equal(echo.source, 'mcp')
      assert.equal(echo.inputSchema.properties.message.type, 'string')
      const r = await tk.execute('everything_echo', { message: 'hi' })
      assert.deepEqual([r.output, r.isError, r.metadata.server], ['Echo: hi', false, 'everything'])
      const again = await echo.execute({ message: 'again' })
      assert.deepEqual([again.output, again.isError], ['Echo: again', false])
    } finally {
      await tk.close()
    }
    assert.equal((await tk.execute('everything_echo', { message: 'closed' })).isError, true)
    await tk.close() // twice: nothing
  })

  mcpTest('a failed or disabled server is isolated, with a warning', async () => {
    let tk
    const warnings = await warningsOf(async () => {
      tk = await tn.createToolkit({
        builtins: false,
        mcpConfig: { ...everything().mcpServers, missing: { command: ['/nonexistent/mcp-server'] }, off: { command: ['x'], enabled: false } },
      })
    })
    try {
      assert.deepEqual(tk.mcpStatus(), { everything: 'connected', missing: 'failed', off: 'disabled' })
      assert.ok(warnings.some((w) => /missing/.test(w.message)), warnings.map((w) => w.message).join('\n'))
    } finally {
      await tk.close()
    }
  })

  mcpTest('listMcpTools lists and disconnects; loadMcp holds the tools until close', async () => {
    const file = path.join(tempDir(), 'mcp.json')
    fs.writeFileSync(file, JSON.stringify(everything()))
    const inv = await tn.listMcpTools(file)
    assert.deepEqual(inv.status, { everything: 'connected' })
    const echo = inv.tools.everything.find((t) => t.name === 'echo')
    assert.equal(echo.inputSchema.properties.message.type, 'string')
    const source = await tn.loadMcp(everything({ tools: { echo: true } }))
    try {
      assert.deepEqual(source.tools.map((t) => t.name), ['everything_echo'])
      assert.equal((await source.tools[0].execute({ message: 'x' })).output, 'Echo: x')
    } finally {
      await source.close()
    }
    assert.throws(() => tn.listMcpTools(path.join(path.dirname(file), 'none.json')), (e) => e instanceof tn.InvalidArgumentError)
  })

  mcpTest('an aborted signal aborts the MCP load', async () => {
    const ac = new AbortController()
    ac.abort(new Error('stop'))
    await assert.rejects(tn.createToolkit({ builtins: false, mcpConfig: everything(), signal: ac.signal }), (e) => e instanceof tn.AbortError)
  })

  test('elicitations map onto Requests and Answers onto ElicitResults', () => {
    const form = tn.elicitationToRequest({ message: 'Name?', requestedSchema: { type: 'object', properties: { name: { type: 'string' } } } })
    assert.equal(form.kind, 'input')
    assert.equal(form.prompt, 'Name?')
    assert.match(form.id, /^elc-[0-9a-f]+-\d+$/)
    assert.deepEqual(form.data, { schema: { type: 'object', properties: { name: { type: 'string' } } } })
    const url = tn.elicitationToRequest({ mode: 'url', message: 'Log in', url: 'https://x/login' })
    assert.deepEqual([url.kind, url.url, url.data], ['authorization', 'https://x/login', undefined])
    assert.deepEqual(tn.answerToElicitResult({ id: 'a', ok: true, data: { name: 'Ada' } }), { action: 'accept', content: { name: 'Ada' } })
    assert.deepEqual(tn.answerToElicitResult(tn.answerDeclined('a', 'declined')), { action: 'decline' })
    assert.deepEqual(tn.answerToElicitResult(tn.answerDeclined('a', 'expired')), { action: 'cancel' })
  })
})

// ---- MCP, the server side -------------------------------------------------------------------

describe('serving a toolkit over MCP', () => {
  let Client, StreamableHTTPClientTransport
  before(async () => {
    if (mcpMissing) return
    ;({ Client } = await import(pathToFileURL(path.join(SDK, 'client', 'index.js'))))
    ;({ StreamableHTTPClientTransport } = await import(pathToFileURL(path.join(SDK, 'client', 'streamableHttp.js'))))
  })
  const connect = async (url, headers) => {
    const client = new Client({ name: 'node-test', version: '1' })
    await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }))
    return client
  }
  const hostTools = () => [tn.defineTool({ name: 'echo', description: 'Echo.', inputSchema: { type: 'object', properties: { text: { type: 'string' } } }, run: (a) => `echo: ${a.text}` })]

  mcpTest('the SDK client lists and calls the served tools; the token and the Origin are checked', async () => {
    const tk = await tn.createToolkit({ builtins: { root: tempDir() }, extraTools: hostTools() })
    const server = await tk.serveMcp({ token: 'tok-123456', name: 'node-served' })
    try {
      assert.match(server.url, /^http:\/\/127\.0\.0\.1:\d+\/mcp$/)
      for (const gated of ['bash', 'read', 'write', 'edit', 'grep', 'glob', 'apply_patch']) assert.ok(!server.tools.includes(gated), gated)
      assert.ok(server.tools.includes('echo'))
      const client = await connect(server.url, { Authorization: 'Bearer tok-123456' })
      assert.equal(client.getServerVersion().name, 'node-served')
      const listed = (await client.listTools()).tools.map((t) => t.name)
      assert.deepEqual(listed, server.tools)
      assert.ok(!listed.includes('bash'))
      const called = await client.callTool({ name: 'echo', arguments: { text: 'over mcp' } })
      assert.deepEqual(called.content, [{ type: 'text', text: 'echo: over mcp' }])
      await client.close()

      await assert.rejects(connect(server.url, {}), /401|nauthori/i)
      const init = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } } }
      const post = (headers) =>
        fetch(server.url, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers }, body: JSON.stringify(init) })
      assert.equal((await post({ authorization: 'Bearer tok-123456', origin: 'http://evil.example' })).status, 403)
      assert.equal((await post({ authorization: 'Bearer wrong' })).status, 401)
      assert.equal((await post({ authorization: 'Bearer tok-123456' })).status, 200)
    } finally {
      await server.close()
      await tk.close()
    }
  })

  mcpTest('a gated built-in is served only when named', async () => {
    const dir = tempDir()
    const tk = await tn.createToolkit({ builtins: { root: dir }, extraTools: hostTools() })
    assert.deepEqual(tn.exposedMcpTools(tk.tools(), { tools: ['bash', 'echo'] }).map((t) => t.name), ['bash', 'echo'])
    assert.ok(!tn.exposedMcpTools(tk.tools()).some((t) => t.name === 'bash'))
    const server = await tk.serveMcp({ tools: ['bash', 'echo'] })
    try {
      assert.deepEqual(server.tools, ['bash', 'echo'])
      const client = await connect(server.url, {})
      const r = await client.callTool({ name: 'bash', arguments: { command: 'pwd' } })
      assert.equal(r.content[0].text.trim().split('\n')[0], fs.realpathSync(dir))
      await client.close()
    } finally {
      await server.close()
    }
    await assert.rejects(tk.serveMcp({ addr: '0.0.0.0:0' }), (e) => e instanceof tn.InvalidArgumentError && /bearer token/.test(e.message))
  })
})

describe('the JS port\'s serve and config names', () => {
  test('parseMcpConfig unwraps as upstream, from an object or a file', () => {
    const servers = { foo: { command: ['x'] } }
    for (const c of [{ mcpServers: servers }, { servers }, { mcp: servers }, servers]) assert.deepEqual(tn.parseMcpConfig(c), servers)
    const file = path.join(tempDir(), 'mcp.json')
    fs.writeFileSync(file, JSON.stringify({ mcpServers: servers, builtins: false }))
    assert.deepEqual(tn.parseMcpConfig(file), servers)
    assert.throws(() => tn.parseMcpConfig(path.join(tempDir(), 'none.json')), tn.InvalidArgumentError)
  })

  test('loadSkills and listSkills answer at once, as in the JS port', () => {
    const source = tn.loadSkills(path.join(SKILLS, 'hello-world'))
    assert.ok(!(source instanceof Promise))
    assert.ok(source.prompt().startsWith(tn.SKILLS_PROMPT_PREAMBLE.slice(0, 20)))
    assert.equal(source.tool.description, tn.SKILL_TOOL_DESCRIPTION)
    assert.ok(source.skills['hello-world'])
    assert.ok(tn.listSkills({ dirs: [SKILLS] }).skipped.length > 0)
    assert.throws(() => tn.loadSkills({ skillsDir: SKILLS }), (e) => e instanceof tn.InvalidArgumentError && /skillsDir/.test(e.message))
  })

  mcpTest('Toolkit.serve takes the mcp profile, or the mcpServer block of its config; A2A is refused', async () => {
    const tk = await tn.createToolkit({ mcpConfig: { mcpServer: { name: 'from-config' } }, builtins: false })
    const srv = await tk.serve('127.0.0.1:0')
    try {
      assert.match(srv.url, /^http:\/\/127\.0\.0\.1:\d+$/)
      assert.equal(srv.mcpUrl, srv.url + '/mcp')
      const r = await fetch(srv.mcpUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } } }),
      })
      assert.equal((await r.json()).result.serverInfo.name, 'from-config')
    } finally {
      await srv.stop()
    }
    const plain = await tn.createToolkit({ builtins: false })
    assert.throws(() => plain.serve('127.0.0.1:0'), tn.InvalidArgumentError)
    assert.throws(() => plain.serve('127.0.0.1:0', { mcp: {}, a2a: { name: 'x' } }), tn.InvalidArgumentError)
  })
})

// ---- one agent run through every source -----------------------------------------------------

describe('an agent run over every source', () => {
  const mock = mockForThisFile()
  const QUESTION = JSON.stringify({ questions: [{ question: 'Ship it?', options: ['yes', 'no'] }] })

  mcpTest('the model calls an MCP tool, the skill tool and a built-in; question halts and resumes durably', async () => {
    const dir = tempDir()
    fs.writeFileSync(path.join(dir, 'plan.txt'), 'the plan\n')
    const tk = await tn.createToolkit({ mcpConfig: everything(), skillsDir: SKILLS, skillsFilter: { 'hello-world': true }, builtins: { root: dir } })
    try {
      mock.script([
        openaiReply('', [
          ['c1', 'everything_echo', JSON.stringify({ message: 'from the model' })],
          ['c2', 'skill', JSON.stringify({ name: 'hello-world' })],
          ['c3', 'read', JSON.stringify({ path: 'plan.txt' })],
        ]),
        openaiReply('', [['c4', 'question', QUESTION]]),
        openaiReply('shipped'),
      ])
      const client = openaiClient(mock, { systemPrompt: 'You are a test.' })
      const halted = await client.run('do the work', { toolkit: tk })
      assert.equal(halted.status, 'pending')
      assert.equal(halted.pending.kind, 'question')
      assert.equal(halted.pending.prompt, 'Ship it? (options: yes, no)')
      assert.deepEqual(halted.pending.data, JSON.parse(QUESTION))
      // The question's call is recorded as its placeholder until the answer comes.
      assert.deepEqual(halted.toolCalls.map((c) => [c.name, c.isError]), [['everything_echo', false], ['skill', false], ['read', false], ['question', true]])

      const first = mock.seen[0].body
      assert.equal(first.messages[0].role, 'system')
      assert.equal(first.messages[0].content, `You are a test.\n\n${tk.skillsPrompt()}`)
      const declared = first.tools.map((t) => t.function.name)
      for (const n of ['everything_echo', 'skill', 'read', 'question']) assert.ok(declared.includes(n), n)
      const results = Object.fromEntries(mock.seen[1].body.messages.filter((m) => m.role === 'tool').map((m) => [m.tool_call_id, m.content]))
      assert.equal(results.c1, 'Echo: from the model')
      assert.match(results.c2, /^<skill_content name="hello-world">/)
      assert.match(results.c3, /the plan/)

      // The halted run travels as JSON, as it would to another process.
      const stored = JSON.parse(JSON.stringify({ messages: halted.messages, pending: halted.pending }))
      const answer = { id: stored.pending.id, ok: true, data: { answers: ['yes'] } }
      const done = await openaiClient(mock, { systemPrompt: 'You are a test.' }).runWithAnswer(tk, stored.messages, stored.pending, answer)
      assert.equal(done.status, 'done')
      assert.equal(done.text, 'shipped')
      const last = mock.seen[2].body.messages
      assert.deepEqual(last.at(-1), { role: 'tool', tool_call_id: 'c4', content: '{"answers": ["yes"]}' })
      assert.equal(last.filter((m) => m.role === 'user').length, 1, 'no new user turn')
    } finally {
      await tk.close()
    }
  })

  test('question is answered inline through waitFor', async () => {
    const tk = await tn.createToolkit({ builtins: { tools: { bash: false } } })
    mock.script([openaiReply('', [['q1', 'question', QUESTION]]), openaiReply('ok')])
    const asked = []
    const client = openaiClient(mock, { waitFor: async (req) => (asked.push(req), { id: req.id, ok: true, data: { answers: ['no'] } }) })
    const r = await client.run('ask', { toolkit: tk })
    assert.equal(r.status, 'done')
    assert.deepEqual(asked.map((q) => q.kind), ['question'])
    assert.equal(mock.seen[1].body.messages.at(-1).content, '{"answers": ["no"]}')
  })
})

// ---- process exit ---------------------------------------------------------------------------

describe('process exit', () => {
  mcpTest('a process exits by itself after toolkits with MCP stdio servers, closed or not, and leaves no server behind', async () => {
    const marker = `tn-exit-${process.pid}-${Date.now()}`
    const started = Date.now()
    const child = spawnSync(process.execPath, [path.join(HERE, 'fixtures', 'exit-mcp.cjs'), EVERYTHING, marker], { timeout: 20000, encoding: 'utf8' })
    assert.equal(child.error, undefined, `the process did not exit by itself within 20 s: ${child.stdout}\n${child.stderr}`)
    assert.equal(child.status, 0, child.stderr)
    assert.equal(child.stdout.trim(), 'closed: Echo: a; open: Echo: b')
    assert.ok(Date.now() - started < 15000, `exited after ${Date.now() - started} ms`)
    // The servers see their input close and end; none may outlive the host for long.
    const alive = () =>
      fs.readdirSync('/proc').filter((pid) => {
        if (!/^\d+$/.test(pid)) return false
        try {
          return fs.readFileSync(`/proc/${pid}/environ`, 'utf8').includes(`TN_EXIT_MARKER=${marker}`)
        } catch {
          return false
        }
      })
    for (let i = 0; i < 50 && alive().length; i++) await new Promise((r) => setTimeout(r, 100))
    assert.deepEqual(alive(), [], 'MCP servers outlived their host')
  })
})
