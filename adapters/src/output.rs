//! How the command line prints: the `-o/--output` formats and the kubectl spellings of an
//! object's name. The verbs (`commands`, `kube_commands`, `replay_cmd`) and the argument
//! definitions (`cli`) all use these, so they live below all of them.

use std::io::Write;

use clap::ValueEnum;
use serde_json::Value;

/// Output formats of `get`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Output {
    /// Objects as JSON, in KubeFleet's shape.
    Json,
    /// Objects as YAML, in KubeFleet's shape.
    Yaml,
    /// A table with more columns.
    Wide,
}

/// Output formats of commands that print records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum RecordOutput {
    /// Human text.
    Text,
    /// JSON.
    Json,
    /// YAML.
    Yaml,
}

/// kubectl's `kind.group/name` spelling.
pub fn object_name(kind: &str, group: &str, name: &str) -> String {
    let kind = kind.to_lowercase();
    if group.is_empty() {
        format!("{kind}/{name}")
    } else {
        format!("{kind}.{group}/{name}")
    }
}

/// Prints a JSON value as YAML or pretty JSON.
pub fn print_value(value: &Value, output: Output) -> anyhow::Result<()> {
    let text = match output {
        Output::Json => serde_json::to_string_pretty(value)? + "\n",
        Output::Yaml | Output::Wide => serde_saphyr::to_string(value)?,
    };
    std::io::stdout().write_all(text.as_bytes())?;
    Ok(())
}
