//! The initial population (§4.3.3.1), in the order a loader would insert it: items,
//! then per warehouse its stock, districts, customers (with history rows) and orders
//! (with order lines and new orders).

use super::rows::{self, customer, district, order, order_line, stock, warehouse};
use super::{nurand, NuRandC, Table, TpccSession, DISTRICTS};
use crate::codec::{a_string, n_string, push_var, set_i64, set_u16, set_u32, uniform};
use crate::workload::WorkloadError;
use flashbuf_core::rng::SplitMix64;

/// A data string of 26..=50 characters, 10% of them holding "ORIGINAL" (§4.3.3.1).
fn data_with_original(rng: &mut SplitMix64) -> Vec<u8> {
    let mut s = a_string(rng, 26, 50);
    if rng.below(10) == 0 {
        let at = rng.below((s.len() - 8) as u64) as usize;
        s[at..at + 8].copy_from_slice(b"ORIGINAL");
    }
    s
}

fn address(rng: &mut SplitMix64, r: &mut Vec<u8>) {
    push_var(r, &a_string(rng, 10, 20));
    push_var(r, &a_string(rng, 10, 20));
    push_var(r, &a_string(rng, 10, 20));
    push_var(r, &a_string(rng, 2, 2));
    let mut zip = n_string(rng, 4, 4);
    zip.extend_from_slice(b"11111");
    push_var(r, &zip);
}

pub(super) fn populate(
    s: &TpccSession<'_>,
    rng: &mut SplitMix64,
    c: NuRandC,
) -> Result<(), WorkloadError> {
    let cfg = s.cfg;
    let items = s.tree(Table::Item);
    for i in 1..=cfg.items {
        let mut r = vec![0u8; rows::item::VARS];
        set_u32(&mut r, 0, uniform(rng, 1, 10_000) as u32);
        set_i64(&mut r, rows::item::PRICE, uniform(rng, 100, 10_000) as i64);
        push_var(&mut r, &a_string(rng, 14, 24));
        push_var(&mut r, &data_with_original(rng));
        items.insert(&rows::item_key(i), &r)?;
    }
    for w in 1..=cfg.warehouses {
        let mut r = vec![0u8; warehouse::VARS];
        set_i64(&mut r, warehouse::YTD, 30_000_000);
        set_u32(&mut r, warehouse::TAX, uniform(rng, 0, 2000) as u32);
        push_var(&mut r, &a_string(rng, 6, 10));
        address(rng, &mut r);
        s.tree(Table::Warehouse)
            .insert(&rows::warehouse_key(w), &r)?;
        load_stock(s, rng, w)?;
        for d in 1..=DISTRICTS {
            let mut r = vec![0u8; district::VARS];
            set_i64(&mut r, district::YTD, 3_000_000);
            set_u32(&mut r, district::NEXT_O_ID, cfg.customers + 1);
            set_u32(&mut r, district::TAX, uniform(rng, 0, 2000) as u32);
            push_var(&mut r, &a_string(rng, 6, 10));
            address(rng, &mut r);
            s.tree(Table::District)
                .insert(&rows::district_key(w, d), &r)?;
            load_customers(s, rng, c, w, d)?;
            load_orders(s, rng, w, d)?;
        }
    }
    Ok(())
}

fn load_stock(s: &TpccSession<'_>, rng: &mut SplitMix64, w: u16) -> Result<(), WorkloadError> {
    let t = s.tree(Table::Stock);
    for i in 1..=s.cfg.items {
        let mut r = vec![0u8; stock::VARS];
        set_u32(&mut r, stock::QUANTITY, uniform(rng, 10, 100) as u32);
        for k in 0..10 {
            let at = stock::DIST + 24 * k;
            r[at..at + 24].copy_from_slice(&a_string(rng, 24, 24));
        }
        push_var(&mut r, &data_with_original(rng));
        t.insert(&rows::stock_key(w, i), &r)?;
    }
    Ok(())
}

