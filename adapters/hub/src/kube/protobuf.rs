//! Request bodies in the Kubernetes protobuf encoding (`application/vnd.kubernetes.protobuf`),
//! turned into the JSON the rest of the API reads.
//!
//! kubectl's typed clients (`kubectl create namespace|configmap|secret|deployment|…`, `auth
//! can-i`, `auth whoami`) always send built-in kinds as protobuf, whatever discovery
//! advertises, and client-go falls back to JSON after a 415 only for CBOR — so the hub decodes
//! protobuf rather than refusing it (`docs/decisions.md`).
//!
//! The encoding (apimachinery's `runtime/serializer/protobuf`): the magic `k8s\0`, then a
//! `runtime.Unknown` whose `typeMeta` names the `apiVersion` and `kind` and whose `raw` is the
//! object's message of `k8s.io.api.<group>.<version>.<Kind>`. The messages are decoded with the
//! descriptors of the built-in types (`protobuf/k8s-api-v0.32.9.pb`, made by
//! `scripts/k8s-protobuf-descriptors`; field numbers only grow, so older and newer clients
//! decode alike), and written as the JSON the API server's own JSON encoding gives: field names
//! are the JSON names already, and the apimachinery types with a custom JSON form (`Time`,
//! `MicroTime`, `Duration`, `Quantity`, `IntOrString`, `RawExtension`, `FieldsV1`) are mapped to
//! it. Go's protobuf encoding writes every non-pointer string even when empty; empty strings are
//! dropped, as Go's JSON `omitempty` drops them (an optional string set to `""` reads as unset).

use std::sync::LazyLock;

use base64::Engine;
use chrono::{DateTime, SecondsFormat};
use prost_reflect::{
    DescriptorPool, DynamicMessage, MapKey, MessageDescriptor, ReflectMessage, Value as Field,
};
use serde_json::{Map, Value, json};

use super::status::ApiError;

/// The media type of the Kubernetes protobuf encoding.
pub const PROTOBUF: &str = "application/vnd.kubernetes.protobuf";

/// The four bytes every Kubernetes protobuf body starts with.
const MAGIC: &[u8; 4] = b"k8s\0";

/// Deepest nesting of messages decoded (the deepest built-in type nests far less).
const DEPTH_MAX: usize = 64;

static POOL: LazyLock<Result<DescriptorPool, String>> = LazyLock::new(|| {
    DescriptorPool::decode(&include_bytes!("protobuf/k8s-api-v0.32.9.pb")[..])
        .map_err(|e| e.to_string())
});

/// Whether a `Content-Type` is the protobuf encoding.
pub fn is_protobuf(content_type: &str) -> bool {
    content_type
        .split(';')
        .next()
        .is_some_and(|media| media.trim().eq_ignore_ascii_case(PROTOBUF))
}

/// Decodes a protobuf body into the object's JSON.
///
/// # Errors
/// 400 for a body that is not the Kubernetes encoding or not a message of a known built-in
/// type, as the API server answers a body it cannot decode.
pub fn to_json(body: &[u8]) -> Result<Value, ApiError> {
    let pool = POOL.as_ref().map_err(ApiError::internal)?;
    let unknown = body
        .strip_prefix(MAGIC)
        .ok_or_else(|| ApiError::bad_request("the protobuf body does not start with k8s\\0"))?;
    let envelope = pool
        .get_message_by_name("k8s.io.apimachinery.pkg.runtime.Unknown")
        .ok_or_else(|| ApiError::internal("no runtime.Unknown descriptor"))?;
    let envelope = DynamicMessage::decode(envelope, unknown).map_err(malformed)?;
    let (api_version, kind) = type_meta(&envelope);
    let raw = match envelope.get_field_by_name("raw").as_deref() {
        Some(Field::Bytes(raw)) => raw.clone(),
        _ => return Err(ApiError::bad_request("the protobuf body carries no object")),
    };
    let descriptor = pool
        .get_message_by_name(&message_name(&api_version, &kind))
        .ok_or_else(|| {
            ApiError::bad_request(format!(
                "no protobuf type is known for {kind} in {api_version}; send it as JSON"
            ))
        })?;
    let message = DynamicMessage::decode(descriptor, raw).map_err(malformed)?;
    let mut object = message_json(&message, 0)?;
    object["apiVersion"] = Value::from(api_version);
    object["kind"] = Value::from(kind);
    Ok(object)
}

