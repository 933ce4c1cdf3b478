import { createHash } from 'node:crypto'

/** The function names OpenAI accepts (and many OpenAI-compatible servers copy): a request with another is refused. */
export const WIRE_TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/

/**
 * The names of one request's tools as an OpenAI-compatible server sees them, and back. Tools of
 * other MCP servers are registered as `<server>.<tool>`, and a plugin may name a tool with any
 * character: those get a name the server accepts (each character outside the rule becomes `_`,
 * cut to 64), made unique with a hash of the real name when that is taken. A name the rule
 * already accepts keeps itself, so a mapped name never takes the name of a tool or of a client's
 * function. Built once per request over every name it carries (its tools and the calls in its
 * history), so both directions use the same table.
 */
export class WireToolNames {
  readonly #toWire = new Map<string, string>()
  readonly #fromWire = new Map<string, string>()

  constructor(names: Iterable<string>) {
    const all = [...new Set(names)]
    for (const n of all) if (WIRE_TOOL_NAME.test(n)) this.#bind(n, n)
    // sorted, so which of two names with the same stand-in gets it does not depend on tool order
    for (const n of all.filter((x) => !WIRE_TOOL_NAME.test(x)).sort()) this.#bind(n, this.#free(n))
  }

  /** The name the server is sent for the tool `name`. */
  toWire(name: string): string {
    return this.#toWire.get(name) ?? name
  }

  /** The tool a name the server sent means; a name this request never gave comes back as it is. */
  fromWire(wire: string): string {
    return this.#fromWire.get(wire) ?? wire
  }

  #bind(name: string, wire: string): void {
    this.#toWire.set(name, wire)
    this.#fromWire.set(wire, name)
  }

  #free(name: string): string {
    const base = name.replace(/[^a-zA-Z0-9_-]/g, '_').slice(0, 64) || '_'
    if (!this.#fromWire.has(base) && base.length === name.length) return base
    const hash = createHash('sha256').update(name).digest('hex').slice(0, 8)
    for (let k = 0; ; k++) {
      const suffix = `_${hash}${k === 0 ? '' : String(k)}`
      const wire = base.slice(0, 64 - suffix.length) + suffix
      if (!this.#fromWire.has(wire)) return wire
    }
  }
}
