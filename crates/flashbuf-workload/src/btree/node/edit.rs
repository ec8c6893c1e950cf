//! Node writes: every function changes only the bytes its operation changes, through
//! [`PageMut`], whose implementation on the pool's write guard records them as dirty.

use super::{
    rd16, rd64, Kind, Node, INTERNAL_CELL_OVERHEAD, LEAF_CELL_OVERHEAD, NODE_HEADER, NODE_MAGIC,
    O_CELL_START, O_COUNT, O_GARBAGE, O_KIND, O_LEVEL, O_LINK, O_MAGIC, O_TREE, SLOT,
};
use flashbuf_pool::PageWriteGuard;
use flashbuf_store::PageStore;

/// Write access to one page's payload; every written range is recorded as dirty.
pub trait PageMut {
    /// The payload.
    fn bytes(&self) -> &[u8];
    /// Copies `src` to `offset` (the range becomes dirty).
    fn put(&mut self, offset: usize, src: &[u8]);
    /// Mutable bytes `offset..offset+len` (the range becomes dirty).
    fn bytes_mut(&mut self, offset: usize, len: usize) -> &mut [u8];
}

impl<S: PageStore> PageMut for PageWriteGuard<'_, S> {
    fn bytes(&self) -> &[u8] {
        self.data()
    }
    fn put(&mut self, offset: usize, src: &[u8]) {
        self.write(offset, src);
    }
    fn bytes_mut(&mut self, offset: usize, len: usize) -> &mut [u8] {
        self.data_mut_range(offset, len)
    }
}

/// Writes `new` over `offset..offset+new.len()`, dirtying only the span from the first to
/// the last byte that differs (nothing if none does).
pub fn put_diff(p: &mut impl PageMut, offset: usize, new: &[u8]) {
    let old = &p.bytes()[offset..offset + new.len()];
    let Some(first) = old.iter().zip(new).position(|(a, b)| a != b) else {
        return;
    };
    let last = old
        .iter()
        .zip(new)
        .rposition(|(a, b)| a != b)
        .unwrap_or(first);
    p.put(offset + first, &new[first..=last]);
}

fn put16(p: &mut impl PageMut, o: usize, v: usize) {
    debug_assert!(v <= u16::MAX as usize);
    put_diff(p, o, &(v as u16).to_le_bytes());
}

/// A leaf cell for `key` and `value`.
pub fn leaf_cell(key: &[u8], value: &[u8]) -> Vec<u8> {
    let mut c = Vec::with_capacity(LEAF_CELL_OVERHEAD + key.len() + value.len());
    c.extend_from_slice(&(key.len() as u16).to_le_bytes());
    c.extend_from_slice(&(value.len() as u16).to_le_bytes());
    c.extend_from_slice(key);
    c.extend_from_slice(value);
    c
}

/// An internal cell for `key` and `child`.
pub fn internal_cell(key: &[u8], child: u64) -> Vec<u8> {
    let mut c = Vec::with_capacity(INTERNAL_CELL_OVERHEAD + key.len());
    c.extend_from_slice(&(key.len() as u16).to_le_bytes());
    c.extend_from_slice(&child.to_le_bytes());
    c.extend_from_slice(key);
    c
}

/// The key of a raw cell of a node of kind `leaf` (true) or internal.
pub fn cell_key(cell: &[u8], leaf: bool) -> &[u8] {
    let k = rd16(cell, 0);
    let at = if leaf {
        LEAF_CELL_OVERHEAD
    } else {
        INTERNAL_CELL_OVERHEAD
    };
    &cell[at..at + k]
}

/// The child of a raw internal cell.
pub fn cell_child(cell: &[u8]) -> u64 {
    rd64(cell, 2)
}

