//! Issue 17's Analysis gate against a real Prometheus: the test runs a small exporter serving
//! two error ratios, a `prometheus` server (Debian's package) scraping it every second, and a
//! `flotilla serve` hub whose analysis adapter queries that Prometheus. Stage canary's
//! after-stage Analysis reads the canary ratio (0.001: two successful measurements pass it);
//! stage prod's before-stage Analysis reads the prod ratio (0.5: its one measurement fails it),
//! so the run fails with `AnalysisFailed` and prod's clusters are never updated. Every result
//! the adapter appended is in the log, so `replay explain` tells the same story.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use flotilla_tests::agents::{get_json, ok, wait_for};
use flotilla_tests::support::{HubProcess, http_client};
use serde_json::{Value, json};

type TestResult = Result<(), String>;

/// What the exporter serves.
const METRICS: &str = "# TYPE flotilla_test_error_ratio gauge\n\
flotilla_test_error_ratio{stage=\"canary\"} 0.001\n\
flotilla_test_error_ratio{stage=\"prod\"} 0.5\n";

fn binary() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_flotilla-e2e"))
}

/// A `/metrics` endpoint on a loopback port, served by a thread until dropped.
struct Exporter {
    port: u16,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Exporter {
    fn start() -> Result<Self, String> {
        let listener = TcpListener::bind("127.0.0.1:0").map_err(|e| e.to_string())?;
        listener.set_nonblocking(true).map_err(|e| e.to_string())?;
        let port = listener.local_addr().map_err(|e| e.to_string())?.port();
        let stop = Arc::new(AtomicBool::new(false));
        let stopping = stop.clone();
        let thread = std::thread::spawn(move || {
            while !stopping.load(Ordering::Relaxed) {
                match listener.accept() {
                    Ok((stream, _)) => serve_metrics(stream),
                    Err(_) => std::thread::sleep(Duration::from_millis(20)),
                }
            }
        });
        Ok(Self {
            port,
            stop,
            thread: Some(thread),
        })
    }
}

impl Drop for Exporter {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

fn serve_metrics(mut stream: TcpStream) {
    let _ = stream.set_nonblocking(false);
    let _ = stream.set_read_timeout(Some(Duration::from_secs(2)));
    let mut request = [0_u8; 4096];
    let _ = stream.read(&mut request);
    let response = format!(
        "HTTP/1.1 200 OK\r\nContent-Type: text/plain; version=0.0.4\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{METRICS}",
        METRICS.len()
    );
    let _ = stream.write_all(response.as_bytes());
}

/// A `prometheus` server on a free loopback port with temporary storage, killed when dropped.
struct Prometheus {
    child: Child,
    url: String,
}

impl Prometheus {
    fn start(dir: &Path, exporter_port: u16) -> Result<Self, String> {
        let port = free_port()?;
        let config = dir.join("prometheus.yml");
        let scrape = format!(
            "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\nscrape_configs:\n  - job_name: exporter\n    static_configs:\n      - targets: ['127.0.0.1:{exporter_port}']\n"
        );
        std::fs::write(&config, scrape).map_err(|e| e.to_string())?;
        let child = Command::new("prometheus")
            .arg(format!("--config.file={}", config.display()))
            .arg(format!(
                "--storage.tsdb.path={}",
                dir.join("data").display()
            ))
            .arg(format!("--web.listen-address=127.0.0.1:{port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| {
                format!("cannot start prometheus ({e}); scripts/test.sh installs Debian's package")
            })?;
        Ok(Self {
            child,
            url: format!("http://127.0.0.1:{port}"),
        })
    }

