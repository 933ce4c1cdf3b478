/**
 * `new Date().toISOString()` once per millisecond: a busy data path stamps many events and decisions
 * per ms, and formatting a Date costs more than most of what it stamps.
 */
let isoMs = -1
let iso = ''

export function isoNow(): string {
  const ms = Date.now()
  if (ms !== isoMs) {
    isoMs = ms
    iso = new Date(ms).toISOString()
  }
  return iso
}
