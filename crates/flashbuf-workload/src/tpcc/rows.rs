//! Keys and row layouts of the TPC-C-like tables.
//!
//! Keys are the primary keys as big-endian fields (so byte order is key order). Rows put
//! the fixed-size fields first, at fixed offsets (little-endian; money in cents, tax and
//! discount in 1/10,000), the fields the transactions change side by side (a Payment
//! changes `C_BALANCE`, `C_YTD_PAYMENT` and `C_PAYMENT_CNT`: 20 adjacent bytes), then the
//! variable-length text fields (`u16` length, bytes), as a VARCHAR would be stored. Field
//! sizes follow §1.3; `CHAR(n)` fields of fixed length are stored at that length.

use crate::codec::KeyBuf;

/// Warehouse key.
pub fn warehouse_key(w: u16) -> Vec<u8> {
    KeyBuf::new().u16(w).done()
}
/// Warehouse row: `W_YTD` i64, `W_TAX` u32, then name, street 1 and 2, city, state, zip.
pub mod warehouse {
    /// `W_YTD`.
    pub const YTD: usize = 0;
    /// `W_TAX`.
    pub const TAX: usize = 8;
    /// Start of the text fields.
    pub const VARS: usize = 12;
}

/// District key.
pub fn district_key(w: u16, d: u8) -> Vec<u8> {
    KeyBuf::new().u16(w).u8(d).done()
}
/// District row: `D_YTD` i64, `D_NEXT_O_ID` u32, `D_TAX` u32, then name, street 1 and 2,
/// city, state, zip.
pub mod district {
    /// `D_YTD`.
    pub const YTD: usize = 0;
    /// `D_NEXT_O_ID`.
    pub const NEXT_O_ID: usize = 8;
    /// `D_TAX`.
    pub const TAX: usize = 12;
    /// Start of the text fields.
    pub const VARS: usize = 16;
}

/// Customer key.
pub fn customer_key(w: u16, d: u8, c: u32) -> Vec<u8> {
    KeyBuf::new().u16(w).u8(d).u32(c).done()
}
/// Customer row: `C_BALANCE` i64, `C_YTD_PAYMENT` i64, `C_PAYMENT_CNT` u32,
/// `C_DELIVERY_CNT` u32, `C_DISCOUNT` u32, `C_CREDIT_LIM` i64, `C_SINCE` u64, `C_CREDIT`
/// 2 bytes, then first, middle, last, street 1 and 2, city, state, zip, phone, data.
pub mod customer {
    /// `C_BALANCE`.
    pub const BALANCE: usize = 0;
    /// `C_YTD_PAYMENT`.
    pub const YTD_PAYMENT: usize = 8;
    /// `C_PAYMENT_CNT`.
    pub const PAYMENT_CNT: usize = 16;
    /// `C_DELIVERY_CNT`.
    pub const DELIVERY_CNT: usize = 20;
    /// `C_DISCOUNT`.
    pub const DISCOUNT: usize = 24;
    /// `C_CREDIT_LIM`.
    pub const CREDIT_LIM: usize = 28;
    /// `C_SINCE`.
    pub const SINCE: usize = 36;
    /// `C_CREDIT`.
    pub const CREDIT: usize = 44;
    /// Start of the text fields.
    pub const VARS: usize = 46;
    /// Index of `C_LAST` among the text fields.
    pub const LAST: usize = 2;
    /// Index of `C_DATA` among the text fields (the last one).
    pub const DATA: usize = 9;
    /// Longest `C_DATA` (§1.3.1: VARCHAR(500)).
    pub const DATA_MAX: usize = 500;
}

/// Customer-by-name index key: warehouse, district, last name, first name, customer id.
pub fn customer_name_key(w: u16, d: u8, last: &[u8], first: &[u8], c: u32) -> Vec<u8> {
    KeyBuf::new()
        .u16(w)
        .u8(d)
        .text(last)
        .text(first)
        .u32(c)
        .done()
}
/// The prefix of every index key of customers named `last` in a district.
pub fn customer_name_prefix(w: u16, d: u8, last: &[u8]) -> Vec<u8> {
    KeyBuf::new().u16(w).u8(d).text(last).done()
}

/// History key: an insertion sequence number (the table has no primary key, §1.3).
pub fn history_key(seq: u64) -> Vec<u8> {
    KeyBuf::new().u64(seq).done()
}
/// History row: `H_C_ID` u32, `H_C_D_ID` u8, `H_C_W_ID` u16, `H_D_ID` u8, `H_W_ID` u16,
/// `H_DATE` u64, `H_AMOUNT` i64, then data.
pub mod history {
    /// `H_AMOUNT`.
    pub const AMOUNT: usize = 18;
}

