import type { Test } from 'tap'
import { Client } from 'pg'
import { postgresBinDir, startPostgresCluster } from '../../bench/lib/postgres-cluster.js'

/**
 * A real PostgreSQL for tests, never a mock: `PLATFORM_TEST_PG_URL` when set (a server you run),
 * otherwise a throwaway cluster on loopback (bench/lib/postgres-cluster.ts) stopped and removed
 * when `t` ends.
 *
 * Without PostgreSQL a test fails when `CI=true` (.ci/run installs it, so its absence is a broken
 * CI) and is skipped otherwise, saying why.
 */
export interface TestPostgres {
  /** An admin connection string to the server. */
  url: string
  /** A fresh, empty database on the server, dropped when `t` ends; its connection string. */
  database(t: Test): Promise<string>
  /**
   * An outage of the throwaway server (fast shutdown, data kept) and its end on the same port;
   * undefined for a server `PLATFORM_TEST_PG_URL` names, which a test must not stop.
   */
  outage?: { pause(): Promise<void>; resume(): Promise<void> }
}

/** Starts or finds PostgreSQL for the test `t`; undefined (and `t` skipped) when there is none locally. */
export async function testPostgres(t: Test): Promise<TestPostgres | undefined> {
  const given = process.env.PLATFORM_TEST_PG_URL
  if (given !== undefined && given !== '') return withDatabases(given)
  const bin = postgresBinDir()
  if (bin === undefined) {
    const why = 'PostgreSQL is not installed (no initdb in /usr/lib/postgresql/*/bin or on PATH)'
    if (process.env.CI === 'true') throw new Error(`${why}: .ci/run installs the postgresql package`)
    t.skip(`${why}: install the postgresql package or set PLATFORM_TEST_PG_URL to run the Postgres tests`, () => {})
    return undefined
  }
  const cluster = await startPostgresCluster(bin)
  t.teardown(() => cluster.stop())
  return { ...withDatabases(cluster.url), outage: { pause: () => cluster.pause(), resume: () => cluster.resume() } }
}

function withDatabases(url: string): TestPostgres {
  let n = 0
  return {
    url,
    async database(t) {
      const name = `platform_test_${process.pid}_${Date.now()}_${n++}`
      await admin(url, `CREATE DATABASE ${name}`)
      t.teardown(() => admin(url, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`))
      const u = new URL(url)
      u.pathname = `/${name}`
      return u.toString()
    }
  }
}

async function admin(url: string, sql: string): Promise<void> {
  const c = new Client({ connectionString: url })
  await c.connect()
  try {
    await c.query(sql)
  } finally {
    await c.end()
  }
}
