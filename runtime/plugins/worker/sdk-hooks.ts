/**
 * Module resolve hook registered inside each plugin worker thread: `uws-agent-platform/sdk` resolves
 * to the host's SDK wherever the plugin folder lives (plugin folders need no node_modules).
 */
let sdkUrl = ''

export function initialize(data: { sdk: string }): void {
  sdkUrl = data.sdk
}

type Next = (specifier: string, context: unknown) => Promise<unknown>
export async function resolve(specifier: string, context: unknown, next: Next): Promise<unknown> {
  if (specifier === 'uws-agent-platform/sdk') return { url: sdkUrl, shortCircuit: true }
  return await next(specifier, context)
}
