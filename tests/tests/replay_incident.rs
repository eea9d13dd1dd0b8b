//! A scripted incident, recorded by a real hub — on the embedded log, and on NATS — with its
//! clock set by the test (`serve --test-clock`), so every time is exact: a staged rollout whose staging stage is
//! approved too early — the staging cluster reported the new Deployment available, then it
//! crash-loops (a bad image) — so production gets it too, and a production cluster goes silent
//! for a while.
//! The log is exported, imported into a fresh data directory, and each `flotilla replay`
//! command answers what an on-call engineer asks; the answers are compared with the files in
//! `tests/fixtures/incident/` (set `UPDATE_INCIDENT=1` to rewrite them after a reviewed change).

use std::path::{Path, PathBuf};

use flotilla_adapters::manifests::read_documents;
use flotilla_eventstore::nats_test_server::NatsTestServer;
use flotilla_tests::support::{HubProcess, fixture, run_ok, stdout};
use serde_json::{Value, json};

const START: &str = "2026-03-12T23:00:00Z";

fn binary() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_flotilla-e2e"))
}

/// Events with fixed ids, so uids derived from them are the same on every run.
struct Script<'a> {
    hub: &'a HubProcess,
    next_id: u128,
}

impl Script<'_> {
    fn post(&mut self, mut events: Vec<Value>) -> Result<(), String> {
        for event in &mut events {
            self.next_id += 1;
            let id =
                uuid::Uuid::from_u128(0x0190_0000_0000_7000_8000_0000_0000_0000 + self.next_id);
            event["id"] = json!(id.to_string());
            event["source"] = json!(event["source"].as_str().unwrap_or("oncall"));
        }
        let answers = self.hub.post_events(&Value::Array(events))?;
        assert!(!answers.to_string().contains("Rejected"), "{answers}");
        Ok(())
    }

    fn apply_file(&mut self, name: &str) -> Result<(), String> {
        let path = fixture(name);
        let text = std::fs::read_to_string(&path).map_err(|e| e.to_string())?;
        let documents = read_documents(&path, &text).map_err(|e| e.to_string())?;
        let events = documents
            .into_iter()
            .map(|d| json!({"type": "apply", "manifest": d.value, "source": "cli"}))
            .collect();
        self.post(events)
    }

    fn beat(&mut self, clusters: &[&str]) -> Result<(), String> {
        let events = clusters
            .iter()
            .map(|c| json!({"type": "heartbeat", "cluster": c, "source": format!("agent/{c}")}))
            .collect();
        self.post(events)
    }

    fn report(&mut self, cluster: &str, available: bool, why: &str) -> Result<(), String> {
        let mut report = json!({"type": "report", "cluster": cluster, "placement": "shop",
            "resourceIndex": 0, "applied": true, "available": available,
            "source": format!("agent/{cluster}")});
        if !available {
            report["message"] = json!(why);
            report["failedManifests"] = json!([{"group": "apps", "version": "v1",
                "kind": "Deployment", "namespace": "shop", "name": "shop-web",
                "condition": "Available", "message": why}]);
        }
        self.post(vec![report])
    }

    fn at(&self, seconds: i64) -> Result<(), String> {
        self.hub.set_clock(START, seconds)
    }
}

