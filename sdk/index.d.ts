/** Types of uws-agent-platform/sdk. */
export type Json = null | boolean | number | string | Json[] | { [k: string]: Json }

export interface Logger {
  debug(msg: string, data?: Record<string, unknown>): void
  info(msg: string, data?: Record<string, unknown>): void
  warn(msg: string, data?: Record<string, unknown>): void
  error(msg: string, data?: Record<string, unknown>): void
}

export interface Kv {
  get(key: string): Promise<Json | undefined>
  put(key: string, value: Json): Promise<void>
  delete(key: string): Promise<boolean>
  list(prefix?: string): Promise<string[]>
}

export interface FetchResponse {
  status: number
  headers: Record<string, string>
  text: string
  json(): unknown
}

/** What a call receives: only the capabilities the operator granted are present. */
export interface Ctx {
  log: Logger
  signal: AbortSignal
  kv?: Kv
  fetch?: (
    url: string,
    init?: { method?: string; headers?: Record<string, string>; body?: string }
  ) => Promise<FetchResponse>
  env?: Record<string, string>
  /** Streams a partial result (long-running tools, agent turns). */
  progress?: (partial: Json) => void
}

/** A message of a conversation as the model sees it. */
export type AgentMessage =
  | { role: 'user'; content: string }
  | { role: 'assistant'; content: string; toolCalls?: AgentToolCall[] }
  | { role: 'tool'; toolCallId: string; name?: string; content: string }
export interface AgentToolCall {
  id: string
  name: string
  arguments: Record<string, Json>
}
export interface AgentUsage {
  input: number
  output: number
  cachedInput: number
  total: number
  model: string
}
/** What an agent's own `run` receives as its turn: the admitted message and the final system prompt. */
export interface AgentTurn {
  message: string
  systemPrompt: string
  history: AgentMessage[]
}
/** A step of an agent's own run, shown to clients as an `agent-step` event and kept in interactions. */
export interface AgentStep {
  name: string
  description?: string
  data?: Json
}
/** The ctx of an agent's own `run(turn, ctx)`: a call's ctx plus the turn's model and tools. */
export interface AgentRunCtx extends Omit<Ctx, 'progress'> {
  /**
   * One call of the turn's model (the runtime the default loop would use). Without `messages` the
   * model sees the turn's history and message; `systemPrompt` replaces the agent's (the governance
   * preamble still leads it); `tools` names the agent's tools to offer. The tool calls the model
   * asks for come back unexecuted: run them with `callTool`. Rejects on a runtime error or when
   * the turn ends (cancelled) while the call is in flight.
   */
  model(options?: {
    messages?: AgentMessage[]
    systemPrompt?: string
    tools?: string[]
  }): Promise<{ text: string; toolCalls: AgentToolCall[]; usage: AgentUsage | null }>
  /**
   * Runs one of the agent's tools as the default loop would (the governance tool-call gate, then the
   * tool's own sandbox). A denied, invalid or failing call resolves with `ok: false` and the reason.
   */
  callTool(name: string, args: Record<string, Json>): Promise<{ ok: boolean; text: string }>
  /** Streams part of the answer (`{ text }`) or reports a step (`{ step }`). */
  progress: (partial: { text?: string; step?: AgentStep }) => void
  /** Present when the agent declares a `fleet`: dispatches to the agents of that fleet (docs/fleet.md). */
  fleet?: FleetCtx
}

/** One agent of a coordinator's fleet; a bare name takes every default. */
export interface AgentRef {
  name: string
  /** Advisory; shown by the admin fleet view. */
  version?: string
  /** Default true. */
  required?: boolean
  /** Default 1; shown, not used to pick. */
  weight?: number
  /** Retries after a failure, with exponential backoff from 100 ms; default 0, at most 10. */
  maxRetries?: number
  /** Default false: 5 consecutive failures open the circuit for 30 s. */
  circuitBreaker?: boolean
  /** Per call; 0 (the default) means 120 000. */
  timeoutMs?: number
  /** The budget of refineUntil; 0 (the default) means unbounded (8 tries). */
  maxTurns?: number
}
/** A call of a fleet agent; `skill` defaults to `run`. */
export interface AgentCall {
  agent: string
  skill?: string
  args?: Record<string, Json>
}
/** How a call went; on failure `text` carries the error. */
export interface AgentResult {
  agentName: string
  skillId: string
  text: string
  metadata: Record<string, Json>
  durationMs: number
  success: boolean
}
export interface Evaluation {
  score: number
  passed: boolean
  reason?: string
}
export type Evaluator =
  | ((result: AgentResult) => Evaluation | Promise<Evaluation>)
  | { name: string; evaluate(result: AgentResult): Evaluation | Promise<Evaluation> }
