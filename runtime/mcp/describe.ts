import { PlatformError } from '../contracts/index.js'
import { MCP_ERRORS } from './errors.js'
import type { Task } from './tasks.js'
import { TASKS_EXT, isObject, type JsonObject } from './types.js'

// Wire shapes of list entries and tasks, shared by both dialects.

export function hasTasksExtension(caps: JsonObject): boolean {
  return isObject(caps.extensions) && caps.extensions[TASKS_EXT] !== undefined
}

export function missingTasksExtension(): PlatformError {
  return new PlatformError(
    MCP_ERRORS.MCP_MISSING_CAPABILITY,
    { detail: `This request requires the ${TASKS_EXT} extension` },
    { data: { requiredCapabilities: { extensions: { [TASKS_EXT]: {} } } } }
  )
}

/** What a registered resource or resource template shows in a list. */
interface ListedResource {
  uri: string
  name: string
  title?: string
  description: string
  mimeType: string
}

/** A resources/list entry. */
export function describeResource(r: ListedResource): JsonObject {
  return listEntry('uri', r)
}

/** A resources/templates/list entry: the same fields, its URI under `uriTemplate`. */
export function describeTemplate(r: ListedResource): JsonObject {
  return listEntry('uriTemplate', r)
}

function listEntry(uriKey: 'uri' | 'uriTemplate', r: ListedResource): JsonObject {
  const out: JsonObject = { [uriKey]: r.uri, name: r.name }
  if (r.title !== undefined) out.title = r.title
  if (r.description !== '') out.description = r.description
  out.mimeType = r.mimeType
  return out
}

export function describePrompt(p: {
  name: string
  title?: string
  description: string
  arguments: { name: string; description?: string; required?: boolean }[]
}): JsonObject {
  const out: JsonObject = { name: p.name }
  if (p.title !== undefined) out.title = p.title
  out.description = p.description !== '' ? p.description : (p.title ?? p.name)
  if (p.arguments.length > 0)
    out.arguments = p.arguments.map((a) => ({
      name: a.name,
      ...(a.description !== undefined && a.description !== '' ? { description: a.description } : {}),
      required: a.required !== false
    }))
  return out
}

/** DetailedTask of the tasks extension: status-specific `result`, `error` or `inputRequests`. */
export function taskDetail(t: Task): JsonObject {
  const out: JsonObject = { taskId: t.id, status: t.status }
  if (t.statusMessage !== undefined) out.statusMessage = t.statusMessage
  Object.assign(out, {
    createdAt: t.createdAt,
    lastUpdatedAt: t.lastUpdatedAt,
    ttlMs: t.ttlMs,
    pollIntervalMs: t.pollIntervalMs
  })
  if (t.status === 'completed' && t.result !== undefined) out.result = { resultType: 'complete', ...t.result }
  if (t.status === 'failed' && t.error !== undefined) out.error = t.error
  if (t.status === 'input_required' && t.inputRequests !== undefined) out.inputRequests = t.inputRequests
  return out
}

/** The 2025-11-25 task object (`ttl`, `pollInterval`, not the `…Ms` names). */
export function legacyTask(t: Task): JsonObject {
  const out: JsonObject = { taskId: t.id, status: t.status }
  if (t.statusMessage !== undefined) out.statusMessage = t.statusMessage
  return Object.assign(out, {
    createdAt: t.createdAt,
    lastUpdatedAt: t.lastUpdatedAt,
    ttl: t.ttlMs,
    pollInterval: t.pollIntervalMs
  })
}
