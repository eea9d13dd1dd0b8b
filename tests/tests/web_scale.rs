//! The web page over a large fleet, measured in Debian's headless Chromium: a `flotilla serve`
//! hub is given `FLOTILLA_WEB_CLUSTERS` member clusters (default [`DEFAULT_CLUSTERS`]), each
//! applied and heartbeating, in batches of [`BATCH`] events posted to `/v1/events?wait=true`,
//! then one PickAll placement over all of them and a staged run started on it (its first stage
//! waits: no agent reports). The page is then timed: the summary drawn after navigation, the
//! bytes the load transferred, and a move of the time slider to a past point. The bytes target
//! is asserted at any scale, the time targets in a release build; `scripts/web-scale` runs it
//! (release) at 100,000 clusters. Screenshots go under `$CARGO_TARGET_TMPDIR/web-screenshots/`.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use chromiumoxide::page::{Page, ScreenshotParams};
use flotilla_tests::browser::{self, eval, eval_text};
use flotilla_tests::support::{HubProcess, http_client};
use serde_json::{Value, json};

/// Clusters unless `FLOTILLA_WEB_CLUSTERS` says otherwise: small enough for the whole test to
/// take well under a minute on two cores.
const DEFAULT_CLUSTERS: u32 = 2_000;
/// Targets: the summary drawn, the bytes of one load, a slider move.
const FIRST_PAINT_MAX_MS: f64 = 1_000.0;
const LOAD_BYTES_MAX: f64 = 1_000_000.0;
const SLIDER_MAX_MS: f64 = 300.0;
/// How long any one wait on the page may take.
const PAGE_WAIT_MAX: Duration = Duration::from_secs(120);
const POLL: Duration = Duration::from_millis(50);
/// Events per POST while the fleet joins (well under the 2 MiB body limit).
const BATCH: u32 = 2_000;
/// Clusters in the run's first stage (`environment: staging`); the rest are `production`.
const STAGING: u32 = 10;

fn binary() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_flotilla-e2e"))
}

fn clusters() -> Result<u32, String> {
    match std::env::var("FLOTILLA_WEB_CLUSTERS") {
        Ok(text) => text
            .parse()
            .map_err(|e| format!("FLOTILLA_WEB_CLUSTERS={text}: {e}")),
        Err(_) => Ok(DEFAULT_CLUSTERS),
    }
}

#[test]
fn the_page_over_a_large_fleet_loads_small_and_fast() -> Result<(), String> {
    let clusters = clusters()?;
    let scratch = tempfile::tempdir().map_err(|e| e.to_string())?;
    let hub = HubProcess::start(&binary(), &scratch.path().join("hub"), &[])?;
    let shots = screenshot_dir()?;
    let runtime = browser::runtime()?;
    let started = Instant::now();
    runtime.block_on(populate(&hub.url, clusters))?;
    println!("{clusters} clusters joined in {:?}", started.elapsed());
    let result = runtime.block_on(in_browser(&hub.url, scratch.path(), &shots, clusters));
    println!("web screenshots: {}", shots.display());
    hub.stop()?;
    let figures = result?;
    println!(
        "web scale: {clusters} clusters: summary drawn {:.0} ms, load {:.0} bytes, slider move {:.0} ms",
        figures.first_paint_ms, figures.load_bytes, figures.slider_ms
    );
    assert!(
        figures.load_bytes <= LOAD_BYTES_MAX,
        "bytes on load {figures:?}"
    );
    // An unoptimised hub folds and renders several times slower: the times are targets of
    // the release build (`scripts/web-scale`); a debug run prints them.
    if !cfg!(debug_assertions) {
        assert!(
            figures.first_paint_ms <= FIRST_PAINT_MAX_MS,
            "first paint {figures:?}"
        );
        assert!(
            figures.slider_ms <= SLIDER_MAX_MS,
            "slider move {figures:?}"
        );
    }
    Ok(())
}

