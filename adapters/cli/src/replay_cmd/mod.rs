//! `flotilla replay`: ask a log what happened. The log is read where it is — a redb data
//! directory opened read-only (also while a hub writes it), with the archive of what its
//! retention window removed (`--archive DIR`), a NATS stream, an exported file
//! (rebuilt into a temporary directory), or a hub's API (`--server`: its export, rebuilt the
//! same way) — and never written. See `docs/replay.md`.

pub mod args;
mod info;

use std::io::Write;

use anyhow::{Context, bail};
use flotilla_eventstore::LogReader;
use flotilla_eventstore::nats_log::{NatsLog, NatsOptions};
use flotilla_eventstore::redb_log::archive::{ArchiveInfo, ArchivedLog};
use flotilla_eventstore::redb_log::reader::RedbReader;
use flotilla_replay::{Folder, PlacementRef, Point, RunRef, fold_to, resolve};
use serde_json::{Value, json};

pub use args::{ReplayArgs, ReplayCommand, SourceArgs};

use flotilla_adapters::client::Client;
use flotilla_adapters::output::{Output, RecordOutput, print_value};
use flotilla_adapters::store::LOG_FILE;
use flotilla_hub::serve::DEFAULT_DATA_DIR;

/// Runs one `replay` command.
///
/// # Errors
/// When the log cannot be opened or read, or the command's arguments are wrong.
pub async fn run(args: ReplayArgs, remote: Option<&Client>) -> anyhow::Result<()> {
    if let ReplayCommand::Import { export: file } = &args.command {
        let data = args
            .source
            .data
            .clone()
            .context("replay import FILE --data DIR: name the directory to rebuild into")?;
        let (records, batches) = flotilla_adapters::log_export::import(file, &data).await?;
        println!(
            "imported {records} records and {batches} decision batches into {}",
            data.display()
        );
        return Ok(());
    }
    let source = &args.source;
    if let Some(url) = &source.nats {
        let connection = flotilla_adapters::nats_auth::NatsConnection {
            creds: source.nats_creds.clone(),
            ..Default::default()
        };
        let client = connection.connect(url, "flotilla-replay").await?;
        let log = NatsLog::with_client(client, NatsOptions::default()).await?;
        if let ReplayCommand::Info { output } = args.command {
            let info = log.info().await?;
            return print_report(&info, &info::nats_text(url, &info), output);
        }
        return execute(&log, args.command).await;
    }
    if let Some(file) = &source.file {
        let scratch = tempfile::tempdir().context("creating a scratch directory")?;
        flotilla_adapters::log_export::import(file, scratch.path()).await?;
        let log = RedbReader::open(&scratch.path().join(LOG_FILE))?;
        return execute(&log, args.command).await;
    }
    if let (Some(client), None) = (remote, &source.data) {
        let scratch = tempfile::tempdir().context("creating a scratch directory")?;
        let log = fetch_remote(client, scratch.path()).await?;
        return execute(&log, args.command).await;
    }
    let data = source
        .data
        .clone()
        .unwrap_or_else(|| DEFAULT_DATA_DIR.into());
    let path = data.join(LOG_FILE);
    if !path.exists() {
        bail!("no flotilla log at {}", path.display());
    }
    let log = RedbReader::open(&path)?;
    if let Some(archive) = &source.archive {
        return with_archive(archive, &path, log, args.command).await;
    }
    if let ReplayCommand::Info { output } = args.command {
        let info = log.info().await?;
        return print_report(&info, &info::text(&path, &info), output);
    }
    execute(&log, args.command).await
}

/// A command on a data directory's log read through its archive (`--archive DIR`).
async fn with_archive(
    archive: &std::path::Path,
    path: &std::path::Path,
    log: RedbReader,
    command: ReplayCommand,
) -> anyhow::Result<()> {
    // A hub with `--archive` makes the directory at its first cut: before one, the log
    // holds every input and there is nothing to archive.
    if !archive.is_dir() && log.base_seq().await? > 0 {
        bail!(
            "no archive at {}, and the log's retention window removed inputs: name the \
             directory its hub archived them to (serve --archive DIR)",
            archive.display()
        );
    }
    if let ReplayCommand::Info { output } = command {
        let (replays_from, problem) = match ArchivedLog::open(archive, log.clone()).await {
            Ok(archived) => (Some(archived.base_seq().await?), None),
            Err(error) => (None, Some(error.to_string())),
        };
        let report = info::Archived {
            log: log.info().await?,
            archive: info::ArchiveReport {
                info: ArchiveInfo::read(archive)?,
                replays_from,
                problem,
            },
        };
        let text = info::archived_text(path, &report);
        return print_report(&report, &text, output);
    }
    let log = ArchivedLog::open(archive, log).await.with_context(|| {
        format!(
            "reading {} through the archive {}",
            path.display(),
            archive.display()
        )
    })?;
    execute(&log, command).await
}

