//! The five transactions (§2.4–2.8) as SQL, with the native workload's input draws.

use super::load::text;
use super::{nurand, NuRandC, SqlTpcC, NAME};
use crate::error::Error;
use crate::sql::{in_transaction, SqlWorker};
use flashbuf_core::rng::SplitMix64;
use flashbuf_workload::codec::uniform;
use flashbuf_workload::tpcc::{rows::last_name, DISTRICTS};
use rusqlite::{params, Connection, OptionalExtension, Transaction};

/// One driver connection's transactions.
pub struct Worker {
    cfg: SqlTpcC,
    c_run: NuRandC,
    rng: SplitMix64,
    /// Logical clock (entry and delivery dates).
    clock: i64,
}

/// One order line of a New-Order.
struct Line {
    i_id: u32,
    supply_w: u16,
    quantity: u8,
}

fn missing(what: String) -> Error {
    Error::data(NAME, format!("{what} missing"))
}

impl Worker {
    /// Reads the run's NURand constants and the clock from the loaded tables.
    pub fn new(cfg: SqlTpcC, conn: &Connection, rng: SplitMix64) -> Result<Self, Error> {
        let c_run = conn.query_row("SELECT c_last, c_id, ol_i_id FROM tpcc_run", [], |r| {
            Ok(NuRandC {
                c_last: r.get::<_, i64>(0)? as u64,
                c_id: r.get::<_, i64>(1)? as u64,
                ol_i_id: r.get::<_, i64>(2)? as u64,
            })
        })?;
        let clock: i64 = conn.query_row(
            "SELECT max((SELECT coalesce(max(o_entry_d), 1) FROM orders),
                        (SELECT coalesce(max(ol_delivery_d), 1) FROM order_line),
                        (SELECT coalesce(max(h_date), 1) FROM history)) + 1",
            [],
            |r| r.get(0),
        )?;
        Ok(Self {
            cfg,
            c_run,
            rng,
            clock,
        })
    }

    fn now(&mut self) -> i64 {
        self.clock += 1;
        self.clock - 1
    }

    /// A warehouse other than `w` (or `w` if it is the only one).
    fn other_warehouse(&mut self, w: u16) -> u16 {
        let n = self.cfg.0.warehouses;
        if n == 1 {
            return w;
        }
        let o = uniform(&mut self.rng, 1, u64::from(n) - 1) as u16;
        if o >= w {
            o + 1
        } else {
            o
        }
    }

    fn new_order_input(&mut self, w: u16) -> (u8, u32, Vec<Line>) {
        let cfg = self.cfg.0;
        let d = uniform(&mut self.rng, 1, u64::from(DISTRICTS)) as u8;
        let c = nurand(
            &mut self.rng,
            1023,
            self.c_run.c_id,
            1,
            u64::from(cfg.customers),
        ) as u32;
        let ol_cnt = uniform(&mut self.rng, 5, 15) as u8;
        let rollback = uniform(&mut self.rng, 1, 100) == 1;
        let mut lines = Vec::with_capacity(usize::from(ol_cnt));
        for k in 0..ol_cnt {
            let mut i_id = nurand(
                &mut self.rng,
                8191,
                self.c_run.ol_i_id,
                1,
                u64::from(cfg.items),
            ) as u32;
            if rollback && k + 1 == ol_cnt {
                i_id = cfg.items + 1;
            }
            let supply_w = if self.rng.below(100) == 0 {
                self.other_warehouse(w)
            } else {
                w
            };
            let quantity = uniform(&mut self.rng, 1, 10) as u8;
            lines.push(Line {
                i_id,
                supply_w,
                quantity,
            });
        }
        (d, c, lines)
    }

    /// §2.4: returns 0, or 5 when the order rolled back (an unused item).
    fn new_order(&mut self, conn: &mut Connection, w: u16) -> Result<usize, Error> {
        let (d, c, lines) = self.new_order_input(w);
        let now = self.now();
        let committed = in_transaction(conn, |tx| {
            let mut prices = Vec::with_capacity(lines.len());
            for l in &lines {
                let p: Option<i64> = tx
                    .prepare_cached("SELECT i_price FROM item WHERE i_id = ?1")?
                    .query_row([l.i_id], |r| r.get(0))
                    .optional()?;
                match p {
                    Some(p) => prices.push(p),
                    None => return Ok(false),
                }
            }
            let w_tax: i64 = tx
                .prepare_cached("SELECT w_tax FROM warehouse WHERE w_id = ?1")?
                .query_row([w], |r| r.get(0))?;
            let (o_id, d_tax): (i64, i64) = tx
                .prepare_cached(
                    "UPDATE district SET d_next_o_id = d_next_o_id + 1 WHERE d_w_id = ?1 AND d_id = ?2 \
                     RETURNING d_next_o_id - 1, d_tax",
                )?
                .query_row(params![w, d], |r| Ok((r.get(0)?, r.get(1)?)))?;
            let discount: i64 = tx
                .prepare_cached("SELECT c_discount FROM customer WHERE c_w_id = ?1 AND c_d_id = ?2 AND c_id = ?3")?
                .query_row(params![w, d, c], |r| r.get(0))?;
            let all_local = lines.iter().all(|l| l.supply_w == w);
            tx.prepare_cached("INSERT INTO orders VALUES (?1, ?2, ?3, ?4, ?5, NULL, ?6, ?7)")?
                .execute(params![w, d, o_id, c, now, lines.len() as i64, all_local])?;
            tx.prepare_cached("INSERT INTO new_order VALUES (?1, ?2, ?3)")?
                .execute(params![w, d, o_id])?;
            let mut total = 0i64;
            for (k, (l, price)) in lines.iter().zip(&prices).enumerate() {
                let dist = take_stock(tx, w, d, l)?;
                let amount = i64::from(l.quantity) * price;
                total += amount;
                tx.prepare_cached(
                    "INSERT INTO order_line VALUES (?1, ?2, ?3, ?4, ?5, ?6, NULL, ?7, ?8, ?9)",
                )?
                .execute(params![
                    w,
                    d,
                    o_id,
                    k as i64 + 1,
                    l.i_id,
                    l.supply_w,
                    l.quantity,
                    amount,
                    dist
                ])?;
            }
            let total = total * (10_000 - discount) / 10_000 * (10_000 + w_tax + d_tax) / 10_000;
            std::hint::black_box(total);
            Ok(true)
        })?;
        Ok(if committed { 0 } else { 5 })
    }

    /// The customer of a Payment or Order-Status: 60% by last name (the middle one of
    /// those found, ordered by first name), 40% by id.
    fn pick_customer(&mut self, conn: &Connection, w: u16, d: u8) -> Result<u32, Error> {
        if self.rng.below(100) < 60 {
            let n = nurand(
                &mut self.rng,
                255,
                self.c_run.c_last,
                0,
                self.cfg.name_max(),
            );
            let last = text(last_name(n));
            let mut st = conn.prepare_cached(
                "SELECT c_id FROM customer WHERE c_w_id = ?1 AND c_d_id = ?2 AND c_last = ?3 ORDER BY c_first",
            )?;
            let ids: Vec<u32> = st
                .query_map(params![w, d, last], |r| r.get(0))?
                .collect::<Result<_, _>>()?;
            if ids.is_empty() {
                return Err(missing(format!("customers named {last} in {w}/{d}")));
            }
            return Ok(ids[ids.len().div_ceil(2) - 1]);
        }
        Ok(nurand(
            &mut self.rng,
            1023,
            self.c_run.c_id,
            1,
            u64::from(self.cfg.0.customers),
        ) as u32)
    }

    /// §2.5.
    fn payment(&mut self, conn: &mut Connection, w: u16) -> Result<(), Error> {
        let d = uniform(&mut self.rng, 1, u64::from(DISTRICTS)) as u8;
        let (c_w, c_d) = if self.rng.below(100) < 85 {
            (w, d)
        } else {
            let ow = self.other_warehouse(w);
            (ow, uniform(&mut self.rng, 1, u64::from(DISTRICTS)) as u8)
        };
        let c = self.pick_customer(conn, c_w, c_d)?;
        let amount = uniform(&mut self.rng, 100, 500_000) as i64;
        let now = self.now();
        in_transaction(conn, |tx| {
            let w_name: String = tx
                .prepare_cached(
                    "UPDATE warehouse SET w_ytd = w_ytd + ?1 WHERE w_id = ?2 RETURNING w_name",
                )?
                .query_row(params![amount, w], |r| r.get(0))?;
            let d_name: String = tx
                .prepare_cached(
                    "UPDATE district SET d_ytd = d_ytd + ?1 WHERE d_w_id = ?2 AND d_id = ?3 RETURNING d_name",
                )?
                .query_row(params![amount, w, d], |r| r.get(0))?;
            let credit: String = tx
                .prepare_cached(
                    "UPDATE customer SET c_balance = c_balance - ?1, c_ytd_payment = c_ytd_payment + ?1, \
                     c_payment_cnt = c_payment_cnt + 1 WHERE c_w_id = ?2 AND c_d_id = ?3 AND c_id = ?4 \
                     RETURNING c_credit",
                )?
                .query_row(params![amount, c_w, c_d, c], |r| r.get(0))?;
            if credit == "BC" {
                let note = format!("{c} {c_d} {c_w} {d} {w} {amount}|");
                tx.prepare_cached(
                    "UPDATE customer SET c_data = substr(?1 || c_data, 1, 500) \
                     WHERE c_w_id = ?2 AND c_d_id = ?3 AND c_id = ?4",
                )?
                .execute(params![note, c_w, c_d, c])?;
            }
            tx.prepare_cached("INSERT INTO history VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)")?
                .execute(params![
                    c,
                    c_d,
                    c_w,
                    d,
                    w,
                    now,
                    amount,
                    format!("{w_name}    {d_name}")
                ])?;
            Ok(true)
        })?;
        Ok(())
    }

    /// §2.6 (read-only).
    fn order_status(&mut self, conn: &mut Connection, w: u16) -> Result<(), Error> {
        let d = uniform(&mut self.rng, 1, u64::from(DISTRICTS)) as u8;
        let c = self.pick_customer(conn, w, d)?;
        in_transaction(conn, |tx| {
            let balance: i64 = tx
                .prepare_cached(
                    "SELECT c_balance FROM customer WHERE c_w_id = ?1 AND c_d_id = ?2 AND c_id = ?3",
                )?
                .query_row(params![w, d, c], |r| r.get(0))?;
            let o: Option<(i64, Option<i64>)> = tx
                .prepare_cached(
                    "SELECT o_id, o_carrier_id FROM orders WHERE o_w_id = ?1 AND o_d_id = ?2 AND o_c_id = ?3 \
                     ORDER BY o_id DESC LIMIT 1",
                )?
                .query_row(params![w, d, c], |r| Ok((r.get(0)?, r.get(1)?)))
                .optional()?;
            let (o_id, carrier) =
                o.ok_or_else(|| missing(format!("an order of customer {w}/{d}/{c}")))?;
            let sum: i64 = tx
                .prepare_cached(
                    "SELECT coalesce(sum(ol_amount + coalesce(ol_delivery_d, 0)), 0) FROM order_line \
                     WHERE ol_w_id = ?1 AND ol_d_id = ?2 AND ol_o_id = ?3",
                )?
                .query_row(params![w, d, o_id], |r| r.get(0))?;
            std::hint::black_box((balance, carrier, sum));
            Ok(true)
        })?;
        Ok(())
    }

    /// §2.7: delivers the oldest undelivered order of every district of `w`.
    fn delivery(&mut self, conn: &mut Connection, w: u16) -> Result<(), Error> {
        let carrier = uniform(&mut self.rng, 1, 10) as i64;
        let now = self.now();
        in_transaction(conn, |tx| {
            for d in 1..=DISTRICTS {
                deliver(tx, w, d, carrier, now)?;
            }
            Ok(true)
        })?;
        Ok(())
    }

    /// §2.8 (read-only).
    fn stock_level(&mut self, conn: &mut Connection, w: u16) -> Result<(), Error> {
        let d = uniform(&mut self.rng, 1, u64::from(DISTRICTS)) as u8;
        let threshold = uniform(&mut self.rng, 10, 20) as i64;
        in_transaction(conn, |tx| {
            let next: i64 = tx
                .prepare_cached("SELECT d_next_o_id FROM district WHERE d_w_id = ?1 AND d_id = ?2")?
                .query_row(params![w, d], |r| r.get(0))?;
            let low: i64 = tx
                .prepare_cached(
                    "SELECT count(DISTINCT s_i_id) FROM order_line, stock \
                     WHERE ol_w_id = ?1 AND ol_d_id = ?2 AND ol_o_id < ?3 AND ol_o_id >= ?3 - 20 \
                     AND s_w_id = ?1 AND s_i_id = ol_i_id AND s_quantity < ?4",
                )?
                .query_row(params![w, d, next, threshold], |r| r.get(0))?;
            std::hint::black_box(low);
            Ok(true)
        })?;
        Ok(())
    }
}

