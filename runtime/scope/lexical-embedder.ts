import type { Embedder } from './contract.js'

/**
 * The built-in offline embedder. It is LEXICAL, not semantic: each text becomes a hashed bag of
 * its words (crudely stemmed, weight 1 + ln tf, common English stop words dropped) plus the character trigrams of
 * each word (so `refund` and `refunds` overlap), L2-normalised in 1024 dimensions. Cosine
 * similarity between two such vectors measures shared words and word pieces; it knows nothing
 * about synonyms or meaning (`purchase` and `order` score 0). It needs no network and no model,
 * and is deterministic, which suits tests, demos and air-gapped installs; use a real embedding
 * model (`openai` adapter or a plugin) for semantic confinement.
 */
export const LEXICAL_DIMENSIONS = 1024

const STOP = new Set(
  (
    'a an and are as at be but by can could do does did for from had has have how i if in into is it its ' +
    'me my of on or our please so than that the their them then there these they this to us was we were what when where which ' +
    'who why will with would you your about any all also just some'
  ).split(' ')
)

const WORD = /[\p{L}\p{N}]+/gu

export class LexicalEmbedder implements Embedder {
  readonly name = 'lexical'

  async embed(texts: string[]): Promise<number[][]> {
    return texts.map(embedText)
  }
}

export function embedText(text: string): number[] {
  const v = new Float64Array(LEXICAL_DIMENSIONS)
  const tf = new Map<string, number>()
  for (const m of String(text).toLowerCase().matchAll(WORD)) {
    if (STOP.has(m[0])) continue
    const w = stem(m[0])
    tf.set(w, (tf.get(w) ?? 0) + 1)
  }
  for (const [w, n] of tf) {
    const weight = 1 + Math.log(n)
    add(v, 'w:' + w, weight)
    const padded = `^${w}$`
    if (padded.length > 4)
      for (let i = 0; i + 3 <= padded.length; i++) add(v, 'c:' + padded.slice(i, i + 3), weight * 0.5)
  }
  let norm = 0
  for (let i = 0; i < v.length; i++) norm += v[i]! * v[i]!
  const out = new Array<number>(LEXICAL_DIMENSIONS)
  const k = norm === 0 ? 0 : 1 / Math.sqrt(norm)
  for (let i = 0; i < v.length; i++) out[i] = v[i]! * k
  return out
}

/** Crude English suffix stripping so `orders`, `billing` and `billed` meet `order` and `bill`. */
function stem(w: string): string {
  if (w.length > 4 && w.endsWith('ies')) return w.slice(0, -3) + 'y'
  if (w.length > 5 && w.endsWith('ing')) return w.slice(0, -3)
  if (w.length > 4 && w.endsWith('ed')) return w.slice(0, -2)
  if (w.length > 3 && w.endsWith('s') && !w.endsWith('ss')) return w.slice(0, -1)
  return w
}

/** Signed feature hashing (FNV-1a): the sign bit halves the bias collisions add to dot products. */
function add(v: Float64Array, feature: string, weight: number): void {
  let h = 0x811c9dc5
  for (let i = 0; i < feature.length; i++) {
    h ^= feature.charCodeAt(i)
    h = Math.imul(h, 0x01000193)
  }
  h >>>= 0
  v[h % LEXICAL_DIMENSIONS] += (h & 0x80000000) !== 0 ? -weight : weight
}
