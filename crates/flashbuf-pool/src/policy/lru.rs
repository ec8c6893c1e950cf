//! LRU: evict the least recently referenced page.
//!
//! The baseline of every paper (CFDC §4, FD-Buffer §5): one recency list over all frames,
//! O(1) per operation. Dirty pages are written back when evicted; LRU does not look at
//! dirtiness at all.

use super::clustering::ClusteringSpec;
use super::list::{Links, List};
use super::reference::NaiveLru;
use super::registry::{PolicyContext, PolicyFactory};
use super::{Access, Policy, Victim};
use flashbuf_core::config::Options;
use flashbuf_core::{ConfigError, FrameId, PageId};

/// Least-recently-used replacement.
///
/// ```
/// use flashbuf_core::{FrameId, PageId};
/// use flashbuf_pool::policy::{Access, Lru, Policy, Victim};
/// let mut p = Lru::new(2);
/// p.on_insert(FrameId(0), PageId(10), Access::Read);
/// p.on_insert(FrameId(1), PageId(11), Access::Read);
/// p.on_hit(FrameId(0), Access::Read);
/// assert_eq!(p.choose_victim(&|_| true), Some(Victim::Evict(FrameId(1))));
/// ```
#[derive(Debug, Clone)]
pub struct Lru {
    links: Links,
    list: List,
}

impl Lru {
    /// An LRU policy for `frames_count` frames.
    pub fn new(frames_count: usize) -> Self {
        Self {
            links: Links::new(frames_count),
            list: List::new(0),
        }
    }
}

impl Policy for Lru {
    fn name(&self) -> &'static str {
        "lru"
    }

    fn frames_count(&self) -> usize {
        self.links.owner_len()
    }

    fn on_insert(&mut self, frame: FrameId, _pid: PageId, _access: Access) {
        self.list.push_head(&mut self.links, frame);
    }

    fn on_hit(&mut self, frame: FrameId, _access: Access) {
        self.list.move_to_head(&mut self.links, frame);
    }

    fn on_clean(&mut self, _frame: FrameId) {}

    fn bytes_per_frame(&self) -> usize {
        Links::BYTES_PER_FRAME
    }

    fn on_remove(&mut self, frame: FrameId) {
        self.list.remove(&mut self.links, frame);
    }

    fn choose_victim(&mut self, evictable: &dyn Fn(FrameId) -> bool) -> Option<Victim<'_>> {
        self.list
            .iter_from_tail(&self.links)
            .find(|&f| evictable(f))
            .map(Victim::Evict)
    }

    fn check_invariants(&self) -> Result<(), String> {
        self.list.check(&self.links)
    }
}

// ---- registration (`super::registry::POLICIES`): only the clustering options ----

/// Parses `lru`'s options (the write-clustering options only).
pub fn parse(o: &Options) -> Result<Box<dyn PolicyFactory>, ConfigError> {
    Ok(Box::new(LruFactory {
        clustering: ClusteringSpec::parse(o)?,
    }))
}

#[derive(Debug)]
struct LruFactory {
    clustering: ClusteringSpec,
}

impl PolicyFactory for LruFactory {
    fn build(&self, ctx: &PolicyContext<'_>) -> Result<Box<dyn Policy>, ConfigError> {
        self.clustering.wrap(Lru::new(ctx.frames), ctx)
    }

    fn build_reference(
        &self,
        ctx: &PolicyContext<'_>,
    ) -> Option<Result<Box<dyn Policy>, ConfigError>> {
        Some(
            self.clustering
                .wrap_reference(NaiveLru::new(ctx.frames), ctx),
        )
    }
}
