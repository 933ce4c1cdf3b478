// Connections (broadcasters and resources, with broadcast and disconnect) and the catalogue of
// agents, coordinators, AI runtimes, the MCP registry and plugins.
import { el, admin, table, badge, section, errorBox, frameAfterNext } from './api.js'

function confirmThen(question, action, out) {
  return async () => {
    if (!confirm(question)) return
    out.replaceChildren()
    try {
      const res = await action()
      out.append(el('p', { class: 'ok', role: 'status' }, res?.status ?? 'done'))
    } catch (err) {
      out.append(errorBox(err))
    }
  }
}

function broadcastForm(id, out) {
  const input = el('input', { type: 'text', placeholder: 'message', 'aria-label': `Message for ${id}`, class: 'msg' })
  const send = async (e) => {
    e.preventDefault()
    const message = input.value
    if (message === '') return
    await confirmThen(
      `Broadcast "${message}" to every member of ${id}?`,
      () => admin('/broadcasters/broadcast', { method: 'POST', body: { broadcasterId: id, message } }),
      out
    )()
  }
  return el('form', { class: 'inline', on: { submit: send } }, input, el('button', { type: 'submit' }, 'Broadcast'))
}

export const connectionsTab = {
  id: 'connections',
  label: 'Broadcasters',
  refreshOn: ['ResourceConnected', 'ResourceDisconnected', 'BroadcasterCreated', 'BroadcasterDestroyed'],
  async render() {
    const out = el('div', { 'aria-live': 'polite' })
    return [
      out,
      await section('Broadcasters', async () =>
        table(
          [
            { label: 'Id', value: (b) => b.id },
            { label: 'Class', value: (b) => b.className },
            { label: 'Members', value: (b) => b.resourceCount },
            { label: 'Broadcast', value: (b) => broadcastForm(b.id, out) }
          ],
          await admin('/broadcasters'),
          'No broadcasters: nobody has joined a room yet.'
        )
      ),
      await section('Resources', async () =>
        table(
          [
            { label: 'UUID', value: (r) => el('code', {}, r.uuid) },
            { label: 'Transport', value: (r) => badge(r.transport) },
            { label: 'Broadcaster', value: (r) => r.broadcaster },
            {
              label: 'State',
              value: (r) => (r.transport !== 'LONG_POLLING' ? 'open' : r.isSuspended ? 'poll held' : 'between polls')
            },
            {
              label: 'Action',
              value: (r) =>
                el(
                  'button',
                  {
                    type: 'button',
                    class: 'danger',
                    on: {
                      click: confirmThen(
                        `Disconnect ${r.uuid}?`,
                        () => admin(`/resources/${encodeURIComponent(r.uuid)}`, { method: 'DELETE' }),
                        out
                      )
                    }
                  },
                  'Disconnect'
                )
            }
          ],
          await admin('/resources'),
          'No connected clients.'
        )
      )
    ]
  }
}

// rows of a fleet-sized list drawn before "Show all"
const FIRST_ROWS = 200

function protocols(a) {
  return el(
    'span',
    {},
    (a.protocols ?? []).map((p) => badge(p, `proto-${p}`))
  )
}

