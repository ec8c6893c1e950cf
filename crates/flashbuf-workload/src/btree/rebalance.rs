//! After a delete: underfull nodes merged with a sibling when the two fit in one node, or
//! their entries redistributed with the sibling when they do not (Comer 1979, §2: "if the
//! two nodes together hold too many entries for one, the entries are redistributed
//! evenly"), going up the held path; the root collapsed when it is left with one child.

use super::node::{self, Node, SLOT};
use super::write::{Level, Pending};
use super::{BTree, TreeError};
use flashbuf_core::PageId;
use flashbuf_pool::PageWriteGuard;
use flashbuf_store::PageStore;

/// What rebalancing an underfull child did to its parent.
enum Fix {
    /// Nothing more to do: the parent kept its entries (a redistribution replaced its
    /// separator in place, or the child had no sibling).
    Done,
    /// The child merged with a sibling: the parent lost an entry and may be underfull.
    Merged,
    /// A redistribution removed the parent's old separator and the new, longer one does
    /// not fit: the parent takes it with a split.
    SplitParent(Pending),
}

impl<'p, S: PageStore> BTree<'p, S> {
    /// After a delete from `g`: merges or redistributes underfull nodes up the held path.
    pub(super) fn rebalance_up(
        &self,
        mut path: Vec<Level<'p, S>>,
        mut g: PageWriteGuard<'p, S>,
    ) -> Result<(), TreeError> {
        loop {
            let n = Node::new(g.data());
            if g.page_id() == self.root {
                if !n.is_leaf() && n.count() == 0 {
                    self.collapse_root(g)?;
                }
                return Ok(());
            }
            if n.used() >= self.lim.min_fill && n.count() > 0 {
                return Ok(());
            }
            let Some(mut parent) = path.pop() else {
                debug_assert!(n.count() > 0, "a safe node was emptied");
                return Ok(());
            };
            match self.rebalance_child(&mut parent.g, parent.pos, g)? {
                Fix::Done => return Ok(()),
                Fix::Merged => g = parent.g,
                // The parent was not safe (a safe one has room for any separator), so
                // its own parent is still on the path.
                Fix::SplitParent(p) => {
                    return self.insert_up(path, parent.g, parent.rightmost, p);
                }
            }
        }
    }

    /// Merges or redistributes the child at `pos` of `parent` (latched in `child`) with a
    /// sibling. Every child-level latch is released on return.
    fn rebalance_child(
        &self,
        parent: &mut PageWriteGuard<'p, S>,
        pos: usize,
        child: PageWriteGuard<'p, S>,
    ) -> Result<Fix, TreeError> {
        let pn = Node::new(parent.data());
        if pos < pn.count() {
            let right = PageId(pn.child_at(pos + 1));
            let rg = self.pool.write(right)?;
            self.check_node(right, rg.data())?;
            let mut child = child;
            self.rebalance_pair(parent, pos, &mut child, rg)
        } else if pos > 0 {
            // The last child pairs with its left sibling: latch left to right.
            let left = PageId(pn.child_at(pos - 1));
            let cpid = child.page_id();
            drop(child);
            let mut lg = self.pool.write(left)?;
            self.check_node(left, lg.data())?;
            let cg = self.pool.write(cpid)?;
            self.rebalance_pair(parent, pos - 1, &mut lg, cg)
        } else {
            // An only child: the parent is a non-root internal node without separators,
            // which rebalancing never leaves behind.
            Err(TreeError::Corrupt {
                pid: parent.page_id(),
                detail: "an internal node with a single child".into(),
            })
        }
    }

