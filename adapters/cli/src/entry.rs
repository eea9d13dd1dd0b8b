//! The `flotilla` command: parse arguments, run, exit with a status.

use crate::cli::{Cli, Command, RolloutCommand, RunCommand, ScenarioCommand};
use crate::{commands, demo};
use clap::Parser;
use flotilla_adapters::client::{Client, DEFAULT_SERVER};
use flotilla_hub::runtime::HubConfig;
use flotilla_hub::serve::{ServeOptions, serve};
use std::time::Duration;
use tracing_subscriber::EnvFilter;

/// Parses the command line, runs the command, and maps the outcome to an exit code.
#[must_use]
pub fn main() -> std::process::ExitCode {
    flotilla_adapters::tls::install_crypto_provider();
    quiet_on_closed_stdout();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("error: cannot start the async runtime: {error}");
            return std::process::ExitCode::FAILURE;
        }
    };
    runtime.block_on(main_async())
}

/// A reader that stops reading (`flotilla events | head`) ends the command quietly, with the
/// status a shell gives a process killed by SIGPIPE (141), as other command-line tools end; Rust
/// ignores SIGPIPE, so printing to the closed pipe panics instead. Every other panic is reported
/// as before.
fn quiet_on_closed_stdout() {
    let report = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let message = info
            .payload()
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| info.payload().downcast_ref::<&str>().copied())
            .unwrap_or_default();
        if message.starts_with("failed printing to stdout") && message.contains("Broken pipe") {
            std::process::exit(141);
        }
        report(info);
    }));
}

async fn main_async() -> std::process::ExitCode {
    let _ = tracing_subscriber::fmt()
        .with_env_filter(
            EnvFilter::try_from_env("FLOTILLA_LOG").unwrap_or_else(|_| EnvFilter::new("warn")),
        )
        .with_writer(std::io::stderr)
        .try_init();
    let cli = Cli::parse();
    match run(cli).await {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(error) => match error.downcast_ref::<crate::progress::Unfinished>() {
            // The progress view printed the outcome and why already; only the code is left.
            Some(unfinished) => std::process::ExitCode::from(unfinished.exit_code),
            None => {
                eprintln!("error: {error:#}");
                std::process::ExitCode::FAILURE
            }
        },
    }
}

