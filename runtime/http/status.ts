import { STATUS_CODES } from 'node:http'

/** "200 OK" strings for uWS writeStatus, built once. */
const LINES: string[] = []
for (const [code, text] of Object.entries(STATUS_CODES)) LINES[Number(code)] = `${code} ${text}`

export function statusLine (status: number): string {
  return LINES[status] ?? `${status} Unknown`
}
