import type { LoadSpec, PluginDescriptor, SandboxInstance } from '../contract.js'
import { InProcessBackend, ProcessBackend } from './backends.js'
import { IsolateInstance } from './instance.js'
import type { IsolateLoadData } from './isolate-core.js'
import { poolFor } from './pool.js'

/** Largest JSON result (and progress message) a plugin may hand back, unless its LoadSpec sets another. */
export const DEFAULT_MAX_RESULT_BYTES = 16 * 1024 * 1024

function loadData(spec: LoadSpec): IsolateLoadData {
  const { limits } = spec.grant
  const caps = spec.capabilities
  return {
    name: spec.manifest.name,
    dir: spec.dir,
    entry: spec.entry,
    memoryMb: limits.memoryMb,
    timeoutMs: limits.timeoutMs,
    maxResultBytes: spec.maxResultBytes ?? DEFAULT_MAX_RESULT_BYTES,
    grants: {
      kv: caps.kv !== undefined,
      fetch: caps.fetch !== undefined,
      ...(caps.env !== undefined ? { env: { ...caps.env } } : {})
    }
  }
}

/**
 * The isolate tier: one isolated-vm isolate per plugin, by default inside a supervised sandbox
 * process of a pool that several plugins share (see docs/sandboxes.md for why: hostile code can
 * abort a process through V8 out-of-memory despite the isolate's heap limit). `spec.isolation: 'in-process'` keeps the
 * isolate in the host process for trusted code and benchmarks. Rejects with the load error.
 */
export async function loadIsolate(spec: LoadSpec): Promise<SandboxInstance> {
  const inst = new IsolateInstance(spec)
  const data = loadData(spec)
  if (spec.isolation === 'in-process') inst.backend = new InProcessBackend(data, inst)
  else {
    const backend = new ProcessBackend(data, inst, poolFor({ ...spec.isolatePool, spinUs: spec.spinUs }))
    backend.inFlight = () => inst.inFlight
    inst.backend = backend
  }
  try {
    inst.descriptor = (await inst.backend.start()) as PluginDescriptor
  } catch (err) {
    await inst.backend.dispose()
    throw new Error(`plugin '${spec.manifest.name}' failed to load in the isolate sandbox: ${(err as Error).message}`, {
      cause: err
    })
  }
  return inst
}