/// Records the incident with a hub on `data`, with `backend` options (none: the embedded log).
fn record_incident(data: &Path, backend: &[&str]) -> Result<(), String> {
    let options = [&["--test-clock", START][..], backend].concat();
    let hub = HubProcess::start(&binary(), data, &options)?;
    let mut script = Script {
        hub: &hub,
        next_id: 0,
    };
    script.apply_file("incident/fleet.yaml")?;
    script.beat(&["member-1", "member-2", "member-3"])?;
    script.at(60)?;
    script.apply_file("agents-run.yaml")?;
    let run = json!({"apiVersion": "placement.kubernetes-fleet.io/v1beta1",
        "kind": "ClusterStagedUpdateRun", "metadata": {"name": "shop-run"},
        "spec": {"placementName": "shop", "stagedRolloutStrategyName": "shop-strategy",
                 "state": "Run"}});
    script.post(vec![
        json!({"type": "apply", "manifest": run, "source": "cli"}),
    ])?;
    script.at(61)?;
    script.report("member-1", true, "")?;
    // Approved one second after staging looked healthy: too early.
    script.at(62)?;
    script.post(vec![
        json!({"type": "approve", "name": "shop-run-after-staging", "source": "cli"}),
    ])?;
    script.at(90)?;
    script.report(
        "member-1",
        false,
        "Back-off restarting failed container web (CrashLoopBackOff)",
    )?;
    script.at(91)?;
    script.report(
        "member-2",
        false,
        "Back-off restarting failed container web (CrashLoopBackOff)",
    )?;
    // member-3 goes silent; the others keep beating (every 60 s; 5 periods without one is a
    // timeout).
    script.at(240)?;
    script.beat(&["member-1", "member-2"])?;
    script.at(310)?;
    // The hub's clock ticks on its own once member-3's heartbeat deadline has passed.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while std::time::Instant::now() < deadline {
        let unhealthy = hub
            .cli(&["get", "membercluster", "member-3", "-o", "json"])
            .map(|o| stdout(&o).contains("HeartbeatTimeout"))?;
        if unhealthy {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    // member-3's agent comes back: healthy again, so "member-3 unhealthy" turned false again.
    script.at(330)?;
    script.beat(&["member-3"])?;
    hub.stop()
}

fn replay(args: &[&str]) -> Result<String, String> {
    run_ok(&binary(), &[&["replay"][..], args].concat())
}

/// Compares `actual` with the expected file (or rewrites it under `UPDATE_INCIDENT=1`).
fn expect(name: &str, actual: &str) -> Result<(), String> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/incident")
        .join(name);
    if std::env::var_os("UPDATE_INCIDENT").is_some() {
        return std::fs::write(&path, actual).map_err(|e| e.to_string());
    }
    let expected =
        std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    assert_eq!(actual, expected, "{} differs", path.display());
    Ok(())
}

#[test]
fn an_incident_recorded_on_the_embedded_log_is_exported_imported_and_explained()
-> Result<(), String> {
    let scratch = tempfile::tempdir().map_err(|e| e.to_string())?;
    let recorded = scratch.path().join("recorded");
    record_incident(&recorded, &[])?;
    let source = recorded.display().to_string();
    answer_from_an_import(scratch.path(), &["--data", &source])
}

#[test]
fn an_incident_recorded_on_nats_is_exported_imported_and_explained() -> Result<(), String> {
    let nats = NatsTestServer::start().map_err(|e| e.to_string())?;
    let url = nats.url();
    let scratch = tempfile::tempdir().map_err(|e| e.to_string())?;
    record_incident(&scratch.path().join("hub"), &["--nats", &url])?;
    // The same answers as from the embedded log: the same files.
    answer_from_an_import(scratch.path(), &["--nats", &url])
}

/// The engineer without the hub's disk: every answer through the hub's API
/// (`replay --server URL --token FILE`), the same files; a namespace token may not read the
/// whole log.
#[test]
fn the_incident_is_answered_through_a_hubs_api() -> Result<(), String> {
    let scratch = tempfile::tempdir().map_err(|e| e.to_string())?;
    let data = scratch.path().join("hub");
    record_incident(&data, &[])?;
    let tokens = scratch.path().join("tokens.yaml");
    std::fs::write(
        &tokens,
        "tokens:\n\
         - {name: oncall, token: oncall-token-0123456789, role: admin}\n\
         - {name: shop-team, token: shop-token-0123456789, role: namespace, namespaces: [shop]}\n",
    )
    .map_err(|e| e.to_string())?;
    let admin = scratch.path().join("oncall.token");
    let team = scratch.path().join("team.token");
    std::fs::write(&admin, "oncall-token-0123456789\n").map_err(|e| e.to_string())?;
    std::fs::write(&team, "shop-token-0123456789\n").map_err(|e| e.to_string())?;
    // The hub's test clock stands before the log's last input, so it appends no tick: the log
    // it serves is the one recorded.
    let tokens_arg = tokens.display().to_string();
    let hub = HubProcess::start(
        &binary(),
        &data,
        &["--test-clock", START, "--tokens", &tokens_arg],
    )?;
    let admin_arg = admin.display().to_string();
    let server = ["--server", hub.url.as_str(), "--token", admin_arg.as_str()];
    answer_with(|args: &[&str]| replay(&[&server[..], args].concat()))?;
    let team_arg = team.display().to_string();
    let refused = std::process::Command::new(binary())
        .args([
            "replay", "--server", &hub.url, "--token", &team_arg, "verify",
        ])
        .output()
        .map_err(|e| e.to_string())?;
    let said = String::from_utf8_lossy(&refused.stderr);
    assert!(!refused.status.success(), "a namespace token read the log");
    assert!(said.contains("cannot read /v1/log/export"), "{said}");
    hub.stop()
}

