'use strict'
// CommonJS entry: the addon plus the error classes.
const native = loadAddon()
const errors = require('./errors.js')

native.__registerErrorClasses(errors)

// What the addon calls back into JS for (src/helpers.rs).
const settle = native.__settle
const takeHeld = native.__takeHeld
const dropHeld = native.__dropHeld
const { slice, concat } = Array.prototype
const dataProperty = (value) => ({ value, writable: true, enumerable: true, configurable: true })
// A result's `messages` until first read or write (src/lazy.rs): the transcript waits in the
// addon until then. Read through an heir (`Object.create(result)`), the result itself is
// filled; an object holding nothing gives `undefined`.
const lazyMessages = {
  get() {
    for (let o = this; o !== null && o !== undefined; o = Object.getPrototypeOf(o)) {
      const messages = takeHeld(o)
      if (messages !== null) {
        Object.defineProperty(o, 'messages', dataProperty(messages))
        return messages
      }
    }
    return undefined
  },
  set(value) {
    dropHeld(this)
    Object.defineProperty(this, 'messages', dataProperty(value))
  },
  enumerable: true,
  configurable: true,
}
native.__registerHelpers({
  // `token` stands for the call waiting on `promise` (src/awaiter.rs).
  await(promise, token) {
    promise.then(
      (value) => settle(token, true, value),
      (error) => settle(token, false, error),
    )
  },
  parse: JSON.parse,
  stringify: JSON.stringify,
  lazyResult: (text) => Object.defineProperty(JSON.parse(text), 'messages', lazyMessages),
  // The caller's first `kept` messages, the same JS values, then the run's own.
  givenResult(text, history, kept) {
    const result = JSON.parse(text)
    result.messages = concat.call(slice.call(history, 0, kept), result.messages)
    return result
  },
  // A tool's `(args, ctx)` (src/tool.rs); its arguments read by `JSON.parse`, as the JS port does.
  toolCall(args, callId, answer, timeout) {
    const ctx = { callId }
    if (answer !== undefined) ctx.answer = answer
    if (timeout !== undefined) ctx.timeout = timeout
    return [JSON.parse(args), ctx]
  },
})

// `register(...tools)` as in the JS port: the addon takes one array; chainable.
const registerArray = native.Toolkit.prototype.register
native.Toolkit.prototype.register = function register(...tools) {
  registerArray.call(this, tools.flat())
  return this
}

// `stream(prompt, {toolkit, history, signal})` as in the JS port: an async iterator of the
// run's steps, then `{type: 'done', result}`. The engine delivers every step before the run's
// Promise settles; a failed run throws from the iteration, and leaving the loop early aborts
// the run.
native.Client.prototype.stream = async function* stream(prompt, options) {
  const stop = new AbortController()
  const signal = options && options.signal ? AbortSignal.any([options.signal, stop.signal]) : stop.signal
  const events = []
  let wake = null
  const run = this._stream(prompt, { ...options, signal }, (ev) => {
    events.push(ev)
    if (wake) wake()
  })
  let settled = false
  const settle = () => {
    settled = true
    if (wake) wake()
  }
  run.then(settle, settle)
  try {
    while (true) {
      while (events.length) yield events.shift()
      if (settled) break
      await new Promise((resolve) => { wake = resolve })
      wake = null
    }
    yield { type: 'done', result: await run }
  } finally {
    if (!settled) {
      stop.abort()
      await run.catch(() => {})
    }
  }
}

// ---- conversation memory (the engine's: runs with an `id`; here only the JS shapes) ----

/** A store the engine keeps; `get` and `save` hand out and take copies. */
class EngineStore {
  constructor(engine) {
    this._engine = engine
  }
  /** The transcript stored for `id`, or `undefined`. */
  get(id) {
    return this._engine.get(id).then((m) => (m === null ? undefined : m))
  }
  /** Stores `messages` as the transcript of `id` (a pending request it had is dropped). */
  save(id, messages) {
    return this._engine.save(id, messages)
  }
  /** Every conversation waiting on a request, oldest first: `{id, request, sinceMs}`. */
  pendingRuns() {
    return this._engine.pendingRuns()
  }
}

/** The default store: conversations in memory, for the life of the store. */
class InMemoryConversationStore extends EngineStore {
  constructor(engine) {
    super(engine instanceof native._EngineStore ? engine : native._EngineStore.memory())
  }
}