/// Writes a whole node: header, slots and `cells` packed at the end. Bytes between the
/// slots and the cells are left as they are (free space).
pub fn write_fresh(
    p: &mut impl PageMut,
    kind: Kind,
    level: u8,
    tree: u32,
    link: u64,
    cells: &[Vec<u8>],
) {
    let len = p.bytes().len();
    let total: usize = cells.iter().map(Vec::len).sum();
    let cell_start = len - total;
    debug_assert!(
        NODE_HEADER + cells.len() * SLOT <= cell_start,
        "cells overflow"
    );
    let mut hdr = [0u8; NODE_HEADER];
    hdr[O_MAGIC..O_MAGIC + 2].copy_from_slice(&NODE_MAGIC.to_le_bytes());
    hdr[O_KIND] = kind.code();
    hdr[O_LEVEL] = level;
    hdr[O_COUNT..O_COUNT + 2].copy_from_slice(&(cells.len() as u16).to_le_bytes());
    hdr[O_CELL_START..O_CELL_START + 2].copy_from_slice(&(cell_start as u16).to_le_bytes());
    hdr[O_LINK..O_LINK + 8].copy_from_slice(&link.to_le_bytes());
    hdr[O_TREE..O_TREE + 4].copy_from_slice(&tree.to_le_bytes());
    put_diff(p, 0, &hdr);
    let mut slots = Vec::with_capacity(cells.len() * SLOT);
    let mut area = Vec::with_capacity(total);
    let mut at = cell_start;
    // Cells are laid out in key order from cell_start upwards.
    for c in cells {
        slots.extend_from_slice(&(at as u16).to_le_bytes());
        area.extend_from_slice(c);
        at += c.len();
    }
    put_diff(p, NODE_HEADER, &slots);
    put_diff(p, cell_start, &area);
}

/// Marks the page free, linking it to `next` (only the header changes).
pub fn write_free(p: &mut impl PageMut, tree: u32, next: u64) {
    let len = p.bytes().len();
    let mut hdr = [0u8; NODE_HEADER];
    hdr[O_MAGIC..O_MAGIC + 2].copy_from_slice(&NODE_MAGIC.to_le_bytes());
    hdr[O_KIND] = Kind::Free.code();
    hdr[O_CELL_START..O_CELL_START + 2].copy_from_slice(&(len as u16).to_le_bytes());
    hdr[O_LINK..O_LINK + 8].copy_from_slice(&next.to_le_bytes());
    hdr[O_TREE..O_TREE + 4].copy_from_slice(&tree.to_le_bytes());
    put_diff(p, 0, &hdr);
}

/// Sets the link field.
pub fn set_link(p: &mut impl PageMut, link: u64) {
    put_diff(p, O_LINK, &link.to_le_bytes());
}

/// Packs the cells at the end of the page (garbage becomes free space). Only the span of
/// bytes that moved is written.
pub fn compact(p: &mut impl PageMut) {
    let n = Node::new(p.bytes());
    if n.garbage() == 0 {
        return;
    }
    let cells: Vec<Vec<u8>> = (0..n.count()).map(|i| n.cell(i).to_vec()).collect();
    // Keep the existing order of cells in memory where possible: lay them out by their
    // current offsets (highest first), so that cells already at the end stay in place.
    let mut order: Vec<usize> = (0..cells.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(n.cell_offset(i)));
    let len = n.bytes().len();
    let mut offsets = vec![0usize; cells.len()];
    let mut at = len;
    for &i in &order {
        at -= cells[i].len();
        offsets[i] = at;
    }
    let cell_start = at;
    let mut area = vec![0u8; len - cell_start];
    for (i, c) in cells.iter().enumerate() {
        let o = offsets[i] - cell_start;
        area[o..o + c.len()].copy_from_slice(c);
    }
    // Bytes of the old area below cell_start are free space now; keep them unchanged.
    put_diff(p, cell_start, &area);
    let slots: Vec<u8> = offsets
        .iter()
        .flat_map(|&o| (o as u16).to_le_bytes())
        .collect();
    put_diff(p, NODE_HEADER, &slots);
    put16(p, O_CELL_START, cell_start);
    put16(p, O_GARBAGE, 0);
}

/// Inserts `cell` as entry `i`; compacts first if the contiguous space is short.
///
/// # Panics
/// If the cell does not fit even after compaction (callers check [`Node::free_total`]).
pub fn insert_cell(p: &mut impl PageMut, i: usize, cell: &[u8]) {
    if Node::new(p.bytes()).free_contiguous() < cell.len() + SLOT {
        compact(p);
    }
    let n = Node::new(p.bytes());
    let count = n.count();
    assert!(
        n.free_contiguous() >= cell.len() + SLOT,
        "insert of a {}-byte cell into a node with {} free bytes",
        cell.len(),
        n.free_total()
    );
    debug_assert!(i <= count);
    let at = n.cell_start() - cell.len();
    p.put(at, cell);
    // Shift slots i..count one to the right and write the new slot.
    let s = NODE_HEADER + i * SLOT;
    let region = p.bytes_mut(s, (count - i + 1) * SLOT);
    region.copy_within(0..(count - i) * SLOT, SLOT);
    region[..SLOT].copy_from_slice(&(at as u16).to_le_bytes());
    put16(p, O_COUNT, count + 1);
    put16(p, O_CELL_START, at);
}

