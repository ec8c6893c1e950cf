//! TPC-C-like as SQL: the nine tables and five transactions of TPC-C (TPC Benchmark C,
//! Standard Specification, revision 5.11, 2010) through rusqlite, mirroring the native
//! workload (`flashbuf_workload::tpcc`): the same options, population rules (§4.3.3.1,
//! [`load`]), transaction mix and inputs (§2.4–2.8, NURand §2.1.6, [`txn`]) and
//! consistency conditions 1–4 (§3.3.2.1–3.3.2.4), here as SQL queries that return the
//! violating rows ([`check::CONDITIONS`]).
//!
//! Schema ([`SCHEMA`]): the specification's columns (money in cents, tax and discount in
//! 1/10,000, as the native rows), primary keys as `WITHOUT ROWID` tables (clustered, as
//! the native B+-trees), plus the two secondary indexes the transactions need:
//! customers by (warehouse, district, last name, first name) and orders by (warehouse,
//! district, customer, order). `tpcc_run` keeps the run's NURand constants C (§2.1.6.1),
//! so that a reopened database draws with the same ones.
//!
//! Deviations, as the native workload's: timestamps are a logical clock (one tick per
//! New-Order, Payment and Delivery; after a reopen it resumes past the largest date in
//! the tables); Delivery runs in the terminal's transaction (not queued); Stock-Level's
//! district is drawn per transaction; with fewer than 1,000 customers per district last
//! names are drawn from those loaded. SQL adds: every transaction is atomic and isolated
//! (one connection), and a New-Order naming an unused item (1%) is rolled back by SQLite
//! (counted as `new_order_rollback`).

pub mod check;
pub mod load;
pub mod txn;

use super::{SqlWorker, SqlWorkload};
use crate::error::Error;
use flashbuf_core::config::Options;
use flashbuf_core::rng::SplitMix64;
use flashbuf_workload::codec::stream_rng;
use flashbuf_workload::tpcc::{TpcC, KINDS};
use flashbuf_workload::Consistency;
use rusqlite::Connection;

pub(crate) const NAME: &str = "tpcc";

/// The tables and indexes.
pub const SCHEMA: &str = "
CREATE TABLE warehouse(w_id INTEGER PRIMARY KEY, w_name TEXT, w_street_1 TEXT, w_street_2 TEXT,
  w_city TEXT, w_state TEXT, w_zip TEXT, w_tax INTEGER, w_ytd INTEGER);
CREATE TABLE district(d_w_id INTEGER, d_id INTEGER, d_name TEXT, d_street_1 TEXT, d_street_2 TEXT,
  d_city TEXT, d_state TEXT, d_zip TEXT, d_tax INTEGER, d_ytd INTEGER, d_next_o_id INTEGER,
  PRIMARY KEY (d_w_id, d_id)) WITHOUT ROWID;
CREATE TABLE customer(c_w_id INTEGER, c_d_id INTEGER, c_id INTEGER, c_first TEXT, c_middle TEXT,
  c_last TEXT, c_street_1 TEXT, c_street_2 TEXT, c_city TEXT, c_state TEXT, c_zip TEXT,
  c_phone TEXT, c_since INTEGER, c_credit TEXT, c_credit_lim INTEGER, c_discount INTEGER,
  c_balance INTEGER, c_ytd_payment INTEGER, c_payment_cnt INTEGER, c_delivery_cnt INTEGER,
  c_data TEXT, PRIMARY KEY (c_w_id, c_d_id, c_id)) WITHOUT ROWID;
CREATE INDEX customer_name ON customer(c_w_id, c_d_id, c_last, c_first);
CREATE TABLE history(h_c_id INTEGER, h_c_d_id INTEGER, h_c_w_id INTEGER, h_d_id INTEGER,
  h_w_id INTEGER, h_date INTEGER, h_amount INTEGER, h_data TEXT);
CREATE TABLE new_order(no_w_id INTEGER, no_d_id INTEGER, no_o_id INTEGER,
  PRIMARY KEY (no_w_id, no_d_id, no_o_id)) WITHOUT ROWID;
