//! `GET /metrics` and the recorder's upkeep: the parts of the hub's metrics that read a hub
//! (its folded view, its log, its shutdown signal). The series and the recording functions the
//! runtime calls are in [`crate::hub_metrics`], below the runtime; this module is above it.

mod attention;
mod fleet;
mod process;
mod text;

pub use attention::{APPROVAL_PENDING, PLACEMENT_FAILING, PLACEMENT_UNHEALTHY, RUN_INFO};

use axum::extract::State;
use axum::http::header;
use axum::response::{IntoResponse, Response};
use flotilla_eventstore::EventLog;

use crate::hub_metrics::{UPKEEP_EVERY, handle};
use crate::runtime::Hub;

/// Drains histogram samples every [`UPKEEP_EVERY`] until the hub shuts down.
pub async fn run_upkeep<L: EventLog>(hub: Hub<L>) {
    let mut shutdown = hub.shutdown_signal();
    while !*shutdown.borrow() {
        handle().run_upkeep();
        crate::runtime::pause_or_stop(UPKEEP_EVERY, &mut shutdown).await;
    }
}

/// `GET /metrics`: sets the scrape-time gauges from the folded view and the log, then renders
/// everything in Prometheus text format: the recorder's series, then the per-object families
/// and the process's, which are rendered straight into the text.
pub async fn scrape<L: EventLog>(State(hub): State<Hub<L>>) -> Response {
    let handle = handle();
    crate::hub_metrics::record_storage_full(hub.log().storage_full());
    fleet::publish_lag(&hub).await;
    let mut families = fleet::publish_fleet(&hub).unwrap_or_else(|error| {
        tracing::warn!(%error, "cannot read the folded state for /metrics");
        Vec::new()
    });
    families.extend(process::families());
    let mut body = handle.render();
    text::render(&families, &mut body);
    (
        [(
            header::CONTENT_TYPE,
            "text/plain; version=0.0.4; charset=utf-8",
        )],
        body,
    )
        .into_response()
}
