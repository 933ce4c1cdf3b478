/** Drops `__proto__` keys so a plugin's JSON can never set a prototype when the host copies it. */
function noProto(key: string, value: unknown): unknown {
  return key === '__proto__' ? undefined : value
}

/**
 * Marks a result that is a string: it travels as itself after the mark, with no JSON on either side
 * (tools mostly answer text). JSON text never starts with this control character.
 */
export const TEXT_MARK = '\u0001'
const TEXT_MARK_CODE = TEXT_MARK.charCodeAt(0)

/** Parses JSON text produced by plugin code; the reviver only runs when a `__proto__` key is present. */
export function parseResult(json: string): unknown {
  if (json === '') return undefined
  if (json.charCodeAt(0) === TEXT_MARK_CODE) return json.slice(1)
  return json.includes('"__proto__"') ? JSON.parse(json, noProto) : JSON.parse(json)
}
