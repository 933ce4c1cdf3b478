/** The parts of lmdb-js's native environment object (`root.env`) that writing and closing go through. */
interface NativeEnv {
  startWriting(address: number, callback: (status: number) => unknown): unknown
  close(): void
}

// how long a close waits for a writer thread that never reports its end (a write failing with
// EPERM or ENOENT reports as a progress status would): then it closes as lmdb-js would have
const WRITER_END_WAIT_MS = 2000

/**
 * Holds the native close of an LMDB environment until every writer thread lmdb-js started has
 * ended. lmdb-js resolves a write once its transaction committed, while the writer thread still
 * runs: it goes on to tell the environment's `committed` listeners, and an environment closed in
 * between is freed under it (a SIGSEGV at shutdown, one run in about fifty on a loaded machine).
 * A writer's end is its last callback, after the thread returned (status 0 or an error code;
 * 1 and 2 are progress reports from the running thread). Returns a promise of the native close,
 * settled once `close()` was called and no writer runs.
 */
export function drainWritersOnClose(env: NativeEnv): () => Promise<void> {
  let running = 0
  let closeNow: (() => void) | undefined
  const startWriting = env.startWriting.bind(env)
  const close = env.close.bind(env)
  // own properties: the native methods on the prototype are read-only, so plain assignment throws
  define(env, 'startWriting', (address: number, callback: (status: number) => unknown) => {
    const started = startWriting(address, (status) => {
      try {
        return callback(status)
      } finally {
        if (status !== 1 && status !== 2 && --running === 0) closeNow?.()
      }
    })
    // counted once started: a start that throws (a closed environment) runs no thread
    running++
    return started
  })
  let closed: Promise<void> | undefined
  define(env, 'close', () => {
    if (running === 0) {
      close()
      closed = Promise.resolve()
      return
    }
    closed = new Promise((resolve) => {
      const timer = setTimeout(() => closeNow?.(), WRITER_END_WAIT_MS)
      closeNow = () => {
        closeNow = undefined
        clearTimeout(timer)
        close()
        resolve()
      }
    })
  })
  return async () => {
    await closed
  }
}

function define<K extends keyof NativeEnv>(env: NativeEnv, key: K, value: NativeEnv[K]): void {
  Object.defineProperty(env, key, { value, writable: true, configurable: true })
}