/** Conversations in one SQLite file, shared safely by the processes of one machine. */
class SqliteConversationStore extends EngineStore {
  constructor(path) {
    super(native._EngineStore.sqlite(path))
    this.path = path
  }
}

/** Conversations in a PostgreSQL database (`postgres://user:pass@host:port/db`), for fleets. */
class PostgresConversationStore extends EngineStore {
  constructor(url) {
    super(native._EngineStore.postgres(url))
  }
}

// What the addon is given for `options.store`: the engine's own store, or `get`/`save` bound
// to the host's object; a path (or anything else) goes as it is, for the engine to read.
function storeOption(func, options) {
  const store = options && options.store
  if (store === null || typeof store !== 'object') return options
  if (store instanceof EngineStore) return { ...options, store: { _engine: store._engine } }
  if (typeof store.get !== 'function' || typeof store.save !== 'function') {
    throw new errors.InvalidArgumentError(`${func}: options.store must be a path or have get(id) and save(id, messages)`)
  }
  return { ...options, store: { get: (id) => store.get(id), save: (id, messages) => store.save(id, messages) } }
}

// The client keeps what `conversationStore()` hands back: the host's own object, or the path
// of the SQLite store the engine opened.
function withStore(func, create) {
  return function (options) {
    const client = create(storeOption(func, options))
    const store = options && options.store
    if (store !== null && typeof store === 'object') client._store = store
    else if (typeof store === 'string') client._storePath = store
    return client
  }
}

/** The client's store: the one given as `store`, else its own in-memory one. */
native.Client.prototype.conversationStore = function conversationStore() {
  if (this._store === undefined) {
    const engine = this._engineStore()
    const path = this._storePath
    if (path === undefined) this._store = new InMemoryConversationStore(engine)
    else if (engine.kind === 'postgres') this._store = Object.assign(Object.create(PostgresConversationStore.prototype), { _engine: engine })
    else this._store = Object.assign(Object.create(SqliteConversationStore.prototype), { _engine: engine, path })
  }
  return this._store
}

// `ask(prompt, {toolkit, id, on_text, signal})` as in the JS port: with an `id` the run is the
// next turn of that stored conversation; `on_text` streams the text and still returns the result.
native.Client.prototype.ask = async function ask(prompt, ctx) {
  const c = ctx || {}
  const onText = c.on_text || c.onText
  const options = { toolkit: c.toolkit, signal: c.signal, id: c.id || undefined }
  if (!onText) return this.run(prompt, options)
  let result
  for await (const ev of this.stream(prompt, options)) {
    if (ev.type === 'text') onText(ev.delta)
    else if (ev.type === 'done') result = ev.result
  }
  return result
}

/** A conversation the object itself remembers: each `send` continues `messages`. */
class Conversation {
  constructor(client, toolkit, signal) {
    this.client = client
    this.toolkit = toolkit
    this.signal = signal
    /** The whole transcript so far. */
    this.messages = []
  }
  /** Runs `prompt` as the next user turn; the result's messages become `messages`. */
  async send(prompt) {
    const result = await this.client.run(prompt, { toolkit: this.toolkit, signal: this.signal, history: this.messages })
    this.messages = result.messages
    return result
  }
  /** Forgets the conversation. */
  reset() {
    this.messages = []
  }
}

native.Client.prototype.conversation = function conversation(ctx) {
  const c = ctx || {}
  return new Conversation(this, c.toolkit, c.signal)
}

// ---- content parts (the engine makes them; here only JS's byte spellings and Blob reading) ----

// Any JS spelling of bytes as a Uint8Array over the same memory (a view that is not a
// Uint8Array is re-viewed, never read as an array of numbers); anything else goes as it is,
// for the addon to refuse.
function toBytes(b) {
  if (b instanceof Uint8Array) return b
  if (ArrayBuffer.isView(b)) return new Uint8Array(b.buffer, b.byteOffset, b.byteLength)
  if (b instanceof ArrayBuffer || (typeof SharedArrayBuffer !== 'undefined' && b instanceof SharedArrayBuffer)) return new Uint8Array(b)
  return b
}

// A Blob or File, duck-typed (one of another realm or a polyfill too).
const isBlobLike = (v) => !!v && typeof v === 'object' && typeof v.arrayBuffer === 'function' && !ArrayBuffer.isView(v)

function fromBytes(bytes, mimeType, opts) {
  return native._fromBytes(toBytes(bytes), mimeType, opts)
}

