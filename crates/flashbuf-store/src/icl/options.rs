//! ICL in the store registry ([`crate::registry::STORES`]): its options, their typed
//! form ([`IclConfig`]) and the factory.
//!
//! `icl:wob=BYTES|wob_pages=N,log=BYTES|log_pages=N,merge_threshold=F,dw_pages=N,
//! grow=BYTES|grow_pages=N`. Defaults: a 1 MiB write-optimized buffer, a 16 MiB log space,
//! merge at half a page (the paper's threshold, ICL paper §2 *ICL merge* and Figure 4),
//! 32 double-write slots, 64 MiB growth of the data area.
//!
//! The paper varies the WOB size (Figure 5) and gives no size for the log space; both are
//! options. Sizes in pages scale with the page size (the crash variants use them).

use super::layout::Layout;
use super::log_space::LOG_HEADER_BYTES;
use super::record::{RANGE_BYTES, RECORD_HEADER_BYTES};
use super::{IclStore, KIND};
use crate::registry::{self, GrowStep, StoreContext, StoreFactory, GROW, GROW_PAGES};
use crate::{PageStore, StoreError};
use flashbuf_core::config::{ConfigError, OptKind, OptionSpec, Options};
use flashbuf_core::page::{is_valid_page_size, HEADER_BYTES};
use flashbuf_core::DataMode;
use flashbuf_device::Device;

const SIZE: OptKind = OptKind::Bytes {
    min: 1,
    max: 1 << 40,
};
const PAGES: OptKind = OptKind::UInt {
    min: 1,
    max: u32::MAX as u64 - 1,
};

/// ICL's options (the order is the order error messages list them in).
pub const OPTIONS: &[OptionSpec] = &[
    OptionSpec {
        key: "wob",
        kind: SIZE,
        default: Some("1MiB"),
        help: "write-optimized buffer in bytes (paper §2: logs of evicted pages in memory)",
    },
    OptionSpec {
        key: "wob_pages",
        kind: PAGES,
        default: None,
        help: "write-optimized buffer in pages, scaling with the page size (instead of wob)",
    },
    OptionSpec {
        key: "log",
        kind: SIZE,
        default: Some("16MiB"),
        help: "log space on the device in bytes (whole log pages)",
    },
    OptionSpec {
        key: "log_pages",
        kind: PAGES,
        default: None,
        help: "log space in log pages (instead of log)",
    },
    OptionSpec {
        key: "merge_threshold",
        kind: OptKind::Float {
            min: 0.01,
            max: 0.9,
        },
        default: Some("0.5"),
        help: "a page's logs are merged home when they reach this fraction of a page \
               (paper: half a page)",
    },
    OptionSpec {
        key: "dw_pages",
        kind: PAGES,
        default: Some("32"),
        help: "double-write slots protecting home pages a log-space merge rewrites",
    },
    GROW,
    GROW_PAGES,
];

/// A size given in bytes or in pages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Amount {
    Bytes(u64),
    Pages(u64),
}

impl Amount {
    fn from_options(o: &Options, bytes_key: &str, pages_key: &str) -> Result<Self, ConfigError> {
        match (o.given(bytes_key), o.u64(pages_key)) {
            (true, Some(_)) => {
                Err(o.invalid(format!("give {bytes_key} (bytes) or {pages_key}, not both")))
            }
            (_, Some(p)) => Ok(Amount::Pages(p)),
            (_, None) => o
                .bytes(bytes_key)
                .map(Amount::Bytes)
                .ok_or_else(|| o.invalid(format!("{bytes_key} has no value"))),
        }
    }

    fn bytes(self, page_size: usize) -> u64 {
        match self {
            Amount::Bytes(b) => b,
            Amount::Pages(p) => p.saturating_mul(page_size as u64),
        }
    }
}

