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
 * An agent run's ctx: the call's ctx plus `model` and `callTool`, which go to the host through the
 * tier's capability channel (`hostCall(op, args)`) naming the turn the host opened for this run.
 */
function runCtx(ctx, turnId, hostCall) {
  if (typeof turnId !== 'string' || typeof hostCall !== 'function') return ctx
  // descriptors, not a spread: a lazy getter (the inline tier's signal) stays lazy
  const out = Object.defineProperties({}, Object.getOwnPropertyDescriptors(ctx))
  out.model = (options) => hostCall('agent.model', [turnId, options === undefined ? {} : options])
  out.callTool = (name, args) => hostCall('agent.callTool', [turnId, String(name), args === undefined ? {} : args])
  return Object.freeze(out)
}

/**
 * Starts one contribution and returns what it returns, a promise or a plain value; throws what it
 * throws. The isolate tier answers a synchronous result without a callback or a microtask turn.
 * `hostCall(op, args)` is the tier's capability channel, for the host calls of an agent's run.
 */
export function startContribution(def, req, ctx, hostCall) {
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
      return a.run(req.args?.turn ?? {}, runCtx(ctx, req.args?.turnId, hostCall))
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
    case 'runtime': {
      const out = find(def.runtimes ?? [], 'name', req.name, 'runtime').stream(req.args.request, ctx)
      const s = req.args.stream
      if (s !== null && typeof s === 'object' && typeof s.id === 'string' && typeof hostCall === 'function')
        return pumpEvents(out, ctx, hostCall, s.id, s.window)
      return collectEvents(out)
    }
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

/**
 * Streams a runtime's events to the host as the plugin yields them, one `ctx.progress` message
 * each. The host pulls: after `window` events the pump asks for more (`runtime.pull`) and waits;
 * the answer is the next allowance, 0 to stop. Stopping (that answer, or `ctx.signal`) calls the
 * iterator's `return()`, so the plugin's `finally` runs. Resolves with a returned array (sent
 * whole: it was never a stream) or null.
 */
async function pumpEvents(out, ctx, hostCall, id, window) {
  const v = await out
  if (Array.isArray(v)) return v
  let it
  if (v !== null && typeof v === 'object' && Symbol.asyncIterator in v) it = v[Symbol.asyncIterator]()
  else if (v !== null && typeof v === 'object' && Symbol.iterator in v) it = v[Symbol.iterator]()
  else throw new TypeError("a runtime's stream() must return an array or an (async) iterable of events")
  let credit = Number.isInteger(window) && window > 0 ? window : 1
  let stopped = false
  // closes the plugin's iterator (its finally runs); resolves when that is done, never rejects
  const stop = () => {
    if (stopped) return undefined
    stopped = true
    try {
      const r = it.return?.()
      if (r !== null && typeof r === 'object' && typeof r.then === 'function') return r.then(undefined, () => {})
    } catch (_) {
      /* the plugin's finally threw: the stream is over either way */
    }
    return undefined
  }
  const signal = ctx.signal
  signal?.addEventListener?.('abort', stop)
  try {
    for (;;) {
      if (credit <= 0) {
        credit = await hostCall('runtime.pull', [id])
        if (!(credit > 0)) break
      }
      if (stopped || signal?.aborted === true) break
      const r = await it.next()
      if (r.done === true || stopped) break
      ctx.progress(r.value)
      credit--
    }
  } finally {
    signal?.removeEventListener?.('abort', stop)
    // within the call, so the plugin's finally may still use ctx (kv, fetch, log)
    await stop()
  }
  return null
}

/** Runs one contribution; `ctx` is what the plugin sees (log, signal, granted capabilities). */
export async function invokeContribution(def, req, ctx, hostCall) {
  return await startContribution(def, req, ctx, hostCall)
}
