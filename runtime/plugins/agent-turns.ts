import { randomBytes } from 'node:crypto'

/** What an agent's own `run(turn, ctx)` may ask of the host while its turn is open. */
export interface AgentTurnHandlers {
  model(options: unknown): Promise<unknown>
  callTool(name: string, args: unknown): Promise<unknown>
  /** `agent.fleet.*` calls of a coordinator's run (`ctx.fleet`); absent for an agent without a fleet. */
  fleet?(op: string, args: unknown[]): Promise<unknown>
}

/**
 * The open turns of agents that run their own loop. The turn id travels into the sandbox, so it is
 * unguessable, and a call must also come from the plugin that owns the turn: a plugin can never
 * reach another plugin's turn, nor one that has ended.
 */
export class AgentTurns {
  private readonly open = new Map<string, { plugin: string; handlers: AgentTurnHandlers }>()

  /** Opens a turn for `plugin`; its id is what the sandbox names in every host call. */
  begin(plugin: string, handlers: AgentTurnHandlers): string {
    const id = randomBytes(18).toString('base64url')
    this.open.set(id, { plugin, handlers })
    return id
  }

  end(id: string): void {
    this.open.delete(id)
  }

  /** Turns open now (a finished or cancelled turn is never left behind). */
  get size(): number {
    return this.open.size
  }

  /** One host call from `plugin`'s sandbox: `args` leads with the turn id. */
  async call(plugin: string, op: string, args: unknown[]): Promise<unknown> {
    const id = args[0]
    const turn = typeof id === 'string' ? this.open.get(id) : undefined
    if (turn === undefined || turn.plugin !== plugin) throw new Error(`${op}: no open agent turn with this id`)
    switch (op) {
      case 'agent.model':
        return await turn.handlers.model(args[1])
      case 'agent.callTool':
        return await turn.handlers.callTool(String(args[1]), args[2])
      default:
        if (op.startsWith('agent.fleet.')) {
          if (turn.handlers.fleet === undefined) throw new Error(`${op}: this agent declares no fleet`)
          return await turn.handlers.fleet(op.slice('agent.fleet.'.length), args.slice(1))
        }
        throw new Error(`unknown capability '${op}'`)
    }
  }
}