/// Appends `cells` (all greater than the node's keys) after its last entry; compacts
/// first if needed.
pub fn append_cells(p: &mut impl PageMut, cells: &[Vec<u8>]) {
    if cells.is_empty() {
        return;
    }
    let total: usize = cells.iter().map(Vec::len).sum();
    if Node::new(p.bytes()).free_contiguous() < total + cells.len() * SLOT {
        compact(p);
    }
    let n = Node::new(p.bytes());
    let count = n.count();
    assert!(
        n.free_contiguous() >= total + cells.len() * SLOT,
        "append of {total} bytes into a node with {} free bytes",
        n.free_total()
    );
    let start = n.cell_start() - total;
    let mut area = Vec::with_capacity(total);
    let mut slots = Vec::with_capacity(cells.len() * SLOT);
    for c in cells {
        slots.extend_from_slice(&((start + area.len()) as u16).to_le_bytes());
        area.extend_from_slice(c);
    }
    p.put(start, &area);
    p.put(NODE_HEADER + count * SLOT, &slots);
    put16(p, O_COUNT, count + cells.len());
    put16(p, O_CELL_START, start);
}

/// Removes entry `i`. Its cell becomes garbage (or free space, if it was the lowest).
pub fn remove(p: &mut impl PageMut, i: usize) {
    let n = Node::new(p.bytes());
    let count = n.count();
    debug_assert!(i < count);
    let (off, size) = (n.cell_offset(i), n.cell_size(i));
    let (cs, garbage) = (n.cell_start(), n.garbage());
    if count - i > 1 {
        let s = NODE_HEADER + i * SLOT;
        let region = p.bytes_mut(s, (count - i) * SLOT);
        region.copy_within(SLOT.., 0);
    }
    put16(p, O_COUNT, count - 1);
    if off == cs {
        put16(p, O_CELL_START, cs + size);
    } else {
        put16(p, O_GARBAGE, garbage + size);
    }
}

/// Keeps entries `0..keep`; the cells of the others become garbage (only the header
/// changes).
pub fn truncate(p: &mut impl PageMut, keep: usize) {
    let n = Node::new(p.bytes());
    let count = n.count();
    debug_assert!(keep <= count);
    let dropped: usize = (keep..count).map(|i| n.cell_size(i)).sum();
    let garbage = n.garbage();
    put16(p, O_COUNT, keep);
    put16(p, O_GARBAGE, garbage + dropped);
}

/// Replaces leaf entry `i`'s value. Same length: only the differing bytes are written;
/// shorter: in place, the tail becomes garbage; longer: a new cell (compacting if needed).
///
/// # Panics
/// If a longer value does not fit (callers check [`fits_replace`]).
pub fn replace_value(p: &mut impl PageMut, i: usize, value: &[u8]) {
    let n = Node::new(p.bytes());
    let old = n.value(i);
    if value.len() <= old.len() {
        let off = n.cell_offset(i);
        let shrink = old.len() - value.len();
        let vo = n.value_offset(i);
        if shrink > 0 {
            let g = n.garbage();
            put16(p, off + 2, value.len());
            put16(p, O_GARBAGE, g + shrink);
        }
        put_diff(p, vo, value);
        return;
    }
    let key = n.key(i).to_vec();
    let cell = leaf_cell(&key, value);
    if n.free_contiguous() >= cell.len() {
        let at = n.cell_start() - cell.len();
        let (old_size, g) = (n.cell_size(i), n.garbage());
        p.put(at, &cell);
        p.put(NODE_HEADER + i * SLOT, &(at as u16).to_le_bytes());
        put16(p, O_CELL_START, at);
        put16(p, O_GARBAGE, g + old_size);
    } else {
        remove(p, i);
        insert_cell(p, i, &cell);
    }
}

/// Whether leaf entry `i`'s value can become `new_len` bytes long without a split.
pub fn fits_replace(n: &Node<'_>, i: usize, new_len: usize) -> bool {
    let old = n.value(i).len();
    new_len <= old || new_len - old <= n.free_total()
}

