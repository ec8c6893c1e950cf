//! Consistency conditions 1–4 (§3.3.2.1–3.3.2.4) as SQL: each query returns the rows
//! (warehouses or districts) that violate its condition, so an empty result means it
//! holds.

use crate::error::Error;
use flashbuf_workload::Consistency;
use rusqlite::types::Value;
use rusqlite::Connection;

/// The conditions: name (as the native workload reports them) and the query returning
/// the violating rows.
pub const CONDITIONS: [(&str, &str); 4] = [
    (
        "1 (W_YTD = sum(D_YTD))",
        "SELECT w_id, w_ytd, (SELECT sum(d_ytd) FROM district WHERE d_w_id = w_id) AS s
         FROM warehouse WHERE w_ytd IS NOT s",
    ),
    (
        "2 (D_NEXT_O_ID - 1 = max(O_ID) = max(NO_O_ID))",
        "SELECT d_w_id, d_id, d_next_o_id - 1,
                (SELECT max(o_id) FROM orders WHERE o_w_id = d_w_id AND o_d_id = d_id) AS mo,
                (SELECT max(no_o_id) FROM new_order WHERE no_w_id = d_w_id AND no_d_id = d_id) AS mno
         FROM district
         WHERE d_next_o_id - 1 IS NOT mo OR (mno IS NOT NULL AND mno != d_next_o_id - 1)",
    ),
    (
        "3 (max(NO_O_ID) - min(NO_O_ID) + 1 = rows in NEW-ORDER)",
        "SELECT no_w_id, no_d_id, min(no_o_id), max(no_o_id), count(*) FROM new_order
         GROUP BY no_w_id, no_d_id HAVING max(no_o_id) - min(no_o_id) + 1 != count(*)",
    ),
    (
        "4 (sum(O_OL_CNT) = rows in ORDER-LINE)",
        "SELECT o_w_id, o_d_id, sum(o_ol_cnt) AS s,
                (SELECT count(*) FROM order_line WHERE ol_w_id = o_w_id AND ol_d_id = o_d_id) AS n
         FROM orders GROUP BY o_w_id, o_d_id HAVING s != n",
    ),
];

/// Most violating rows reported per condition.
const REPORT_ROWS: usize = 5;

/// Runs every condition's query.
pub fn consistency(conn: &Connection) -> Result<Consistency, Error> {
    let mut out = Consistency::default();
    for (name, sql) in CONDITIONS {
        let mut st = conn.prepare(sql)?;
        let cols = st.column_count();
        let mut rows = st.query([])?;
        let mut bad = Vec::new();
        let mut n = 0usize;
        while let Some(r) = rows.next()? {
            n += 1;
            if bad.len() < REPORT_ROWS {
                let vals: Vec<String> = (0..cols)
                    .map(|i| match r.get::<_, Value>(i) {
                        Ok(Value::Integer(v)) => v.to_string(),
                        Ok(Value::Null) => "NULL".to_string(),
                        Ok(v) => format!("{v:?}"),
                        Err(e) => e.to_string(),
                    })
                    .collect();
                bad.push(format!("({})", vals.join(", ")));
            }
        }
        out.check(name, n == 0, || {
            format!("{n} violating rows, e.g. {}", bad.join(" "))
        });
    }
    Ok(out)
}
