// Internal to the plugin host (not for plugin authors): turns a definePlugin() value into plain
// descriptors and runs one contribution by (kind, name). Pure JavaScript, so the inline, worker and
// isolate tiers all share this one implementation.

const pick = (o, keys) => {
  const r = {}
  for (const k of keys) if (o[k] !== undefined) r[k] = o[k]
  return r
}

function describeTool(t) {
  return {
    name: t.name,
    description: t.description ?? '',
    input: t.input ?? { type: 'object', properties: {} },
    longRunning: t.longRunning === true,
    ...pick(t, ['title', 'iconUrl', 'uiResource', 'taskSupport'])
  }
}

/** Plain-data descriptor of everything a plugin contributes. */
export function describePlugin(def) {
  if (def === null || typeof def !== 'object' || def.__platform !== 'plugin')
    throw new TypeError('the entry module must default-export definePlugin({...})')
  return {
    tools: def.tools.map(describeTool),
    resources: def.resources.map((r) => ({
      uri: r.uri,
      name: r.name ?? '',
      description: r.description ?? '',
      mimeType: r.mimeType ?? 'text/plain'
    })),
    prompts: def.prompts.map((p) => ({
      name: p.name,
      description: p.description ?? '',
      arguments: (p.arguments ?? []).map((a) => ({
        name: a.name,
        description: a.description ?? '',
        required: a.required !== false
      }))
    })),
    agents: def.agents.map((a) => ({
      name: a.name,
      version: a.version ?? '1.0.0',
      description: a.description ?? '',
      endpoint: a.endpoint ?? '',
      headless: a.headless === true,
      ...(a.broadcastReply === true ? { broadcastReply: true } : {}),
      ...pick(a, ['systemPrompt', 'model']),
      ...(typeof a.run === 'function' ? { hasRun: true } : {}),
      ...(a.scope !== undefined ? { scope: { ...a.scope } } : {}),
      tools: (a.tools ?? []).map(describeTool)
    })),
    policyTypes: def.policyTypes.map((p) => ({ type: p.type, description: p.description ?? '' })),
    classifiers: def.classifiers.map((c) => ({ name: c.name, description: c.description ?? '' })),
    embedders: def.embedders.map((e) => ({ name: e.name, description: e.description ?? '' })),
    runtimes: (def.runtimes ?? []).map((r) => ({
      name: r.name,
      description: r.description ?? '',
      priority: typeof r.priority === 'number' ? r.priority : 0,
      capabilities: r.capabilities.map(String),
      models: r.models.map(String)
    }))
  }
}

function find(list, key, value, what) {
  for (const x of list) if (x[key] === value) return x
  throw new Error(`unknown ${what} '${value}'`)
}

function findResource(list, uri) {
  for (const r of list) if (r.uri === uri) return r
  for (const r of list) if (r.uri.includes('{') && templateMatch(r.uri, uri)) return r
  throw new Error(`unknown resource '${uri}'`)
}

function templateMatch(template, uri) {
  const re = new RegExp(
    '^' +
      template
        .split(/\{[^}]+\}/)
        .map((s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
        .join('([^/]+)') +
      '$'
  )
  return re.test(uri)
}

/**
 * Starts one contribution and returns what it returns, a promise or a plain value; throws what it
 * throws. The isolate tier answers a synchronous result without a callback or a microtask turn.
 */
export function startContribution(def, req, ctx) {
  switch (req.kind) {
    case 'tool': {
      const slash = req.name.indexOf('/')
      if (slash > 0) {
        const a = find(def.agents, 'name', req.name.slice(0, slash), 'agent')
        return find(a.tools ?? [], 'name', req.name.slice(slash + 1), 'tool').run(req.args ?? {}, ctx)
      }
      return find(def.tools, 'name', req.name, 'tool').run(req.args ?? {}, ctx)
    }
    case 'agent': {
      const a = find(def.agents, 'name', req.name, 'agent')
      if (typeof a.run !== 'function') throw new Error(`agent '${req.name}' defines no run()`)
      return a.run(req.args?.turn ?? {}, ctx)
    }
    case 'resource':
      return findResource(def.resources, req.name).read(req.name, ctx)
    case 'prompt':
      return find(def.prompts, 'name', req.name, 'prompt').get(req.args ?? {}, ctx)
    case 'policyType':
      return find(def.policyTypes, 'type', req.name, 'policy type').evaluate(
        req.args.context,
        req.args.config ?? {},
        ctx
      )
    case 'classifier':
      return find(def.classifiers, 'name', req.name, 'classifier').classify(req.args.request, req.args.scope ?? {}, ctx)
    case 'embedder':
      return find(def.embedders, 'name', req.name, 'embedder').embed(req.args.texts, ctx)
    case 'runtime':
      return collectEvents(find(def.runtimes ?? [], 'name', req.name, 'runtime').stream(req.args.request, ctx))
    default:
      throw new Error(`unknown contribution kind '${req.kind}'`)
  }
}

/** A runtime's events as one array, whether it returned an array, a promise of one, or an (async) iterable. */
async function collectEvents(out) {
  const v = await out
  if (Array.isArray(v)) return v
  const events = []
  if (v !== null && typeof v === 'object' && (Symbol.asyncIterator in v || Symbol.iterator in v)) {
    for await (const e of v) events.push(e)
    return events
  }
  throw new TypeError("a runtime's stream() must return an array or an (async) iterable of events")
}

/** Runs one contribution; `ctx` is what the plugin sees (log, signal, granted capabilities). */
export async function invokeContribution(def, req, ctx) {
  return await startContribution(def, req, ctx)
}
