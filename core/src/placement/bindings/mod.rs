//! A placement's bindings, in cluster name order, packed: each binding is a 48-byte row
//! ([`row`]) in chunks of up to [`CHUNK`] rows, each chunk behind one pointer and holding its
//! rows' cluster names with their shared beginning once ([`chunk`]). A binding held
//! as its own 208-byte struct behind its own pointer, with a map entry and the map's half-empty
//! nodes, took about 300 bytes; ten placements over a million clusters took 3 GiB.
//!
//! Readers get each binding, and each cluster name, as a value, made from its row and its
//! chunk (no allocation for the common ones: names up to 24 bytes are inline); writers change
//! one through [`Bindings::update`]. A checkpoint's snapshot shares the
//! chunks; the fold copies a chunk only when it changes one while the snapshot lives. The
//! chunks, codes and tables are how the bindings are held, not what they are: equality, the
//! encoding (a map of cluster name to binding, as before) and so the state hash see only the
//! bindings.

mod chunk;
mod row;
mod serde_impl;
mod tags;
#[cfg(test)]
mod tests;

use std::collections::BTreeMap;
use std::sync::Arc;

use chunk::Chunk;
use row::{Packed, Row, Tables};
pub(crate) use tags::TagSet;
use tags::TagSummary;

use super::binding::{Binding, BindingState};
use crate::model::ClusterName;

/// Rows per chunk: an insert moves at most this many rows; a full chunk's rows are 3 KiB.
const CHUNK: usize = 64;
/// Rows a chunk's room grows by: a chunk holds at most this many rows' room unused (a chunk
/// split by an insert is half full, and filling each one's room up front left a third of the
/// rows of a fleet joined in no order unused).
const CHUNK_STEP: usize = 8;
/// Below this many bindings the chunks are never repacked: too few to matter.
const REPACKED_FROM: usize = 4_096;

/// A placement's bindings by cluster name (see the module documentation).
#[derive(Clone, Default)]
pub struct Bindings {
    /// The rows in name order, in chunks none of which is empty.
    chunks: Vec<Arc<Chunk>>,
    /// Each chunk's first cluster, searched without following the chunks' pointers.
    firsts: Vec<ClusterName>,
    /// Which tags each chunk's rows carry, to find the rows with given tags.
    summary: TagSummary,
    /// How many rows the chunks hold.
    len: usize,
    /// The codes rows refer to.
    tables: Arc<Tables>,
    /// The bindings a row cannot hold, by the key of the row holding their place.
    aside: BTreeMap<ClusterName, Arc<Binding>>,
    /// How many bindings there were when the chunks were last packed full.
    repacked_at: usize,
    /// The tags of rows removed since the rollout's index last took them (see [`Row::tag`]).
    removed_tags: BTreeMap<ClusterName, u8>,
}

impl Bindings {
    /// No bindings.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// How many bindings there are.
    #[must_use]
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether there are none.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// `cluster`'s binding.
    #[must_use]
    pub fn get(&self, cluster: &str) -> Option<Binding> {
        let (chunk, Ok(position)) = self.locate(cluster)? else {
            return None;
        };
        self.unpack(&self.chunks[chunk].rows()[position], cluster.into())
    }

    /// Whether `cluster` has a binding.
    #[must_use]
    pub fn contains_key(&self, cluster: &str) -> bool {
        matches!(self.locate(cluster), Some((_, Ok(_))))
    }

    /// `cluster`'s binding state, read without making the binding.
    #[must_use]
    pub fn state(&self, cluster: &str) -> Option<BindingState> {
        let (chunk, Ok(position)) = self.locate(cluster)? else {
            return None;
        };
        self.state_of(&self.chunks[chunk].rows()[position], cluster)
    }

