//! Lookups and range scans: read latches coupled down the tree and right along the leaves.

use super::node::{self, Node, NONE};
use super::{BTree, TreeError};
use flashbuf_core::PageId;
use flashbuf_pool::{PageReadGuard, PageWriteGuard};
use flashbuf_store::PageStore;
use std::ops::Bound;

/// A key and its value.
pub type Entry = (Vec<u8>, Vec<u8>);

impl<'p, S: PageStore> BTree<'p, S> {
    /// Read-latches the leaf whose key range covers `key`, coupling down from the root.
    pub(super) fn read_leaf(&self, key: &[u8]) -> Result<PageReadGuard<'p, S>, TreeError> {
        let mut pid = self.root;
        let mut g = self.pool.read(pid)?;
        loop {
            self.check_node(pid, g.data())?;
            let n = Node::new(g.data());
            if n.is_leaf() {
                return Ok(g);
            }
            pid = PageId(n.child_at(n.route(key)));
            let child = self.pool.read(pid)?;
            g = child;
        }
    }

    /// Write-latches the leaf covering `key`: read latches down to its parent, then the
    /// leaf's write latch (the parent is released once the leaf is latched).
    pub(super) fn write_leaf(&self, key: &[u8]) -> Result<PageWriteGuard<'p, S>, TreeError> {
        loop {
            let mut pid = self.root;
            let mut g = self.pool.read(pid)?;
            self.check_node(pid, g.data())?;
            if Node::new(g.data()).is_leaf() {
                drop(g);
                let w = self.pool.write(pid)?;
                if Node::new(w.data()).is_leaf() {
                    return Ok(w);
                }
                // The root split meanwhile: start again.
                continue;
            }
            loop {
                let n = Node::new(g.data());
                let child = PageId(n.child_at(n.route(key)));
                if n.level() == 1 {
                    let w = self.pool.write(child)?;
                    drop(g);
                    self.check_node(child, w.data())?;
                    return Ok(w);
                }
                pid = child;
                g = self.pool.read(pid)?;
                self.check_node(pid, g.data())?;
            }
        }
    }

    /// The value of `key`.
    pub fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>, TreeError> {
        self.get_with(key, |v| v.map(<[u8]>::to_vec))
    }

    /// Runs `f` on the value of `key` (or `None`) while the leaf is read-latched; `f`
    /// must not use the tree or the pool.
    pub fn get_with<R>(
        &self,
        key: &[u8],
        f: impl FnOnce(Option<&[u8]>) -> R,
    ) -> Result<R, TreeError> {
        let g = self.read_leaf(key)?;
        let n = Node::new(g.data());
        Ok(f(n.search(key).ok().map(|i| n.value(i))))
    }

    /// Calls `f(key, value)` on the entries from `start` to `end` in key order until it
    /// returns `false`. Leaves are read-latched one at a time (coupled when moving right);
    /// `f` must not use the tree or the pool. Entries inserted behind the cursor while
    /// the scan runs are not seen.
    pub fn scan(
        &self,
        start: Bound<&[u8]>,
        end: Bound<&[u8]>,
        mut f: impl FnMut(&[u8], &[u8]) -> bool,
    ) -> Result<(), TreeError> {
        let from: &[u8] = match start {
            Bound::Included(k) | Bound::Excluded(k) => k,
            Bound::Unbounded => &[],
        };
        let mut g = self.read_leaf(from)?;
        let mut i = {
            let n = Node::new(g.data());
            match (start, n.search(from)) {
                (Bound::Excluded(_), Ok(i)) => i + 1,
                (_, Ok(i)) | (_, Err(i)) => i,
            }
        };
        loop {
            let n = Node::new(g.data());
            while i < n.count() {
                let k = n.key(i);
                let past = match end {
                    Bound::Included(e) => k > e,
                    Bound::Excluded(e) => k >= e,
                    Bound::Unbounded => false,
                };
                if past || !f(k, n.value(i)) {
                    return Ok(());
                }
                i += 1;
            }
            let next = n.link();
            if next == NONE {
                return Ok(());
            }
            let ng = self.pool.read(PageId(next))?;
            self.check_node(PageId(next), ng.data())?;
            g = ng;
            i = 0;
        }
    }

    /// Up to `limit` entries with keys from `start` (inclusive) to `end` (exclusive; `None`
    /// = to the end).
    pub fn range(
        &self,
        start: &[u8],
        end: Option<&[u8]>,
        limit: usize,
    ) -> Result<Vec<Entry>, TreeError> {
        let mut out = Vec::new();
        if limit == 0 {
            return Ok(out);
        }
        let end = end.map_or(Bound::Unbounded, Bound::Excluded);
        self.scan(Bound::Included(start), end, |k, v| {
            out.push((k.to_vec(), v.to_vec()));
            out.len() < limit
        })?;
        Ok(out)
    }

    /// Updates entries in place from `start` to `end`, in key order: `f(key, value)`
    /// returns a new value of the same length (only its differing bytes are written), or
    /// `None` to leave the entry, and says whether to go on. Leaves are write-latched one
    /// at a time, coupled left to right. Returns how many entries were visited.
    pub fn scan_update(
        &self,
        start: &[u8],
        end: Bound<&[u8]>,
        mut f: impl FnMut(&[u8], &[u8]) -> (Option<Vec<u8>>, bool),
    ) -> Result<u64, TreeError> {
        let mut g = self.write_leaf(start)?;
        let mut i = match Node::new(g.data()).search(start) {
            Ok(i) | Err(i) => i,
        };
        let mut visited = 0u64;
        loop {
            let count = Node::new(g.data()).count();
            while i < count {
                let n = Node::new(g.data());
                let k = n.key(i);
                let past = match end {
                    Bound::Included(e) => k > e,
                    Bound::Excluded(e) => k >= e,
                    Bound::Unbounded => false,
                };
                if past {
                    return Ok(visited);
                }
                visited += 1;
                let (new, more) = f(k, n.value(i));
                if let Some(v) = new {
                    if v.len() != n.value(i).len() {
                        return Err(TreeError::Invalid(format!(
                            "scan_update changed a value's length from {} to {}",
                            n.value(i).len(),
                            v.len()
                        )));
                    }
                    node::replace_value(&mut g, i, &v);
                }
                if !more {
                    return Ok(visited);
                }
                i += 1;
            }
            let next = Node::new(g.data()).link();
            if next == NONE {
                return Ok(visited);
            }
            let ng = self.pool.write(PageId(next))?;
            self.check_node(PageId(next), ng.data())?;
            g = ng;
            i = 0;
        }
    }
}