    /// Waits until a query for both ratios answers with samples.
    fn wait_scraped(&self) -> Result<(), String> {
        let url = format!("{}/api/v1/query", self.url);
        let started = Instant::now();
        while started.elapsed() < Duration::from_secs(60) {
            let answer = on_runtime(async {
                let response = http_client()
                    .get(&url)
                    .query(&[("query", "flotilla_test_error_ratio")])
                    .send()
                    .await
                    .map_err(|e| e.to_string())?;
                response.json::<Value>().await.map_err(|e| e.to_string())
            });
            let samples = answer
                .ok()
                .and_then(|a| a["data"]["result"].as_array().map(Vec::len));
            if samples == Some(2) {
                return Ok(());
            }
            std::thread::sleep(Duration::from_millis(200));
        }
        Err("prometheus did not scrape the exporter within 60 s".into())
    }
}

impl Drop for Prometheus {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn free_port() -> Result<u16, String> {
    let listener = TcpListener::bind("127.0.0.1:0").map_err(|e| e.to_string())?;
    Ok(listener.local_addr().map_err(|e| e.to_string())?.port())
}

fn on_runtime<T>(future: impl std::future::Future<Output = T>) -> T {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build();
    match runtime {
        Ok(runtime) => runtime.block_on(future),
        Err(error) => panic!("cannot build a runtime: {error}"),
    }
}

const MEMBERS: &str = "apiVersion: cluster.kubernetes-fleet.io/v1beta1
kind: MemberCluster
metadata: {name: member1, labels: {environment: canary}}
spec: {}
---
apiVersion: cluster.kubernetes-fleet.io/v1beta1
kind: MemberCluster
metadata: {name: member2, labels: {environment: prod}}
spec: {}
";

fn manifests(prometheus: &str) -> String {
    format!(
        r#"apiVersion: v1
kind: Namespace
metadata: {{name: test-namespace}}
---
apiVersion: placement.kubernetes-fleet.io/v1beta1
kind: ClusterResourcePlacement
metadata: {{name: example-placement}}
spec:
  resourceSelectors:
    - {{group: "", kind: Namespace, name: test-namespace, version: v1}}
  policy: {{placementType: PickAll}}
  strategy: {{type: External}}
---
apiVersion: placement.kubernetes-fleet.io/v1beta1
kind: ClusterStagedUpdateStrategy
metadata: {{name: analysed}}
spec:
  stages:
    - name: canary
      labelSelector:
        matchLabels: {{environment: canary}}
      afterStageTasks:
        - type: Analysis
          prometheus:
            address: {prometheus}
            query: flotilla_test_error_ratio{{stage="canary"}}
            successCondition: result < 0.01
          interval: 1s
          count: 2
    - name: prod
      labelSelector:
        matchLabels: {{environment: prod}}
      beforeStageTasks:
        - type: Analysis
          prometheus:
            address: {prometheus}
            query: flotilla_test_error_ratio{{stage="prod"}}
            successCondition: result < 0.01
---
apiVersion: placement.kubernetes-fleet.io/v1beta1
kind: ClusterStagedUpdateRun
metadata: {{name: example-run}}
spec:
  placementName: example-placement
  resourceSnapshotIndex: "0"
  stagedRolloutStrategyName: analysed
  state: Run
"#
    )
}

fn task_status<'a>(run: &'a Value, stage: usize, list: &str) -> &'a Value {
    &run["status"]["stagesStatus"][stage][list][0]
}

fn run_failed(run: &Value) -> Option<(String, String)> {
    run["status"]["conditions"]
        .as_array()?
        .iter()
        .find(|c| c["type"] == "Succeeded")
        .map(|c| {
            (
                c["reason"].as_str().unwrap_or_default().to_owned(),
                c["message"].as_str().unwrap_or_default().to_owned(),
            )
        })
}

#[test]
fn a_real_prometheus_passes_the_canary_gate_and_fails_the_prod_gate() -> TestResult {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let exporter = Exporter::start()?;
    let prometheus = Prometheus::start(dir.path(), exporter.port)?;
    prometheus.wait_scraped()?;

    let hub = HubProcess::start(&binary(), &dir.path().join("hub"), &[])?;
    let members = dir.path().join("members.yaml");
    std::fs::write(&members, MEMBERS).map_err(|e| e.to_string())?;
    ok(&hub, &["apply", "-f", &members.to_string_lossy()])?;
    let beats: Vec<Value> = ["member1", "member2"]
        .iter()
        .map(|c| json!({"schemaVersion": 1, "type": "heartbeat", "cluster": c}))
        .collect();
    hub.post_events(&Value::Array(beats))?;
    let file = dir.path().join("analysed.yaml");
    std::fs::write(&file, manifests(&prometheus.url)).map_err(|e| e.to_string())?;
    ok(&hub, &["apply", "-f", &file.to_string_lossy()])?;
    hub.post_events(
        &json!({"schemaVersion": 1, "type": "report", "cluster": "member1",
        "placement": "example-placement", "resourceIndex": 0, "applied": true, "available": true}),
    )?;

    let finished = wait_for("the run to finish", || {
        let run = get_json(&hub, &["csur", "example-run"])?;
        Ok(run_failed(&run))
    });
    let (reason, message) = finished.map_err(|e| {
        let run = get_json(&hub, &["csur", "example-run"]).unwrap_or_default();
        format!("{e}: {run:#}")
    })?;
    assert_eq!(reason, "AnalysisFailed", "{message}");
    assert!(
        message.contains("prod")
            && message.contains("beforeStageTasks[0]")
            && message.contains("0.5"),
        "{message}"
    );
    let run = get_json(&hub, &["csur", "example-run"])?;
    let canary = task_status(&run, 0, "afterStageTaskStatus");
    assert_eq!(canary["analysis"]["successful"], 2, "{canary}");
    assert_eq!(canary["analysis"]["lastValue"], "0.001", "{canary}");
    let prod = task_status(&run, 1, "beforeStageTaskStatus");
    assert_eq!(prod["analysis"]["failed"], 1, "{prod}");
    assert!(
        run["status"]["stagesStatus"][1]["startTime"].is_null(),
        "prod never starts"
    );

    // The results are facts in the log: explain, reading it, names both gates and the verdict.
    hub.stop()?;
    let explained = Command::new(binary())
        .arg("replay")
        .arg("--data")
        .arg(dir.path().join("hub"))
        .args([
            "explain",
            "--placement",
            "example-placement",
            "--cluster",
            "member2",
        ])
        .output()
        .map_err(|e| e.to_string())?;
    let text = String::from_utf8_lossy(&explained.stdout);
    assert!(
        explained.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&explained.stderr)
    );
    assert!(text.contains("analysis afterStageTasks[0]"), "{text}");
    assert!(text.contains("2 of 2 successful"), "{text}");
    assert!(text.contains("analysis beforeStageTasks[0]"), "{text}");
    assert!(text.contains("failed"), "{text}");
    Ok(())
}