    /// Every binding with its cluster, in cluster name order.
    pub fn iter(&self) -> impl Iterator<Item = (ClusterName, Binding)> + '_ {
        self.named_rows().filter_map(|(cluster, row)| {
            let binding = self.unpack(row, cluster.clone())?;
            Some((cluster, binding))
        })
    }

    /// Calls `visit` with every cluster and its binding, in cluster name order: a walk that
    /// moves no binding about (an iterator's adaptors copy each 208-byte binding several times,
    /// a third of a rollout's classification of every binding).
    pub fn for_each(&self, mut visit: impl FnMut(&ClusterName, &Binding)) {
        for (cluster, row) in self.named_rows() {
            if let Some(binding) = self.unpack(row, cluster.clone()) {
                visit(&cluster, &binding);
            }
        }
    }

    /// Every binding, in cluster name order.
    pub fn values(&self) -> impl Iterator<Item = Binding> + '_ {
        self.named_rows()
            .filter_map(|(cluster, row)| self.unpack(row, cluster))
    }

    /// Every bound cluster, in name order.
    pub fn keys(&self) -> impl Iterator<Item = ClusterName> + '_ {
        self.named_rows().map(|(cluster, _)| cluster)
    }

    /// Every cluster with its binding's state, in name order, without making the bindings.
    pub fn states(&self) -> impl Iterator<Item = (ClusterName, BindingState)> + '_ {
        self.named_rows().filter_map(|(cluster, row)| {
            let state = self.state_of(row, &cluster)?;
            Some((cluster, state))
        })
    }

    /// Stores `binding` under its cluster, replacing any binding there.
    pub fn insert(&mut self, binding: Binding) {
        let cluster = binding.cluster.clone();
        self.put(&cluster, binding);
    }

    /// Changes `cluster`'s binding with `change`; `None` (and no change) when it has none.
    pub fn update<R>(
        &mut self,
        cluster: &str,
        change: impl FnOnce(&mut Binding) -> R,
    ) -> Option<R> {
        let mut slot = self.slot(cluster)?;
        let result = change(&mut slot.binding);
        slot.store();
        Some(result)
    }

    /// Changes the bindings of `clusters`, given in name order, with `change` (those without a
    /// binding are skipped): each one's chunk is looked for from the last one's on, most often
    /// the same or the next, not among all the chunks. A name out of order is looked for among
    /// all of them.
    pub(crate) fn update_in_order<'c>(
        &mut self,
        clusters: impl IntoIterator<Item = &'c ClusterName>,
        mut change: impl FnMut(&str, &mut Binding),
    ) {
        let mut chunk = 0;
        let mut last: Option<&str> = None;
        for cluster in clusters {
            let cluster = cluster.as_str();
            if last.is_some_and(|last| compare_names(last, cluster).is_ge()) {
                chunk = 0;
            }
            last = Some(cluster);
            let after = |first: &ClusterName| compare_names(first, cluster).is_le();
            let ahead = self.firsts.get(chunk + 1..).unwrap_or_default();
            if ahead.first().is_some_and(after) {
                chunk += ahead.partition_point(after);
            }
            let Some(Ok(position)) = self.chunks.get(chunk).map(|c| c.search(cluster)) else {
                continue;
            };
            let row = &self.chunks[chunk].rows()[position];
            let Some(mut binding) = self.unpack(row, cluster.into()) else {
                continue;
            };
            change(cluster, &mut binding);
            self.replace(chunk, position, cluster, binding);
        }
    }

    /// `cluster`'s binding, to change and [`Slot::store`]: one search for both.
    pub(crate) fn slot<'a>(&'a mut self, cluster: &'a str) -> Option<Slot<'a>> {
        let (chunk, Ok(position)) = self.locate(cluster)? else {
            return None;
        };
        let binding = self.unpack(&self.chunks[chunk].rows()[position], cluster.into())?;
        Some(Slot {
            bindings: self,
            cluster,
            chunk,
            position,
            binding,
        })
    }

    /// Removes `cluster`'s binding, returning it.
    pub fn remove(&mut self, cluster: &str) -> Option<Binding> {
        let (chunk, Ok(position)) = self.locate(cluster)? else {
            return None;
        };
        let removed = self.unpack(&self.chunks[chunk].rows()[position], cluster.into());
        let rows = Arc::make_mut(&mut self.chunks[chunk]);
        let (cluster, row) = rows.remove(position);
        if rows.len() == 0 {
            self.chunks.remove(chunk);
            self.firsts.remove(chunk);
            self.summary.removed(chunk);
        } else {
            if position == 0 {
                self.firsts[chunk] = rows.name(0);
            }
            self.summary.lost(&self.chunks, chunk, row.tag);
        }
        if row.is_aside() {
            self.aside.remove(&cluster);
        }
        if row.tag != 0 {
            self.removed_tags.insert(cluster, row.tag);
        }
        self.len -= 1;
        removed
    }

    /// Bindings stored under the given keys, in any order; where two share a key the later
    /// is kept, as inserting them one by one would. Every chunk is built full.
    pub(crate) fn from_keyed(mut entries: Vec<(ClusterName, Binding)>) -> Self {
        entries.sort_by(|a, b| a.0.cmp(&b.0));
        Self::from_sorted(entries.into_iter())
    }

    /// [`Self::from_keyed`] of entries already in key order.
    fn from_sorted(entries: impl Iterator<Item = (ClusterName, Binding)>) -> Self {
        let mut bindings = Self::default();
        let mut entries = entries.peekable();
        let mut chunks = FullChunks::default();
        while let Some((cluster, binding)) = entries.next() {
            if entries.peek().is_some_and(|next| next.0 == cluster) {
                continue;
            }
            let row = bindings.pack_building(&cluster, binding);
            chunks.push(cluster, row);
            bindings.len += 1;
        }
        bindings.set_chunks(chunks.finish());
        bindings.repacked_at = bindings.len;
        bindings
    }

    /// Judges `cluster`'s binding again with `judge`, which gives what it makes of it and the
    /// tag to keep in its row (see [`Row::tag`]); one search. Returns the earlier tag (that of
    /// a binding removed since, if any, which it takes) and the judgement (`None` without a
    /// binding).
    pub(crate) fn rejudge<J>(
        &mut self,
        cluster: &str,
        judge: impl FnOnce(&Binding) -> (J, u8),
    ) -> (Option<u8>, Option<J>) {
        let removed = if self.removed_tags.is_empty() {
            None
        } else {
            self.removed_tags.remove(cluster)
        };
        let Some((chunk, Ok(position))) = self.locate(cluster) else {
            return (removed, None);
        };
        let row = &self.chunks[chunk].rows()[position];
        let old = removed.unwrap_or(row.tag);
        let Some(binding) = self.unpack(row, cluster.into()) else {
            return (Some(old), None);
        };
        let (judged, tag) = judge(&binding);
        let held = self.chunks[chunk].rows()[position].tag;
        if held != tag {
            Arc::make_mut(&mut self.chunks[chunk]).rows_mut()[position].tag = tag;
            self.summary.retag(&self.chunks, chunk, held, tag);
        }
        (Some(old), Some(judged))
    }

    /// Tags every binding, in cluster order, forgetting the tags of removed ones.
    pub(crate) fn set_tags(&mut self, tags: impl Iterator<Item = u8>) {
        self.removed_tags.clear();
        let tags: Vec<u8> = tags.collect();
        let mut tags = tags.as_slice();
        for chunk in &mut self.chunks {
            let (these, rest) = tags.split_at(chunk.len().min(tags.len()));
            tags = rest;
            // A chunk whose tags are right is left alone: a snapshot may share it.
            if !chunk
                .rows()
                .iter()
                .map(|row| row.tag)
                .eq(these.iter().copied())
            {
                for (row, tag) in Arc::make_mut(chunk).rows_mut().iter_mut().zip(these) {
                    row.tag = *tag;
                }
            }
        }
        self.summary = TagSummary::of(&self.chunks);
    }

    /// The clusters whose rows carry any of the tags `wanted`, in name order: what holds
    /// none of them is skipped a chunk or a group of chunks at a time.
    pub(crate) fn tagged(&self, wanted: TagSet) -> impl Iterator<Item = ClusterName> + '_ {
        (self.summary.chunks_with(wanted)).flat_map(move |chunk| {
            let chunk = &self.chunks[chunk];
            (chunk.rows().iter().enumerate())
                .filter(move |(_, row)| wanted.contains(row.tag))
                .map(|(position, _)| chunk.name(position))
        })
    }

    /// Whether the record of which chunks carry which tags is exact (a debug check).
    pub(crate) fn tags_summarized(&self) -> bool {
        self.summary == TagSummary::of(&self.chunks)
    }

    /// Every binding's tag, in cluster order.
    pub(crate) fn tags(&self) -> impl Iterator<Item = (ClusterName, u8)> + '_ {
        self.named_rows().map(|(cluster, row)| (cluster, row.tag))
    }

    /// The rows in order, with their clusters.
    fn named_rows(&self) -> impl Iterator<Item = (ClusterName, &Row)> + '_ {
        self.chunks.iter().flat_map(|chunk| chunk.named())
    }

    /// The binding a row, stored under `cluster`, holds or holds the place of.
    fn unpack(&self, row: &Row, cluster: ClusterName) -> Option<Binding> {
        if row.is_aside() {
            return self.aside.get(&cluster).map(|b| Binding::clone(b));
        }
        row.unpack(cluster, &self.tables)
    }

    /// The state of the binding a row, stored under `cluster`, holds or holds the place of.
    fn state_of(&self, row: &Row, cluster: &str) -> Option<BindingState> {
        match row.state() {
            Some(state) => Some(state),
            None => self.aside.get(cluster).map(|b| b.state),
        }
    }

    /// The row for `binding` under `cluster`, the binding kept aside when a row cannot hold it.
    /// A full table is made afresh first when that may be worth it ([`Self::compact`]).
    fn pack(&mut self, cluster: &str, binding: Binding) -> Row {
        let packed = match Row::pack(cluster, &binding, &mut self.tables) {
            Packed::Full(_) if self.tables.may_compact() => {
                self.compact();
                Row::pack(cluster, &binding, &mut self.tables)
            }
            packed => packed,
        };
        place(&mut self.aside, cluster, packed, binding)
    }

    /// The row for `binding` under `cluster` while the bindings are built whole: their rows are
    /// not yet in the chunks, so a full table is not made afresh (that would code again only
    /// the rows in the chunks, and leave the rows being built pointing at the old entries); a
    /// binding past a full table is kept aside. Every entry of a table built so is in use.
    fn pack_building(&mut self, cluster: &str, binding: Binding) -> Row {
        let packed = Row::pack(cluster, &binding, &mut self.tables);
        place(&mut self.aside, cluster, packed, binding)
    }

    /// Codes every binding again against tables holding only the entries they use: entries
    /// are never removed one by one, so a long-lived placement's (one per policy change, per
    /// staged run) would otherwise fill a table and keep every later binding aside. O(n), at
    /// most once per half a table of entries added.
    fn compact(&mut self) {
        let old = std::mem::take(&mut self.tables);
        let Self {
            chunks,
            tables,
            aside,
            ..
        } = self;
        for chunk in chunks.iter_mut() {
            let chunk = Arc::make_mut(chunk);
            for position in 0..chunk.len() {
                let cluster = chunk.name(position);
                let row = &mut chunk.rows_mut()[position];
                let binding = match row.is_aside() {
                    true => aside.get(&cluster).map(|b| Binding::clone(b)),
                    false => row.unpack(cluster.clone(), &old),
                };
                let Some(binding) = binding else { continue };
                let packed = Row::pack(&cluster, &binding, tables);
                let mut placed = place(aside, &cluster, packed, binding);
                placed.tag = row.tag;
                *row = placed;
            }
        }
        Arc::make_mut(tables).added = 0;
    }

    /// The chunk that holds `cluster`, or would, and where in it; `None` with no chunks.
    fn locate(&self, cluster: &str) -> Option<(usize, Result<usize, usize>)> {
        let after = (self.firsts).partition_point(|first| compare_names(first, cluster).is_le());
        let chunk = after.saturating_sub(1);
        Some((chunk, self.chunks.get(chunk)?.search(cluster)))
    }

    /// Stores `chunks`, noting their first clusters.
    fn set_chunks(&mut self, chunks: Vec<Arc<Chunk>>) {
        self.firsts = chunks.iter().map(|chunk| chunk.name(0)).collect();
        self.summary = TagSummary::of(&chunks);
        self.chunks = chunks;
    }

    /// Stores `binding` in the row at `position` of chunk `chunk`, which holds `cluster`.
    fn replace(&mut self, chunk: usize, position: usize, cluster: &str, binding: Binding) {
        let tag = self.chunks[chunk].rows()[position].tag;
        let mut row = self.pack(cluster, binding);
        row.tag = tag;
        Arc::make_mut(&mut self.chunks[chunk]).rows_mut()[position] = row;
    }

    /// Stores `binding` under `cluster` (the cluster it was read from), replacing any there.
    fn put(&mut self, cluster: &str, binding: Binding) {
        let located = self.locate(cluster);
        if let Some((chunk, Ok(position))) = located {
            self.replace(chunk, position, cluster, binding);
            return;
        }
        let cluster = ClusterName::from(cluster);
        let row = self.pack(&cluster, binding);
        match located {
            Some((chunk, Err(position))) => self.insert_row(chunk, position, &cluster, row),
            _ => {
                self.chunks.push(Arc::new(Chunk::with(&cluster, row)));
                self.firsts.push(cluster);
                self.summary.inserted(&self.chunks, self.chunks.len() - 1);
            }
        }
        self.len += 1;
        self.note_insert();
    }

    /// Inserts a new row at `position` of chunk `chunk`: a new chunk past the last one when
    /// that is full and the row comes last (a fleet joining in name order fills its chunks),
    /// else the full chunk split in two.
    fn insert_row(&mut self, chunk: usize, position: usize, cluster: &ClusterName, row: Row) {
        let last = chunk + 1 == self.chunks.len();
        if position == 0 {
            self.firsts[chunk] = cluster.clone();
        }
        let rows = Arc::make_mut(&mut self.chunks[chunk]);
        if rows.len() < CHUNK {
            let tag = row.tag;
            rows.insert(position, cluster, row);
            self.summary.add(chunk, tag);
        } else if last && position == rows.len() {
            self.firsts.push(cluster.clone());
            self.chunks.push(Arc::new(Chunk::with(cluster, row)));
            self.summary.inserted(&self.chunks, chunk + 1);
        } else {
            let mut upper = rows.split_off(CHUNK / 2);
            if position <= CHUNK / 2 {
                rows.insert(position, cluster, row);
            } else {
                upper.insert(position - CHUNK / 2, cluster, row);
            }
            self.firsts.insert(chunk + 1, upper.name(0));
            self.chunks.insert(chunk + 1, Arc::new(upper));
            self.summary.rescan(&self.chunks, chunk);
            self.summary.inserted(&self.chunks, chunk + 1);
        }
    }

    /// After an insert: packs every chunk full each time the bindings have doubled since
    /// they last were (amortized O(1) per insert), as split chunks are part empty.
    fn note_insert(&mut self) {
        if self.len < REPACKED_FROM {
            return;
        }
        if self.repacked_at == 0 {
            self.repacked_at = self.len;
        } else if self.len >= self.repacked_at.saturating_mul(2) {
            let old = std::mem::take(&mut self.chunks);
            let mut chunks = FullChunks::default();
            for (cluster, row) in old.iter().flat_map(|chunk| chunk.named()) {
                chunks.push(cluster, row.clone());
            }
            self.set_chunks(chunks.finish());
            self.repacked_at = self.len;
        }
    }
}

