//! scratch
use flotilla_eventstore::EventLog;
use flotilla_eventstore::nats_log::{NatsLog, NatsOptions};
use flotilla_eventstore::nats_test_server::NatsTestServer;

async fn run(url: &str, label: &str) {
    let log = NatsLog::connect(url, NatsOptions::default())
        .await
        .expect("c");
    let evs: Vec<_> = (1..=3000u128)
        .map(|n| {
            flotilla_core::Envelope::new(
                uuid::Uuid::from_u128(n),
                chrono::DateTime::UNIX_EPOCH,
                "t",
                flotilla_core::Input::Tick,
            )
        })
        .collect();
    let t = std::time::Instant::now();
    log.append(evs).await.expect("a");
    println!("{label}: append 3000 in one call: {:?}", t.elapsed());
    let t = std::time::Instant::now();
    for n in 3001..=3200u128 {
        log.append(vec![flotilla_core::Envelope::new(
            uuid::Uuid::from_u128(n),
            chrono::DateTime::UNIX_EPOCH,
            "t",
            flotilla_core::Input::Tick,
        )])
        .await
        .expect("a");
    }
    println!("{label}: 200 single appends: {:?}", t.elapsed());
    let t = std::time::Instant::now();
    let mut from = 1;
    let mut n = 0;
    loop {
        let r = log.read(from, 4096).await.expect("r");
        if r.is_empty() {
            break;
        }
        n += r.len();
        from = r.last().map(|e| e.seq + 1).unwrap_or(from);
    }
    println!("{label}: read {n} in {:?}", t.elapsed());
}

#[tokio::test]
async fn scratch() {
    let server = NatsTestServer::start().expect("start");
    run(&server.url(), "sync always").await;
    let dir = tempfile::tempdir().expect("d");
    let conf = dir.path().join("c.conf");
    std::fs::write(
        &conf,
        format!(
            "listen: 127.0.0.1:14999\njetstream {{ store_dir: {:?} }}\n",
            dir.path().display().to_string()
        ),
    )
    .expect("w");
    let mut child = std::process::Command::new("nats-server")
        .arg("-c")
        .arg(&conf)
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("spawn");
    tokio::time::sleep(std::time::Duration::from_millis(1500)).await;
    run("nats://127.0.0.1:14999", "default 2m").await;
    child.kill().expect("k");
    child.wait().expect("w");
}
