'use strict'
// The errors toolnexus throws: one class per engine error kind, each with the kind's stable
// `code`. The addon picks the class; a host callback's own thrown error is passed through
// unchanged and is none of these.

class ToolnexusError extends Error {
  constructor(message, options) {
    super(message, options)
    Object.defineProperty(this, 'name', { value: new.target.name, writable: true, configurable: true })
    this.code = new.target.code
  }
}
ToolnexusError.code = 'internal'

const define = (name, code, base = ToolnexusError) => {
  const cls = { [name]: class extends base {} }[name]
  cls.code = code
  return cls
}

/** A value the engine cannot use (a bad option, a malformed Answer, ...). */
const InvalidArgumentError = define('InvalidArgumentError', 'invalid_argument')
/** The client cannot run (for example no API key anywhere). */
const ConfigError = define('ConfigError', 'config')
/** The provider answered with a non-success status: `status`, `body` (redacted), `retryAfter`. */
const HttpError = define('HttpError', 'http')
/** No HTTP answer came (connect, reset, per-request timeout). */
const NetworkError = define('NetworkError', 'network')
/** The run's `timeoutMs` passed. */
const TimeoutError = define('TimeoutError', 'timeout')
/** The run was aborted through its `signal`; `cause` is the signal's reason. */
const AbortError = define('AbortError', 'cancelled')
/** The provider answered 2xx with a body that cannot be read. */
const ProtocolError = define('ProtocolError', 'protocol')
/** An Answer's id does not echo the pending Request's id. */
const AnswerMismatchError = define('AnswerMismatchError', 'answer_mismatch')
/** A host callback failed without a JS error of its own to pass through. */
const HostError = define('HostError', 'host')
/** A bug in the engine. */
const InternalError = define('InternalError', 'internal')
/** A blocking entry point was called from inside one of the engine's callbacks. */
const ReentrantError = define('ReentrantError', 'reentrant')
/** A conversation is in use by another run, or its pending request was already answered. */
const ConflictError = define('ConflictError', 'conflict')
/** The conversation store failed (I/O, a database that cannot be read). */
const StoreError = define('StoreError', 'store')
/** A content part is malformed, or over `maxPartBytes`. */
const ContentPartError = define('ContentPartError', 'content_part')
/** The provider's style has no block for a content part (a `ContentPartError` too, as the JS
 * port has one class for both). */
const UnsupportedPartError = define('UnsupportedPartError', 'unsupported_part', ContentPartError)

module.exports = {
  ToolnexusError,
  InvalidArgumentError,
  ConfigError,
  HttpError,
  NetworkError,
  TimeoutError,
  AbortError,
  ProtocolError,
  AnswerMismatchError,
  HostError,
  InternalError,
  ReentrantError,
  ConflictError,
  StoreError,
  ContentPartError,
  UnsupportedPartError,
}
