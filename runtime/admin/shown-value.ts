/**
 * A request value as an error message shows it. `String(v)` is not safe on parsed JSON: an object
 * whose own `toString` is null (`{"toString": null}`) makes it throw.
 */
export function shown(v: unknown): string {
  if (typeof v === 'string') return v
  try {
    return JSON.stringify(v) ?? typeof v
  } catch {
    return typeof v
  }
}