/// Rebuilds a hub's log, read through its API as `replay export` would write it, in a
/// scratch directory: every verb then runs as it does on a data directory.
async fn fetch_remote(client: &Client, scratch: &std::path::Path) -> anyhow::Result<RedbReader> {
    let file = scratch.join("export.jsonl");
    client
        .get_to_file("/v1/log/export", &file)
        .await
        .context("reading the hub's log (GET /v1/log/export; an admin token reads it)")?;
    let data = scratch.join("log");
    flotilla_adapters::log_export::import(&file, &data).await?;
    Ok(RedbReader::open(&data.join(LOG_FILE))?)
}

/// One command against an open log.
async fn execute<L: LogReader>(log: &L, command: ReplayCommand) -> anyhow::Result<()> {
    match command {
        ReplayCommand::State {
            at,
            kind,
            name,
            namespace,
            output,
        } => {
            let folder = state_at(log, &at).await?;
            let printed = print_state(
                &folder,
                kind.as_deref(),
                name.as_deref(),
                namespace.as_deref(),
                output,
            );
            // The process ends next: its exit returns the state's memory at once, where
            // dropping a fleet's state frees it node by node (a tenth of a seek's time).
            std::mem::forget(folder);
            printed
        }
        ReplayCommand::Verify { strict } => verify(log, strict).await,
        ReplayCommand::Export { to } => {
            let (records, batches) = flotilla_adapters::log_export::export(log, &to).await?;
            println!(
                "exported {records} records and {batches} decision batches to {}",
                to.display()
            );
            Ok(())
        }
        ReplayCommand::Seek { at, output } => {
            let point: Point = at.parse()?;
            let seq = resolve(log, point).await?;
            match output {
                RecordOutput::Text => println!("{seq}"),
                _ => println!("{}", json!({"at": at, "seq": seq})),
            }
            Ok(())
        }
        ReplayCommand::Diff {
            a,
            b,
            kinds,
            output,
        } => {
            let mut diff = flotilla_replay::diff_points(log, a.parse()?, b.parse()?).await?;
            diff.diff.retain_kinds(&kinds);
            print_report(&diff, &diff.text(), output)
        }
        ReplayCommand::Timeline {
            placement,
            cluster,
            run,
            namespace,
            after,
            until,
            sift,
            output,
        } => {
            let filter = flotilla_replay::TimelineFilter {
                placement: placement.map(|name| PlacementRef {
                    namespace: namespace.clone(),
                    name,
                }),
                cluster,
                run: run.map(|name| RunRef {
                    namespace: namespace.clone(),
                    name,
                }),
            };
            let after = after.map(|p| p.parse()).transpose()?;
            let until = until.map(|p| p.parse()).transpose()?;
            let timeline = flotilla_replay::timeline(log, &filter, after, until)
                .await?
                .sifted(&sift.into());
            print_report(&timeline, &timeline.text(), output)
        }
        ReplayCommand::Explain {
            placement,
            cluster,
            namespace,
            at,
            min_soak,
            output,
        } => {
            let placement = PlacementRef {
                namespace,
                name: placement,
            };
            let at = at.map(|p| p.parse()).transpose()?;
            match cluster {
                Some(cluster) => {
                    let mut why =
                        flotilla_replay::explain_cluster(log, &cluster, &placement, at).await?;
                    why.flag_soak(min_soak);
                    print_report(&why, &why.text(), output)
                }
                None => {
                    let why = flotilla_replay::explain_placement(log, &placement, at).await?;
                    print_report(&why, &why.text(), output)
                }
            }
        }
        ReplayCommand::Bisect {
            until,
            scan,
            output,
        } => {
            let predicates = until
                .iter()
                .map(|text| text.parse::<flotilla_replay::Predicate>())
                .collect::<Result<Vec<_>, _>>()?;
            let last = log.last_seq().await?;
            let search = match (scan, predicates.as_slice()) {
                (true, _) => flotilla_replay::scan(log, &predicates, 1..=last).await?,
                (false, [one]) => flotilla_replay::bisect(log, one, 1..=last).await?,
                (false, _) => bail!("bisect takes one --until (several need --scan)"),
            };
            print_report(&search, &search.to_string(), output)
        }
        ReplayCommand::WhatIf {
            from,
            apply,
            output,
        } => {
            let text = std::fs::read_to_string(&apply)
                .with_context(|| format!("reading {}", apply.display()))?;
            let shown = apply.display().to_string();
            let objects = flotilla_adapters::manifests::read_documents(&shown, &text)?
                .into_iter()
                .map(|document| document.value)
                .collect();
            let fork = flotilla_replay::what_if(log, from, objects).await?;
            print_report(&fork, &fork.to_string(), output)
        }
        ReplayCommand::Import { .. } => bail!("import takes no source"),
        ReplayCommand::Info { .. } => {
            bail!("replay info reads a data directory (--data DIR) or a NATS server (--nats URL)")
        }
    }
}

