//! A page space: a range of page ids that trees allocate their pages from, with a free
//! list and a catalog of the trees (several trees = several tables in one pool and store).
//!
//! The space's first page is its header; the others are handed out in order (a high-water
//! mark) or from the free list, which is threaded through freed pages (`kind = free`,
//! `link` = next). The catalog maps a [`TreeId`] to the tree's root page; a root never
//! moves (see [`super::BTree`]), so it is written once, when the tree is created.
//!
//! # Header layout (payload offsets)
//! ```text
//! 0 u32 magic "FBSP"   8 u64 header page   16 u64 end (exclusive)   24 u64 next unused
//! 32 u64 free head     40 u64 free count   48 u16 trees   64.. trees × (u32 id, u64 root)
//! ```
//!
//! # Latch order
//! The header latch is always the last one a thread takes (after any tree node latches),
//! and is held only while the header changes. [`PageSpace::alloc`] latches the head of
//! the free list after the header (to read its link); a page is latched by the thread
//! that frees it until [`PageSpace::free`] returns, and that thread takes no other latch
//! meanwhile, so the allocator's wait always ends.

use super::node::{self, rd64, Kind, Node, NONE};
use super::TreeError;
use flashbuf_core::PageId;
use flashbuf_pool::{BufferPool, PageWriteGuard};
use flashbuf_store::PageStore;
use std::fmt;

const MAGIC: &[u8; 4] = b"FBSP";
const O_HEADER: usize = 8;
const O_END: usize = 16;
const O_NEXT: usize = 24;
const O_FREE_HEAD: usize = 32;
const O_FREE_COUNT: usize = 40;
const O_TREES: usize = 48;
const O_CATALOG: usize = 64;
const ENTRY: usize = 12;

/// A tree's name in a page space's catalog.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TreeId(pub u32);

impl fmt::Display for TreeId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "tree {}", self.0)
    }
}

/// How the pages of a space are used.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SpaceUsage {
    /// Pages in the space, header included.
    pub capacity_pages: u64,
    /// Pages handed out so far (header included): the high-water mark.
    pub allocated_pages: u64,
    /// Pages on the free list.
    pub free_pages: u64,
}

/// A range of page ids with a header page; `Copy`, a handle only (the state is in the
/// header page, in the pool).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PageSpace {
    header: PageId,
}

fn put64<S: PageStore>(g: &mut PageWriteGuard<'_, S>, o: usize, v: u64) {
    node::put_diff(g, o, &v.to_le_bytes());
}

impl PageSpace {
    /// Formats pages `first..first + pages` as a new space (the header at `first`).
    pub fn create<S: PageStore>(
        pool: &BufferPool<S>,
        first: PageId,
        pages: u64,
    ) -> Result<Self, TreeError> {
        let end = first
            .0
            .checked_add(pages)
            .filter(|_| pages >= 2)
            .ok_or_else(|| TreeError::Invalid(format!("page space of {pages} pages at {first}")))?;
        let mut g = pool.write(first)?;
        let mut hdr = [0u8; O_CATALOG];
        hdr[..4].copy_from_slice(MAGIC);
        hdr[O_HEADER..O_HEADER + 8].copy_from_slice(&first.0.to_le_bytes());
        hdr[O_END..O_END + 8].copy_from_slice(&end.to_le_bytes());
        hdr[O_NEXT..O_NEXT + 8].copy_from_slice(&(first.0 + 1).to_le_bytes());
        hdr[O_FREE_HEAD..O_FREE_HEAD + 8].copy_from_slice(&NONE.to_le_bytes());
        node::put_diff(&mut g, 0, &hdr);
        Ok(Self { header: first })
    }

    /// Opens the space whose header is at `header`.
    pub fn open<S: PageStore>(pool: &BufferPool<S>, header: PageId) -> Result<Self, TreeError> {
        let g = pool.read(header)?;
        let d = g.data();
        if &d[..4] != MAGIC || rd64(d, O_HEADER) != header.0 {
            return Err(TreeError::Corrupt {
                pid: header,
                detail: "not the header of a page space".into(),
            });
        }
        Ok(Self { header })
    }

    /// The header page.
    pub fn header(&self) -> PageId {
        self.header
    }

    /// The root of tree `id`, if the catalog has it.
    pub fn root_of<S: PageStore>(
        &self,
        pool: &BufferPool<S>,
        id: TreeId,
    ) -> Result<Option<PageId>, TreeError> {
        let g = pool.read(self.header)?;
        Ok(catalog(g.data())
            .into_iter()
            .find(|e| e.0 == id)
            .map(|e| e.1))
    }

    /// Every tree of the catalog with its root.
    pub fn trees<S: PageStore>(
        &self,
        pool: &BufferPool<S>,
    ) -> Result<Vec<(TreeId, PageId)>, TreeError> {
        let g = pool.read(self.header)?;
        Ok(catalog(g.data()))
    }