/// Applies and heartbeats every cluster, then the placement and its started run.
async fn populate(url: &str, clusters: u32) -> Result<(), String> {
    let client = http_client();
    let mut start = 0;
    while start < clusters {
        let end = (start + BATCH / 2).min(clusters);
        let mut events: Vec<Value> = (start..end).map(member).collect();
        events.extend((start..end).map(|i| json!({"type": "heartbeat", "cluster": name(i)})));
        post(&client, url, &Value::Array(events)).await?;
        start = end;
    }
    let rollout = [
        json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "shop"}}),
        json!({"apiVersion": PLACEMENT_API, "kind": "ClusterResourcePlacement",
               "metadata": {"name": "shop"},
               "spec": {"resourceSelectors": [{"group": "", "kind": "Namespace", "name": "shop", "version": "v1"}],
                        "policy": {"placementType": "PickAll"}, "strategy": {"type": "External"}}}),
        json!({"apiVersion": PLACEMENT_API, "kind": "ClusterStagedUpdateStrategy",
               "metadata": {"name": "shop-strategy"},
               "spec": {"stages": [
                   {"name": "staging", "labelSelector": {"matchLabels": {"environment": "staging"}},
                    "afterStageTasks": [{"type": "Approval"}]},
                   {"name": "production", "labelSelector": {"matchLabels": {"environment": "production"}}}]}}),
        json!({"apiVersion": PLACEMENT_API, "kind": "ClusterStagedUpdateRun",
               "metadata": {"name": "shop-run"},
               "spec": {"placementName": "shop", "stagedRolloutStrategyName": "shop-strategy", "state": "Run"}}),
    ];
    let applies = rollout
        .into_iter()
        .map(|manifest| json!({"type": "apply", "manifest": manifest}));
    post(&client, url, &Value::Array(applies.collect())).await
}

const PLACEMENT_API: &str = "placement.kubernetes-fleet.io/v1beta1";

fn name(i: u32) -> String {
    format!("scale-{i:06}")
}

fn member(i: u32) -> Value {
    let environment = if i < STAGING { "staging" } else { "production" };
    json!({"type": "apply", "manifest": {
        "apiVersion": "cluster.kubernetes-fleet.io/v1beta1", "kind": "MemberCluster",
        "metadata": {"name": name(i), "labels": {"environment": environment}},
        "spec": {"heartbeatPeriodSeconds": 600}}})
}

/// Posts events and waits for their decisions; a refused event fails the test.
async fn post(client: &reqwest::Client, url: &str, events: &Value) -> Result<(), String> {
    let response = client
        .post(format!("{url}/v1/events?wait=true"))
        .header("Content-Type", "application/json")
        .body(events.to_string())
        .send()
        .await
        .map_err(|e| format!("POST /v1/events: {e}"))?;
    let status = response.status();
    let text = response.text().await.map_err(|e| e.to_string())?;
    let body: Value = serde_json::from_str(&text).map_err(|e| format!("{e}: {text}"))?;
    let refused = body
        .as_array()
        .and_then(|results| results.iter().find(|r| r.to_string().contains("Rejected")));
    match (status.is_success(), refused) {
        (true, None) => Ok(()),
        _ => Err(format!(
            "POST /v1/events: {status}: {}",
            refused.unwrap_or(&body)
        )),
    }
}

/// What one load measured.
#[derive(Debug)]
struct Figures {
    first_paint_ms: f64,
    load_bytes: f64,
    slider_ms: f64,
}

async fn in_browser(
    url: &str,
    scratch: &Path,
    shots: &Path,
    clusters: u32,
) -> Result<Figures, String> {
    browser::with_page(&scratch.join("chromium-profile"), |page| async move {
        measure(&page, url, shots, clusters).await
    })
    .await
}

