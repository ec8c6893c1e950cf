//! `check_invariants`: the whole tree walked and checked (call it while no other thread
//! changes the tree).

use super::node::{Node, NODE_HEADER, NONE, SLOT};
use super::{BTree, TreeError};
use flashbuf_core::PageId;
use flashbuf_store::PageStore;

/// Shape and fill of a tree, as [`BTree::check_invariants`] found it.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct TreeStats {
    /// Levels (1 = the root is a leaf).
    pub height: u32,
    /// Leaf pages.
    pub leaves: u64,
    /// Internal pages.
    pub internal_nodes: u64,
    /// Entries (key/value pairs).
    pub entries: u64,
    /// Used bytes of the leaves over their usable bytes.
    pub leaf_fill: f64,
}

impl TreeStats {
    /// Pages of the tree.
    pub fn pages(&self) -> u64 {
        self.leaves + self.internal_nodes
    }
}

/// What the walk carries down: the key bounds of a subtree.
struct Bounds<'a> {
    lo: Option<&'a [u8]>,
    hi: Option<&'a [u8]>,
}

struct Walk {
    stats: TreeStats,
    used_leaf_bytes: u64,
    /// Leaves in key order, with their links.
    leaves: Vec<(PageId, u64)>,
}

impl<S: PageStore> BTree<'_, S> {
    /// Checks every node: header and tree id, slot and cell accounting (slots inside the
    /// page, cells inside the cell area and not overlapping, live bytes + garbage = cell
    /// area), keys strictly ascending, every key within the separator bounds its parent
    /// gives, children one level down, non-root leaves non-empty, every internal node with
    /// at least one separator (two children), and the leaf chain linking the leaves in key order, ending in
    /// none. Returns the tree's shape.
    pub fn check_invariants(&self) -> Result<TreeStats, String> {
        let mut w = Walk {
            stats: TreeStats::default(),
            used_leaf_bytes: 0,
            leaves: Vec::new(),
        };
        let root_level = {
            let g = self.pool.read(self.root).map_err(|e| e.to_string())?;
            let n = Node::new(g.data());
            if let Some(e) = n.header_error(self.id.0) {
                return Err(format!("root {}: {e}", self.root));
            }
            if !n.is_leaf() && n.count() == 0 {
                return Err(format!("internal root {} has no separator", self.root));
            }
            n.level()
        };
        let b = Bounds { lo: None, hi: None };
        self.check_node_rec(self.root, root_level, &b, &mut w)?;
        for pair in w.leaves.windows(2) {
            if pair[0].1 != pair[1].0 .0 {
                return Err(format!(
                    "leaf {} links to {} but the next leaf in key order is {}",
                    pair[0].0, pair[0].1, pair[1].0
                ));
            }
        }
        if let Some(last) = w.leaves.last() {
            if last.1 != NONE {
                return Err(format!("last leaf {} links to {}", last.0, last.1));
            }
        }
        w.stats.height = u32::from(root_level) + 1;
        let usable = (self.lim.usable as u64 * w.stats.leaves).max(1);
        w.stats.leaf_fill = w.used_leaf_bytes as f64 / usable as f64;
        Ok(w.stats)
    }

    /// Every page of the tree (root included), in depth-first order.
    pub fn pages(&self) -> Result<Vec<PageId>, TreeError> {
        let mut out = Vec::new();
        let mut stack = vec![self.root];
        while let Some(p) = stack.pop() {
            out.push(p);
            let g = self.pool.read(p)?;
            self.check_node(p, g.data())?;
            let n = Node::new(g.data());
            if !n.is_leaf() {
                stack.extend((0..=n.count()).map(|i| PageId(n.child_at(i))));
            }
        }
        Ok(out)
    }

    fn check_node_rec(
        &self,
        pid: PageId,
        level: u8,
        b: &Bounds<'_>,
        w: &mut Walk,
    ) -> Result<(), String> {
        let g = self.pool.read(pid).map_err(|e| format!("{pid}: {e}"))?;
        let n = Node::new(g.data());
        if let Some(e) = n.header_error(self.id.0) {
            return Err(format!("{pid}: {e}"));
        }
        if n.level() != level {
            return Err(format!(
                "{pid}: level {} where {level} was expected",
                n.level()
            ));
        }
        check_layout(pid, &n)?;
        for i in 0..n.count() {
            let k = n.key(i);
            if i > 0 && n.key(i - 1) >= k {
                return Err(format!("{pid}: keys {} and {i} out of order", i - 1));
            }
            if b.lo.is_some_and(|lo| k < lo) || b.hi.is_some_and(|hi| k >= hi) {
                return Err(format!(
                    "{pid}: key {i} ({k:?}) outside its parent's bounds"
                ));
            }
        }
        if n.is_leaf() {
            if pid != self.root && n.count() == 0 {
                return Err(format!("{pid}: empty non-root leaf"));
            }
            w.stats.leaves += 1;
            w.stats.entries += n.count() as u64;
            w.used_leaf_bytes += n.used() as u64;
            w.leaves.push((pid, n.link()));
            return Ok(());
        }
        if level == 0 {
            return Err(format!("{pid}: internal node at level 0"));
        }
        if pid != self.root && n.count() == 0 {
            return Err(format!("{pid}: non-root internal node with a single child"));
        }
        w.stats.internal_nodes += 1;
        let keys: Vec<Vec<u8>> = (0..n.count()).map(|i| n.key(i).to_vec()).collect();
        let children: Vec<PageId> = (0..=n.count()).map(|p| PageId(n.child_at(p))).collect();
        drop(g);
        for (p, &c) in children.iter().enumerate() {
            let cb = Bounds {
                lo: if p == 0 { b.lo } else { Some(&keys[p - 1]) },
                hi: if p == keys.len() {
                    b.hi
                } else {
                    Some(&keys[p])
                },
            };
            self.check_node_rec(c, level - 1, &cb, w)?;
        }
        Ok(())
    }
}

