import ivm from 'isolated-vm'

/**
 * The time limit of plugin code run by `applySync`, without isolated-vm's per-call `timeout`. That
 * option files one entry per call in isolated-vm's timer thread, kept until it falls due even when
 * the call returned long before: about 0.6 µs a call, a heap that grows with the call rate, and a
 * crash of the whole process when tens of thousands of them fall due at once (the timer thread
 * drains them recursively and overflows its stack).
 *
 * Instead a second, tiny isolate watches from isolated-vm's thread pool. Each entry writes its
 * deadline and isolate into shared memory (a few atomic stores, no system call); the watcher sleeps
 * until the deadline of the entry it sees, wakes, and if that same entry is still running past its
 * deadline it disposes that isolate: V8 stops the plugin at once, `applySync` throws on the host
 * thread, which survives, and the runner fails the call as `timeout` (an isolate that runs out of
 * time was always reset). The watcher is started by the first entry of a burst and ends once it
 * finds no entry for a whole wait, so it holds the event loop open only while calls run; an entry
 * whose deadline is earlier than the one it sleeps until (a plugin with a shorter limit) wakes it.
 */

// Int32 slots in the shared buffer. Deadlines are Date.now() ms truncated to 32 bits, compared
// with wrapping subtraction (fine for limits under 24 days).
// odd while plugin code runs; changes with every entry. The watcher claims an entry it stops by
// flipping bit 30 of it (compare-and-swap), so the host learns it from the value it replaces when the
// entry ends, and an entry that ended first is never stopped
const SEQ = 0
const DEADLINE = 1
const TARGET = 2
const MARK = 0x40000000
const ALIVE = 4 // 1 while a watch loop runs or is queued
const ARMED = 5 // the deadline the watcher sleeps until
// asks the loop to end now: set while registering, and once no isolate is left
const STOP = 6
// the entry (marked) the watcher stopped, until the host leaves it: kept here, not in the loop, so
// no later loop claims it again
const CLAIMED = 7
/** Longest sleep of the watcher: how long it outlives the last entry (and holds the event loop). */
const IDLE_MS = 200

const WATCHER = String.raw`(function () {
  const i32 = new Int32Array(sab)
  const targets = []
  return {
    register (slot, iso) { targets[slot] = iso },
    loop () {
      let seen = -1
      for (;;) {
        if (Atomics.load(i32, ${STOP}) !== 0) { Atomics.store(i32, ${ALIVE}, 0); return }
        const s = Atomics.load(i32, ${SEQ})
        if (s === Atomics.load(i32, ${CLAIMED})) {
          // stopped; the host has yet to leave that entry
          Atomics.store(i32, ${ARMED}, (Date.now() + ${IDLE_MS}) | 0)
          Atomics.wait(i32, ${SEQ}, s, ${IDLE_MS})
          continue
        }
        if ((s & 1) === 0) {
          // no entry now, and none since the last look: end, unless an entry starts meanwhile
          if (s === seen && Atomics.compareExchange(i32, ${ALIVE}, 1, 0) === 1) {
            if (Atomics.load(i32, ${SEQ}) === s) return
            if (Atomics.compareExchange(i32, ${ALIVE}, 0, 1) !== 0) return
          }
          seen = s
          Atomics.store(i32, ${ARMED}, (Date.now() + ${IDLE_MS}) | 0)
          Atomics.wait(i32, ${SEQ}, s, ${IDLE_MS})
          continue
        }
        const deadline = Atomics.load(i32, ${DEADLINE})
        const slot = Atomics.load(i32, ${TARGET})
        if (Atomics.load(i32, ${SEQ}) !== s) continue
        const left = (deadline - (Date.now() | 0)) | 0
        if (left <= 0) {
          Atomics.store(i32, ${CLAIMED}, s ^ ${MARK})
          if (Atomics.compareExchange(i32, ${SEQ}, s, s ^ ${MARK}) === s) { try { targets[slot].dispose() } catch (_) {} }
          else Atomics.store(i32, ${CLAIMED}, 0)
          continue
        }
        seen = s
        const wait = left < ${IDLE_MS} ? left : ${IDLE_MS}
        Atomics.store(i32, ${ARMED}, (Date.now() + wait) | 0)
        Atomics.wait(i32, ${SEQ}, s, wait)
      }
    }
  }
})()`

