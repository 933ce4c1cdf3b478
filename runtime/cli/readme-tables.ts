/**
 * `npm run config-docs`: rewrites the README's generated tables (configuration keys of the core and
 * every area, error codes from the union of the core's and every area's) between their markers.
 */
import { readFileSync, writeFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { CONFIG_BEGIN, CONFIG_END, configTable } from '../config/index.js'
import { ERR_BEGIN, ERR_END, errorTable } from '../http/index.js'
import { CONFIG_KEYS, errorCatalogue } from '../areas.js'

function splice(text: string, begin: string, end: string, table: string): string {
  const a = text.indexOf(begin)
  const b = text.indexOf(end)
  if (a < 0 || b < a) throw new Error(`README.md has no ${begin} markers`)
  return text.slice(0, a) + table + text.slice(b + end.length)
}

export function replaceTable(readme: string): string {
  return splice(
    splice(readme, CONFIG_BEGIN, CONFIG_END, configTable(CONFIG_KEYS)),
    ERR_BEGIN,
    ERR_END,
    errorTable(errorCatalogue())
  )
}

if (process.argv[1] === fileURLToPath(import.meta.url) && process.argv.includes('--write')) {
  const path = new URL('../../../README.md', import.meta.url)
  writeFileSync(path, replaceTable(readFileSync(path, 'utf8')))
}
