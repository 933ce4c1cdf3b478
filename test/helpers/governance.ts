import { Writable } from 'node:stream'
import pino from 'pino'
import {
  aiRequest,
  type AiRequest,
  type GovernancePolicy,
  type PolicyContext,
  type PolicyDecision
} from '../../runtime/contracts/index.js'
import { PolicyRegistry } from '../../runtime/governance/registry.js'
import { registerBuiltins } from '../../runtime/governance/types/index.js'
import { YamlPolicyParser } from '../../runtime/governance/yaml-parser.js'

export function pre(message: string, extra: Partial<AiRequest> = {}): PolicyContext {
  return { phase: 'PRE_ADMISSION', request: aiRequest({ message, ...extra }), accumulatedResponse: '' }
}

export function post(response: string, extra: Partial<AiRequest> & { message?: string } = {}): PolicyContext {
  return { phase: 'POST_RESPONSE', request: aiRequest({ message: '', ...extra }), accumulatedResponse: response }
}

export const md = (metadata: Record<string, unknown>, message = ''): PolicyContext => pre(message, { metadata })

/** A pino logger whose lines are collected as parsed objects. */
export function captureLogger(): { logger: pino.Logger; lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = []
  const sink = new Writable({
    write(chunk, _e, cb) {
      for (const l of String(chunk).split('\n')) if (l.trim() !== '') lines.push(JSON.parse(l))
      cb()
    }
  })
  return { logger: pino({ level: 'debug' }, sink), lines }
}

export function parser(logger?: pino.Logger): YamlPolicyParser {
  const r = new PolicyRegistry()
  registerBuiltins(r)
  return new YamlPolicyParser(r, logger)
}

export function parseOne(yaml: string, source = 'yaml:test.yaml') {
  const ps = parser().parse(source, yaml)
  if (ps.length !== 1) throw new Error(`expected one policy, got ${ps.length}`)
  return synchronous(ps[0]!)
}

/**
 * Built-in policies decide synchronously; typed so a test reads `.decision` without awaiting (a
 * promise would have no `decision` and fail the assertion).
 */
export const synchronous = <P extends GovernancePolicy>(p: P) =>
  p as Omit<P, 'evaluate'> & { evaluate(ctx: PolicyContext): PolicyDecision }
