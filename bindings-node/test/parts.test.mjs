// The JS port's content-part constructors and helpers (`attach`, `fromPath`, `fromBytes`,
// `fromBlob`, `fromDataUrl`, `fromUrl`, `text`, `encodePart`, `MEDIA_TYPES`, ...) over the
// engine's rules: each one's happy path and its refusals, and a part made from a file going
// through whole runs to a loopback model in both styles.
import assert from 'node:assert/strict'
import fs from 'node:fs'
import { createRequire } from 'node:module'
import os from 'node:os'
import path from 'node:path'
import { after, before, describe, test } from 'node:test'

import * as tn from '../index.mjs'
import { anthropicReply, mockForThisFile, openaiReply } from './mock.mjs'

const { attach, fromPath, fromBytes, fromBlob, fromDataUrl, fromUrl, text, ContentPartError, UnsupportedPartError } = tn

// An 8x8 PNG (82 bytes) and its base64, the bytes of upstream's examples/media/fixture.png.
const GOLDEN =
  'iVBORw0KGgoAAAANSUhEUgAAAAgAAAAICAIAAABLbSncAAAAGUlEQVR42mP4z8AARwyrkBAVJZClkAEVJQBm3VpRJDtqMQAAAABJRU5ErkJggg=='
const PNG = Buffer.from(GOLDEN, 'base64')

let dir
let fixture
before(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tn-parts-'))
  fixture = path.join(dir, 'fixture.png')
  fs.writeFileSync(fixture, PNG)
  fs.writeFileSync(path.join(dir, 'report.pdf'), PNG)
  fs.writeFileSync(path.join(dir, 'thing.xyz'), PNG)
})
after(() => fs.rmSync(dir, { recursive: true, force: true }))

/** The error `fn` throws or its Promise rejects with. */
async function failure(fn) {
  try {
    await fn()
  } catch (e) {
    return e
  }
  assert.fail('expected an error')
}

/** Asserts `fn` fails with a `ContentPartError` whose message matches `re`. */
async function refused(fn, re) {
  const e = await failure(fn)
  assert.ok(e instanceof ContentPartError, `expected a ContentPartError, got ${e}`)
  assert.equal(e.code, 'content_part')
  assert.match(e.message, re)
  return e
}

