//! Inserts, updates and deletes: the optimistic leaf-only path, the pessimistic path with
//! write latches from the root and splits going up (merges and redistribution going up are
//! in `rebalance`).

use super::node::{self, Kind, Node, NONE, SLOT};
use super::{BTree, TreeError};
use flashbuf_core::PageId;
use flashbuf_pool::PageWriteGuard;
use flashbuf_store::PageStore;

/// What [`BTree::modify`] does with the entry of a key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change {
    /// Leave it (absent stays absent).
    Keep,
    /// Insert or replace the value.
    Put(Vec<u8>),
    /// Delete it (if present).
    Delete,
}

/// A write-latched node on the pessimistic path, with the child position taken from it.
pub(super) struct Level<'p, S: PageStore> {
    pub(super) g: PageWriteGuard<'p, S>,
    pub(super) pos: usize,
    pub(super) rightmost: bool,
}

/// An entry to place in a node: a new cell at `idx`, or (leaves) a new value for entry
/// `idx`.
pub(super) struct Pending {
    pub(super) idx: usize,
    pub(super) cell: Vec<u8>,
    pub(super) replace: bool,
}

impl<'p, S: PageStore> BTree<'p, S> {
    /// Reads the entry of `key` and changes it as `f` says, atomically (under the leaf's
    /// write latch). `f` may be called more than once (when the first attempt needs a
    /// split or merge, the operation restarts); the last call's answer is applied.
    pub fn modify(
        &self,
        key: &[u8],
        mut f: impl FnMut(Option<&[u8]>) -> Change,
    ) -> Result<(), TreeError> {
        self.check_entry(key, &[])?;
        if self.modify_optimistic(key, &mut f)? {
            return Ok(());
        }
        self.modify_pessimistic(key, &mut f)
    }

    /// Inserts `key` with `value` if absent; returns whether it was inserted.
    pub fn insert(&self, key: &[u8], value: &[u8]) -> Result<bool, TreeError> {
        self.check_entry(key, value)?;
        let mut inserted = false;
        self.modify(key, |old| {
            inserted = old.is_none();
            if inserted {
                Change::Put(value.to_vec())
            } else {
                Change::Keep
            }
        })?;
        Ok(inserted)
    }

    /// Inserts or replaces; returns whether a value was replaced.
    pub fn put(&self, key: &[u8], value: &[u8]) -> Result<bool, TreeError> {
        self.check_entry(key, value)?;
        let mut replaced = false;
        self.modify(key, |old| {
            replaced = old.is_some();
            Change::Put(value.to_vec())
        })?;
        Ok(replaced)
    }

    /// Replaces the value of an existing `key` by `f(old)` (`None`: leave it); returns
    /// whether the key exists. `f` may run more than once (see [`BTree::modify`]).
    pub fn update(
        &self,
        key: &[u8],
        mut f: impl FnMut(&[u8]) -> Option<Vec<u8>>,
    ) -> Result<bool, TreeError> {
        let mut found = false;
        self.modify(key, |old| {
            found = old.is_some();
            match old.and_then(&mut f) {
                Some(v) => Change::Put(v),
                None => Change::Keep,
            }
        })?;
        Ok(found)
    }

    /// Deletes `key`; returns whether it existed.
    pub fn delete(&self, key: &[u8]) -> Result<bool, TreeError> {
        let mut found = false;
        self.modify(key, |old| {
            found = old.is_some();
            Change::Delete
        })?;
        Ok(found)
    }

    /// The change applied to the leaf alone, if it needs no split or merge.
    fn modify_optimistic(
        &self,
        key: &[u8],
        f: &mut impl FnMut(Option<&[u8]>) -> Change,
    ) -> Result<bool, TreeError> {
        let mut g = self.write_leaf(key)?;
        let is_root = g.page_id() == self.root;
        let n = Node::new(g.data());
        let found = n.search(key);
        match f(found.ok().map(|i| n.value(i))) {
            Change::Keep => Ok(true),
            Change::Put(v) => {
                self.check_entry(key, &v)?;
                match found {
                    Ok(i) if node::fits_replace(&n, i, v.len()) => {
                        node::replace_value(&mut g, i, &v);
                        Ok(true)
                    }
                    Err(i)
                        if n.free_total()
                            >= node::LEAF_CELL_OVERHEAD + key.len() + v.len() + SLOT =>
                    {
                        node::insert_cell(&mut g, i, &node::leaf_cell(key, &v));
                        Ok(true)
                    }
                    _ => Ok(false),
                }
            }
            Change::Delete => match found {
                Err(_) => Ok(true),
                Ok(i) if is_root || n.used() - n.cell_size(i) - SLOT >= self.lim.min_fill => {
                    node::remove(&mut g, i);
                    Ok(true)
                }
                Ok(_) => Ok(false),
            },
        }
    }

