// ESM entry: the same module as index.js.
import { createRequire } from 'node:module'

const tn = createRequire(import.meta.url)('./index.js')

export const {
  createClient,
  createToolkit,
  defineTool,
  relayTool,
  pending,
  authRequired,
  pendingOf,
  answerOutput,
  answerDeclined,
  sanitize,
  toOpenAI,
  toAnthropic,
  toGemini,
  version,
  Client,
  Toolkit,
  Tool,
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
} = tn
export default tn