    /// Adds tree `id` with root `root` to the catalog.
    pub(crate) fn register<S: PageStore>(
        &self,
        pool: &BufferPool<S>,
        id: TreeId,
        root: PageId,
    ) -> Result<(), TreeError> {
        let mut g = pool.write(self.header)?;
        let d = g.data();
        let n = u16::from_le_bytes([d[O_TREES], d[O_TREES + 1]]) as usize;
        if catalog(d).iter().any(|e| e.0 == id) {
            return Err(TreeError::Invalid(format!("{id} exists already")));
        }
        let at = O_CATALOG + n * ENTRY;
        if at + ENTRY > d.len() {
            return Err(TreeError::Invalid(format!(
                "the catalog of the space at {} is full ({n} trees)",
                self.header
            )));
        }
        let mut e = [0u8; ENTRY];
        e[..4].copy_from_slice(&id.0.to_le_bytes());
        e[4..].copy_from_slice(&root.0.to_le_bytes());
        g.write(at, &e);
        g.write(O_TREES, &((n + 1) as u16).to_le_bytes());
        Ok(())
    }

    /// A page for tree use: from the free list, else the next unused one.
    pub fn alloc<S: PageStore>(&self, pool: &BufferPool<S>) -> Result<PageId, TreeError> {
        let mut g = pool.write(self.header)?;
        let d = g.data();
        let head = rd64(d, O_FREE_HEAD);
        if head != NONE {
            let next = {
                let f = pool.read(PageId(head))?;
                let n = Node::new(f.data());
                if n.kind() != Some(Kind::Free) {
                    return Err(TreeError::Corrupt {
                        pid: PageId(head),
                        detail: "head of the free list is not a free page".into(),
                    });
                }
                n.link()
            };
            let count = rd64(g.data(), O_FREE_COUNT);
            put64(&mut g, O_FREE_HEAD, next);
            put64(&mut g, O_FREE_COUNT, count.saturating_sub(1));
            return Ok(PageId(head));
        }
        let (next, end) = (rd64(d, O_NEXT), rd64(d, O_END));
        if next >= end {
            return Err(TreeError::SpaceFull {
                first: self.header,
                pages: end - self.header.0,
            });
        }
        put64(&mut g, O_NEXT, next + 1);
        Ok(PageId(next))
    }

    /// Puts the page held by `page` on the free list and releases it.
    pub fn free<S: PageStore>(
        &self,
        pool: &BufferPool<S>,
        mut page: PageWriteGuard<'_, S>,
        tree: u32,
    ) -> Result<(), TreeError> {
        let pid = page.page_id();
        let mut g = pool.write(self.header)?;
        let (head, count) = (rd64(g.data(), O_FREE_HEAD), rd64(g.data(), O_FREE_COUNT));
        node::write_free(&mut page, tree, head);
        put64(&mut g, O_FREE_HEAD, pid.0);
        put64(&mut g, O_FREE_COUNT, count + 1);
        drop(g);
        drop(page);
        Ok(())
    }

    /// Pages handed out, free and in all.
    pub fn usage<S: PageStore>(&self, pool: &BufferPool<S>) -> Result<SpaceUsage, TreeError> {
        let g = pool.read(self.header)?;
        let d = g.data();
        Ok(SpaceUsage {
            capacity_pages: rd64(d, O_END) - self.header.0,
            allocated_pages: rd64(d, O_NEXT) - self.header.0,
            free_pages: rd64(d, O_FREE_COUNT),
        })
    }

    /// The pages of the free list, in list order (call while no other thread uses the
    /// space).
    pub fn free_pages<S: PageStore>(&self, pool: &BufferPool<S>) -> Result<Vec<PageId>, TreeError> {
        let (mut p, count) = {
            let g = pool.read(self.header)?;
            (rd64(g.data(), O_FREE_HEAD), rd64(g.data(), O_FREE_COUNT))
        };
        let mut out = Vec::new();
        while p != NONE {
            if out.len() as u64 > count {
                return Err(TreeError::Corrupt {
                    pid: self.header,
                    detail: format!("free list longer than its count {count} (a cycle?)"),
                });
            }
            let g = pool.read(PageId(p))?;
            let n = Node::new(g.data());
            if n.kind() != Some(Kind::Free) {
                return Err(TreeError::Corrupt {
                    pid: PageId(p),
                    detail: "page on the free list is not free".into(),
                });
            }
            out.push(PageId(p));
            p = n.link();
        }
        if out.len() as u64 != count {
            return Err(TreeError::Corrupt {
                pid: self.header,
                detail: format!("free list has {} pages, its count says {count}", out.len()),
            });
        }
        Ok(out)
    }
}

fn catalog(d: &[u8]) -> Vec<(TreeId, PageId)> {
    let n = u16::from_le_bytes([d[O_TREES], d[O_TREES + 1]]) as usize;
    (0..n)
        .map(|i| {
            let at = O_CATALOG + i * ENTRY;
            let id = u32::from_le_bytes([d[at], d[at + 1], d[at + 2], d[at + 3]]);
            (TreeId(id), PageId(rd64(d, at + 4)))
        })
        .collect()
}
