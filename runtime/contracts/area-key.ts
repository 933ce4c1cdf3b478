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
