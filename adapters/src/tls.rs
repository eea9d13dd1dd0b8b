//! HTTPS for the hub's API, the CLI and the agent, with rustls (ring as the crypto provider,
//! chosen explicitly at every call site rather than through a process-wide default). The API's
//! accept loop runs each handshake in its connection's task (the hub's `api_server`).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};

/// Why a certificate, key or CA file could not be used.
#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    /// A PEM file could not be read or holds nothing usable.
    #[error("{path}: {message}")]
    Pem {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// rustls refused the configuration.
    #[error("TLS configuration: {0}")]
    Config(#[from] rustls::Error),
}

fn pem_error(path: &Path, message: impl std::fmt::Display) -> TlsError {
    TlsError::Pem {
        path: path.to_owned(),
        message: message.to_string(),
    }
}

/// Installs ring as the process's default rustls provider, unless one is installed already.
///
/// reqwest is built with `rustls-no-provider` (no second crypto library beside ring) and panics
/// when it builds a client without a process default: call this before `reqwest::Client::new()`.
pub fn install_crypto_provider() {
    // An error only means a provider is installed already, which is all that is needed.
    let _ = rustls::crypto::ring::default_provider().install_default();
}

fn provider() -> Arc<rustls::crypto::CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

fn certificates(path: &Path) -> Result<Vec<CertificateDer<'static>>, TlsError> {
    let certificates = CertificateDer::pem_file_iter(path)
        .map_err(|e| pem_error(path, e))?
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| pem_error(path, e))?;
    if certificates.is_empty() {
        return Err(pem_error(path, "no PEM certificate in the file"));
    }
    Ok(certificates)
}

/// The server configuration of a certificate chain and its private key (PEM files).
///
/// # Errors
/// When a file cannot be read, holds no certificate or key, or they do not match.
pub fn server_config(cert: &Path, key: &Path) -> Result<Arc<rustls::ServerConfig>, TlsError> {
    let chain = certificates(cert)?;
    // Never the key's content in the error: only that it could not be read.
    let key_der = PrivateKeyDer::from_pem_file(key)
        .map_err(|_| pem_error(key, "cannot read a PEM private key from the file"))?;
    let config = rustls::ServerConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()?
        .with_no_client_auth()
        .with_single_cert(chain, key_der)?;
    Ok(Arc::new(config))
}

/// A client configuration trusting exactly the certificates of a CA file (PEM).
///
/// # Errors
/// When the file cannot be read or holds no usable certificate.
pub fn client_config(ca: &Path) -> Result<rustls::ClientConfig, TlsError> {
    let mut roots = rustls::RootCertStore::empty();
    for certificate in certificates(ca)? {
        roots.add(certificate).map_err(|e| pem_error(ca, e))?;
    }
    Ok(rustls::ClientConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()?
        .with_root_certificates(roots)
        .with_no_client_auth())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unreadable_or_empty_pem_files_are_refused_naming_the_file() {
        let dir = match tempfile::tempdir() {
            Ok(dir) => dir,
            Err(e) => panic!("{e}"),
        };
        let missing = dir.path().join("missing.crt");
        let refused = server_config(&missing, &missing).map(|_| ());
        assert!(matches!(refused, Err(TlsError::Pem { path, .. }) if path == missing));
        let garbage = dir.path().join("garbage.pem");
        let secret = "-----BEGIN PRIVATE KEY-----\nc2VjcmV0LWtleS1ieXRlcw\n";
        if let Err(e) = std::fs::write(&garbage, secret) {
            panic!("{e}");
        }
        assert!(matches!(client_config(&garbage), Err(TlsError::Pem { .. })));
        match server_config(&garbage, &garbage) {
            Ok(_) => panic!("a key file without a certificate was accepted"),
            Err(e) => assert!(!e.to_string().contains("c2VjcmV0"), "{e}"),
        }
    }
}
