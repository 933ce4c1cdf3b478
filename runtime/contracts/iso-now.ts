/**
 * `new Date().toISOString()` once per millisecond: a busy data path stamps many events and decisions
 * per ms, and formatting a Date costs more than most of what it stamps. Within one second only the
 * milliseconds change: the second's text is formatted once and each millisecond's `.sssZ` appended
 * (a Date formatted per millisecond cost a governed turn about a third of a microsecond).
 */
let isoMs = -1
let iso = ''
let second = Number.NaN
/** `YYYY-MM-DDTHH:mm:ss` of `second`; empty for a year outside 0000-9999 (formatted as ±YYYYYY). */
let secondText = ''

/** `.000Z` to `.999Z`. */
const MS_TEXTS: readonly string[] = Array.from({ length: 1000 }, (_, i) => `.${String(i).padStart(3, '0')}Z`)

export function isoNow(): string {
  const ms = Date.now()
  if (ms !== isoMs) {
    isoMs = ms
    iso = isoOf(ms)
  }
  return iso
}

/** `new Date(ms).toISOString()` for a whole number of milliseconds since the epoch. */
export function isoOf(ms: number): string {
  const s = Math.floor(ms / 1000)
  if (s !== second) {
    second = s
    const text = new Date(s * 1000).toISOString()
    secondText = text.length === 24 ? text.slice(0, 19) : ''
  }
  if (secondText === '' || !Number.isInteger(ms)) return new Date(ms).toISOString()
  return secondText + MS_TEXTS[ms - s * 1000]!
}
