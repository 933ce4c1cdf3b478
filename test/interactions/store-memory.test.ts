import t from 'tap'
import { MemoryInteractionData, MemoryInteractionStore } from '../../runtime/interactions/memory-store.js'
import { FIXTURE_NODE, runStoreContract } from './store-contract.js'

// one data object is the whole store: a "restart" sees the same data, as a process restart would
// not, which is what lets the contract's start() case run here at all; a peer shares it as a
// second node shares a database
runStoreContract(t, 'memory', async () => {
  const data = new MemoryInteractionData()
  return {
    open: async () => new MemoryInteractionStore({ node: FIXTURE_NODE, data }),
    peer: async (node) => new MemoryInteractionStore({ node, data })
  }
})
