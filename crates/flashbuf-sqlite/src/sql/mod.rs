//! The engine workloads of `flashbuf-workload` as SQL through rusqlite: TPC-B-like
//! ([`tpcb`], pgbench's transaction) and TPC-C-like ([`tpcc`], nine tables, the five
//! transactions, consistency conditions 1–4 as SQL queries), with a [`driver`] that
//! reports throughput, response times and consistency as the native driver does.
//!
//! The options are the native workloads' (`flashbuf_workload::WORKLOADS`: same names,
//! defaults and ranges), and so are the random inputs: the same generators
//! (`flashbuf_workload::codec`), the same draws per transaction, the same NURand and
//! TPC-C population rules. The SQL side differs where SQL gives more: transactions are
//! real (serializable: one connection), and a New-Order naming an unused item is rolled
//! back by SQLite.

pub mod driver;
pub mod tpcb;
pub mod tpcc;

use crate::error::Error;
use flashbuf_core::config::{self, Options, Spec};
use flashbuf_core::ConfigError;
use flashbuf_workload::{Consistency, WORKLOADS};
use rusqlite::Connection;
use std::fmt;

/// A configured SQL workload (no I/O until [`SqlWorkload::load`]).
pub trait SqlWorkload: fmt::Debug + Send + Sync {
    /// Its name (`tpcb`, `tpcc`), as in `flashbuf_workload::WORKLOADS`.
    fn name(&self) -> &'static str;
    /// The transaction kinds, in the order [`SqlWorker::step`] reports them.
    fn kinds(&self) -> &'static [&'static str];
    /// Creates the tables and loads them, seeded (several transactions).
    fn load(&self, conn: &mut Connection, seed: u64) -> Result<(), Error>;
    /// A transaction source over the loaded (or reopened) tables.
    fn worker(&self, conn: &Connection, seed: u64) -> Result<Box<dyn SqlWorker>, Error>;
    /// Checks the consistency conditions, by SQL queries.
    fn check(&self, conn: &Connection) -> Result<Consistency, Error>;
}

/// One connection's transactions.
pub trait SqlWorker: Send {
    /// Runs one transaction (committed, or rolled back as the workload says); returns its
    /// kind (an index into [`SqlWorkload::kinds`]).
    fn step(&mut self, conn: &mut Connection) -> Result<usize, Error>;
}

/// Parses `NAME[:key=value,...]` (`tpcb:accounts=10000`, `tpcc:warehouses=2,items=1000`)
/// against the native workloads' option schemas.
pub fn parse_sql_workload(text: &str) -> Result<Box<dyn SqlWorkload>, ConfigError> {
    let spec = Spec::parse(text, |_| false)?;
    let entry = config::lookup("workload", WORKLOADS, &spec.name, |e| e.name)?;
    let opts = Options::validate(&spec, entry.options)?;
    match entry.name {
        "tpcb" => Ok(Box::new(tpcb::SqlTpcB::from_options(&opts)?)),
        "tpcc" => Ok(Box::new(tpcc::SqlTpcC::from_options(&opts))),
        other => Err(ConfigError::invalid(
            other,
            "no SQL version of this workload; the SQL workloads are tpcb and tpcc",
        )),
    }
}

/// Runs `f` in a transaction: commits if it returns `Ok(true)`, rolls back on `Ok(false)`
/// or an error.
pub(crate) fn in_transaction(
    conn: &mut Connection,
    f: impl FnOnce(&rusqlite::Transaction<'_>) -> Result<bool, Error>,
) -> Result<bool, Error> {
    let tx = conn.transaction()?;
    let commit = f(&tx)?;
    if commit {
        tx.commit()?;
    } else {
        tx.rollback()?;
    }
    Ok(commit)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs_parse_with_the_native_schemas() {
        assert_eq!(
            parse_sql_workload("tpcb:accounts=100").unwrap().name(),
            "tpcb"
        );
        assert_eq!(
            parse_sql_workload("tpcc:items=100,customers=30")
                .unwrap()
                .name(),
            "tpcc"
        );
        let e = parse_sql_workload("tpcc:warehouse=2")
            .unwrap_err()
            .to_string();
        assert!(e.contains("warehouses"), "{e}");
        let e = parse_sql_workload("cfdc").unwrap_err().to_string();
        assert!(e.contains("tpcb and tpcc"), "{e}");
    }
}