/// New-order key (the row is empty: the key is the whole row).
pub fn new_order_key(w: u16, d: u8, o: u32) -> Vec<u8> {
    KeyBuf::new().u16(w).u8(d).u32(o).done()
}

/// Order key.
pub fn order_key(w: u16, d: u8, o: u32) -> Vec<u8> {
    KeyBuf::new().u16(w).u8(d).u32(o).done()
}
/// Order row: `O_C_ID` u32, `O_ENTRY_D` u64, `O_CARRIER_ID` u8 (0 = null), `O_OL_CNT` u8,
/// `O_ALL_LOCAL` u8.
pub mod order {
    /// `O_C_ID`.
    pub const C_ID: usize = 0;
    /// `O_ENTRY_D`.
    pub const ENTRY_D: usize = 4;
    /// `O_CARRIER_ID`.
    pub const CARRIER: usize = 12;
    /// `O_OL_CNT`.
    pub const OL_CNT: usize = 13;
    /// Row length.
    pub const LEN: usize = 15;
}

/// Orders-by-customer index key (empty row).
pub fn order_customer_key(w: u16, d: u8, c: u32, o: u32) -> Vec<u8> {
    KeyBuf::new().u16(w).u8(d).u32(c).u32(o).done()
}

/// Order-line key.
pub fn order_line_key(w: u16, d: u8, o: u32, ol: u8) -> Vec<u8> {
    KeyBuf::new().u16(w).u8(d).u32(o).u8(ol).done()
}
/// Order-line row: `OL_I_ID` u32, `OL_SUPPLY_W_ID` u16, `OL_DELIVERY_D` u64 (0 = null),
/// `OL_QUANTITY` u8, `OL_AMOUNT` i64, `OL_DIST_INFO` 24 bytes.
pub mod order_line {
    /// `OL_I_ID`.
    pub const I_ID: usize = 0;
    /// `OL_SUPPLY_W_ID`.
    pub const SUPPLY_W: usize = 4;
    /// `OL_DELIVERY_D`.
    pub const DELIVERY_D: usize = 6;
    /// `OL_QUANTITY`.
    pub const QUANTITY: usize = 14;
    /// `OL_AMOUNT`.
    pub const AMOUNT: usize = 15;
    /// `OL_DIST_INFO`.
    pub const DIST_INFO: usize = 23;
    /// Row length.
    pub const LEN: usize = 47;
}

/// Item key.
pub fn item_key(i: u32) -> Vec<u8> {
    KeyBuf::new().u32(i).done()
}
/// Item row: `I_IM_ID` u32, `I_PRICE` i64, then name, data.
pub mod item {
    /// `I_PRICE`.
    pub const PRICE: usize = 4;
    /// Start of the text fields.
    pub const VARS: usize = 12;
}

/// Stock key.
pub fn stock_key(w: u16, i: u32) -> Vec<u8> {
    KeyBuf::new().u16(w).u32(i).done()
}
/// Stock row: `S_QUANTITY` u32, `S_YTD` u32, `S_ORDER_CNT` u16, `S_REMOTE_CNT` u16,
/// `S_DIST_01..10` 24 bytes each, then data.
pub mod stock {
    /// `S_QUANTITY`.
    pub const QUANTITY: usize = 0;
    /// `S_YTD`.
    pub const YTD: usize = 4;
    /// `S_ORDER_CNT`.
    pub const ORDER_CNT: usize = 8;
    /// `S_REMOTE_CNT`.
    pub const REMOTE_CNT: usize = 10;
    /// `S_DIST_01`.
    pub const DIST: usize = 12;
    /// Start of the text fields (`S_DATA`).
    pub const VARS: usize = 12 + 240;
}

const SYLLABLES: [&str; 10] = [
    "BAR", "OUGHT", "ABLE", "PRI", "PRES", "ESE", "ANTI", "CALLY", "ATION", "EING",
];

/// The last name of number `n` (0..=999), §4.3.2.3.
pub fn last_name(n: u64) -> Vec<u8> {
    let d = [n / 100 % 10, n / 10 % 10, n % 10];
    d.iter()
        .flat_map(|&i| SYLLABLES[i as usize].bytes())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn last_names_of_the_specification() {
        assert_eq!(last_name(371), b"PRICALLYOUGHT");
        assert_eq!(last_name(0), b"BARBARBAR");
    }

    #[test]
    fn index_prefix_covers_its_keys() {
        let p = customer_name_prefix(1, 2, b"ABLE");
        assert!(customer_name_key(1, 2, b"ABLE", b"Zed", 9).starts_with(&p));
        assert!(!customer_name_key(1, 2, b"ABLEX", b"a", 9).starts_with(&p));
    }
}