/// Bindings given one by one in cluster name order, each packed into a full chunk as it comes,
/// to hold in place of none: a placement's first scheduling builds its bindings whole, not
/// searched and split once per cluster, nor held twice over.
#[derive(Default)]
pub(crate) struct Fill {
    built: Bindings,
    chunks: FullChunks,
    /// The cluster given last.
    last: Option<ClusterName>,
    /// Any binding given out of order, stored one by one at the end.
    unordered: Vec<Binding>,
}

impl Fill {
    /// Packs `binding`, which should come after every binding given before.
    pub(crate) fn push(&mut self, binding: Binding) {
        let in_order = (self.last.as_deref())
            .is_none_or(|last| compare_names(last, &binding.cluster) == std::cmp::Ordering::Less);
        if !in_order {
            self.unordered.push(binding);
            return;
        }
        let cluster = binding.cluster.clone();
        let row = self.built.pack_building(&cluster, binding);
        self.last = Some(cluster.clone());
        self.chunks.push(cluster, row);
        self.built.len += 1;
    }

    /// Holds the bindings given in `bindings`, which holds none, keeping the tags of bindings
    /// removed since the rollout's index last took them: the index still counts those.
    pub(crate) fn finish(self, bindings: &mut Bindings) {
        let Fill {
            mut built,
            chunks,
            unordered,
            ..
        } = self;
        built.set_chunks(chunks.finish());
        built.repacked_at = built.len;
        built.removed_tags = std::mem::take(&mut bindings.removed_tags);
        for binding in unordered {
            built.insert(binding);
        }
        *bindings = built;
    }
}

