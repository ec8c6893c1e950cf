//! The five transactions (§2.4–2.8) of one driver thread.

use super::rows::{self, customer, district, order, order_line, stock, warehouse};
use super::{nurand, Table, TpccSession, DISTRICTS, NAME};
use crate::codec::{
    get_i64, get_u16, get_u32, key_u32, push_var, set_i64, set_u16, set_u32, uniform, var_field,
};
use crate::workload::{Worker, WorkloadError};
use flashbuf_core::rng::SplitMix64;
use std::ops::Bound;
use std::sync::atomic::Ordering::Relaxed;

pub(super) struct TpccWorker<'s> {
    pub s: &'s TpccSession<'s>,
    pub rng: SplitMix64,
}

fn missing(what: String) -> WorkloadError {
    WorkloadError::data(NAME, format!("{what} missing"))
}

/// One order line of a New-Order.
struct Line {
    i_id: u32,
    supply_w: u16,
    quantity: u8,
}

impl Worker for TpccWorker<'_> {
    fn step(&mut self) -> Result<usize, WorkloadError> {
        let w = uniform(&mut self.rng, 1, u64::from(self.s.cfg.warehouses)) as u16;
        let roll = uniform(&mut self.rng, 1, 100);
        match roll {
            1..=45 => self.new_order(w),
            46..=88 => self.payment(w).map(|()| 1),
            89..=92 => self.order_status(w).map(|()| 2),
            93..=96 => self.delivery(w).map(|()| 3),
            _ => self.stock_level(w).map(|()| 4),
        }
    }
}

