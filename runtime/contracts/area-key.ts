/**
 * A typed token naming one area's service on the platform: the area that owns it calls
 * `platform.provide(KEY, value)` in its install, every other area reads `platform.area(KEY)`.
 * The type parameter ties the two together, so no caller casts.
 */
export class AreaKey<T> {
  /** Never set: carries T so that two keys of different types are not assignable to each other. */
  declare readonly type: T

  constructor(readonly name: string) {}

  toString(): string {
    return `AreaKey(${this.name})`
  }
}

/** The owner of an extension point the core declares: every area builds on the core, so any may extend it. */
export const CORE = 'core'

/**
 * A typed token naming a seat another area fills: the extended area (`owner`) declares it in its
 * `key.ts` and reads `platform.extensions(POINT)` when it needs the values; an area that declares
 * `owner` in its `dependsOn` adds one with `platform.extend(POINT, value)` during its install. So
 * the extended area never imports the one that extends it, and nothing is set on its service.
 */
export class ExtensionPoint<T> {
  /** Never set: carries T so that `extend` and `extensions` agree without a cast. */
  declare readonly type: T

  /**
   * @param owner the area that declares and reads the point (`CORE` for one the core declares)
   * @param name the point's name within its owner
   * @param single true when the owner reads one value: a second `extend` is refused
   */
  constructor(
    readonly owner: string,
    readonly name: string,
    readonly single = false
  ) {}

  toString(): string {
    return `ExtensionPoint(${this.owner}.${this.name})`
  }
}
