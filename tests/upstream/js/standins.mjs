// Stand-ins for the names upstream's JS package exports and ours lacks (docs/upstream-suites.md).
//
// An ES module that imports a name its target does not export fails to load whole, so one
// missing name would take every test of a file down. The shim (prepare.mjs) exports a stand-in
// for each such name instead. A stand-in can make a test fail, never pass:
//
// - only the import gets it: the shim is the one place it is bound;
// - using it (calling or constructing it, reading, writing or probing a property, iterating,
//   awaiting, converting it) throws MissingFeature, naming the name and its feature area;
//   while a test file is being imported (before its first test starts), a use gives a
//   poisoned value instead, so a file that builds something at its top level still loads,
//   and any use of that value once tests run throws;
// - every use is also recorded, and preload.mjs fails the test it happened in even when the
//   test caught the error (`assert.throws(() => missingThing())` must not pass).
//
// Child processes a test starts (an MCP server script importing the shim) have no preload:
// there a use always throws.

const USED = Symbol.for('toolnexus.upstream.standins.used')
const IMPORTING = Symbol.for('toolnexus.upstream.standins.importing')
globalThis[USED] ??= []

export class MissingFeature extends Error {
  constructor(message) {
    super(message)
    this.name = 'MissingFeature'
  }
}

export function standInUses() {
  return globalThis[USED]
}

export function setImporting(on) {
  globalThis[IMPORTING] = on
}

function use(label, area) {
  const error = new MissingFeature(`${label} is not in this binding (${area}); stand-in installed by tests/upstream/js`)
  globalThis[USED].push(error.message)
  if (globalThis[IMPORTING]) return make(label, area)
  throw error
}

function make(label, area) {
  const fail = () => use(label, area)
  return new Proxy(function standIn() {}, {
    apply: fail,
    construct: fail,
    get: fail,
    set: fail,
    has: fail,
    deleteProperty: fail,
    defineProperty: fail,
    ownKeys: fail,
    getOwnPropertyDescriptor: fail,
    getPrototypeOf: fail,
    setPrototypeOf: fail,
    isExtensible: fail,
    preventExtensions: fail,
  })
}

export function standIn(name, area) {
  return make(`toolnexus.${name}`, area)
}
