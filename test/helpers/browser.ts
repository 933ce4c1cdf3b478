/**
 * Debian's Chromium driven by playwright-core, for the dashboard's browser tests. Without it a test
 * file fails when `CI=true` (.ci/run installs it) and is skipped otherwise, saying why.
 */
import t from 'tap'
import { existsSync, mkdirSync } from 'node:fs'
import { chromium, type Browser } from 'playwright-core'

const CHROMIUM = '/usr/bin/chromium'

/** Where screenshots go (git-ignored test artifacts). */
export const SHOTS = new URL('../../test-artifacts/dashboard/', import.meta.url).pathname

/** A headless Chromium closed when the file's tests end; exits the file (skipped) when there is none. */
export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) {
    const why = `${CHROMIUM} is not installed`
    if (process.env.CI === 'true') throw new Error(`${why}: .ci/run installs the chromium package`)
    t.skip(`${why} (apt-get install chromium; .ci/run does)`, () => {})
    process.exit(0)
  }
  mkdirSync(SHOTS, { recursive: true })
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--no-sandbox',
      '--headless',
      '--disable-gpu',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync'
    ]
  })
  t.teardown(() => browser.close())
  return browser
}
