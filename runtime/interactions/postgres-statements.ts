// The SQL of the Postgres interaction store, apart from the code that runs it: every write that
// keeps a run's end single is one statement, and the reasons sit beside each.
import type { InteractionHeader } from './types.js'

export const LIVE = `('RUNNING', 'CREATED')`

// the lease a new row takes for its node: the database's clock, so nodes' clocks never disagree
const LEASE = `clock_timestamp() + $8::bigint * interval '1 millisecond'`

// A header saved over one that has ended is refused (no row), whoever ended it: a run ends once.
// A new row takes the lease (epoch 1); a write of the owner carries its epoch ($9, null for a
// writer that holds none) and is refused once another node moved the epoch on.
export const UPSERT = `INSERT INTO platform_interactions
    (id, user_id, conversation_id, status, created_at, header, owner_node, lease_until, lease_epoch)
  VALUES ($1, $2, $3, $4, $5, $6, $7, ${LEASE}, 1)
  ON CONFLICT (id) DO UPDATE SET user_id = excluded.user_id, conversation_id = excluded.conversation_id,
    status = excluded.status, created_at = excluded.created_at, header = excluded.header,
    owner_node = excluded.owner_node
    WHERE platform_interactions.status IN ${LIVE}
      AND ($9::bigint IS NULL OR platform_interactions.lease_epoch = $9::bigint)
  RETURNING lease_epoch`

// A step is written only while its run is live and has no terminal step, checked on the header
// row under a lock: a concurrent end (terminal step or header, which update that row) either
// commits first and this finds it ended, or waits for this insert. No row: the caller finds why.
// A step carries its writer's lease epoch ($4; null: no lease held), refused once it is stale.
export const INSERT_STEP = `WITH live AS (
    SELECT 1 FROM platform_interactions WHERE id = $1 AND status IN ${LIVE} AND ended_seq IS NULL
       AND ($4::bigint IS NULL OR lease_epoch = $4::bigint) FOR SHARE
  )
  INSERT INTO platform_interaction_steps (interaction_id, seq, step) SELECT $1, $2::bigint, $3::json FROM live
  ON CONFLICT DO NOTHING`
// A terminal step also marks the row ended, in the same statement: of two racing ends one updates
// the row, the other waits for it, re-reads the row, and writes nothing.
export const INSERT_END = `WITH live AS (
    UPDATE platform_interactions SET ended_seq = $2::bigint
     WHERE id = $1 AND status IN ${LIVE} AND ended_seq IS NULL
       AND ($4::bigint IS NULL OR lease_epoch = $4::bigint) RETURNING 1
  )
  INSERT INTO platform_interaction_steps (interaction_id, seq, step) SELECT $1, $2::bigint, $3::json FROM live
  ON CONFLICT DO NOTHING`
// Several steps of one run in one statement: the same check as INSERT_STEP, made once for all of
// them. $2 is a JSON array of the steps, each with its seq; a `json` element keeps its text as sent.
export const INSERT_STEPS = `WITH live AS (
    SELECT 1 FROM platform_interactions WHERE id = $1 AND status IN ${LIVE} AND ended_seq IS NULL
       AND ($3::bigint IS NULL OR lease_epoch = $3::bigint) FOR SHARE
  )
  INSERT INTO platform_interaction_steps (interaction_id, seq, step)
  SELECT $1, (s.step->>'seq')::bigint, s.step FROM live, json_array_elements($2::json) AS s(step)
  ON CONFLICT DO NOTHING`
export const WHY_NOT_STORED = `SELECT EXISTS (SELECT 1 FROM platform_interaction_steps WHERE interaction_id = $1 AND seq = $2) AS stored
  FROM platform_interactions WHERE id = $1`

// One statement: the header is written only when the key was claimed, and a racing claim of the
// same key waits for this one's commit, then finds the key held (not expired) and writes nothing.
// The key's foreign key is checked at the end of the statement, when the header is there.
export const SAVE_KEYED = `WITH claim AS (
    INSERT INTO platform_interaction_keys (user_id, key, fingerprint, interaction_id, expires_at)
    VALUES ($2, $10, $11, $1, $12)
    ON CONFLICT (user_id, key) DO UPDATE SET fingerprint = excluded.fingerprint,
      interaction_id = excluded.interaction_id, expires_at = excluded.expires_at
      WHERE platform_interaction_keys.expires_at <= $13
    RETURNING 1
  )
  INSERT INTO platform_interactions
    (id, user_id, conversation_id, status, created_at, header, owner_node, lease_until, lease_epoch)
  SELECT $1, $2, $3, $4, $5, $6, $7, ${LEASE}, 1 WHERE EXISTS (SELECT 1 FROM claim)
  ON CONFLICT (id) DO UPDATE SET user_id = excluded.user_id, conversation_id = excluded.conversation_id,
    status = excluded.status, created_at = excluded.created_at, header = excluded.header,
    owner_node = excluded.owner_node
    WHERE platform_interactions.status IN ${LIVE}
      AND ($9::bigint IS NULL OR platform_interactions.lease_epoch = $9::bigint)
  RETURNING lease_epoch`
export const FIND_KEY = `SELECT user_id, key, fingerprint, interaction_id, expires_at FROM platform_interaction_keys
  WHERE user_id = $1 AND key = $2 AND expires_at > $3`

/**
 * A statement prepared once per pooled connection under its name: the server parses and plans it
 * once, and each later call sends only its parameters. The hot statements (step and header
 * writes, step reads) go this way.
 */
export interface Named {
  name: string
  text: string
}
const named = (name: string, text: string): Named => ({ name: `platform-interactions-${name}`, text })
export const PREPARED = {
  upsert: named('upsert', UPSERT),
  insertStep: named('insert-step', INSERT_STEP),
  insertSteps: named('insert-steps', INSERT_STEPS),
  insertEnd: named('insert-end', INSERT_END),
  whyNotStored: named('why-not-stored', WHY_NOT_STORED),
  header: named('header', 'SELECT header FROM platform_interactions WHERE id = $1'),
  steps: named(
    'steps',
    'SELECT step FROM platform_interaction_steps WHERE interaction_id = $1 AND seq > $2 ORDER BY seq LIMIT $3'
  )
} as const

export interface KeyRow {
  user_id: string
  key: string
  fingerprint: string
  interaction_id: string
  expires_at: string
}

/** $1 to $9 of UPSERT and SAVE_KEYED: the header, its owner, the lease and the writer's epoch. */
export const upsertParams = (h: InteractionHeader, node: string, leaseMs: number, epoch: number | undefined) => [
  h.id,
  h.userId,
  h.conversationId,
  h.status,
  h.createdAt,
  JSON.stringify(h),
  node,
  leaseMs,
  epoch ?? null
]
