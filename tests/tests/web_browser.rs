//! The web page in a real browser: Debian's headless Chromium, driven over the DevTools
//! protocol, against a `flotilla serve` hub with four `sim` agents. The page shows a staged run
//! not started; a click on `start` runs it to its approval; a click on `approve` advances it to
//! success without a reload; the time slider moved back shows the run waiting for approval
//! again. Screenshots are kept under `$CARGO_TARGET_TMPDIR/web-screenshots/`. A second test
//! checks that behind `--tokens` the page's files need no token and its stream does.

use std::path::{Path, PathBuf};
use std::time::Duration;

use chromiumoxide::page::{Page, ScreenshotParams};
use flotilla_tests::agents::{Agent, fail_staged_run_on_member_1, get_json, items, ok, wait_for};
use flotilla_tests::browser::{self, eval, eval_text};
use flotilla_tests::support::{HubProcess, fixture, http_client};
use serde_json::Value;

/// How long the page may take to show any one change.
const PAGE_WAIT_MAX: Duration = Duration::from_secs(60);
/// How often a wait looks at the page again.
const POLL: Duration = Duration::from_millis(200);
/// Attempts at one click, [`POLL`] apart.
const CLICK_TRIES: u32 = 25;
/// The members of `agents-fleet.yaml`, each run by a `sim` agent.
const MEMBERS: [&str; 4] = ["member-1", "member-2", "member-3", "gitops-1"];

fn binary() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_flotilla-e2e"))
}

#[test]
fn the_page_starts_approves_and_replays_a_staged_run() -> Result<(), String> {
    let scratch = tempfile::tempdir().map_err(|e| e.to_string())?;
    let hub = HubProcess::start(&binary(), &scratch.path().join("hub"), &[])?;
    ok(&hub, &["apply", "-f", &fixture("agents-fleet.yaml")])?;
    let mut agents = Vec::new();
    for member in MEMBERS {
        let state = scratch.path().join(format!("state-{member}"));
        agents.push(Agent::start(
            &binary(),
            &["--hub", &hub.url],
            member,
            "sim",
            &state,
        )?);
    }
    wait_for("four bindings", || {
        Ok((items(&get_json(&hub, &["clusterresourcebindings"])?).len() == 4).then_some(()))
    })?;
    // Applied, not started: the page starts it.
    ok(&hub, &["apply", "-f", &fixture("agents-run.yaml")])?;

    let shots = screenshot_dir()?;
    let runtime = browser::runtime()?;
    let result = runtime.block_on(in_browser(&hub.url, scratch.path(), &shots));
    println!("web screenshots: {}", shots.display());
    drop(agents);
    result?;
    hub.stop()
}

/// A staged run that failed on a cluster's apply failure, on a hub whose clock the test holds
/// and whose members' heartbeats and report the test posts: the page's summary lists it under
/// the failed rollouts with the cluster and the agent's message, and its card shows it failed
/// on that cluster.
#[test]
fn the_page_names_a_failed_runs_cluster_and_message() -> Result<(), String> {
    let scratch = tempfile::tempdir().map_err(|e| e.to_string())?;
    let clock = ["--test-clock", "2026-03-12T23:00:00Z"];
    let hub = HubProcess::start(&binary(), &scratch.path().join("hub"), &clock)?;
    fail_staged_run_on_member_1(&hub, "quota exceeded")?;

    let shots = screenshot_dir()?;
    let runtime = browser::runtime()?;
    let url = hub.url.clone();
    let result = runtime.block_on(browser::with_page(
        &scratch.path().join("chromium-profile"),
        |page| async move { see_failed_run(&page, &url, &shots).await },
    ));
    result?;
    hub.stop()
}

async fn see_failed_run(page: &Page, url: &str, shots: &Path) -> Result<(), String> {
    page.goto(format!("{url}/"))
        .await
        .map_err(|e| format!("loading the page: {e}"))?;
    let run = r#"document.querySelector('[data-run="shop-run"]')"#;
    until(
        page,
        "the run's card, failed",
        &format!("{run}?.dataset.state === 'Failed'"),
    )
    .await?;
    let card = eval_text(
        page,
        &format!("{run}.querySelector('[data-run-failure]').textContent"),
    )
    .await?;
    assert_eq!(
        card,
        "cluster `member-1` in stage `staging` failed to update: the work failed to apply: \
         quota exceeded"
    );
    let summary = until_text(
        page,
        "the summary's failed rollouts naming the cluster and the message",
        "[...document.querySelectorAll('#summary li')].map((e) => e.textContent)\
         .find((t) => /shop-run/.test(t) && /member-1/.test(t) && /quota exceeded/.test(t))",
    )
    .await?;
    assert!(summary.contains("failed to apply"), "{summary}");
    shoot(page, shots, "5-failed-run").await
}

