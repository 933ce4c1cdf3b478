/**
 * One connection to another MCP server, through the official SDK client: connect (Streamable
 * HTTP falling back to SSE, or a stdio child), list what it serves, follow its list-changed
 * notifications, reconnect with backoff when it goes away, and call its tools with a deadline.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import type { RequestOptions } from '@modelcontextprotocol/sdk/shared/protocol.js'
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js'
import {
  ErrorCode as SdkErrorCode,
  McpError,
  PromptListChangedNotificationSchema,
  ResourceListChangedNotificationSchema,
  ToolListChangedNotificationSchema,
  type Prompt,
  type Resource,
  type ResourceTemplate,
  type Tool
} from '@modelcontextprotocol/sdk/types.js'
import { PlatformError, isPlatformError } from '../contracts/index.js'
import type { Logger } from '../observability/index.js'
import { Cancellation, type CancelSignal } from '../plugins/index.js'
import { MCP_ERRORS } from './errors.js'
import type { ExternalServerConfig } from './external-config.js'
import { forwardedResult } from './forwarded-result.js'
import { KeepAliveFetch } from './keep-alive-fetch.js'

export type ServerState = 'connecting' | 'connected' | 'down' | 'closed'

/** What the server serves now (tools after the allow-list; resources and prompts only when exposed). */
export interface ServerListing {
  tools: Tool[]
  resources: Resource[]
  templates: ResourceTemplate[]
  prompts: Prompt[]
}

export interface CallOptions {
  signal?: CancelSignal
  /** Only when the caller can be sent progress: the SDK then adds a progress token to the request. */
  onProgress?: (p: { progress: number; total?: number; message?: string }) => void
}

const FIRST_RETRY_MS = 200
const MAX_RETRY_MS = 10_000
/** The least time a connection (a child's start-up included) and a listing get, whatever the call timeout. */
const MIN_CONNECT_TIMEOUT_MS = 10_000
const EMPTY: ServerListing = { tools: [], resources: [], templates: [], prompts: [] }

/**
 * The signal a request is given. The SDK's Protocol only reads `aborted`, `reason` and
 * `throwIfAborted()` of it and adds an `abort` listener, which a platform Cancellation offers:
 * handed over as it is, a forwarded call builds no AbortController (an EventTarget per call).
 */
function sdkSignal(s: CancelSignal): AbortSignal {
  return s instanceof Cancellation ? (s as unknown as AbortSignal) : s
}

function requestOptions(timeout: number, signal: CancelSignal | undefined): RequestOptions {
  const o: RequestOptions = { timeout }
  if (signal !== undefined) o.signal = sdkSignal(signal)
  return o
}

export class ExternalServer {
  #client: Client | undefined
  #state: ServerState = 'connecting'
  #error: string | undefined
  #listing: ServerListing = EMPTY
  #attempts = 0
  #retry: NodeJS.Timeout | undefined
  #connectedAt: number | undefined
  #firstAttempt: Promise<void> | undefined
  /** The allow-listed names the server did not serve when last listed, to warn once per change. */
  #missing = ''
  /** The HTTP connections to the server, kept across reconnections. */
  readonly #http = new KeepAliveFetch()
  /** The check a tool result gets (see forwarded-result.ts). */
  readonly #result: ReturnType<typeof forwardedResult>
  /**
   * Tools whose calls the SDK client must make itself: one with an output schema (its
   * structured content is validated) or one that requires task execution (refused).
   */
  #sdkChecked = new Set<string>()

  constructor(
    readonly config: ExternalServerConfig,
    private readonly logger: Logger,
    /** Called whenever what the server serves changes (connected, refreshed, gone). */
    private readonly onListing: (server: ExternalServer) => void
  ) {
    this.#result = forwardedResult(config.name)
  }

  get name(): string {
    return this.config.name
  }
  get state(): ServerState {
    return this.#state
  }
  get error(): string | undefined {
    return this.#error
  }
  get listing(): ServerListing {
    return this.#listing
  }
  get connectedAt(): number | undefined {
    return this.#connectedAt
  }