/// Exports the recorded log from `source`, imports it into a fresh data directory, and checks
/// each command's answer there.
fn answer_from_an_import(scratch: &Path, source: &[&str]) -> Result<(), String> {
    let export = scratch.join("incident.jsonl").display().to_string();
    replay(&[source, &["export", "--to", &export][..]].concat())?;
    let copy = scratch.join("copy").display().to_string();
    replay(&["import", &export, "--data", &copy])?;
    let data = ["--data", copy.as_str()];
    answer_with(|args: &[&str]| replay(&[&data[..], args].concat()))
}

/// Checks each command's answer, asked through `ask` (the replay arguments after the source).
fn answer_with(ask: impl Fn(&[&str]) -> Result<String, String>) -> Result<(), String> {
    expect("verify.txt", &ask(&["verify"])?)?;
    // Who had what when production started?
    expect(
        "state-crb.txt",
        &ask(&["state", "--at", "2026-03-12T23:01:02Z", "crb", "-o", "yaml"])?,
    )?;
    // What touched member-2?
    expect(
        "timeline-member-2.txt",
        &ask(&["timeline", "--cluster", "member-2"])?,
    )?;
    // Who approved what, and what did member-3's own inputs decide?
    expect(
        "timeline-approvals.txt",
        &ask(&["timeline", "--type", "approve"])?,
    )?;
    expect(
        "timeline-member-3-decided.txt",
        &ask(&["timeline", "--actor", "agent/member-3", "--decided"])?,
    )?;
    // What changed between the approval and the end?
    expect(
        "diff.txt",
        &ask(&["diff", "2026-03-12T23:01:02Z", "2026-03-12T23:05:10Z"])?,
    )?;
    // The member clusters alone, without the bindings' and the placement's status churn.
    expect(
        "diff-members.txt",
        &ask(&[
            "diff",
            "2026-03-12T23:01:02Z",
            "2026-03-12T23:05:10Z",
            "--kind",
            "MemberCluster",
        ])?,
    )?;
    // Why does member-2 run the bad version?
    expect(
        "explain-member-2.txt",
        &ask(&["explain", "--placement", "shop", "--cluster", "member-2"])?,
    )?;
    // Why does the rollout wait?
    expect(
        "explain-shop.txt",
        &ask(&["explain", "--placement", "shop"])?,
    )?;
    // When did member-2 first get the new version?
    expect(
        "bisect-member-2.txt",
        &ask(&["bisect", "--until", "cluster-at-index:member-2:shop:0"])?,
    )?;
    // When did member-3 first go unhealthy, or member-1's Deployment first fail?
    expect(
        "scan.txt",
        &ask(&[
            "bisect",
            "--scan",
            "--until",
            "object:MemberCluster/member-3:/status/conditions/2/status==False",
            "--until",
            "object:ClusterResourceBinding/shop-member-1-2d2d812e:/status/failedPlacements exists",
        ])?,
    )?;
    // When did member-3 go unhealthy? It is healthy again at the end: the bisection finds it
    // false at every probe, scans, and names the deadline that passed, not the heartbeat of
    // another cluster that happened to be folded next.
    expect(
        "bisect-member-3.txt",
        &ask(&[
            "bisect",
            "--until",
            "condition:MemberCluster/member-3:Healthy=False",
        ])?,
    )?;
    // What if staging had soaked for two minutes before its approval?
    let slower = fixture("incident/slower-strategy.yaml");
    expect(
        "what-if.txt",
        &ask(&["what-if", "--from", "12", "--apply", &slower])?,
    )?;
    Ok(())
}
