//! The core's modules stand on floors: a module imports only modules of lower floors, so the
//! core reads one way — times as text, names and revisions at the bottom, the vocabulary of inputs and
//! decisions above them, the aggregates above that, and the passes that drive and explain them
//! on top (`docs/architecture.md`). This test reads every `crate::…` path in the library's
//! source (comments and `#[cfg(test)]` modules left out) and fails on an import that runs back
//! up, on an import between two modules of one floor, and on a module with no floor.
//!
//! An import that must run back up is listed with why in [`BACK_EDGES`] (none is today: each
//! aggregate's verbs take its own store, and what moves several aggregates stands on the
//! coordination floor); the test fails as well when a listed one is gone, so the list only
//! shrinks.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

/// The floors, from the ground up. A module imports only modules of lower floors.
const FLOORS: &[(&str, &[&str])] = &[
    ("text", &["time_text"]),
    ("names", &["condition", "derived", "model", "principal"]),
    (
        "vocabulary",
        &["growth", "catalog", "availability", "event", "decision"],
    ),
    ("records", &["kind_scope", "change", "codec", "work_status"]),
    ("revisions", &["revision"]),
    ("placements", &["placement"]),
    ("members", &["member"]),
    ("scheduler", &["scheduler"]),
    ("overrides", &["overrides"]),
    ("rollouts", &["rollout"]),
    ("staged runs", &["staged"]),
    ("evictions", &["eviction"]),
    ("the state", &["state"]),
    ("coordination", &["coordinate"]),
    ("inputs", &["manifest", "report"]),
    ("objects", &["objects"]),
    ("passes", &["fold", "query", "invariants", "wire"]),
];

/// The imports that still run back up, and why (none).
const BACK_EDGES: &[(&str, &str, &str)] = &[];

fn floor_of(module: &str) -> Option<usize> {
    FLOORS
        .iter()
        .position(|(_, modules)| modules.contains(&module))
}

fn source_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else {
        panic!("cannot read {}", dir.display());
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            if path.file_name().is_some_and(|n| n != "tests") {
                source_files(&path, out);
            }
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The library code of a file: comments dropped, and everything from its first
/// `#[cfg(test)] mod` on (test modules stand at the end of a file).
fn library_code(text: &str) -> String {
    let end = text
        .match_indices("#[cfg(test)]")
        .map(|(at, marker)| at + marker.len())
        .find(|&after| text[after..].trim_start().starts_with("mod "))
        .map_or(text.len(), |after| after - "#[cfg(test)]".len());
    text[..end]
        .lines()
        .map(|line| line.split("//").next().unwrap_or_default())
        .collect::<Vec<_>>()
        .join("\n")
}

/// The top-level modules a piece of code names through `crate::`: `crate::a::b`,
/// `crate::{a, b::c}`.
fn named_modules(code: &str) -> Vec<String> {
    let mut names = Vec::new();
    for (at, _) in code.match_indices("crate::") {
        let rest = &code[at + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let mut depth = 0;
            let mut item = String::new();
            for c in group.chars() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => break,
                    '}' => depth -= 1,
                    ',' if depth == 0 => {
                        names.push(first_segment(&item));
                        item.clear();
                        continue;
                    }
                    _ => {}
                }
                item.push(c);
            }
            names.push(first_segment(&item));
        } else {
            names.push(first_segment(rest));
        }
    }
    names.retain(|n| !n.is_empty());
    names
}

fn first_segment(path: &str) -> String {
    path.trim()
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
        .collect()
}

