// A writer killed mid-stream: the crash tests' child process that prints one line per
// acknowledged write, and is sent SIGKILL once enough have been acknowledged.
import { spawn } from 'node:child_process'

/**
 * Runs `script` (an ES module, given `arg` as its argument) in a child process, SIGKILLs it once
 * `killAt` lines have been printed, and resolves with every line it printed before it died.
 * `nodeArgs` go before the script (`--no-node-snapshot` for a child that starts the platform).
 */
export function killWriterAfter(
  script: string,
  arg: string,
  killAt: number,
  nodeArgs: string[] = []
): Promise<string[]> {
  const proc = spawn(process.execPath, [...nodeArgs, '--input-type=module', '-e', script, arg], {
    stdio: ['ignore', 'pipe', 'inherit']
  })
  const acked: string[] = []
  return new Promise((resolve) => {
    let buf = ''
    proc.stdout.on('data', (d: Buffer) => {
      buf += d.toString()
      const lines = buf.split('\n')
      buf = lines.pop()!
      acked.push(...lines)
      if (acked.length >= killAt && !proc.killed) proc.kill('SIGKILL')
    })
    proc.on('exit', () => resolve(acked))
  })
}

/** The last number a writer acknowledged (its lines are 0, 1, 2, ...), -1 for none. */
export const lastAcked = (lines: string[]): number => (lines.length === 0 ? -1 : Number(lines[lines.length - 1]))