describe('part constructors', () => {
  test('text', () => {
    assert.deepEqual(text('hi'), { type: 'text', text: 'hi' })
    assert.deepEqual(text(''), { type: 'text', text: '' })
  })

  test('attach and fromPath read a file now: its bytes, never its path', async () => {
    const p = await attach(fixture)
    assert.deepEqual(p, { type: 'image', mimeType: 'image/png', data: GOLDEN, name: 'fixture.png' })
    assert.equal(JSON.stringify(p).includes(dir), false)
    assert.deepEqual(await fromPath(fixture), p)
    const pdf = await fromPath(path.join(dir, 'report.pdf'))
    assert.deepEqual([pdf.type, pdf.mimeType, pdf.name], ['file', 'application/pdf', 'report.pdf'])
    // The MIME type given wins, and the part type follows it.
    const forced = await fromPath(path.join(dir, 'thing.xyz'), { mimeType: 'audio/wav', name: 'a.wav' })
    assert.deepEqual(forced, { type: 'audio', mimeType: 'audio/wav', data: GOLDEN, name: 'a.wav' })
  })

  test('fromBytes and attach take bytes in every JS spelling, views by their own window', async () => {
    const want = { type: 'image', mimeType: 'image/png', data: GOLDEN }
    const ab = PNG.buffer.slice(PNG.byteOffset, PNG.byteOffset + PNG.byteLength)
    const pooled = Buffer.concat([Buffer.from([0xff, 0xff, 0xff]), PNG]).subarray(3)
    for (const bytes of [PNG, new Uint8Array(PNG), ab, new DataView(ab), pooled]) {
      assert.deepEqual(fromBytes(bytes, 'image/png'), want)
      assert.deepEqual(await attach(bytes, { mimeType: 'image/png' }), want)
    }
    assert.deepEqual(fromBytes(new Uint8Array([1, 2, 3]), 'application/pdf', { name: 'r.pdf' }),
      { type: 'file', mimeType: 'application/pdf', data: 'AQID', name: 'r.pdf' })
  })

  test('fromBlob and attach read a Blob now: its type, else its name', async () => {
    assert.deepEqual(await attach(new Blob([PNG], { type: 'image/png' })), { type: 'image', mimeType: 'image/png', data: GOLDEN })
    const typeless = new File([PNG], 'shot.png')
    assert.equal(typeless.type, '')
    assert.deepEqual(await fromBlob(typeless), { type: 'image', mimeType: 'image/png', data: GOLDEN, name: 'shot.png' })
    const doc = new File([PNG], 'report.pdf', { type: 'application/pdf' })
    assert.equal((await attach(doc)).name, 'report.pdf')
    assert.equal((await attach(doc, { name: 'override.pdf' })).name, 'override.pdf')
    assert.equal((await fromBlob(doc, { mimeType: 'image/gif' })).type, 'image')
  })

  test('fromDataUrl and fromUrl; attach tells them apart', async () => {
    const want = { type: 'image', mimeType: 'image/png', data: GOLDEN }
    assert.deepEqual(fromDataUrl(`data:image/png;base64,${GOLDEN}`), want)
    assert.deepEqual(await attach(`data:image/png;base64,${GOLDEN}`), want)
    assert.equal(fromDataUrl(`data:image/png;base64,${GOLDEN}`, { mimeType: 'image/gif' }).mimeType, 'image/gif')
    const url = { type: 'image', mimeType: 'image/png', url: 'https://example.test/shot.png' }
    assert.deepEqual(fromUrl('https://example.test/shot.png'), url)
    assert.deepEqual(await attach('https://example.test/shot.png'), url)
    assert.deepEqual(fromUrl('http://e.test/track', { mimeType: 'audio/mpeg' }), { type: 'audio', mimeType: 'audio/mpeg', url: 'http://e.test/track' })
  })

  test('an unknown extension is refused by name, before any file is opened', async () => {
    await refused(() => attach(path.join(dir, 'thing.xyz')), /unknown file extension "\.xyz"/)
    await refused(() => fromPath(path.join(dir, 'missing.xyz')), /"\.xyz"/)
    await refused(() => fromPath(path.join(dir, 'noext')), /file has no extension/)
    await refused(() => attach(new File([PNG], 'thing.xyz')), /"\.xyz"/)
    await refused(() => fromUrl('https://example.test/page'), /mime_type is required for a URL/)
  })

  test('bytes without a MIME type are refused, whatever their spelling', async () => {
    for (const bytes of [new Uint8Array([1]), new ArrayBuffer(1), Buffer.from([1]), new DataView(new ArrayBuffer(1))]) {
      await refused(() => attach(bytes), /mime_type is required when building a part from bytes/)
      await refused(() => fromBytes(bytes), /mime_type is required/)
    }
    await refused(() => attach(new Blob([PNG])), /mime_type is required for a file-like source with no name/)
  })

  test('a part carries data or a url, exactly one', async () => {
    await refused(() => tn.validatePart({ type: 'image', mimeType: 'image/png', data: GOLDEN, url: 'https://e/x.png' }), /both data and url/)
    await refused(() => tn.validatePart({ type: 'image', mimeType: 'image/png' }), /neither data nor url/)
    await refused(() => tn.validatePart({ type: 'image', data: GOLDEN }), /needs a mimeType/)
    const p = { type: 'image', mimeType: 'image/png', data: GOLDEN }
    assert.equal(tn.validatePart(p), p)
  })

  test('maxPartBytes counts decoded bytes, the limit itself included', async () => {
    await refused(() => fromBytes(new Uint8Array(2048), 'image/png', { maxPartBytes: 1024 }), /2048 decoded bytes, over the maxPartBytes limit of 1024/)
    assert.ok(fromBytes(new Uint8Array(1024), 'image/png', { maxPartBytes: 1024 }))
    await refused(() => attach(fixture, { maxPartBytes: 81 }), /82 decoded bytes, over the maxPartBytes limit of 81/)
    assert.equal((await attach(fixture, { maxPartBytes: 82 })).data, GOLDEN)
    await refused(() => fromDataUrl(`data:image/png;base64,${GOLDEN}`, { maxPartBytes: 10 }), /limit of 10/)
    await refused(() => attach(new Blob([PNG], { type: 'image/png' }), { maxPartBytes: 10 }), /limit of 10/)
    await refused(() => tn.validatePart({ type: 'image', mimeType: 'image/png', data: GOLDEN }, 81), /limit of 81/)
  })

  test('a string is what the constructor says it is', async () => {
    await refused(() => fromDataUrl(fixture), /not a data: URL/)
    await refused(() => fromDataUrl('data:image/png,abc'), /only base64 data: URLs are supported/)
    await refused(() => fromUrl('ftp://example.test/shot.png'), /only http:\/\/ and https:\/\/ URLs/)
    await refused(() => fromPath('https://example.test/shot.png'), /cannot read https:\/\/example\.test\/shot\.png/)
    await refused(() => attach(''), /needs a path, bytes, or a URL/)
  })

  test('a wrong argument is an InvalidArgumentError naming it', async () => {
    const bad = async (fn, re) => {
      const e = await failure(fn)
      assert.ok(e instanceof tn.InvalidArgumentError, `expected an InvalidArgumentError, got ${e}`)
      assert.match(e.message, re)
    }
    await bad(() => attach(42), /^attach: source must be a path, a URL, bytes or a Blob, got number$/)
    await bad(() => fromBytes('abc', 'image/png'), /^fromBytes: bytes must be a Uint8Array, an ArrayBuffer or an ArrayBufferView, got string$/)
    await bad(() => fromBlob({}), /^fromBlob: blob must be a Blob or a File, got object$/)
    await bad(() => fromPath(fixture, { mimetype: 'image/png' }), /unknown part option key "mimetype"/)
    await bad(() => attach(fixture, { maxPartBytes: -1 }), /"maxPartBytes" must be a whole number of at least 0/)
    await bad(() => fromUrl('https://e/x.png', 'image/png'), /^fromUrl: opts must be an object, got string$/)
    await bad(() => text(1), /^text: value must be a string, got number$/)
    await bad(() => tn.partTokens(1.5), /^partTokens: bytes must be a whole number of at least 0$/)
  })
})

