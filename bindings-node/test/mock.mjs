// A loopback mock model for the tests: serves scripted replies in order and records every
// request (path, lowercase headers, JSON body). node:http, keep-alive.
import http from 'node:http'
import { before, after } from 'node:test'

import { createClient } from '../index.mjs'

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms))

/** A Mock started before the calling test file's tests and stopped after them. */
export function mockForThisFile() {
  const mock = new Mock()
  before(() => mock.start())
  after(() => mock.stop())
  return mock
}

/** An OpenAI-style client of `mock` that retries at once; `extra` adds or overrides options. */
export function openaiClient(mock, extra = {}) {
  return createClient({ baseUrl: mock.url('/v1'), style: 'openai', model: 'm', apiKey: 'k', retryBaseMs: 1, ...extra })
}

export class Mock {
  constructor() {
    this.replies = []
    this.seen = []
    this.server = http.createServer((req, res) => {
      const chunks = []
      req.on('data', (c) => chunks.push(c))
      req.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8')
        let body
        try {
          body = JSON.parse(text)
        } catch {
          body = { unparsed: text }
        }
        this.seen.push({ path: req.url, headers: req.headers, body })
        const reply = this.replies.shift() ?? {
          status: 599,
          body: { error: { message: 'mock: no reply left for this request' } },
        }
        const send = () => {
          res.writeHead(reply.status ?? 200, { 'content-type': 'application/json', ...(reply.headers ?? {}) })
          res.end(JSON.stringify(reply.body ?? null))
        }
        if (reply.delayMs) setTimeout(send, reply.delayMs)
        else send()
      })
    })
  }

  async start() {
    await new Promise((resolve) => this.server.listen(0, '127.0.0.1', resolve))
    return this
  }

  /** `http://127.0.0.1:PORT` + `path`. */
  url(path = '') {
    return `http://127.0.0.1:${this.server.address().port}${path}`
  }

  /** Replaces the queued replies and forgets the requests seen so far. */
  script(replies) {
    this.replies = [...replies]
    this.seen = []
  }

  async stop() {
    this.server.closeAllConnections()
    await new Promise((resolve) => this.server.close(resolve))
  }
}

/** An OpenAI-style reply: text, or tool calls `[id, name, argsJson]`. */
export function openaiReply(text, calls = [], usage = { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 }) {
  const message = { role: 'assistant', content: calls.length ? null : text }
  if (calls.length) {
    message.tool_calls = calls.map(([id, name, args]) => ({ id, type: 'function', function: { name, arguments: args } }))
  }
  return { body: { choices: [{ message }], usage } }
}

/** An Anthropic-style reply: text, or tool uses `[id, name, input]`. */
export function anthropicReply(text, uses = []) {
  const content = []
  if (text) content.push({ type: 'text', text })
  for (const [id, name, input] of uses) content.push({ type: 'tool_use', id, name, input })
  return {
    body: {
      content,
      stop_reason: uses.length ? 'tool_use' : 'end_turn',
      usage: { input_tokens: 1, output_tokens: 1 },
    },
  }
}
