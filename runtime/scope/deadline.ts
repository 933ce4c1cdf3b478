/**
 * Settles with `p`, or rejects when `signal` aborts first: a plugin call that ignores its abort
 * signal still cannot hold a scope check past its bound.
 */
export async function withDeadline<T>(p: Promise<T>, signal: AbortSignal, what: string): Promise<T> {
  if (signal.aborted) throw new Error(`${what} timed out`)
  let onAbort!: () => void
  const aborted = new Promise<never>((_resolve, reject) => {
    onAbort = () => {
      reject(new Error(`${what} timed out`))
    }
    signal.addEventListener('abort', onAbort, { once: true })
  })
  try {
    return await Promise.race([p, aborted])
  } finally {
    signal.removeEventListener('abort', onAbort)
  }
}
