dts-header.d.ts

/** A configured model client. Cheap to share; runs may overlap. */
export declare class Client {
  /** Runs `prompt` (with `toolkit`, continuing `history`) through the tool-calling loop. */
  run(prompt: string, options?: RunOptions | undefined | null): Promise<RunResult>
  /**
   * Resumes a run that halted with status `pending`: `answer.id` must echo `pending.id`;
   * `history` is the halted result's `messages`. No new user turn is added.
   */
  runWithAnswer(toolkit: Toolkit | null | undefined, history: any[], pending: Request, answer: Answer, options?: ResumeOptions): Promise<RunResult>
}

/** A tool: its declaration and, unless it is a relay tool, its `run`. */
export declare class Tool {
  /** The (sanitised) name. */
  get name(): string
  get description(): string
  /** The JSON Schema of the arguments. */
  get inputSchema(): Record<string, unknown>
  /** `native`, `relay`, ... (the JS port's ToolSource strings). */
  get source(): string
  /** Runs the tool outside a run (a relay tool answers with an error result). */
  execute(args?: Record<string, unknown>, ctx?: ExecuteContext): Promise<ToolResult>
}

/** An ordered set of uniquely named tools, with provider schema adapters. */
export declare class Toolkit {
  /** The tools, in registration order. */
  tools(): Array<Tool>
  /** The tool called `name`. */
  get(name: string): Tool | undefined
  /**
   * Adds tools (first name wins; a relay tool may not take a built-in tool's name).
   * Variadic as in the JS port (`index.js` flattens the arguments into one array).
   */
  register(...tools: Array<Tool | Array<Tool>>): this
  /** Runs the tool `name` (an unknown tool is an error result naming it). */
  execute(name: string, args?: Record<string, unknown>, ctx?: ExecuteContext): Promise<ToolResult>
  /** The OpenAI declarations: `{type: "function", function: {name, description, parameters}}`. */
  toOpenAI(): any[]
  /** The Anthropic declarations: `{name, description, input_schema}`. */
  toAnthropic(): any[]
  /** The Gemini declarations: `[{functionDeclarations: [...]}]`. */
  toGemini(): any[]
  /** Releases the toolkit's resources (it holds no connections today). */
  close(): Promise<void>
}

/** Passed to `hooks.afterLLM`. */
export interface AfterLlmEv {
  response: any
  model: string
  turn: number
}

/** Passed to `hooks.afterTool`. */
export interface AfterToolEv {
  name: string
  args: Record<string, unknown>
  result: ToolResult
  id: string
  turn: number
}

/** The resolution of a Request (wire keys). */
export interface Answer {
  id: string
  ok: boolean
  data?: Record<string, unknown>
  /** Why `ok` is false: `declined`, `cancelled` or `expired`. */
  reason?: string
}

/**
 * The Answer that refuses a request: `{id, ok: false, reason}`. `reason` is `declined`
 * (default), `cancelled` or `expired`; anything else is an `InvalidArgumentError`.
 */
export declare function answerDeclined(id: string, reason?: 'declined' | 'cancelled' | 'expired'): Answer

/** The Answer that supplies a reply: `{id, ok: true, data: {output}}`. */
export declare function answerOutput(id: string, output: string): Answer

/** An `authorization` suspension at a login `url`. */
export declare function authRequired(url: string, prompt?: string | undefined | null): ToolResult

/** Passed to `hooks.beforeLLM`. */
export interface BeforeLlmEv {
  messages: any[]
  tools: any[]
  model: string
  turn: number
}

/** Passed to `hooks.beforeTool`. */
export interface BeforeToolEv {
  name: string
  args: Record<string, unknown>
  /** The provider's tool-call id. */
  id: string
  turn: number
}

