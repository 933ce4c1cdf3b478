import type { Platform } from './platform.js'
<<<<<<< HEAD
import { installScope } from './scope/index.js'
=======
import { installTransport } from './transport/index.js'
>>>>>>> main

/**
 * Every area the served platform runs, in start-up order. Each area's `install(platform)` adds its
 * routes, readiness checks and close hooks; tests may install a subset.
 */
export async function installAreas (platform: Platform): Promise<void> {
<<<<<<< HEAD
  void platform
  await installScope(platform)
=======
  await installTransport(platform)
>>>>>>> main
}
