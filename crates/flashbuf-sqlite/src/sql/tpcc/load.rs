//! The initial population (§4.3.3.1), in the native loader's order and with its draws:
//! items, then per warehouse its stock, districts, customers (with history rows) and
//! orders (with order lines and new orders). One transaction per warehouse (and one for
//! the items).

use super::{nurand, NuRandC, SqlTpcC};
use crate::error::Error;
use crate::sql::in_transaction;
use flashbuf_core::rng::SplitMix64;
use flashbuf_workload::codec::{a_string, n_string, uniform};
use flashbuf_workload::tpcc::{rows::last_name, DISTRICTS};
use rusqlite::{params, Connection, Transaction};

/// Text from the generators' ASCII bytes.
pub(crate) fn text(b: Vec<u8>) -> String {
    String::from_utf8_lossy(&b).into_owned()
}

/// A data string of 26..=50 characters, 10% of them holding "ORIGINAL".
fn data_with_original(rng: &mut SplitMix64) -> String {
    let mut s = a_string(rng, 26, 50);
    if rng.below(10) == 0 {
        let at = rng.below((s.len() - 8) as u64) as usize;
        s[at..at + 8].copy_from_slice(b"ORIGINAL");
    }
    text(s)
}

/// Street 1, street 2, city, state, zip.
fn address(rng: &mut SplitMix64) -> [String; 5] {
    let s1 = text(a_string(rng, 10, 20));
    let s2 = text(a_string(rng, 10, 20));
    let city = text(a_string(rng, 10, 20));
    let state = text(a_string(rng, 2, 2));
    let mut zip = n_string(rng, 4, 4);
    zip.extend_from_slice(b"11111");
    [s1, s2, city, state, text(zip)]
}

/// The run's NURand constants: C for the load, and C for the run whose C_LAST differs
/// from the load's by 65..=119, not 96 or 112 (§2.1.6.1).
fn constants(rng: &mut SplitMix64) -> (NuRandC, NuRandC) {
    let c_load = NuRandC {
        c_last: rng.below(256),
        c_id: rng.below(1024),
        ol_i_id: rng.below(8192),
    };
    let delta = loop {
        let d = 65 + rng.below(55);
        if d != 96 && d != 112 {
            break d;
        }
    };
    let c_run = NuRandC {
        c_last: (c_load.c_last + delta) % 256,
        c_id: rng.below(1024),
        ol_i_id: rng.below(8192),
    };
    (c_load, c_run)
}

pub(super) fn populate(
    w: &SqlTpcC,
    conn: &mut Connection,
    rng: &mut SplitMix64,
) -> Result<(), Error> {
    let (c_load, c_run) = constants(rng);
    let cfg = w.0;
    in_transaction(conn, |tx| {
        tx.execute_batch(super::SCHEMA)?;
        tx.execute(
            "INSERT INTO tpcc_run VALUES (?1, ?2, ?3)",
            params![c_run.c_last as i64, c_run.c_id as i64, c_run.ol_i_id as i64],
        )?;
        let mut ins = tx.prepare_cached("INSERT INTO item VALUES (?1, ?2, ?3, ?4, ?5)")?;
        for i in 1..=cfg.items {
            let im = uniform(rng, 1, 10_000) as i64;
            let price = uniform(rng, 100, 10_000) as i64;
            let name = text(a_string(rng, 14, 24));
            ins.execute(params![i, im, name, price, data_with_original(rng)])?;
        }
        Ok(true)
    })?;
    for wh in 1..=cfg.warehouses {
        in_transaction(conn, |tx| {
            let tax = uniform(rng, 0, 2000) as i64;
            let name = text(a_string(rng, 6, 10));
            let a = address(rng);
            tx.execute(
                "INSERT INTO warehouse VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, 30000000)",
                params![wh, name, a[0], a[1], a[2], a[3], a[4], tax],
            )?;
            load_stock(w, tx, rng, wh)?;
            for d in 1..=DISTRICTS {
                let tax = uniform(rng, 0, 2000) as i64;
                let name = text(a_string(rng, 6, 10));
                let a = address(rng);
                tx.execute(
                    "INSERT INTO district VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, 3000000, ?10)",
                    params![wh, d, name, a[0], a[1], a[2], a[3], a[4], tax, cfg.customers + 1],
                )?;
                load_customers(w, tx, rng, c_load, wh, d)?;
                load_orders(w, tx, rng, wh, d)?;
            }
            Ok(true)
        })?;
    }
    Ok(())
}

