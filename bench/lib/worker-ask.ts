import type { Worker } from 'node:worker_threads'

/** Posts `cmd` to a worker that answers every command with one message, and resolves with that answer. */
export function askWorker<R>(worker: Worker, cmd: unknown): Promise<R> {
  return new Promise((resolve, reject) => {
    const onMsg = (m: R) => {
      worker.off('error', onErr)
      resolve(m)
    }
    const onErr = (e: Error) => {
      worker.off('message', onMsg)
      reject(e)
    }
    worker.once('message', onMsg)
    worker.once('error', onErr)
    worker.postMessage(cmd)
  })
}