/// Takes `l`'s quantity from its stock row (§2.4.2.2); returns the district's `S_DIST_xx`.
fn take_stock(tx: &Transaction<'_>, w: u16, d: u8, l: &Line) -> Result<String, Error> {
    let sql = format!(
        "UPDATE stock SET s_quantity = CASE WHEN s_quantity >= ?1 + 10 THEN s_quantity - ?1 \
         ELSE s_quantity + 91 - ?1 END, s_ytd = s_ytd + ?1, s_order_cnt = s_order_cnt + 1, \
         s_remote_cnt = s_remote_cnt + ?2 WHERE s_w_id = ?3 AND s_i_id = ?4 RETURNING s_dist_{d:02}"
    );
    let remote = i64::from(l.supply_w != w);
    tx.prepare_cached(&sql)?
        .query_row(params![l.quantity, remote, l.supply_w, l.i_id], |r| {
            r.get(0)
        })
        .optional()?
        .ok_or_else(|| missing(format!("stock {}/{}", l.supply_w, l.i_id)))
}

/// Delivers the oldest new order of district `w`/`d`, if any.
fn deliver(tx: &Transaction<'_>, w: u16, d: u8, carrier: i64, now: i64) -> Result<(), Error> {
    let oldest: Option<i64> = tx
        .prepare_cached("SELECT min(no_o_id) FROM new_order WHERE no_w_id = ?1 AND no_d_id = ?2")?
        .query_row(params![w, d], |r| r.get(0))?;
    let Some(o) = oldest else {
        return Ok(());
    };
    tx.prepare_cached(
        "DELETE FROM new_order WHERE no_w_id = ?1 AND no_d_id = ?2 AND no_o_id = ?3",
    )?
    .execute(params![w, d, o])?;
    let c: i64 = tx
        .prepare_cached(
            "UPDATE orders SET o_carrier_id = ?1 WHERE o_w_id = ?2 AND o_d_id = ?3 AND o_id = ?4 RETURNING o_c_id",
        )?
        .query_row(params![carrier, w, d, o], |r| r.get(0))
        .optional()?
        .ok_or_else(|| missing(format!("order {w}/{d}/{o}")))?;
    let sum: i64 = tx
        .prepare_cached(
            "UPDATE order_line SET ol_delivery_d = ?1 WHERE ol_w_id = ?2 AND ol_d_id = ?3 AND ol_o_id = ?4 \
             RETURNING ol_amount",
        )?
        .query_map(params![now, w, d, o], |r| r.get::<_, i64>(0))?
        .sum::<Result<i64, _>>()?;
    let n = tx
        .prepare_cached(
            "UPDATE customer SET c_balance = c_balance + ?1, c_delivery_cnt = c_delivery_cnt + 1 \
             WHERE c_w_id = ?2 AND c_d_id = ?3 AND c_id = ?4",
        )?
        .execute(params![sum, w, d, c])?;
    if n != 1 {
        return Err(missing(format!("customer {w}/{d}/{c}")));
    }
    Ok(())
}

impl SqlWorker for Worker {
    fn step(&mut self, conn: &mut Connection) -> Result<usize, Error> {
        let w = uniform(&mut self.rng, 1, u64::from(self.cfg.0.warehouses)) as u16;
        match uniform(&mut self.rng, 1, 100) {
            1..=45 => self.new_order(conn, w),
            46..=88 => self.payment(conn, w).map(|()| 1),
            89..=92 => self.order_status(conn, w).map(|()| 2),
            93..=96 => self.delivery(conn, w).map(|()| 3),
            _ => self.stock_level(conn, w).map(|()| 4),
        }
    }
}
