import { PlatformError } from '../contracts/index.js'
import { MCP_ERRORS } from './errors.js'
import type { ToolEntry } from './entries.js'
import type { JsonObject } from './types.js'

const B64 = /^[A-Za-z0-9+/]*={0,2}$/

function mismatch(message: string): PlatformError {
  return new PlatformError(MCP_ERRORS.MCP_HEADER_MISMATCH, { detail: message })
}

/** Decodes a header value per SEP-2243: trimmed; `=?base64?…?=` is base64 of UTF-8, anything else literal. */
export function decodeHeaderValue(raw: string, name: string): string {
  const v = raw.trim()
  if (v.startsWith('=?base64?') && v.endsWith('?=') && v.length >= 11) {
    const b = v.slice(9, -2)
    if (b.length % 4 !== 0 || !B64.test(b)) throw mismatch(`${name} header has invalid base64 encoding`)
    return Buffer.from(b, 'base64').toString('utf8')
  }
  return v
}

/** The body field `Mcp-Name` mirrors, for the methods that carry one. */
export function nameTarget(method: string, params: JsonObject | undefined): unknown {
  switch (method) {
    case 'tools/call':
    case 'prompts/get':
      return params?.name
    case 'resources/read':
      return params?.uri
    case 'tasks/get':
    case 'tasks/update':
    case 'tasks/cancel':
      return params?.taskId
    default:
      return undefined
  }
}

/** `Mcp-Method` and `Mcp-Name` are required and must equal the body (values case-sensitive). */
export function checkRoutingHeaders(
  headers: Record<string, string>,
  method: string,
  params: JsonObject | undefined
): void {
  const mh = headers['mcp-method']
  if (mh === undefined) throw mismatch(`Missing required Mcp-Method header (body method '${method}')`)
  if (mh.trim() !== method) throw mismatch(`Mcp-Method header '${mh.trim()}' does not match body method '${method}'`)
  const target = nameTarget(method, params)
  if (typeof target !== 'string') return
  const nh = headers['mcp-name']
  if (nh === undefined) throw mismatch(`Missing required Mcp-Name header (body target '${target}')`)
  const decoded = decodeHeaderValue(nh, 'Mcp-Name')
  if (decoded !== target) throw mismatch(`Mcp-Name header '${decoded}' does not match body target '${target}'`)
}

/** `x-mcp-header` parameters: a value in the body needs its `Mcp-Param-<Name>` header, and they must agree. */
export function checkParamHeaders(headers: Record<string, string>, tool: ToolEntry, args: JsonObject): void {
  for (const hp of tool.headerParams) {
    const value = args[hp.prop]
    if (value === undefined || value === null) continue
    const raw = headers[`mcp-param-${hp.header}`]
    if (raw === undefined) throw mismatch(`Missing Mcp-Param-${hp.header} header for argument '${hp.prop}'`)
    const decoded = decodeHeaderValue(raw, `Mcp-Param-${hp.header}`)
    const same =
      typeof value === 'number'
        ? decoded.trim() !== '' && Number(decoded) === value
        : typeof value === 'boolean'
          ? decoded === String(value)
          : decoded === value
    if (!same) throw mismatch(`Mcp-Param-${hp.header} header does not match argument '${hp.prop}'`)
  }
}