/// Prints a report as its text, or as JSON / YAML.
fn print_report<T: serde::Serialize>(
    report: &T,
    text: &str,
    output: RecordOutput,
) -> anyhow::Result<()> {
    let rendered = match output {
        RecordOutput::Text => text.to_owned(),
        RecordOutput::Json => serde_json::to_string_pretty(report)? + "\n",
        RecordOutput::Yaml => serde_saphyr::to_string(report)?,
    };
    let rendered = if rendered.ends_with('\n') {
        rendered
    } else {
        rendered + "\n"
    };
    std::io::stdout().write_all(rendered.as_bytes())?;
    Ok(())
}

/// The folded state at a point given as text.
///
/// # Errors
/// When the point is malformed or the log cannot be folded there.
pub async fn state_at<L: LogReader>(log: &L, at: &str) -> anyhow::Result<Folder> {
    let point: Point = at.parse()?;
    let seq = resolve(log, point).await?;
    Ok(fold_to(log, seq).await?)
}

/// Prints objects of a folded state as `get` does.
fn print_state(
    folder: &Folder,
    kind: Option<&str>,
    name: Option<&str>,
    namespace: Option<&str>,
    output: Option<Output>,
) -> anyhow::Result<()> {
    let state = &folder.state;
    let Some(kind) = kind else {
        let items = flotilla_projections::render_all(state);
        return print_value(&list_of(items), output.unwrap_or(Output::Yaml));
    };
    let info = flotilla_projections::resolve_kind(state, kind)
        .with_context(|| format!("the log at {} has no resource type {kind:?}", folder.seq))?;
    let text = match (output, name) {
        (None | Some(Output::Wide), None) => {
            flotilla_projections::table(state, &info, namespace, output.is_some())
        }
        (None | Some(Output::Wide), Some(name)) => {
            flotilla_projections::table_named(state, &info, namespace, name, output.is_some())
                .with_context(|| format!("{} {name:?} not found at {}", info.kind, folder.seq))?
        }
        (Some(format), Some(name)) => {
            let key = info.key(namespace, name);
            let object = flotilla_projections::render_object(state, &key)
                .with_context(|| format!("{} {name:?} not found at {}", info.kind, folder.seq))?;
            return print_value(&object, format);
        }
        (Some(format), None) => {
            let items = flotilla_projections::list(state, &info, namespace);
            return print_value(&list_of(items), format);
        }
    };
    print!("{text}");
    Ok(())
}

fn list_of(items: Vec<Value>) -> Value {
    json!({"apiVersion": "v1", "items": items, "kind": "List", "metadata": {"resourceVersion": ""}})
}

/// `replay verify`: re-fold and compare with the recorded decisions and checkpoint hashes.
async fn verify<L: LogReader>(log: &L, strict: bool) -> anyhow::Result<()> {
    let verification = match flotilla_replay::verify(log).await {
        Ok(verification) => verification,
        Err(
            error @ (flotilla_replay::ReplayError::Diverged(_)
            | flotilla_replay::ReplayError::HashDiverged(_)),
        ) => bail!("the log diverges from this build: {error}"),
        Err(error) => return Err(error.into()),
    };
    if let (count, Some(newest)) = verification.checkpoints {
        println!("{count} checkpoint(s), the newest at {newest}: state hashes as recorded");
    }
    for warning in &verification.warnings {
        println!("warning: {warning}");
    }
    let first = log.base_seq().await? + 1;
    println!(
        "verified inputs {first}..={}: decisions as recorded{}",
        verification.checked,
        if verification.warnings_total == 0 {
            String::new()
        } else {
            format!(
                ", except {} recorded under an older decision version",
                verification.warnings_total
            )
        }
    );
    if strict && verification.warnings_total > 0 {
        bail!("{} differences (--strict)", verification.warnings_total);
    }
    Ok(())
}