/// Launches Chromium, drives the page, and closes Chromium whatever the outcome.
async fn in_browser(url: &str, scratch: &Path, shots: &Path) -> Result<(), String> {
    browser::with_page(&scratch.join("chromium-profile"), |page| async move {
        drive(&page, url, shots).await
    })
    .await
}

/// The page's part: start, approve, see it advance, move the slider back.
async fn drive(page: &Page, url: &str, shots: &Path) -> Result<(), String> {
    page.goto(format!("{url}/"))
        .await
        .map_err(|e| format!("loading the page: {e}"))?;
    let run = r#"document.querySelector('[data-run="shop-run"]')"#;
    until(page, "the run, not started, with a start button", &format!(
        "{run}?.dataset.state === 'Not started' && !!{run}.querySelector('[data-run-action=start]')"
    ))
    .await?;
    // Set once: a reload would lose it.
    eval(page, "window.flotillaTestMarker = 'loaded once'; true").await?;
    shoot(page, shots, "1-not-started").await?;

    click(page, r#"[data-run="shop-run"] [data-run-action="start"]"#).await?;
    until(
        page,
        "the approve button after the staging stage",
        &format!("!!{run}?.querySelector('button[data-approve]')"),
    )
    .await?;
    // Read in the same evaluation as the explanation: the seq the page names for what it shows.
    let waiting = until_text(
        page,
        "the explanation naming the approval, at a seq the page names",
        "[...document.querySelectorAll('[data-placement=\"shop\"] .wait-text')]\
         .some((e) => /approv/i.test(e.textContent)) && document.body.dataset.shownSeq",
    )
    .await?;
    shoot(page, shots, "2-waiting-for-approval").await?;

    click(page, r#"[data-run="shop-run"] button[data-approve]"#).await?;
    until(
        page,
        "the run to succeed, live",
        &format!("{run}?.dataset.state === 'Succeeded'"),
    )
    .await?;
    let marker = eval(page, "window.flotillaTestMarker ?? null").await?;
    assert_eq!(marker, "loaded once", "the page advanced without a reload");
    let production =
        format!("{run}.querySelector('[data-stage=\"production\"]').dataset.stageState");
    assert_eq!(eval_text(page, &production).await?, "done");
    shoot(page, shots, "3-succeeded").await?;
    switch_time_zone(page).await?;

    move_slider(page, &waiting).await?;
    until(page, "the page as it was at the approval", &format!(
        "document.body.dataset.shownSeq === '{waiting}' && document.body.classList.contains('past') \
         && {run}?.dataset.state !== 'Succeeded'"
    ))
    .await?;
    assert_eq!(eval_text(page, &production).await?, "pending");
    let waits = eval_text(page, &format!("{run}.textContent")).await?;
    assert!(waits.contains("waiting for approval"), "{waits}");
    shoot(page, shots, "4-slider-back-at-approval").await?;

    click(page, "#live").await?;
    until(
        page,
        "live again",
        &format!(
            "!document.body.classList.contains('past') && {run}?.dataset.state === 'Succeeded'"
        ),
    )
    .await
}

/// Times are UTC, labelled, until the user picks local time: then they are labelled with the
/// browser's offset (`UTC+00:00` on a machine in UTC), and UTC again at the next click.
async fn switch_time_zone(page: &Page) -> Result<(), String> {
    let time = "document.getElementById('point-time').textContent";
    until(
        page,
        "the point's time in UTC",
        &format!("/ UTC$/.test({time})"),
    )
    .await?;
    click(page, "#zone").await?;
    until(
        page,
        "the point's time in local time, with its offset",
        &format!(
            "/ UTC[+-]\\d\\d:\\d\\d$/.test({time}) \
             && document.getElementById('zone').textContent === 'local time'"
        ),
    )
    .await?;
    click(page, "#zone").await?;
    until(
        page,
        "the point's time in UTC again",
        &format!("/ UTC$/.test({time})"),
    )
    .await
}

/// Moves the slider as a user letting go of it there does: `input`, then `change`.
async fn move_slider(page: &Page, seq: &str) -> Result<(), String> {
    let script = format!(
        "(() => {{ const s = document.getElementById('slider'); s.value = '{seq}'; \
         s.dispatchEvent(new Event('input')); s.dispatchEvent(new Event('change')); \
         return s.value; }})()"
    );
    let value = eval_text(page, &script).await?;
    if value == seq {
        Ok(())
    } else {
        Err(format!("the slider took {value}, not {seq}"))
    }
}

/// A real mouse click on the element `selector` finds.
async fn click(page: &Page, selector: &str) -> Result<(), String> {
    // The page re-renders whenever the hub folds (heartbeats every 2 s), so an element found
    // may be replaced before the click lands: find it again, a bounded number of times.
    let mut last_error = String::new();
    for _ in 0..CLICK_TRIES {
        let clicked = match page.find_element(selector).await {
            Ok(element) => element.click().await.map(|_| ()),
            Err(e) => Err(e),
        };
        match clicked {
            Ok(()) => return Ok(()),
            Err(e) => last_error = e.to_string(),
        }
        tokio::time::sleep(POLL).await;
    }
    Err(format!(
        "clicking {selector} ({CLICK_TRIES} tries): {last_error}"
    ))
}

/// Waits (at most [`PAGE_WAIT_MAX`]) until `condition`, a JavaScript expression, is true.
async fn until(page: &Page, what: &str, condition: &str) -> Result<(), String> {
    until_text(page, what, &format!("({condition}) ? 'yes' : ''"))
        .await
        .map(|_| ())
}

/// Polls `expression` until it is non-empty text and returns that text, read in the same
/// evaluation that found it (the page may draw again at any moment).
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
            let error = eval(page, "document.getElementById('error')?.textContent ?? ''")
                .await
                .unwrap_or(Value::Null);
            return Err(format!(
                "timed out after {PAGE_WAIT_MAX:?} waiting for {what} (page error: {error})"
            ));
        }
        tokio::time::sleep(POLL).await;
    }
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

