//! A chunk of a placement's bindings: up to [`CHUNK`] rows in cluster name order, and their
//! clusters' names held once for the chunk, as the text every name begins with and then each
//! name's rest, one after another. Names side by side in order share most of their text
//! (`sim-0012345`, `sim-0012346`), so a row's name costs its rest and an end offset, a few
//! bytes, where a 24-byte inline name in every row took a third of the row.

use compact_str::CompactString;

use super::row::Row;
use super::{CHUNK, CHUNK_STEP, compare_names};
use crate::model::ClusterName;

/// The longest name a [`ClusterName`] holds inline.
const INLINE: usize = 24;

/// Rows and the names of their clusters (see the module documentation).
#[derive(Debug, Clone, Default)]
pub(super) struct Chunk {
    /// The rows, in name order.
    rows: Vec<Row>,
    /// What every name in the chunk begins with.
    prefix: ClusterName,
    /// The rest of each row's name, in row order.
    rests: String,
    /// Where each row's rest ends in `rests`. `u32`: a forged checkpoint's names are not
    /// bounded by the 253 bytes a name is checked against when it is applied.
    ends: Vec<u32>,
}

impl Chunk {
    /// A chunk holding one row, with room for [`CHUNK_STEP`].
    pub fn with(name: &str, row: Row) -> Self {
        let mut chunk = Self {
            rows: Vec::with_capacity(CHUNK_STEP),
            prefix: name.into(),
            rests: String::new(),
            ends: Vec::with_capacity(CHUNK_STEP),
        };
        chunk.rows.push(row);
        chunk.ends.push(0);
        chunk
    }

    /// A chunk of these rows, named and in name order, with room for `room` rows.
    pub fn of(named: Vec<(ClusterName, Row)>, room: usize) -> Self {
        let prefix = match (named.first(), named.last()) {
            (Some(first), Some(last)) => common_prefix(&first.0, &last.0),
            _ => "",
        };
        let rests = named
            .iter()
            .map(|(name, _)| name.len() - prefix.len())
            .sum();
        let mut chunk = Self {
            rows: Vec::with_capacity(room),
            prefix: prefix.into(),
            rests: String::with_capacity(rests),
            ends: Vec::with_capacity(room),
        };
        for (name, row) in named {
            chunk.rests.push_str(&name[chunk.prefix.len()..]);
            chunk.ends.push(end_offset(&chunk.rests));
            chunk.rows.push(row);
        }
        chunk
    }

    /// How many rows it holds.
    pub fn len(&self) -> usize {
        self.rows.len()
    }

    /// The rows, in name order.
    pub fn rows(&self) -> &[Row] {
        &self.rows
    }

    /// The rows, to change in place (not their order).
    pub fn rows_mut(&mut self) -> &mut [Row] {
        &mut self.rows
    }

    /// The name of row `position`'s cluster. Put together on the stack when it fits inline:
    /// the scheduler and the rollout read a name for most bindings they touch.
    pub fn name(&self, position: usize) -> ClusterName {
        let (prefix, rest) = (self.prefix.as_bytes(), self.rest(position).as_bytes());
        let length = prefix.len() + rest.len();
        let mut buffer = [0; INLINE];
        if let Some(whole) = buffer.get_mut(..length) {
            let (head, tail) = whole.split_at_mut(prefix.len());
            head.copy_from_slice(prefix);
            tail.copy_from_slice(rest);
            if let Ok(name) = std::str::from_utf8(whole) {
                return ClusterName::new(name);
            }
        }
        let mut name = CompactString::with_capacity(length);
        name.push_str(&self.prefix);
        name.push_str(self.rest(position));
        name
    }

