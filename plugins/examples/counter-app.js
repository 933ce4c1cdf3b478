// The MCP App of show_counter: an HTML page the host renders in a sandboxed frame. It talks to the
// host over postMessage JSON-RPC (MCP Apps): it reads the tool result and can call tools back.
export const COUNTER_HTML = `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>Counter</title>
<style>body{font:16px system-ui;margin:1rem}button{font-size:1.2rem;margin:0 .3rem}</style></head>
<body>
<p>Count: <output id="count">0</output></p>
<button id="dec" aria-label="decrement">-</button><button id="inc" aria-label="increment">+</button>
<script>
let count = 0
const out = document.getElementById('count')
const show = () => { out.textContent = String(count) }
document.getElementById('inc').onclick = () => { count++; show() }
document.getElementById('dec').onclick = () => { count--; show() }
window.addEventListener('message', (e) => {
  const m = e.data
  if (m && m.jsonrpc === '2.0' && m.method === 'ui/notifications/tool-result') {
    const r = m.params && m.params.structuredContent
    if (r && typeof r.count === 'number') { count = r.count; show() }
  }
})
window.parent.postMessage({ jsonrpc: '2.0', id: 1, method: 'ui/initialize', params: { appInfo: { name: 'examples-counter', version: '1.0.0' }, appCapabilities: {} } }, '*')
</script>
</body>
</html>`