describe('part helpers', () => {
  const img = { type: 'image', mimeType: 'image/png', data: GOLDEN }

  test('MEDIA_TYPES is the fixed table, frozen', () => {
    assert.deepEqual(Object.keys(tn.MEDIA_TYPES).sort(), ['gif', 'jpeg', 'jpg', 'mp3', 'pdf', 'png', 'wav', 'webp'])
    assert.deepEqual(tn.MEDIA_TYPES.jpg, { mimeType: 'image/jpeg', type: 'image' })
    assert.deepEqual(tn.MEDIA_TYPES.mp3, { mimeType: 'audio/mpeg', type: 'audio' })
    assert.ok(Object.isFrozen(tn.MEDIA_TYPES) && Object.isFrozen(tn.MEDIA_TYPES.png))
    assert.deepEqual(tn.mediaTypeFor('/a/B.PDF'), { mimeType: 'application/pdf', type: 'file' })
    assert.equal(tn.mediaTypeFor('notes.txt'), undefined)
    assert.deepEqual([tn.extensionOf('/a/b.Tar.GZ'), tn.extensionOf('/a/.png'), tn.extensionOf('noext')], ['gz', '', ''])
    assert.deepEqual(['image/svg+xml', 'audio/ogg', 'text/csv'].map(tn.partTypeForMime), ['image', 'audio', 'file'])
  })

  test('encodePart gives each style its block, undefined where it has none', () => {
    assert.deepEqual(tn.encodePart(img, 'openai'), { type: 'image_url', image_url: { url: `data:image/png;base64,${GOLDEN}` } })
    assert.deepEqual(tn.encodePart(img, 'anthropic'), { type: 'image', source: { type: 'base64', media_type: 'image/png', data: GOLDEN } })
    const pdf = { type: 'file', mimeType: 'application/pdf', data: 'AQID', name: 'r.pdf' }
    assert.deepEqual(tn.encodePart(pdf, 'openai'), { type: 'file', file: { filename: 'r.pdf', file_data: 'data:application/pdf;base64,AQID' } })
    const mp3 = { type: 'audio', mimeType: 'audio/mpeg', data: 'AQID' }
    assert.deepEqual(tn.encodePart(mp3, 'openai'), { type: 'input_audio', input_audio: { data: 'AQID', format: 'mp3' } })
    assert.equal(tn.encodePart(mp3, 'anthropic'), undefined)
    assert.equal(tn.encodePart({ type: 'file', mimeType: 'application/pdf', url: 'https://e/r.pdf' }, 'openai'), undefined)
    assert.throws(() => tn.encodePart(img, 'gemini'), (e) => e.code === 'invalid_argument' && /style must be "openai" or "anthropic"/.test(e.message))
  })

  test('what may be said of a part, never its data', () => {
    assert.deepEqual(tn.describePart(img), { type: 'image', mimeType: 'image/png', bytes: 82 })
    assert.equal(tn.summarizePart(img), 'image (image/png, 82 bytes)')
    assert.deepEqual(tn.describePart(tn.text('héllo')), { type: 'text', bytes: 6 })
    assert.equal(tn.summarizePart(tn.text('héllo')), 'héllo')
    assert.equal(tn.unsupportedPlaceholder({ type: 'audio', mimeType: 'audio/mpeg', data: 'AQID' }), '[unsupported audio part (audio/mpeg, 3 bytes)]')
    assert.equal(tn.summarizePart({ type: 'image', mimeType: 'image/png', url: 'https://e/x.png' }), 'image (image/png, 0 bytes)')
    assert.deepEqual([tn.partBytes(img), tn.base64Bytes(GOLDEN), tn.base64Bytes('')], [82, 82, 0])
    assert.deepEqual([tn.partTokens(0), tn.partTokens(750 * 100 + 749), tn.partTokens(750 * 101)], [85, 100, 101])
    assert.deepEqual([tn.PART_BYTES_PER_TOKEN, tn.MIN_PART_TOKENS], [750, 85])
    assert.equal(tn.isContentPart(img), true)
    assert.equal(tn.isContentPart({ type: 'text', text: '' }), true)
    for (const v of [{ type: 'image_url', image_url: { url: 'x' } }, { type: 'image' }, null, 'text', 1n]) {
      assert.equal(tn.isContentPart(v), false, String(v))
    }
  })

  test('UnsupportedPartError is a ContentPartError, as in the JS port, with its own code', () => {
    const e = new UnsupportedPartError('no block')
    assert.ok(e instanceof ContentPartError && e instanceof tn.ToolnexusError)
    assert.equal(e.code, 'unsupported_part')
  })

  test('CommonJS exports the same functions', () => {
    const cjs = createRequire(import.meta.url)('../index.js')
    const names = ['text', 'attach', 'fromPath', 'fromBytes', 'fromBlob', 'fromDataUrl', 'fromUrl', 'MEDIA_TYPES', 'encodePart',
      'validatePart', 'isContentPart', 'describePart', 'summarizePart', 'unsupportedPlaceholder', 'partTokens', 'partBytes',
      'base64Bytes', 'extensionOf', 'mediaTypeFor', 'partTypeForMime', 'PART_BYTES_PER_TOKEN', 'MIN_PART_TOKENS']
    for (const name of names) {
      assert.notEqual(cjs[name], undefined, name)
      assert.equal(cjs[name], tn[name], name)
    }
  })
})