    /// Every row with its cluster's name, in order.
    pub fn named(&self) -> impl Iterator<Item = (ClusterName, &Row)> + '_ {
        (self.rows.iter().enumerate()).map(|(position, row)| (self.name(position), row))
    }

    /// Where `name` is, or would go.
    pub fn search(&self, name: &str) -> Result<usize, usize> {
        let Some(rest) = name.strip_prefix(self.prefix.as_str()) else {
            // Every name here begins with the prefix: one that does not is before or after
            // them all.
            return match compare_names(name, &self.prefix) {
                std::cmp::Ordering::Less => Err(0),
                _ => Err(self.len()),
            };
        };
        let (mut low, mut high) = (0, self.len());
        while low < high {
            let middle = low + (high - low) / 2;
            match compare_names(self.rest(middle), rest) {
                std::cmp::Ordering::Less => low = middle + 1,
                std::cmp::Ordering::Greater => high = middle,
                std::cmp::Ordering::Equal => return Ok(middle),
            }
        }
        Err(low)
    }

    /// Inserts `row`, named `name`, at `position` (where [`Self::search`] put it), growing
    /// the room by [`CHUNK_STEP`] rows when there is none.
    pub fn insert(&mut self, position: usize, name: &str, row: Row) {
        if !name.starts_with(self.prefix.as_str()) {
            let kept = common_prefix(&self.prefix, name).len();
            self.shorten_prefix(kept);
        }
        if self.rows.len() == self.rows.capacity() {
            let step = CHUNK_STEP.min(CHUNK.saturating_sub(self.rows.len()).max(1));
            self.rows.reserve_exact(step);
            self.ends.reserve_exact(step);
        }
        let rest = &name[self.prefix.len()..];
        let at = self.start(position);
        self.rests.insert_str(at, rest);
        let grown = end_offset(rest);
        for end in &mut self.ends[position..] {
            *end += grown;
        }
        self.ends
            .insert(position, end_offset(&self.rests[..at]) + grown);
        self.rows.insert(position, row);
    }

    /// Removes row `position`, returning it with its cluster's name.
    pub fn remove(&mut self, position: usize) -> (ClusterName, Row) {
        let name = self.name(position);
        let (start, end) = (self.start(position), self.end(position));
        self.rests.replace_range(start..end, "");
        let shrunk = end_offset(&name[self.prefix.len()..]);
        self.ends.remove(position);
        for end in &mut self.ends[position..] {
            *end -= shrunk;
        }
        (name, self.rows.remove(position))
    }

    /// Splits off the rows from `at` on into a new chunk; each part then shares the longest
    /// prefix its names have, and has room for [`CHUNK_STEP`] more rows.
    pub fn split_off(&mut self, at: usize) -> Self {
        let names: Vec<ClusterName> = (0..self.len()).map(|p| self.name(p)).collect();
        let mut lower: Vec<(ClusterName, Row)> =
            names.into_iter().zip(self.rows.drain(..)).collect();
        let upper = lower.split_off(at);
        let room = |part: &Vec<(ClusterName, Row)>| part.len() + CHUNK_STEP;
        let (lower_room, upper_room) = (room(&lower), room(&upper));
        *self = Self::of(lower, lower_room);
        Self::of(upper, upper_room)
    }

    /// The rest of row `position`'s name.
    fn rest(&self, position: usize) -> &str {
        &self.rests[self.start(position)..self.end(position)]
    }

    /// Where row `position`'s rest begins in `rests`.
    fn start(&self, position: usize) -> usize {
        match position {
            0 => 0,
            _ => self.end(position - 1),
        }
    }

    /// Where row `position`'s rest ends in `rests`.
    fn end(&self, position: usize) -> usize {
        self.ends[position] as usize
    }

    /// Keeps only the first `kept` bytes of the prefix, the rest of it going to each row's
    /// rest.
    fn shorten_prefix(&mut self, kept: usize) {
        let moved = &self.prefix[kept..];
        let mut rests = String::with_capacity(self.rests.len() + moved.len() * self.len());
        let mut ends = Vec::with_capacity(self.ends.capacity());
        for position in 0..self.len() {
            rests.push_str(moved);
            rests.push_str(self.rest(position));
            ends.push(end_offset(&rests));
        }
        self.rests = rests;
        self.ends = ends;
        self.prefix.truncate(kept);
    }
}

/// What `a` and `b` both begin with, ending on a character boundary.
fn common_prefix<'a>(a: &'a str, b: &str) -> &'a str {
    let mut length = (a.bytes().zip(b.bytes()))
        .take_while(|(x, y)| x == y)
        .count();
    while !a.is_char_boundary(length) {
        length -= 1;
    }
    &a[..length]
}

/// The length of `text` as an offset into a chunk's rests. A chunk's rests are at most
/// [`CHUNK`] names, far below `u32::MAX` bytes for any name an input can carry.
fn end_offset(text: &str) -> u32 {
    u32::try_from(text.len()).unwrap_or(u32::MAX)
}