/// Configuration of an [`IclStore`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct IclConfig {
    /// Page size in bytes (a power of two, 512..=65536).
    pub page_size: usize,
    /// Capacity of the write-optimized buffer: bytes of the log records it holds.
    pub wob_bytes: u64,
    /// Log pages in the log space.
    pub log_pages: u32,
    /// A page's logs go home when their record reaches this fraction of a page.
    pub merge_threshold: f64,
    /// Double-write slots.
    pub dw_pages: u32,
    /// Growth step of the data area in bytes.
    pub grow_bytes: u64,
    /// The format salt (`None`: a fresh one at `create`); tests fix it.
    pub salt: Option<u64>,
    /// Whole pages, or only their heads (`--data none`; see the [module docs](super)).
    pub data: DataMode,
}

impl IclConfig {
    /// The defaults for `page_size`.
    pub fn with_page_size(page_size: usize) -> Self {
        Self {
            page_size,
            wob_bytes: 1 << 20,
            log_pages: ((16u64 << 20) / page_size as u64) as u32,
            merge_threshold: 0.5,
            dw_pages: 32,
            grow_bytes: 64 << 20,
            salt: None,
            data: DataMode::Bytes,
        }
    }

    /// Bytes of a page as callers exchange it and the store keeps it in memory: the page,
    /// or its head in metadata mode.
    pub fn image_bytes(&self) -> usize {
        self.data.buffer_bytes(self.page_size)
    }

    /// The merge threshold in bytes of a log record.
    pub fn threshold_bytes(&self) -> usize {
        (self.merge_threshold * self.page_size as f64) as usize
    }

    /// Refuses configurations that cannot work, saying why.
    pub fn validate(&self) -> Result<(), StoreError> {
        let bad = |m: String| Err(StoreError::Invalid(m));
        let ps = self.page_size;
        if !is_valid_page_size(ps) {
            return bad(format!(
                "page size {ps} is not a power of two between 512 and 65536"
            ));
        }
        let t = self.threshold_bytes();
        let smallest = RECORD_HEADER_BYTES + RANGE_BYTES + HEADER_BYTES;
        if t <= smallest {
            return bad(format!(
                "merge threshold {} is {t} bytes of a {ps}-byte page, not above the smallest log ({smallest} bytes: the page header alone)",
                self.merge_threshold
            ));
        }
        if t > ps - LOG_HEADER_BYTES {
            return bad(format!(
                "merge threshold of {t} bytes does not fit a log page ({} bytes after its header)",
                ps - LOG_HEADER_BYTES
            ));
        }
        if self.wob_bytes < ps as u64 {
            return bad(format!(
                "write-optimized buffer of {} bytes is smaller than a page ({ps} bytes)",
                self.wob_bytes
            ));
        }
        if self.log_pages < 2 {
            return bad(format!(
                "log space of {} log pages: at least 2 are needed",
                self.log_pages
            ));
        }
        let cap = Layout::dir_capacity(ps);
        if self.dw_pages == 0 || self.dw_pages as usize > cap {
            return bad(format!(
                "{} double-write slots: between 1 and {cap} fit a {ps}-byte directory page",
                self.dw_pages
            ));
        }
        Ok(())
    }
}

/// ICL's options, typed; the page size comes with the context.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct IclOptions {
    wob: Amount,
    log: Amount,
    merge_threshold: f64,
    dw_pages: u32,
    grow: GrowStep,
}

impl IclOptions {
    /// The typed form of options validated against [`OPTIONS`]; contradictions (`wob` and
    /// `wob_pages`, ...) are errors.
    pub fn from_options(o: &Options) -> Result<Self, ConfigError> {
        Ok(Self {
            wob: Amount::from_options(o, "wob", "wob_pages")?,
            log: Amount::from_options(o, "log", "log_pages")?,
            merge_threshold: o.f64("merge_threshold").unwrap_or(0.5),
            dw_pages: o.u64("dw_pages").unwrap_or(32) as u32,
            grow: GrowStep::from_options(o)?,
        })
    }