async fn run(cli: Cli) -> anyhow::Result<()> {
    let mut client = Client::new(cli.server.as_deref().unwrap_or(DEFAULT_SERVER));
    if let Some(ca) = &cli.ca_file {
        client = client.with_tls_roots(flotilla_adapters::tls::client_config(ca)?)?;
    }
    if let Some(path) = &cli.token_file {
        client = client.with_token(read_token(path)?);
    }
    match cli.command {
        Command::Serve(args) => {
            let hub = HubConfig {
                checkpoint_every: args.checkpoint_every,
                checkpoint_every_log_time: args
                    .retain
                    .0
                    .and_then(flotilla_hub::runtime::checkpoint_spacing_for),
                allow_divergence: args.allow_divergence,
                test_clock: args
                    .test_clock
                    .map(flotilla_hub::runtime::clock::TestClock::new),
                ..HubConfig::default()
            };
            serve(ServeOptions {
                data: args.data,
                retain: args.retain.0,
                archive: args.archive,
                nats: args.nats,
                nats_monitoring: args.nats_monitoring,
                nats_creds: args.nats_creds,
                nats_replicas: args.nats_replicas,
                role: if args.read_only {
                    flotilla_hub::standby::Role::ReadOnly
                } else {
                    flotilla_hub::standby::Role::Contend {
                        lease_ttl: std::time::Duration::from_secs(args.lease_seconds.max(1)),
                    }
                },
                listen: args.listen,
                tokens: args.tokens,
                tls: args.tls_cert.zip(args.tls_key),
                connections: flotilla_adapters::connections::ConnectionLimits {
                    max: args.max_connections.max(1),
                    per_ip: args.max_connections_per_ip.max(1),
                    header_timeout: std::time::Duration::from_secs(args.header_timeout_secs.max(1)),
                    body_timeout: std::time::Duration::from_secs(args.body_timeout_secs.max(1)),
                    watches_per_ip: args.max_watches_per_ip,
                },
                hub,
            })
            .await
        }
        Command::Apply { file, validate } => commands::apply(&client, &file, validate).await,
        Command::Delete {
            kind,
            name,
            namespace,
            file,
        } => commands::delete(&client, kind, name, namespace, file).await,
        Command::Patch {
            kind,
            name,
            namespace,
            patch_type,
            patch,
            subresource,
        } => {
            crate::kube_commands::patch(
                &client,
                &kind,
                &name,
                namespace.as_deref(),
                &patch_type,
                &patch,
                subresource.as_deref(),
            )
            .await
        }
        Command::Get {
            kind,
            name,
            namespace,
            output,
            cluster,
            watch,
        } => {
            if watch {
                let name = name.unwrap_or_default();
                return crate::progress::watch(&client, &kind, name, namespace).await;
            }
            let namespace = cluster.map(|c| format!("fleet-member-{c}")).or(namespace);
            commands::get(&client, &kind, name, namespace, output).await
        }
        Command::Describe {
            kind,
            name,
            namespace,
        } => commands::describe(&client, &kind, &name, namespace).await,
        Command::Rollout {
            command:
                RolloutCommand::Status {
                    placement,
                    namespace,
                    timeout,
                },
        } => crate::progress::rollout_status(&client, placement, namespace, timeout).await,
        Command::Approve {
            name,
            namespace,
            reason,
            message,
        } => commands::approve(&client, name, namespace, reason, message).await,
        Command::Drain {
            cluster,
            timeout_secs,
        } => Ok(crate::drain::drain(&client, &cluster, Duration::from_secs(timeout_secs)).await?),
        Command::Uncordon {
            cluster,
            timeout_secs,
        } => Ok(
            crate::drain::uncordon(&client, &cluster, Duration::from_secs(timeout_secs)).await?,
        ),
        Command::Run { command } => match command {
            RunCommand::Start { name, namespace } => {
                commands::set_run_state(&client, &name, namespace, "Run").await
            }
            RunCommand::Stop { name, namespace } => {
                commands::set_run_state(&client, &name, namespace, "Stop").await
            }
        },
        Command::Events {
            from,
            follow,
            output,
            filter,
        } => commands::events(&client, (from, follow), output, &filter).await,
        Command::Schema => commands::schema(),
        Command::Replay(args) => {
            let remote = cli.server.is_some().then_some(&client);
            crate::replay_cmd::run(args, remote).await
        }
        Command::AgentCreds {
            cluster,
            hub: _,
            out,
        } => agent_creds(cluster.as_deref(), &out),
        Command::Scenario {
            command: ScenarioCommand::Run { file, output },
        } => commands::scenario_run(&file, output).await,
        Command::Demo(args) => demo::run(args).await,
        Command::Simulate(args) => crate::loadgen::run(args).await,
        // Leaving and stopping both exit 0; the agent has said which.
        Command::Agent(args) => {
            let token = agent_token(cli.token_file.as_deref())?;
            flotilla_agent::run(args, token, cli.ca_file.clone())
                .await
                .map(|_| ())
                .map_err(Into::into)
        }
    }
}

/// `flotilla agent-creds`: writes a new nkey seed to `out` and prints its server entry.
fn agent_creds(cluster: Option<&str>, out: &std::path::Path) -> anyhow::Result<()> {
    let (seed, public) = flotilla_adapters::nats_auth::new_user()?;
    flotilla_adapters::nats_auth::write_seed(out, &seed)?;
    let options = flotilla_eventstore::nats_log::NatsOptions::default();
    let who = cluster.map_or_else(
        || "a flotilla hub".to_owned(),
        |c| format!("the agent of {c}"),
    );
    println!("# {who}: seed written to {}", out.display());
    println!(
        "{}",
        flotilla_adapters::nats_auth::user_entry(&public, cluster, &options)
    );
    Ok(())
}

/// The agent's bearer token, read from the global `--token` file when given.
fn agent_token(path: Option<&std::path::Path>) -> anyhow::Result<Option<String>> {
    path.map(read_token).transpose()
}

/// Reads a bearer token file: its content, surrounding whitespace trimmed. Errors never quote it.
fn read_token(path: &std::path::Path) -> anyhow::Result<String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| anyhow::anyhow!("cannot read the token file {}: {e}", path.display()))?;
    let token = text.trim();
    if token.is_empty() {
        anyhow::bail!("the token file {} is empty", path.display());
    }
    Ok(token.to_owned())
}
