import { closeSync, constants, fstatSync, openSync, readSync } from 'node:fs'

/**
 * Reads a regular file of at most `maxBytes`, refusing anything else with a short reason the
 * caller prefixes with the path or key. Operators and plugin authors put paths in front of us:
 * a FIFO would block the read (and start-up) forever, `/dev/zero` would fill the heap, and a
 * huge file would be read whole. The file is opened non-blocking (so a FIFO does not wait for a
 * writer) and checked by its open descriptor, so a swap between the check and the read changes
 * nothing.
 */
export function readRegularFile(path: string, maxBytes: number): Buffer {
  const fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK)
  try {
    const st = fstatSync(fd)
    if (!st.isFile()) throw new Error('not a regular file')
    if (st.size > maxBytes) throw new Error(`larger than ${maxBytes} bytes`)
    // read one byte past the cap: a file that grew since the stat is refused, never truncated
    const buf = Buffer.allocUnsafe(st.size + 1)
    let n = 0
    for (let got; n < buf.length && (got = readSync(fd, buf, n, buf.length - n, null)) > 0;) n += got
    if (n > maxBytes) throw new Error(`larger than ${maxBytes} bytes`)
    return buf.subarray(0, n)
  } finally {
    closeSync(fd)
  }
}
