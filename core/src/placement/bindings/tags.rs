//! Which tags the rows of each chunk carry, and of each group of chunks, so that the rows
//! carrying given tags (the rollout's candidates: clusters to bind, update or remove) are found
//! in cluster order by skipping what holds none. The rollout's index kept each candidate's name
//! in a set instead, about 30 bytes a binding while a rollout ran; this costs a bit a tag per
//! chunk (half a byte a row).

use std::sync::Arc;

use super::chunk::Chunk;
use super::row::Row;

/// Chunks per group: a search for tags no row carries reads one set per 4,096 rows.
const GROUP: usize = 64;

/// A set of row tags: bit `t` for tag `t`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TagSet([u64; 4]);

impl TagSet {
    /// No tags.
    pub const EMPTY: Self = Self([0; 4]);

    /// This set with `tag` too.
    #[must_use]
    pub const fn with(mut self, tag: u8) -> Self {
        self.0[(tag >> 6) as usize] |= 1 << (tag & 63);
        self
    }

    /// This set without `tag`.
    fn without(mut self, tag: u8) -> Self {
        self.0[usize::from(tag >> 6)] &= !(1 << (tag & 63));
        self
    }

    /// Whether it holds `tag`.
    #[must_use]
    pub fn contains(self, tag: u8) -> bool {
        self.0[usize::from(tag >> 6)] & (1 << (tag & 63)) != 0
    }

    /// Whether the two share a tag.
    fn meets(self, other: Self) -> bool {
        self.0.iter().zip(other.0).any(|(a, b)| a & b != 0)
    }

    /// Every tag of both.
    fn union(self, other: Self) -> Self {
        Self(std::array::from_fn(|i| self.0[i] | other.0[i]))
    }

    /// Whether every tag of `other` is in this set.
    fn covers(self, other: Self) -> bool {
        self.union(other) == self
    }

    /// The tags these rows carry.
    fn of_rows(rows: &[Row]) -> Self {
        rows.iter().fold(Self::EMPTY, |set, row| set.with(row.tag))
    }

    /// Every tag of these sets.
    fn union_of(sets: &[Self]) -> Self {
        sets.iter().fold(Self::EMPTY, |all, set| all.union(*set))
    }
}

/// The tags of each chunk of rows, and of each [`GROUP`] of chunks, kept exact as rows change.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct TagSummary {
    /// Chunk `c`'s tags.
    chunks: Vec<TagSet>,
    /// The tags of chunks `GROUP * g ..` up to the next group.
    groups: Vec<TagSet>,
}

impl TagSummary {
    /// The summary of these chunks.
    pub fn of(chunks: &[Arc<Chunk>]) -> Self {
        let mut summary = Self {
            chunks: chunks
                .iter()
                .map(|chunk| TagSet::of_rows(chunk.rows()))
                .collect(),
            groups: Vec::new(),
        };
        summary.regroup(0);
        summary
    }

    /// After the rows of chunk `chunk` changed (not the number of chunks).
    pub fn rescan(&mut self, chunks: &[Arc<Chunk>], chunk: usize) {
        let before = self.chunks[chunk];
        let now = TagSet::of_rows(chunks[chunk].rows());
        self.chunks[chunk] = now;
        let group = chunk / GROUP;
        if now.covers(before) {
            self.groups[group] = self.groups[group].union(now);
        } else {
            self.groups[group] = TagSet::union_of(self.group_chunks(group));
        }
    }

    /// After one row of chunk `chunk` went from tag `old` to `new`.
    pub fn retag(&mut self, chunks: &[Arc<Chunk>], chunk: usize, old: u8, new: u8) {
        self.add(chunk, new);
        if old != new {
            self.lost(chunks, chunk, old);
        }
    }

    /// After a row with `tag` went into chunk `chunk`.
    pub fn add(&mut self, chunk: usize, tag: u8) {
        self.chunks[chunk] = self.chunks[chunk].with(tag);
        let group = chunk / GROUP;
        self.groups[group] = self.groups[group].with(tag);
    }

    /// After a row with `tag` left chunk `chunk`, which still has rows: the tag is looked for
    /// only until another row has it, and in the group's other chunks only if none does.
    pub fn lost(&mut self, chunks: &[Arc<Chunk>], chunk: usize, tag: u8) {
        if chunks[chunk].rows().iter().any(|row| row.tag == tag) {
            return;
        }
        self.chunks[chunk] = self.chunks[chunk].without(tag);
        let group = chunk / GROUP;
        if !self.group_chunks(group).iter().any(|set| set.contains(tag)) {
            self.groups[group] = self.groups[group].without(tag);
        }
    }

    /// After a chunk was inserted at `chunk`.
    pub fn inserted(&mut self, chunks: &[Arc<Chunk>], chunk: usize) {
        self.chunks
            .insert(chunk, TagSet::of_rows(chunks[chunk].rows()));
        self.regroup(chunk / GROUP);
    }

    /// After the chunk at `chunk` was removed.
    pub fn removed(&mut self, chunk: usize) {
        self.chunks.remove(chunk);
        self.regroup(chunk / GROUP);
    }

    /// The chunks that hold rows carrying any of `wanted`, in order.
    pub fn chunks_with(&self, wanted: TagSet) -> impl Iterator<Item = usize> + '_ {
        let groups = self.groups.iter().enumerate();
        groups
            .filter(move |(_, tags)| tags.meets(wanted))
            .flat_map(move |(group, _)| {
                let first = group * GROUP;
                (first..(first + GROUP).min(self.chunks.len()))
                    .filter(move |chunk| self.chunks[*chunk].meets(wanted))
            })
    }

    /// Chunks one group holds.
    fn group_chunks(&self, group: usize) -> &[TagSet] {
        let first = group * GROUP;
        &self.chunks[first..(first + GROUP).min(self.chunks.len())]
    }

    /// Recomputes the groups from `from` on (the chunks after a moved one moved too).
    fn regroup(&mut self, from: usize) {
        self.groups.truncate(from);
        let count = self.chunks.len().div_ceil(GROUP);
        for group in from..count {
            self.groups.push(TagSet::union_of(self.group_chunks(group)));
        }
    }
}
