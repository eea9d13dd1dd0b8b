//! The example alerting rules (`docs/alerts/flotilla-rules.yml`) load in Prometheus: `promtool
//! check rules` accepts them. And every flotilla series they use is one `docs/observability.md`
//! documents, so a renamed series cannot leave the rules alerting on nothing.
//!
//! `promtool` comes with Debian's `prometheus` package (`scripts/test.sh` installs it); without
//! it the test fails rather than passing unchecked.

use std::path::PathBuf;
use std::process::Command;

fn docs() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../docs")
}

fn rules() -> PathBuf {
    docs().join("alerts/flotilla-rules.yml")
}

#[test]
fn promtool_accepts_the_example_rules() -> Result<(), String> {
    let output = match Command::new("promtool")
        .args(["check", "rules"])
        .arg(rules())
        .output()
    {
        Ok(output) => output,
        Err(error) => {
            return Err(format!(
                "cannot run promtool ({error}): install Debian's `prometheus` package \
                 (scripts/test.sh does) to check docs/alerts/flotilla-rules.yml"
            ));
        }
    };
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(output.status.success(), "promtool check rules: {text}");
    assert!(text.contains("SUCCESS"), "promtool check rules: {text}");
    Ok(())
}

#[test]
fn the_rules_use_only_documented_series() -> Result<(), String> {
    let rules = std::fs::read_to_string(rules()).map_err(|e| e.to_string())?;
    let table =
        std::fs::read_to_string(docs().join("observability.md")).map_err(|e| e.to_string())?;
    let mut used = Vec::new();
    for (start, _) in rules.match_indices("flotilla_") {
        let name: String = rules[start..]
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        if !used.contains(&name) {
            used.push(name);
        }
    }
    assert!(used.len() > 5, "the rules use several series: {used:?}");
    for name in &used {
        assert!(
            table.contains(&format!("| `{name}` |")),
            "{name} is used by the rules but has no row in docs/observability.md"
        );
    }
    Ok(())
}
