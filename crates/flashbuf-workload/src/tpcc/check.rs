//! Consistency conditions 1–4 (§3.3.2.1–3.3.2.4), by full scans of the tables involved.

use super::rows::{district, order, warehouse};
use super::{Table, TpccSession, DISTRICTS};
use crate::codec::{get_i64, get_u32, key_u32};
use crate::workload::{Consistency, WorkloadError};
use std::ops::Bound;

/// Per-district aggregates.
#[derive(Debug, Clone, Copy, Default)]
struct Agg {
    d_ytd: i64,
    d_next_o_id: u32,
    max_o_id: u32,
    sum_ol_cnt: u64,
    no_count: u64,
    no_min: u32,
    no_max: u32,
    ol_count: u64,
}

pub(super) fn consistency(s: &TpccSession<'_>) -> Result<Consistency, WorkloadError> {
    let wn = usize::from(s.cfg.warehouses);
    let dn = usize::from(DISTRICTS);
    let slot =
        |k: &[u8]| (usize::from(u16::from_be_bytes([k[0], k[1]])) - 1) * dn + usize::from(k[2]) - 1;
    let mut agg = vec![Agg::default(); wn * dn];
    let mut w_ytd = vec![0i64; wn];
    let all = |t: Table, f: &mut dyn FnMut(&[u8], &[u8])| {
        s.tree(t).scan(Bound::Unbounded, Bound::Unbounded, |k, v| {
            f(k, v);
            true
        })
    };
    all(Table::Warehouse, &mut |k, v| {
        w_ytd[usize::from(u16::from_be_bytes([k[0], k[1]])) - 1] = get_i64(v, warehouse::YTD);
    })?;
    all(Table::District, &mut |k, v| {
        let a = &mut agg[slot(k)];
        a.d_ytd = get_i64(v, district::YTD);
        a.d_next_o_id = get_u32(v, district::NEXT_O_ID);
    })?;
    all(Table::Order, &mut |k, v| {
        let a = &mut agg[slot(k)];
        a.max_o_id = a.max_o_id.max(key_u32(k, 3));
        a.sum_ol_cnt += u64::from(v[order::OL_CNT]);
    })?;
    all(Table::NewOrder, &mut |k, _| {
        let a = &mut agg[slot(k)];
        let o = key_u32(k, 3);
        a.no_min = if a.no_count == 0 { o } else { a.no_min.min(o) };
        a.no_max = a.no_max.max(o);
        a.no_count += 1;
    })?;
    all(Table::OrderLine, &mut |k, _| agg[slot(k)].ol_count += 1)?;

    let mut out = Consistency::default();
    for w in 0..wn {
        let districts = &agg[w * dn..(w + 1) * dn];
        let sum: i64 = districts.iter().map(|a| a.d_ytd).sum();
        out.check("1 (W_YTD = sum(D_YTD))", w_ytd[w] == sum, || {
            format!(
                "warehouse {}: W_YTD {} but the districts add up to {sum}",
                w + 1,
                w_ytd[w]
            )
        });
        for (d, a) in districts.iter().enumerate() {
            let name = || format!("district {}/{}", w + 1, d + 1);
            let next = a.d_next_o_id.wrapping_sub(1);
            let no_ok = a.no_count == 0 || a.no_max == next;
            out.check(
                "2 (D_NEXT_O_ID - 1 = max(O_ID) = max(NO_O_ID))",
                next == a.max_o_id && no_ok,
                || {
                    format!(
                        "{}: D_NEXT_O_ID - 1 = {next}, max(O_ID) = {}, max(NO_O_ID) = {} ({} rows)",
                        name(),
                        a.max_o_id,
                        a.no_max,
                        a.no_count
                    )
                },
            );
            let span = if a.no_count == 0 {
                0
            } else {
                u64::from(a.no_max - a.no_min) + 1
            };
            out.check(
                "3 (max(NO_O_ID) - min(NO_O_ID) + 1 = rows in NEW-ORDER)",
                span == a.no_count,
                || {
                    format!(
                        "{}: new orders {}..={} but {} rows",
                        name(),
                        a.no_min,
                        a.no_max,
                        a.no_count
                    )
                },
            );
            out.check(
                "4 (sum(O_OL_CNT) = rows in ORDER-LINE)",
                a.sum_ol_cnt == a.ol_count,
                || {
                    format!(
                        "{}: sum(O_OL_CNT) {} but {} order lines",
                        name(),
                        a.sum_ol_cnt,
                        a.ol_count
                    )
                },
            );
        }
    }
    Ok(out)
}
