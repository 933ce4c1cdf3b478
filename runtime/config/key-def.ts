/**
 * How a configuration key is declared: its JSON Schema, default and meaning. The core declares its
 * keys in `core-keys.ts`; each feature area declares its own in `runtime/<area>/config-keys.ts` and
 * lists them as the `configKeys` of its `Area`; the composition root gathers them all.
 */
export interface KeyDef {
  readonly schema: Readonly<Record<string, unknown>>
  readonly default?: unknown
  readonly description: string
  /**
   * The area that will read this key, which is not built yet: the key is accepted (it belongs
   * to that area) but switches nothing today, and the README says so.
   */
  readonly reservedFor?: string
  /**
   * The value is a credential (a token, a password, a signing key): no message and no table ever
   * shows it, only the key's name.
   */
  readonly secret?: boolean
  /**
   * The key chooses where state every node must see is kept (`memory`, `lmdb`, `postgres`): in
   * cluster mode `lmdb` or `memory` would give each node its own copy, so setting either is refused.
   */
  readonly sharedState?: boolean
}

/** The keys one owner (the core or an area) declares, by dotted name. */
export type KeyDefs = Readonly<Record<string, KeyDef>>

/** Schema fragments most keys use; an area may write any other JSON Schema inline (`as const`). */
export const KEY_SCHEMA = {
  bool: { type: 'boolean' },
  str: { type: 'string' },
  nonEmpty: { type: 'string', minLength: 1 },
  port: { type: 'integer', minimum: 0, maximum: 65535 },
  positiveInt: { type: 'integer', minimum: 1 },
  strList: { type: 'array', items: { type: 'string', minLength: 1 } }
} as const

/** The value a JSON Schema (declared `as const`) admits, as far as the config schemas use JSON Schema. */
export type SchemaValue<S> = S extends { readonly enum: readonly (infer E)[] }
  ? E
  : S extends { readonly anyOf: readonly (infer A)[] }
    ? SchemaValue<A>
    : S extends { readonly type: 'boolean' }
      ? boolean
      : S extends { readonly type: 'integer' | 'number' }
        ? number
        : S extends { readonly type: 'string' }
          ? string
          : S extends { readonly type: 'array'; readonly items: infer I }
            ? readonly SchemaValue<I>[]
            : S extends { readonly type: 'object'; readonly properties: infer P }
              ? ObjectValue<P, S extends { readonly required: readonly (infer R)[] } ? R : never>
              : S extends { readonly type: 'object'; readonly additionalProperties: infer A extends object }
                ? Readonly<Record<string, SchemaValue<A>>>
                : S extends { readonly type: 'object' }
                  ? Readonly<Record<string, unknown>>
                  : unknown

type ObjectValue<P, R> = Readonly<
  { [K in keyof P as K extends R ? K : never]: SchemaValue<P[K]> } & {
    [K in keyof P as K extends R ? never : K]?: SchemaValue<P[K]>
  }
>

type KeyValue<D> = D extends { readonly schema: infer S }
  ? D extends { readonly default: unknown }
    ? SchemaValue<S>
    : SchemaValue<S> | undefined
  : never

/**
 * Each key of `D` and the type of its value (`undefined` when it has no default and is unset). An
 * area adds its keys to `Config.get` by extending `ConfigKeys` with it:
 * `declare module '../config/index.js' { interface ConfigKeys extends KeyValues<typeof AI_CONFIG_KEYS> {} }`
 */
export type KeyValues<D> = { [K in keyof D]: KeyValue<D[K]> }