/// A binding taken out to change, and where it goes back.
pub(crate) struct Slot<'a> {
    bindings: &'a mut Bindings,
    cluster: &'a str,
    chunk: usize,
    position: usize,
    /// The binding, to change.
    pub binding: Binding,
}

impl Slot<'_> {
    /// Stores the binding back (dropping the slot stores nothing).
    pub(crate) fn store(self) {
        (self.bindings).replace(self.chunk, self.position, self.cluster, self.binding);
    }
}

/// `a` against `b` in byte order, as `str` orders them, eight bytes at a time: a search
/// compares about twenty short names, and a call to `memcmp` for each cost more than the
/// comparison (a fifth of a rollout's fold at 100,000 clusters).
pub(super) fn compare_names(a: &str, b: &str) -> std::cmp::Ordering {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    let common = a.len().min(b.len());
    let mut at = 0;
    while at + 8 <= common {
        let word = |bytes: &[u8]| {
            let mut word = [0; 8];
            word.copy_from_slice(&bytes[at..at + 8]);
            u64::from_be_bytes(word)
        };
        let (x, y) = (word(a), word(b));
        if x != y {
            return x.cmp(&y);
        }
        at += 8;
    }
    a[at..common]
        .iter()
        .zip(&b[at..common])
        .map(|(x, y)| x.cmp(y))
        .find(|order| order.is_ne())
        .unwrap_or_else(|| a.len().cmp(&b.len()))
}

