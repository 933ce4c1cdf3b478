import t from 'tap'
import { MemoryInteractionStore } from '../../runtime/interactions/memory-store.js'
import { runStoreContract } from './store-contract.js'

// one object is the whole store: a "restart" sees the same data, as a process restart would not,
// which is what lets the contract's start() case run here at all
runStoreContract(t, 'memory', async () => {
  const store = new MemoryInteractionStore()
  return { open: async () => store }
})
