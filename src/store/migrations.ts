/**
 * @module store/migrations
 * The store's schema, as one ordered list (DBOS's pattern): entry N takes a database from
 * version N-1 to N. Each entry gives its statements for both backends; entries are never
 * edited once released, only appended.
 */

/** One step of the schema. */
export interface Migration {
  /** Short and stable, recorded in `eitri_migrations`. */
  readonly name: string
  readonly sqlite: readonly string[]
  readonly postgres: readonly string[]
}

/** Tables both backends share, written in the SQL they both speak. */
const COMMON_TABLES = (bigint: string): string[] => [
  `CREATE TABLE lines (
    name TEXT PRIMARY KEY,
    parent TEXT REFERENCES lines (name),
    fork_sequence ${bigint} NOT NULL,
    state TEXT NOT NULL CHECK (state IN ('open', 'merged', 'discarded')),
    created_at TEXT NOT NULL,
    closed_at TEXT
  )`,
  `INSERT INTO lines (name, parent, fork_sequence, state, created_at)
    VALUES ('main', NULL, 0, 'open', '1970-01-01T00:00:00.000Z')`,
  `CREATE INDEX lines_parent ON lines (parent, state)`,
  `CREATE TABLE task_versions (
    sequence ${bigint} PRIMARY KEY,
    line TEXT NOT NULL,
    id TEXT NOT NULL,
    title TEXT NOT NULL,
    description TEXT NOT NULL,
    priority TEXT NOT NULL CHECK (priority IN ('low', 'medium', 'high')),
    status TEXT NOT NULL CHECK (status IN ('pending', 'in-progress', 'completed', 'blocked')),
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    completed_at TEXT,
    created_sequence ${bigint} NOT NULL
  )`,
  `CREATE INDEX task_versions_id ON task_versions (id, line, sequence)`,
  `CREATE INDEX task_versions_line ON task_versions (line, sequence)`,
  `CREATE TABLE knowledge_links (
    version_sequence ${bigint} NOT NULL,
    position INTEGER NOT NULL,
    target_key TEXT NOT NULL,
    target_title TEXT NOT NULL,
    PRIMARY KEY (version_sequence, position)
  )`,
  `CREATE INDEX knowledge_links_target ON knowledge_links (target_key)`,
  `CREATE TABLE runs (
    id TEXT PRIMARY KEY,
    kind TEXT NOT NULL,
    parent_id TEXT,
    caused_by TEXT NOT NULL,
    actor TEXT,
    trigger_data TEXT,
    status TEXT NOT NULL CHECK (status IN ('running', 'waiting', 'completed', 'failed', 'cancelled')),
    reason TEXT,
    error TEXT,
    value TEXT,
    output TEXT,
    roster TEXT,
    agent_id TEXT,
    agent_version INTEGER,
    program_kind TEXT,
    interpreter_version INTEGER,
    agent_def_hash TEXT,
    chat_id TEXT,
    world TEXT,
    isolation TEXT,
    settlement_policy TEXT,
    settlement_status TEXT NOT NULL CHECK (settlement_status IN ('open', 'merged', 'review', 'discarded')),
    settlement_reason TEXT,
    created_at TEXT NOT NULL,
    started_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    ended_at TEXT
  )`,
  `CREATE INDEX runs_parent ON runs (parent_id)`,
  `CREATE INDEX runs_status ON runs (status, created_at)`,
  `CREATE INDEX runs_created ON runs (created_at)`,
  `CREATE TABLE run_events (
    run_id TEXT NOT NULL REFERENCES runs (id),
    sequence INTEGER NOT NULL,
    type TEXT NOT NULL,
    data TEXT,
    time TEXT NOT NULL,
    PRIMARY KEY (run_id, sequence)
  )`,
]

const KNOWLEDGE_VERSION_COLUMNS = `
    line TEXT NOT NULL,
    key TEXT NOT NULL,
    title TEXT NOT NULL,
    body TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL`

const AUDIT_COLUMNS = {
  approvals: `
    time TEXT NOT NULL,
    tool TEXT NOT NULL,
    input_digest TEXT NOT NULL,
    decision TEXT NOT NULL,
    decided_by TEXT NOT NULL,
    summary TEXT,
    reason TEXT,
    access TEXT,
    dangerous INTEGER,
    run_id TEXT,
    line TEXT,
    details TEXT`,
  receipts: `
    time TEXT NOT NULL,
    kind TEXT NOT NULL,
    tool TEXT,
    run_id TEXT,
    line TEXT,
    digest TEXT,
    details TEXT`,
}

/**
 * Who holds each running Run (an owner id and when its lease lapses, renewed by the owner's
 * heartbeat), and a cancel request another process left for that owner. Times are ISO text
 * like every other time in the schema, so they compare as strings.
 */
const RUN_LEASE_COLUMNS = [
  `ALTER TABLE runs ADD COLUMN lease_owner TEXT`,
  `ALTER TABLE runs ADD COLUMN lease_expires_at TEXT`,
  `ALTER TABLE runs ADD COLUMN cancel_requested_at TEXT`,
  `ALTER TABLE runs ADD COLUMN cancel_requested_by TEXT`,
  `CREATE INDEX runs_lease_owner ON runs (lease_owner, status)`,
]

