import type { TurnEvent } from './turn-types.js'

export type TurnOutcome = 'completed' | 'denied' | 'cancelled' | 'error'

/** What a turn came to so far, and the tokens its usage events reported; a turn nobody finished reads as cancelled. */
export interface TurnTally {
  outcome: TurnOutcome
  input: number
  output: number
}

/** Folds one event of a turn into its tally. */
export function noteTurnEvent(tally: TurnTally, e: TurnEvent): void {
  if (e.type === 'usage') {
    tally.input += e.usage.input
    tally.output += e.usage.output
  } else if (e.type === 'complete') tally.outcome = 'completed'
  else if (e.type === 'error')
    tally.outcome = e.code === 'denied' ? 'denied' : e.code === 'cancelled' ? 'cancelled' : 'error'
}