fn load_stock(
    w: &SqlTpcC,
    tx: &Transaction<'_>,
    rng: &mut SplitMix64,
    wh: u16,
) -> Result<(), Error> {
    let mut ins = tx.prepare_cached(
        "INSERT INTO stock VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, 0, 0, 0, ?14)",
    )?;
    for i in 1..=w.0.items {
        let q = uniform(rng, 10, 100) as i64;
        let d: Vec<String> = (0..10).map(|_| text(a_string(rng, 24, 24))).collect();
        let data = data_with_original(rng);
        ins.execute(params![
            wh, i, q, d[0], d[1], d[2], d[3], d[4], d[5], d[6], d[7], d[8], d[9], data
        ])?;
    }
    Ok(())
}

fn load_customers(
    w: &SqlTpcC,
    tx: &Transaction<'_>,
    rng: &mut SplitMix64,
    c: NuRandC,
    wh: u16,
    d: u8,
) -> Result<(), Error> {
    let mut ins = tx.prepare_cached(
        "INSERT INTO customer VALUES (?1, ?2, ?3, ?4, 'OE', ?5, ?6, ?7, ?8, ?9, ?10, ?11, 0, ?12, \
         5000000, ?13, -1000, 1000, 1, 0, ?14)",
    )?;
    let mut hist =
        tx.prepare_cached("INSERT INTO history VALUES (?1, ?2, ?3, ?2, ?3, 0, 1000, ?4)")?;
    for cid in 1..=w.0.customers {
        let n = if cid <= 1000 {
            u64::from(cid - 1)
        } else {
            nurand(rng, 255, c.c_last, 0, 999)
        };
        let (last, first) = (text(last_name(n)), text(a_string(rng, 8, 16)));
        let discount = uniform(rng, 0, 5000) as i64;
        let credit = if rng.below(10) == 0 { "BC" } else { "GC" };
        let a = address(rng);
        let phone = text(n_string(rng, 16, 16));
        let data = text(a_string(rng, 300, 500));
        ins.execute(params![
            wh, d, cid, first, last, a[0], a[1], a[2], a[3], a[4], phone, credit, discount, data
        ])?;
        hist.execute(params![cid, d, wh, text(a_string(rng, 12, 24))])?;
    }
    Ok(())
}

fn load_orders(
    w: &SqlTpcC,
    tx: &Transaction<'_>,
    rng: &mut SplitMix64,
    wh: u16,
    d: u8,
) -> Result<(), Error> {
    let n = w.0.customers;
    // O_C_ID: a random permutation of the customers (Fisher–Yates).
    let mut perm: Vec<u32> = (1..=n).collect();
    for i in (1..perm.len()).rev() {
        perm.swap(i, rng.below(i as u64 + 1) as usize);
    }
    let first_new = w.0.first_new_order();
    let mut order =
        tx.prepare_cached("INSERT INTO orders VALUES (?1, ?2, ?3, ?4, 1, ?5, ?6, 1)")?;
    let mut line =
        tx.prepare_cached("INSERT INTO order_line VALUES (?1, ?2, ?3, ?4, ?5, ?1, ?6, 5, ?7, ?8)")?;
    let mut new_order = tx.prepare_cached("INSERT INTO new_order VALUES (?1, ?2, ?3)")?;
    for o in 1..=n {
        let c = perm[o as usize - 1];
        let ol_cnt = uniform(rng, 5, 15);
        let delivered = o < first_new;
        let carrier = delivered.then(|| uniform(rng, 1, 10) as i64);
        order.execute(params![wh, d, o, c, carrier, ol_cnt as i64])?;
        for ol in 1..=ol_cnt {
            let i_id = uniform(rng, 1, u64::from(w.0.items)) as i64;
            let amount = if delivered {
                0
            } else {
                uniform(rng, 1, 999_999) as i64
            };
            let dist = text(a_string(rng, 24, 24));
            let delivery = delivered.then_some(1i64);
            line.execute(params![wh, d, o, ol as i64, i_id, delivery, amount, dist])?;
        }
        if !delivered {
            new_order.execute(params![wh, d, o])?;
        }
    }
    Ok(())
}
