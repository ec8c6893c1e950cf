//! A B+-tree over the [`BufferPool`]: slotted pages, variable-length keys and values,
//! splits and merges, range scans, many concurrent readers and writers.
//!
//! Sources: the B+-tree as in Comer, "The Ubiquitous B-Tree" (ACM Computing Surveys
//! 11(2), 1979), §2–3; latch coupling ("crabbing") and its optimistic variant as in
//! Bayer & Schkolnick, "Concurrency of Operations on B-Trees" (Acta Informatica 9, 1977),
//! solutions 2 and 3; slotted pages as in Gray & Reuter, *Transaction Processing* (1993),
//! §13.3.
//!
//! # Structure
//! - Pages come from a [`PageSpace`] (a range of page ids with an allocator and a catalog
//!   of trees); several trees share one space, one pool and one store.
//! - The **root never moves**: its page id is fixed when the tree is created and kept in
//!   the space's catalog. A root split moves the root's entries into two new pages and
//!   leaves the root with one separator; when an internal root is left with a single
//!   child, the child's entries move back into the root. Readers therefore start at a
//!   known page and need no meta-page latch.
//! - Leaves are linked left to right (scans); internal entry `i` leads to keys
//!   `>= key(i)` and `< key(i+1)`. A split separator is the first key of the right node.
//! - Splits are balanced by bytes, except an insert at the end of the rightmost node of
//!   its level, which leaves [`TreeConfig::append_fill`] of the left node used (like
//!   PostgreSQL's rightmost-page split). A node whose used bytes fall below a quarter of
//!   the usable space after a delete (or that lost its last entry) is merged with a
//!   sibling under the same parent when the two fit in one page, and otherwise shares the
//!   entries of both evenly with it (redistribution, Comer §2). With variable-length keys
//!   a redistribution may give the parent a longer separator than the one it replaces; a
//!   parent without room for it splits (a parent that was *safe* always has room). So
//!   non-root leaves are never empty and every internal node has at least two children:
//!   a merge that does not fit (the separator coming down overflows the merged node)
//!   never leaves a node with a single child whose only leaf could later empty.
//!
//! # Concurrency (latch coupling)
//! Every page access pins and latches a frame through the pool's guards. Latches are
//! taken top-down, and within a level left to right; the space header comes last.
//! - Readers (`get`, `scan`) couple read latches down the tree and, in scans, right along
//!   the leaf chain.
//! - Writers first try optimistically (Bayer–Schkolnick solution 3): read latches down to
//!   the leaf's parent, a write latch on the leaf; if the change fits without a split or
//!   merge it is made there. Otherwise they restart pessimistically (solution 2): write
//!   latches from the root, releasing the ancestors whenever a child is *safe* (it can
//!   absorb a child's split, a longer separator from a redistribution below it, and lose
//!   an entry without underflow).
//! - A merge or redistribution with the left sibling (the node is its parent's last
//!   child) releases the node, latches the left sibling, then the node again (left to
//!   right); the parent's write latch keeps the structure under it unchanged meanwhile.
//!
//! Every change goes through the write guard's recorded ranges and touches only the
//! bytes it changes ([`node`]).

mod check;
pub mod node;
mod read;
mod rebalance;
mod space;
mod write;

pub use check::{check_space, TreeStats};
pub use read::Entry;
pub use space::{PageSpace, SpaceUsage, TreeId};
pub use write::Change;

use flashbuf_core::page::HEADER_BYTES;
use flashbuf_core::PageId;
use flashbuf_pool::{BufferPool, PoolError};
use flashbuf_store::PageStore;
use node::{Kind, Node, NODE_HEADER, NONE, SLOT};
use thiserror::Error;

/// Errors of tree operations.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum TreeError {
    /// The pool (or the store under it) failed.
    #[error(transparent)]
    Pool(#[from] PoolError),
    /// An entry larger than a quarter of a node.
    #[error("entry of a {key_bytes}-byte key and a {value_bytes}-byte value exceeds the largest entry ({max_bytes} bytes with its overhead) on {page_bytes}-byte pages")]
    TooLarge {
        /// Key length.
        key_bytes: usize,
        /// Value length.
        value_bytes: usize,
        /// Largest `key + value + 6`.
        max_bytes: usize,
        /// Page size.
        page_bytes: usize,
    },
    /// The page space has no page left.
    #[error("page space at {first} ({pages} pages) is full")]
    SpaceFull {
        /// The space's header page.
        first: PageId,
        /// Its size.
        pages: u64,
    },
    /// A page does not hold what the tree expects.
    #[error("{pid}: {detail}")]
    Corrupt {
        /// The page.
        pid: PageId,
        /// What is wrong.
        detail: String,
    },
    /// A request the tree refuses (unknown tree, a scan update that changes a length...).
    #[error("{0}")]
    Invalid(String),
}

/// Options of a tree (not stored in the pages: pass the same ones when reopening).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TreeConfig {
    /// Fraction of the usable bytes an append split leaves in the left node (0.5..=1.0;
    /// default 0.9). 0.5 gives the half-empty leaves of a sequential load.
    pub append_fill: f64,
}

impl Default for TreeConfig {
    fn default() -> Self {
        Self { append_fill: 0.9 }
    }
}

/// Sizes derived from the page size.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Limits {
    /// Bytes for slots and cells.
    pub usable: usize,
    /// Largest leaf entry (cell + slot).
    pub max_leaf_entry: usize,
    /// Largest internal entry (cell + slot).
    pub max_internal_entry: usize,
    /// Nodes using fewer bytes than this are merged (or redistributed) with a sibling.
    pub min_fill: usize,
}

