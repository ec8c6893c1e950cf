//! The direct store in the store table: its options and its factory.

use super::{DirectStore, DirectStoreConfig, KIND};
use crate::registry::{self, GrowStep, StoreContext, StoreFactory};
use crate::{PageStore, StoreError};
use flashbuf_core::config::{ConfigError, OptionSpec, Options};
use flashbuf_core::DataMode;
use flashbuf_device::Device;

/// The direct store's options in the registry ([`crate::registry::STORES`]).
pub(crate) const OPTIONS: &[OptionSpec] = &[registry::GROW, registry::GROW_PAGES];

/// The direct store's typed configuration (its growth step; the page size comes from the
/// context).
#[derive(Debug, Clone, Copy)]
struct DirectFactory {
    grow: GrowStep,
}

impl DirectFactory {
    fn config(&self, page_size: usize, data: DataMode) -> DirectStoreConfig {
        DirectStoreConfig {
            page_size,
            grow_bytes: self.grow.bytes(page_size),
            data,
        }
    }
}

impl StoreFactory for DirectFactory {
    fn create(
        &self,
        device: Box<dyn Device>,
        ctx: &StoreContext<'_>,
    ) -> Result<Box<dyn PageStore>, StoreError> {
        Ok(Box::new(DirectStore::create(
            device,
            self.config(ctx.page_size, ctx.data),
        )?))
    }

    fn open(
        &self,
        device: Box<dyn Device>,
        ctx: &StoreContext<'_>,
    ) -> Result<Box<dyn PageStore>, StoreError> {
        Ok(Box::new(DirectStore::open(
            device,
            self.config(ctx.page_size, ctx.data),
        )?))
    }

    fn check(&self, page_size: usize) -> Result<(), ConfigError> {
        DirectStore::<Box<dyn Device>>::check_config(&self.config(page_size, DataMode::Bytes))
            .map_err(|e| registry::invalid(KIND, e))
    }
}

/// Parses the direct store's validated options (no I/O).
pub(crate) fn parse_options(o: &Options) -> Result<Box<dyn StoreFactory>, ConfigError> {
    Ok(Box::new(DirectFactory {
        grow: GrowStep::from_options(o)?,
    }))
}
