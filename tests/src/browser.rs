//! Debian's headless Chromium for the web page's tests, driven over the DevTools protocol:
//! launched with only the arguments listed here (none of the library's defaults, nothing that
//! reaches beyond loopback), and closed whatever a test's outcome.

use std::future::Future;
use std::path::Path;
use std::time::Duration;

use chromiumoxide::browser::{Browser, BrowserConfig};
use chromiumoxide::page::Page;
use futures::StreamExt;
use serde_json::Value;

/// Debian's Chromium, installed by `scripts/test.sh`.
pub const CHROMIUM: &str = "/usr/bin/chromium";
/// How long Chromium may take to start.
const LAUNCH_MAX: Duration = Duration::from_secs(60);
/// How long Chromium may take to exit once closed.
const EXIT_MAX: Duration = Duration::from_secs(10);

/// The runtime a browser test drives Chromium from (a test itself is synchronous: it starts
/// the hub and agents as processes first).
///
/// # Errors
/// When the runtime cannot be built.
pub fn runtime() -> Result<tokio::runtime::Runtime, String> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| e.to_string())
}

/// Launches Chromium with its profile in `profile`, runs `drive` on a blank tab, and closes
/// Chromium whatever the outcome.
///
/// # Errors
/// Chromium missing or failing to start or to open a tab, or what `drive` answers.
pub async fn with_page<T, F, Fut>(profile: &Path, drive: F) -> Result<T, String>
where
    F: FnOnce(Page) -> Fut,
    Fut: Future<Output = Result<T, String>>,
{
    let (mut browser, mut handler) = launch(profile).await?;
    // The handler carries every message between the browser and the page handles.
    let events = tokio::spawn(async move { while handler.next().await.is_some() {} });
    let driven = match browser.new_page("about:blank").await {
        Ok(page) => drive(page).await,
        Err(e) => Err(format!("opening a tab: {e}")),
    };
    if browser.close().await.is_err() {
        let _ = browser.kill().await;
    }
    let _ = tokio::time::timeout(EXIT_MAX, browser.wait()).await;
    events.abort();
    driven
}

async fn launch(profile: &Path) -> Result<(Browser, chromiumoxide::Handler), String> {
    if !Path::new(CHROMIUM).exists() {
        return Err(format!(
            "{CHROMIUM} is missing: scripts/test.sh installs it (apt-get install -y chromium)"
        ));
    }
    let config = BrowserConfig::builder()
        .chrome_executable(CHROMIUM)
        // Exactly these arguments (and the headless, sandbox and profile ones the builder adds).
        .disable_default_args()
        .args([
            "disable-gpu",
            "disable-background-networking",
            "disable-component-update",
            "disable-sync",
            "no-first-run",
            "disable-dev-shm-usage",
        ])
        .no_sandbox()
        .user_data_dir(profile)
        .window_size(1400, 1000)
        .viewport(None)
        .launch_timeout(LAUNCH_MAX)
        .build()?;
    Browser::launch(config)
        .await
        .map_err(|e| format!("launching {CHROMIUM}: {e}"))
}

/// The value of `script` evaluated in the page.
///
/// # Errors
/// The evaluation failing, or a value that does not read back as JSON.
pub async fn eval(page: &Page, script: &str) -> Result<Value, String> {
    page.evaluate(script)
        .await
        .map_err(|e| format!("evaluating {script}: {e}"))?
        .into_value()
        .map_err(|e| format!("the value of {script}: {e}"))
}

/// The text `script` evaluates to in the page.
///
/// # Errors
/// As [`eval`], or a value that is not a string.
pub async fn eval_text(page: &Page, script: &str) -> Result<String, String> {
    match eval(page, script).await? {
        Value::String(text) => Ok(text),
        other => Err(format!("{script} is {other}, not text")),
    }
}
