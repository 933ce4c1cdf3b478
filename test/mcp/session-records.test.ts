// The MCP session stores under one contract: LMDB (reopened on its directory: a restart) and a
// throwaway Postgres (a second pool on the same database: another node).
import t, { type Test } from 'tap'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { randomUUID } from 'node:crypto'
import { LmdbSessionRecords, type SessionRecord, type SessionRecords } from '../../runtime/mcp/session-records.js'
import { PostgresSessionRecords } from '../../runtime/mcp/postgres-session-records.js'
import type { SessionOwner } from '../../runtime/mcp/session-quota.js'
import { PostgresDb, Store } from '../../runtime/store/index.js'
import { testPostgres } from '../helpers/postgres.js'

const LIMITS = { max: 4, perPrincipal: 2, perAddress: 2, reserve: 1 }
const TTL = 60_000

function record(owner: SessionOwner, lastSeen = Date.now()): SessionRecord {
  return {
    id: randomUUID(),
    endpoint: '/platform/mcp',
    version: '2025-11-25',
    clientCapabilities: { roots: {} },
    clientInfo: { name: 't', version: '1' },
    initialized: false,
    createdAt: lastSeen,
    lastSeen,
    principal: owner.principal,
    ...(owner.address !== undefined ? { address: owner.address } : {})
  }
}

interface Fixture {
  /** The store as a node opens it; opened again it is the same data seen afresh (a restart, or another node). */
  open(): Promise<SessionRecords>
}

function contract(t: Test, name: string, fixture: (t: Test) => Promise<Fixture>): void {
  t.test(`${name}: a session and its subscriptions are kept, read afresh, and removed`, async (t) => {
    const f = await fixture(t)
    const s = await f.open()
    const rec = record({ principal: 'alice' })
    t.same(await s.admit(rec, { principal: 'alice' }, LIMITS, TTL), {})
    await s.subscribe(rec.id, 'file:///b')
    await s.subscribe(rec.id, 'file:///a')
    await s.subscribe(rec.id, 'file:///a')
    await s.put({ ...rec, initialized: true, logLevel: 'debug' })
    // read afresh: LMDB reopened (a restart), Postgres through another pool (another node)
    const other = await f.open()
    const kept = await other.load(rec.id)
    t.same(kept?.rec, { ...rec, initialized: true, logLevel: 'debug' }, 'the record as last written')
    t.same(kept?.uris.sort(), ['file:///a', 'file:///b'], 'each subscription once')
    await other.unsubscribe(rec.id, 'file:///b')
    t.same((await other.load(rec.id))?.uris, ['file:///a'])
    await other.remove(rec.id)
    t.equal(await other.load(rec.id), undefined, 'gone, with its subscriptions')
    t.equal(await other.load('no-such-session'), undefined)
    t.equal(await (await f.open()).load(rec.id), undefined, 'and stays gone')
  })
}

contract(t, 'lmdb', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'platform-mcp-sessions-'))
  let env: Store | undefined
  t.teardown(async () => {
    await env?.close()
    rmSync(dir, { recursive: true, force: true })
  })
  return {
    async open() {
      await env?.close()
      env = new Store(dir)
      const s = new LmdbSessionRecords(env.db('mcp-sessions'), env.db('mcp-session-subscriptions'))
      s.restore()
      return s
    }
  }
})

const pg = await testPostgres(t)
if (pg !== undefined) {
  const postgres = async (t: Test): Promise<Fixture> => {
    const url = await pg.database(t)
    const open: PostgresSessionRecords[] = []
    const pools: PostgresDb[] = []
    t.teardown(async () => {
      await Promise.all(open.map((s) => s.stop()))
      await Promise.all(pools.map((p) => p.close()))
    })
    // each store on a pool of its own, as two nodes would be
    const db = async (): Promise<PostgresDb> => {
      const p = await PostgresDb.open({ url, poolSize: 2 })
      pools.push(p)
      return p
    }
    return {
      async open() {
        const s = new PostgresSessionRecords({ db })
        open.push(s)
        await s.start()
        return s
      }
    }
  }
  contract(t, 'postgres', postgres)

  t.test('postgres: the bounds are counted over every node', async (t) => {
    const f = await postgres(t)
    const [one, two] = [await f.open(), await f.open()]
    const alice = { principal: 'alice' }
    const mine = record(alice)
    t.same(await one.admit(mine, alice, LIMITS, TTL), {})
    t.same(await two.admit(record(alice), alice, LIMITS, TTL), {})
    t.match(
      await one.admit(record(alice), alice, LIMITS, TTL),
      { scope: 'principal', limit: 2 },
      'two nodes, one count'
    )
    const anon = (n: number): SessionOwner => ({ principal: null, address: `127.0.0.${n}` })
    const first = record(anon(1), Date.now() - 1000)
    t.same(await two.admit(first, anon(1), LIMITS, TTL), {})
    t.same(await one.admit(record(anon(2)), anon(2), LIMITS, TTL), {})
    t.match(
      await one.admit(record(anon(3)), anon(3), LIMITS, TTL),
      { evicted: first.id },
      'at the cap the least recently seen anonymous session makes room'
    )
    t.equal(await two.load(first.id), undefined)
    t.match(await one.admit(record({ principal: 'bob' }), { principal: 'bob' }, LIMITS, TTL), { evicted: String })
    t.match(await one.admit(record(anon(4)), anon(4), LIMITS, TTL), { evicted: String })
    t.match(
      await two.admit(record({ principal: 'carol' }), { principal: 'carol' }, LIMITS, TTL),
      { evicted: String },
      'the last anonymous one'
    )
    t.match(
      await one.admit(record({ principal: 'dave' }), { principal: 'dave' }, LIMITS, TTL),
      { scope: 'server', limit: 4 },
      'no anonymous session left to end'
    )
    // a session no node has seen within the TTL is ended by any node's sweep
    await one.put({ ...mine, lastSeen: Date.now() - 2 * TTL })
    await two.sweep(Date.now(), TTL)
    t.equal(await one.load(mine.id), undefined)
    t.same(await one.admit(record({ principal: 'dave' }), { principal: 'dave' }, LIMITS, TTL), {}, 'and makes room')
  })
}
