/**
 * Entry of a sandbox child process: hosts one plugin's isolate and speaks a small message
 * protocol with the supervisor (supervisor.ts). If hostile code takes V8 down (isolated-vm is not
 * OOM-resilient), only this process dies; the supervisor fails the calls in flight and restarts it.
 */
import { IsolateRunner, type IsolateLoadData, type IsolateSink } from './isolate-core.js'
import { Batcher, type ToChild, type ToParent } from './protocol.js'

const out = new Batcher<ToParent>((b) => { process.send!(b) })
const send = (m: ToParent): void => { out.push(m) }
let runner: IsolateRunner | undefined

const sink: IsolateSink = {
  result: (id, json) => { send({ t: 'result', id, json }) },
  failed: (id, reason, message) => { send({ t: 'failed', id, reason, message }) },
  progress: (id, json) => { send({ t: 'progress', id, json }) },
  cap: (capId, id, op, args) => { send({ t: 'cap', capId, id, op, args }) },
  log: (level, msg, data) => { send({ t: 'log', level, msg, data }) },
  died: (reason, message) => { send({ t: 'died', reason, message }) }
}

function load (data: IsolateLoadData): void {
  runner?.dispose()
  runner = new IsolateRunner(data, sink)
  try {
    send({ t: 'loaded', descriptor: runner.load() })
  } catch (err) {
    send({ t: 'load-failed', message: err instanceof Error ? err.message : String(err) })
  }
}

function onMessage (m: ToChild): void {
  switch (m.t) {
    case 'load': load(m.data); break
    case 'call':
      try { runner!.call(m.id, m.kind, m.name, m.args) } catch (err) {
        send({ t: 'failed', id: m.id, reason: 'crashed', message: `plugin could not be reloaded: ${err instanceof Error ? err.message : String(err)}` })
      }
      break
    case 'cap': runner?.capDone(m.capId, m.ok, m.json); break
    case 'abort': runner?.abort(m.id, m.message); send({ t: 'aborted', id: m.id }); break
  }
}

process.on('message', (batch: ToChild[]) => { for (const m of batch) onMessage(m) })
// the parent went away: nothing left to serve
process.on('disconnect', () => { runner?.dispose(); process.exit(0) })
