import { existsSync, readFileSync, rmSync } from 'node:fs'
import { parseArgs } from 'node:util'
import { CONFIG_ERRORS, EX_CONFIG } from '../config/index.js'
import { PlatformError, isPlatformError } from '../contracts/index.js'
import type { FirstRunToken } from '../auth/index.js'
import type { Config } from '../config/index.js'

const pkg = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string }

export const USAGE = `Usage: platform <command> [options]

Commands:
  serve                 Serve the platform (HTTP, WebSocket, SSE on one port)
  plugins list          Static check of the plugin directories (not a running server): version, sandbox, state, contributions (--json)
  plugins validate DIR  Check a plugin folder; exits 1 with the errors
  plugins new NAME      Scaffold a working plugin with its own test (--dir PARENT, default ./plugins)
  token create --principal NAME [--role R ...] [--config FILE]
                        Print a new API token once; FILE keeps only its SHA-256
  mcp-stdio --url URL   Bridge a stdio-only MCP client to an HTTP MCP endpoint (--header 'Name: value', repeatable)

Options of serve:
  --port N              TCP port (platform.server.port, default 8080; 0 picks a free one)
  --host H              Interface (platform.server.host, default 127.0.0.1; 0.0.0.0 exposes all)
  --config FILE         YAML configuration file (default ./platform.yaml when present)
  --data DIR            LMDB data directory (platform.data-dir, default ./data)
  --plugins DIR         Plugin directory; repeat for several (platform.plugins.dirs)
  --log-level L         trace|debug|info|warn|error|fatal|silent
  --set KEY=VALUE       Any configuration key (value parsed as JSON when it parses)

  -h, --help            Show this help
  -v, --version         Show the version

Configuration precedence: defaults < platform.yaml < PLATFORM_* environment < flags.
SIGHUP re-reads the configuration and applies changed plugin grants; an operator error exits 78.
Not on PATH? From the checkout run node bin/platform.js <command>; in a project depending on uws-agent-platform, npx platform <command>.
`

type Out = { log: (s: string) => void; error: (s: string) => void }

/** Runs the CLI; resolves with the exit code (serve resolves after a graceful shutdown). */
export async function main(
  argv: string[],
  out: Out = { log: (s) => process.stdout.write(s + '\n'), error: (s) => process.stderr.write(s + '\n') }
): Promise<number> {
  let parsed
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        port: { type: 'string' },
        host: { type: 'string' },
        config: { type: 'string' },
        data: { type: 'string' },
        plugins: { type: 'string', multiple: true },
        'log-level': { type: 'string' },
        set: { type: 'string', multiple: true },
        json: { type: 'boolean' },
        dir: { type: 'string' },
        url: { type: 'string' },
        header: { type: 'string', multiple: true },
        principal: { type: 'string' },
        role: { type: 'string', multiple: true },
        help: { type: 'boolean', short: 'h' },
        version: { type: 'boolean', short: 'v' }
      }
    })
  } catch (e) {
    out.error(`platform: ${(e as Error).message}\n\n${USAGE}`)
    return 2
  }
  const { values, positionals } = parsed
  if (values.version === true) {
    out.log(pkg.version)
    return 0
  }
  if (values.help === true || positionals.length === 0) {
    out.log(USAGE)
    return positionals.length === 0 && values.help !== true ? 2 : 0
  }
  const command = positionals[0]
  // each command loads only what it runs: --version or token create answer at once, where the whole
  // platform (every area, isolated-vm, LMDB) takes seconds to import
  if (command === 'plugins' && positionals[1] === 'new')
    return (await import('./plugins.js')).pluginsNew(positionals[2], values.dir, out)
  if (command === 'plugins' && positionals[1] === 'validate') {
    try {
      return await (await import('./plugins.js')).pluginsValidate(positionals[2], out)
    } catch (e) {
      out.error(`platform: ${(e as Error).stack ?? String(e)}`)
      return 1
    }
  }
  if (command === 'plugins' && positionals[1] !== 'list') {
    out.error(
      `platform: ${positionals[1] === undefined ? 'plugins needs a subcommand' : `unknown plugins subcommand '${positionals[1]}'`}\n\n${(await import('./plugins.js')).PLUGINS_USAGE}`
    )
    return 2
  }
  if (command === 'token') return (await import('./token.js')).tokenCreate(positionals[1], values, out)
  if (command === 'mcp-stdio') {
    // stdout carries the protocol: every message from here on goes to stderr
    if (values.url === undefined || !/^https?:\/\//.test(values.url)) {
      out.error(`platform: mcp-stdio needs --url http(s)://host:port/path\n\n${USAGE}`)
      return 2
    }
    const { StdioBridge, parseHeaders } = await import('./mcp-stdio.js')
    let headers
    try {
      headers = parseHeaders(values.header)
    } catch (e) {
      out.error(`platform: ${(e as Error).message}`)
      return 2
    }
    return await new StdioBridge({
      url: values.url,
      headers,
      log: (s) => {
        out.error(`mcp-stdio: ${s}`)
      }
    }).run()
  }
  if (command !== 'serve' && command !== 'plugins') {
    out.error(`platform: unknown command '${command}'\n\n${USAGE}`)
    return 2
  }

  const overrides: Record<string, unknown> = {}
  try {
    if (values.port !== undefined) overrides['platform.server.port'] = intFlag('--port', values.port)
    if (values.host !== undefined) overrides['platform.server.host'] = values.host
    if (values.data !== undefined) overrides['platform.data-dir'] = values.data
    if (values.plugins !== undefined) {
      // a path typed on the command line that does not exist is a typo, not a directory to wait for
      for (const d of values.plugins)
        if (!existsSync(d))
          throw new PlatformError(CONFIG_ERRORS.OPERATOR_MISTAKE, { detail: `--plugins ${d}: no such directory` })
      overrides['platform.plugins.dirs'] = values.plugins
    }
    if (values['log-level'] !== undefined) overrides['platform.log-level'] = values['log-level']
    for (const kv of values.set ?? []) {
      const i = kv.indexOf('=')
      if (i <= 0)
        throw new PlatformError(CONFIG_ERRORS.CONFIG_INVALID, { detail: `--set expects KEY=VALUE, got '${kv}'` })
      const raw = kv.slice(i + 1)
      let v: unknown = raw
      try {
        v = JSON.parse(raw)
      } catch {
        /* a plain string */
      }
      overrides[kv.slice(0, i)] = v
    }
    const { loadConfig } = await import('../areas.js')
    const config = loadConfig({ file: values.config, overrides })
    if (command === 'plugins')
      return await (await import('./plugins.js')).pluginsList(config, values.json === true, out)
    // the first-run token joins the configured ones as a hash; the configuration files stay as they are
    const first = (await import('../auth/index.js')).firstRunToken(config)
    const withFirst = first === undefined ? overrides : { ...overrides, 'platform.auth.tokens': [first.entry] }
    const load = () => loadConfig({ file: values.config, overrides: withFirst })
    return await serve(first === undefined ? config : load(), out, load, first)
  } catch (e) {
    if (isPlatformError(e, CONFIG_ERRORS.CONFIG_INVALID)) {
      out.error(`platform: configuration error: ${e.message}`)
      return EX_CONFIG
    }
    // a mistake the operator can fix: one line, no stack trace
    if (isPlatformError(e) && e.def.operator === true) {
      out.error(`platform: ${e.message.replace(/\s*\n\s*/g, ' ')}`)
      return EX_CONFIG
    }
    out.error(`platform: ${(e as Error).stack ?? String(e)}`)
    return 1
  }
}

