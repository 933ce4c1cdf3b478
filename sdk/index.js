// uws-agent-platform/sdk: what plugin authors import. Pure JavaScript with no Node APIs, so the same
// module loads in the host (inline and worker tiers) and inside an isolated-vm isolate.

const KINDS = ['tools', 'resources', 'prompts', 'agents', 'policyTypes', 'classifiers', 'embedders', 'runtimes']

function need(obj, key, type, what) {
  if (typeof obj[key] !== type) throw new TypeError(`${what}: '${key}' must be a ${type}`)
}

const brand = (kind, def) => Object.freeze({ ...def, __platform: kind })

// list key -> [helper that makes its items, the field that names an item]
const ITEM = {
  tools: ['tool', 'name'],
  resources: ['resource', 'uri'],
  prompts: ['prompt', 'name'],
  agents: ['agent', 'name'],
  policyTypes: ['policyType', 'type'],
  classifiers: ['classifier', 'name'],
  embedders: ['embedder', 'name'],
  runtimes: ['runtime', 'name']
}

function checkList(where, key, list) {
  if (!Array.isArray(list)) throw new TypeError(`${where}: '${key}' must be an array`)
  const [helper, id] = ITEM[key]
  const seen = new Set()
  list.forEach((item, i) => {
    if (item === null || typeof item !== 'object' || item.__platform !== helper)
      throw new TypeError(`${where}: ${key}[${i}] must be made with ${helper}({...})`)
    if (seen.has(item[id])) throw new TypeError(`${where}: two ${key} share the ${id} '${item[id]}'`)
    seen.add(item[id])
  })
}

/**
 * The default export of a plugin entry. Unknown keys, items not made with their helper and
 * duplicate names are refused, so mistakes fail at load.
 */
export function definePlugin(def) {
  if (def === null || typeof def !== 'object') throw new TypeError('definePlugin expects an object')
  for (const k of Object.keys(def))
    if (!KINDS.includes(k)) throw new TypeError(`definePlugin: unknown key '${k}' (expected ${KINDS.join(', ')})`)
  const out = {}
  for (const k of KINDS) {
    const list = def[k] ?? []
    checkList('definePlugin', k, list)
    out[k] = Object.freeze([...list])
  }
  for (const a of out.agents) checkList(`agent '${a.name}'`, 'tools', a.tools ?? [])
  return Object.freeze({ ...out, __platform: 'plugin' })
}

/** An MCP tool. `run(args, ctx)` may return any JSON value; `longRunning` makes it a task. */
export function tool(def) {
  need(def, 'name', 'string', 'tool')
  need(def, 'run', 'function', `tool '${def.name}'`)
  return brand('tool', {
    description: '',
    input: { type: 'object', properties: {} },
    longRunning: false,
    uiResource: undefined,
    ...def
  })
}

/** An MCP resource: `uri` (or URI template), `read(uri, ctx)` returns text or `{ text | blob, mimeType }`. */
export function resource(def) {
  need(def, 'uri', 'string', 'resource')
  need(def, 'read', 'function', `resource '${def.uri}'`)
  return brand('resource', { name: '', description: '', mimeType: 'text/plain', ...def })
}

/** An MCP prompt: `get(args, ctx)` returns a list of McpMessage. */
export function prompt(def) {
  need(def, 'name', 'string', 'prompt')
  need(def, 'get', 'function', `prompt '${def.name}'`)
  return brand('prompt', { description: '', arguments: [], ...def })
}

/** An agent with a declared scope; its tools are served on its own MCP endpoint. */
export function agent(def) {
  need(def, 'name', 'string', 'agent')
  const where = `agent '${def.name}'`
  if (def.endpoint !== undefined) need(def, 'endpoint', 'string', where)
  if (def.headless !== undefined) need(def, 'headless', 'boolean', where)
  if (def.broadcastReply !== undefined) need(def, 'broadcastReply', 'boolean', where)
  if (def.model !== undefined && (typeof def.model !== 'string' || def.model === ''))
    throw new TypeError(`${where}: 'model' must be a non-empty string`)
  if (def.run !== undefined) need(def, 'run', 'function', where)
  const fleet = def.fleet === undefined ? undefined : fleetRefs(def)
  return brand('agent', {
    version: '1.0.0',
    description: '',
    endpoint: '',
    headless: false,
    tools: [],
    scope: undefined,
    ...def,
    ...(fleet !== undefined ? { fleet } : {})
  })
}

// an agent ref's fields: [default, check, what a bad value must be]
const REF_FIELDS = {
  version: ['', (v) => typeof v === 'string', 'a string'],
  required: [true, (v) => typeof v === 'boolean', 'a boolean'],
  weight: [1, (v) => typeof v === 'number' && Number.isFinite(v) && v >= 0, 'a non-negative number'],
  maxRetries: [0, (v) => Number.isInteger(v) && v >= 0 && v <= 10, 'an integer from 0 to 10'],
  circuitBreaker: [false, (v) => typeof v === 'boolean', 'a boolean'],
  timeoutMs: [0, (v) => Number.isInteger(v) && v >= 0, 'a non-negative integer (0: 120000)'],
  maxTurns: [0, (v) => Number.isInteger(v) && v >= 0, 'a non-negative integer (0: unbounded)']
}

