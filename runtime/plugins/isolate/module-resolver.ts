import { readFileSync, realpathSync, statSync } from 'node:fs'
import { dirname, extname, isAbsolute, resolve, sep } from 'node:path'
import { fileURLToPath } from 'node:url'

/** The one bare specifier plugin code may import; the host maps it to the SDK source. */
export const SDK_SPECIFIER = 'uws-agent-platform/sdk'
/** The dispatch module, importable only by the host's own bootstrap module. */
export const DISPATCH_SPECIFIER = 'uws-agent-platform/sdk/dispatch'

const sdkPaths = {
  sdk: fileURLToPath(import.meta.resolve(SDK_SPECIFIER)),
  dispatch: fileURLToPath(import.meta.resolve(DISPATCH_SPECIFIER))
}
const sdkSource = new Map<string, string>()

/** SDK source text, read once per process (the isolate compiles it like any module). */
export function sdkModule(which: 'sdk' | 'dispatch'): { path: string; code: string } {
  const path = sdkPaths[which]
  let code = sdkSource.get(path)
  if (code === undefined) {
    code = readFileSync(path, 'utf8')
    sdkSource.set(path, code)
  }
  return { path, code }
}

const MAX_MODULE_BYTES = 4 * 1024 * 1024

/**
 * Resolves `specifier` imported by the module at `referrer` to a file inside the plugin folder.
 * Relative specifiers only; the real path (symlinks followed) must stay under `root`. Everything
 * else is refused with a message naming the specifier, because an isolate has no Node APIs.
 */
export function resolvePluginImport(root: string, specifier: string, referrer: string): string {
  if (specifier.startsWith('node:'))
    throw new Error(`import '${specifier}' refused: Node built-ins are not available in the isolate sandbox`)
  if (!specifier.startsWith('./') && !specifier.startsWith('../')) {
    if (isAbsolute(specifier) || /^[a-z][a-z0-9+.-]*:/i.test(specifier))
      throw new Error(
        `import '${specifier}' refused: only relative imports inside the plugin folder and '${SDK_SPECIFIER}' are allowed`
      )
    throw new Error(
      `import '${specifier}' refused: bare specifiers other than '${SDK_SPECIFIER}' are not available in the isolate sandbox (bundle the dependency into the plugin folder)`
    )
  }
  const target = resolve(dirname(referrer), specifier)
  return checkInside(root, target, specifier)
}

/** Real path of `target`, refused unless it is a .js/.mjs file inside `root`. */
export function checkInside(root: string, target: string, shown: string): string {
  const realRoot = realpathSync(root)
  let real: string
  try {
    real = realpathSync(target)
  } catch {
    throw new Error(`import '${shown}' refused: no such file in the plugin folder`)
  }
  if (!real.startsWith(realRoot + sep))
    throw new Error(`import '${shown}' refused: it resolves outside the plugin folder`)
  const ext = extname(real)
  if (ext !== '.js' && ext !== '.mjs')
    throw new Error(`import '${shown}' refused: only .js and .mjs modules load in the isolate sandbox`)
  const st = statSync(real)
  if (!st.isFile()) throw new Error(`import '${shown}' refused: not a file`)
  if (st.size > MAX_MODULE_BYTES)
    throw new Error(`import '${shown}' refused: module larger than ${MAX_MODULE_BYTES >> 20} MB`)
  return real
}
