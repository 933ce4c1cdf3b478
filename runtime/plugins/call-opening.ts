import { pluginCallError, pluginCallFailure, type InvokeRequest } from './contract.js'
import type { CallSlots } from './call-slots.js'
import type { CancelSignal } from './cancel.js'

/**
 * What the isolate and worker tiers check before a call: the plugin is still loaded, the caller has
 * not cancelled, the arguments are JSON. Returns the arguments as JSON text ('' when there are none).
 */
export function openCall(plugin: string, unloaded: boolean, req: InvokeRequest, signal?: CancelSignal): string {
  if (unloaded) throw pluginCallError(plugin, 'unavailable', `plugin '${plugin}' was unloaded`)
  if (signal?.aborted === true) throw pluginCallError(plugin, 'cancelled', `call to plugin '${plugin}' was cancelled`)
  try {
    return req.args === undefined ? '' : JSON.stringify(req.args)
  } catch (err) {
    throw pluginCallError(plugin, 'invalid-result', `arguments are not JSON: ${(err as Error).message}`)
  }
}

/**
 * Takes a call slot. A free one is taken synchronously and nothing is returned, so the fast path
 * costs no await; otherwise the promise settles when the call may run, and a wait the caller
 * cancels rejects with a `cancelled` PLUGIN_CALL_FAILED. The caller releases the slot.
 */
export function takeSlot(plugin: string, slots: CallSlots, signal?: CancelSignal): Promise<void> | undefined {
  const wait = slots.acquire(signal)
  if (wait === undefined) return undefined
  return wait.catch((err: unknown) => {
    throw pluginCallFailure(err) !== undefined
      ? err
      : pluginCallError(plugin, 'cancelled', `call to plugin '${plugin}' was cancelled while queued`)
  })
}