/// The row a binding was packed into, the binding kept in `aside` when the row only holds its
/// place, and taken out of it when the row holds it.
fn place(
    aside: &mut BTreeMap<ClusterName, Arc<Binding>>,
    cluster: &str,
    packed: Packed,
    binding: Binding,
) -> Row {
    match packed {
        Packed::Row(row) => {
            if !aside.is_empty() {
                aside.remove(cluster);
            }
            row
        }
        Packed::Aside(row) | Packed::Full(row) => {
            aside.insert(cluster.into(), Arc::new(binding));
            row
        }
    }
}

/// Full chunks made from rows given in name order (the last one may not be full), a chunk at
/// a time, so that all the rows are never held twice over.
#[derive(Default)]
struct FullChunks {
    chunks: Vec<Arc<Chunk>>,
    named: Vec<(ClusterName, Row)>,
}

impl FullChunks {
    /// Adds the row of `cluster`, which comes after every row added before.
    fn push(&mut self, cluster: ClusterName, row: Row) {
        self.named.push((cluster, row));
        if self.named.len() == CHUNK {
            self.close();
        }
    }

    /// The chunks, the rows added since the last full one making the last.
    fn finish(mut self) -> Vec<Arc<Chunk>> {
        if !self.named.is_empty() {
            self.close();
        }
        self.chunks
    }

    /// Makes a chunk, with no room to spare, of the rows added since the last one.
    fn close(&mut self) {
        let named = std::mem::replace(&mut self.named, Vec::with_capacity(CHUNK));
        let room = named.len();
        self.chunks.push(Arc::new(Chunk::of(named, room)));
    }
}

impl FromIterator<Binding> for Bindings {
    fn from_iter<I: IntoIterator<Item = Binding>>(bindings: I) -> Self {
        Self::from_keyed(
            bindings
                .into_iter()
                .map(|binding| (binding.cluster.clone(), binding))
                .collect(),
        )
    }
}

impl<'a> IntoIterator for &'a Bindings {
    type Item = (ClusterName, Binding);
    type IntoIter = Box<dyn Iterator<Item = (ClusterName, Binding)> + 'a>;

    fn into_iter(self) -> Self::IntoIter {
        Box::new(self.iter())
    }
}
