/**
 * The governance admin routes under /api/admin/governance/ with the shapes, status codes and
 * messages docs/governance.md lists. Write routes: the 503 "not installed" check first, then the write gate,
 * then validation (audited as `<action>.invalid` / `.unavailable`). `check` is open and never
 * writes the decision log; `decisions` is a content read and needs a principal.
 */
import type { Platform } from '../platform.js'
import { type Context } from '../http/index.js'
import { PlatformError, isWireError } from '../contracts/index.js'
import { ReadGate, type Principal } from '../auth/index.js'
import { runCheck, unconfiguredAllowPayload, type CheckRequest } from './check.js'
import { agtVerify, complianceMatrix } from './compliance.js'
import { owaspMatrix } from './owasp.js'
import type { GovernanceService } from './service.js'
import { GOVERNANCE_ERRORS } from './errors.js'
import { CALLERS, HTTP_ERRORS, setLogPageHeaders } from '../http/index.js'

const BASE = '/api/admin/governance'
export const DECISIONS_DEFAULT_LIMIT = 100
export const DECISIONS_MAX_LIMIT = 10_000

export function installRoutes(platform: Platform, service: GovernanceService | undefined): void {
  const { http, config, principals, writeGate } = platform

  /** Reads are open unless `http-read-auth-required`; content reads also follow `content-read-auth-required`. */
  const reads = new ReadGate(config, principals)
  const readGate = (ctx: Context, content: boolean): void => {
    reads.check(ctx, content ? 'content' : 'open')
  }
  const installed = (): GovernanceService => {
    if (service === undefined) throw new PlatformError(GOVERNANCE_ERRORS.GOVERNANCE_NOT_INSTALLED)
    return service
  }

  http.get(`${BASE}/policies`, (ctx) => {
    readGate(ctx, false)
    return service?.listing() ?? []
  })
  http.get(`${BASE}/summary`, (ctx) => {
    readGate(ctx, false)
    return service?.summary() ?? { policyCount: 0, sources: [] }
  })
  http.get(`${BASE}/health`, (ctx) => {
    readGate(ctx, false)
    const health = service?.health() ?? { killSwitch: { armed: false }, policies: [], dryRuns: [], slos: [] }
    // why and by whom the switch was armed is content: an open reader learns only that it is armed, and since when
    if (reads.admits(ctx, 'content')) return health
    const { armed, armedAt } = health.killSwitch as { armed: boolean; armedAt?: string }
    return { ...health, killSwitch: armedAt === undefined ? { armed } : { armed, armedAt } }
  })
  http.get(`${BASE}/owasp`, (ctx) => {
    readGate(ctx, false)
    return owaspMatrix()
  })
  http.get(`${BASE}/compliance`, (ctx) => {
    readGate(ctx, false)
    return complianceMatrix()
  })
  http.get(`${BASE}/agt-verify`, (ctx) => {
    readGate(ctx, false)
    return agtVerify()
  })

  http.get(`${BASE}/decisions`, async (ctx) => {
    readGate(ctx, true)
    const raw = ctx.query.get('limit')
    let limit = DECISIONS_DEFAULT_LIMIT
    if (raw !== null) {
      if (!/^\d{1,9}$/.test(raw) || Number(raw) < 1)
        throw new PlatformError(HTTP_ERRORS.INVALID_QUERY, { name: 'limit', detail: 'expected a positive integer' })
      limit = Math.min(Number(raw), DECISIONS_MAX_LIMIT)
    }
    const cursor = ctx.query.get('cursor') ?? undefined
    const callers = ctx.query.get('callers') ?? undefined
    if (callers !== undefined && !Object.hasOwn(CALLERS, callers))
      throw new PlatformError(HTTP_ERRORS.INVALID_QUERY, {
        name: 'callers',
        detail: `expected one of ${Object.keys(CALLERS).join(', ')}`
      })
    if (service === undefined) {
      if (cursor !== undefined) throw new PlatformError(HTTP_ERRORS.INVALID_CURSOR, { what: 'the decisions' })
      return []
    }
    const log = service.decisionLog
    const part = callers === undefined ? undefined : CALLERS[callers as keyof typeof CALLERS]
    const page = await log.read(limit, cursor, part)
    if (page === undefined) throw new PlatformError(HTTP_ERRORS.INVALID_CURSOR, { what: 'the decisions' })
    setLogPageHeaders(ctx, `${BASE}/decisions`, { limit, callers }, { ...page, anonymousDenied: log.anonymousDenied })
    return page.entries
  })

  http.post(`${BASE}/check`, (ctx) => {
    const req = checkRequest(ctx.body)
    if (service === undefined) return unconfiguredAllowPayload()
    return runCheck(service.chain, req)
  })

  // an acknowledged write's audit entry is committed before the answer; a failed audit write is
  // counted and logged by the audit log itself and does not change the answer
  const audited = (p: Principal, action: string, target: string, ok: boolean, message?: string): Promise<void> =>
    writeGate.done(p, action, target, ok, message).catch(() => {})

  http.post(
    `${BASE}/reload`,
    async (ctx) => {
      const s = installed()
      const body = isObject(ctx.body) ? ctx.body : {}
      const target = typeof body.swapName === 'string' ? body.swapName : ''
      const principal = writeGate.guard(ctx, 'governance.reload', target)
      let result
      try {
        result = s.reload(body.swapName, body.content ?? body.yaml, body.format)
      } catch (err) {
        if (!isWireError(err)) throw err
        await audited(principal, 'governance.reload.invalid', target, false, err.message)
        throw err
      }
      await audited(
        principal,
        'governance.reload',
        target,
        true,
        `${result.outgoing.name}@${result.outgoing.version} -> ${result.incoming.name}@${result.incoming.version}`
      )
      return result
    },
    { body: 'json', optionalBody: true }
  )

  http.post(
    `${BASE}/kill-switch/arm`,
    async (ctx) => {
      const s = installed()
      const principal = writeGate.guard(ctx, 'governance.kill_switch.arm', 'kill-switch')
      const ks = s.killSwitch()
      if (ks === undefined) return unavailable(audited, principal, 'governance.kill_switch.arm')
      const body = isObject(ctx.body) ? ctx.body : {}
      const reason = typeof body.reason === 'string' ? body.reason.trim() : ''
      if (reason === '') {
        await audited(principal, 'governance.kill_switch.arm.invalid', ks.name, false, 'reason must not be blank')
        throw new PlatformError(GOVERNANCE_ERRORS.GOVERNANCE_REASON_BLANK)
      }
      // the body's `operator` is a label the caller chooses; who armed it is the principal, kept beside it
      const operator =
        typeof body.operator === 'string' && body.operator.trim() !== ''
          ? body.operator
          : principal.name !== ''
            ? principal.name
            : 'admin'
      const state = await stored(s.armKillSwitch(ks, reason, operator, principal.name), principal, 'arm', ks.name)
      s.logger.warn(
        { principal: principal.name, operator, reason, policy: ks.name },
        `governance kill switch armed by ${principal.name} (operator '${operator}'): ${reason}`
      )
      await audited(principal, 'governance.kill_switch.arm', ks.name, true, reason)
      return state
    },
    { body: 'json', optionalBody: true }
  )

  http.post(
    `${BASE}/kill-switch/disarm`,
    async (ctx) => {
      const s = installed()
      const principal = writeGate.guard(ctx, 'governance.kill_switch.disarm', 'kill-switch')
      const ks = s.killSwitch()
      if (ks === undefined) return unavailable(audited, principal, 'governance.kill_switch.disarm')
      const state = await stored(s.disarmKillSwitch(ks), principal, 'disarm', ks.name)
      s.logger.warn(
        { principal: principal.name, operator: principal.name, policy: ks.name },
        `governance kill switch disarmed by ${principal.name}`
      )
      await audited(principal, 'governance.kill_switch.disarm', ks.name, true)
      return state
    },
    { body: 'json', optionalBody: true }
  )

  /** The switch's new state once committed; a failed commit is audited and answered as a failure. */
  async function stored<T>(write: Promise<T>, principal: Principal, verb: string, target: string): Promise<T> {
    try {
      return await write
    } catch (err) {
      await audited(principal, `governance.kill_switch.${verb}`, target, false, 'the state could not be stored')
      throw err
    }
  }
}

