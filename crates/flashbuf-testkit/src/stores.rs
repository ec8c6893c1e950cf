//! [`CrashStore`]: the store configurations the suites run, from the one store table
//! ([`flashbuf_store::registry::STORES`]) and its crash variants.

use flashbuf_core::config::{ConfigError, Spec};
use flashbuf_core::DataMode;
use flashbuf_device::Device;
use flashbuf_store::registry::{
    self, CrashVariant, MetadataOnly, StoreContext, StoreEntry, StoreFactory,
};
use flashbuf_store::{PageStore, StoreError, STORES};
use std::fmt;
use std::sync::Arc;

/// One store configuration the suites build: a table entry with its options parsed, or
/// (for the harness's own meta-tests) any [`StoreFactory`].
#[derive(Clone)]
pub struct CrashStore {
    /// The name the suites report: a crash variant's label (`stable-buffer-incremental`),
    /// else the spec (`stable-buffer:recognition=ondemand`).
    pub name: String,
    /// The spec it is built from, in canonical form (options sorted); what `flashbuf
    /// torture --store` and `check --store` take to build the same store.
    pub spec: String,
    /// Whether the store hides torn writes entirely (see
    /// [`StoreEntry::masks_torn_writes`]): the suites then assert that no page ever comes
    /// back corrupt, else that torn unsynced writes are seen (and reported as corrupt).
    pub masks_torn_writes: bool,
    /// Whole pages (the default) or metadata only (`--data none`; [`CrashStore::with_data`]):
    /// the mode every store this configuration creates or opens runs in.
    pub data: DataMode,
    /// Why the store's entry refuses metadata-only pages (`None`: it takes them).
    refuses_metadata: Option<&'static str>,
    factory: Arc<dyn StoreFactory>,
}

impl fmt::Debug for CrashStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CrashStore")
            .field("name", &self.name)
            .field("spec", &self.spec)
            .field("masks_torn_writes", &self.masks_torn_writes)
            .field("data", &self.data)
            .finish()
    }
}

impl CrashStore {
    /// Every crash variant of every store in the table, in table order.
    pub fn variants() -> Result<Vec<CrashStore>, ConfigError> {
        let mut v = Vec::new();
        for e in STORES {
            v.extend(Self::variants_of(e)?);
        }
        Ok(v)
    }

    /// The crash variants of `entry`.
    pub fn variants_of(entry: &'static StoreEntry) -> Result<Vec<CrashStore>, ConfigError> {
        entry
            .crash_variants
            .iter()
            .map(|v| Self::variant(entry, v))
            .collect()
    }

    fn variant(entry: &'static StoreEntry, v: &CrashVariant) -> Result<CrashStore, ConfigError> {
        let mut s = Self::from_spec(&entry.variant_spec(v))?;
        s.name = v.label.to_string();
        Ok(s)
    }

    /// The crash variant labelled `label` (`direct`, `stable-buffer`,
    /// `stable-buffer-incremental`: the small configurations the crash suites run).
    pub fn by_label(label: &str) -> Result<CrashStore, ConfigError> {
        let all = Self::variants()?;
        let valid: Vec<String> = all.iter().map(|v| v.name.clone()).collect();
        all.into_iter()
            .find(|v| v.name == label)
            .ok_or_else(|| ConfigError::UnknownName {
                kind: "crash variant",
                name: label.to_string(),
                valid,
            })
    }

    /// The store `text` names in the table (`direct`, `stable-buffer:recognition=ondemand`),
    /// exactly: the entry's defaults under the options given. Its name is the spec.
    pub fn from_spec(text: &str) -> Result<CrashStore, ConfigError> {
        Self::from_parsed(&Spec::parse(text, |_| false)?)
    }

    fn from_parsed(spec: &Spec) -> Result<CrashStore, ConfigError> {
        let p = registry::parse(spec)?;
        let canonical = spec.to_string();
        Ok(CrashStore {
            name: canonical.clone(),
            spec: canonical,
            masks_torn_writes: p.entry.masks_torn_writes,
            data: DataMode::Bytes,
            refuses_metadata: match p.entry.metadata_only {
                MetadataOnly::Supported => None,
                MetadataOnly::Unsupported(why) => Some(why),
            },
            factory: Arc::from(p.factory),
        })
    }

    /// Whether the store takes metadata-only pages (its table entry says so).
    pub fn takes_metadata(&self) -> bool {
        self.refuses_metadata.is_none()
    }

    /// The same configuration in data mode `data`; its name gains ` (--data none)` for
    /// metadata only. Refuses a store whose entry does not take the mode, with its reason.
    pub fn with_data(&self, data: DataMode) -> Result<CrashStore, ConfigError> {
        if let (DataMode::Metadata, Some(why)) = (data, self.refuses_metadata) {
            return Err(ConfigError::invalid(
                &self.spec,
                format!("--data none is not supported: {why}"),
            ));
        }
        let mut s = self.clone();
        if data != self.data {
            s.name = match data {
                DataMode::Metadata => format!("{} (--data none)", self.name),
                DataMode::Bytes => self.name.trim_end_matches(" (--data none)").to_string(),
            };
        }
        s.data = data;
        Ok(s)
    }

