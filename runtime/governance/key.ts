import type { Platform } from '../platform.js'
import { AreaKey, type CommitmentLog } from '../contracts/index.js'
import type { GovernanceService } from './service.js'

/** The running governance service, provided when `platform.ai.governance.enabled`. */
export const GOVERNANCE = new AreaKey<GovernanceService>('governance')

/** The running governance service of a platform, if installed and enabled. */
export function governanceOf(platform: Platform): GovernanceService | undefined {
  return platform.hasArea(GOVERNANCE) ? platform.area(GOVERNANCE) : undefined
}

/** The commitment log, provided when `platform.ai.governance.commitment-records.enabled`. */
export const COMMITMENTS = new AreaKey<CommitmentLog>('commitments')
