'use strict'
// CommonJS entry: the addon (built from source by `npm run build`) plus the error classes.
const native = require('./toolnexus.node')
const errors = require('./errors.js')

native.__registerErrorClasses(errors)

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
  if (options && options.id !== undefined && options.id !== null) {
    throw new errors.InvalidArgumentError('stream: options.id needs conversation memory, which this build does not have yet')
  }
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

module.exports = {
  createClient: native.createClient,
  createInProcessClient: native.createInProcessClient,
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