impl Limits {
    fn new(page_size: usize) -> Self {
        let payload = page_size - HEADER_BYTES;
        let usable = payload - NODE_HEADER;
        let max_leaf_entry = usable / 4;
        Self {
            usable,
            max_leaf_entry,
            // A separator is a leaf key: at most max_leaf_entry - 6 bytes.
            max_internal_entry: max_leaf_entry - node::LEAF_CELL_OVERHEAD - SLOT
                + node::INTERNAL_CELL_OVERHEAD
                + SLOT,
            min_fill: usable / 4,
        }
    }
}

/// A B+-tree in a [`PageSpace`] of a [`BufferPool`]. `Sync`: share it between threads.
///
/// ```
/// use flashbuf_core::PageId;
/// use flashbuf_device::MemDevice;
/// use flashbuf_pool::{policy::Lru, BufferPool};
/// use flashbuf_store::{DirectStore, DirectStoreConfig};
/// use flashbuf_workload::btree::{BTree, PageSpace, TreeConfig, TreeId};
///
/// let store = DirectStore::create(MemDevice::new(0), DirectStoreConfig::with_page_size(4096))?;
/// let pool = BufferPool::new(store, 64, Box::new(Lru::new(64)))?;
/// let space = PageSpace::create(&pool, PageId(0), 1 << 20)?;
/// let t = BTree::create(&pool, space, TreeId(1), TreeConfig::default())?;
/// t.insert(b"apple", b"red")?;
/// t.insert(b"banana", b"yellow")?;
/// assert_eq!(t.get(b"apple")?, Some(b"red".to_vec()));
/// let all = t.range(b"", None, usize::MAX)?;
/// assert_eq!(all.len(), 2);
/// t.check_invariants().map_err(|e| e.to_string())?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct BTree<'p, S: PageStore> {
    pool: &'p BufferPool<S>,
    space: PageSpace,
    id: TreeId,
    root: PageId,
    cfg: TreeConfig,
    lim: Limits,
}

impl<S: PageStore> std::fmt::Debug for BTree<'_, S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BTree")
            .field("id", &self.id)
            .field("root", &self.root)
            .field("space", &self.space)
            .finish()
    }
}

impl<'p, S: PageStore> BTree<'p, S> {
    /// Creates an empty tree `id` in `space`.
    pub fn create(
        pool: &'p BufferPool<S>,
        space: PageSpace,
        id: TreeId,
        cfg: TreeConfig,
    ) -> Result<Self, TreeError> {
        Self::check_config(pool, &cfg)?;
        if space.root_of(pool, id)?.is_some() {
            return Err(TreeError::Invalid(format!("{id} exists already")));
        }
        let root = space.alloc(pool)?;
        {
            let mut g = pool.write(root)?;
            node::write_fresh(&mut g, Kind::Leaf, 0, id.0, NONE, &[]);
        }
        space.register(pool, id, root)?;
        Ok(Self::with_root(pool, space, id, root, cfg))
    }

    /// Opens tree `id` of `space`.
    pub fn open(
        pool: &'p BufferPool<S>,
        space: PageSpace,
        id: TreeId,
        cfg: TreeConfig,
    ) -> Result<Self, TreeError> {
        Self::check_config(pool, &cfg)?;
        let root = space.root_of(pool, id)?.ok_or_else(|| {
            TreeError::Invalid(format!("{id} is not in the space at {}", space.header()))
        })?;
        let t = Self::with_root(pool, space, id, root, cfg);
        let g = pool.read(root)?;
        t.check_node(root, g.data())?;
        drop(g);
        Ok(t)
    }

    fn check_config(pool: &BufferPool<S>, cfg: &TreeConfig) -> Result<(), TreeError> {
        if !(0.5..=1.0).contains(&cfg.append_fill) {
            return Err(TreeError::Invalid(format!(
                "append_fill {} is not in [0.5, 1]",
                cfg.append_fill
            )));
        }
        if pool.page_size() < 1024 {
            return Err(TreeError::Invalid(format!(
                "pages of {} bytes are too small for a B+-tree (1 KiB at least)",
                pool.page_size()
            )));
        }
        Ok(())
    }

    fn with_root(
        pool: &'p BufferPool<S>,
        space: PageSpace,
        id: TreeId,
        root: PageId,
        cfg: TreeConfig,
    ) -> Self {
        Self {
            pool,
            space,
            id,
            root,
            cfg,
            lim: Limits::new(pool.page_size()),
        }
    }

    /// The tree's id.
    pub fn id(&self) -> TreeId {
        self.id
    }

    /// The root page (fixed for the tree's life).
    pub fn root(&self) -> PageId {
        self.root
    }

    /// The pool the tree lives in.
    pub fn pool(&self) -> &'p BufferPool<S> {
        self.pool
    }

    /// The largest `key.len() + value.len()` an entry may have.
    pub fn max_entry_bytes(&self) -> usize {
        self.lim.max_leaf_entry - node::LEAF_CELL_OVERHEAD - SLOT
    }

    fn check_entry(&self, key: &[u8], value: &[u8]) -> Result<(), TreeError> {
        if key.len() + value.len() > self.max_entry_bytes() {
            return Err(TreeError::TooLarge {
                key_bytes: key.len(),
                value_bytes: value.len(),
                max_bytes: self.lim.max_leaf_entry,
                page_bytes: self.pool.page_size(),
            });
        }
        Ok(())
    }

    /// `Err(Corrupt)` unless `payload` is a node of this tree.
    fn check_node(&self, pid: PageId, payload: &[u8]) -> Result<(), TreeError> {
        match Node::new(payload).header_error(self.id.0) {
            None => Ok(()),
            Some(detail) => Err(TreeError::Corrupt { pid, detail }),
        }
    }
}