CREATE TABLE orders(o_w_id INTEGER, o_d_id INTEGER, o_id INTEGER, o_c_id INTEGER,
  o_entry_d INTEGER, o_carrier_id INTEGER, o_ol_cnt INTEGER, o_all_local INTEGER,
  PRIMARY KEY (o_w_id, o_d_id, o_id)) WITHOUT ROWID;
CREATE INDEX orders_customer ON orders(o_w_id, o_d_id, o_c_id, o_id);
CREATE TABLE order_line(ol_w_id INTEGER, ol_d_id INTEGER, ol_o_id INTEGER, ol_number INTEGER,
  ol_i_id INTEGER, ol_supply_w_id INTEGER, ol_delivery_d INTEGER, ol_quantity INTEGER,
  ol_amount INTEGER, ol_dist_info TEXT,
  PRIMARY KEY (ol_w_id, ol_d_id, ol_o_id, ol_number)) WITHOUT ROWID;
CREATE TABLE item(i_id INTEGER PRIMARY KEY, i_im_id INTEGER, i_name TEXT, i_price INTEGER, i_data TEXT);
CREATE TABLE stock(s_w_id INTEGER, s_i_id INTEGER, s_quantity INTEGER,
  s_dist_01 TEXT, s_dist_02 TEXT, s_dist_03 TEXT, s_dist_04 TEXT, s_dist_05 TEXT,
  s_dist_06 TEXT, s_dist_07 TEXT, s_dist_08 TEXT, s_dist_09 TEXT, s_dist_10 TEXT,
  s_ytd INTEGER, s_order_cnt INTEGER, s_remote_cnt INTEGER, s_data TEXT,
  PRIMARY KEY (s_w_id, s_i_id)) WITHOUT ROWID;
CREATE TABLE tpcc_run(c_last INTEGER, c_id INTEGER, ol_i_id INTEGER);
";

/// The configured TPC-C-like workload (the native configuration).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SqlTpcC(pub TpcC);

impl SqlTpcC {
    /// From the native workload's validated options (`warehouses`, `items`, `customers`).
    pub fn from_options(o: &Options) -> Self {
        Self(TpcC {
            warehouses: o.u64("warehouses").unwrap_or(1) as u16,
            items: o.u64("items").unwrap_or(100_000) as u32,
            customers: o.u64("customers").unwrap_or(3000) as u32,
        })
    }

    /// The largest last-name number the run draws.
    pub(crate) fn name_max(&self) -> u64 {
        u64::from(self.0.customers.min(1000) - 1)
    }
}

/// The NURand constants C of a run (§2.1.6).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NuRandC {
    /// For C_LAST.
    pub c_last: u64,
    /// For C_ID.
    pub c_id: u64,
    /// For OL_I_ID.
    pub ol_i_id: u64,
}

/// NURand(A, x, y) = (((random(0, A) | random(x, y)) + C) % (y − x + 1)) + x (§2.1.6),
/// drawn as the native workload draws it.
pub fn nurand(rng: &mut SplitMix64, a: u64, c: u64, x: u64, y: u64) -> u64 {
    let r1 = rng.below(a + 1);
    let r2 = x + rng.below(y - x + 1);
    (((r1 | r2) + c) % (y - x + 1)) + x
}

impl SqlWorkload for SqlTpcC {
    fn name(&self) -> &'static str {
        NAME
    }
    fn kinds(&self) -> &'static [&'static str] {
        KINDS
    }
    fn load(&self, conn: &mut Connection, seed: u64) -> Result<(), Error> {
        load::populate(self, conn, &mut stream_rng(seed, 0))
    }
    fn worker(&self, conn: &Connection, seed: u64) -> Result<Box<dyn SqlWorker>, Error> {
        Ok(Box::new(txn::Worker::new(
            *self,
            conn,
            stream_rng(seed, 1),
        )?))
    }
    fn check(&self, conn: &Connection) -> Result<Consistency, Error> {
        check::consistency(conn)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nurand_stays_in_range() {
        let mut rng = SplitMix64::new(3);
        for _ in 0..10_000 {
            let v = nurand(&mut rng, 255, 100, 0, 999);
            assert!(v <= 999);
        }
    }
}
