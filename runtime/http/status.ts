import { STATUS_CODES } from 'node:http'

/** "200 OK" lines for uWS writeStatus, encoded once. */
const LINES: Buffer[] = []
for (const [code, text] of Object.entries(STATUS_CODES)) LINES[Number(code)] = Buffer.from(`${code} ${text}`)

export function statusLine(status: number): Buffer | string {
  return LINES[status] ?? `${status} Unknown`
}
