//! The tokens file of `flotilla serve --tokens FILE` and the lookup of a presented bearer token.
//!
//! Only SHA-256 digests of the tokens are kept in memory. A presented token is hashed and
//! compared with every known digest in constant time (`subtle`), without stopping at a match, so
//! the time a lookup takes says nothing about how close a guess was. Errors never quote the
//! file's content: a token may be what a parser would have echoed.

use std::path::{Path, PathBuf};

use serde::Deserialize;
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

/// Most tokens one file may list.
pub const TOKENS_MAX: usize = 10_000;
/// Fewest bytes a token may have, so that a typo'd placeholder is not a credential.
pub const TOKEN_BYTES_MIN: usize = 16;

/// What a token may do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Role {
    /// Everything.
    Admin,
    /// A member cluster's agent: its own heartbeats, reports and leave, its own works.
    Agent {
        /// The member cluster's name.
        cluster: String,
    },
    /// An application team: namespaced objects in these namespaces.
    Namespace {
        /// The namespaces.
        namespaces: Vec<String>,
    },
}

/// A token that matched: its name (for messages and logs) and its role.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Grant {
    /// The entry's `name`, or `token-N` (its position, from 1) when it has none.
    pub name: String,
    /// What it may do.
    pub role: Role,
}

/// The known tokens, as digests.
#[derive(Debug, Clone)]
pub struct TokenSet {
    entries: Vec<([u8; 32], Grant)>,
}

