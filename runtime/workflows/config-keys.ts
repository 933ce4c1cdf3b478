/**
 * The configuration keys the workflows area owns; `runtime/areas.ts` gathers them with the others.
 * The store's key keeps its `platform.admin.` name: workflows are an admin surface to operators.
 */
import type { KeyDefs, KeyValues } from '../config/index.js'

export const WORKFLOWS_CONFIG_KEYS = {
  'platform.admin.workflows.store': {
    schema: { enum: ['memory', 'lmdb', 'postgres'] },
    default: 'lmdb',
    sharedState: true,
    description:
      'WorkflowStore: `lmdb` keeps workflow manifests across restarts, `postgres` shares them and the run records and approval decisions with every node on `platform.postgres.url`, `memory` for the life of the process. In cluster mode the default is `postgres`'
  }
} as const satisfies KeyDefs

declare module '../config/index.js' {
  interface ConfigKeys extends KeyValues<typeof WORKFLOWS_CONFIG_KEYS> {}
}
