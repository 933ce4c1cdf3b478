import { Ajv2020, type Options, type ValidateFunction } from 'ajv/dist/2020.js'

/**
 * A JSON-schema validator compiled the first time it is asked for. Compiling at import cost every
 * process that loads the module (the CLI, each test file, a platform that never serves A2A or
 * AG-UI) a few hundred milliseconds; the compiled function is pure, so one copy serves every
 * Platform of the process.
 */
export function compileOnUse<T>(schema: object, options: Options): () => ValidateFunction<T> {
  let compiled: ValidateFunction<T> | undefined
  return () => (compiled ??= new Ajv2020(options).compile<T>(schema))
}
