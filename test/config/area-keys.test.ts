// Adding an area touches no core file: an area declares its configuration keys beside its code,
// and the loader, the environment names, the did-you-mean and `Config.get`'s types follow.
import t from 'tap'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Writable } from 'node:stream'
import { AREAS, CONFIG_KEYS, installAreas, loadConfig } from '../../runtime/areas.js'
import { ConfigKeySet, KEY_SCHEMA, type KeyDefs, type KeyValues } from '../../runtime/config/index.js'
import { startPlatform, type Area } from '../../runtime/platform.js'

/** What a new area writes in `runtime/<area>/config-keys.ts`. */
const WIDGET_CONFIG_KEYS = {
  'platform.widgets.count': {
    schema: KEY_SCHEMA.positiveInt,
    default: 3,
    description: 'Widgets on display'
  },
  'platform.widgets.label': { schema: KEY_SCHEMA.nonEmpty, description: 'Label above the widgets' }
} as const satisfies KeyDefs

declare module '../../runtime/config/index.js' {
  interface ConfigKeys extends KeyValues<typeof WIDGET_CONFIG_KEYS> {}
}

const widgetsArea: Area = {
  name: 'widgets',
  dependsOn: [],
  configKeys: WIDGET_CONFIG_KEYS,
  install(platform) {
    // typed without a cast: a number, and a string or undefined
    const count: number = platform.config.get('platform.widgets.count')
    const label: string | undefined = platform.config.get('platform.widgets.label')
    platform.http.get('/widgets', () => ({ count, label: label ?? null }))
  }
}

const WITH_WIDGETS = [...AREAS, widgetsArea]
const dir = mkdtempSync(join(tmpdir(), 'platform-area-keys-'))
t.teardown(() => rmSync(dir, { recursive: true, force: true }))

t.test("the loader knows an area's keys: default, file, environment, overrides", async (t) => {
  t.equal(loadConfig({ env: {}, cwd: dir }, WITH_WIDGETS).get('platform.widgets.count'), 3)
  const c = loadConfig(
    { env: { PLATFORM_WIDGETS_COUNT: '7' }, cwd: dir, overrides: { 'platform.widgets.label': 'new' } },
    WITH_WIDGETS
  )
  t.equal(c.get('platform.widgets.count'), 7, 'PLATFORM_WIDGETS_COUNT is coerced to a number')
  t.equal(c.get('platform.widgets.label'), 'new')
  t.equal(c.get('platform.server.port'), 8080, 'the core keys are there too')
  // @ts-expect-error -- a misspelt key does not compile
  t.equal(c.get('platform.widgets.cuont'), undefined)
})

t.test("an area's key is validated and a misspelling gets the did-you-mean", async (t) => {
  t.throws(() => loadConfig({ env: {}, cwd: dir, overrides: { 'platform.widgets.count': 0 } }, WITH_WIDGETS), {
    code: 'PLT_ERR_CONFIG_INVALID',
    message: "config key 'platform.widgets.count' must be >= 1; got 0 (from command line)"
  })
  t.throws(() => loadConfig({ env: {}, cwd: dir, overrides: { 'platform.widgets.cuont': 4 } }, WITH_WIDGETS), {
    code: 'PLT_ERR_CONFIG_INVALID',
    message: "unknown config key 'platform.widgets.cuont' (from command line) (did you mean 'platform.widgets.count'?)"
  })
  t.throws(() => loadConfig({ env: { PLATFORM_WIDGETS_CUONT: '4' }, cwd: dir }, WITH_WIDGETS), {
    message: /unknown environment variable PLATFORM_WIDGETS_CUONT.*did you mean 'platform\.widgets\.count'/
  })
  t.throws(
    () => loadConfig({ env: {}, cwd: dir, overrides: { 'platform.widgets.count': 4 } }),
    { message: /unknown config key 'platform\.widgets\.count'/ },
    'without the area the key is unknown'
  )
})

t.test('a platform with the extra area serves what its key says', async (t) => {
  const dataDir = mkdtempSync(join(dir, 'data-'))
  const config = loadConfig(
    {
      env: {},
      cwd: dataDir,
      overrides: {
        'platform.server.port': 0,
        'platform.data-dir': dataDir,
        'platform.plugins.dirs': [],
        'platform.widgets.count': 5
      }
    },
    WITH_WIDGETS
  )
  const { platform, url } = await startPlatform({
    config,
    logDestination: new Writable({ write: (_c, _e, cb) => cb() }),
    install: (p) => installAreas(p, [widgetsArea])
  })
  t.teardown(() => platform.close())
  t.same(await (await fetch(`${url}/widgets`)).json(), { count: 5, label: null })
})

t.test('a key declared by two owners is refused, naming both', async (t) => {
  const clash: Area = {
    ...widgetsArea,
    name: 'clash',
    configKeys: { 'platform.widgets.count': WIDGET_CONFIG_KEYS['platform.widgets.count'] }
  }
  t.throws(() => new ConfigKeySet([widgetsArea, clash]), {
    message: "config key 'platform.widgets.count' is declared by both widgets and clash"
  })
  const core: Area = {
    ...widgetsArea,
    name: 'again',
    configKeys: { 'platform.server.port': { schema: {}, description: 'x' } }
  }
  t.throws(() => new ConfigKeySet([core]), {
    message: "config key 'platform.server.port' is declared by both core and again"
  })
})

t.test('every served area that declares keys is their owner in the union', async (t) => {
  for (const area of AREAS)
    for (const key of Object.keys(area.configKeys ?? {})) t.equal(CONFIG_KEYS.ownerOf(key), area.name, key)
  t.equal(CONFIG_KEYS.ownerOf('platform.server.port'), 'core')
})