export type FleetRoute =
  | { when(result: AgentResult): boolean | Promise<boolean>; call: AgentCall | ((result: AgentResult) => AgentCall) }
  | { otherwise: AgentCall | ((result: AgentResult) => AgentCall) }
/** `ctx.fleet`: every call is journaled, governed and counted under the turn's coordination. */
export interface FleetCtx {
  call(agent: string, skill?: string, args?: Record<string, Json>): Promise<AgentResult>
  /** At once, keyed by agent name (`name#2` for a repeat); the first failure cancels the siblings. */
  parallel(calls: AgentCall[]): Promise<Record<string, AgentResult>>
  /** In order; from the second step args gain `_previous_result`; stops at the first failure. */
  pipeline(calls: AgentCall[]): Promise<AgentResult[]>
  /** At once; the majority answer (trimmed, lower-cased) wins, a tie goes to the earliest agent. */
  vote(calls: AgentCall[]): Promise<AgentResult>
  /** Calls `input`, then the first route whose `when` holds (else `otherwise`) with `_previous_result`. */
  route(input: AgentCall, routes: FleetRoute[]): Promise<AgentResult>
  /** Calls until every evaluator passes (feedback in `_refine_feedback`), at most `maxTurns` (8) tries. */
  refineUntil(
    call: AgentCall,
    evaluators: Evaluator | Evaluator[],
    options?: { maxTurns?: number }
  ): Promise<AgentResult>
}

export interface JsonSchema {
  [k: string]: unknown
}

// `any` by default: the input schema checks a tool's args at run time, and an unannotated
// `run({ city })` must compile; a plugin wanting a checked type passes A
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export interface ToolDef<A = any> {
  name: string
  title?: string
  description?: string
  iconUrl?: string
  input?: JsonSchema
  longRunning?: boolean
  /** With longRunning: 'required' refuses MCP clients without the tasks extension; default 'optional'. */
  taskSupport?: 'optional' | 'required'
  uiResource?: string
  run(args: A, ctx: Ctx): unknown
}
export interface ResourceDef {
  uri: string
  name?: string
  description?: string
  mimeType?: string
  read(uri: string, ctx: Ctx): unknown
}
export interface PromptArgument {
  name: string
  description?: string
  required?: boolean
}
export interface McpMessageT {
  role: 'system' | 'user' | 'assistant'
  content: { type: 'text'; text: string }
}
export interface PromptDef {
  name: string
  description?: string
  arguments?: PromptArgument[]
  get(args: Record<string, string>, ctx: Ctx): McpMessageT[] | Promise<McpMessageT[]>
}

export type Breach = 'POLITE_REDIRECT' | 'DENY' | 'CUSTOM_MESSAGE'
export type Tier = 'RULE_BASED' | 'EMBEDDING_SIMILARITY' | 'SEMANTIC_INTENT' | 'LLM_CLASSIFIER'
export interface AgentScope {
  purpose?: string
  forbiddenTopics?: string[]
  onBreach?: Breach
  redirectMessage?: string
  tier?: Tier
  similarityThreshold?: number
  unrestricted?: boolean
  justification?: string
  postResponseCheck?: boolean
}
export interface AgentDef {
  name: string
  version?: string
  description?: string
  endpoint?: string
  headless?: boolean
  /** The single reply to a message goes to every connection of the agent's room; the model runs once. */
  broadcastReply?: boolean
  /** A runtime name (that runtime answers this agent's turns) or a model name for the active runtime. */
  model?: string
  /**
   * The agent's own turn handler, run in the plugin's sandbox instead of the default agent loop
   * (governance and the scope preamble still apply); returns the answer, a string or `{ text }`.
   * `ctx.progress({ text })` streams part of the answer at once; the returned text follows it.
   */
  run?: (turn: AgentTurn, ctx: AgentRunCtx) => unknown
  scope?: AgentScope
  systemPrompt?: string
  tools?: ReturnType<typeof tool>[]
  /** Makes the agent a coordinator: the agents its run() may dispatch to with `ctx.fleet`. Needs `run`. */
  fleet?: Array<string | AgentRef>
}

