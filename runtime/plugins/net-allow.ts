/**
 * Host allow-list entries: `api.example.com` (any port), `api.example.com:8443` (that port only),
 * `*.example.com` (any subdomain, not the apex), `[::1]:8080`. Case-insensitive.
 */
function split(entry: string): { host: string; port: string | undefined } {
  const e = entry.toLowerCase()
  if (e.startsWith('[')) {
    const end = e.indexOf(']')
    const rest = e.slice(end + 1)
    return { host: e.slice(0, end + 1), port: rest.startsWith(':') ? rest.slice(1) : undefined }
  }
  const i = e.lastIndexOf(':')
  return i < 0 ? { host: e, port: undefined } : { host: e.slice(0, i), port: e.slice(i + 1) }
}

function hostMatches(pattern: string, host: string): boolean {
  if (pattern.startsWith('*.')) return host.endsWith(pattern.slice(1)) && host.length > pattern.length - 1
  return pattern === host
}

/** Whether `entry` (an allow-list entry) lets a plugin reach `host` on `port`. */
export function entryAllows(entry: string, host: string, port: string): boolean {
  const e = split(entry)
  return hostMatches(e.host, host.toLowerCase()) && (e.port === undefined || e.port === port)
}

/**
 * Whether a granted list covers an asked entry
 * (so asking `a.example.com` is covered by a grant of `*.example.com`).
 */
export function grantCovers(granted: readonly string[], asked: string): boolean {
  const a = split(asked)
  return granted.some((g) => {
    const e = split(g)
    if (e.port !== undefined && e.port !== a.port) return false
    if (e.host === a.host) return true
    return e.host.startsWith('*.') && hostMatches(e.host, a.host.startsWith('*.') ? a.host.slice(2) : a.host)
  })
}

/** Whether a URL's host and port are allowed by any entry. */
export function urlAllowed(list: readonly string[], url: URL): boolean {
  const port = url.port !== '' ? url.port : url.protocol === 'https:' ? '443' : '80'
  return list.some((entry) => entryAllows(entry, url.hostname, port))
}