async fn measure(page: &Page, url: &str, shots: &Path, clusters: u32) -> Result<Figures, String> {
    page.goto(format!("{url}/"))
        .await
        .map_err(|e| format!("loading the page: {e}"))?;
    let head = until_text(page, "the summary", &format!(
        "document.querySelector('#summary [data-members=\"{clusters}\"]') \
         && performance.getEntriesByName('flotilla-summary').length ? document.body.dataset.shownSeq : ''"
    ))
    .await?;
    let first_paint_ms = number(
        page,
        "performance.getEntriesByName('flotilla-summary')[0].startTime",
    )
    .await?;
    // The marks are read after the first draw: let them land before the bytes are summed.
    until_text(
        page,
        "the marks",
        "document.querySelector('#marks .mark') ? 'yes' : ''",
    )
    .await?;
    let load_bytes = number(
        page,
        "performance.getEntriesByType('navigation').concat(performance.getEntriesByType('resource'))\
         .reduce((sum, e) => sum + (e.transferSize || 0), 0)",
    )
    .await?;
    println!("largest transfers: {}", eval_text(page,
        "performance.getEntriesByType('resource').sort((a, b) => b.transferSize - a.transferSize)\
         .slice(0, 6).map((e) => `${e.name.replace(location.origin, '')} ${e.transferSize} B \
         ${Math.round(e.duration)} ms`).join('; ')").await?);
    shoot(page, shots, "scale-1-summary").await?;
    let head: u64 = head.parse().map_err(|e| format!("shown seq {head}: {e}"))?;
    let past = (head / 2).max(1);
    let slider_ms = move_slider(page, past).await?;
    println!("slowest reads of the move: {}", eval_text(page, &format!(
        "performance.getEntriesByType('resource').filter((e) => e.name.includes('at={past}') \
         || e.name.includes('until={past}')).sort((a, b) => b.duration - a.duration).slice(0, 6)\
         .map((e) => `${{e.name.replace(location.origin, '')}} ${{Math.round(e.duration)}} ms`).join('; ')"
    )).await?);
    shoot(page, shots, "scale-2-slider-back").await?;
    let hash = eval_text(page, "location.hash").await?;
    assert_eq!(hash, format!("#at={past}"), "the point is in the location");
    Ok(Figures {
        first_paint_ms,
        load_bytes,
        slider_ms,
    })
}

/// Moves the slider to `seq` as a user letting go there does and answers how long until the
/// page showed that point (its `flotilla-shown-SEQ` mark).
async fn move_slider(page: &Page, seq: u64) -> Result<f64, String> {
    eval_text(page, &format!(
        "(() => {{ const s = document.getElementById('slider'); s.value = '{seq}'; \
         window.flotillaMoved = performance.now(); \
         s.dispatchEvent(new Event('input')); s.dispatchEvent(new Event('change')); return s.value; }})()"
    ))
    .await?;
    until_text(page, "the past point", &format!(
        "document.body.dataset.shownSeq === '{seq}' && document.body.classList.contains('past') ? 'yes' : ''"
    ))
    .await?;
    number(page, &format!(
        "performance.getEntriesByName('flotilla-shown-{seq}')[0].startTime - window.flotillaMoved"
    ))
    .await
}

/// Polls `expression` (at most [`PAGE_WAIT_MAX`]) until it is non-empty text.
async fn until_text(page: &Page, what: &str, expression: &str) -> Result<String, String> {
    let deadline = tokio::time::Instant::now() + PAGE_WAIT_MAX;
    let guarded = format!(
        "(() => {{ try {{ const v = {expression}; return typeof v === 'string' ? v : ''; }} \
         catch {{ return ''; }} }})()"
    );
    loop {
        let value = eval_text(page, &guarded).await?;
        if !value.is_empty() {
            return Ok(value);
        }
        if tokio::time::Instant::now() >= deadline {
            let error =
                eval_text(page, "document.getElementById('error')?.textContent ?? ''").await?;
            return Err(format!(
                "timed out waiting for {what} (page error: {error})"
            ));
        }
        tokio::time::sleep(POLL).await;
    }
}

async fn number(page: &Page, script: &str) -> Result<f64, String> {
    eval(page, script)
        .await?
        .as_f64()
        .ok_or_else(|| format!("{script} is not a number"))
}

async fn shoot(page: &Page, dir: &Path, name: &str) -> Result<(), String> {
    let path = dir.join(format!("{name}.png"));
    let params = ScreenshotParams::builder().full_page(true).build();
    page.save_screenshot(params, &path)
        .await
        .map_err(|e| format!("screenshot {}: {e}", path.display()))?;
    Ok(())
}

fn screenshot_dir() -> Result<PathBuf, String> {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("web-screenshots");
    std::fs::create_dir_all(&dir).map_err(|e| format!("creating {}: {e}", dir.display()))?;
    Ok(dir)
}
