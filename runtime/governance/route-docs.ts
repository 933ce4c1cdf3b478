/**
 * The OpenAPI descriptions of the governance routes, handed to the HTTP server next to the routes
 * themselves; the schemas say what routes.ts accepts.
 */
import { CALLERS, type HttpServer, type RouteDoc } from '../http/index.js'
import { DECISIONS_DEFAULT_LIMIT } from './routes.js'
import { COMMITMENTS_DEFAULT_LIMIT, COMMITMENTS_MAX_LIMIT } from './commitment-routes.js'

const BASE = '/api/admin/governance'
const open = (summary: string): RouteDoc => ({ summary, gate: { read: 'open' } })

const DOCS: [method: 'GET' | 'POST', path: string, doc: RouteDoc][] = [
  ['GET', '/policies', open('The installed policies: name, type, version, source')],
  ['GET', '/summary', open('How many policies and where they came from')],
  ['GET', '/health', open('Kill switch, policies, dry runs and SLOs')],
  ['GET', '/owasp', open('The OWASP agentic top-10 coverage matrix')],
  ['GET', '/compliance', open('The compliance matrix')],
  ['GET', '/agt-verify', open('The agent-governance toolkit verification report')],
  [
    'GET',
    '/decisions',
    {
      summary:
        "The most recent admission decisions, newest first (in cluster mode every node's, each with its `node`); X-Next-Cursor (and Link) give the next, older page while older decisions remain. X-Anonymous-Denied counts the deny decisions of anonymous turns since start-up, X-Anonymous-Denied-Dropped those of them not kept (anonymous turns are logged apart and never push an authenticated turn out)",
      gate: { read: 'content' },
      query: {
        type: 'object',
        properties: {
          limit: {
            type: 'integer',
            minimum: 1,
            default: DECISIONS_DEFAULT_LIMIT,
            description: 'Capped at 10000'
          },
          cursor: { type: 'string', description: 'The X-Next-Cursor of the previous page' },
          callers: {
            enum: Object.keys(CALLERS),
            default: 'all',
            description: "authenticated: only turns run for a user; anonymous: only the others' (denials sampled)"
          }
        }
      }
    }
  ],
  [
    'GET',
    '/commitments',
    {
      summary:
        'The most recent commitment records, newest first, each with signed (it carries a proof) and verified (its Ed25519 signature over the JCS form of the record without proof checks against the published key)',
      gate: { read: 'content' },
      query: {
        type: 'object',
        properties: {
          limit: {
            type: 'integer',
            default: COMMITMENTS_DEFAULT_LIMIT,
            description: `0 or less gives an empty list; capped at ${COMMITMENTS_MAX_LIMIT}`
          }
        }
      }
    }
  ],
  ['GET', '/commitments/keys', open('The public keys commitment records are signed with, as a JWK set (kid = keyId)')],
  [
    'POST',
    '/check',
    {
      summary: 'Evaluate the policy chain for a request without running it or logging the decision',
      gate: { read: 'open' },
      body: {
        type: 'object',
        additionalProperties: false,
        properties: {
          agent_id: { type: 'string', default: '' },
          action: { type: 'string', default: '' },
          context: { type: 'object', default: {} }
        }
      }
    }
  ],
  [
    'POST',
    '/reload',
    {
      summary: 'Swap one policy for new YAML or JSON content',
      gate: { write: 'governance.reload' },
      optionalBody: true,
      statuses: [503],
      body: {
        type: 'object',
        properties: {
          swapName: { type: 'string', description: 'The policy to replace' },
          content: { type: 'string', description: 'The new policy document' },
          yaml: { type: 'string', description: 'Alias of content' },
          format: { type: 'string', description: 'A registered policy format (yaml by default)' }
        }
      }
    }
  ],
  [
    'POST',
    '/kill-switch/arm',
    {
      summary: 'Arm the kill switch: every admission is denied until disarmed',
      gate: { write: 'governance.kill_switch.arm' },
      statuses: [503],
      body: {
        type: 'object',
        required: ['reason'],
        properties: {
          reason: { type: 'string', minLength: 1 },
          operator: { type: 'string', description: "Defaults to the caller's name" }
        }
      }
    }
  ],
  [
    'POST',
    '/kill-switch/disarm',
    { summary: 'Disarm the kill switch', gate: { write: 'governance.kill_switch.disarm' }, statuses: [503] }
  ]
]

export function describeRoutes(http: HttpServer): void {
  for (const [method, path, doc] of DOCS) http.describe(method, BASE + path, doc)
}
