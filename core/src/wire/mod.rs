//! The stored form of every record kind, behind one module: input events, decision batches and
//! checkpoints (see `docs/schema-evolution.md`).
//!
//! Every record this build writes is a **marked frame**:
//!
//! ```text
//! [MAGIC: F7 46 4C 4F][kind: u8][version: u16 LE][bincode body]
//! ```
//!
//! with `kind` one of [`RecordKind`] (`E` event, `D` decision batch, `C` checkpoint). The marker
//! is what tells flotilla's own frames from anything else on a shared stream: `F7` never begins
//! UTF-8 text (so never JSON, never whitespace), nor a legacy frame of release 19da42c, which
//! began `01 00` or `02 00` (events, checkpoints) or with a decision batch's first input
//! sequence as u64 LE (a marked frame read that way would be a sequence above 2^40). So a reader
//! can say of a record: ours and decodable, ours but **newer** than this build (a rolling
//! upgrade: decline, do not reject), an **unmarked legacy** record (decoded exactly as
//! 19da42c wrote it), or something else (rejected with a reason).
//!
//! Older versions are frozen here and upcast on read: [`v1`], [`v2`], [`v3`], [`v5`] and [`v6`] (events),
//! [`decisions::decode_v1_body`] (decision batches). Nothing here does IO.

pub mod checkpoint;
mod checkpoint_sections;
pub mod decision_v1;
pub mod decisions;
pub mod envelope;
pub mod json;
pub mod json_fields;
pub mod json_principal;
pub mod json_property;
pub mod json_report;
pub mod record;
pub mod subject;
pub mod v1;
pub mod v2;
pub mod v3;
pub mod v5;
pub mod v6;

pub(crate) use crate::codec::frame::expect_marked;
pub use crate::codec::frame::{Frame, HEADER_BYTES, MAGIC, RecordKind, marked_frame, split_frame};
pub use crate::time_text;
pub use checkpoint::{CHECKPOINT_VERSION, CheckpointBody};
pub use decisions::{DECISION_VERSION, DecodedBatch};
pub use envelope::{decode_envelope, encode_envelope};
pub use record::{InputOrigin, LogRecord, read_input};
