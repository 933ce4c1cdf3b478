import type { Area } from '../platform.js'

/** The interactions area: durable agent turns run through the AI area and streamed over transport. */
export const interactionsArea: Area = {
  name: 'interactions',
  dependsOn: ['ai', 'transport'],
  install(): void {}
}