/**
 * A coordinator's fleet: each ref a name or `{ name, version?, required?, weight?, maxRetries?,
 * circuitBreaker?, timeoutMs?, maxTurns? }`, returned whole with the defaults filled in.
 */
function fleetRefs(def) {
  const where = `coordinator '${def.name}'`
  if (!Array.isArray(def.fleet) || def.fleet.length === 0)
    throw new TypeError(`${where}: 'fleet' must be a non-empty array of agent names or { name, ... } refs`)
  if (typeof def.run !== 'function')
    throw new TypeError(`${where}: an agent with a fleet needs its own run(turn, ctx), which dispatches with ctx.fleet`)
  const seen = new Set()
  return Object.freeze(
    def.fleet.map((raw, i) => {
      const ref = typeof raw === 'string' ? { name: raw } : raw
      if (ref === null || typeof ref !== 'object' || Array.isArray(ref))
        throw new TypeError(`${where}: fleet[${i}] must be an agent name or { name, ... }`)
      if (typeof ref.name !== 'string' || ref.name === '')
        throw new TypeError(`${where}: fleet[${i}].name must be a non-empty string`)
      const out = { name: ref.name }
      for (const k of Object.keys(ref))
        if (k !== 'name' && !(k in REF_FIELDS))
          throw new TypeError(
            `${where}: fleet[${i}] has an unknown field '${k}' (expected name, ${Object.keys(REF_FIELDS).join(', ')})`
          )
      for (const [k, [dflt, ok, what]] of Object.entries(REF_FIELDS)) {
        if (ref[k] === undefined) out[k] = dflt
        else if (!ok(ref[k])) throw new TypeError(`${where}: fleet[${i}].${k} must be ${what}`)
        else out[k] = ref[k]
      }
      if (seen.has(out.name))
        throw new TypeError(`Duplicate agent reference '${out.name}' in coordinator '${def.name}'`)
      seen.add(out.name)
      return Object.freeze(out)
    })
  )
}

/** A governance policy type: YAML `type: <type>` entries are evaluated by `evaluate(context, config)`. */
export function policyType(def) {
  need(def, 'type', 'string', 'policyType')
  need(def, 'evaluate', 'function', `policyType '${def.type}'`)
  return brand('policyType', { description: '', ...def })
}

/** A scope classifier: `classify(request, scope)` returns `{ outcome, reason, similarity }`. */
export function classifier(def) {
  need(def, 'name', 'string', 'classifier')
  need(def, 'classify', 'function', `classifier '${def.name}'`)
  return brand('classifier', { description: '', ...def })
}

/** An embedder: `embed(texts)` returns one vector per text. */
export function embedder(def) {
  need(def, 'name', 'string', 'embedder')
  need(def, 'embed', 'function', `embedder '${def.name}'`)
  return brand('embedder', { description: '', ...def })
}

/**
 * An AI runtime: `stream(request)` returns (or yields, as an async generator) the events of one
 * request: `{type:'text',delta}`, `{type:'tool-call',call:{id,name,arguments}}`,
 * `{type:'usage',usage:{input,output,cachedInput?,total?}}`, then `{type:'done',finishReason}` or
 * `{type:'error',message}`. Yielded events reach the host as they are yielded (the host pulls, so a
 * generator waits at its `yield` while the client is slow); cancelling calls the generator's
 * `return()`, so its `finally` runs. A returned array arrives whole.
 */
export function runtime(def) {
  need(def, 'name', 'string', 'runtime')
  need(def, 'stream', 'function', `runtime '${def.name}'`)
  if (def.capabilities !== undefined && !Array.isArray(def.capabilities))
    throw new TypeError(`runtime '${def.name}': 'capabilities' must be an array`)
  if (def.models !== undefined && !Array.isArray(def.models))
    throw new TypeError(`runtime '${def.name}': 'models' must be an array`)
  return brand('runtime', { description: '', priority: 0, capabilities: ['streaming'], models: [], ...def })
}

export const McpMessage = Object.freeze({
  system: (text) => ({ role: 'system', content: { type: 'text', text: String(text) } }),
  user: (text) => ({ role: 'user', content: { type: 'text', text: String(text) } }),
  assistant: (text) => ({ role: 'assistant', content: { type: 'text', text: String(text) } })
})

// Policy decisions: a closed set of four.
export const admit = () => ({ decision: 'admit' })
export const transform = (request, reason) =>
  reason === undefined ? { decision: 'transform', request } : { decision: 'transform', request, reason: String(reason) }
export const deny = (reason) => ({ decision: 'deny', reason: String(reason) })
export const prefer = (preferred, reason) => ({
  decision: 'prefer',
  preferred: String(preferred),
  reason: String(reason)
})