/** One per thread: plugin isolates on a thread never run at the same time. */
export class Watchdog {
  private readonly i32 = new Int32Array(new SharedArrayBuffer(8 * 4))
  private readonly watcher: ivm.Isolate
  private readonly registerRef: ivm.Reference
  private readonly loopRef: ivm.Reference
  private seq = 0
  private readonly free: number[] = []
  private slots = 0
  private live = 0
  /** Outer entries paused while a host callback entered another isolate: slot, deadline, stopped (1). */
  private readonly outer: number[] = []
  /** The running entry was stopped while a nested entry held the shared state. */
  private lost = false
  private readonly ended = (): void => {}

  constructor() {
    this.watcher = new ivm.Isolate({ memoryLimit: 8 })
    const context = this.watcher.createContextSync()
    context.global.setSync('sab', new ivm.ExternalCopy(this.i32.buffer).copyInto({ release: true }))
    const api = context.evalSync(WATCHER, { reference: true, filename: 'platform:watchdog' }) as ivm.Reference
    this.registerRef = api.getSync('register', { reference: true }) as ivm.Reference
    this.loopRef = api.getSync('loop', { reference: true }) as ivm.Reference
    api.release()
  }

  /** Gives the watcher a handle to `iso`; returns the slot its entries name. */
  register(iso: ivm.Isolate): number {
    const slot = this.free.pop() ?? this.slots++
    const i32 = this.i32
    // the watcher isolate is busy while its loop runs: stop the loop, hand over the handle
    Atomics.store(i32, STOP, 1)
    Atomics.notify(i32, SEQ)
    try {
      this.registerRef.applySync(undefined, [slot, iso])
    } finally {
      Atomics.store(i32, STOP, 0)
    }
    // registered from inside an entry (a host callback that loads a plugin): that entry is watched again
    if ((this.seq & 1) === 1 && Atomics.compareExchange(i32, ALIVE, 0, 1) === 0) this.start()
    this.live++
    return slot
  }

  /** The isolate in `slot` is gone; with none left the loop ends now rather than at its next wake. */
  unregister(slot: number): void {
    this.free.push(slot)
    if (--this.live === 0) {
      Atomics.store(this.i32, STOP, 1)
      Atomics.notify(this.i32, SEQ)
    }
  }

  /** Before entering the isolate in `slot`: it may run until `deadline` (Date.now() ms). */
  begin(slot: number, deadline: number): void {
    const i32 = this.i32
    const nested = (this.seq & 1) === 1
    const outerSlot = i32[TARGET]!
    const outerDeadline = i32[DEADLINE]!
    const outerStopped = this.watch(slot, deadline | 0) || this.lost
    this.lost = false
    if (nested) this.outer.push(outerSlot, outerDeadline, outerStopped ? 1 : 0)
  }

  /** After the entry returned or threw: true when the watcher disposed its isolate for the time limit. */
  end(): boolean {
    const lost = this.lost
    this.lost = false
    if (this.outer.length === 0) {
      const mine = this.seq
      this.seq = (mine + 1) | 0
      return this.stopped(Atomics.exchange(this.i32, SEQ, this.seq), mine) || lost
    }
    const outerStopped = this.outer.pop() === 1
    const deadline = this.outer.pop()!
    const stopped = this.watch(this.outer.pop()!, deadline) || lost
    this.lost = outerStopped
    return stopped
  }

  /** Publishes a new running entry; true when the watcher had claimed the one running until now. */
  private watch(slot: number, deadline: number): boolean {
    const i32 = this.i32
    i32[TARGET] = slot
    i32[DEADLINE] = deadline
    // odd: running (a new odd number when an outer entry resumes); wraps within int32, parity kept
    const mine = this.seq
    this.seq = (mine + ((mine & 1) === 1 ? 2 : 1)) | 0
    const was = Atomics.exchange(i32, SEQ, this.seq)
    if (Atomics.load(i32, ALIVE) === 0) {
      if (Atomics.compareExchange(i32, ALIVE, 0, 1) === 0) this.start()
    } else if (((deadline - Atomics.load(i32, ARMED)) | 0) < 0) Atomics.notify(i32, SEQ)
    return this.stopped(was, mine)
  }

  /** `was` replaced the host's `mine`: the watcher had marked it (and no longer needs its claim). */
  private stopped(was: number, mine: number): boolean {
    if (was === mine) return false
    Atomics.store(this.i32, CLAIMED, 0)
    return true
  }

  private start(): void {
    this.loopRef.apply(undefined, []).then(this.ended, () => {
      // the watcher isolate failed: the next entry starts a loop again
      Atomics.store(this.i32, ALIVE, 0)
    })
  }
}

let shared: Watchdog | undefined

/** This thread's watchdog, created on first use. */
export function watchdog(): Watchdog {
  return (shared ??= new Watchdog())
}