fn malformed(error: prost_reflect::prost::DecodeError) -> ApiError {
    ApiError::bad_request(format!("the protobuf body cannot be decoded: {error}"))
}

/// `typeMeta.apiVersion` and `typeMeta.kind` of the envelope.
fn type_meta(envelope: &DynamicMessage) -> (String, String) {
    let text = |meta: &DynamicMessage, name: &str| match meta.get_field_by_name(name).as_deref() {
        Some(Field::String(text)) => text.clone(),
        _ => String::new(),
    };
    match envelope.get_field_by_name("typeMeta").as_deref() {
        Some(Field::Message(meta)) => (text(meta, "apiVersion"), text(meta, "kind")),
        _ => (String::new(), String::new()),
    }
}

/// `k8s.io.api.<package>.<version>.<Kind>`: the package is the group's first label (`apps`,
/// `rbac` of `rbac.authorization.k8s.io`, `core` for the core group).
fn message_name(api_version: &str, kind: &str) -> String {
    let (group, version) = api_version.split_once('/').unwrap_or(("", api_version));
    let package = match group.split('.').next() {
        Some("") | None => "core",
        Some(first) => first,
    };
    format!("k8s.io.api.{package}.{version}.{kind}")
}

/// A message as JSON: the apimachinery types with a JSON form of their own, else an object of
/// its set fields.
fn message_json(message: &DynamicMessage, depth: usize) -> Result<Value, ApiError> {
    if depth > DEPTH_MAX {
        return Err(ApiError::bad_request(format!(
            "the protobuf body nests messages deeper than {DEPTH_MAX}"
        )));
    }
    let descriptor = message.descriptor();
    if let Some(special) = special_json(&descriptor, message) {
        return Ok(special);
    }
    let mut object = Map::new();
    for (field, value) in message.fields() {
        let value = field_json(value, depth)?;
        if !(value.is_null() || value.as_str() == Some("")) {
            object.insert(field.name().to_owned(), value);
        }
    }
    Ok(Value::Object(object))
}

fn field_json(value: &Field, depth: usize) -> Result<Value, ApiError> {
    Ok(match value {
        Field::Bool(b) => Value::from(*b),
        Field::I32(n) | Field::EnumNumber(n) => Value::from(*n),
        Field::I64(n) => Value::from(*n),
        Field::U32(n) => Value::from(*n),
        Field::U64(n) => Value::from(*n),
        Field::F32(n) => json!(n),
        Field::F64(n) => json!(n),
        Field::String(text) => Value::from(text.as_str()),
        Field::Bytes(bytes) => Value::from(base64::engine::general_purpose::STANDARD.encode(bytes)),
        Field::Message(message) => message_json(message, depth + 1)?,
        Field::List(items) => Value::Array(
            items
                .iter()
                .map(|item| field_json(item, depth))
                .collect::<Result<_, _>>()?,
        ),
        Field::Map(entries) => {
            let mut object = Map::new();
            for (key, value) in entries {
                object.insert(map_key(key), field_json(value, depth)?);
            }
            Value::Object(object)
        }
    })
}

fn map_key(key: &MapKey) -> String {
    match key {
        MapKey::Bool(b) => b.to_string(),
        MapKey::I32(n) => n.to_string(),
        MapKey::I64(n) => n.to_string(),
        MapKey::U32(n) => n.to_string(),
        MapKey::U64(n) => n.to_string(),
        MapKey::String(text) => text.clone(),
    }
}

