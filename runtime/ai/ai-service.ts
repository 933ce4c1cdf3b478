/**
 * What the AI area offers today. The AI-turns work adds the pipeline (runtime adapters, turns
 * through governance and scope, streaming over transport); until then it answers only what it
 * can answer for real.
 */
export interface AiService {
  /** Names of the agents the plugins contribute, whose turns this area runs, in registry order. */
  agentNames (): string[]
}