/// Every `crate::` import of a library module: (importer, imported) → the files that import.
fn imports(src: &Path) -> BTreeMap<(String, String), Vec<String>> {
    let mut files = Vec::new();
    source_files(src, &mut files);
    let mut found: BTreeMap<(String, String), Vec<String>> = BTreeMap::new();
    for file in files {
        let relative = file.strip_prefix(src).unwrap_or(&file);
        let text = relative.to_string_lossy().replace('\\', "/");
        let top = text
            .split('/')
            .next()
            .unwrap_or_default()
            .trim_end_matches(".rs");
        if top == "lib" || text.ends_with("tests.rs") {
            continue;
        }
        let Ok(source) = fs::read_to_string(&file) else {
            panic!("cannot read {}", file.display());
        };
        for module in named_modules(&library_code(&source)) {
            if module != top
                && (src.join(&module).is_dir() || src.join(format!("{module}.rs")).is_file())
            {
                found
                    .entry((top.to_owned(), module))
                    .or_default()
                    .push(text.clone());
            }
        }
    }
    found
}

/// What breaks the floors, one line each.
fn violations(imports: &BTreeMap<(String, String), Vec<String>>) -> Vec<String> {
    let mut wrong = Vec::new();
    for ((from, to), files) in imports {
        let (Some(low), Some(high)) = (floor_of(to), floor_of(from)) else {
            for module in [from, to] {
                if floor_of(module).is_none() {
                    wrong.push(format!(
                        "module `{module}` stands on no floor: add it to FLOORS"
                    ));
                }
            }
            continue;
        };
        let known = BACK_EDGES.iter().any(|(f, t, _)| f == from && t == to);
        if low >= high && !known {
            wrong.push(format!(
                "`{from}` ({}) imports `{to}` ({}) in {}",
                FLOORS[high].0,
                FLOORS[low].0,
                files.join(", ")
            ));
        }
    }
    for (from, to, why) in BACK_EDGES {
        if !imports.contains_key(&((*from).to_owned(), (*to).to_owned())) {
            wrong.push(format!(
                "`{from}` no longer imports `{to}` ({why}): strike it from BACK_EDGES"
            ));
        }
    }
    wrong.sort();
    wrong.dedup();
    wrong
}

#[test]
fn every_core_module_imports_only_lower_floors() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let found = imports(&src);
    assert!(
        found.len() > 50,
        "the reader found only {} imports: it no longer reads the source",
        found.len()
    );
    let wrong = violations(&found);
    assert!(
        wrong.is_empty(),
        "imports against the floors:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn an_import_that_runs_back_up_is_caught() {
    let code = library_code(
        "use crate::{event::Input, fold::step};\n// crate::wire in a comment\nfn f() { crate::state::State::default(); }\n#[cfg(test)]\nmod tests { use crate::query; }",
    );
    assert_eq!(named_modules(&code), ["event", "fold", "state"]);
    let mut imports = BTreeMap::new();
    imports.insert(
        ("model".to_owned(), "fold".to_owned()),
        vec!["model/x.rs".to_owned()],
    );
    imports.insert(
        ("event".to_owned(), "decision".to_owned()),
        vec!["event.rs".to_owned()],
    );
    imports.insert(
        ("rollout".to_owned(), "placement".to_owned()),
        vec!["rollout/mod.rs".to_owned()],
    );
    imports.insert(
        ("nowhere".to_owned(), "model".to_owned()),
        vec!["nowhere.rs".to_owned()],
    );
    for (from, to, _) in BACK_EDGES {
        imports.insert(((*from).to_owned(), (*to).to_owned()), vec![]);
    }
    let wrong = violations(&imports);
    assert_eq!(wrong.len(), 3, "{wrong:?}");
    assert!(
        wrong
            .iter()
            .any(|w| w.starts_with("`model` (names) imports `fold` (passes)"))
    );
    assert!(
        wrong
            .iter()
            .any(|w| w.starts_with("`event` (vocabulary) imports `decision`"))
    );
    assert!(
        wrong
            .iter()
            .any(|w| w.contains("`nowhere` stands on no floor"))
    );
    // A listed edge that is gone is caught too (while any is listed).
    if let Some((from, to, _)) = BACK_EDGES.first() {
        imports.remove(&((*from).to_owned(), (*to).to_owned()));
        let wrong = violations(&imports);
        assert!(
            wrong
                .iter()
                .any(|w| w.contains("strike it from BACK_EDGES")),
            "{wrong:?}"
        );
    }
}