function intFlag(name: string, v: string): number {
  if (!/^\d+$/.test(v))
    throw new PlatformError(CONFIG_ERRORS.CONFIG_INVALID, { detail: `${name} expects an integer, got '${v}'` })
  return Number(v)
}

async function serve(config: Config, out: Out, reread: () => Config, firstRun?: FirstRunToken): Promise<number> {
  let started
  try {
    const [{ startPlatform }, { installAreas }] = await Promise.all([import('../platform.js'), import('../areas.js')])
    started = await startPlatform({ config, install: installAreas })
  } catch (err) {
    // a token nobody was shown is of no use: the next start makes and prints another
    if (firstRun?.token !== undefined) rmSync(firstRun.file, { force: true })
    throw err
  }
  const { platform, url } = started
  // stdout carries JSON log records only: the record for machines, the plain line on stderr for people
  platform.logger.info({ url }, 'platform listening')
  out.error(`platform listening on ${url}`)
  // SIGHUP reads the configuration again and applies the plugin grants; other keys need a restart
  let current = config
  const hup = (): void => {
    let next
    try {
      next = reread()
    } catch (e) {
      platform.logger.error(
        { error: (e as Error).message },
        `SIGHUP: configuration not reloaded, the running one stays: ${(e as Error).message}`
      )
      return
    }
    const keys = [...new Set([...Object.keys(current.values), ...Object.keys(next.values)])]
    const other = keys.filter(
      (k) =>
        (!k.startsWith('platform.plugins.') || k === 'platform.plugins.dirs') &&
        JSON.stringify(current.values[k]) !== JSON.stringify(next.values[k])
    )
    if (other.length > 0)
      platform.logger.warn(
        { keys: other },
        `SIGHUP applies only plugin grants (platform.plugins.<name>); restart to apply ${other.join(', ')}`
      )
    current = next
    platform.pluginHost.reloadGrants(next).catch((err: unknown) => {
      platform.logger.error({ err }, 'SIGHUP: reloading plugin grants failed')
    })
  }
  // set before anything awaits: a signal right after 'platform listening' (a script that starts the
  // platform and stops it at once) must neither kill the process nor skip the graceful close
  process.on('SIGHUP', hup)
  const exited = new Promise<number>((resolve) => {
    let stopping = false
    const stop = (signal: string) => {
      if (stopping) return
      stopping = true
      process.off('SIGHUP', hup)
      platform.logger.info({ signal }, 'shutting down')
      const force = setTimeout(() => {
        out.error('platform: shutdown took longer than 5 s, exiting')
        resolve(1)
      }, 5000)
      force.unref()
      platform.close().then(
        () => {
          clearTimeout(force)
          resolve(0)
        },
        (err) => {
          out.error(String(err))
          resolve(1)
        }
      )
    }
    process.once('SIGINT', () => {
      stop('SIGINT')
    })
    process.once('SIGTERM', () => {
      stop('SIGTERM')
    })
  })
  const agents = platform.plugins.agents().map((a) => a.name)
  const { startBanner } = await import('./start-banner.js')
  for (const line of startBanner({ url, config, agents, firstRun, node: platform.node.id })) out.error(line)
  return await exited
}

const isMain = process.argv[1] !== undefined && import.meta.url === new URL(`file://${process.argv[1]}`).href
if (isMain) {
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (err) => {
      console.error(err)
      process.exit(1)
    }
  )
}