/**
 * What a model Run leaves besides its journal: its metrics (usage and dollars, one JSON row per
 * Run) and its chat (every message, in order). Keyed by Run and chat, not by line, so they
 * outlive a discarded world.
 */
const RUN_TRACE_TABLES = (bigint: string): string[] => [
  `CREATE TABLE run_metrics (
    run_id TEXT PRIMARY KEY REFERENCES runs (id),
    data TEXT NOT NULL,
    updated_at TEXT NOT NULL
  )`,
  `CREATE TABLE chat_messages (
    chat_id TEXT NOT NULL,
    sequence ${bigint} NOT NULL,
    run_id TEXT NOT NULL REFERENCES runs (id),
    role TEXT NOT NULL,
    content TEXT,
    time TEXT NOT NULL,
    PRIMARY KEY (chat_id, sequence)
  )`,
  `CREATE INDEX chat_messages_run ON chat_messages (run_id)`,
]

/**
 * The order Runs were admitted in, from the store-wide sequence: newest first is exact even
 * for Runs admitted within one millisecond. Runs admitted before it share 0 (then by id).
 */
const RUN_ADMISSION_ORDER = (bigint: string): string[] => [
  `ALTER TABLE runs ADD COLUMN admission ${bigint}`,
  `UPDATE runs SET admission = 0`,
  `CREATE INDEX runs_admission ON runs (created_at, admission)`,
]

/** Every migration, oldest first. The schema version is the number applied. */
export const MIGRATIONS: readonly Migration[] = [
  {
    name: 'lines-tasks-knowledge-runs-audit',
    sqlite: [
      // SQLite has no sequences: one row holds the store-wide counter. Writers serialize on
      // SQLite's write lock anyway, so the counter adds no contention.
      `CREATE TABLE store_clock (id INTEGER PRIMARY KEY CHECK (id = 1), value INTEGER NOT NULL)`,
      `INSERT INTO store_clock (id, value) VALUES (1, 0)`,
      ...COMMON_TABLES('INTEGER'),
      `CREATE TABLE knowledge_versions (sequence INTEGER PRIMARY KEY,${KNOWLEDGE_VERSION_COLUMNS})`,
      `CREATE INDEX knowledge_versions_key ON knowledge_versions (key, line, sequence)`,
      `CREATE INDEX knowledge_versions_line ON knowledge_versions (line, sequence)`,
      // An external-content FTS5 index over the versions; triggers keep it in step.
      `CREATE VIRTUAL TABLE knowledge_search USING fts5(
        title, body, content='knowledge_versions', content_rowid='sequence',
        tokenize='porter unicode61 remove_diacritics 2'
      )`,
      `CREATE TRIGGER knowledge_versions_insert AFTER INSERT ON knowledge_versions BEGIN
        INSERT INTO knowledge_search (rowid, title, body) VALUES (new.sequence, new.title, new.body);
      END`,
      `CREATE TRIGGER knowledge_versions_delete AFTER DELETE ON knowledge_versions BEGIN
        INSERT INTO knowledge_search (knowledge_search, rowid, title, body)
          VALUES ('delete', old.sequence, old.title, old.body);
      END`,
      `CREATE TABLE approvals (sequence INTEGER PRIMARY KEY AUTOINCREMENT,${AUDIT_COLUMNS.approvals})`,
      `CREATE TABLE receipts (sequence INTEGER PRIMARY KEY AUTOINCREMENT,${AUDIT_COLUMNS.receipts})`,
    ],
    postgres: [
      `CREATE SEQUENCE store_sequence`,
      ...COMMON_TABLES('BIGINT'),
      `CREATE TABLE knowledge_versions (sequence BIGINT PRIMARY KEY,${KNOWLEDGE_VERSION_COLUMNS},
        search tsvector GENERATED ALWAYS AS (
          setweight(to_tsvector('english', title), 'A') || setweight(to_tsvector('english', body), 'B')
        ) STORED
      )`,
      `CREATE INDEX knowledge_versions_key ON knowledge_versions (key, line, sequence)`,
      `CREATE INDEX knowledge_versions_line ON knowledge_versions (line, sequence)`,
      `CREATE INDEX knowledge_versions_search ON knowledge_versions USING GIN (search)`,
      `CREATE TABLE approvals (sequence BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,${AUDIT_COLUMNS.approvals})`,
      `CREATE TABLE receipts (sequence BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,${AUDIT_COLUMNS.receipts})`,
    ],
  },
  {
    name: 'run-leases-cancel-requests',
    sqlite: RUN_LEASE_COLUMNS,
    postgres: RUN_LEASE_COLUMNS,
  },
  {
    name: 'run-metrics-chat-messages',
    sqlite: RUN_TRACE_TABLES('INTEGER'),
    postgres: RUN_TRACE_TABLES('BIGINT'),
  },
  {
    name: 'runs-admission-order',
    sqlite: RUN_ADMISSION_ORDER('INTEGER'),
    postgres: RUN_ADMISSION_ORDER('BIGINT'),
  },
  {
    // Nothing reads chat messages by Run (a Run's chat is found by its id), and a Run's row is
    // never deleted, so the index served no query and no key check: it was one page more in
    // every step's commit (decision 0025).
    name: 'chat-messages-no-run-index',
    sqlite: [`DROP INDEX chat_messages_run`],
    postgres: [`DROP INDEX chat_messages_run`],
  },
]