describe('a part made from a file, through whole runs', () => {
  const mock = mockForThisFile()
  const client = (style) => tn.createClient({ baseUrl: mock.url(style === 'openai' ? '/v1' : ''), style, model: 'm', apiKey: 'k', retryBaseMs: 1 })

  async function shotToolkit() {
    return tn.createToolkit({
      builtins: false,
      extraTools: [tn.defineTool({ name: 'shot', description: 'A screenshot.', inputSchema: { type: 'object', properties: {} },
        run: async () => ({ output: 'shot output', isError: false, parts: [await fromPath(fixture)] }) })],
    })
  }

  test('openai: the prompt\'s image as image_url, the tool\'s in one user message after the tool message', async () => {
    mock.script([openaiReply('', [['c1', 'shot', '{}']]), openaiReply('a red square')])
    const tk = await shotToolkit()
    const r = await client('openai').run([text('look'), await fromPath(fixture)], { toolkit: tk })
    assert.equal(r.text, 'a red square')
    const first = mock.seen[0].body.messages.at(-1)
    assert.deepEqual(first, { role: 'user', content: [
      { type: 'text', text: 'look' },
      { type: 'image_url', image_url: { url: `data:image/png;base64,${GOLDEN}` } }] })
    const wire = mock.seen[1].body.messages
    assert.deepEqual(wire.at(-2), { role: 'tool', tool_call_id: 'c1', content: 'shot output' })
    assert.deepEqual(wire.at(-1), { role: 'user', content: [
      { type: 'text', text: 'Output of tool shot (c1):' },
      { type: 'image_url', image_url: { url: `data:image/png;base64,${GOLDEN}` } }] })
    // The transcript keeps the canonical parts; the relocated message is the wire's only.
    assert.deepEqual(r.messages[0].content[1], { type: 'image', mimeType: 'image/png', data: GOLDEN, name: 'fixture.png' })
    assert.equal(r.messages.filter((m) => m.role === 'user').length, 1)
    await tk.close()
  })

  test('anthropic: the prompt\'s image as an image block, the tool\'s inside its tool_result', async () => {
    mock.script([anthropicReply('', [['u1', 'shot', {}]]), anthropicReply('a red square')])
    const tk = await shotToolkit()
    const r = await client('anthropic').run([text('look'), await fromPath(fixture)], { toolkit: tk })
    assert.equal(r.text, 'a red square')
    const block = { type: 'image', source: { type: 'base64', media_type: 'image/png', data: GOLDEN } }
    assert.deepEqual(mock.seen[0].body.messages.at(-1), { role: 'user', content: [{ type: 'text', text: 'look' }, block] })
    const result = mock.seen[1].body.messages.at(-1)
    assert.equal(result.role, 'user')
    assert.deepEqual(result.content, [{ type: 'tool_result', tool_use_id: 'u1',
      content: [{ type: 'text', text: 'shot output' }, block], is_error: false }])
    await tk.close()
  })

  test('a prompt part over the client\'s maxPartBytes fails before any request', async () => {
    mock.script([openaiReply('never')])
    const c = tn.createClient({ baseUrl: mock.url('/v1'), style: 'openai', model: 'm', apiKey: 'k', maxPartBytes: 10 })
    await refused(async () => c.run([await attach(fixture)]), /82 decoded bytes, over the maxPartBytes limit of 10/)
    assert.equal(mock.seen.length, 0)
  })
})