impl TpccWorker<'_> {
    fn now(&self) -> i64 {
        self.s.clock.fetch_add(1, Relaxed) as i64
    }

    /// A warehouse other than `w` (or `w` if it is the only one).
    fn other_warehouse(&mut self, w: u16) -> u16 {
        let n = self.s.cfg.warehouses;
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

    /// The inputs of a New-Order (§2.4.1): district, customer and order lines (the last
    /// naming an unused item in 1% of the orders).
    fn new_order_input(&mut self, w: u16) -> (u8, u32, Vec<Line>) {
        let cfg = self.s.cfg;
        let c_run = self.s.c_run;
        let d = uniform(&mut self.rng, 1, u64::from(DISTRICTS)) as u8;
        let c = nurand(&mut self.rng, 1023, c_run.c_id, 1, u64::from(cfg.customers)) as u32;
        let ol_cnt = uniform(&mut self.rng, 5, 15) as u8;
        let rollback = uniform(&mut self.rng, 1, 100) == 1;
        let mut lines = Vec::with_capacity(usize::from(ol_cnt));
        for k in 0..ol_cnt {
            let mut i_id =
                nurand(&mut self.rng, 8191, c_run.ol_i_id, 1, u64::from(cfg.items)) as u32;
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

    /// §2.4: returns 0, or 5 when the order rolled back.
    fn new_order(&mut self, w: u16) -> Result<usize, WorkloadError> {
        let (d, c, lines) = self.new_order_input(w);
        let ol_cnt = lines.len() as u8;
        let t = |x| self.s.tree(x);
        // Items first: an unused item rolls the order back before anything changed.
        let mut prices = Vec::with_capacity(lines.len());
        for l in &lines {
            match t(Table::Item).get_with(&rows::item_key(l.i_id), |r| {
                r.map(|r| get_i64(r, rows::item::PRICE))
            })? {
                Some(p) => prices.push(p),
                None => return Ok(5),
            }
        }
        let _guard = self.s.lock(w, d).lock();
        let w_tax = t(Table::Warehouse)
            .get_with(&rows::warehouse_key(w), |r| {
                r.map(|r| get_u32(r, warehouse::TAX))
            })?
            .ok_or_else(|| missing(format!("warehouse {w}")))?;
        let (mut o_id, mut d_tax) = (0, 0);
        t(Table::District).update(&rows::district_key(w, d), |r| {
            o_id = get_u32(r, district::NEXT_O_ID);
            d_tax = get_u32(r, district::TAX);
            let mut n = r.to_vec();
            set_u32(&mut n, district::NEXT_O_ID, o_id + 1);
            Some(n)
        })?;
        if o_id == 0 {
            return Err(missing(format!("district {w}/{d}")));
        }
        let discount = t(Table::Customer)
            .get_with(&rows::customer_key(w, d, c), |r| {
                r.map(|r| get_u32(r, customer::DISCOUNT))
            })?
            .ok_or_else(|| missing(format!("customer {w}/{d}/{c}")))?;
        let now = self.now();
        let all_local = lines.iter().all(|l| l.supply_w == w);
        let mut o = vec![0u8; order::LEN];
        set_u32(&mut o, order::C_ID, c);
        set_i64(&mut o, order::ENTRY_D, now);
        o[order::OL_CNT] = ol_cnt;
        o[order::LEN - 1] = u8::from(all_local);
        t(Table::Order).insert(&rows::order_key(w, d, o_id), &o)?;
        t(Table::NewOrder).insert(&rows::new_order_key(w, d, o_id), &[])?;
        t(Table::OrderCustomer).insert(&rows::order_customer_key(w, d, c, o_id), &[])?;
        let mut total = 0i64;
        for (k, (l, price)) in lines.iter().zip(&prices).enumerate() {
            let dist = self.take_stock(w, d, l)?;
            let amount = i64::from(l.quantity) * price;
            total += amount;
            let mut ol = vec![0u8; order_line::LEN];
            set_u32(&mut ol, order_line::I_ID, l.i_id);
            set_u16(&mut ol, order_line::SUPPLY_W, l.supply_w);
            ol[order_line::QUANTITY] = l.quantity;
            set_i64(&mut ol, order_line::AMOUNT, amount);
            ol[order_line::DIST_INFO..].copy_from_slice(&dist);
            t(Table::OrderLine).insert(&rows::order_line_key(w, d, o_id, k as u8 + 1), &ol)?;
        }
        let total = total * (10_000 - i64::from(discount)) / 10_000
            * (10_000 + i64::from(w_tax) + i64::from(d_tax))
            / 10_000;
        std::hint::black_box(total);
        Ok(0)
    }

    /// Takes `l`'s quantity from its stock row (§2.4.2.2) and returns the district's
    /// `S_DIST_xx`.
    fn take_stock(&self, w: u16, d: u8, l: &Line) -> Result<[u8; 24], WorkloadError> {
        let mut dist = [0u8; 24];
        let found =
            self.s
                .tree(Table::Stock)
                .update(&rows::stock_key(l.supply_w, l.i_id), |r| {
                    let at = stock::DIST + 24 * (usize::from(d) - 1);
                    dist.copy_from_slice(&r[at..at + 24]);
                    let mut n = r.to_vec();
                    let q = get_u32(r, stock::QUANTITY);
                    let want = u32::from(l.quantity);
                    set_u32(
                        &mut n,
                        stock::QUANTITY,
                        if q >= want + 10 {
                            q - want
                        } else {
                            q + 91 - want
                        },
                    );
                    set_u32(&mut n, stock::YTD, get_u32(r, stock::YTD) + want);
                    set_u16(
                        &mut n,
                        stock::ORDER_CNT,
                        get_u16(r, stock::ORDER_CNT).wrapping_add(1),
                    );
                    if l.supply_w != w {
                        set_u16(
                            &mut n,
                            stock::REMOTE_CNT,
                            get_u16(r, stock::REMOTE_CNT).wrapping_add(1),
                        );
                    }
                    Some(n)
                })?;
        if !found {
            return Err(missing(format!("stock {}/{}", l.supply_w, l.i_id)));
        }
        Ok(dist)
    }

    /// The customer of a Payment or Order-Status: 60% by last name (the middle one of
    /// those found, by first name), 40% by id.
    fn pick_customer(&mut self, w: u16, d: u8) -> Result<u32, WorkloadError> {
        let cfg = self.s.cfg;
        let c_run = self.s.c_run;
        if self.rng.below(100) < 60 {
            let last = rows::last_name(nurand(&mut self.rng, 255, c_run.c_last, 0, cfg.name_max()));
            let prefix = rows::customer_name_prefix(w, d, &last);
            let mut ids = Vec::new();
            self.s.tree(Table::CustomerName).scan(
                Bound::Included(&prefix),
                Bound::Unbounded,
                |k, _| {
                    let go = k.starts_with(&prefix);
                    if go {
                        ids.push(key_u32(k, k.len() - 4));
                    }
                    go
                },
            )?;
            if ids.is_empty() {
                return Err(missing(format!(
                    "customers named {}",
                    String::from_utf8_lossy(&last)
                )));
            }
            return Ok(ids[ids.len().div_ceil(2) - 1]);
        }
        Ok(nurand(&mut self.rng, 1023, c_run.c_id, 1, u64::from(cfg.customers)) as u32)
    }

    /// §2.5.
    fn payment(&mut self, w: u16) -> Result<(), WorkloadError> {
        let d = uniform(&mut self.rng, 1, u64::from(DISTRICTS)) as u8;
        let (c_w, c_d) = if self.rng.below(100) < 85 {
            (w, d)
        } else {
            (
                self.other_warehouse(w),
                uniform(&mut self.rng, 1, u64::from(DISTRICTS)) as u8,
            )
        };
        let c = self.pick_customer(c_w, c_d)?;
        let amount = uniform(&mut self.rng, 100, 500_000) as i64;
        let t = |x| self.s.tree(x);
        let mut w_name = Vec::new();
        let found = t(Table::Warehouse).update(&rows::warehouse_key(w), |r| {
            w_name = var_field(r, warehouse::VARS, 0)
                .unwrap_or_default()
                .to_vec();
            let mut n = r.to_vec();
            set_i64(&mut n, warehouse::YTD, get_i64(r, warehouse::YTD) + amount);
            Some(n)
        })?;
        if !found {
            return Err(missing(format!("warehouse {w}")));
        }
        let mut d_name = Vec::new();
        let found = t(Table::District).update(&rows::district_key(w, d), |r| {
            d_name = var_field(r, district::VARS, 0).unwrap_or_default().to_vec();
            let mut n = r.to_vec();
            set_i64(&mut n, district::YTD, get_i64(r, district::YTD) + amount);
            Some(n)
        })?;
        if !found {
            return Err(missing(format!("district {w}/{d}")));
        }
        let found = t(Table::Customer).update(&rows::customer_key(c_w, c_d, c), |r| {
            Some(paid(
                r,
                amount,
                [
                    c,
                    u32::from(c_d),
                    u32::from(c_w),
                    u32::from(d),
                    u32::from(w),
                ],
            ))
        })?;
        if !found {
            return Err(missing(format!("customer {c_w}/{c_d}/{c}")));
        }
        let mut h = vec![0u8; rows::history::AMOUNT + 8];
        set_u32(&mut h, 0, c);
        h[4] = c_d;
        set_u16(&mut h, 5, c_w);
        h[7] = d;
        set_u16(&mut h, 8, w);
        set_i64(&mut h, 10, self.now());
        set_i64(&mut h, rows::history::AMOUNT, amount);
        let mut data = w_name;
        data.extend_from_slice(b"    ");
        data.extend_from_slice(&d_name);
        push_var(&mut h, &data);
        let seq = self.s.history_seq.fetch_add(1, Relaxed);
        t(Table::History).insert(&rows::history_key(seq), &h)?;
        Ok(())
    }

    /// §2.6.
    fn order_status(&mut self, w: u16) -> Result<(), WorkloadError> {
        let d = uniform(&mut self.rng, 1, u64::from(DISTRICTS)) as u8;
        let c = self.pick_customer(w, d)?;
        let t = |x| self.s.tree(x);
        let balance = t(Table::Customer)
            .get_with(&rows::customer_key(w, d, c), |r| {
                r.map(|r| get_i64(r, customer::BALANCE))
            })?
            .ok_or_else(|| missing(format!("customer {w}/{d}/{c}")))?;
        let prefix = rows::order_customer_key(w, d, c, 0);
        let prefix = &prefix[..prefix.len() - 4];
        let mut last = None;
        t(Table::OrderCustomer).scan(Bound::Included(prefix), Bound::Unbounded, |k, _| {
            let go = k.starts_with(prefix);
            if go {
                last = Some(key_u32(k, k.len() - 4));
            }
            go
        })?;
        let o = last.ok_or_else(|| missing(format!("an order of customer {w}/{d}/{c}")))?;
        let carrier = t(Table::Order)
            .get_with(&rows::order_key(w, d, o), |r| r.map(|r| r[order::CARRIER]))?
            .ok_or_else(|| missing(format!("order {w}/{d}/{o}")))?;
        let (lo, hi) = (
            rows::order_line_key(w, d, o, 0),
            rows::order_line_key(w, d, o + 1, 0),
        );
        let mut sum = 0i64;
        t(Table::OrderLine).scan(Bound::Included(&lo), Bound::Excluded(&hi), |_, r| {
            sum += get_i64(r, order_line::AMOUNT) + get_i64(r, order_line::DELIVERY_D);
            true
        })?;
        std::hint::black_box((balance, carrier, sum));
        Ok(())
    }

    /// §2.7: delivers the oldest undelivered order of every district of `w`.
    fn delivery(&mut self, w: u16) -> Result<(), WorkloadError> {
        let carrier = uniform(&mut self.rng, 1, 10) as u8;
        let now = self.now();
        let t = |x| self.s.tree(x);
        for d in 1..=DISTRICTS {
            let _guard = self.s.lock(w, d).lock();
            let lo = rows::new_order_key(w, d, 0);
            let hi = rows::new_order_key(w, d + 1, 0);
            let oldest = t(Table::NewOrder).range(&lo, Some(&hi), 1)?;
            let Some((k, _)) = oldest.first() else {
                continue;
            };
            let o = key_u32(k, 3);
            if !t(Table::NewOrder).delete(k)? {
                return Err(missing(format!("new order {w}/{d}/{o}")));
            }
            let mut c = 0;
            t(Table::Order).update(&rows::order_key(w, d, o), |r| {
                c = get_u32(r, order::C_ID);
                let mut n = r.to_vec();
                n[order::CARRIER] = carrier;
                Some(n)
            })?;
            if c == 0 {
                return Err(missing(format!("order {w}/{d}/{o}")));
            }
            let (lo, hi) = (
                rows::order_line_key(w, d, o, 0),
                rows::order_line_key(w, d, o + 1, 0),
            );
            let mut sum = 0i64;
            t(Table::OrderLine).scan_update(&lo, Bound::Excluded(&hi), |_, r| {
                sum += get_i64(r, order_line::AMOUNT);
                let mut n = r.to_vec();
                set_i64(&mut n, order_line::DELIVERY_D, now);
                (Some(n), true)
            })?;
            let found = t(Table::Customer).update(&rows::customer_key(w, d, c), |r| {
                let mut n = r.to_vec();
                set_i64(
                    &mut n,
                    customer::BALANCE,
                    get_i64(r, customer::BALANCE) + sum,
                );
                set_u32(
                    &mut n,
                    customer::DELIVERY_CNT,
                    get_u32(r, customer::DELIVERY_CNT) + 1,
                );
                Some(n)
            })?;
            if !found {
                return Err(missing(format!("customer {w}/{d}/{c}")));
            }
        }
        Ok(())
    }

    /// §2.8.
    fn stock_level(&mut self, w: u16) -> Result<(), WorkloadError> {
        let d = uniform(&mut self.rng, 1, u64::from(DISTRICTS)) as u8;
        let threshold = uniform(&mut self.rng, 10, 20) as u32;
        let t = |x| self.s.tree(x);
        let next = t(Table::District)
            .get_with(&rows::district_key(w, d), |r| {
                r.map(|r| get_u32(r, district::NEXT_O_ID))
            })?
            .ok_or_else(|| missing(format!("district {w}/{d}")))?;
        let lo = rows::order_line_key(w, d, next.saturating_sub(20), 0);
        let hi = rows::order_line_key(w, d, next, 0);
        let mut items = Vec::new();
        t(Table::OrderLine).scan(Bound::Included(&lo), Bound::Excluded(&hi), |_, r| {
            items.push(get_u32(r, order_line::I_ID));
            true
        })?;
        items.sort_unstable();
        items.dedup();
        let mut low = 0;
        for i in items {
            let q = t(Table::Stock).get_with(&rows::stock_key(w, i), |r| {
                r.map(|r| get_u32(r, stock::QUANTITY))
            })?;
            if q.is_some_and(|q| q < threshold) {
                low += 1;
            }
        }
        std::hint::black_box(low);
        Ok(())
    }
}

/// The customer row after a payment of `amount` (§2.5.2.2): balance, YTD payment and
/// payment count change; a bad-credit customer's `C_DATA` gets the payment's ids and
/// amount in front, truncated to 500 characters.
fn paid(r: &[u8], amount: i64, ids: [u32; 5]) -> Vec<u8> {
    let mut n = r.to_vec();
    set_i64(
        &mut n,
        customer::BALANCE,
        get_i64(r, customer::BALANCE) - amount,
    );
    set_i64(
        &mut n,
        customer::YTD_PAYMENT,
        get_i64(r, customer::YTD_PAYMENT) + amount,
    );
    set_u32(
        &mut n,
        customer::PAYMENT_CNT,
        get_u32(r, customer::PAYMENT_CNT) + 1,
    );
    if &r[customer::CREDIT..customer::CREDIT + 2] != b"BC" {
        return n;
    }
    let Some(old) = var_field(r, customer::VARS, customer::DATA) else {
        return n;
    };
    let [c, c_d, c_w, d, w] = ids;
    let mut data = format!("{c} {c_d} {c_w} {d} {w} {amount}|").into_bytes();
    data.extend_from_slice(old);
    data.truncate(customer::DATA_MAX);
    // C_DATA is the last field: cut the row before it and append the new one.
    let data_at = r.len() - old.len() - 2;
    n.truncate(data_at);
    push_var(&mut n, &data);
    n
}
