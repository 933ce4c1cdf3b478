/** Vector arithmetic and the number formatting the scope reason strings use. */

/** Cosine similarity; -1 when the lengths differ or a vector is empty, 0 when a norm is zero. */
export function cosineSimilarity(a: readonly number[], b: readonly number[]): number {
  const n = a.length
  if (n === 0 || n !== b.length) return -1
  let dot = 0
  let na = 0
  let nb = 0
  for (let i = 0; i < n; i++) {
    const x = a[i]!
    const y = b[i]!
    dot += x * y
    na += x * x
    nb += y * y
  }
  if (na === 0 || nb === 0) return 0
  return dot / (Math.sqrt(na) * Math.sqrt(nb))
}

/**
 * Rounds to 4 decimals and prints the way a Java `double` prints (`0.5`, `1.0`, `-0.25`), so
 * reason strings read `sim=0.4321`, `threshold 0.45`.
 */
export function round4(v: number): string {
  if (!Number.isFinite(v)) return Number.isNaN(v) ? 'NaN' : v > 0 ? 'Infinity' : '-Infinity'
  const r = Math.round(v * 10000) / 10000
  if (r === 0) return '0.0'
  if (Math.abs(r) < 1e-3) return javaSci(r)
  return Number.isInteger(r) ? r.toFixed(1) : String(r)
}

/** Java prints magnitudes below 10^-3 in computerized scientific notation: `1.0E-4`. */
function javaSci(r: number): string {
  const [mant, exp] = r.toExponential().split('e') as [string, string]
  return `${mant.includes('.') ? mant : mant + '.0'}E${Number(exp)}`
}

/** A vector an embedder returned is usable only when it is a non-empty array of finite numbers. */
export function isVector(v: unknown): v is number[] {
  if (!Array.isArray(v) || v.length === 0) return false
  for (const x of v) if (typeof x !== 'number' || !Number.isFinite(x)) return false
  return true
}