#[cfg(test)]
pub(crate) mod tests {
    use super::super::NONE;
    use super::*;
    use flashbuf_core::DirtyRanges;

    /// A page in memory that records its dirty ranges, like the pool's guard.
    pub(crate) struct VecPage {
        pub data: Vec<u8>,
        pub dirty: DirtyRanges,
    }

    impl VecPage {
        pub(crate) fn new(len: usize) -> Self {
            Self {
                data: vec![0; len],
                dirty: DirtyRanges::new(),
            }
        }
    }

    impl PageMut for VecPage {
        fn bytes(&self) -> &[u8] {
            &self.data
        }
        fn put(&mut self, offset: usize, src: &[u8]) {
            self.dirty.add(offset, src.len());
            self.data[offset..offset + src.len()].copy_from_slice(src);
        }
        fn bytes_mut(&mut self, offset: usize, len: usize) -> &mut [u8] {
            self.dirty.add(offset, len);
            &mut self.data[offset..offset + len]
        }
    }

    fn keys(p: &VecPage) -> Vec<Vec<u8>> {
        let n = Node::new(&p.data);
        (0..n.count()).map(|i| n.key(i).to_vec()).collect()
    }

    #[test]
    fn insert_dirties_only_cell_slots_and_header() {
        let mut p = VecPage::new(4064);
        write_fresh(&mut p, Kind::Leaf, 0, 7, NONE, &[]);
        for k in [10u8, 30, 50, 70] {
            let c = leaf_cell(&[k], &[k; 40]);
            let i = Node::new(&p.data).search(&[k]).unwrap_err();
            insert_cell(&mut p, i, &c);
        }
        p.dirty.clear();
        let c = leaf_cell(&[20], &[1; 40]);
        insert_cell(&mut p, 1, &c);
        assert_eq!(
            keys(&p),
            vec![vec![10], vec![20], vec![30], vec![50], vec![70]]
        );
        // Cell (46 bytes) + 4 shifted slots (8 bytes) + count and cell start (4 bytes).
        assert!(p.dirty.total_bytes() <= 46 + 8 + 4, "{:?}", p.dirty);
        assert_eq!(Node::new(&p.data).header_error(7), None);
    }

    #[test]
    fn remove_truncate_compact_keep_accounting() {
        let mut p = VecPage::new(1024);
        write_fresh(&mut p, Kind::Leaf, 0, 1, NONE, &[]);
        for k in 0u8..12 {
            let c = leaf_cell(&[k], &vec![k; usize::from(k) * 3]);
            insert_cell(&mut p, usize::from(k), &c);
        }
        remove(&mut p, 3);
        remove(&mut p, 0);
        truncate(&mut p, 8);
        let before = Node::new(&p.data).free_total();
        assert!(Node::new(&p.data).garbage() > 0);
        compact(&mut p);
        let n = Node::new(&p.data);
        assert_eq!(n.garbage(), 0);
        assert_eq!(n.free_total(), before);
        assert_eq!(n.count(), 8);
        let want: Vec<u8> = [1u8, 2, 4, 5, 6, 7, 8, 9].to_vec();
        for (i, k) in want.iter().enumerate() {
            assert_eq!(n.key(i), &[*k]);
            assert_eq!(n.value(i), &vec![*k; usize::from(*k) * 3][..]);
        }
    }

    #[test]
    fn replace_value_same_length_writes_the_diff_only() {
        let mut p = VecPage::new(4064);
        write_fresh(
            &mut p,
            Kind::Leaf,
            0,
            1,
            NONE,
            &[leaf_cell(b"k", &[0u8; 100])],
        );
        p.dirty.clear();
        let mut v = [0u8; 100];
        v[40] = 1;
        v[43] = 2;
        replace_value(&mut p, 0, &v);
        assert_eq!(p.dirty.total_bytes(), 4);
        assert_eq!(Node::new(&p.data).value(0), &v);
        replace_value(&mut p, 0, &[9u8; 300]);
        replace_value(&mut p, 0, &[8u8; 10]);
        let n = Node::new(&p.data);
        assert_eq!(n.value(0), &[8u8; 10]);
        assert_eq!(n.used(), SLOT + LEAF_CELL_OVERHEAD + 1 + 10);
    }
}
