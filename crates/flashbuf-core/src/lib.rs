//! Core types shared by every flashbuf layer.
//!
//! - [`ids`]: newtype identifiers ([`PageId`], [`FrameId`], [`Lpn`], [`Ppn`]).
//! - [`page`]: the self-describing page header (page id, version stamp, CRC32C) that every
//!   page carries in its first [`page::HEADER_BYTES`] bytes, and the functions that seal
//!   and verify it.
//! - [`ranges`]: [`DirtyRanges`], the merged set of modified byte ranges that a write guard
//!   records and a write path (ICL) consumes.
//! - [`stats`]: [`DeviceStats`], the counters every device reports.
//! - [`aligned`]: [`AlignedBuf`], heap buffers aligned for `O_DIRECT`.
//! - [`config`]: component names with typed options ([`config::Spec`], [`config::OptionSpec`],
//!   [`config::Options`]), the grammar every registration table shares.
//! - [`facts`]: [`DeviceFacts`], what the layers above know of a device's costs.
//! - [`prefetch`]: cache prefetch hints for hot loops that know their next references.
//!
//! This crate has no I/O and no global state; every layer above depends on it.

pub mod aligned;
pub mod buildinfo;
pub mod config;
pub mod data_mode;
pub mod facts;
pub mod ids;
pub mod page;
pub mod prefetch;
pub mod ranges;
pub mod rng;
pub mod stats;

pub use aligned::AlignedBuf;
pub use config::ConfigError;
pub use data_mode::{DataMode, METADATA_PAGE_BYTES};
pub use facts::DeviceFacts;
pub use ids::{FrameId, Lpn, PageId, Ppn};
pub use page::{PageCheckError, PageHeader};
pub use ranges::{ByteRange, DirtyRanges};
pub use stats::DeviceStats;
