// Audit: the control audit log, newest first.
import { admin, table, badge, section, time } from './api.js'

export const auditTab = {
  id: 'audit',
  label: 'Audit',
  refreshOn: ['ControlActionExecuted'],
  async render() {
    const rows = await admin('/audit?limit=500')
    return section('Control audit log', async () =>
      table(
        [
          { label: 'Time', value: (r) => time(r.timestamp) },
          { label: 'Principal', value: (r) => r.principal },
          { label: 'Action', value: (r) => r.action },
          { label: 'Target', value: (r) => r.target },
          { label: 'Result', value: (r) => badge(r.success ? 'ok' : 'failed', r.success ? 'ok' : 'bad') },
          { label: 'Message', value: (r) => r.message }
        ],
        rows.slice().reverse(),
        'No control actions yet.'
      )
    )
  }
}
