// Turns a shell block into steps and runs them: `curl` against the test server (the documented
// host and port rewritten), `platform ...`/`npx platform ...` through bin/platform.js.
//
// Conventions a page follows so that its commands can be checked:
// - a comment line directly under a command (no blank line between) is output the command must
//   print, `→ ` in front is allowed; `…` stands for anything, and a hex prefix with `…` (`9d3e…`)
//   is a value: the first output binds it and later commands and outputs use the same value;
// - a trailing comment that is a status (`# 204`) is the HTTP status the command must get (else 2xx);
//   for `platform` commands `# exit N` is the exit code (else 0);
// - `NAME=...` sets a shell variable, `...` meaning the value the page's example comment gives.
import { spawn } from 'node:child_process'
import { join } from 'node:path'
import { ROOT } from './doc-pages.js'

export interface Step {
  /** Line in the page where the command starts. */
  line: number
  command: string
  kind: 'curl' | 'platform' | 'assign' | 'other'
  expected: string[]
  status?: number
}

/** Splits the block at line `first` (its fence) into commands with what the page says they print. */
export function steps(text: string, first: number): Step[] {
  const out: Step[] = []
  const lines = text.split('\n')
  let last: Step | undefined
  for (let i = 0; i < lines.length; i++) {
    const line = first + 1 + i
    let cmd = lines[i]!.trim()
    if (cmd === '') {
      last = undefined
      continue
    }
    if (cmd.startsWith('#')) {
      if (last !== undefined && last.kind !== 'assign')
        last.expected.push(cmd.replace(/^#\s?/, '').replace(/^→\s*/, '').trim())
      continue
    }
    // continued with a backslash, or a quoted argument spanning lines
    for (;;) {
      if (cmd.endsWith('\\') && i + 1 < lines.length) cmd = cmd.slice(0, -1) + ' ' + lines[++i]!.trim()
      else if (openQuote(cmd) && i + 1 < lines.length) cmd = cmd + '\n' + lines[++i]!
      else break
    }
    const { code, comment } = splitComment(cmd)
    const kind = /^[A-Z_][A-Z0-9_]*=/.test(code)
      ? 'assign'
      : /^curl\s/.test(code)
        ? 'curl'
        : /^(npx\s+)?platform\s/.test(code)
          ? 'platform'
          : 'other'
    const step: Step = { line, command: code, kind, expected: [] }
    const st = comment !== undefined ? /^(?:exit\s+)?(\d{1,3})$/.exec(comment) : null
    if (st !== null) step.status = Number(st[1])
    out.push(step)
    last = step
  }
  return out
}

function openQuote(cmd: string): boolean {
  let q: string | undefined
  for (let i = 0; i < cmd.length; i++) {
    const c = cmd[i]!
    if (q !== undefined) {
      if (c === q) q = undefined
      else if (c === '\\' && q === '"') i++
    } else if (c === "'" || c === '"') q = c
    else if (c === '\\') i++
    else if (c === '#' && (i === 0 || /\s/.test(cmd[i - 1]!))) return false
  }
  return q !== undefined
}

/** The command and its trailing `# comment` (a `#` outside quotes, after a space). */
function splitComment(cmd: string): { code: string; comment?: string } {
  let q: string | undefined
  for (let i = 0; i < cmd.length; i++) {
    const c = cmd[i]!
    if (q !== undefined) {
      if (c === q) q = undefined
      else if (c === '\\' && q === '"') i++
      continue
    }
    if (c === "'" || c === '"') q = c
    else if (c === '#' && i > 0 && /\s/.test(cmd[i - 1]!))
      return { code: cmd.slice(0, i).trim(), comment: cmd.slice(i + 1).trim() }
  }
  return { code: cmd }
}

const PLACEHOLDER = /([0-9a-f]{2,})?…/g
const esc = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')

/**
 * Finds `expected` in `output`, binding new placeholders into `bound`. Returns a reason on mismatch.
 */
export function matchOutput(expected: string, output: string, bound: Map<string, string>): string | undefined {
  const names: string[] = []
  let re = ''
  let at = 0
  for (const m of expected.matchAll(PLACEHOLDER)) {
    re += literal(expected.slice(at, m.index))
    at = m.index + m[0].length
    const name = m[1] !== undefined ? m[0] : undefined
    if (name === undefined) re += '[\\s\\S]*?'
    else if (bound.has(name)) re += esc(bound.get(name)!)
    else if (names.includes(name)) re += `\\k<p${names.indexOf(name)}>`
    // the hex prefix on the page is illustrative: any value binds
    else {
      re += `(?<p${names.length}>[^"\\s,}\\]]+)`
      names.push(name)
    }
  }
  re += literal(expected.slice(at))
  const found = new RegExp(re).exec(output)
  if (found === null) return `expected output containing ${JSON.stringify(expected)}`
  names.forEach((n, i) => bound.set(n, found.groups![`p${i}`]!))
  return undefined
}

// spaces in the page are layout; the server's JSON has none
const literal = (s: string) => s.split(/\s+/).map(esc).join('\\s*')

/** Replaces bound placeholders in a command; an unbound one is an error the caller reports. */
export function substitute(command: string, bound: Map<string, string>): { command: string; unbound: string[] } {
  const unbound: string[] = []
  const out = command.replace(PLACEHOLDER, (m) => {
    const v = bound.get(m)
    if (v === undefined) unbound.push(m)
    return v ?? m
  })
  return { command: out, unbound }
}

/** The documented address (localhost:8080, 127.0.0.1:8080, with or without http://) becomes the test server's. */
export const rewriteHost = (command: string, port: number) =>
  command.replace(/(?:https?:\/\/)?(?:localhost|127\.0\.0\.1):8080/g, `http://127.0.0.1:${port}`)

export interface Ran {
  command: string
  exit: number | null
  status?: number
  output: string
}

const STATUS = '\n@@docs-status=%{http_code}'

/**
 * Runs a curl command through bash in `cwd` (a scratch folder: `-o file` stays out of the repository);
 * a stream (`-N`) is cut after `streamSec` and counts as ended.
 */
export async function runCurl(command: string, env: Record<string, string>, cwd: string, streamSec = 2): Promise<Ran> {
  const stream = /\s-N\b/.test(command)
  const curl = `curl --silent --show-error --max-time ${stream ? streamSec : 15} --write-out '${STATUS}'`
  const run = await sh(command.replace(/^curl\b/, curl), env, cwd)
  const m = /\n@@docs-status=(\d+)$/.exec(run.stdout)
  const output = (m === null ? run.stdout : run.stdout.slice(0, m.index)) + run.stderr
  const exit = stream && run.exit === 28 ? 0 : run.exit
  return { command, exit, ...(m !== null ? { status: Number(m[1]) } : {}), output }
}

/** Runs `platform ...` (or `npx platform ...`) with the built CLI, from the repository. */
export async function runPlatform(command: string, env: Record<string, string>): Promise<Ran> {
  const bin = `node --no-node-snapshot ${join(ROOT, 'bin', 'platform.js')}`
  const run = await sh(command.replace(/^(npx\s+platform|node\s+bin\/platform\.js|platform)(?=\s|$)/, bin), env, ROOT)
  return { command, exit: run.exit, output: run.stdout + run.stderr }
}

function sh(
  script: string,
  vars: Record<string, string>,
  cwd: string
): Promise<{ exit: number | null; stdout: string; stderr: string }> {
  // nothing of the runner's PLATFORM_* settings leaks into the documented command
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: process.env.HOME ?? '/tmp',
    ...vars
  }
  return new Promise((resolve) => {
    // no rc files, and stdin not a socket: bash reads ~/.bashrc when its stdin is a socket (it takes
    // itself for a remote shell, and Node's stdio pipes are socket pairs), and a developer's rc file
    // (pyenv init, nvm) costs about a second of CPU per command and may change what the command does
    const p = spawn('bash', ['--norc', '--noprofile', '-c', script], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] })
    let stdout = ''
    let stderr = ''
    p.stdout.on('data', (d) => {
      stdout += d
    })
    p.stderr.on('data', (d) => {
      stderr += d
    })
    const kill = setTimeout(() => p.kill('SIGKILL'), 30_000)
    p.on('close', (exit) => {
      clearTimeout(kill)
      resolve({ exit, stdout, stderr })
    })
  })
}
