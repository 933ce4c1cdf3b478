import type { Scenario } from '../scenario.js'
import httpJson from './http-json.js'

/** Every scenario, in the order the suite runs them. */
export const SCENARIOS: Scenario[] = [
  httpJson
]