/// Why a tokens file was refused.
#[derive(Debug, thiserror::Error)]
pub enum TokensError {
    /// The file could not be read.
    #[error("cannot read the tokens file {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// Cause.
        source: std::io::Error,
    },
    /// The file is not a tokens file (where, but not what: it may hold secrets).
    #[error("{path} is not a valid tokens file{at}; see docs/security.md for the format")]
    Parse {
        /// The file.
        path: PathBuf,
        /// ` (line L, column C)` when known.
        at: String,
    },
    /// One entry is wrong.
    #[error("{path}: tokens entry {index}: {message}")]
    Entry {
        /// The file.
        path: PathBuf,
        /// The entry's position, from 1.
        index: usize,
        /// What is wrong.
        message: String,
    },
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TokensFile {
    tokens: Vec<TokenEntry>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TokenEntry {
    #[serde(default)]
    name: Option<String>,
    token: String,
    role: RoleName,
    #[serde(default)]
    cluster: Option<String>,
    #[serde(default)]
    namespaces: Option<Vec<String>>,
}

#[derive(Deserialize, Clone, Copy)]
#[serde(rename_all = "lowercase")]
enum RoleName {
    Admin,
    Agent,
    Namespace,
}

impl TokenSet {
    /// Reads a tokens file (YAML, or JSON, which YAML reads too).
    ///
    /// # Errors
    /// When the file cannot be read, is not a tokens file, or an entry is wrong.
    pub fn load(path: &Path) -> Result<Self, TokensError> {
        let text = std::fs::read_to_string(path).map_err(|source| TokensError::Read {
            path: path.to_owned(),
            source,
        })?;
        Self::parse(&text, path)
    }

    /// Parses a tokens file's text; `path` only names it in errors.
    ///
    /// # Errors
    /// When the text is not a tokens file or an entry is wrong.
    pub fn parse(text: &str, path: &Path) -> Result<Self, TokensError> {
        let file: TokensFile = serde_saphyr::from_str(text).map_err(|e| TokensError::Parse {
            path: path.to_owned(),
            at: e
                .location()
                .map(|l| format!(" (line {}, column {})", l.line(), l.column()))
                .unwrap_or_default(),
        })?;
        let entry_error = |index: usize, message: &str| TokensError::Entry {
            path: path.to_owned(),
            index,
            message: message.to_owned(),
        };
        if file.tokens.is_empty() || file.tokens.len() > TOKENS_MAX {
            return Err(entry_error(0, &format!("list 1 to {TOKENS_MAX} tokens")));
        }
        let mut entries = Vec::with_capacity(file.tokens.len());
        for (position, entry) in file.tokens.into_iter().enumerate() {
            let index = position + 1;
            let digest = digest(&entry.token);
            if entry.token.len() < TOKEN_BYTES_MIN {
                return Err(entry_error(
                    index,
                    &format!("a token needs at least {TOKEN_BYTES_MIN} bytes"),
                ));
            }
            if entries.iter().any(|(known, _)| *known == digest) {
                return Err(entry_error(index, "the same token is listed twice"));
            }
            let role = role_of(&entry).map_err(|message| entry_error(index, message))?;
            let name = entry.name.unwrap_or_else(|| format!("token-{index}"));
            entries.push((digest, Grant { name, role }));
        }
        Ok(Self { entries })
    }

    /// The grant of a presented token, if it is known; compares against every entry.
    #[must_use]
    pub fn lookup(&self, presented: &str) -> Option<&Grant> {
        let digest = digest(presented);
        let mut found = None;
        for (known, grant) in &self.entries {
            if bool::from(known.ct_eq(&digest)) {
                found = Some(grant);
            }
        }
        found
    }

    /// How many tokens are known.
    #[must_use]
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether no token is known (a loaded set never is).
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

fn digest(token: &str) -> [u8; 32] {
    Sha256::digest(token.as_bytes()).into()
}

fn role_of(entry: &TokenEntry) -> Result<Role, &'static str> {
    match (entry.role, &entry.cluster, &entry.namespaces) {
        (RoleName::Admin, None, None) => Ok(Role::Admin),
        (RoleName::Admin, _, _) => Err("an admin token takes neither `cluster` nor `namespaces`"),
        (RoleName::Agent, Some(cluster), None) if !cluster.is_empty() => Ok(Role::Agent {
            cluster: cluster.clone(),
        }),
        (RoleName::Agent, _, _) => Err("an agent token takes `cluster: NAME` and no `namespaces`"),
        (RoleName::Namespace, None, Some(namespaces))
            if !namespaces.is_empty() && namespaces.iter().all(|n| !n.is_empty()) =>
        {
            Ok(Role::Namespace {
                namespaces: namespaces.clone(),
            })
        }
        (RoleName::Namespace, _, _) => {
            Err("a namespace token takes `namespaces: [a, b]` (non-empty) and no `cluster`")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILE: &str = "tokens:\n\
        - {name: ops, token: admin-token-0123456789, role: admin}\n\
        - {token: agent-east-0123456789, role: agent, cluster: east}\n\
        - {name: team-a, token: team-a-token-0123456789, role: namespace, namespaces: [a, b]}\n";

    fn set() -> TokenSet {
        match TokenSet::parse(FILE, Path::new("tokens.yaml")) {
            Ok(set) => set,
            Err(e) => panic!("{e}"),
        }
    }

    #[test]
    fn a_known_token_finds_its_grant_and_an_unknown_one_nothing() {
        let set = set();
        assert_eq!(set.len(), 3);
        let agent = set.lookup("agent-east-0123456789").map(|g| g.name.clone());
        assert_eq!(agent.as_deref(), Some("token-2"));
        let team = set
            .lookup("team-a-token-0123456789")
            .map(|g| g.role.clone());
        let namespaces = vec!["a".to_owned(), "b".to_owned()];
        assert_eq!(team, Some(Role::Namespace { namespaces }));
        assert!(set.lookup("admin-token-012345678").is_none());
        assert!(set.lookup("").is_none());
    }

    #[test]
    fn json_files_are_read_too() {
        let json = r#"{"tokens": [{"token": "admin-token-0123456789", "role": "admin"}]}"#;
        let set = TokenSet::parse(json, Path::new("t.json")).map_err(|e| e.to_string());
        assert_eq!(set.map(|s| s.len()), Ok(1));
    }

    #[test]
    fn errors_never_quote_the_file() {
        let cases = [
            "tokens: [{token: secret-secret-secret, role: root}]",
            "tokens: [{token: secret-secret-secret, role: agent}]",
            "tokens: [{token: secret-secret-secret, role: admin, cluster: x}]",
            "tokens: [{token: secret-secret-secret, role: namespace, namespaces: []}]",
            "tokens: [{token: secret-secret-secret, role: admin, colour: secret-secret}]",
            "tokens: [{token: [secret-secret-secret], role: admin}]",
            "tokens: [{token: short, role: admin}]",
            "tokens: [{token: secret-secret-secret, role: admin}, \
             {token: secret-secret-secret, role: admin}]",
            "tokens: []",
            "secret-secret-secret",
        ];
        for case in cases {
            match TokenSet::parse(case, Path::new("t.yaml")) {
                Ok(_) => panic!("accepted {case}"),
                Err(e) => assert!(!e.to_string().contains("secret"), "{e}"),
            }
        }
    }
}
