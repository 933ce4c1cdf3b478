import { readFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { CONFIG_ERRORS, type Config, type KeyDefs } from './config/index.js'
import { EventBus, InProcessHub } from './events/index.js'
import { HttpServer, HTTP_ERRORS } from './http/index.js'
import { createLogger, Metrics, readinessOf, type Logger, type ReadinessCheck } from './observability/index.js'
import {
  CorePostgres,
  InProcessCounters,
  STORE_ERRORS,
  Store,
  countAndLogWriteFailures,
  nodeIdentity,
  openPlatformPostgres,
  postgresReadiness,
  type PostgresDb
} from './store/index.js'
import {
  PluginHost,
  PluginRegistry,
  PLUGINS_ERRORS,
  pluginKvFromConfig,
  type PluginHostOptions
} from './plugins/index.js'
import {
  TokenResolver,
  PrincipalResolver,
  PRINCIPAL_SOURCES,
  ControlAuditLog,
  auditLogFromConfig,
  WriteGate,
  AUTH_ERRORS,
  authorizerFromConfig,
  type ControlAuthorizer
} from './auth/index.js'
import {
  CORE,
  PlatformError,
  mergeErrors,
  type AreaKey,
  type ErrorDefs,
  type ErrorSource,
  type ExtensionPoint,
  type NodeIdentity,
  BACKPLANE,
  SHARED_COUNTERS,
  type Backplane,
  type SharedCounters
} from './contracts/index.js'

export interface PlatformOptions {
  config: Config
  /** Log destination (tests pass a stream); stdout by default. */
  logDestination?: NodeJS.WritableStream
  /** Replaces the authorizer chosen by configuration. */
  authorizer?: ControlAuthorizer
  /** Timings of the plugin host (tests shorten them); the rest comes from the configuration. */
  pluginHost?: Pick<PluginHostOptions, 'rescanMs' | 'debounceMs' | 'loadTimeoutMs'>
  /** Attaches the areas (transport, MCP, governance, ...) before the server listens. */
  install?: (platform: Platform) => void | Promise<void>
}

/**
 * One area of the platform: its name, the areas it needs installed first, and its install, which
 * adds routes, readiness checks and close hooks and `provide`s the area's service under its key.
 */
export interface Area {
  readonly name: string
  readonly dependsOn: readonly string[]
  /** The configuration keys the area owns (`runtime/<area>/config-keys.ts`); the loader knows them all. */
  readonly configKeys?: KeyDefs
  /** The error codes the area declares (`defineErrors` in its `errors.ts`); the catalogue is their union. */
  readonly errors?: ErrorDefs
  install(platform: Platform): void | Promise<void>
}

/** The core's error codes (config, HTTP, read and write gates, plugin host, shared stores); areas add theirs. */
export const CORE_ERRORS: readonly ErrorSource[] = [
  { owner: 'config', errors: CONFIG_ERRORS },
  { owner: 'http', errors: HTTP_ERRORS },
  { owner: 'auth', errors: AUTH_ERRORS },
  { owner: 'plugins', errors: PLUGINS_ERRORS },
  { owner: 'store', errors: STORE_ERRORS }
]

/**
 * The composition root: one object holding every shared service. Areas are attached by their
 * own `install(platform)` functions (transport, plugins, MCP, governance, admin) so that this file
 * stays the wiring diagram, not the implementation.
 */
export class Platform {
  readonly config: Config
  readonly logger: Logger
  readonly metrics = new Metrics()
  readonly bus = new EventBus()
  readonly http: HttpServer
  readonly store: Store
  /** This node among those sharing a database: the owner recorded on the runs it starts. */
  readonly node: NodeIdentity
  readonly principals: PrincipalResolver
  /** The platform's version (package.json), for the MCP server info and the admin overview. */
  readonly version = packageVersion()
  readonly audit: ControlAuditLog
  readonly writeGate: WriteGate
  /** What plugins contribute; MCP, governance and scope read it. */
  readonly plugins: PluginRegistry
  /**
   * Loads the plugin directories into `plugins` and keeps them in step with the disk (readiness
   * check `plugins`). Core, like the registry it fills: `startPlatform` loads before any area installs.
   */
  readonly pluginHost: PluginHost
  /** The framework property bag (`org.platform.ai.governance.policies` lives here). */
  readonly properties = new Map<string, unknown>()
  private readonly areas = new Map<AreaKey<unknown>, unknown>()
  private readonly installed = new Set<string>()
  private readonly extended = new Map<ExtensionPoint<unknown>, unknown[]>()
  /** The area whose install runs now: `extend` checks its declaration. */
  private installing: Area | undefined
  private listening = false
  private readonly errorSources: ErrorSource[] = [...CORE_ERRORS]
  private readonly readiness = new Map<string, ReadinessCheck>()
  private readonly localBackplane: Backplane
  private readonly localCounters = new InProcessCounters()
  /** The pool of the core's stores kept in PostgreSQL (`corePool.for(key)`, see CorePostgres). */
  readonly corePool: CorePostgres
  private readonly closers: (() => void | Promise<void>)[] = []
  private closed = false
  private sharedPostgres: Promise<PostgresDb> | undefined

  constructor(opts: PlatformOptions) {
    const config = (this.config = opts.config)
    this.logger = createLogger(
      config.get('platform.log-level'),
      opts.logDestination !== undefined ? { destination: opts.logDestination } : {}
    )
    this.bus.onError = (err, event) => {
      this.logger.error({ err, event: event.type }, 'event listener failed')
    }
    // before the store opens: a malformed platform.server.trusted-proxies stops start-up with nothing to close
    this.http = new HttpServer({
      logger: this.logger,
      metrics: this.metrics,
      bodyLimit: config.get('platform.server.body-limit-bytes'),
      jsonMaxDepth: config.get('platform.server.json-max-depth'),
      corsOrigins: config.get('platform.server.cors.origins'),
      allowedOrigins: config.get('platform.server.allowed-origins'),
      trustedProxies: config.get('platform.server.trusted-proxies'),
      heartbeatMs: config.get('platform.transport.heartbeat-seconds') * 1000
    })
    this.store = new Store(resolve(config.get('platform.data-dir')))
    this.corePool = new CorePostgres(config, (forWhat) => this.postgres(forWhat))
    this.node = nodeIdentity(config.get('platform.cluster.node-id'), this.store.path)
    this.localBackplane = new InProcessHub().node(this.node.id)
    this.plugins = new PluginRegistry(this.bus)
    this.pluginHost = new PluginHost({
      config,
      logger: this.logger.child({ area: 'plugins' }),
      registry: this.plugins,
      capabilities: {
        logger: this.logger,
        kv: pluginKvFromConfig(config, this.store, this.corePool),
        agentTurns: this.plugins.agentTurns,
        runtimeStreams: this.plugins.runtimeStreams
      },
      metrics: this.metrics,
      ...opts.pluginHost
    })
    this.principals = new PrincipalResolver(new TokenResolver(config.get('platform.auth.tokens')), () =>
      this.extensions(PRINCIPAL_SOURCES)
    )
    this.audit = auditLogFromConfig(config, {
      store: this.store,
      node: this.node.id,
      postgres: (key) => this.corePool.for(key),
      onWriteFailure: countAndLogWriteFailures(this.metrics.storeWriteFailures, this.logger),
      onDenied: this.metrics.countAnonymousDenied('audit')
    })
    const authorizer =
      opts.authorizer ??
      authorizerFromConfig(
        config.get('platform.admin.authorizer'),
        config.get('platform.admin.require-principal'),
        config.get('platform.admin.authorizer-roles')
      )
    this.writeGate = new WriteGate(config, this.principals, authorizer, this.audit, this.bus)
    this.addReadiness('store', () => this.store.isOpen)
    this.addReadiness('plugins', () => this.pluginHost.ready)
    this.installCoreRoutes()
  }

  /**
   * Installs one area after checking its declared dependencies are installed already and it is
   * not installed twice, so a wrong order fails at start-up with the names involved.
   */
  async use(area: Area): Promise<void> {
    if (this.installed.has(area.name)) throw new Error(`area "${area.name}" is installed twice`)
    for (const dep of area.dependsOn) {
      if (!this.installed.has(dep)) throw new Error(`area "${area.name}" depends on "${dep}", which is not installed`)
    }
    if (area.errors !== undefined) {
      const sources = [...this.errorSources, { owner: area.name, errors: area.errors }]
      mergeErrors(sources) // a code another area already declares stops start-up, naming both
      this.errorSources.push(sources[sources.length - 1]!)
    }
    this.installed.add(area.name)
    this.installing = area
    try {
      await area.install(this)
    } finally {
      this.installing = undefined
    }
  }

  /** The error codes of the core and of every area installed so far (the OpenAPI document lists them). */
  get errors(): ErrorDefs {
    return mergeErrors(this.errorSources)
  }

  /** Names of the areas installed so far, in installation order. */
  get areaNames(): string[] {
    return [...this.installed]
  }

  /**
   * Publishes an area's service under its key (once per key) and freezes it, so no other area
   * changes it after install: an area that extends another goes through an ExtensionPoint.
   */
  provide<T>(key: AreaKey<T>, value: T): void {
    if (this.areas.has(key)) throw new Error(`area "${key.name}" is provided twice`)
    this.areas.set(key, typeof value === 'object' && value !== null ? Object.freeze(value) : value)
  }

  /**
   * Adds a value at an extension point another area declared. Allowed before the platform
   * listens: during the install of an area that declares the point's owner in `dependsOn` (a
   * point of the core, any area), or from the composition root outside any install.
   */
  extend<T>(point: ExtensionPoint<T>, value: T): void {
    if (this.listening) throw new Error(`${point} is closed: extensions are added before the platform listens`)
    const by = this.installing
    if (by !== undefined && point.owner !== CORE && point.owner !== by.name && !by.dependsOn.includes(point.owner))
      throw new Error(`area "${by.name}" extends ${point} without declaring "${point.owner}" in dependsOn`)
    const values = this.extended.get(point) ?? []
    if (point.single && values.length > 0) throw new Error(`${point} takes one value and has one already`)
    values.push(value)
    this.extended.set(point, values)
  }

  /** The values added at an extension point, in the order they were added; empty when none. */
  extensions<T>(point: ExtensionPoint<T>): readonly T[] {
    return (this.extended.get(point) as T[] | undefined) ?? NONE
  }

  /** The service an area provided; throws when that area is not installed. */
  area<T>(key: AreaKey<T>): T {
    if (!this.areas.has(key)) throw new Error(`area "${key.name}" is not installed`)
    return this.areas.get(key) as T
  }

  /** Whether an area provided its service (an area may be installed yet switched off by configuration). */
  hasArea(key: AreaKey<unknown>): boolean {
    return this.areas.has(key)
  }

  /** Adds a readiness check to `/readyz` (see `ReadinessCheck`). */
  addReadiness(name: string, check: ReadinessCheck): void {
    this.readiness.set(name, check)
  }

  /**
   * The backplane to other nodes: the one the cluster area added in cluster mode, else this node's
   * in-process one (which reaches no other process).
   */
  backplane(): Backplane {
    return this.extensions(BACKPLANE)[0] ?? this.localBackplane
  }

  /**
   * The counts limits share: the cluster area's (every node) in cluster mode, else this process's
   * own, which answer synchronously.
   */
  sharedCounters(): SharedCounters {
    return this.extensions(SHARED_COUNTERS)[0] ?? this.localCounters
  }

  /**
   * The PostgreSQL pool the stores of shared state share (`platform.postgres.url`), opened by the
   * first store that asks (`forWhat` says which, for the start-up error when there is no url or no
   * server) and closed after every close hook. Readiness check `postgres` follows the server.
   */
  postgres(forWhat: string): Promise<PostgresDb> {
    this.sharedPostgres ??= openPlatformPostgres(this.config, this.logger, forWhat).then((db) => {
      this.addReadiness(
        'postgres',
        postgresReadiness(() => db.available(), this.config.get('platform.cluster.enabled'))
      )
      return db
    })
    return this.sharedPostgres
  }

  /** Runs on close after the HTTP server stopped and before the store closes (LIFO). */
  onClose(fn: () => void | Promise<void>): void {
    this.closers.push(fn)
  }

  async listen(): Promise<{ port: number; url: string }> {
    const host = this.config.get('platform.server.host')
    this.listening = true
    const port = await this.http.listen(host, this.config.get('platform.server.port'))
    // the address actually bound, even 0.0.0.0 (every interface): the operator must see what is exposed
    const shown = host.includes(':') ? `[${host}]` : host
    return { port, url: `http://${shown}:${port}` }
  }

  async close(): Promise<void> {
    if (this.closed) return
    this.closed = true
    await this.http.close(this.config.get('platform.server.shutdown-timeout-ms'))
    for (const fn of this.closers.reverse()) {
      try {
        await fn()
      } catch (err) {
        this.logger.error({ err }, 'close hook failed')
      }
    }
    // after every area's hooks, which may still call plugins; disposes every sandbox
    await this.pluginHost.close()
    // after the hooks too: a store of shared state may still write as its area closes
    await this.corePool.close()
    await this.sharedPostgres?.then(
      (db) => db.close(),
      () => {}
    )
    await this.store.close()
    this.logger.flush?.()
  }

  private installCoreRoutes(): void {
    this.http.get('/healthz', () => ({ status: 'UP' }))
    this.http.get('/readyz', (ctx) => {
      const r = readinessOf(this.readiness, this.http.isClosing)
      if (r.status !== 'DOWN') return r
      ctx.error(new PlatformError(HTTP_ERRORS.NOT_READY, {}, { extra: r }))
    })
    this.http.get('/metrics', async (ctx) => {
      ctx.send(200, await this.metrics.text(), this.metrics.contentType)
    })
  }
}

const NONE: readonly never[] = Object.freeze([])

export async function startPlatform(opts: PlatformOptions): Promise<{ platform: Platform; port: number; url: string }> {
  const platform = new Platform(opts)
  try {
    // plugins first: areas find what the plugins contribute when they install
    await platform.pluginHost.start()
    await opts.install?.(platform)
    await platform.corePool.start()
    const { port, url } = await platform.listen()
    return { platform, port, url }
  } catch (err) {
    await platform.close()
    throw err
  }
}

/** The platform's version, from its package.json (found from both the sources and dist/). */
function packageVersion(): string {
  for (const rel of ['../package.json', '../../package.json']) {
    try {
      const pkg = JSON.parse(readFileSync(new URL(rel, import.meta.url), 'utf8')) as { name?: string; version: string }
      if (pkg.name === 'uws-agent-platform') return pkg.version
    } catch {
      /* try the next */
    }
  }
  return '0.0.0'
}