export interface AiRequest {
  message: string
  systemPrompt?: string
  model?: string | null
  userId?: string | null
  sessionId?: string | null
  agentId?: string | null
  conversationId?: string | null
  metadata: Record<string, unknown>
}
export interface PolicyContext {
  phase: 'PRE_ADMISSION' | 'POST_RESPONSE'
  request: AiRequest
  accumulatedResponse: string
}
export type Decision =
  | { decision: 'admit' }
  | { decision: 'transform'; request: AiRequest; reason?: string }
  | { decision: 'deny'; reason: string }
  | { decision: 'prefer'; preferred: string; reason: string }
export interface PolicyTypeDef {
  type: string
  description?: string
  evaluate(context: PolicyContext, config: Record<string, unknown>): Decision | Promise<Decision>
}

export interface ScopeVerdict {
  outcome: 'IN_SCOPE' | 'OUT_OF_SCOPE' | 'ERROR'
  reason: string
  similarity?: number
}
export interface ClassifierDef {
  name: string
  description?: string
  classify(request: AiRequest, scope: AgentScope): ScopeVerdict | Promise<ScopeVerdict>
}
export interface EmbedderDef {
  name: string
  description?: string
  embed(texts: string[]): number[][] | Promise<number[][]>
}

export type RuntimeEvent =
  | { type: 'text'; delta: string }
  | { type: 'tool-call'; call: { id: string; name: string; arguments: Record<string, unknown> } }
  | { type: 'usage'; usage: { input: number; output: number; cachedInput?: number; total?: number; model?: string } }
  | { type: 'done'; finishReason?: 'stop' | 'tool-calls' | 'length' | 'cancelled' }
  | { type: 'error'; message: string }
export interface RuntimeRequest {
  systemPrompt?: string
  history?: Array<{
    role: 'user' | 'assistant' | 'tool'
    content: string
    toolCalls?: Array<{ id: string; name: string; arguments: Record<string, unknown> }>
    toolCallId?: string
    name?: string
  }>
  message?: string
  tools?: Array<{ name: string; description?: string; inputSchema?: Record<string, unknown> }>
  model?: string
}
export interface RuntimeDef {
  name: string
  description?: string
  /** Higher wins when `platform.ai.runtime` is `auto`. */
  priority?: number
  capabilities?: Array<'streaming' | 'tool-calling' | 'cancellation' | 'usage' | 'system-prompt'>
  models?: string[]
  /**
   * Events of one request. Yielded events reach the host as they are yielded (it pulls, so the
   * generator waits at `yield` while the client is slow); cancelling fires `ctx.signal` and calls
   * the generator's `return()`. A returned array arrives whole.
   */
  stream(
    request: RuntimeRequest,
    ctx: Ctx
  ): RuntimeEvent[] | Promise<RuntimeEvent[]> | Iterable<RuntimeEvent> | AsyncIterable<RuntimeEvent>
}

export interface PluginDef {
  tools?: ToolDef[]
  resources?: ResourceDef[]
  prompts?: PromptDef[]
  agents?: AgentDef[]
  policyTypes?: PolicyTypeDef[]
  classifiers?: ClassifierDef[]
  embedders?: EmbedderDef[]
  runtimes?: RuntimeDef[]
}

export declare function definePlugin(def: PluginDef): Readonly<Required<PluginDef>>
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the default of ToolDef's A, for the same reason
export declare function tool<A = any>(
  def: ToolDef<A>
): Readonly<Required<Omit<ToolDef<A>, 'title' | 'iconUrl' | 'uiResource'>>> & ToolDef<A>
export declare function resource(def: ResourceDef): Readonly<ResourceDef>
export declare function prompt(def: PromptDef): Readonly<PromptDef>
export declare function agent(def: AgentDef): Readonly<AgentDef>
export declare function policyType(def: PolicyTypeDef): Readonly<PolicyTypeDef>
export declare function classifier(def: ClassifierDef): Readonly<ClassifierDef>
export declare function embedder(def: EmbedderDef): Readonly<EmbedderDef>
export declare function runtime(def: RuntimeDef): Readonly<RuntimeDef>
export declare const McpMessage: {
  system(text: string): McpMessageT
  user(text: string): McpMessageT
  assistant(text: string): McpMessageT
}
export declare function admit(): Decision
export declare function transform(request: AiRequest): Decision
export declare function deny(reason: string): Decision
export declare function prefer(preferred: string, reason: string): Decision
