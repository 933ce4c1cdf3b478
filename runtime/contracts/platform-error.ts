/**
 * The one error type of the platform (fastify-style): every failure is a code (`PLT_ERR_<NAME>`)
 * that its area declares with `defineErrors`, carrying its HTTP status, message, hint and, where a
 * protocol needs it, its JSON-RPC code. Areas list their codes on `Area.errors`; the composition
 * root gathers the union for the README table, the OpenAPI document and the catalogue test. Each
 * protocol maps a `PlatformError` once at its edge: the REST body in `http`, the JSON-RPC error in
 * the MCP and A2A cores, an `isError` tool result where a tool fails.
 */

/** What an area writes for one code. */
export interface ErrorSpec {
  /** The HTTP status; 200 only for an in-band JSON-RPC error (one with an `rpcCode`). */
  readonly status: number
  /** The message; a function of the params passed where the error is raised. */
  readonly message: string | ((p: Record<string, unknown>) => string)
  readonly hint?: string
  /** The JSON-RPC error code where a JSON-RPC protocol (MCP, A2A) answers with this failure. */
  readonly rpcCode?: number
  /** A start-up failure of the operator's making: the CLI prints its message on one line and exits 78. */
  readonly operator?: true
  /**
   * A failure between the platform's own parts (a plugin call, an embedder, a store write, a
   * start-up step): callers inside branch on its code, and an edge that meets one answers as it
   * does any unexpected throw (logged, `Internal server error`), so its text never reaches a client.
   */
  readonly internal?: true
}

/** One declared code: what the area wrote plus its name and wire code, stamped by `defineErrors`. */
export interface ErrorDef<N extends string = string> extends ErrorSpec {
  readonly name: N
  readonly code: `PLT_ERR_${N}`
}

/** The codes one area declares, by name. */
export type ErrorDefs = Readonly<Record<string, ErrorDef>>

type Defined<S extends Record<string, ErrorSpec>> = {
  readonly [K in keyof S & string]: S[K] & ErrorDef<K>
}

/** Declares an area's codes; `new PlatformError(DEFS.NAME, params)` raises one. Names are UPPER_SNAKE. */
export function defineErrors<const S extends Record<string, ErrorSpec>>(specs: S): Defined<S> {
  const out: Record<string, ErrorDef> = {}
  for (const [name, spec] of Object.entries(specs)) {
    if (!/^[A-Z][A-Z0-9_]*$/.test(name)) throw new TypeError(`error name "${name}" is not UPPER_SNAKE_CASE`)
    out[name] = Object.freeze({ ...spec, name, code: `PLT_ERR_${name}` as const })
  }
  return Object.freeze(out) as Defined<S>
}

/** Where a raised error departs from its def (a protocol's free-form message, an HTTP status, ...). */
export interface ErrorOptions {
  /** Members added to the REST body beside `error`, `code` and `hint`. */
  readonly extra?: Record<string, unknown>
  /** Replaces the def's message (protocol errors whose text is built where they are raised). */
  readonly message?: string
  /** Replaces the def's HTTP status (an in-band JSON-RPC error answers 200). */
  readonly status?: number
  /** Replaces the def's JSON-RPC code. */
  readonly rpcCode?: number
  /** The JSON-RPC `data` member. */
  readonly data?: unknown
  /** Response headers an HTTP transport adds (e.g. `WWW-Authenticate`). */
  readonly headers?: Record<string, string>
  readonly cause?: unknown
}

/** A failure with a code; thrown anywhere and turned into its wire form once, at the protocol's edge. */
export class PlatformError extends Error {
  readonly def: ErrorDef
  readonly code: string
  readonly status: number
  readonly hint: string | undefined
  readonly rpcCode: number | undefined
  readonly extra: Record<string, unknown> | undefined
  readonly data: unknown
  readonly headers: Record<string, string> | undefined
  /** The params the message was built from (a protocol edge may need one, e.g. a task id). */
  readonly params: Readonly<Record<string, unknown>>

  constructor(def: ErrorDef, params: Record<string, unknown> = {}, opts: ErrorOptions = {}) {
    super(
      opts.message ?? (typeof def.message === 'function' ? def.message(params) : def.message),
      opts.cause === undefined ? undefined : { cause: opts.cause }
    )
    this.name = 'PlatformError'
    this.def = def
    this.code = def.code
    this.status = opts.status ?? def.status
    this.hint = def.hint
    this.rpcCode = opts.rpcCode ?? def.rpcCode
    this.extra = opts.extra
    this.data = opts.data
    this.headers = opts.headers
    this.params = params
  }

  /** Whether this error is the failure `def` names (what `instanceof SomeError` said before). */
  is(def: ErrorDef): boolean {
    return this.code === def.code
  }

  /** The REST body: `{error, code, hint?, ...extra}`. */
  body(): Record<string, unknown> {
    const b: Record<string, unknown> = { error: this.message, code: this.code }
    if (this.hint !== undefined) b.hint = this.hint
    if (this.extra !== undefined) Object.assign(b, this.extra)
    return b
  }
}

/** Whether `err` is a PlatformError, and (given `def`) that failure. */
export function isPlatformError(err: unknown, def?: ErrorDef): err is PlatformError {
  return err instanceof PlatformError && (def === undefined || err.is(def))
}

/**
 * Whether a protocol edge answers `err` as itself: a PlatformError whose code is not `internal`.
 * Anything else is an unexpected failure, logged and answered as the protocol's internal error.
 */
export function isWireError(err: unknown): err is PlatformError {
  return err instanceof PlatformError && err.def.internal !== true
}

/** One area's codes, named by their owner so a clash names both. */
export interface ErrorSource {
  readonly owner: string
  readonly errors: ErrorDefs
}

/** The union of several areas' codes, in order; a code declared twice throws naming both owners. */
export function mergeErrors(sources: readonly ErrorSource[]): ErrorDefs {
  const out: Record<string, ErrorDef> = {}
  const owners = new Map<string, string>()
  for (const { owner, errors } of sources) {
    for (const def of Object.values(errors)) {
      const prev = owners.get(def.code)
      if (prev !== undefined) throw new Error(`error code ${def.code} is declared by both "${prev}" and "${owner}"`)
      owners.set(def.code, owner)
      out[def.name] = def
    }
  }
  return Object.freeze(out)
}
