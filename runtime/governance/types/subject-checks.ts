/** time-window, metadata-presence and authorization. */
import {
  PlatformError,
  admit,
  deny,
  type AiRequest,
  type GovernancePolicy,
  type PolicyContext,
  type PolicyDecision,
  type PolicyDescriptor
} from '../../contracts/index.js'
import { GOVERNANCE_ERRORS } from '../errors.js'
import { asString, asStringList, listText } from './config.js'

const ADMIT = admit()
export const DAYS = ['MONDAY', 'TUESDAY', 'WEDNESDAY', 'THURSDAY', 'FRIDAY', 'SATURDAY', 'SUNDAY'] as const
const WEEKDAY_INDEX: Record<string, number> = { Mon: 0, Tue: 1, Wed: 2, Thu: 3, Fri: 4, Sat: 5, Sun: 6 }

/** `HH:MM` or `HH:MM:SS` to seconds of the day (Java LocalTime.parse accepts both). */
function parseTime(s: string, key: string): { seconds: number; text: string } {
  const m = /^([01]\d|2[0-3]):([0-5]\d)(?::([0-5]\d))?$/.exec(s)
  if (m === null)
    throw new PlatformError(GOVERNANCE_ERRORS.POLICY_CONFIG_INVALID, {
      detail: `time-window '${key}' must be HH:MM, got: ${s}`
    })
  const seconds = Number(m[1]) * 3600 + Number(m[2]) * 60 + Number(m[3] ?? 0)
  return { seconds, text: m[3] !== undefined && m[3] !== '00' ? s : `${m[1]}:${m[2]}` }
}

/** Admits only inside [start, end) on the configured days, in the configured zone; wraps past midnight. */
export class TimeWindowPolicy implements GovernancePolicy {
  readonly className = 'TimeWindowPolicy'
  private readonly fmt: Intl.DateTimeFormat
  private readonly reason: PolicyDecision

  constructor(
    readonly name: string,
    readonly source: string,
    readonly version: string,
    readonly start: { seconds: number; text: string },
    readonly end: { seconds: number; text: string },
    readonly zone: string,
    readonly days: ReadonlySet<number>,
    private readonly now: () => number = Date.now
  ) {
    this.fmt = new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      hourCycle: 'h23',
      weekday: 'short',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit'
    })
    const dayNames = DAYS.filter((_, i) => days.has(i))
    this.reason = deny(`outside allowed window ${start.text}-${end.text} (${zone}) on ${listText(dayNames)}`)
  }

  private cachedSecond = -1
  private cachedOpen = false

  evaluate(ctx: PolicyContext): PolicyDecision {
    if (ctx.phase !== 'PRE_ADMISSION') return ADMIT
    // the verdict only changes at second boundaries; Intl formatting costs microseconds
    const sec = Math.floor(this.now() / 1000)
    if (sec !== this.cachedSecond) {
      this.cachedOpen = this.isOpen(sec * 1000)
      this.cachedSecond = sec
    }
    return this.cachedOpen ? ADMIT : this.reason
  }

  isOpen(epochMs: number): boolean {
    let day = 0
    let secs = 0
    for (const p of this.fmt.formatToParts(epochMs)) {
      if (p.type === 'weekday') day = WEEKDAY_INDEX[p.value] ?? 0
      else if (p.type === 'hour') secs += Number(p.value) * 3600
      else if (p.type === 'minute') secs += Number(p.value) * 60
      else if (p.type === 'second') secs += Number(p.value)
    }
    if (!this.days.has(day)) return false
    const s = this.start.seconds
    const e = this.end.seconds
    return s <= e ? secs >= s && secs < e : secs >= s || secs < e
  }
}