fn load_customers(
    s: &TpccSession<'_>,
    rng: &mut SplitMix64,
    c: NuRandC,
    w: u16,
    d: u8,
) -> Result<(), WorkloadError> {
    for cid in 1..=s.cfg.customers {
        let name = if cid <= 1000 {
            u64::from(cid - 1)
        } else {
            nurand(rng, 255, c.c_last, 0, 999)
        };
        let (last, first) = (rows::last_name(name), a_string(rng, 8, 16));
        let mut r = vec![0u8; customer::VARS];
        set_i64(&mut r, customer::BALANCE, -1000);
        set_i64(&mut r, customer::YTD_PAYMENT, 1000);
        set_u32(&mut r, customer::PAYMENT_CNT, 1);
        set_u32(&mut r, customer::DISCOUNT, uniform(rng, 0, 5000) as u32);
        set_i64(&mut r, customer::CREDIT_LIM, 5_000_000);
        let credit: &[u8] = if rng.below(10) == 0 { b"BC" } else { b"GC" };
        r[customer::CREDIT..customer::CREDIT + 2].copy_from_slice(credit);
        push_var(&mut r, &first);
        push_var(&mut r, b"OE");
        push_var(&mut r, &last);
        address(rng, &mut r);
        push_var(&mut r, &n_string(rng, 16, 16));
        push_var(&mut r, &a_string(rng, 300, customer::DATA_MAX));
        s.tree(Table::Customer)
            .insert(&rows::customer_key(w, d, cid), &r)?;
        s.tree(Table::CustomerName)
            .insert(&rows::customer_name_key(w, d, &last, &first, cid), &[])?;
        let mut h = vec![0u8; rows::history::AMOUNT + 8];
        set_u32(&mut h, 0, cid);
        h[4] = d;
        set_u16(&mut h, 5, w);
        h[7] = d;
        set_u16(&mut h, 8, w);
        set_i64(&mut h, rows::history::AMOUNT, 1000);
        push_var(&mut h, &a_string(rng, 12, 24));
        let seq = s
            .history_seq
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        s.tree(Table::History).insert(&rows::history_key(seq), &h)?;
    }
    Ok(())
}

fn load_orders(
    s: &TpccSession<'_>,
    rng: &mut SplitMix64,
    w: u16,
    d: u8,
) -> Result<(), WorkloadError> {
    let n = s.cfg.customers;
    // O_C_ID: a random permutation of the customers (Fisher–Yates).
    let mut perm: Vec<u32> = (1..=n).collect();
    for i in (1..perm.len()).rev() {
        perm.swap(i, rng.below(i as u64 + 1) as usize);
    }
    let first_new = s.cfg.first_new_order();
    for o in 1..=n {
        let c = perm[o as usize - 1];
        let ol_cnt = uniform(rng, 5, 15) as u8;
        let delivered = o < first_new;
        let mut r = vec![0u8; order::LEN];
        set_u32(&mut r, order::C_ID, c);
        set_i64(&mut r, order::ENTRY_D, 1);
        r[order::CARRIER] = if delivered {
            uniform(rng, 1, 10) as u8
        } else {
            0
        };
        r[order::OL_CNT] = ol_cnt;
        r[order::LEN - 1] = 1;
        s.tree(Table::Order).insert(&rows::order_key(w, d, o), &r)?;
        s.tree(Table::OrderCustomer)
            .insert(&rows::order_customer_key(w, d, c, o), &[])?;
        for ol in 1..=ol_cnt {
            let mut l = vec![0u8; order_line::LEN];
            set_u32(
                &mut l,
                order_line::I_ID,
                uniform(rng, 1, u64::from(s.cfg.items)) as u32,
            );
            set_u16(&mut l, order_line::SUPPLY_W, w);
            set_i64(&mut l, order_line::DELIVERY_D, i64::from(delivered));
            l[order_line::QUANTITY] = 5;
            let amount = if delivered {
                0
            } else {
                uniform(rng, 1, 999_999) as i64
            };
            set_i64(&mut l, order_line::AMOUNT, amount);
            l[order_line::DIST_INFO..].copy_from_slice(&a_string(rng, 24, 24));
            s.tree(Table::OrderLine)
                .insert(&rows::order_line_key(w, d, o, ol), &l)?;
        }
        if !delivered {
            s.tree(Table::NewOrder)
                .insert(&rows::new_order_key(w, d, o), &[])?;
        }
    }
    Ok(())
}
