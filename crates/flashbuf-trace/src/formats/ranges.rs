//! Range I/O CSV (`../shared/traces/README.md`): header `op,page,ranges,new`, then
//! `R,123,,` (a read below the buffer) or `W,123,100:32;4000:8,0` (a write-back with the
//! runs of bytes it changed, `offset:length` joined by `;`, and whether the block was new:
//! `0` an overwrite, `1` a block beyond the end of the file, `2` the first real content of
//! a zero block). Page numbers are used as they are. The ranges are checked (numbers,
//! `offset:length` pairs, lengths above 0); readers that need them parse them with
//! [`parse_ranges`]; a plain replay uses the references alone.

use super::fields::{expect_u64, show, split, trim};
use super::Parsed;
use crate::Op;

/// The header line, `op,page,ranges,new` (case-insensitive).
pub(crate) fn is_header(line: &[u8]) -> bool {
    trim(line).eq_ignore_ascii_case(b"op,page,ranges,new")
}

/// Parses the `ranges` field: `offset:length` pairs joined by `;` (empty: none).
///
/// ```
/// use flashbuf_trace::parse_ranges;
/// assert_eq!(parse_ranges("0:24;100:8"), Ok(vec![(0, 24), (100, 8)]));
/// assert_eq!(parse_ranges(""), Ok(vec![]));
/// assert!(parse_ranges("5").is_err());
/// ```
pub fn parse_ranges(field: &str) -> Result<Vec<(u64, u64)>, String> {
    let mut out = Vec::new();
    for part in field.split(';').map(str::trim).filter(|p| !p.is_empty()) {
        let (o, l) = part
            .split_once(':')
            .ok_or_else(|| format!("range '{part}' is not offset:length"))?;
        let o: u64 = o
            .trim()
            .parse()
            .map_err(|_| format!("range '{part}': '{o}' is not an offset"))?;
        let l: u64 = l
            .trim()
            .parse()
            .map_err(|_| format!("range '{part}': '{l}' is not a length"))?;
        if l == 0 {
            return Err(format!("range '{part}' has length 0"));
        }
        out.push((o, l));
    }
    Ok(out)
}

/// Parses one line.
pub(crate) fn parse(line: &[u8], _page_size: u64) -> Result<Parsed, String> {
    let [op, page, ranges, new] = split::<4>(line, b',').map_err(|n| {
        format!("expected 4 comma-separated fields (op,page,ranges,new), found {n}")
    })?;
    let page = expect_u64(page, "a page number")?;
    let ranges =
        std::str::from_utf8(trim(ranges)).map_err(|_| "ranges are not text".to_string())?;
    match trim(op) {
        b"R" | b"r" => {
            if !ranges.is_empty() || !trim(new).is_empty() {
                return Err("a read carries no ranges and no new flag".into());
            }
            Ok(Parsed::One(Op::Read, page))
        }
        b"W" | b"w" => {
            parse_ranges(ranges)?;
            match trim(new) {
                b"0" | b"1" | b"2" => Ok(Parsed::One(Op::Write, page)),
                n => Err(format!("expected new 0, 1 or 2, found '{}'", show(n))),
            }
        }
        o => Err(format!("expected op R or W, found '{}'", show(o))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines() {
        assert_eq!(parse(b"R,12,,", 0), Ok(Parsed::One(Op::Read, 12)));
        assert_eq!(parse(b"W,7,0:24;100:8,0", 0), Ok(Parsed::One(Op::Write, 7)));
        assert_eq!(parse(b"W,7,0:8192,1", 0), Ok(Parsed::One(Op::Write, 7)));
        assert!(parse(b"W,7,0:0,0", 0).unwrap_err().contains("length 0"));
        assert!(parse(b"W,7,0:8,3", 0)
            .unwrap_err()
            .contains("new 0, 1 or 2"));
        assert!(parse(b"R,7,0:8,", 0).unwrap_err().contains("no ranges"));
        assert!(parse(b"R,7", 0).unwrap_err().contains("4 comma-separated"));
        assert!(is_header(b"op,page,ranges,new"));
        assert!(!is_header(b"op,page"));
    }
}
