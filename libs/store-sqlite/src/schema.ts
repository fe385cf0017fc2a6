/** Schema migrations, applied in order; `PRAGMA user_version` records how many have run. */
export const MIGRATIONS: readonly string[] = [
  `
  CREATE TABLE invocations (
    id TEXT PRIMARY KEY,
    bot_id TEXT NOT NULL,
    entity_name TEXT NOT NULL,
    integration_id TEXT NOT NULL,
    integration_version INTEGER NOT NULL,
    pool TEXT NOT NULL,
    mode TEXT NOT NULL,
    endpoint TEXT NOT NULL,
    response_content_type TEXT NOT NULL,
    entity TEXT NOT NULL,
    status TEXT NOT NULL,
    attempt INTEGER NOT NULL DEFAULT 0,
    lease_owner TEXT,
    lease_until INTEGER,
    created_at INTEGER NOT NULL,
    started_at INTEGER,
    finished_at INTEGER,
    expire_at INTEGER NOT NULL,
    outcome TEXT,
    logs TEXT NOT NULL DEFAULT '[]',
    progress TEXT
  );
  CREATE INDEX invocations_by_bot ON invocations (bot_id, created_at DESC);
  CREATE INDEX invocations_by_status ON invocations (status, created_at);
  CREATE INDEX invocations_by_expiry ON invocations (expire_at);

  CREATE TABLE entities (
    bot_id TEXT NOT NULL,
    name TEXT NOT NULL,
    fields TEXT NOT NULL,
    updated_at INTEGER NOT NULL,
    PRIMARY KEY (bot_id, name)
  );

  CREATE TABLE integrations (
    bot_id TEXT NOT NULL,
    integration_id TEXT NOT NULL,
    version INTEGER NOT NULL,
    entity_name TEXT NOT NULL,
    code TEXT NOT NULL,
    pool TEXT NOT NULL,
    timeout_seconds INTEGER NOT NULL,
    allowed_hosts TEXT NOT NULL,
    deployed_at INTEGER NOT NULL,
    PRIMARY KEY (bot_id, integration_id, version)
  );

  CREATE TABLE tokens (
    bot_id TEXT NOT NULL,
    token_id TEXT NOT NULL,
    label TEXT,
    created_at INTEGER NOT NULL,
    expires_at INTEGER,
    revoked_at INTEGER,
    PRIMARY KEY (bot_id, token_id)
  );
  `,
  // When the job of a queued invocation was last published: the sweeper republishes only stale ones.
  `
  ALTER TABLE invocations ADD COLUMN published_at INTEGER NOT NULL DEFAULT 0;
  UPDATE invocations SET published_at = created_at;
  CREATE INDEX invocations_unpublished ON invocations (status, published_at);
  `,
  // Idempotency-Keys, unique per bot; and the latest runs of an integration (poll Retry-After estimates).
  `
  CREATE TABLE idempotency_keys (
    bot_id TEXT NOT NULL,
    key TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    invocation_id TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    expire_at INTEGER NOT NULL,
    PRIMARY KEY (bot_id, key)
  );
  CREATE INDEX idempotency_keys_by_expiry ON idempotency_keys (expire_at);
  CREATE INDEX invocations_recent_runs ON invocations (bot_id, integration_id, finished_at DESC);
  `,
  // Resource limits per integration version, as JSON; null for versions deployed before (the defaults apply).
  `
  ALTER TABLE integrations ADD COLUMN limits TEXT;
  `,
  // Quotas: the token each invocation came with, the quotas of bots and tokens, and the live service
  // instances that share a limit between them.
  `
  ALTER TABLE invocations ADD COLUMN token_id TEXT;
  CREATE INDEX invocations_active ON invocations (bot_id, status);

  CREATE TABLE quotas (
    bot_id TEXT NOT NULL,
    token_id TEXT NOT NULL,
    rate_per_second REAL,
    burst INTEGER,
    max_in_flight INTEGER,
    updated_at INTEGER NOT NULL,
    PRIMARY KEY (bot_id, token_id)
  );

  CREATE TABLE instances (
    role TEXT NOT NULL,
    instance_id TEXT NOT NULL,
    seen_at INTEGER NOT NULL,
    PRIMARY KEY (role, instance_id)
  );
  `,
  // Callbacks: where an invocation's outcome is POSTed and how its delivery goes (pending from the start,
  // due once the invocation finishes), the integration's default URL, and the bots' signing secrets.
  `
  ALTER TABLE invocations ADD COLUMN callback_url TEXT;
  ALTER TABLE invocations ADD COLUMN callback_state TEXT;
  ALTER TABLE invocations ADD COLUMN callback_attempts INTEGER NOT NULL DEFAULT 0;
  ALTER TABLE invocations ADD COLUMN callback_due_at INTEGER;
  ALTER TABLE invocations ADD COLUMN callback_error TEXT;
  ALTER TABLE invocations ADD COLUMN callback_delivered_at INTEGER;
  CREATE INDEX invocations_callbacks_due ON invocations (callback_due_at) WHERE callback_state = 'pending';

  ALTER TABLE integrations ADD COLUMN callback_url TEXT;

  CREATE TABLE signing_secrets (
    bot_id TEXT NOT NULL,
    secret TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    expires_at INTEGER,
    PRIMARY KEY (bot_id, secret)
  );
  `,
  // Fewer index writes per invocation: each index keyed on the status moved an entry at the claim and
  // again at the completion. Now only Queued and Running invocations are in the in-flight index (the
  // sweeps, quota counts and in-flight listings), a run enters the finished-runs index once, and only
  // failures enter theirs (listings by status). A successful life writes 4 index entries at its insert,
  // moves 1 at its claim and writes 2 at its completion, where it wrote 7, moved 3 and moved 4.
  `
  DROP INDEX invocations_by_status;
  DROP INDEX invocations_unpublished;
  DROP INDEX invocations_active;
  DROP INDEX invocations_recent_runs;
  CREATE INDEX invocations_in_flight ON invocations (status, bot_id, token_id, published_at) WHERE status IN ('Queued', 'Running');
  CREATE INDEX invocations_finished_runs ON invocations (bot_id, integration_id, finished_at DESC) WHERE finished_at IS NOT NULL;
  CREATE INDEX invocations_failures ON invocations (bot_id, created_at DESC) WHERE status IN ('Failed', 'Cancelled');
  `,
  // The request body as sent (for connectors that check a signature over it), and the lines a running
  // attempt logged, appended in batches while it runs: readable before it ends, kept when its process
  // dies. A completion still writes the rest in the row's own logs column, so a run that logged nothing
  // while running writes here nothing at all.
  `
  ALTER TABLE invocations ADD COLUMN raw_body TEXT;
  CREATE TABLE invocation_logs (
    bot_id TEXT NOT NULL,
    invocation_id TEXT NOT NULL,
    attempt INTEGER NOT NULL,
    seq INTEGER NOT NULL,
    lines TEXT NOT NULL,
    expire_at INTEGER NOT NULL,
    PRIMARY KEY (bot_id, invocation_id, attempt, seq)
  ) WITHOUT ROWID;
  CREATE INDEX invocation_logs_by_expiry ON invocation_logs (expire_at);
  `,
  // The files a bundled connector was built from, as its author wrote them (JSON: [{ path, content }]);
  // NULL for a plain script.
  `
  ALTER TABLE integrations ADD COLUMN sources TEXT;
  `,
  // Connector secrets, sealed (AES-256-GCM under a key the store never holds). integration_id is ''
  // for a bot's own secrets, so the key has no NULL in it.
  `
  CREATE TABLE secrets (
    bot_id TEXT NOT NULL,
    integration_id TEXT NOT NULL,
    name TEXT NOT NULL,
    sealed TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    PRIMARY KEY (bot_id, integration_id, name)
  ) WITHOUT ROWID;
  `,
  // The last version number of each deleted integration: a new deploy under its id goes on from it,
  // so a version number names one code for good (executors keep versions by number).
  `
  CREATE TABLE deleted_integrations (
    bot_id TEXT NOT NULL,
    integration_id TEXT NOT NULL,
    last_version INTEGER NOT NULL,
    PRIMARY KEY (bot_id, integration_id)
  ) WITHOUT ROWID;
  `,
  // The draft of each integration (at most one): its settings as one JSON document, since they are
  // only ever read whole, for a replay or to be published.
  `
  CREATE TABLE integration_drafts (
    bot_id TEXT NOT NULL,
    integration_id TEXT NOT NULL,
    settings TEXT NOT NULL,
    drafted_at INTEGER NOT NULL,
    PRIMARY KEY (bot_id, integration_id)
  ) WITHOUT ROWID;
  `,
  // The catalog generation: one counter bumped by every write to the tables that token checks and
  // integration resolution read (a revocation, a deploy, a deletion, from any process on the file).
  // Each process caches those lookups while the counter it reads first is unchanged (catalog-cache.ts).
  `
  CREATE TABLE catalog_generation (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    value INTEGER NOT NULL
  );
  INSERT INTO catalog_generation (id, value) VALUES (1, 0);
  CREATE TRIGGER tokens_insert_bumps_generation AFTER INSERT ON tokens BEGIN UPDATE catalog_generation SET value = value + 1 WHERE id = 1; END;
  CREATE TRIGGER tokens_update_bumps_generation AFTER UPDATE ON tokens BEGIN UPDATE catalog_generation SET value = value + 1 WHERE id = 1; END;
  CREATE TRIGGER tokens_delete_bumps_generation AFTER DELETE ON tokens BEGIN UPDATE catalog_generation SET value = value + 1 WHERE id = 1; END;
  CREATE TRIGGER integrations_insert_bumps_generation AFTER INSERT ON integrations BEGIN UPDATE catalog_generation SET value = value + 1 WHERE id = 1; END;
  CREATE TRIGGER integrations_update_bumps_generation AFTER UPDATE ON integrations BEGIN UPDATE catalog_generation SET value = value + 1 WHERE id = 1; END;
  CREATE TRIGGER integrations_delete_bumps_generation AFTER DELETE ON integrations BEGIN UPDATE catalog_generation SET value = value + 1 WHERE id = 1; END;
  `,
  // An invocation's entity and raw body in a table of their own, written once. SQLite rewrites a whole
  // row on any update that changes its size, overflow pages included: in the row, a 100 KB body was
  // written again by the claim and by the completion (about 620 KB of WAL per call, 226 KB now). The
  // payload goes with its invocation (ON DELETE CASCADE: foreign keys are on for every connection).
  `
  CREATE TABLE invocation_payloads (
    id TEXT PRIMARY KEY REFERENCES invocations (id) ON DELETE CASCADE,
    entity TEXT NOT NULL,
    raw_body TEXT
  );
  INSERT INTO invocation_payloads (id, entity, raw_body) SELECT id, entity, raw_body FROM invocations;
  ALTER TABLE invocations DROP COLUMN entity;
  ALTER TABLE invocations DROP COLUMN raw_body;
  `,
  // A JSON body kept as sent lies in the entity's JSON: its payload keeps it once, as the span of the
  // entity it lies in (raw_body NULL), not as a second copy (rawBodySpan in libs/domain).
  `
  ALTER TABLE invocation_payloads ADD COLUMN raw_body_start INTEGER;
  ALTER TABLE invocation_payloads ADD COLUMN raw_body_end INTEGER;
  `,
  // Set when a process besides a sync caller's gateway waits for the invocation (InvocationStore.watch):
  // only then does its executor publish a completion event beside the direct reply.
  `
  ALTER TABLE invocations ADD COLUMN watched INTEGER NOT NULL DEFAULT 0;
  `,
  // Durable runs (docs/connectors.md, *Durable jobs*). An invocation's journal: one row per step name and
  // occurrence, found by them through one index, `seq` (the rowid) the order first written. The steps of
  // runs under way at once append to the same last pages of the table, so a group commit of many steps
  // writes about one scattered page each (the index's), not two: reads sort an invocation's entries by
  // seq instead (10,000 in a few milliseconds). The events sent before a wait took them. Both go with
  // their invocation (ON DELETE CASCADE).
  // On the invocation: what a Waiting one waits for (`waiting`, JSON) and its wake time (`wake_at`), the
  // journal's counters (checked against its limits by the write that grows it), the active time of its
  // suspended attempts, the attempt that last made progress, and `retain_ms`, its TTL as created, kept at
  // its first suspension so that its expiry counts from its end again once it finishes. Only Waiting
  // invocations are in the two new indexes: a plain invocation writes no entry in them, ever.
  `
  ALTER TABLE invocations ADD COLUMN waiting TEXT;
  ALTER TABLE invocations ADD COLUMN wake_at INTEGER;
  ALTER TABLE invocations ADD COLUMN steps INTEGER NOT NULL DEFAULT 0;
  ALTER TABLE invocations ADD COLUMN journal_bytes INTEGER NOT NULL DEFAULT 0;
  ALTER TABLE invocations ADD COLUMN active_ms INTEGER NOT NULL DEFAULT 0;
  ALTER TABLE invocations ADD COLUMN progress_attempt INTEGER NOT NULL DEFAULT 0;
  ALTER TABLE invocations ADD COLUMN retain_ms INTEGER;
  CREATE INDEX invocations_waking ON invocations (wake_at, expire_at) WHERE status = 'Waiting';
  CREATE INDEX invocations_waiting ON invocations (bot_id, created_at DESC) WHERE status = 'Waiting';

  CREATE TABLE invocation_journal (
    seq INTEGER PRIMARY KEY,
    invocation_id TEXT NOT NULL REFERENCES invocations (id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    occurrence INTEGER NOT NULL,
    bot_id TEXT NOT NULL,
    kind TEXT NOT NULL,
    status TEXT NOT NULL,
    result TEXT,
    result_bytes INTEGER NOT NULL DEFAULT 0,
    error TEXT,
    attempts INTEGER NOT NULL,
    started_at INTEGER NOT NULL,
    finished_at INTEGER,
    until INTEGER
  );
  CREATE UNIQUE INDEX invocation_journal_by_step ON invocation_journal (invocation_id, name, occurrence);

  CREATE TABLE invocation_events (
    seq INTEGER PRIMARY KEY,
    invocation_id TEXT NOT NULL REFERENCES invocations (id) ON DELETE CASCADE,
    bot_id TEXT NOT NULL,
    name TEXT NOT NULL,
    payload TEXT NOT NULL,
    sent_at INTEGER NOT NULL
  );
  CREATE INDEX invocation_events_by_name ON invocation_events (invocation_id, name);
  `,
  // A second index of the journal, by invocation in write order, made by the first build of the migration
  // above: the entries are read through the index by step now, and each step wrote it for nothing.
  `
  DROP INDEX IF EXISTS invocation_journal_in_order;
  `,
  // Inbound auth (docs/inbound.md): an integration version's scheme and its options (JSON; NULL: a bot
  // token), and what the gateway verified of a call (its scheme and the producer's delivery id, JSON;
  // NULL for a call made with a bot token), which its connector reads.
  `
  ALTER TABLE integrations ADD COLUMN inbound_auth TEXT;
  ALTER TABLE invocation_payloads ADD COLUMN inbound TEXT;
  `,
];
