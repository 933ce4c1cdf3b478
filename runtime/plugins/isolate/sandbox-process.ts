/**
 * Entry of a sandbox child process: hosts the isolates of one or more plugins (one slot each) and
 * speaks a small message protocol with its supervisor (shared-process.ts). If hostile code takes
 * V8 down (isolated-vm is not OOM-resilient), only this process dies; the supervisor reads the
 * crash marker to learn whose isolate was running, fails the calls in flight and restarts.
 */
import { writeSync } from 'node:fs'
import { IsolateRunner, type IsolateLoadData, type IsolateSink } from './isolate-core.js'
import { Batcher, MARK_FD, type ToChild, type ToParent } from './protocol.js'
import { LoopWatch } from './loop-watch.js'

/** argv[2]: `platform.sandbox.spin-us` */
const watch = new LoopWatch(Number(process.argv[2] ?? 0))
const out = new Batcher<ToParent>((b) => {
  process.send!(b)
  watch.answered()
})
const send = (m: ToParent): void => {
  out.push(m)
}
const runners = new Map<number, IsolateRunner>()

const mark = Buffer.alloc(4)
let marked = 0
/** Records the slot about to run; a syscall only when the running plugin changes. */
function entering(s: number): void {
  if (marked === s) return
  marked = s
  mark.writeInt32LE(s)
  try {
    writeSync(MARK_FD, mark, 0, 4, 0)
  } catch {
    /* no marker: attribution falls back to calls in flight */
  }
}

function sinkFor(s: number): IsolateSink {
  return {
    result: (id, json) => {
      send({ t: 'result', s, id, json })
    },
    failed: (id, reason, message) => {
      send({ t: 'failed', s, id, reason, message })
    },
    progress: (id, json) => {
      send({ t: 'progress', s, id, json })
    },
    cap: (capId, id, op, args) => {
      send({ t: 'cap', s, capId, id, op, args })
    },
    log: (level, msg, data) => {
      send({ t: 'log', s, level, msg, data })
    },
    died: (reason, message) => {
      send({ t: 'died', s, reason, message })
    },
    enter: () => {
      entering(s)
    }
  }
}

function load(s: number, data: IsolateLoadData): void {
  runners.get(s)?.dispose()
  const runner = new IsolateRunner(data, sinkFor(s))
  runners.set(s, runner)
  try {
    send({ t: 'loaded', s, descriptor: runner.load() })
  } catch (err) {
    runners.delete(s)
    send({ t: 'load-failed', s, message: err instanceof Error ? err.message : String(err) })
  }
}

function onMessage(m: ToChild): void {
  switch (m.t) {
    case 'load':
      load(m.s, m.data)
      break
    case 'unload':
      runners.get(m.s)?.dispose()
      runners.delete(m.s)
      break
    case 'call': {
      const runner = runners.get(m.s)
      try {
        if (runner === undefined) throw new Error('not loaded in this process')
        runner.call(m.id, m.kind, m.name, m.args)
      } catch (err) {
        send({
          t: 'failed',
          s: m.s,
          id: m.id,
          reason: 'crashed',
          message: `plugin could not be reloaded: ${err instanceof Error ? err.message : String(err)}`
        })
      }
      break
    }
    case 'cap':
      runners.get(m.s)?.capDone(m.capId, m.ok, m.json)
      break
    case 'abort':
      runners.get(m.s)?.abort(m.id, m.message)
      send({ t: 'aborted', s: m.s, id: m.id })
      break
  }
}

process.on('message', (batch: ToChild[]) => {
  watch.arrived()
  for (const m of batch) onMessage(m)
})
// the parent went away: nothing left to serve
process.on('disconnect', () => {
  for (const r of runners.values()) r.dispose()
  process.exit(0)
})