export const agentsTab = {
  id: 'agents',
  label: 'Agents',
  refreshOn: ['AgentSessionStarted', 'AgentSessionEnded', 'TurnCompleted'],
  // each section is drawn when its own data is in (see drawParts in console.js): with a thousand
  // agents the table comes first, not after the slowest of the five
  render() {
    const first = section('Agents', async () => {
      const [agents, history] = await Promise.all([admin('/agents'), admin('/metrics/history')])
      const stats = history.agents ?? {}
      return table(
        [
          {
            label: 'Name',
            value: (a) =>
              a.coordinator === true
                ? el('span', { title: `fleet: ${a.fleet.join(', ')}` }, [a.name, ' ', badge('coordinator', 'warn')])
                : a.name
          },
          { label: 'Version', value: (a) => a.version },
          { label: 'Path', value: (a) => el('code', {}, a.path) },
          { label: 'Headless', value: (a) => (a.headless ? 'yes' : 'no') },
          { label: 'Protocols', value: protocols },
          // since start-up, from the metrics history
          { label: 'Turns', value: (a) => stats[a.name]?.turns ?? 0 },
          { label: 'Errors', value: (a) => stats[a.name]?.errors ?? 0 },
          { label: 'p95', value: (a) => (stats[a.name]?.p95 == null ? '—' : `${stats[a.name].p95} ms`) }
        ],
        agents,
        'No agents registered.',
        FIRST_ROWS
      )
    })
    // the other sections ask for their data once the agents table is on screen: their seven reads
    // and tables competed with it for the connections, the server and the page's first frames
    const later = (title, load) => first.then(frameAfterNext).then(() => section(title, load))
    return [
      first,
      later('Coordinators', async () =>
        table(
          [
            { label: 'Name', value: (c) => c.name },
            { label: 'Agents', value: (c) => c.agentCount },
            { label: 'Available', value: (c) => c.availableCount }
          ],
          await admin('/coordinators'),
          'No coordinators: the fleet is not running on this platform.'
        )
      ),
      later('AI runtimes', async () =>
        table(
          [
            { label: 'Name', value: (r) => r.name },
            {
              label: 'Available',
              value: (r) => badge(r.isAvailable ? 'available' : 'unavailable', r.isAvailable ? 'ok' : 'bad')
            },
            { label: 'Models', value: (r) => (r.models ?? []).join(', ') },
            {
              label: 'Capabilities',
              value: (r) =>
                el(
                  'span',
                  {},
                  (r.capabilities ?? []).map((c) => badge(c))
                )
            }
          ],
          await admin('/runtimes')
        )
      ),
      later('MCP registry', async () => {
        const [tools, resources, prompts, servers] = await Promise.all([
          admin('/mcp/tools'),
          admin('/mcp/resources'),
          admin('/mcp/prompts'),
          admin('/mcp/servers')
        ])
        return el(
          'div',
          {},
          el('h3', {}, `Tools (${tools.length})`),
          table(
            [
              { label: 'Name', value: (t) => t.name },
              { label: 'Server', value: (t) => t.server ?? '' },
              { label: 'Description', value: (t) => t.description }
            ],
            tools,
            'No tools.',
            FIRST_ROWS
          ),
          el('h3', {}, `Other MCP servers (${servers.length})`),
          table(
            [
              { label: 'Name', value: (s) => s.name },
              { label: 'Transport', value: (s) => s.transport },
              { label: 'State', value: (s) => badge(s.state) },
              { label: 'Exposed', value: (s) => (s.expose ? 'yes' : 'no') },
              { label: 'Tools', value: (s) => s.tools.map((t) => t.name).join(', ') },
              { label: 'Problem', value: (s) => [s.error ?? '', ...s.refused].filter((x) => x !== '').join('; ') }
            ],
            servers,
            'No other MCP servers configured (platform.mcp.servers).'
          ),
          el('h3', {}, `Resources (${resources.length})`),
          table(
            [
              { label: 'URI', value: (r) => r.uri ?? r.uriTemplate ?? r.name },
              { label: 'Name', value: (r) => r.name }
            ],
            resources,
            'No resources.'
          ),
          el('h3', {}, `Prompts (${prompts.length})`),
          table(
            [
              { label: 'Name', value: (p) => p.name },
              { label: 'Description', value: (p) => p.description }
            ],
            prompts,
            'No prompts.'
          )
        )
      }),
      later('Plugins', async () =>
        table(
          [
            { label: 'Name', value: (p) => p.name },
            { label: 'Version', value: (p) => p.version },
            { label: 'Tier', value: (p) => badge(p.tier) },
            {
              label: 'State',
              value: (p) => badge(p.state, p.state === 'live' ? 'ok' : p.state === 'failed' ? 'bad' : '')
            },
            { label: 'Error', value: (p) => (p.error ? el('span', { class: 'bad' }, p.error) : '') }
          ],
          await admin('/plugins'),
          'No plugins loaded.',
          FIRST_ROWS
        )
      )
    ]
  }
}