    /// The configuration for `page_size` (an invalid page size is refused by
    /// [`IclConfig::validate`]; here it only must not divide by zero, regression test
    /// `regression_icl_zero_page_size`).
    pub fn config(&self, page_size: usize) -> IclConfig {
        let per = page_size.max(1) as u64;
        let log_pages = (self.log.bytes(page_size) / per).min(u64::from(u32::MAX));
        IclConfig {
            page_size,
            wob_bytes: self.wob.bytes(page_size),
            log_pages: log_pages as u32,
            merge_threshold: self.merge_threshold,
            dw_pages: self.dw_pages,
            grow_bytes: self.grow.bytes(page_size),
            salt: None,
            data: DataMode::Bytes,
        }
    }
}

impl StoreFactory for IclOptions {
    fn create(
        &self,
        device: Box<dyn Device>,
        ctx: &StoreContext<'_>,
    ) -> Result<Box<dyn PageStore>, StoreError> {
        let cfg = IclConfig {
            data: ctx.data,
            ..self.config(ctx.page_size)
        };
        Ok(Box::new(IclStore::create(device, cfg)?))
    }

    fn open(
        &self,
        device: Box<dyn Device>,
        ctx: &StoreContext<'_>,
    ) -> Result<Box<dyn PageStore>, StoreError> {
        let cfg = IclConfig {
            data: ctx.data,
            ..self.config(ctx.page_size)
        };
        Ok(Box::new(IclStore::open(device, cfg)?))
    }

    fn check(&self, page_size: usize) -> Result<(), ConfigError> {
        self.config(page_size)
            .validate()
            .map_err(|e| registry::invalid(KIND, e))
    }
}

/// Parses ICL's validated options (no I/O).
pub fn parse_options(o: &Options) -> Result<Box<dyn StoreFactory>, ConfigError> {
    Ok(Box::new(IclOptions::from_options(o)?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::parse_text;
    use flashbuf_core::config::Spec;

    fn opts(text: &str) -> IclOptions {
        let spec = Spec::parse(text, |_| false).unwrap();
        IclOptions::from_options(&Options::validate(&spec, OPTIONS).unwrap()).unwrap()
    }

    #[test]
    fn defaults_and_sizes_in_bytes_or_pages() {
        let c = opts("icl").config(4096);
        assert_eq!(c, IclConfig::with_page_size(4096));
        assert_eq!((c.log_pages, c.threshold_bytes()), (4096, 2048));
        let c = opts("icl:wob_pages=2,log_pages=6,dw_pages=3,grow_pages=8,merge_threshold=0.25")
            .config(512);
        assert_eq!(
            (
                c.wob_bytes,
                c.log_pages,
                c.dw_pages,
                c.grow_bytes,
                c.threshold_bytes()
            ),
            (1024, 6, 3, 4096, 128)
        );
        c.validate().unwrap();
    }

    #[test]
    fn contradictions_and_impossible_sizes_are_refused_before_any_io() {
        let e = parse_text("icl:wob=1MiB,wob_pages=2")
            .unwrap_err()
            .to_string();
        assert!(e.contains("wob (bytes) or wob_pages, not both"), "{e}");
        let e = parse_text("icl:log=1MiB,log_pages=2")
            .unwrap_err()
            .to_string();
        assert!(e.contains("not both"), "{e}");
        let check = |t: &str, ps| parse_text(t).unwrap().factory.check(ps);
        assert!(check("icl:merge_threshold=0.05", 512)
            .unwrap_err()
            .to_string()
            .contains("smallest log"));
        assert!(check("icl:wob=100", 4096)
            .unwrap_err()
            .to_string()
            .contains("smaller than a page"));
        assert!(check("icl:log_pages=1", 4096)
            .unwrap_err()
            .to_string()
            .contains("at least 2"));
        assert!(check("icl:dw_pages=41", 512)
            .unwrap_err()
            .to_string()
            .contains("between 1 and 40"));
        assert!(check("icl", 512).is_ok());
    }
}
