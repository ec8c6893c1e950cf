//! Slotted node pages: the byte layout of a B+-tree node inside a page's payload, read
//! accessors ([`Node`]) and the write functions that change only the bytes an operation
//! changes ([`PageMut`]).
//!
//! # Layout (offsets in the payload, after the pool's 32-byte page header)
//! ```text
//! 0   u16 magic 0xB7EE          12  u64 link: leaf → right sibling (NONE = u64::MAX),
//! 2   u8  kind (1 leaf,                   internal → leftmost child, free → next free
//!          2 internal, 3 free)   20  u32 tree id
//! 3   u8  level (0 = leaf)       24  u16 slots[count]: cell offsets, in key order
//! 4   u16 count                  ..  free space
//! 6   u16 cell_start             cell_start..payload_len: cells (and garbage)
//! 8   u16 garbage bytes
//! 10  u16 reserved
//! ```
//! A leaf cell is `klen u16, vlen u16, key, value`; an internal cell is
//! `klen u16, child u64, key`. Internal entry `i` holds the child for keys `>= key(i)`
//! (and `< key(i+1)`); `link` is the child for keys below `key(0)`. Bytes between
//! `cell_start` and the end that no slot references are counted in `garbage`; a
//! compaction packs the cells again. Integers are little-endian.
//!
//! Every write goes through [`PageMut`], whose implementation on the pool's write guard
//! records the range as dirty: inserting a slot dirties the new cell, the shifted tail of
//! the slot array and four header bytes, not the page.

mod edit;

pub use edit::*;

/// Marks a page as a node of some tree.
pub const NODE_MAGIC: u16 = 0xB7EE;
/// Bytes of the node header.
pub const NODE_HEADER: usize = 24;
/// "No page" in links.
pub const NONE: u64 = u64::MAX;
/// Bytes of a slot.
pub const SLOT: usize = 2;
/// Bytes of a leaf cell besides key and value.
pub const LEAF_CELL_OVERHEAD: usize = 4;
/// Bytes of an internal cell besides the key.
pub const INTERNAL_CELL_OVERHEAD: usize = 10;

pub(super) const O_MAGIC: usize = 0;
pub(super) const O_KIND: usize = 2;
pub(super) const O_LEVEL: usize = 3;
pub(super) const O_COUNT: usize = 4;
pub(super) const O_CELL_START: usize = 6;
pub(super) const O_GARBAGE: usize = 8;
pub(super) const O_LINK: usize = 12;
pub(super) const O_TREE: usize = 20;

/// What a page holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Keys and values.
    Leaf,
    /// Separator keys and child page ids.
    Internal,
    /// A page on the page space's free list.
    Free,
}

impl Kind {
    pub(super) fn code(self) -> u8 {
        match self {
            Kind::Leaf => 1,
            Kind::Internal => 2,
            Kind::Free => 3,
        }
    }
    fn from_code(c: u8) -> Option<Kind> {
        match c {
            1 => Some(Kind::Leaf),
            2 => Some(Kind::Internal),
            3 => Some(Kind::Free),
            _ => None,
        }
    }
}

#[inline]
pub(super) fn rd16(d: &[u8], o: usize) -> usize {
    u16::from_le_bytes([d[o], d[o + 1]]) as usize
}

#[inline]
pub(super) fn rd64(d: &[u8], o: usize) -> u64 {
    let mut b = [0u8; 8];
    b.copy_from_slice(&d[o..o + 8]);
    u64::from_le_bytes(b)
}

/// Read access to a node page's payload.
#[derive(Clone, Copy)]
pub struct Node<'a> {
    d: &'a [u8],
}