/// Slots inside the page, cells inside the cell area without overlap, live + garbage =
/// the cell area.
fn check_layout(pid: PageId, n: &Node<'_>) -> Result<(), String> {
    let len = n.bytes().len();
    let cs = n.cell_start();
    let mut spans: Vec<(usize, usize)> = Vec::with_capacity(n.count());
    for i in 0..n.count() {
        let o = n.cell_offset(i);
        if o < cs || o + 4 > len {
            return Err(format!(
                "{pid}: slot {i} points to {o}, outside {cs}..{len}"
            ));
        }
        let size = n.cell_size(i);
        if o + size > len {
            return Err(format!("{pid}: cell {i} at {o}+{size} ends beyond {len}"));
        }
        spans.push((o, o + size));
    }
    spans.sort_unstable();
    for s in spans.windows(2) {
        if s[0].1 > s[1].0 {
            return Err(format!("{pid}: cells {:?} and {:?} overlap", s[0], s[1]));
        }
    }
    let live: usize = spans.iter().map(|s| s.1 - s.0).sum();
    if live + n.garbage() != len - cs {
        return Err(format!(
            "{pid}: {live} live + {} garbage bytes != cell area of {}",
            n.garbage(),
            len - cs
        ));
    }
    debug_assert!(NODE_HEADER + n.count() * SLOT <= cs);
    Ok(())
}

/// Checks that every page `space` handed out is in exactly one of `trees` or on the free
/// list, and nowhere twice (no leak, no page shared). Call it while no other thread uses
/// the space; every tree of the space must be given.
pub fn check_space<S: PageStore>(
    space: &super::PageSpace,
    trees: &[&BTree<'_, S>],
) -> Result<(), String> {
    let Some(first) = trees.first() else {
        return Ok(());
    };
    let pool = first.pool;
    let usage = space.usage(pool).map_err(|e| e.to_string())?;
    let base = space.header().0;
    let mut owner: Vec<Option<String>> = vec![None; usage.allocated_pages as usize];
    owner[0] = Some("the space header".into());
    let mut claim = |p: PageId, who: String| -> Result<(), String> {
        let i = p
            .0
            .checked_sub(base)
            .filter(|&i| i < usage.allocated_pages)
            .ok_or_else(|| format!("{p} ({who}) was never handed out by the space at {base}"))?;
        match &owner[i as usize] {
            Some(o) => Err(format!("{p} belongs to {o} and to {who}")),
            None => {
                owner[i as usize] = Some(who);
                Ok(())
            }
        }
    };
    for t in trees {
        for p in t.pages().map_err(|e| e.to_string())? {
            claim(p, t.id().to_string())?;
        }
    }
    for p in space.free_pages(pool).map_err(|e| e.to_string())? {
        claim(p, "the free list".into())?;
    }
    match owner.iter().position(Option::is_none) {
        Some(i) => Err(format!(
            "page {} was handed out but is in no tree and not free (leaked)",
            base + i as u64
        )),
        None => Ok(()),
    }
}