/// How long a hub may take to stop cleanly.
const STOP_MAX: Duration = Duration::from_secs(20);
/// An admin token of the hub started with `--tokens`.
const ADMIN: &str = "web-admin-token-0123456789";

#[test]
fn behind_tokens_the_page_needs_no_token_and_its_stream_does() -> Result<(), String> {
    let scratch = tempfile::tempdir().map_err(|e| e.to_string())?;
    let tokens = scratch.path().join("tokens.yaml");
    let text = format!("tokens:\n- {{name: ops, token: {ADMIN}, role: admin}}\n");
    std::fs::write(&tokens, text).map_err(|e| e.to_string())?;
    let tokens = tokens.display().to_string();
    let hub = HubProcess::start(
        &binary(),
        &scratch.path().join("hub"),
        &["--tokens", &tokens],
    )?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    // The stream stays open while the hub stops: it must not hold the graceful stop up.
    let _stream = runtime
        .block_on(async { tokio::time::timeout(PAGE_WAIT_MAX, check_tokens(&hub.url)).await })
        .map_err(|_| "the checks behind tokens timed out".to_owned())??;
    stop_within(hub, STOP_MAX)
}

/// Stops the hub (SIGTERM) and waits at most `limit` for it to exit; past that, kills it.
fn stop_within(hub: HubProcess, limit: Duration) -> Result<(), String> {
    let pid = hub.pid().to_string();
    let (done, stopped) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = done.send(hub.stop());
    });
    match stopped.recv_timeout(limit) {
        Ok(result) => result,
        Err(_) => {
            let _ = std::process::Command::new("kill")
                .args(["-9", &pid])
                .status();
            Err(format!(
                "the hub did not stop within {limit:?} with a page's stream open"
            ))
        }
    }
}

/// A GET asking for JSON, with a bearer token or none.
async fn get(url: &str, path: &str, token: Option<&str>) -> Result<reqwest::Response, String> {
    let request = http_client()
        .get(format!("{url}{path}"))
        .header("Accept", "application/json");
    let request = match token {
        Some(token) => request.bearer_auth(token),
        None => request,
    };
    request.send().await.map_err(|e| format!("GET {path}: {e}"))
}

/// Checks what needs a token; answers the admin's open stream.
async fn check_tokens(url: &str) -> Result<reqwest::Response, String> {
    let page = get(url, "/", None).await?;
    assert_eq!(page.status(), 200, "the page needs no token");
    assert!(
        content_type(&page).starts_with("text/html"),
        "HTML whatever Accept says"
    );
    let body = page.text().await.map_err(|e| e.to_string())?;
    assert!(body.contains("<title>flotilla</title>"));
    for file in ["/web/app.js", "/web/app.css", "/web/runs.js"] {
        assert_eq!(get(url, file, None).await?.status(), 200, "{file}");
    }
    for guarded in ["/web/missing.js", "/v1/status", "/v1/stream"] {
        assert_eq!(get(url, guarded, None).await?.status(), 401, "{guarded}");
    }
    let mut stream = get(url, "/v1/stream", Some(ADMIN)).await?;
    assert_eq!(stream.status(), 200);
    assert!(content_type(&stream).starts_with("text/event-stream"));
    let first = stream
        .chunk()
        .await
        .map_err(|e| e.to_string())?
        .ok_or("the stream ended at once")?;
    let first = String::from_utf8_lossy(&first);
    assert!(
        first.contains("event: folded") && first.contains("data: "),
        "{first}"
    );
    Ok(stream)
}

fn content_type(response: &reqwest::Response) -> String {
    response
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned()
}
