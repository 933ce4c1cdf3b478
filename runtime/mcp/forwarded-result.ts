/**
 * The check a tools/call result of another MCP server gets before the platform uses it, in place
 * of the SDK client's CallToolResultSchema. Zod's parse of that schema (a union per content
 * block, and a copy of every object) was a large share of the gateway's CPU per forwarded call,
 * and the result travels on to a caller who validates it again. What the platform itself relies
 * on is checked here: an object whose `content` (absent: empty) is a list of blocks of the known
 * types with their required string fields, a boolean `isError`, an object `structuredContent` and
 * `_meta`. The value is passed on as it came, unknown keys included.
 */
import type { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js'
import { PlatformError } from '../contracts/index.js'
import { MCP_ERRORS } from './errors.js'
import { isObject, type JsonObject } from './types.js'

/** The string fields each content block type requires (an embedded resource is checked on its own). */
const REQUIRED = new Map<unknown, readonly string[]>([
  ['text', ['text']],
  ['image', ['data', 'mimeType']],
  ['audio', ['data', 'mimeType']],
  ['resource_link', ['uri', 'name']],
  ['resource', []]
])

/** What is wrong with a tools/call result, or undefined when the platform can use it. */
export function resultProblem(v: unknown): string | undefined {
  if (!isObject(v)) return 'the result is not an object'
  const content = v.content
  if (content !== undefined) {
    if (!Array.isArray(content)) return 'content is not a list'
    for (let i = 0; i < content.length; i++) {
      const b: unknown = content[i]
      if (!isObject(b)) return `content[${i}] is not an object`
      const fields = REQUIRED.get(b.type)
      if (fields === undefined) return `content[${i}] has an unknown type ${JSON.stringify(b.type) ?? 'undefined'}`
      for (const f of fields) if (typeof b[f] !== 'string') return `content[${i}].${f} is not a string`
      if (b.type === 'resource') {
        const r = b.resource
        if (!isObject(r) || typeof r.uri !== 'string' || (typeof r.text !== 'string' && typeof r.blob !== 'string'))
          return `content[${i}].resource needs a uri and a text or blob`
      }
    }
  }
  if (v.isError !== undefined && typeof v.isError !== 'boolean') return 'isError is not a boolean'
  if (v.structuredContent !== undefined && !isObject(v.structuredContent)) return 'structuredContent is not an object'
  if (v._meta !== undefined && !isObject(v._meta)) return '_meta is not an object'
  return undefined
}

type SafeParse = { success: true; data: JsonObject } | { success: false; error: PlatformError }

/**
 * What the SDK client's `request` takes as a result schema: its Protocol calls `safeParse` on
 * the result of a schema that is not a Zod 4 one, and rejects the call with `error` on failure.
 * The refusal names the server, as a tool error result (the call was answered, so no reconnection).
 */
export function forwardedResult(server: string): typeof CallToolResultSchema {
  const check = {
    safeParse(v: unknown): SafeParse {
      const problem = resultProblem(v)
      if (problem !== undefined)
        return {
          success: false,
          error: new PlatformError(MCP_ERRORS.MCP_SERVER_INVALID_RESULT, { server, detail: problem })
        }
      const r = v as JsonObject
      return { success: true, data: r.content === undefined ? { ...r, content: [] } : r }
    }
  }
  return check as unknown as typeof CallToolResultSchema
}
