//! scratch
use flotilla_eventstore::EventLog;
use flotilla_eventstore::nats_log::{NatsLog, NatsOptions};
use flotilla_eventstore::nats_test_server::NatsTestServer;

#[tokio::test]
async fn scratch() {
    let server = NatsTestServer::start().expect("start");
    let log = NatsLog::connect(&server.url(), NatsOptions::default())
        .await
        .expect("c");
    let mut n = 0u128;
    for size in [1usize, 2, 4, 8, 16, 64, 256] {
        let t = std::time::Instant::now();
        let total = 512;
        for _ in 0..(total / size) {
            let evs: Vec<_> = (0..size)
                .map(|_| {
                    n += 1;
                    flotilla_core::Envelope::new(
                        uuid::Uuid::from_u128(n),
                        chrono::DateTime::UNIX_EPOCH,
                        "t",
                        flotilla_core::Input::Tick,
                    )
                })
                .collect();
            log.append(evs).await.expect("a");
        }
        println!("batch {size}: {:?} per event", t.elapsed() / total as u32);
    }
}
