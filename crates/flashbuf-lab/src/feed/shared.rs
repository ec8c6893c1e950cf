//! A trace decoded once for many runs ([`SharedTrace`]; see the parent module's docs).

use super::{Feed, FeedOptions, FeedSummary};
use crate::LabError;
use flashbuf_trace::{Format, PageRef};
use std::path::Path;
use std::sync::Arc;

/// A trace decoded once for many runs (see the module docs).
#[derive(Debug, Clone)]
pub struct SharedTrace {
    refs: Arc<[PageRef]>,
    summary: FeedSummary,
    opts: FeedOptions,
}

impl SharedTrace {
    /// Decodes `path` with `opts` into memory, or `None` if it holds more than `max_refs`
    /// references (reading stops there; each run then reads the file itself).
    pub fn decode(
        path: &Path,
        format: Option<Format>,
        page_size: u32,
        opts: &FeedOptions,
        max_refs: u64,
    ) -> Result<Option<Self>, LabError> {
        let feed = Feed::start_with(path, format, page_size, opts)?;
        Ok(feed.collect_up_to(max_refs)?.map(|(refs, summary)| Self {
            refs: refs.into(),
            summary,
            opts: *opts,
        }))
    }

    /// A trace already in memory: `refs` as a feed with `opts` delivers them (mapped and
    /// transformed), ending with `summary` (a sampled trace for miniature simulation,
    /// [`crate::mrc::mini`]).
    pub fn from_refs(refs: Vec<PageRef>, summary: FeedSummary, opts: FeedOptions) -> Self {
        Self {
            refs: refs.into(),
            summary,
            opts,
        }
    }

    /// Whether a run whose feed has `opts` can replay this trace (same limit, same
    /// transform).
    pub fn serves(&self, opts: &FeedOptions) -> bool {
        self.opts == *opts
    }

    /// A feed replaying the trace from memory.
    pub fn feed(&self) -> Feed {
        Feed::from_memory(Arc::clone(&self.refs), self.summary.clone())
    }

    /// The references.
    pub fn refs(&self) -> &[PageRef] {
        &self.refs
    }

    /// The summary of the decode.
    pub fn summary(&self) -> &FeedSummary {
        &self.summary
    }
}
