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
      ...(Array.isArray(a.fleet) ? { fleet: a.fleet.map((r) => ({ ...r })) } : {}),
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
 * An agent run's ctx: the call's ctx plus `model` and `callTool` (and `fleet` for a coordinator),
 * which go to the host through the tier's capability channel (`hostCall(op, args)`) naming the
 * turn the host opened for this run.
 */
function runCtx(ctx, turnId, hostCall, agentDef) {
  if (typeof turnId !== 'string' || typeof hostCall !== 'function') return ctx
  // descriptors, not a spread: a lazy getter (the inline tier's signal) stays lazy
  const out = Object.defineProperties({}, Object.getOwnPropertyDescriptors(ctx))
  out.model = (options) => hostCall('agent.model', [turnId, options === undefined ? {} : options])
  out.callTool = (name, args) => hostCall('agent.callTool', [turnId, String(name), args === undefined ? {} : args])
  if (Array.isArray(agentDef.fleet)) out.fleet = fleetCtx(turnId, hostCall, agentDef.fleet)
  return Object.freeze(out)
}

/** A call as the host takes it: `{ agent, skill?, args? }`, or `[agent, skill?, args?]`. */
const callOf = (c) => (Array.isArray(c) ? { agent: c[0], skill: c[1], args: c[2] } : c)
const callsOf = (calls) => (Array.isArray(calls) ? calls.map(callOf) : calls)

/**
 * `ctx.fleet` of a coordinator's run: each pattern is one host call that resolves to AgentResult(s).
 * `route` and `refineUntil` run here, in the sandbox, since their conditions and evaluators are
 * the plugin's own functions; each of their dispatches is an ordinary host call.
 */
function fleetCtx(turnId, hostCall, refs) {
  const call = (agent, skill, args) => hostCall('agent.fleet.call', [turnId, { agent, skill, args }])
  const note = (type, fields) => hostCall('agent.fleet.note', [turnId, type, fields])
  return Object.freeze({
    call,
    parallel: (calls) => hostCall('agent.fleet.parallel', [turnId, callsOf(calls)]),
    pipeline: (calls) => hostCall('agent.fleet.pipeline', [turnId, callsOf(calls)]),
    vote: (calls) => hostCall('agent.fleet.vote', [turnId, callsOf(calls)]),
    route: (input, routes) => routeCall(call, note, input, routes),
    refineUntil: (c, evaluators, options) => {
      const one = callOf(c)
      // the budget: the option, else the agent's ref maxTurns, else 8
      const ref = refs.find((r) => (typeof r === 'string' ? r : r?.name) === one?.agent)
      const maxTurns = options?.maxTurns ?? (typeof ref === 'object' ? ref.maxTurns : undefined)
      return refine(call, note, one, evaluators, { maxTurns })
    }
  })
}

/**
 * Runs `input` (a call), then the first route whose `when(result)` holds, or `otherwise`
 * (matchedIndex -1). Each route is `{ when, call }`; `call` is a call or `(result) => call`.
 */
async function routeCall(call, note, input, routes) {
  if (!Array.isArray(routes) || routes.length === 0) throw new TypeError('route() requires at least one route')
  const first = callOf(input)
  const result = await call(first.agent, first.skill, first.args)
  let matchedIndex = -2
  let chosen
  let otherwise
  for (let i = 0; i < routes.length; i++) {
    const r = routes[i]
    if (r === null || typeof r !== 'object')
      throw new TypeError(`route(): routes[${i}] must be { when, call } or { otherwise }`)
    if (r.otherwise !== undefined) {
      otherwise ??= r.otherwise
      continue
    }
    if (typeof r.when !== 'function') throw new TypeError(`route(): routes[${i}].when must be a function`)
    if (matchedIndex === -2 && (await r.when(result)) === true) {
      matchedIndex = i
      chosen = r.call
    }
  }
  if (matchedIndex === -2 && otherwise !== undefined) {
    matchedIndex = -1
    chosen = otherwise
  }
  if (matchedIndex === -2) {
    await note('RouteEvaluated', { inputAgent: first.agent, selectedAgent: null, matched: false })
    return {
      agentName: first.agent,
      skillId: first.skill ?? 'run',
      text: 'No routing condition matched',
      metadata: { matchedIndex: -2, input: result },
      durationMs: result.durationMs,
      success: false
    }
  }
  const next = callOf(typeof chosen === 'function' ? await chosen(result) : chosen)
  await note('RouteEvaluated', { inputAgent: first.agent, selectedAgent: next.agent, matched: matchedIndex >= 0 })
  const out = await call(next.agent, next.skill, next.args ?? { _previous_result: result.text })
  return { ...out, metadata: { ...out.metadata, matchedIndex } }
}

/**
 * Calls until every evaluator passes or the budget (`maxTurns`, 8 when unbounded) is spent; the
 * failing evaluators' reasons reach the next try as `_refine_feedback`. On exhaustion the try
 * with the best mean score wins. An evaluator is `(result) => { score, passed, reason }`, or
 * `{ name, evaluate }`; one that throws fails with score 0.
 */
async function refine(call, note, c, evaluators, options) {
  const list = Array.isArray(evaluators) ? evaluators : [evaluators]
  if (list.length === 0) throw new TypeError('refineUntil() requires at least one evaluator')
  const budget = Number.isInteger(options?.maxTurns) && options.maxTurns > 0 ? options.maxTurns : 8
  let best
  let args = c.args ?? {}
  for (let turn = 1; turn <= budget; turn++) {
    const result = await call(c.agent, c.skill, args)
    if (!result.success) return result
    const verdicts = []
    for (let i = 0; i < list.length; i++) {
      const e = list[i]
      const name = typeof e === 'function' ? e.name || `evaluator-${i + 1}` : String(e?.name ?? `evaluator-${i + 1}`)
      const fn = typeof e === 'function' ? e : e?.evaluate
      let v
      try {
        v = await fn(result)
        if (v === null || typeof v !== 'object' || typeof v.score !== 'number')
          throw new Error('must return { score, passed, reason }')
        v = { score: Math.max(0, Math.min(1, v.score)), passed: v.passed === true, reason: String(v.reason ?? '') }
      } catch (err) {
        v = { score: 0, passed: false, reason: `Evaluator error: ${err?.message ?? String(err)}` }
      }
      verdicts.push(v)
      await note('AgentEvaluated', { agentName: c.agent, evaluatorName: name, score: v.score, passed: v.passed })
    }
    const mean = verdicts.reduce((s, v) => s + v.score, 0) / verdicts.length
    const scored = { ...result, metadata: { ...result.metadata, turns: turn, score: mean } }
    if (best === undefined || mean > best.metadata.score) best = scored
    if (verdicts.every((v) => v.passed)) return scored
    const feedback = verdicts
      .filter((v) => !v.passed)
      .map((v) => v.reason)
      .join('; ')
    args = { ...(c.args ?? {}), _refine_feedback: feedback }
  }
  return best
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
      return a.run(req.args?.turn ?? {}, runCtx(ctx, req.args?.turnId, hostCall, a))
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
