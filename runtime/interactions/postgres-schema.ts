import type { PoolClient } from 'pg'

/**
 * The schema of the Postgres store, one entry per version, applied in order at start and recorded
 * in `platform_interactions_schema`. Append a migration; never edit a shipped one. Text keys use
 * the "C" collation so lists order by bytes, as the other stores do.
 */
export const MIGRATIONS: readonly string[] = [
  `CREATE TABLE platform_interactions (
     id text COLLATE "C" PRIMARY KEY,
     user_id text COLLATE "C" NOT NULL,
     conversation_id text COLLATE "C" NOT NULL,
     status text NOT NULL,
     created_at text COLLATE "C" NOT NULL,
     header json NOT NULL
   );
   CREATE INDEX platform_interactions_owner ON platform_interactions (user_id, created_at DESC, id DESC);
   CREATE INDEX platform_interactions_conversation
     ON platform_interactions (user_id, conversation_id, created_at DESC, id DESC);
   CREATE INDEX platform_interactions_live ON platform_interactions (id) WHERE status IN ('RUNNING', 'CREATED');
   CREATE TABLE platform_interaction_steps (
     interaction_id text COLLATE "C" NOT NULL REFERENCES platform_interactions (id) ON DELETE CASCADE,
     seq bigint NOT NULL,
     step json NOT NULL,
     PRIMARY KEY (interaction_id, seq)
   );`,
  // idempotency keys live with their interaction (and go with it): a retry after a restart, or to
  // another process on the same database, finds the first run
  `CREATE TABLE platform_interaction_keys (
     user_id text COLLATE "C" NOT NULL,
     key text COLLATE "C" NOT NULL,
     fingerprint text NOT NULL,
     interaction_id text COLLATE "C" NOT NULL REFERENCES platform_interactions (id) ON DELETE CASCADE,
     expires_at bigint NOT NULL,
     PRIMARY KEY (user_id, key)
   );
   CREATE INDEX platform_interaction_keys_interaction ON platform_interaction_keys (interaction_id);`,
  // several nodes on one database: each run names the node that owns it, so a node restarting
  // marks only its own runs interrupted, and the terminal step's seq sits on the row every step
  // write locks, so a run gets one end whoever races (rows from before: no owner, which any
  // node may mark; runs still live get their terminal step's seq if they wrote one)
  `ALTER TABLE platform_interactions ADD COLUMN owner_node text COLLATE "C", ADD COLUMN ended_seq bigint;
   UPDATE platform_interactions i SET ended_seq = (
       SELECT min(seq) FROM platform_interaction_steps s
        WHERE s.interaction_id = i.id AND s.step->>'type' IN ('completion', 'error'))
     WHERE status IN ('RUNNING', 'CREATED');`,
  // runs owned through a lease: the owner renews lease_until while it runs, and any node ends a
  // run whose lease expired (its node is lost); lease_epoch fences the writes of an owner that
  // lost its lease, and cancel_requested carries a cancel made on another node. Runs from before
  // have no lease: their own node's restart marks them, as before
  `ALTER TABLE platform_interactions ADD COLUMN lease_until timestamptz,
     ADD COLUMN lease_epoch bigint NOT NULL DEFAULT 0,
     ADD COLUMN cancel_requested boolean NOT NULL DEFAULT false;
   CREATE INDEX platform_interactions_lease ON platform_interactions (lease_until)
     WHERE status IN ('RUNNING', 'CREATED');`
]

// one lock id for every platform process: two starting at once migrate one after the other
const MIGRATION_LOCK = 0x706c_6174

/** Creates or migrates the schema in one transaction; resolves to the version now in force. */
export async function migrate(client: PoolClient): Promise<number> {
  await client.query('BEGIN')
  try {
    await client.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK])
    await client.query(
      `CREATE TABLE IF NOT EXISTS platform_interactions_schema (
         version integer PRIMARY KEY,
         applied_at timestamptz NOT NULL DEFAULT now()
       )`
    )
    const { rows } = await client.query<{ v: number | null }>(
      'SELECT max(version) AS v FROM platform_interactions_schema'
    )
    const current = rows[0]?.v ?? 0
    if (current > MIGRATIONS.length)
      throw new Error(
        `the interactions schema is at version ${current}, newer than this platform knows (${MIGRATIONS.length}): run the newer platform, or another database`
      )
    for (let v = current + 1; v <= MIGRATIONS.length; v++) {
      await client.query(MIGRATIONS[v - 1]!)
      await client.query('INSERT INTO platform_interactions_schema (version) VALUES ($1)', [v])
    }
    await client.query('COMMIT')
    return MIGRATIONS.length
  } catch (e) {
    await client.query('ROLLBACK')
    throw e
  }
}
