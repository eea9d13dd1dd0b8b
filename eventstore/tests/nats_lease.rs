//! The writer lease recognises its own write whose ack was lost. During a stream leader change a
//! create or a renewal can be stored while its ack never arrives; the next renewal then fails
//! its revision check, and before this was handled the writer took that for a lost lease and
//! shut down. Runs a real `nats-server` on a loopback port.

use std::time::Duration;

use bytes::Bytes;
use flotilla_eventstore::nats_log::lease::{LEASE_KEY, lease_bucket_name};
use flotilla_eventstore::nats_log::{NatsLog, NatsOptions};
use flotilla_eventstore::nats_test_server::NatsTestServer;

const TTL: Duration = Duration::from_secs(30);

fn text<E: std::fmt::Display>(error: E) -> String {
    error.to_string()
}

#[tokio::test]
async fn a_lease_write_whose_ack_was_lost_is_still_ours() -> Result<(), String> {
    let server = NatsTestServer::start().map_err(text)?;
    let log = NatsLog::connect(&server.url(), NatsOptions::default())
        .await
        .map_err(text)?;
    let mut lease = log
        .writer_lease("hub-a".to_owned(), TTL)
        .await
        .map_err(text)?;
    assert!(
        lease.try_acquire().await.map_err(text)?,
        "the free lease is taken"
    );
    // The same bucket, written behind the lease's back as its own lost-ack renewal would be.
    let raw = log
        .jetstream()
        .get_key_value(lease_bucket_name(log.options()))
        .await
        .map_err(text)?;
    let revision = raw
        .entry(LEASE_KEY)
        .await
        .map_err(text)?
        .ok_or("no key")?
        .revision;
    raw.update(LEASE_KEY, Bytes::from_static(b"hub-a"), revision)
        .await
        .map_err(text)?;
    assert!(
        lease.renew().await.map_err(text)?,
        "its own renewal landed: still held"
    );
    assert!(
        lease.renew().await.map_err(text)?,
        "and it renews from the adopted revision"
    );

    // Another holder's write is a lost lease.
    let revision = raw
        .entry(LEASE_KEY)
        .await
        .map_err(text)?
        .ok_or("no key")?
        .revision;
    raw.update(LEASE_KEY, Bytes::from_static(b"hub-b"), revision)
        .await
        .map_err(text)?;
    assert!(!lease.renew().await.map_err(text)?, "taken by hub-b: lost");
    assert!(!lease.try_acquire().await.map_err(text)?, "hub-b holds it");

    // A create whose ack was lost: the key names the new holder, whose create is refused.
    raw.purge(LEASE_KEY).await.map_err(text)?;
    raw.create(LEASE_KEY, Bytes::from_static(b"hub-c"))
        .await
        .map_err(text)?;
    let mut other = log
        .writer_lease("hub-c".to_owned(), TTL)
        .await
        .map_err(text)?;
    assert!(
        other.try_acquire().await.map_err(text)?,
        "its own create landed: held"
    );
    assert!(other.renew().await.map_err(text)?);
    assert_eq!(
        other.current_holder().await.map_err(text)?.as_deref(),
        Some("hub-c")
    );
    Ok(())
}
