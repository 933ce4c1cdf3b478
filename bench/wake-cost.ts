/**
 * What waking a sleeping thread or process costs on this machine, and what watching before
 * sleeping buys back: the reason for `platform.sandbox.spin-us`. One message at a time, round
 * trips timed in this process (wall time and this process's CPU):
 *   thread       a worker thread answering over a MessagePort; it sleeps at once, or first watches
 *                a shared counter for the given microseconds (the worker tier's `spinningWait`)
 *   process      a child process answering over Node IPC; it sleeps at once, or keeps its event loop
 *                polling for the given microseconds after answering (the sandbox's `LoopWatch`)
 *
 *   npx tsc -p tsconfig.json && node dist/bench/wake-cost.js [--calls N] [--watch US]
 * On a machine whose idle CPUs halt without polling first (many virtual machines) the watch halves
 * the round trip and lowers the caller's CPU; where wake-ups are cheap it changes little.
 */
import { fork } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { MessageChannel, Worker, isMainThread, receiveMessageOnPort, workerData } from 'node:worker_threads'
import type { MessagePort } from 'node:worker_threads'
import { LoopWatch, spinningWait } from '../runtime/plugins/index.js'

const arg = (name: string, dflt: number): number => {
  const i = process.argv.indexOf(name)
  return i < 0 ? dflt : Number(process.argv[i + 1])
}
const SELF = fileURLToPath(import.meta.url)

/** The worker side: wait for a counter change (through the worker tier's watch), answer every queued message. */
function threadSide(d: { counter: Int32Array; port: MessagePort; watchUs: number }): void {
  const wait = d.watchUs > 0 ? spinningWait(Atomics.wait, d.watchUs) : Atomics.wait
  let seen = 0
  for (;;) {
    wait(d.counter, 0, seen)
    seen = Atomics.load(d.counter, 0)
    for (let m = receiveMessageOnPort(d.port); m !== undefined; m = receiveMessageOnPort(d.port))
      d.port.postMessage((m.message as number) + 1)
  }
}

/** The child process side: answer, then poll the loop a while (the isolate sandbox's watch). */
function processSide(watchUs: number): void {
  const watch = new LoopWatch(watchUs)
  process.on('message', (m: number) => {
    watch.arrived()
    process.send!(m + 1)
    watch.answered()
  })
  process.on('disconnect', () => process.exit(0))
}

async function time(calls: number, one: () => Promise<unknown>): Promise<{ wallUs: number; cpuUs: number }> {
  for (let i = 0; i < Math.min(2000, calls); i++) await one()
  const c0 = process.cpuUsage()
  const t0 = performance.now()
  for (let i = 0; i < calls; i++) await one()
  const wallUs = ((performance.now() - t0) * 1000) / calls
  const c = process.cpuUsage(c0)
  return { wallUs, cpuUs: (c.user + c.system) / calls }
}

async function viaThread(calls: number, watchUs: number): Promise<{ wallUs: number; cpuUs: number }> {
  const counter = new Int32Array(new SharedArrayBuffer(4))
  const { port1, port2 } = new MessageChannel()
  const w = new Worker(SELF, { workerData: { counter, port: port2, watchUs }, transferList: [port2] })
  let answer: (v: unknown) => void = () => {}
  port1.on('message', (m) => answer(m))
  try {
    return await time(calls, () => {
      const p = new Promise((r) => (answer = r))
      port1.postMessage(1)
      Atomics.add(counter, 0, 1)
      Atomics.notify(counter, 0)
      return p
    })
  } finally {
    port1.close()
    await w.terminate()
  }
}

async function viaProcess(calls: number, watchUs: number): Promise<{ wallUs: number; cpuUs: number }> {
  const child = fork(SELF, ['--child', String(watchUs)])
  let answer: (v: unknown) => void = () => {}
  child.on('message', (m) => answer(m))
  await new Promise((r) => child.once('spawn', r))
  try {
    return await time(calls, () => {
      const p = new Promise((r) => (answer = r))
      child.send(1)
      return p
    })
  } finally {
    child.disconnect()
  }
}

if (!isMainThread) threadSide(workerData as never)
else if (process.argv.includes('--child')) processSide(arg('--child', 0))
else {
  const calls = arg('--calls', 20_000)
  const watch = arg('--watch', 50)
  const rows: Record<string, string> = {}
  for (const [name, run] of [
    ['thread', viaThread],
    ['process', viaProcess]
  ] as const)
    for (const us of [0, watch]) {
      const r = await run(calls, us)
      rows[`${name}, watch ${us} µs`] = `${r.wallUs.toFixed(1)} µs wall, ${r.cpuUs.toFixed(1)} µs CPU of the caller`
    }
  console.log(JSON.stringify({ calls, rows }, null, 1))
}
