/** A duration in ISO-8601 form as Java's `Duration.toString` writes it: PT2M, PT1M30S, PT0.5S. */
export function isoDuration(ms: number): string {
  const total = Math.max(0, Math.round(ms))
  const hours = Math.floor(total / 3_600_000)
  const minutes = Math.floor((total % 3_600_000) / 60_000)
  const millis = total % 60_000
  let out = 'PT'
  if (hours > 0) out += `${hours}H`
  if (minutes > 0) out += `${minutes}M`
  if (millis > 0 || out === 'PT') out += `${String(millis / 1000)}S`
  return out
}
