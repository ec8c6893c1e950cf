//! Stores by name: a thin adapter over the one store table
//! ([`flashbuf_store::registry::STORES`]) — look the name up, validate and parse its
//! options (up front, no I/O: [`validate_store`]), then create or open the store with the
//! run's context. What a store needs from the lab (a simulated device's measured profile)
//! goes in through [`StoreContext`].

use super::{measure_sim_profile, BuildContext};
use crate::spec::Spec;
use crate::LabError;
use flashbuf_core::config::Options;
use flashbuf_device::Device;
use flashbuf_store::registry::{self, ParsedStore, StoreContext};
use flashbuf_store::stable_buffer::options::{StableBufferOptions, OPTIONS};
use flashbuf_store::stable_buffer::StableBufferConfig;
use flashbuf_store::{PageStore, StoreError};

/// Looks `spec` up in the store table and parses its options (no I/O).
pub fn parse_store(spec: &Spec) -> Result<ParsedStore, LabError> {
    Ok(registry::parse(spec)?)
}

/// Checks `spec` for runs of `page_size` without building anything (name, options, and
/// what the page size decides); run for every store of a matrix before the first run.
pub fn validate_store(spec: &Spec, page_size: usize) -> Result<(), LabError> {
    validate_store_data(spec, page_size, flashbuf_core::DataMode::Bytes)
}

/// [`validate_store`] for runs in data mode `data` (`--data none` refuses the stores
/// that do not take it, saying why).
pub fn validate_store_data(
    spec: &Spec,
    page_size: usize,
    data: flashbuf_core::DataMode,
) -> Result<(), LabError> {
    let p = parse_store(spec)?;
    p.factory.check(page_size)?;
    p.check_data(data)?;
    Ok(())
}

/// Whether the store named by `spec` sizes itself by the run's data (the lab must scan
/// the trace before building it): the log-structured store. A spec that does not parse
/// needs nothing (the run fails on it when it validates the store).
pub fn store_needs_capacity(spec: &Spec) -> bool {
    parse_store(spec).is_ok_and(|p| p.factory.wants_data_pages())
}

/// Runs `f` with the store context of `ctx`: its page size and seed, and the lab's
/// profiler for simulated devices (`flashbuf profile --device sim:NAME`).
fn with_context<T>(ctx: &BuildContext, f: impl FnOnce(&StoreContext<'_>) -> T) -> T {
    let measure =
        |name: &str| measure_sim_profile(name, ctx.page_size, ctx.seed).map_err(|e| e.to_string());
    f(&StoreContext {
        page_size: ctx.page_size,
        seed: ctx.seed,
        data: ctx.data,
        data_pages: ctx.data_pages,
        measure_profile: Some(&measure),
    })
}

/// A configuration problem found while building is a [`LabError::Config`].
fn lab_error(e: StoreError) -> LabError {
    match e {
        StoreError::Config(c) => LabError::Config(c),
        other => LabError::Store(other),
    }
}

/// Builds (formats) a fresh store named by `spec` on `device`.
pub fn build_store(
    spec: &Spec,
    device: Box<dyn Device>,
    ctx: &BuildContext,
) -> Result<Box<dyn PageStore>, LabError> {
    let p = parse_store(spec)?;
    with_context(ctx, |s| p.create(device, s)).map_err(lab_error)
}

/// Opens (recovers) the store named by `spec` on `device`.
pub fn open_store(
    spec: &Spec,
    device: Box<dyn Device>,
    ctx: &BuildContext,
) -> Result<Box<dyn PageStore>, LabError> {
    let p = parse_store(spec)?;
    with_context(ctx, |s| p.open(device, s)).map_err(lab_error)
}

/// The configuration `stable-buffer:...` names for a store on `device` (for callers that
/// need the concrete [`flashbuf_store::StableBufferStore`]); options and defaults as in
/// [`flashbuf_store::stable_buffer::options`].
pub fn stable_buffer_config(
    spec: &Spec,
    device: &dyn Device,
    ctx: &BuildContext,
) -> Result<StableBufferConfig, LabError> {
    let o = StableBufferOptions::from_options(&Options::validate(spec, OPTIONS)?)?;
    with_context(ctx, |s| o.config(device, s)).map_err(lab_error)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::DeviceFacts;
    use flashbuf_device::MemDevice;

    fn ctx() -> BuildContext {
        BuildContext {
            page_size: 4096,
            data: flashbuf_core::DataMode::Bytes,
            data_pages: 16,
            seed: 1,
            facts: DeviceFacts::default(),
        }
    }

    #[test]
    fn every_store_in_the_table_is_built_and_reopened_by_name() {
        for e in registry::STORES {
            let spec = crate::spec::parse(e.name).unwrap();
            validate_store(&spec, 4096).unwrap();
            let dev = std::sync::Arc::new(MemDevice::new(0));
            let s = build_store(&spec, Box::new(dev.clone()), &ctx()).unwrap();
            assert_eq!(s.name(), e.name);
            drop(s);
            let s = open_store(&spec, Box::new(dev), &ctx()).unwrap();
            assert_eq!(s.name(), e.name);
        }
    }

    #[test]
    fn a_bad_store_spec_fails_validation_naming_what_is_wrong() {
        let v = |t: &str| validate_store(&crate::spec::parse(t).unwrap(), 4096);
        let e = v("directt").unwrap_err().to_string();
        assert!(
            e.contains("unknown store 'directt'; valid names: direct"),
            "{e}"
        );
        let e = v("stable-buffer:recognition=ondemand,flush=proactive")
            .unwrap_err()
            .to_string();
        assert!(e.contains("needs recognition=incremental"), "{e}");
        assert!(matches!(
            v("direct:grow=0").unwrap_err(),
            LabError::Config(_)
        ));
        v("stable-buffer:slots=16,grow_pages=8").unwrap();
    }

    #[test]
    fn a_matrix_with_a_bad_store_in_its_last_cell_runs_nothing() {
        let trace = std::path::PathBuf::from(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../testdata/traces/pgbench-sample.pagetrace.csv.zst"
        ));
        let p = |t: &str| crate::spec::parse(t).unwrap();
        let m = crate::compare::Matrix {
            base: crate::RunConfig {
                trace,
                buffer: crate::BufferSize::Pages(8),
                seed: 1,
                ..crate::RunConfig::default()
            },
            policies: vec![p("lru")],
            stores: vec![p("direct"), p("stable-buffer:slots=0")],
            devices: vec![p("memory")],
            buffers: vec![crate::BufferSize::Pages(8)],
        };
        let mut ran = 0;
        let e = crate::compare::compare(&m, 1, |_| ran += 1)
            .unwrap_err()
            .to_string();
        assert_eq!(ran, 0, "runs before the error");
        assert!(e.contains("slots=0") && e.contains("[1, "), "{e}");
    }
}
