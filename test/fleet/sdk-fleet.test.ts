// agent({ fleet }) in the SDK: refs normalised with their defaults, mistakes refused at load with
// the texts coordinators' authors see; the host checks a descriptor's fleet again.
import t from 'tap'
import { agent, definePlugin } from 'uws-agent-platform/sdk'
import { describePlugin } from '../../sdk/dispatch.js'
import { checkRefs } from '../../runtime/fleet/fleet-registry.js'

const run = (): string => 'ok'

t.test('refs: a name or an object, defaults filled in, described for the host', async (t) => {
  const a = agent({
    name: 'lead',
    run,
    fleet: ['a', { name: 'b', maxRetries: 2, circuitBreaker: true, timeoutMs: 50 }]
  })
  const d = describePlugin(definePlugin({ agents: [a] }))
  t.same(d.agents[0]!.fleet, [
    {
      name: 'a',
      version: '',
      required: true,
      weight: 1,
      maxRetries: 0,
      circuitBreaker: false,
      timeoutMs: 0,
      maxTurns: 0
    },
    {
      name: 'b',
      version: '',
      required: true,
      weight: 1,
      maxRetries: 2,
      circuitBreaker: true,
      timeoutMs: 50,
      maxTurns: 0
    }
  ])
  t.same(checkRefs('lead', d.agents[0]!.fleet), d.agents[0]!.fleet)
  t.notOk('fleet' in describePlugin(definePlugin({ agents: [agent({ name: 'x' })] })).agents[0]!)
})

t.test('mistakes are refused at load, each named', async (t) => {
  t.throws(() => agent({ name: 'lead', run, fleet: ['a', { name: 'a' }] }), {
    message: "Duplicate agent reference 'a' in coordinator 'lead'"
  })
  t.throws(() => agent({ name: 'lead', fleet: ['a'] }), {
    message: "coordinator 'lead': an agent with a fleet needs its own run(turn, ctx), which dispatches with ctx.fleet"
  })
  t.throws(() => agent({ name: 'lead', run, fleet: [] }), { message: /'fleet' must be a non-empty array/ })
  t.throws(() => agent({ name: 'lead', run, fleet: [{ name: 'a', maxRetries: -1 }] }), {
    message: "coordinator 'lead': fleet[0].maxRetries must be an integer from 0 to 10"
  })
  t.throws(() => agent({ name: 'lead', run, fleet: [{ name: 'a', timeoutMs: 'soon' as never }] }), {
    message: "coordinator 'lead': fleet[0].timeoutMs must be a non-negative integer (0: 120000)"
  })
  t.throws(() => agent({ name: 'lead', run, fleet: [{ name: 'a', retries: 1 } as never] }), {
    message: /fleet\[0\] has an unknown field 'retries'/
  })
  t.throws(() => agent({ name: 'lead', run, fleet: [{ name: '' }] }), {
    message: "coordinator 'lead': fleet[0].name must be a non-empty string"
  })
  t.throws(() => agent({ name: 'lead', run, fleet: [3 as never] }), { message: /fleet\[0\] must be an agent name/ })
})

t.test("the host refuses a descriptor's fleet the SDK would have refused", async (t) => {
  const ok = {
    name: 'a',
    version: '',
    required: true,
    weight: 1,
    maxRetries: 0,
    circuitBreaker: false,
    timeoutMs: 0,
    maxTurns: 0
  }
  t.equal(checkRefs('lead', [ok, { ...ok }]), "Duplicate agent reference 'a' in coordinator 'lead'")
  t.equal(checkRefs('lead', [{ ...ok, maxRetries: 99 }]), "coordinator 'lead': fleet[0].maxRetries is invalid")
  t.equal(checkRefs('lead', 'a'), "coordinator 'lead': 'fleet' must be a non-empty array")
})