impl<'a> Node<'a> {
    /// A view of `payload` (no checks; see [`Node::header_error`]).
    pub fn new(payload: &'a [u8]) -> Self {
        Self { d: payload }
    }
    /// The payload bytes.
    pub fn bytes(&self) -> &'a [u8] {
        self.d
    }
    /// Why this page is not a node of kind leaf/internal of `tree`, if it is not.
    pub fn header_error(&self, tree: u32) -> Option<String> {
        if rd16(self.d, O_MAGIC) != NODE_MAGIC as usize {
            return Some("not a B+-tree node (bad magic)".into());
        }
        match self.kind() {
            Some(Kind::Leaf) | Some(Kind::Internal) => {}
            Some(Kind::Free) => return Some("a free page where a node was expected".into()),
            None => return Some(format!("unknown node kind {}", self.d[O_KIND])),
        }
        if self.tree() != tree {
            return Some(format!(
                "node of tree {} where tree {tree} was expected",
                self.tree()
            ));
        }
        let (n, cs, len) = (self.count(), self.cell_start(), self.d.len());
        if NODE_HEADER + n * SLOT > cs || cs > len {
            return Some(format!(
                "count {n} and cell start {cs} do not fit {len} bytes"
            ));
        }
        None
    }
    /// The kind, if the code is known.
    pub fn kind(&self) -> Option<Kind> {
        Kind::from_code(self.d[O_KIND])
    }
    /// Whether the node is a leaf.
    pub fn is_leaf(&self) -> bool {
        self.d[O_KIND] == Kind::Leaf.code()
    }
    /// Level above the leaves (0 = leaf).
    pub fn level(&self) -> u8 {
        self.d[O_LEVEL]
    }
    /// Number of entries.
    pub fn count(&self) -> usize {
        rd16(self.d, O_COUNT)
    }
    /// Offset of the lowest cell byte.
    pub fn cell_start(&self) -> usize {
        rd16(self.d, O_CELL_START)
    }
    /// Unreferenced bytes in the cell area.
    pub fn garbage(&self) -> usize {
        rd16(self.d, O_GARBAGE)
    }
    /// Right sibling (leaf), leftmost child (internal) or next free page (free).
    pub fn link(&self) -> u64 {
        rd64(self.d, O_LINK)
    }
    /// The tree the node belongs to.
    pub fn tree(&self) -> u32 {
        u32::from_le_bytes([
            self.d[O_TREE],
            self.d[O_TREE + 1],
            self.d[O_TREE + 2],
            self.d[O_TREE + 3],
        ])
    }
    /// Offset of entry `i`'s cell.
    pub fn cell_offset(&self, i: usize) -> usize {
        debug_assert!(i < self.count());
        rd16(self.d, NODE_HEADER + i * SLOT)
    }
    /// Size in bytes of entry `i`'s cell.
    pub fn cell_size(&self, i: usize) -> usize {
        let o = self.cell_offset(i);
        let k = rd16(self.d, o);
        if self.is_leaf() {
            LEAF_CELL_OVERHEAD + k + rd16(self.d, o + 2)
        } else {
            INTERNAL_CELL_OVERHEAD + k
        }
    }
    /// Entry `i`'s raw cell bytes.
    pub fn cell(&self, i: usize) -> &'a [u8] {
        let o = self.cell_offset(i);
        &self.d[o..o + self.cell_size(i)]
    }
    /// Entry `i`'s key.
    pub fn key(&self, i: usize) -> &'a [u8] {
        let o = self.cell_offset(i);
        let k = rd16(self.d, o);
        let at = o + if self.is_leaf() {
            LEAF_CELL_OVERHEAD
        } else {
            INTERNAL_CELL_OVERHEAD
        };
        &self.d[at..at + k]
    }
    /// Leaf entry `i`'s value.
    pub fn value(&self, i: usize) -> &'a [u8] {
        debug_assert!(self.is_leaf());
        let o = self.cell_offset(i);
        let (k, v) = (rd16(self.d, o), rd16(self.d, o + 2));
        let at = o + LEAF_CELL_OVERHEAD + k;
        &self.d[at..at + v]
    }
    /// Offset of leaf entry `i`'s value bytes.
    pub fn value_offset(&self, i: usize) -> usize {
        let o = self.cell_offset(i);
        o + LEAF_CELL_OVERHEAD + rd16(self.d, o)
    }
    /// Internal entry `i`'s child.
    pub fn child(&self, i: usize) -> u64 {
        debug_assert!(!self.is_leaf());
        rd64(self.d, self.cell_offset(i) + 2)
    }
    /// The child at position `p` (0 = leftmost, `p` = entry `p - 1`).
    pub fn child_at(&self, p: usize) -> u64 {
        if p == 0 {
            self.link()
        } else {
            self.child(p - 1)
        }
    }
    /// Binary search: `Ok(i)` if entry `i` has `key`, else `Err(i)`, where it would go.
    pub fn search(&self, key: &[u8]) -> Result<usize, usize> {
        let (mut lo, mut hi) = (0, self.count());
        while lo < hi {
            let mid = (lo + hi) / 2;
            match self.key(mid).cmp(key) {
                std::cmp::Ordering::Less => lo = mid + 1,
                std::cmp::Ordering::Greater => hi = mid,
                std::cmp::Ordering::Equal => return Ok(mid),
            }
        }
        Err(lo)
    }
    /// The child position (`0..=count`) whose subtree covers `key`.
    pub fn route(&self, key: &[u8]) -> usize {
        match self.search(key) {
            Ok(i) => i + 1,
            Err(i) => i,
        }
    }
    /// Contiguous free bytes between the slot array and the cells.
    pub fn free_contiguous(&self) -> usize {
        self.cell_start() - NODE_HEADER - self.count() * SLOT
    }
    /// Free bytes after a compaction.
    pub fn free_total(&self) -> usize {
        self.free_contiguous() + self.garbage()
    }
    /// Bytes used by slots and live cells.
    pub fn used(&self) -> usize {
        self.d.len() - NODE_HEADER - self.free_total()
    }
}
