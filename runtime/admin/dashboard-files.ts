/**
 * The admin dashboard's static files (dashboard/: HTML, CSS, ES modules, no build step), served at
 * /platform/admin/ and /admin/. Each file is read once at start-up and mounted as its own exact
 * route, so a path that is not one of those files (`..`, encoded dots, anything else) is simply
 * unmatched: there is no filesystem lookup per request to escape from.
 */
import { createHash } from 'node:crypto'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { extname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { Platform } from '../platform.js'
import type { Context } from '../http/index.js'

export const DASHBOARD_BASES = ['/platform/admin', '/admin'] as const

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.json': 'application/json'
}

/**
 * Scripts, styles, images and connections from this origin only ('self' covers ws: on the same
 * host), no inline script or style attribute, no framing, no plugins.
 */
export const DASHBOARD_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
  "font-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'; object-src 'none'"

export interface DashboardFile {
  /** Relative to dashboard/, with forward slashes. */
  path: string
  type: string
  body: Buffer
  etag: string
}

/** dashboard/ from the sources (runtime/admin) or from dist/runtime/admin. */
export function dashboardDir(): string | undefined {
  for (const rel of ['../../dashboard', '../../../dashboard']) {
    const dir = fileURLToPath(new URL(rel, import.meta.url))
    if (existsSync(join(dir, 'index.html'))) return dir
  }
  return undefined
}

/** Every servable file under `dir` (known types only: the folder's README is not served). */
export function readDashboard(dir: string): DashboardFile[] {
  const out: DashboardFile[] = []
  const walk = (sub: string): void => {
    for (const entry of readdirSync(join(dir, sub), { withFileTypes: true })) {
      const rel = sub === '' ? entry.name : `${sub}/${entry.name}`
      if (entry.name.startsWith('.')) continue
      if (entry.isDirectory()) walk(rel)
      else if (entry.isFile() && TYPES[extname(entry.name)] !== undefined) {
        const body = readFileSync(join(dir, rel))
        const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"`
        out.push({ path: rel, type: TYPES[extname(entry.name)]!, body, etag })
      }
    }
  }
  walk('')
  out.push(...vendorFiles())
  return out
}

/**
 * Browser builds of packages the pages import, served from the platform itself (the CSP allows
 * scripts from this origin only): `vendor/canonicalize.js` rebuilds the bytes a commitment
 * record's signature covers.
 */
const VENDOR: Record<string, string> = { 'vendor/canonicalize.js': 'canonicalize' }

function vendorFiles(): DashboardFile[] {
  return Object.entries(VENDOR).map(([path, specifier]) => {
    const body = readFileSync(fileURLToPath(import.meta.resolve(specifier)))
    const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"`
    return { path, type: TYPES['.js']!, body, etag }
  })
}

function serve(ctx: Context, file: DashboardFile): void {
  // names are not versioned: the browser revalidates every time and gets a 304 while unchanged
  ctx.setHeader('cache-control', 'no-cache')
  ctx.setHeader('etag', file.etag)
  ctx.setHeader('x-content-type-options', 'nosniff')
  ctx.setHeader('referrer-policy', 'no-referrer')
  if (file.type.startsWith('text/html')) {
    ctx.setHeader('content-security-policy', DASHBOARD_CSP)
    ctx.setHeader('x-frame-options', 'DENY')
  }
  if (ctx.header('if-none-match') === file.etag) {
    ctx.empty(304)
    return
  }
  ctx.send(200, file.body, file.type)
}

/** Mounts the dashboard under both bases; a bare base redirects to its trailing slash. */
export function mountDashboard(platform: Platform, files: readonly DashboardFile[]): void {
  const index = files.find((f) => f.path === 'index.html')
  for (const base of DASHBOARD_BASES) {
    for (const file of files)
      platform.http.get(`${base}/${file.path}`, (ctx) => {
        serve(ctx, file)
      })
    if (index === undefined) continue
    platform.http.get(`${base}/`, (ctx) => {
      serve(ctx, index)
    })
    platform.http.get(base, (ctx) => {
      ctx.setHeader('location', `${base}/`)
      ctx.empty(308)
    })
  }
}
