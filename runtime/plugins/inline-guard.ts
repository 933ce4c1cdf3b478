import type { SandboxInstance, InvokeRequest, InvokeOptions, Manifest } from './contract.js'
import { pluginCallError } from './contract.js'
import { CallSlots } from './call-slots.js'
import { Cancellation } from './cancel.js'
import { Deadlines } from './deadlines.js'

/**
 * Limits for the inline tier (isolate and worker tiers enforce their own): at most `concurrency`
 * calls at once (the rest queue), each abandoned with a timeout error after `timeoutMs` with its
 * `ctx.signal` aborted. In-process code cannot be stopped, only abandoned: inline is for trusted code.
 */
export function guardInline(inner: SandboxInstance, plugin: string, limits: Manifest['limits']): SandboxInstance {
  const slots = new CallSlots(limits.concurrency)
  const deadlines = new Deadlines<() => void>(limits.timeoutMs, (expire) => {
    expire()
  })
  const cancelled = () => pluginCallError(plugin, 'cancelled', `call to plugin '${plugin}' was cancelled`)

  /** One call: settled by the plugin, its deadline or the caller's cancel, whichever comes first. */
  function run(req: InvokeRequest, opts: InvokeOptions): Promise<unknown> {
    const outer = opts.signal
    const cancel = new Cancellation()
    return new Promise((resolve, reject) => {
      let done = false
      const finish = (): boolean => {
        if (done) return false
        done = true
        deadlines.delete(expire)
        outer?.removeEventListener('abort', onOuter)
        slots.release()
        return true
      }
      const expire = (): void => {
        const err = pluginCallError(
          plugin,
          'timeout',
          `plugin '${plugin}' ${req.kind} '${req.name}' timed out after ${limits.timeoutMs} ms`
        )
        if (finish()) {
          cancel.abort(err)
          reject(err)
        }
      }
      const onOuter = (): void => {
        if (finish()) {
          cancel.abort(outer!.reason)
          reject(cancelled())
        }
      }
      if (outer?.aborted === true) {
        onOuter()
        return
      }
      outer?.addEventListener('abort', onOuter, { once: true })
      deadlines.add(expire)
      const settle = (v: unknown): void => {
        if (finish()) resolve(v)
      }
      const fail = (e: unknown): void => {
        if (finish())
          reject(
            e instanceof Error
              ? e
              : pluginCallError(plugin, 'threw', `plugin '${plugin}' threw a non-Error value: ${safeString(e)}`)
          )
      }
      try {
        inner
          .invoke(req, { signal: cancel, ...(opts.onProgress !== undefined ? { onProgress: opts.onProgress } : {}) })
          .then(settle, fail)
      } catch (e) {
        fail(e)
      }
    })
  }

  return {
    kind: inner.kind,
    descriptor: inner.descriptor,
    invoke(req: InvokeRequest, opts: InvokeOptions = {}): Promise<unknown> {
      // a free slot is taken synchronously: the plugin starts in the caller's tick
      const wait = slots.acquire(opts.signal)
      return wait === undefined
        ? run(req, opts)
        : wait.then(
            () => run(req, opts),
            () => {
              throw cancelled()
            }
          )
    },
    dispose: async () => {
      deadlines.clear()
      await inner.dispose()
    }
  }
}

function safeString(v: unknown): string {
  try {
    return String(v).slice(0, 200)
  } catch {
    return typeof v
  }
}
