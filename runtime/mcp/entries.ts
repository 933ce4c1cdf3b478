import type { ValidateFunction } from 'ajv/dist/2020.js'
import type { CancelSignal } from '../plugins/index.js'
import type { Principal } from '../auth/index.js'
import type { HeaderParam } from './schema.js'
import type { JsonObject } from './types.js'

// What the registry serves an endpoint: its tools, resources and prompts, each ready to run.

/** What a running tool, resource or prompt may use beyond its arguments. */
export interface InvokeContext {
  signal: CancelSignal
  /** A partial result: `{progress,total?,message?}` → progress notification; `{log,data}` → log message. */
  progress: (partial: unknown) => void
  /** True when the caller gave a progress token: progress partials reach it (else they are dropped). */
  wantsProgress?: boolean
  /** On an input-required retry: every response gathered so far, and the state the handler returned. */
  inputResponses?: Record<string, unknown>
  requestState?: unknown
  principal?: string | null
  /** The whole principal (name, roles, how it was established), when the transport resolved one. */
  caller?: Principal | null
  sessionId?: string
  /** Client capabilities of this request (stateless `_meta` or the session's initialize). */
  clientCapabilities: JsonObject
}

export interface ToolEntry {
  name: string
  title?: string
  description: string
  inputSchema: JsonObject
  taskSupport: 'forbidden' | 'optional' | 'required'
  uiResource?: string
  iconUrl?: string
  validate: ValidateFunction
  headerParams: HeaderParam[]
  invoke: (args: JsonObject, ctx: InvokeContext) => Promise<unknown>
  /** The other MCP server (`platform.mcp.servers.<name>`) the tool is called on, for one that is. */
  server?: string
}
export interface ResourceEntry {
  uri: string
  name: string
  title?: string
  description: string
  mimeType: string
  template: boolean
  match?: RegExp
  read: (uri: string, ctx: InvokeContext) => Promise<unknown>
}
export interface PromptEntry {
  name: string
  title?: string
  description: string
  arguments: { name: string; description?: string; required?: boolean }[]
  get: (args: Record<string, string>, ctx: InvokeContext) => Promise<unknown>
  complete?: (argument: string, value: string) => string[] | Promise<string[]>
}

export interface EndpointView {
  tools: ToolEntry[]
  toolsByName: Map<string, ToolEntry>
  resources: ResourceEntry[]
  templates: ResourceEntry[]
  prompts: PromptEntry[]
  promptsByName: Map<string, PromptEntry>
}

/** The resource a URI names: an exact URI first, then the first template that matches. */
export function findResource(v: EndpointView, uri: string): ResourceEntry | undefined {
  for (const r of v.resources) if (r.uri === uri) return r
  for (const r of v.templates) if (r.match?.test(uri) === true) return r
  return undefined
}
