import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import OpenAI from 'openai'
import { installAreas } from '../../runtime/areas.js'
import { startTestPlatform, type TestPlatform } from '../helpers/platform.js'

export const ALICE = 'alice-token-0123456789'
export const BOB = 'bob-token-0123456789ab'
const REPO = fileURLToPath(new URL('../../', import.meta.url))

/** A served platform with every area, the bundled plugins (the `demo` agent), writes on, two principals. */
export async function startOpenAi(overrides: Record<string, unknown> = {}): Promise<TestPlatform> {
  const tp = await startTestPlatform(
    {
      'platform.plugins.dirs': [join(REPO, 'plugins')],
      'platform.interactions.http-write-enabled': true,
      'platform.auth.tokens': [
        { token: ALICE, principal: 'alice' },
        { token: BOB, principal: 'bob' }
      ],
      ...overrides
    },
    { install: installAreas, pluginHost: { loadTimeoutMs: 60_000 } }
  )
  const failed = tp.logs.filter((l) => /fail/i.test(String(l.msg)))
  if (!tp.platform.plugins.agents().some((a) => a.name === 'demo'))
    throw new Error(`the demo agent did not load: ${JSON.stringify(failed)}`)
  return tp
}

/** The official client against the platform, as `token`; no retries, so an error row is one request. */
export function client(tp: TestPlatform, token: string = ALICE): OpenAI {
  return new OpenAI({ baseURL: `${tp.url}/v1`, apiKey: token, maxRetries: 0 })
}

/** The error a client call fails with, as the client typed it: its class name, status and OpenAI error fields. */
export async function failure(
  p: Promise<unknown>
): Promise<{ name: string; status: number | undefined; code: unknown; type: unknown; param: unknown }> {
  try {
    await p
  } catch (err) {
    if (!(err instanceof OpenAI.APIError)) throw err
    return { name: err.constructor.name, status: err.status, code: err.code, type: err.type, param: err.param }
  }
  throw new Error('the call succeeded')
}