export function timeWindowFactory(d: PolicyDescriptor, now?: () => number): GovernancePolicy {
  const c = d.config
  const start = parseTime(asString(c.start, '09:00'), 'start')
  const end = parseTime(asString(c.end, '17:00'), 'end')
  const zone = asString(c.zone, 'UTC')
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone })
  } catch {
    throw new PlatformError(GOVERNANCE_ERRORS.POLICY_CONFIG_INVALID, { detail: `time-window: unknown zone '${zone}'` })
  }
  let days: Set<number>
  if (c.days === undefined || c.days === null) days = new Set([0, 1, 2, 3, 4])
  else {
    if (!Array.isArray(c.days))
      throw new PlatformError(GOVERNANCE_ERRORS.POLICY_CONFIG_INVALID, {
        detail: "time-window 'days' must be a YAML list"
      })
    days = new Set()
    for (const item of c.days) {
      if (item === null || item === undefined) continue
      const i = (DAYS as readonly string[]).indexOf(String(item).toUpperCase())
      if (i < 0)
        throw new PlatformError(GOVERNANCE_ERRORS.POLICY_CONFIG_INVALID, {
          detail: `unknown day-of-week: ${String(item)}`
        })
      days.add(i)
    }
    if (days.size === 0)
      throw new PlatformError(GOVERNANCE_ERRORS.POLICY_CONFIG_INVALID, {
        detail: "time-window 'days' must be non-empty"
      })
  }
  return new TimeWindowPolicy(d.name, d.source, d.version, start, end, zone, days, now)
}

/** A key of the server's metadata, or with `client.` a key of the client's claims (never one for the other). */
function metadataValue(r: AiRequest, key: string): unknown {
  if (key.startsWith('client.')) {
    const cm = r.clientMetadata
    const k = key.slice('client.'.length)
    return cm != null && Object.hasOwn(cm, k) ? cm[k] : undefined
  }
  return Object.hasOwn(r.metadata, key) ? r.metadata[key] : undefined
}

export class MetadataPresencePolicy implements GovernancePolicy {
  readonly className = 'MetadataPresencePolicy'
  constructor(
    readonly name: string,
    readonly source: string,
    readonly version: string,
    readonly keys: readonly string[]
  ) {}
  evaluate(ctx: PolicyContext): PolicyDecision {
    if (ctx.phase !== 'PRE_ADMISSION') return ADMIT
    for (const k of this.keys) {
      const v = metadataValue(ctx.request, k)
      if (v === undefined || v === null || (typeof v === 'string' && v.trim() === ''))
        return deny(`required metadata key '${k}' is missing`)
    }
    return ADMIT
  }
}

export function metadataPresenceFactory(d: PolicyDescriptor): GovernancePolicy {
  const keys = asStringList(d.config['required-keys'])
  if (keys.length === 0)
    throw new PlatformError(GOVERNANCE_ERRORS.POLICY_CONFIG_INVALID, {
      detail: "metadata-presence requires at least one entry under 'required-keys'"
    })
  return new MetadataPresencePolicy(d.name, d.source, d.version, keys)
}

/** Roles claimed in `metadata.roles`: a list, or a comma-separated string. */
export function rolesOf(v: unknown): readonly string[] {
  // the usual claim, a list of clean names, is its own answer: no three arrays and closures a turn
  if (Array.isArray(v) && v.every(isCleanRole)) return v as string[]
  if (Array.isArray(v))
    return v
      .filter((r) => r !== null && r !== undefined)
      .map((r) => String(r).trim())
      .filter((r) => r !== '')
  if (typeof v === 'string')
    return v
      .split(',')
      .map((r) => r.trim())
      .filter((r) => r !== '')
  return []
}

function isCleanRole(r: unknown): boolean {
  return typeof r === 'string' && r !== '' && r.trim() === r
}

export class AuthorizationPolicy implements GovernancePolicy {
  readonly className = 'AuthorizationPolicy'
  constructor(
    readonly name: string,
    readonly source: string,
    readonly version: string,
    readonly required: readonly string[]
  ) {}
  evaluate(ctx: PolicyContext): PolicyDecision {
    if (ctx.phase !== 'PRE_ADMISSION') return ADMIT
    const held = rolesOf(ctx.request.metadata.roles)
    if (held.length === 0) return deny(`no roles claimed by subject; required: ${listText(this.required)}`)
    for (const r of this.required)
      if (!held.includes(r)) return deny(`missing required role '${r}' (subject holds: ${listText(held)})`)
    return ADMIT
  }
}

export function authorizationFactory(d: PolicyDescriptor): GovernancePolicy {
  const roles = asStringList(d.config['required-roles'])
  if (roles.length === 0)
    throw new PlatformError(GOVERNANCE_ERRORS.POLICY_CONFIG_INVALID, {
      detail: "authorization requires at least one entry under 'required-roles'"
    })
  return new AuthorizationPolicy(d.name, d.source, d.version, roles)
}