    /// Siblings `left` and `right` under `parent`'s separator `sep`: the entries of
    /// `right` (and, for internal nodes, the separator) move into `left` if they fit, and
    /// `right` is freed; otherwise the entries are redistributed between the two.
    fn rebalance_pair(
        &self,
        parent: &mut PageWriteGuard<'p, S>,
        sep: usize,
        left: &mut PageWriteGuard<'p, S>,
        mut right: PageWriteGuard<'p, S>,
    ) -> Result<Fix, TreeError> {
        let (ln, rn, pn) = (
            Node::new(left.data()),
            Node::new(right.data()),
            Node::new(parent.data()),
        );
        let leaf = ln.is_leaf();
        // The entries of both nodes in key order; for internal nodes the separator comes
        // down between them, leading to the right node's leftmost child.
        let mut cells: Vec<Vec<u8>> = (0..ln.count()).map(|i| ln.cell(i).to_vec()).collect();
        if !leaf {
            cells.push(node::internal_cell(pn.key(sep), rn.link()));
        }
        cells.extend((0..rn.count()).map(|i| rn.cell(i).to_vec()));
        let boundary = ln.count();
        let extra: usize = cells[boundary..].iter().map(|c| c.len() + SLOT).sum();
        if ln.used() + extra <= self.lim.usable {
            let rlink = rn.link();
            node::append_cells(left, &cells[boundary..]);
            if leaf {
                node::set_link(left, rlink);
            }
            node::remove(parent, sep);
            self.space.free(self.pool, right, self.id.0)?;
            return Ok(Fix::Merged);
        }
        let s = self.split_point(&cells, leaf, false);
        if s == boundary {
            return Ok(Fix::Done);
        }
        Self::move_entries(left, &mut right, &cells, boundary, s, leaf);
        let new_sep = node::internal_cell(node::cell_key(&cells[s], leaf), right.page_id().0);
        let pn = Node::new(parent.data());
        let room = pn.free_total() + pn.cell_size(sep);
        node::remove(parent, sep);
        if new_sep.len() <= room {
            node::insert_cell(parent, sep, &new_sep);
            return Ok(Fix::Done);
        }
        Ok(Fix::SplitParent(Pending {
            idx: sep,
            cell: new_sep,
            replace: false,
        }))
    }

    /// Makes `left` hold `cells[..s]` and `right` the rest (internal nodes: `cells[s]`
    /// goes up, its child becoming `right`'s leftmost), where `left` now holds
    /// `cells[..boundary]`. Only the entries that move are written.
    fn move_entries(
        left: &mut PageWriteGuard<'p, S>,
        right: &mut PageWriteGuard<'p, S>,
        cells: &[Vec<u8>],
        boundary: usize,
        s: usize,
        leaf: bool,
    ) {
        // Index in `cells` of the right node's first entry, before and after.
        let (right_old, right_new) = if leaf {
            (boundary, s)
        } else {
            (boundary + 1, s + 1)
        };
        if s > boundary {
            // Entries move left: the right node's first ones (and the old separator).
            node::append_cells(left, &cells[boundary..s]);
            for _ in right_old..right_new {
                node::remove(right, 0);
            }
        } else {
            // Entries move right: the left node's last ones (and the old separator).
            node::truncate(left, s);
            for (i, c) in cells[right_new..right_old].iter().enumerate() {
                node::insert_cell(right, i, c);
            }
        }
        if !leaf {
            node::set_link(right, node::cell_child(&cells[s]));
        }
    }

    /// The root has one child left: its entries move up into the root.
    fn collapse_root(&self, mut g: PageWriteGuard<'p, S>) -> Result<(), TreeError> {
        let child = PageId(Node::new(g.data()).link());
        let cg = self.pool.write(child)?;
        self.check_node(child, cg.data())?;
        let cn = Node::new(cg.data());
        let cells: Vec<Vec<u8>> = (0..cn.count()).map(|i| cn.cell(i).to_vec()).collect();
        let kind = if cn.is_leaf() {
            node::Kind::Leaf
        } else {
            node::Kind::Internal
        };
        node::write_fresh(&mut g, kind, cn.level(), self.id.0, cn.link(), &cells);
        drop(g);
        self.space.free(self.pool, cg, self.id.0)
    }
}
