#!/usr/bin/env -S node --no-node-snapshot
// isolated-vm needs --no-node-snapshot on Node 20: re-exec once if we were started without it.
import { spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'

if (!process.execArgv.includes('--no-node-snapshot')) {
  const child = spawn(
    process.execPath,
    ['--no-node-snapshot', ...process.execArgv, fileURLToPath(import.meta.url), ...process.argv.slice(2)],
    { stdio: 'inherit' }
  )
  for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(sig, () => child.kill(sig))
  child.on('exit', (code, signal) => {
    process.exitCode = code ?? (signal ? 1 : 0)
  })
} else {
  const { main } = await import('../dist/runtime/cli/main.js')
  // exit explicitly: idle keep-alive sockets must not hold a stopped server open
  process.exit(await main(process.argv.slice(2)))
}