/** `createClient` options (the JS port's names; defaults as upstream). */
export interface ClientOptions {
  /** The provider base URL (`https://api.openai.com/v1`, `https://api.anthropic.com`, ...). */
  baseUrl: string
  /** The wire format. */
  style: 'openai' | 'anthropic'
  /** The model id, sent verbatim every turn. */
  model: string
  /**
   * The API key; absent, read at run time from `OPENROUTER_API_KEY`, then the style's own
   * variable, then `OPENAI_API_KEY` / `ANTHROPIC_API_KEY`.
   */
  apiKey?: string
  /** Extra request headers (they win over the engine's own). */
  headers?: Record<string, string>
  systemPrompt?: string
  /** Model round trips per run (default 10). */
  maxTurns?: number
  /** Lifecycle hooks; each may return its value or a Promise. */
  hooks?: Hooks
  /** Retries of a failed model call (default 2). */
  retries?: number
  /** Backoff base in ms: `base * 2^attempt` plus up to 100 ms jitter (default 500). */
  retryBaseMs?: number
  /** Statuses retried on top of 429/500/502/503/504/529. */
  retryableStatuses?: Array<number>
  /** Whole-run deadline in ms. */
  timeoutMs?: number
  /** Anthropic `max_tokens` (default 4096). */
  maxTokens?: number
  /**
   * Extra top-level body keys merged into every request (`messages`, `tools` and `stream`
   * are refused).
   */
  requestParams?: Record<string, unknown>
  /**
   * Resolves a suspension inline (the tool re-runs once with `ctx.answer`). Absent, a
   * suspension halts the run with status `pending`. `null`/`undefined` is a decline.
   */
  waitFor?: (request: Request) => Answer | null | undefined | Promise<Answer | null | undefined>
  /** Decides each failed model call within `retries`; `undefined` keeps the default. */
  onError?: (info: ErrorInfoEvent) => 'retry' | 'fail' | undefined | Promise<'retry' | 'fail' | undefined>
  /**
   * Rewrites each request body last, just before it is sent (after `requestParams`);
   * `undefined` sends it unchanged.
   */
  bodyTransform?: (body: Record<string, any>) => Record<string, any> | undefined | void | Promise<Record<string, any> | undefined | void>
  /**
   * A fetch-compatible function used for the LLM requests (default: the engine's own
   * pooled HTTP/1.1 client).
   */
  fetch?: (url: string, init: { method: string; headers: Record<string, string>; body: string; signal: AbortSignal }) => Response | Promise<Response>
}

/** Builds a client. Bad options throw an `InvalidArgumentError`. */
export declare function createClient(options: ClientOptions): Client

/** Builds a toolkit (async, as in the JS port). */
export declare function createToolkit(opts?: ToolkitOptions | undefined | null): Promise<Toolkit>

/** Wraps a JS function as a tool. */
export declare function defineTool(opts: DefineToolOptions): Tool

/** `defineTool` options. */
export interface DefineToolOptions {
  name: string
  description?: string
  inputSchema?: Record<string, unknown>
  /** `native` (default), `custom`, `http`, `mcp`, `skill`, `builtin` or `a2a`. */
  source?: string
  /**
   * Returns a string, a `{output, isError, metadata?}` ToolResult, any JSON value (sent as
   * its JSON text), or a Promise of one of those. A throw becomes an error result.
   */
  run: (args: Record<string, any>, ctx: ToolRunContext) => unknown | Promise<unknown>
}

/** One failed model call, as `onError` sees it. */
export interface ErrorInfoEvent {
  /** The HTTP status, when the provider answered. */
  status?: number
  /** The network error's message, when it did not. */
  error?: string
  /** Zero-based attempt index. */
  attempt: number
  /** Whether the default policy would retry it. */
  retryable: boolean
}

/** What `execute` may tell the tool. */
export interface ExecuteContext {
  /** The resolution of the tool's own earlier suspension. */
  answer?: Answer
  /** The id the tool sees as `ctx.callId`. */
  callId?: string
}

/**
 * A suspension: an error ToolResult whose `metadata.pending` is the Request; its output is
 * the prompt, followed by a newline and the url when there is one.
 */
