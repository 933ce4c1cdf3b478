import type { SandboxInstance, InvokeRequest, InvokeOptions, Manifest } from './contract.js'
import { PluginCallError } from './contract.js'

/**
 * Limits for the inline tier (isolate and worker tiers enforce their own): at most `concurrency`
 * calls at once (the rest queue), each abandoned with a timeout error after `timeoutMs` with its
 * `ctx.signal` aborted. In-process code cannot be stopped, only abandoned: inline is for trusted code.
 */
export function guardInline (inner: SandboxInstance, plugin: string, limits: Manifest['limits']): SandboxInstance {
  let running = 0
  const queue: (() => void)[] = []
  const release = () => { running--; const next = queue.shift(); if (next !== undefined) { running++; next() } }

  async function slot (signal: AbortSignal | undefined): Promise<void> {
    if (running < limits.concurrency) { running++; return }
    await new Promise<void>((resolve, reject) => {
      const go = () => { signal?.removeEventListener('abort', cancel); resolve() }
      const cancel = () => {
        const i = queue.indexOf(go)
        if (i >= 0) queue.splice(i, 1)
        reject(new PluginCallError(plugin, 'cancelled', `call to plugin '${plugin}' was cancelled`))
      }
      queue.push(go)
      signal?.addEventListener('abort', cancel, { once: true })
    })
  }

  return {
    kind: inner.kind,
    descriptor: inner.descriptor,
    async invoke (req: InvokeRequest, opts: InvokeOptions = {}): Promise<unknown> {
      await slot(opts.signal)
      const ac = new AbortController()
      const onOuter = () => { ac.abort(opts.signal!.reason) }
      opts.signal?.addEventListener('abort', onOuter, { once: true })
      let timer: NodeJS.Timeout | undefined
      try {
        const limit = new Promise<never>((_resolve, reject) => {
          timer = setTimeout(() => {
            const err = new PluginCallError(plugin, 'timeout', `plugin '${plugin}' ${req.kind} '${req.name}' timed out after ${limits.timeoutMs} ms`)
            ac.abort(err)
            reject(err)
          }, limits.timeoutMs)
          ac.signal.addEventListener('abort', () => { if (opts.signal?.aborted === true) reject(new PluginCallError(plugin, 'cancelled', `call to plugin '${plugin}' was cancelled`)) }, { once: true })
        })
        const call = inner.invoke(req, { signal: ac.signal, ...(opts.onProgress !== undefined ? { onProgress: opts.onProgress } : {}) })
        call.catch(() => {})
        return await Promise.race([call, limit])
      } catch (e) {
        if (e instanceof Error) throw e
        throw new PluginCallError(plugin, 'threw', `plugin '${plugin}' threw a non-Error value: ${safeString(e)}`)
      } finally {
        clearTimeout(timer)
        opts.signal?.removeEventListener('abort', onOuter)
        release()
      }
    },
    dispose: () => inner.dispose()
  }
}

function safeString (v: unknown): string {
  try { return String(v).slice(0, 200) } catch { return typeof v }
}
