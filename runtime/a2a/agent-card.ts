/**
 * The A2A 1.0 Agent Card of one agent: who it is, where its JSON-RPC interface is (an absolute
 * URL, from `platform.a2a.public-url` or the request's Host), what it can do, and how a caller
 * authenticates. Push notifications are offered when the server delivers webhooks; an extended
 * card is not offered, and the card says so.
 */
import type { RegisteredAgent } from '../plugins/index.js'

export interface CardOptions {
  /** Absolute URL of the agent's A2A endpoint. */
  url: string
  /** True when `platform.ai.endpoint.auth` is `required`. */
  authRequired: boolean
  /** True when push notification configs are accepted (webhooks on, with a signing secret). */
  pushNotifications: boolean
}

export function agentCard(agent: RegisteredAgent, o: CardOptions): Record<string, unknown> {
  return {
    name: agent.name,
    description: agent.description === '' ? `The ${agent.name} agent` : agent.description,
    supportedInterfaces: [{ url: o.url, protocolBinding: 'JSONRPC', protocolVersion: '1.0' }],
    version: agent.version,
    capabilities: { streaming: true, pushNotifications: o.pushNotifications, extendedAgentCard: false },
    // the platform's API tokens and JWTs both arrive as a bearer token
    securitySchemes: {
      bearer: {
        httpAuthSecurityScheme: {
          scheme: 'Bearer',
          description: 'An API token of platform.auth.tokens, or a JWT the platform accepts'
        }
      }
    },
    securityRequirements: o.authRequired ? [{ schemes: { bearer: { list: [] } } }] : [],
    defaultInputModes: ['text/plain'],
    defaultOutputModes: ['text/plain'],
    skills: [
      {
        id: agent.name,
        name: agent.name,
        description: agent.description === '' ? `Talk to ${agent.name}` : agent.description,
        tags: ['agent', agent.plugin, ...agent.tools.map((tl) => tl.name)]
      }
    ]
  }
}

/**
 * The same card in A2A 0.3's shape, for 0.3 clients (`{agent path}/.well-known/agent.json`): one
 * `url` with its `preferredTransport`, OpenAPI-style security schemes, and the 0.3 protocol version.
 */
export function agentCard03(agent: RegisteredAgent, o: CardOptions): Record<string, unknown> {
  const card = agentCard(agent, o)
  return {
    protocolVersion: '0.3.0',
    name: card.name,
    description: card.description,
    url: o.url,
    preferredTransport: 'JSONRPC',
    additionalInterfaces: [{ url: o.url, transport: 'JSONRPC' }],
    version: card.version,
    capabilities: { streaming: true, pushNotifications: o.pushNotifications, stateTransitionHistory: false },
    securitySchemes: {
      bearer: {
        type: 'http',
        scheme: 'bearer',
        description: 'An API token of platform.auth.tokens, or a JWT the platform accepts'
      }
    },
    ...(o.authRequired ? { security: [{ bearer: [] }] } : {}),
    defaultInputModes: card.defaultInputModes,
    defaultOutputModes: card.defaultOutputModes,
    skills: card.skills,
    supportsAuthenticatedExtendedCard: false
  }
}

/** The request's own origin, for a card that names this server's URL. */
export function originOf(headers: Readonly<Record<string, string>>, publicUrl: string | undefined): string {
  if (publicUrl !== undefined) return publicUrl.replace(/\/+$/, '')
  return `http://${headers.host ?? '127.0.0.1'}`
}