async function fromBlob(blob, opts) {
  const bytes = isBlobLike(blob) ? new Uint8Array(await blob.arrayBuffer()) : blob
  return native._fromBlob(bytes, blob == null ? undefined : blob.type, blob == null ? undefined : blob.name, opts)
}

async function attach(source, opts) {
  if (typeof source === 'string') return native._attachText(source, opts)
  if (isBlobLike(source)) return fromBlob(source, opts)
  return native._attachBytes(toBytes(source), opts)
}

const MEDIA_TYPES = Object.freeze(
  Object.fromEntries(Object.entries(native._mediaTypes()).map(([ext, t]) => [ext, Object.freeze(t)])),
)

module.exports = {
  createClient: withStore('createClient', native.createClient),
  createInProcessClient: withStore('createInProcessClient', native.createInProcessClient),
  InMemoryConversationStore,
  SqliteConversationStore,
  PostgresConversationStore,
  Conversation,
  createToolkit: native.createToolkit,
  defineTool: native.defineTool,
  relayTool: native.relayTool,
  pending: native.pending,
  authRequired: native.authRequired,
  pendingOf: native.pendingOf,
  answerOutput: native.answerOutput,
  answerDeclined: native.answerDeclined,
  sanitize: native.sanitize,
  openAIMessagesToAnthropic: native.openAIMessagesToAnthropic,
  openAIToolsToAnthropic: native.openAIToolsToAnthropic,
  openAIToolChoiceToAnthropic: native.openAIToolChoiceToAnthropic,
  finishReasonFor: native.finishReasonFor,
  toOpenAI: native.toOpenAI,
  toAnthropic: native.toAnthropic,
  toGemini: native.toGemini,
  createBuiltinTools: native.createBuiltinTools,
  selectBuiltins: native.selectBuiltins,
  builtinsEnabled: native.builtinsEnabled,
  httpTool: native.httpTool,
  expandEnvHeaders: native.expandEnvHeaders,
  loadSkills: native.loadSkills,
  listSkills: native.listSkills,
  loadMcp: native.loadMcp,
  listMcpTools: native.listMcpTools,
  elicitationToRequest: native.elicitationToRequest,
  answerToElicitResult: native.answerToElicitResult,
  exposedMcpTools: native.exposedMcpTools,
  parseMcpConfig: native.parseMcpConfig,
  text: native.text,
  attach,
  fromPath: native.fromPath,
  fromBytes,
  fromBlob,
  fromDataUrl: native.fromDataUrl,
  fromUrl: native.fromUrl,
  MEDIA_TYPES,
  extensionOf: native.extensionOf,
  mediaTypeFor: native.mediaTypeFor,
  partTypeForMime: native.partTypeForMime,
  base64Bytes: native.base64Bytes,
  partBytes: native.partBytes,
  partTokens: native.partTokens,
  PART_BYTES_PER_TOKEN: native.PART_BYTES_PER_TOKEN,
  MIN_PART_TOKENS: native.MIN_PART_TOKENS,
  describePart: native.describePart,
  summarizePart: native.summarizePart,
  unsupportedPlaceholder: native.unsupportedPlaceholder,
  isContentPart: native.isContentPart,
  validatePart: native.validatePart,
  encodePart: native.encodePart,
  SKILLS_PROMPT_PREAMBLE: native.SKILLS_PROMPT_PREAMBLE,
  SKILL_TOOL_DESCRIPTION: native.SKILL_TOOL_DESCRIPTION,
  version: native.version,
  Client: native.Client,
  Toolkit: native.Toolkit,
  Tool: native.Tool,
  SkillSource: native.SkillSource,
  McpSource: native.McpSource,
  McpServer: native.McpServer,
  ServeHandle: native.ServeHandle,
  ...errors,
}

// The addon: built from source into this folder (`npm run build`), else the prebuilt one of
// this platform's package, napi-rs's convention (`toolnexus-linux-x64-gnu`: make dist).
function loadAddon() {
  try {
    return require('./toolnexus.node')
  } catch (e) {
    if (e.code !== 'MODULE_NOT_FOUND') throw e
  }
  const abi = process.platform === 'linux' ? (process.report.getReport().header.glibcVersionRuntime ? '-gnu' : '-musl') : ''
  const pkg = `toolnexus-${process.platform}-${process.arch}${abi}`
  try {
    return require(pkg)
  } catch (e) {
    if (e.code !== 'MODULE_NOT_FOUND') throw e
    throw new Error(`toolnexus: no addon for this platform: install ${pkg} (prebuilt), or build one from source (npm run build)`)
  }
}