    /// Whether a node can take a child's split and lose an entry without underflow (its
    /// ancestors are then released on the pessimistic path).
    fn safe(&self, n: &Node<'_>) -> bool {
        let (max, min_count) = if n.is_leaf() {
            (self.lim.max_leaf_entry, 1)
        } else {
            (self.lim.max_internal_entry, 2)
        };
        n.free_total() >= max && n.used() >= self.lim.min_fill + max && n.count() >= min_count
    }

    fn modify_pessimistic(
        &self,
        key: &[u8],
        f: &mut impl FnMut(Option<&[u8]>) -> Change,
    ) -> Result<(), TreeError> {
        let mut path: Vec<Level<'p, S>> = Vec::new();
        let mut g = self.pool.write(self.root)?;
        self.check_node(self.root, g.data())?;
        let mut rightmost = true;
        loop {
            let n = Node::new(g.data());
            if n.is_leaf() {
                break;
            }
            let pos = n.route(key);
            let child_rightmost = rightmost && pos == n.count();
            let child = PageId(n.child_at(pos));
            let cg = self.pool.write(child)?;
            self.check_node(child, cg.data())?;
            let safe = self.safe(&Node::new(cg.data()));
            path.push(Level { g, pos, rightmost });
            if safe {
                path.clear();
            }
            g = cg;
            rightmost = child_rightmost;
        }
        let n = Node::new(g.data());
        let found = n.search(key);
        match f(found.ok().map(|i| n.value(i))) {
            Change::Keep => Ok(()),
            Change::Put(v) => {
                self.check_entry(key, &v)?;
                let (idx, replace) = match found {
                    Ok(i) => (i, true),
                    Err(i) => (i, false),
                };
                let pending = Pending {
                    idx,
                    cell: node::leaf_cell(key, &v),
                    replace,
                };
                self.insert_up(path, g, rightmost, pending)
            }
            Change::Delete => match found {
                Err(_) => Ok(()),
                Ok(i) => {
                    node::remove(&mut g, i);
                    self.rebalance_up(path, g)
                }
            },
        }
    }

    /// Whether `p` fits into `n` without a split.
    fn fits(n: &Node<'_>, p: &Pending) -> bool {
        if p.replace {
            let old = n.cell_size(p.idx);
            p.cell.len() <= old || p.cell.len() - old <= n.free_total()
        } else {
            p.cell.len() + SLOT <= n.free_total()
        }
    }

    /// Places `p` into `g`, the node latched exclusively.
    fn apply(g: &mut PageWriteGuard<'p, S>, p: &Pending) {
        if p.replace {
            let value = {
                let n = Node::new(g.data());
                let klen = n.key(p.idx).len();
                p.cell[node::LEAF_CELL_OVERHEAD + klen..].to_vec()
            };
            node::replace_value(g, p.idx, &value);
        } else {
            node::insert_cell(g, p.idx, &p.cell);
        }
    }