  /** Starts connecting; resolves after the first attempt, whatever its outcome (later ones run on their own). */
  start(): Promise<void> {
    return (this.#firstAttempt ??= this.connect())
  }

  async close(): Promise<void> {
    this.#state = 'closed'
    clearTimeout(this.#retry)
    const c = this.#client
    this.#client = undefined
    await c?.close().catch(() => {})
    this.#http.close()
  }

  /** Calls one of the server's tools; a server that is down or too slow is a PlatformError naming it. */
  callTool(tool: string, args: Record<string, unknown>, opts: CallOptions = {}): Promise<unknown> {
    const options = requestOptions(this.config.timeoutMs, opts.signal)
    if (opts.onProgress !== undefined) options.onprogress = opts.onProgress
    const params = { name: tool, arguments: args }
    return this.request(tool, (c) =>
      this.#sdkChecked.has(tool)
        ? c.callTool(params, undefined, options)
        : c.request({ method: 'tools/call', params }, this.#result, options)
    )
  }

  async readResource(uri: string, signal?: CancelSignal): Promise<unknown> {
    return await this.request('', (c) => c.readResource({ uri }, requestOptions(this.config.timeoutMs, signal)))
  }

  async getPrompt(name: string, args: Record<string, string>, signal?: CancelSignal): Promise<unknown> {
    return await this.request('', (c) =>
      c.getPrompt({ name, arguments: args }, requestOptions(this.config.timeoutMs, signal))
    )
  }

  /** Runs one request on the connected client; `tool` names the tool in a failure ('' for others). */
  private async request<T>(tool: string, run: (c: Client) => Promise<T>): Promise<T> {
    const client = this.#client
    if (client === undefined || this.#state !== 'connected')
      throw new PlatformError(MCP_ERRORS.MCP_SERVER_UNAVAILABLE, {
        server: this.name,
        detail: this.#error ?? `not connected (${this.#state})`
      })
    try {
      return await run(client)
    } catch (err) {
      throw this.callFailure(tool, err)
    }
  }

  /**
   * The SDK's errors carry JSON-RPC codes in the protocol range, which the MCP edge would pass on
   * as protocol errors: every failure becomes a tool error that names the server instead.
   */
  private callFailure(tool: string, err: unknown): PlatformError {
    // the result check's refusal: the server answered, and the refusal already names it
    if (isPlatformError(err)) return err
    if (err instanceof McpError && err.code === (SdkErrorCode.RequestTimeout as number))
      return new PlatformError(MCP_ERRORS.MCP_SERVER_TIMEOUT, { server: this.name, tool, ms: this.config.timeoutMs })
    const detail = err instanceof Error ? err.message : String(err)
    // an HTTP server that went away (or forgot our session) shows only in a failed request:
    // anything but a JSON-RPC error from the server itself means connect again
    const answered = err instanceof McpError && err.code !== (SdkErrorCode.ConnectionClosed as number)
    if (!answered && this.config.transport.kind === 'http') this.lost(detail)
    if (answered) return new PlatformError(MCP_ERRORS.MCP_SERVER_ERROR, { server: this.name, detail })
    return new PlatformError(MCP_ERRORS.MCP_SERVER_UNAVAILABLE, { server: this.name, detail })
  }

  private get connectTimeoutMs(): number {
    return Math.max(this.config.timeoutMs, MIN_CONNECT_TIMEOUT_MS)
  }

  private transports(): (() => Transport)[] {
    const t = this.config.transport
    if (t.kind === 'stdio')
      return [() => new StdioClientTransport({ command: t.command, args: t.args, env: t.env, stderr: 'pipe' })]
    const requestInit: RequestInit = t.token !== undefined ? { headers: { authorization: `Bearer ${t.token}` } } : {}
    return [
      () => new StreamableHTTPClientTransport(t.url, { requestInit, fetch: this.#http.fetch }),
      // servers of the 2024-11-05 generation speak only HTTP+SSE
      () => new SSEClientTransport(t.url, { requestInit })
    ]
  }

  private async connect(): Promise<void> {
    if (this.#state === 'closed') return
    this.#state = this.#attempts === 0 ? 'connecting' : this.#state
    let lastErr: unknown
    for (const make of this.transports()) {
      const client = new Client({ name: 'agent-platform', version: '1' }, { capabilities: {} })
      try {
        const transport = make()
        if (transport instanceof StdioClientTransport)
          // the child's stderr is its log: keep it out of our stdout, drain it so the child never blocks
          transport.stderr?.on('data', (d: Buffer) => {
            this.logger.debug({ server: this.name, stderr: d.toString('utf8').slice(0, 2000) }, 'MCP server stderr')
          })
        await client.connect(transport, { timeout: this.connectTimeoutMs })
        // closed while connecting: the platform is shutting down
        if (this.closed()) {
          await client.close().catch(() => {})
          return
        }
        await this.adopt(client)
        return
      } catch (err) {
        lastErr = err
        // a client adopted before its listing failed is dropped first, so its close is not a loss
        if (this.#client === client) this.#client = undefined
        await client.close().catch(() => {})
      }
    }
    this.fail(lastErr)
  }

  private async adopt(client: Client): Promise<void> {
    this.#client = client
    client.onclose = () => {
      if (this.#client === client) this.lost('the connection closed')
    }
    client.onerror = (err) => {
      this.logger.debug({ server: this.name, err: err.message }, 'MCP server transport error')
    }
    const refresh = (): void => {
      void this.list(client).catch((err: unknown) => {
        this.logger.warn({ server: this.name, err: (err as Error).message }, 'MCP server list refresh failed')
      })
    }
    client.setNotificationHandler(ToolListChangedNotificationSchema, refresh)
    client.setNotificationHandler(ResourceListChangedNotificationSchema, refresh)
    client.setNotificationHandler(PromptListChangedNotificationSchema, refresh)
    await this.list(client)
    this.#state = 'connected'
    this.#error = undefined
    this.#attempts = 0
    this.#connectedAt = Date.now()
    this.logger.info({ server: this.name, tools: this.#listing.tools.length }, 'MCP server connected')
    this.onListing(this)
  }

  /** Reads every page of what the server lists; resources and prompts only for an exposed server that has them. */
  private async list(client: Client): Promise<void> {
    const caps = client.getServerCapabilities() ?? {}
    const opts = { timeout: this.connectTimeoutMs }
    const tools: Tool[] = []
    if (caps.tools !== undefined) {
      let cursor: string | undefined
      do {
        const page = await client.listTools(cursor !== undefined ? { cursor } : {}, opts)
        tools.push(...page.tools)
        cursor = page.nextCursor
      } while (cursor !== undefined)
    }
    const allow = this.config.allow
    // a typo in the allow-list would leave a tool out silently: say which names match nothing
    const missing = allow === undefined ? [] : [...allow].filter((n) => !tools.some((t) => t.name === n))
    if (missing.join('\0') !== this.#missing) {
      this.#missing = missing.join('\0')
      if (missing.length > 0)
        this.logger.warn(
          { server: this.name, missing, served: tools.map((t) => t.name) },
          `platform.mcp.servers.${this.name}.tools lists tools the server does not serve (yet)`
        )
    }
    const listing: ServerListing = {
      tools: allow === undefined ? tools : tools.filter((t) => allow.has(t.name)),
      resources: [],
      templates: [],
      prompts: []
    }
    if (this.config.expose && caps.resources !== undefined) {
      let cursor: string | undefined
      do {
        const page = await client.listResources(cursor !== undefined ? { cursor } : {}, opts)
        listing.resources.push(...page.resources)
        cursor = page.nextCursor
      } while (cursor !== undefined)
      do {
        const page = await client.listResourceTemplates(cursor !== undefined ? { cursor } : {}, opts)
        listing.templates.push(...page.resourceTemplates)
        cursor = page.nextCursor
      } while (cursor !== undefined)
    }
    if (this.config.expose && caps.prompts !== undefined) {
      let cursor: string | undefined
      do {
        const page = await client.listPrompts(cursor !== undefined ? { cursor } : {}, opts)
        listing.prompts.push(...page.prompts)
        cursor = page.nextCursor
      } while (cursor !== undefined)
    }
    if (this.#client !== client) return
    this.#sdkChecked = new Set(
      tools.filter((t) => t.outputSchema !== undefined || t.execution?.taskSupport === 'required').map((t) => t.name)
    )
    this.#listing = listing
    if (this.#state === 'connected') this.onListing(this)
  }

  private closed(): boolean {
    return this.#state === 'closed'
  }

  private lost(why: string): void {
    if (this.#state === 'closed' || this.#client === undefined) return
    const c = this.#client
    this.#client = undefined
    void c.close().catch(() => {})
    this.logger.warn({ server: this.name, err: why }, 'MCP server connection lost; reconnecting')
    this.fail(new Error(why))
  }

  private fail(err: unknown): void {
    if (this.#state === 'closed') return
    this.#state = 'down'
    this.#error = err instanceof Error ? err.message : String(err)
    // its tools stay registered (the listing is kept): a call while it is down answers why, naming the server
    this.#connectedAt = undefined
    const delay = Math.min(MAX_RETRY_MS, FIRST_RETRY_MS * 2 ** this.#attempts)
    this.#attempts++
    if (this.#attempts === 1 || this.#attempts % 10 === 0)
      this.logger.warn(
        { server: this.name, err: this.#error, attempt: this.#attempts, retryInMs: delay },
        'MCP server unreachable; retrying with backoff'
      )
    clearTimeout(this.#retry)
    // jitter keeps many platforms from reconnecting to one server in step
    this.#retry = setTimeout(
      () => {
        void this.connect()
      },
      delay / 2 + Math.random() * (delay / 2)
    )
    this.#retry.unref()
  }
}
