import t from 'tap'
import { startTestPlatform } from '../helpers/platform.js'
import { loadInline, type LoadSpec } from '../../runtime/plugins/index.js'
import { guardInline } from '../../runtime/plugins/inline-guard.js'
import { runTierContract } from './tier-contract.js'

const tp = await startTestPlatform()
t.teardown(tp.close)

runTierContract(t, {
  tier: 'inline',
  // as the loader makes it: the entry imported in this process, behind the inline limits
  load: async (spec: LoadSpec) => guardInline(await loadInline(spec), spec.manifest.name, spec.grant.limits),
  platform: tp,
  stopsRunawayCode: false,
  timeoutMessage: /plugin 'healthy' tool 'sleep' timed out after 300 ms/,
  countsFailures: false,
  argsAsJson: false,
  wrapsThrows: false,
  sharesModuleState: true,
  missingEntry: /Cannot find module/
})
