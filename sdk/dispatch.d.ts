import type { PluginDef, Ctx } from './index.js'
export declare function describePlugin(def: unknown): import('../runtime/plugins/contract.js').PluginDescriptor
export declare function startContribution(
  def: Readonly<Required<PluginDef>>,
  req: { kind: string; name: string; args: unknown },
  ctx: Ctx,
  hostCall?: (op: string, args: unknown[]) => Promise<unknown>
): unknown
export declare function invokeContribution(
  def: Readonly<Required<PluginDef>>,
  req: { kind: string; name: string; args: unknown },
  ctx: Ctx,
  hostCall?: (op: string, args: unknown[]) => Promise<unknown>
): Promise<unknown>
