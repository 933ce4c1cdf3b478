import type { PlatformEvent } from '../events/index.js'

/** A string without quotes, backslashes, control characters or surrogates is its own JSON body between quotes. */
function jsonString(s: string): string {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i)
    // surrogates too: JSON.stringify escapes lone ones
    if (c < 0x20 || c === 0x22 || c === 0x5c || (c >= 0xd800 && c <= 0xdfff)) return JSON.stringify(s)
  }
  return '"' + s + '"'
}

// field names come from the event types: a handful, each quoted once
const keys = new Map<string, string>()

function jsonKey(k: string): string {
  let q = keys.get(k)
  if (q === undefined) {
    q = jsonString(k)
    if (keys.size < 256) keys.set(k, q)
  }
  return q
}

/**
 * `{...event, "seq": seq}` as JSON, the same text JSON.stringify gives with `seq` last, without a
 * second object (the bus's event is shared with other listeners). Events are flat records of
 * strings, numbers and booleans, which this writes directly at about a third of JSON.stringify's
 * cost; anything else in a field goes through JSON.stringify.
 */
export function eventJson(event: PlatformEvent, seq: number): string {
  let out = '{'
  for (const key in event) {
    const v = (event as unknown as Record<string, unknown>)[key]
    let json: string | undefined
    switch (typeof v) {
      case 'string':
        json = jsonString(v)
        break
      case 'number':
        json = Number.isFinite(v) ? String(v) : 'null'
        break
      case 'boolean':
        json = v ? 'true' : 'false'
        break
      case 'undefined':
      case 'function':
      case 'symbol':
        continue
      default:
        json = JSON.stringify(v)
        if (json === undefined) continue
    }
    out += (out.length === 1 ? '' : ',') + jsonKey(key) + ':' + json
  }
  return out + (out.length === 1 ? '' : ',') + '"seq":' + seq + '}'
}
