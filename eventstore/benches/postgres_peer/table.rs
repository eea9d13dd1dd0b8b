//! The PostgreSQL event store as teams often build one: an `events` table with a `bigserial`
//! sequence as primary key, the event id unique (dedupe by `ON CONFLICT DO NOTHING`), the
//! subject, the time and the encoded event as `bytea`; appends are autocommit statements, so
//! each call is one durable transaction. Also the raw ceilings: `COPY` into the same shape.

use std::pin::pin;

use chrono::{DateTime, Utc};
use tokio_postgres::binary_copy::BinaryCopyInWriter;
use tokio_postgres::types::Type;
use tokio_postgres::{Client, NoTls, Statement};
use uuid::Uuid;

/// One event as the store keeps it.
pub struct Row {
    /// The event id (dedupe key).
    pub id: Uuid,
    /// The subject it would have on NATS (`flotilla.in.heartbeat.<cluster>`).
    pub subject: String,
    /// The event's time.
    pub time: DateTime<Utc>,
    /// The encoded event, the bytes redb stores.
    pub payload: Vec<u8>,
}

/// The store's tables: `events` (the store), `events_copy` (same shape, `COPY`'s target with
/// the id index) and `events_bare` (no id index: the ceiling without dedupe).
const SCHEMA: &str = "
CREATE TABLE events (
    seq bigserial PRIMARY KEY,
    id uuid NOT NULL UNIQUE,
    subject text NOT NULL,
    time timestamptz NOT NULL,
    payload bytea NOT NULL
);
CREATE TABLE events_copy (
    seq bigserial PRIMARY KEY,
    id uuid NOT NULL UNIQUE,
    subject text NOT NULL,
    time timestamptz NOT NULL,
    payload bytea NOT NULL
);
CREATE TABLE events_bare (
    seq bigserial PRIMARY KEY,
    subject text NOT NULL,
    time timestamptz NOT NULL,
    payload bytea NOT NULL
);
";

/// Appends one event; no row back means the id was stored before.
const INSERT_ONE: &str = "INSERT INTO events (id, subject, time, payload) \
     VALUES ($1, $2, $3, $4) ON CONFLICT (id) DO NOTHING RETURNING seq";
/// Appends a batch in one statement (one transaction), one array per column.
const INSERT_MANY: &str = "INSERT INTO events (id, subject, time, payload) \
     SELECT * FROM unnest($1::uuid[], $2::text[], $3::timestamptz[], $4::bytea[]) \
     ON CONFLICT (id) DO NOTHING RETURNING seq";
/// The single-record ceiling: the fsync rate as PostgreSQL sees it.
const INSERT_BARE: &str = "INSERT INTO events_bare (subject, time, payload) VALUES ($1, $2, $3)";

/// Connects to the server, driving the connection on the current runtime.
///
/// # Panics
/// When the server refuses the connection (bench setup).
pub async fn connect(conninfo: &str) -> Client {
    let (client, connection) = tokio_postgres::connect(conninfo, NoTls)
        .await
        .expect("connect to the benchmark's PostgreSQL server");
    tokio::spawn(async move {
        if let Err(error) = connection.await {
            eprintln!("postgres connection: {error}");
        }
    });
    client
}

/// Creates the tables.
///
/// # Panics
/// When the schema cannot be created (bench setup).
pub async fn create_schema(client: &Client) {
    client
        .batch_execute(SCHEMA)
        .await
        .expect("create the events tables");
}

/// One publisher: a connection and its prepared statements.
pub struct Publisher {
    client: Client,
    one: Statement,
    many: Statement,
    bare: Statement,
}

impl Publisher {
    /// Connects and prepares the statements (as a pool's statement cache would).
    ///
    /// # Panics
    /// As [`connect`], or when a statement does not prepare.
    pub async fn connect(conninfo: &str) -> Self {
        let client = connect(conninfo).await;
        let one = client
            .prepare(INSERT_ONE)
            .await
            .expect("prepare INSERT_ONE");
        let many = client
            .prepare(INSERT_MANY)
            .await
            .expect("prepare INSERT_MANY");
        let bare = client
            .prepare(INSERT_BARE)
            .await
            .expect("prepare INSERT_BARE");
        Self {
            client,
            one,
            many,
            bare,
        }
    }

    /// Appends one event in its own transaction; `Some(seq)` if it was new.
    ///
    /// # Panics
    /// When the statement fails (a benchmark failure).
    pub async fn append_one(&self, row: &Row) -> Option<i64> {
        self.client
            .query_opt(&self.one, &[&row.id, &row.subject, &row.time, &row.payload])
            .await
            .expect("insert one event")
            .map(|appended| appended.get(0))
    }

    /// Appends a batch in one transaction; returns how many were new.
    ///
    /// # Panics
    /// When the statement fails (a benchmark failure).
    pub async fn append_many(&self, rows: &[Row]) -> usize {
        let ids: Vec<Uuid> = rows.iter().map(|row| row.id).collect();
        let subjects: Vec<&str> = rows.iter().map(|row| row.subject.as_str()).collect();
        let times: Vec<DateTime<Utc>> = rows.iter().map(|row| row.time).collect();
        let payloads: Vec<&[u8]> = rows.iter().map(|row| row.payload.as_slice()).collect();
        self.client
            .query(&self.many, &[&ids, &subjects, &times, &payloads])
            .await
            .expect("insert a batch of events")
            .len()
    }

    /// One bare single-row insert (no id index, nothing returned) in its own transaction.
    ///
    /// # Panics
    /// When the statement fails (a benchmark failure).
    pub async fn insert_bare(&self, row: &Row) {
        self.client
            .execute(&self.bare, &[&row.subject, &row.time, &row.payload])
            .await
            .expect("insert one bare row");
    }

    /// `COPY … FROM STDIN (FORMAT binary)` of `rows` in one transaction: into `events_copy`
    /// (with the id index) or `events_bare` (without).
    ///
    /// # Panics
    /// When the copy fails (a benchmark failure).
    pub async fn copy(&self, rows: &[Row], with_id_index: bool) {
        let (sql, types): (&str, &[Type]) = if with_id_index {
            (
                "COPY events_copy (id, subject, time, payload) FROM STDIN (FORMAT binary)",
                &[Type::UUID, Type::TEXT, Type::TIMESTAMPTZ, Type::BYTEA],
            )
        } else {
            (
                "COPY events_bare (subject, time, payload) FROM STDIN (FORMAT binary)",
                &[Type::TEXT, Type::TIMESTAMPTZ, Type::BYTEA],
            )
        };
        let sink = self.client.copy_in(sql).await.expect("start COPY");
        let mut writer = pin!(BinaryCopyInWriter::new(sink, types));
        for row in rows {
            if with_id_index {
                writer
                    .as_mut()
                    .write(&[&row.id, &row.subject, &row.time, &row.payload])
                    .await
            } else {
                writer
                    .as_mut()
                    .write(&[&row.subject, &row.time, &row.payload])
                    .await
            }
            .expect("write a COPY row");
        }
        writer.finish().await.expect("finish COPY");
    }

    /// Rows in a table, to check that every append landed.
    ///
    /// # Panics
    /// When the count fails (a benchmark failure).
    pub async fn count(&self, table: &str) -> i64 {
        self.client
            .query_one(&format!("SELECT count(*) FROM {table}"), &[])
            .await
            .expect("count rows")
            .get(0)
    }
}