/// The JSON of the apimachinery types whose Go type has its own `MarshalJSON`.
fn special_json(descriptor: &MessageDescriptor, message: &DynamicMessage) -> Option<Value> {
    let int = |name: &str| match message.get_field_by_name(name).as_deref() {
        Some(Field::I64(n)) => *n,
        Some(Field::I32(n)) => i64::from(*n),
        _ => 0,
    };
    let text = |name: &str| match message.get_field_by_name(name).as_deref() {
        Some(Field::String(text)) => text.clone(),
        _ => String::new(),
    };
    let raw_json = |name: &str| match message.get_field_by_name(name).as_deref() {
        Some(Field::Bytes(raw)) => serde_json::from_slice(raw).unwrap_or(Value::Null),
        _ => Value::Null,
    };
    Some(match descriptor.full_name() {
        // A zero time is `null` in JSON (metav1.Time.MarshalJSON).
        "k8s.io.apimachinery.pkg.apis.meta.v1.Time" => time(int("seconds"), 0, false),
        "k8s.io.apimachinery.pkg.apis.meta.v1.MicroTime" => {
            time(int("seconds"), int("nanos"), true)
        }
        "k8s.io.apimachinery.pkg.apis.meta.v1.Duration" => Value::from(duration(int("duration"))),
        "k8s.io.apimachinery.pkg.api.resource.Quantity" => Value::from(text("string")),
        "k8s.io.apimachinery.pkg.util.intstr.IntOrString" => {
            if int("type") == 1 {
                Value::from(text("strVal"))
            } else {
                Value::from(int("intVal"))
            }
        }
        "k8s.io.apimachinery.pkg.runtime.RawExtension" => raw_json("raw"),
        "k8s.io.apimachinery.pkg.apis.meta.v1.FieldsV1" => raw_json("Raw"),
        // `[]string` types wrapped in a message (`ExtraValue`, `Verbs`): a JSON array.
        name if name.ends_with(".ExtraValue") || name.ends_with(".Verbs") => {
            match message.get_field_by_name("items").as_deref() {
                Some(Field::List(items)) => Value::Array(
                    items
                        .iter()
                        .filter_map(|item| item.as_str().map(Value::from))
                        .collect(),
                ),
                _ => Value::Array(Vec::new()),
            }
        }
        _ => return None,
    })
}

/// RFC 3339 in UTC, to the second (`Time`) or the microsecond (`MicroTime`); `null` for zero.
fn time(seconds: i64, nanos: i64, micro: bool) -> Value {
    if seconds == 0 && nanos == 0 {
        return Value::Null;
    }
    let nanos = u32::try_from(nanos).unwrap_or(0);
    DateTime::from_timestamp(seconds, nanos).map_or(Value::Null, |at| {
        let format = if micro {
            SecondsFormat::Micros
        } else {
            SecondsFormat::Secs
        };
        Value::from(at.to_rfc3339_opts(format, true))
    })
}

/// A Go `time.Duration` as its `String()` writes it, for whole seconds (`1h2m3s`, `0s`) and
/// fractions (`1.5s`).
fn duration(nanos: i64) -> String {
    if nanos == 0 {
        return "0s".to_owned();
    }
    let sign = if nanos < 0 { "-" } else { "" };
    let nanos = nanos.unsigned_abs();
    let (hours, minutes) = (nanos / 3_600_000_000_000, (nanos / 60_000_000_000) % 60);
    let seconds = (nanos % 60_000_000_000) as f64 / 1e9;
    let mut text = sign.to_owned();
    if hours > 0 {
        text.push_str(&format!("{hours}h"));
    }
    if hours > 0 || minutes > 0 {
        text.push_str(&format!("{minutes}m"));
    }
    text.push_str(&format!("{seconds}s"));
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_built_in_kind_kubectl_creates_has_a_message() {
        let pool = POOL.as_ref().expect("the descriptors decode");
        for (api_version, kind) in [
            ("v1", "Namespace"),
            ("v1", "ConfigMap"),
            ("v1", "Secret"),
            ("apps/v1", "Deployment"),
            ("rbac.authorization.k8s.io/v1", "ClusterRole"),
            ("authorization.k8s.io/v1", "SelfSubjectAccessReview"),
            ("authentication.k8s.io/v1", "SelfSubjectReview"),
            ("networking.k8s.io/v1", "Ingress"),
            ("autoscaling/v2", "HorizontalPodAutoscaler"),
        ] {
            let name = message_name(api_version, kind);
            assert!(pool.get_message_by_name(&name).is_some(), "{name}");
        }
    }

    #[test]
    fn durations_read_as_go_writes_them() {
        assert_eq!(duration(0), "0s");
        assert_eq!(duration(3_723_000_000_000), "1h2m3s");
        assert_eq!(duration(1_500_000_000), "1.5s");
    }

    #[test]
    fn a_body_without_the_magic_is_refused() {
        let error = to_json(b"{}").expect_err("not protobuf");
        assert_eq!(error.code, axum::http::StatusCode::BAD_REQUEST);
    }
}
