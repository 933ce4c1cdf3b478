/** Levenshtein distance: how many single-character edits turn `a` into `b`. */
export function editDistance(a: string, b: string): number {
  const dp = Array.from({ length: b.length + 1 }, (_, i) => i)
  for (let i = 1; i <= a.length; i++) {
    let prev = dp[0]!
    dp[0] = i
    for (let j = 1; j <= b.length; j++) {
      const tmp = dp[j]!
      dp[j] = Math.min(dp[j]! + 1, dp[j - 1]! + 1, prev + (a[i - 1] === b[j - 1] ? 0 : 1))
      prev = tmp
    }
  }
  return dp[b.length]!
}

/** The candidate closest to `word` within `max` edits (ties: the first), or undefined. */
export function closest(word: string, candidates: Iterable<string>, max = 3): string | undefined {
  let best: string | undefined
  let bestScore = Infinity
  for (const c of candidates) {
    const d = editDistance(c, word)
    if (d < bestScore) {
      bestScore = d
      best = c
    }
  }
  return bestScore <= max ? best : undefined
}

/** ` (did you mean 'x'?)` when a candidate is close enough, else ''. */
export function didYouMean(word: string, candidates: Iterable<string>, max = 3): string {
  const c = closest(word, candidates, max)
  return c === undefined ? '' : ` (did you mean '${c}'?)`
}
