import t from 'tap'
import { startTestPlatform } from '../helpers/platform.js'
import { loadWorker } from '../../runtime/plugins/worker/index.js'
import { runTierContract } from './tier-contract.js'

const tp = await startTestPlatform()
t.teardown(tp.close)

runTierContract(t, {
  tier: 'worker',
  load: loadWorker,
  platform: tp,
  memoryMb: 64,
  stopsRunawayCode: true,
  timeoutMessage: /exceeded its time limit of 300 ms/,
  countsFailures: true,
  argsAsJson: true,
  wrapsThrows: true,
  sharesModuleState: false,
  missingEntry: /Cannot find module|not find/
})