export declare function pending(request: PendingRequest): ToolResult

/** The suspension a result carries, if `metadata.pending` is a well-formed Request. */
export declare function pendingOf(result: ToolResult): Request | undefined

/** A suspension to raise: a Request whose `id` is generated when absent. */
export interface PendingRequest {
  id?: string
  kind: string
  prompt: string
  url?: string
  data?: Record<string, unknown>
  expiresAt?: string
}

/**
 * A declaration-only tool: the model may call it, the run suspends with a `tool_call`
 * Request carrying the calls, and the host supplies the results in its Answer.
 */
export declare function relayTool(opts: RelayToolOptions): Tool

/** `relayTool` options. */
export interface RelayToolOptions {
  name: string
  description?: string
  inputSchema?: Record<string, unknown>
}

/** What a suspended tool is waiting for (wire keys, shared by every port). */
export interface Request {
  id: string
  /** Open vocabulary: `authorization`, `approval`, `input`, `tool_call`, ... */
  kind: string
  prompt: string
  url?: string
  data?: Record<string, unknown>
  /** RFC 3339 time after which the request is stale. */
  expiresAt?: string
}

/** `runWithAnswer` options. */
export interface ResumeOptions {
  signal?: AbortSignal
}

/** `run` options. */
export interface RunOptions {
  /** The tools the model may call. */
  toolkit?: Toolkit
  /** A prior transcript to continue (provider message shape). */
  history?: any[]
  /**
   * Aborts the run (in-flight request included); the Promise rejects with an `AbortError`
   * whose `cause` is the signal's reason.
   */
  signal?: AbortSignal
}

/** The outcome of a run. */
export interface RunResult {
  /** The final assistant text (the pending prompt when the run halted). */
  text: string
  /**
   * The whole transcript, in the provider's own message shape. Built on first access (then
   * a plain data property): a caller that reads only `text` does not pay for the copy.
   */
  messages: any[]
  /** Every tool call made, in call order. */
  toolCalls: Array<ToolCallRecord>
  toolCallCount: number
  /** Model round trips made. */
  turns: number
  usage: Usage
  /** The model of the last turn. */
  model: string
  status: 'done' | 'pending' | 'incomplete'
  /** Which limit stopped the run (`maxTurns`), only when `status` is `incomplete`. */
  limit?: string
  /** The unresolved suspension, only when `status` is `pending`. */
  pending?: Request
}

/** One tool call made during a run, with its final result. */
export interface ToolCallRecord {
  name: string
  args: Record<string, unknown>
  output: string
  isError: boolean
  metadata?: Record<string, unknown>
}

/** `createToolkit` options. */
export interface ToolkitOptions {
  /**
   * The JS port's built-in toolset switch (`false`, `{disabled: true}`, `{enabled: false}`
   * turn it off). The engine ships no built-in tools yet, so a toolkit holds only the
   * tools given to it either way.
   */
  builtins?: boolean | { disabled?: boolean; enabled?: boolean; tools?: Record<string, boolean> }
  /** The tools, from `defineTool` or `relayTool`. */
  extraTools?: Array<Tool>
}

/** What a tool hands back to the model. */
export interface ToolResult {
  output: string
  isError: boolean
  metadata?: Record<string, unknown>
}

/** The second argument of a tool's `run`. */
export interface ToolRunContext {
  /**
   * The provider's tool-call id: the same on the first run, the re-run after an answer and
   * a durable resume (an idempotency key for tools with side effects).
   */
  callId: string
  /** Present only when the tool re-runs to consume the answer to its own suspension. */
  answer?: Answer
  /** Milliseconds left before the run's deadline, when it has one. */
  timeout?: number
}

/** Token usage summed across the turns of a run. */
export interface Usage {
  promptTokens: number
  completionTokens: number
  totalTokens: number
}

/** The engine version. */
export declare function version(): string
