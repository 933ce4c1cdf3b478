import t from 'tap'
import * as client from '../../sdk/client.js'
import type * as wire from '../../sdk/client.js'
import type * as served from '../../runtime/interactions/types.js'
import type { InteractionRequest } from '../../runtime/interactions/interaction-request.js'
import type { TokenUsage } from '../../runtime/ai/runtime.js'
import { STREAM_PATH } from '../../runtime/interactions/stream.js'

// The interaction records are declared once, in sdk/client.d.ts, and the server imports them. These
// checks fail to compile (tsc -p tsconfig.test.json) when someone declares a server-side copy that
// differs from what the client reads.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false
const same = <A, B>(ok: Same<A, B>): Same<A, B> => ok

same<served.Interaction, wire.Interaction>(true)
same<served.InteractionHeader, wire.InteractionHeader>(true)
same<served.InteractionStep, wire.InteractionStep>(true)
same<served.InteractionStatus, wire.InteractionStatus>(true)
same<served.StepType, wire.StepType>(true)
same<served.ListPage, wire.ListPage>(true)
same<TokenUsage, wire.TokenUsage>(true)
// a validated request body is a create body with its defaults filled in
const body: wire.CreateInteraction = {} as InteractionRequest
void body

t.test('the client dials the stream path the server serves', async (t) => {
  // sdk/client-stream.js is plain JavaScript: its value is checked here, not by the compiler
  t.equal(client.STREAM_PATH, STREAM_PATH)
})
