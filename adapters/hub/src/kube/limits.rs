//! Limits the API server puts on every object, checked before anything is appended.

use serde_json::Value;

use super::status::ApiError;
use super::status::Subject;

/// Most bytes of all annotations of an object, keys and values together
/// (`apimachinery/pkg/api/validation.TotalAnnotationSizeLimitB`, 256 KiB).
pub const ANNOTATIONS_BYTES_MAX: usize = 256 * 1024;

/// Refuses an object whose annotations are over [`ANNOTATIONS_BYTES_MAX`] with 422, as the API
/// server words it (`metadata.annotations: Too long: must have at most 262144 bytes`).
///
/// # Errors
/// 422 `Invalid`.
pub fn check(subject: &Subject, object: &Value) -> Result<(), ApiError> {
    let Some(annotations) = object["metadata"]["annotations"].as_object() else {
        return Ok(());
    };
    let bytes: usize = annotations
        .iter()
        .map(|(key, value)| key.len() + value.as_str().map_or(0, str::len))
        .sum();
    if bytes > ANNOTATIONS_BYTES_MAX {
        return Err(ApiError::too_long(
            subject,
            "metadata.annotations",
            ANNOTATIONS_BYTES_MAX,
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn annotations_over_256_kib_are_refused() {
        let subject = Subject::default();
        let big = "x".repeat(ANNOTATIONS_BYTES_MAX);
        let object = json!({"metadata": {"annotations": {"a": big}}});
        let error = check(&subject, &object).expect_err("over the limit");
        assert!(
            error
                .message
                .contains("metadata.annotations: Too long: must have at most 262144 bytes"),
            "{}",
            error.message
        );
        let fits = json!({"metadata": {"annotations": {"a": "x".repeat(1000)}}});
        assert!(check(&subject, &fits).is_ok());
    }
}
