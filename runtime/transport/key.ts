import type { Platform } from '../platform.js'
import { AreaKey } from '../contracts/index.js'
import type { Transport } from './transport.js'

/** The platform's broadcasters and connected resources, provided by the transport area. */
export const TRANSPORT = new AreaKey<Transport>('transport')

/** The transport installed on `platform` (throws when the transport area is not installed). */
export function transportOf(platform: Platform): Transport {
  return platform.area(TRANSPORT)
}
