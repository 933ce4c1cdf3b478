/**
 * Whether an answer that may come now or later (a policy's, a counter's) is a promise: a caller
 * decides on one at hand at once, without awaiting it (a microtask, and a turn of the event loop's
 * queue, per decision).
 */
export function isPromise<T>(v: T | Promise<T>): v is Promise<T> {
  return typeof (v as { then?: unknown } | null)?.then === 'function'
}
