// A configuration mistake in a secret key stops start-up with a message naming the key, never the
// value: the message goes to the terminal, to CI logs and to whoever is asked to help, so it must
// not carry a token, a password or a signing key.
import t from 'tap'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { CONFIG_KEYS, loadConfig } from '../../runtime/areas.js'
import { ConfigKeySet, configTable } from '../../runtime/config/index.js'

const dir = mkdtempSync(join(tmpdir(), 'platform-config-secrets-'))

interface Case {
  key: string
  /** How the operator gave the bad value. */
  source: { yaml: string } | { env: Record<string, string> }
  /** The secret text the message must not contain. */
  secret: string
}

const CASES: Case[] = [
  {
    key: 'platform.auth.tokens',
    // a token shorter than 16 characters: the entry is refused
    source: { yaml: 'platform.auth.tokens:\n  - {token: hunter2-secret, principal: ops}\n' },
    secret: 'hunter2-secret'
  },
  {
    key: 'platform.mcp.request-state-key',
    // shorter than the 32 characters the HMAC key needs
    source: { env: { PLATFORM_MCP_REQUEST_STATE_KEY: 'state-key-secret-0123' } },
    secret: 'state-key-secret-0123'
  },
  {
    key: 'platform.ai.openai.api-key',
    // an all-digit key YAML reads as a number
    source: { yaml: 'platform.ai.openai.api-key: 8812736451\n' },
    secret: '8812736451'
  },
  {
    key: 'platform.ai.scope.embeddings.api-key',
    source: { yaml: 'platform.ai.scope.embeddings.api-key: [sk-embed-secret-9981]\n' },
    secret: 'sk-embed-secret-9981'
  },
  {
    key: 'platform.ai.scope.chat.api-key',
    source: { yaml: 'platform.ai.scope.chat.api-key: {key: sk-chat-secret-4410}\n' },
    secret: 'sk-chat-secret-4410'
  },
  {
    key: 'platform.postgres.url',
    secret: 'pg-shared-secret',
    source: { yaml: 'platform.postgres.url: [postgres://app:pg-shared-secret@127.0.0.1/db]\n' }
  },
  {
    key: 'platform.cluster.redis-url',
    secret: 'redis-pass-secret',
    source: { yaml: 'platform.cluster.redis-url: [redis://:redis-pass-secret@127.0.0.1:6379]\n' }
  },
  {
    key: 'platform.mcp.servers',
    secret: 'mcp-env-secret',
    source: { yaml: 'platform.mcp.servers: [GITHUB_TOKEN=mcp-env-secret]\n' }
  },
  {
    key: 'platform.interactions.postgres.url',
    // a list where one URL is expected: the URL carries the database password
    source: { yaml: 'platform.interactions.postgres.url: [postgres://app:pg-pass-secret@127.0.0.1/db]\n' },
    secret: 'pg-pass-secret'
  },
  {
    key: 'platform.webhooks.secret',
    // a list where the signing key is expected
    source: { yaml: 'platform.webhooks.secret: [webhook-signing-secret-0042]\n' },
    secret: 'webhook-signing-secret-0042'
  },
  {
    key: 'org.platform.auth.jwt.keys',
    // a shared HMAC secret beside an entry that is neither a PEM string nor a JWK
    source: { yaml: 'org.platform.auth.jwt.keys:\n  - {kty: oct, k: aG1hYy1zZWNyZXQtNzc}\n  - 42\n' },
    secret: 'aG1hYy1zZWNyZXQtNzc'
  }
]

let n = 0
for (const c of CASES) {
  t.test(`a bad ${c.key} is named, its value never printed`, async (t) => {
    const load = () =>
      'yaml' in c.source
        ? loadConfig({ file: writeYaml(c.source.yaml), env: {}, cwd: dir })
        : loadConfig({ env: c.source.env, cwd: dir })
    let message = ''
    try {
      load()
      t.fail('the bad value was accepted')
    } catch (err) {
      t.equal((err as { code?: unknown }).code, 'PLT_ERR_CONFIG_INVALID')
      message = (err as Error).message
    }
    t.match(message, `config key '${c.key}'`, 'the message names the key')
    t.notMatch(message, c.secret, 'the message does not contain the secret')
  })
}

t.test('every secret key above is marked secret, and no other key is left out of the cases', async (t) => {
  const marked = Object.entries(CONFIG_KEYS.keys)
    .filter(([, d]) => d.secret === true)
    .map(([k]) => k)
  t.same(marked.sort(), CASES.map((c) => c.key).sort())
})

t.test('a YAML syntax error on a secret line gives the line and column, not the line', async (t) => {
  t.throws(() => loadConfig({ file: writeYaml('platform.ai.openai.api-key: sk-yaml: secret-7731\n'), env: {} }), {
    code: 'PLT_ERR_CONFIG_INVALID',
    message: /at line 1, column \d+$/
  })
  let message = ''
  try {
    loadConfig({ file: writeYaml('platform.ai.openai.api-key: "sk-quote-secret-7731\n'), env: {} })
  } catch (err) {
    message = (err as Error).message
  }
  t.match(message, /unclosed|Missing closing/i, 'the unclosed quote is refused')
  t.notMatch(message, 'secret-7731')
})

t.test("the README table never shows a secret key's default", async (t) => {
  const keys = new ConfigKeySet([
    {
      name: 'leaky',
      configKeys: {
        'platform.leaky.key': { schema: { type: 'string' }, default: 'built-in-secret', secret: true, description: 'x' }
      }
    }
  ])
  const row = configTable(keys)
    .split('\n')
    .find((r) => r.startsWith('| `platform.leaky.key` |'))!
  t.match(row, '| (secret) |')
  t.notMatch(row, 'built-in-secret')
})

function writeYaml(text: string): string {
  const p = join(dir, `secret-${n++}.yaml`)
  writeFileSync(p, text)
  return p
}
