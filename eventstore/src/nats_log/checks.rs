//! Checks made when the log connects: options that name valid streams, and a server that can
//! run the log.

use super::{NatsOptions, SERVER_VERSION_MIN};
use crate::LogError;

/// Refuses a stream prefix NATS would not accept in a name, and an impossible replica count.
pub(super) fn check_options(options: &NatsOptions) -> Result<(), LogError> {
    let prefix = &options.stream_prefix;
    let valid = !prefix.is_empty()
        && prefix
            .bytes()
            .all(|byte| byte.is_ascii_alphanumeric() || byte == b'-' || byte == b'_');
    if !valid {
        return Err(LogError::Nats(format!(
            "stream prefix {prefix:?}: use letters, digits, '-' and '_' only"
        )));
    }
    if options.replicas == 0 || options.replicas > 5 {
        return Err(LogError::Nats(format!(
            "replicas {}: JetStream allows 1 to 5",
            options.replicas
        )));
    }
    Ok(())
}

/// Refuses a server without JetStream or too old for batched direct gets.
pub(super) fn check_server(info: &async_nats::ServerInfo) -> Result<(), LogError> {
    if !info.jetstream {
        return Err(LogError::Nats(format!(
            "server {} has JetStream disabled: enable it (`jetstream {{ ... }}`)",
            info.server_name
        )));
    }
    let mut parts = info
        .version
        .split(['.', '-'])
        .map(|part| part.parse::<u64>().unwrap_or(0));
    let version = (parts.next().unwrap_or(0), parts.next().unwrap_or(0));
    if version < SERVER_VERSION_MIN {
        let (major, minor) = SERVER_VERSION_MIN;
        return Err(LogError::Nats(format!(
            "nats-server {} is too old: the log reads with batched direct gets, \
             which need {major}.{minor} or newer",
            info.version
        )));
    }
    Ok(())
}