type Audited = (p: Principal, action: string, target: string, ok: boolean, message?: string) => Promise<void>

async function unavailable(audited: Audited, principal: Principal, action: string): Promise<never> {
  await audited(
    principal,
    `${action}.unavailable`,
    'kill-switch',
    false,
    'no KillSwitchPolicy installed on this framework'
  )
  throw new PlatformError(GOVERNANCE_ERRORS.GOVERNANCE_NO_KILL_SWITCH)
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v)
}

const CHECK_KEYS = ['agent_id', 'action', 'context']
const squash = (k: string): string => k.toLowerCase().replace(/[-_\s]/g, '')

/** `{agent_id, action, context}`; missing keys default to "" and {} as in the toolkit's /check. */
export function checkRequest(body: unknown): CheckRequest {
  if (!isObject(body))
    throw new PlatformError(HTTP_ERRORS.INVALID_BODY, { detail: 'expected a JSON object {agent_id, action, context}' })
  // a misspelt key would silently check an empty request: refuse it
  for (const k of Object.keys(body)) {
    if (CHECK_KEYS.includes(k)) continue
    const near = CHECK_KEYS.find((c) => squash(c) === squash(k))
    throw new PlatformError(HTTP_ERRORS.INVALID_BODY, {
      detail: `unknown key '${k}'${near !== undefined ? ` (did you mean '${near}'?)` : ''}; expected agent_id, action, context`
    })
  }
  const agentId = body.agent_id ?? ''
  const action = body.action ?? ''
  const context = body.context ?? {}
  if (typeof agentId !== 'string')
    throw new PlatformError(HTTP_ERRORS.INVALID_BODY, { detail: 'agent_id must be a string' })
  if (typeof action !== 'string')
    throw new PlatformError(HTTP_ERRORS.INVALID_BODY, { detail: 'action must be a string' })
  if (!isObject(context)) throw new PlatformError(HTTP_ERRORS.INVALID_BODY, { detail: 'context must be an object' })
  return { agent_id: agentId, action, context }
}
