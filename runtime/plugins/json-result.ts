/** Drops `__proto__` keys so a plugin's JSON can never set a prototype when the host copies it. */
function noProto(key: string, value: unknown): unknown {
  return key === '__proto__' ? undefined : value
}

/** Parses JSON text produced by plugin code; the reviver only runs when a `__proto__` key is present. */
export function parseResult(json: string): unknown {
  if (json === '') return undefined
  return json.includes('"__proto__"') ? JSON.parse(json, noProto) : JSON.parse(json)
}
