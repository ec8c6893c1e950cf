//! Builds devices, stores and policies from their names (design.md §7), one file per kind:
//! `devices`, `stores`, `policies` (thin adapters over the tables of the lower crates). Adding a component means one entry in its kind's
//! table, plus its own file and a golden-test row.

mod devices;
mod policies;
mod stores;

pub use devices::*;
pub use policies::*;
pub use stores::*;

pub use flashbuf_core::DeviceFacts;

/// What the lab knows when it builds components for one run.
#[derive(Debug, Clone)]
pub struct BuildContext {
    /// Page size in bytes.
    pub page_size: usize,
    /// Whole pages or metadata only (`--data`).
    pub data: flashbuf_core::DataMode,
    /// Dense pages the trace touches (capacity hint; 0 if unknown).
    pub data_pages: u64,
    /// Seed of the run.
    pub seed: u64,
    /// What the device is like (filled once the device is built).
    pub facts: DeviceFacts,
}

impl BuildContext {
    /// Bytes the data of the trace needs on a device.
    pub fn data_bytes(&self) -> u64 {
        self.data_pages * self.page_size as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctx() -> BuildContext {
        BuildContext {
            page_size: 4096,
            data: flashbuf_core::DataMode::Bytes,
            data_pages: 10,
            seed: 1,
            facts: DeviceFacts::default(),
        }
    }

    #[test]
    fn unknown_names_list_the_valid_ones() {
        let e = build_policy(&crate::spec::parse("lruu").unwrap(), 4, &ctx())
            .err()
            .unwrap();
        assert!(
            e.to_string()
                .contains("unknown policy 'lruu'; valid names: none, lru"),
            "{e}"
        );
        let e = build_device(&crate::spec::parse("ssd").unwrap(), &ctx())
            .err()
            .unwrap();
        assert!(e.to_string().contains("memory"), "{e}");
        let e = build_policy(&crate::spec::parse("lru:x=1").unwrap(), 4, &ctx())
            .err()
            .unwrap();
        assert!(e.to_string().contains("unknown option 'x'"), "{e}");
    }

    #[test]
    fn file_device_refuses_to_overwrite() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("f");
        std::fs::write(&p, b"precious").unwrap();
        let spec = crate::spec::parse(&format!("file:{}", p.display())).unwrap();
        let e = build_device(&spec, &ctx()).err().unwrap();
        assert!(e.to_string().contains("overwrite=true"), "{e}");
        assert_eq!(std::fs::read(&p).unwrap(), b"precious");
    }
}