    /// Puts `p` into `g`, splitting it and its ancestors on `path` as needed.
    pub(super) fn insert_up(
        &self,
        mut path: Vec<Level<'p, S>>,
        mut g: PageWriteGuard<'p, S>,
        mut rightmost: bool,
        mut p: Pending,
    ) -> Result<(), TreeError> {
        loop {
            let n = Node::new(g.data());
            if Self::fits(&n, &p) {
                Self::apply(&mut g, &p);
                return Ok(());
            }
            let leaf = n.is_leaf();
            let (level, link) = (n.level(), n.link());
            let mut cells: Vec<Vec<u8>> = (0..n.count()).map(|i| n.cell(i).to_vec()).collect();
            if p.replace {
                cells[p.idx] = p.cell.clone();
            } else {
                cells.insert(p.idx, p.cell.clone());
            }
            let append = rightmost && !p.replace && p.idx == n.count();
            let s = self.split_point(&cells, leaf, append);
            if g.page_id() == self.root {
                return self.split_root(&mut g, &cells, s, leaf, level);
            }
            let Some(parent) = path.pop() else {
                // A node kept without its parent was safe: it cannot need a split.
                return Err(TreeError::Corrupt {
                    pid: g.page_id(),
                    detail: "a split reached a node whose parent was released".into(),
                });
            };
            let right = self.space.alloc(self.pool)?;
            let sep = node::cell_key(&cells[s], leaf).to_vec();
            {
                let mut rg = self.pool.write(right)?;
                if leaf {
                    node::write_fresh(&mut rg, Kind::Leaf, 0, self.id.0, link, &cells[s..]);
                } else {
                    let leftmost = node::cell_child(&cells[s]);
                    node::write_fresh(
                        &mut rg,
                        Kind::Internal,
                        level,
                        self.id.0,
                        leftmost,
                        &cells[s + 1..],
                    );
                }
            }
            // The left node keeps cells[..s]: truncate, then place p if it stays here.
            if p.idx < s {
                node::truncate(&mut g, if p.replace { s } else { s - 1 });
                Self::apply(&mut g, &p);
            } else {
                node::truncate(&mut g, s);
            }
            if leaf {
                node::set_link(&mut g, right.0);
            }
            drop(g);
            p = Pending {
                idx: parent.pos,
                cell: node::internal_cell(&sep, right.0),
                replace: false,
            };
            g = parent.g;
            rightmost = parent.rightmost;
        }
    }

    /// Where to split `cells`: a leaf keeps `cells[..s]` and gives `cells[s..]`; an
    /// internal node keeps `cells[..s]`, pushes `cells[s]` up and gives `cells[s + 1..]`.
    pub(super) fn split_point(&self, cells: &[Vec<u8>], leaf: bool, append: bool) -> usize {
        let sizes: Vec<usize> = cells.iter().map(|c| c.len() + SLOT).collect();
        let total: usize = sizes.iter().sum();
        let m = cells.len();
        let usable = self.lim.usable;
        let (lo, hi) = if leaf { (1, m - 1) } else { (1, m - 2) };
        let prefix = |s: usize| sizes[..s].iter().sum::<usize>();
        let right = |s: usize| total - prefix(s) - if leaf { 0 } else { sizes[s] };
        let mut s = if append {
            let target = (usable as f64 * self.cfg.append_fill) as usize;
            (lo..=hi).rev().find(|&s| prefix(s) <= target).unwrap_or(lo)
        } else {
            (lo..=hi).find(|&s| prefix(s) * 2 >= total).unwrap_or(hi)
        };
        while s < hi && right(s) > usable {
            s += 1;
        }
        while s > lo && prefix(s) > usable {
            s -= 1;
        }
        debug_assert!(
            prefix(s) <= usable && right(s) <= usable,
            "no valid split of {m} cells"
        );
        s
    }

    /// Splits the root: its cells go to two new nodes, the root keeps one separator.
    fn split_root(
        &self,
        g: &mut PageWriteGuard<'p, S>,
        cells: &[Vec<u8>],
        s: usize,
        leaf: bool,
        level: u8,
    ) -> Result<(), TreeError> {
        let (a, b) = (self.space.alloc(self.pool)?, self.space.alloc(self.pool)?);
        let id = self.id.0;
        let sep = node::cell_key(&cells[s], leaf).to_vec();
        {
            let mut ag = self.pool.write(a)?;
            let mut bg = self.pool.write(b)?;
            if leaf {
                node::write_fresh(&mut ag, Kind::Leaf, 0, id, b.0, &cells[..s]);
                node::write_fresh(&mut bg, Kind::Leaf, 0, id, NONE, &cells[s..]);
            } else {
                let leftmost = Node::new(g.data()).link();
                node::write_fresh(&mut ag, Kind::Internal, level, id, leftmost, &cells[..s]);
                let mid = node::cell_child(&cells[s]);
                node::write_fresh(&mut bg, Kind::Internal, level, id, mid, &cells[s + 1..]);
            }
        }
        let root_cell = node::internal_cell(&sep, b.0);
        node::write_fresh(g, Kind::Internal, level + 1, id, a.0, &[root_cell]);
        Ok(())
    }
}