    /// The stores a simulated torture runs: every crash variant (`None`); a store's crash
    /// variants (its bare name); one variant (its label); or, for a name with options,
    /// each crash variant of that store with the options laid over the variant's (so sizes
    /// stay small: give them in the variant's form, `slots=`, `grow_pages=`), duplicates
    /// dropped. Unknown names list the valid ones.
    pub fn select(text: Option<&str>) -> Result<Vec<CrashStore>, ConfigError> {
        let Some(text) = text else {
            return Self::variants();
        };
        let spec = Spec::parse(text, |_| false)?;
        if spec.opts.is_empty() && spec.arg.is_none() {
            if let Ok(e) = registry::lookup(&spec.name) {
                return Self::variants_of(e);
            }
            for e in STORES {
                if let Some(v) = e.crash_variants.iter().find(|v| v.label == spec.name) {
                    return Ok(vec![Self::variant(e, v)?]);
                }
            }
            let mut valid: Vec<String> = registry::names().iter().map(|n| n.to_string()).collect();
            for e in STORES {
                for v in e.crash_variants {
                    if !valid.iter().any(|n| n == v.label) {
                        valid.push(v.label.to_string());
                    }
                }
            }
            return Err(ConfigError::UnknownName {
                kind: "store",
                name: spec.name,
                valid,
            });
        }
        let entry = registry::lookup(&spec.name)?;
        let mut out: Vec<CrashStore> = Vec::new();
        for v in entry.crash_variants {
            let mut merged = Spec::parse(&entry.variant_spec(v), |_| false)?;
            merged.arg = spec.arg.clone();
            merged.opts.extend(spec.opts.clone());
            let s = Self::from_parsed(&merged).map_err(|e| {
                ConfigError::invalid(
                    text,
                    format!("laid over crash variant '{}' ({}): {e}", v.label, v.options),
                )
            })?;
            if !out.iter().any(|o| o.spec == s.spec) {
                out.push(s);
            }
        }
        Ok(out)
    }

    /// A store built by any factory (the harness's meta-tests build broken stores).
    pub fn from_factory(
        name: &str,
        factory: Arc<dyn StoreFactory>,
        masks_torn_writes: bool,
    ) -> CrashStore {
        CrashStore {
            name: name.to_string(),
            spec: name.to_string(),
            masks_torn_writes,
            data: DataMode::Bytes,
            refuses_metadata: None,
            factory,
        }
    }

    fn context(&self, page_size: usize) -> StoreContext<'static> {
        StoreContext {
            data: self.data,
            ..StoreContext::new(page_size)
        }
    }

    /// Formats `dev` as a fresh store of `page_size` (logical page size; in metadata-only
    /// mode the store's buffers are [`flashbuf_core::METADATA_PAGE_BYTES`] long).
    pub fn create(
        &self,
        dev: Box<dyn Device>,
        page_size: usize,
    ) -> Result<Box<dyn PageStore>, StoreError> {
        self.factory.create(dev, &self.context(page_size))
    }

    /// Opens and recovers the store of `page_size` on `dev`.
    pub fn open(
        &self,
        dev: Box<dyn Device>,
        page_size: usize,
    ) -> Result<Box<dyn PageStore>, StoreError> {
        self.factory.open(dev, &self.context(page_size))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn variants_come_from_the_table() {
        let v = CrashStore::variants().unwrap();
        let n: usize = STORES.iter().map(|e| e.crash_variants.len()).sum();
        assert_eq!(v.len(), n);
        assert_eq!(v[0].name, "direct");
        assert_eq!(v[0].spec, "direct:grow_pages=8");
        assert!(!v[0].masks_torn_writes);
        let names: Vec<&str> = v.iter().map(|s| s.name.as_str()).collect();
        assert!(names.contains(&"stable-buffer-incremental"), "{names:?}");
    }

    #[test]
    fn selection_by_store_label_or_options() {
        assert_eq!(CrashStore::select(Some("stable-buffer")).unwrap().len(), 2);
        let one = CrashStore::select(Some("stable-buffer-incremental")).unwrap();
        assert_eq!(one.len(), 1);
        assert!(one[0].masks_torn_writes);
        // Options laid over both variants: they become one.
        let s = CrashStore::select(Some("stable-buffer:recognition=ondemand")).unwrap();
        assert_eq!(s.len(), 1, "{s:?}");
        assert_eq!(
            s[0].spec,
            "stable-buffer:align_pages=1,grow_pages=8,recognition=ondemand,slots=16"
        );
        let e = CrashStore::select(Some("nope")).unwrap_err().to_string();
        assert!(
            e.contains("valid names: direct, stable-buffer")
                && e.contains("icl")
                && e.contains("log-structured")
                && e.contains("stable-buffer-incremental"),
            "{e}"
        );
        let e = CrashStore::select(Some("stable-buffer:size=1MiB"))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("laid over crash variant") && e.contains("not both"),
            "{e}"
        );
        // Exactly as given, outside the sim.
        let s = CrashStore::from_spec("stable-buffer:recognition=ondemand").unwrap();
        assert_eq!(s.name, "stable-buffer:recognition=ondemand");
    }
}
