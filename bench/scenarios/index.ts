import type { Scenario } from '../scenario.js'
import httpJson from './http-json.js'
import roomBroadcast from './room-broadcast.js'
import durableWrites from './durable-writes.js'
import wsFleet from './ws-fleet.js'
import mcp from './mcp.js'
import mcpGateway from './mcp-gateway.js'
import pluginCalls from './plugin-calls.js'
import governance from './governance.js'
import interactions from './interactions.js'
import interactionStreams from './interaction-streams.js'
import ai from './ai.js'
import openaiApi from './openai-api.js'
import adminEvents from './admin-events.js'
import hostileLoad from './hostile-load.js'
import cluster from './cluster.js'

/** Every scenario, in the order the suite runs them. */
export const SCENARIOS: Scenario[] = [
  httpJson,
  roomBroadcast,
  wsFleet,
  mcp,
  mcpGateway,
  pluginCalls,
  governance,
  ai,
  openaiApi,
  durableWrites,
  interactions,
  interactionStreams,
  adminEvents,
  hostileLoad,
  cluster
]
