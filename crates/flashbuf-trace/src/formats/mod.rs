//! The trace formats: their names, one line parser per text format and one record decoder
//! per binary format.
//!
//! Each line parser turns one line (without its line terminator, never blank, never a `#`
//! comment) into a [`Parsed`] value, or into an error message that the reader prefixes
//! with the file name and line number; each record decoder does the same for one
//! fixed-size record, and the reader prefixes the record number.

use std::fmt;
use std::str::FromStr;

pub(crate) mod arc;
pub(crate) mod blkparse;
pub(crate) mod disksim;
pub(crate) mod fields;
pub(crate) mod lcs;
pub(crate) mod msr;
pub(crate) mod oracle;
pub(crate) mod pagebin;
pub(crate) mod pagetrace;
pub(crate) mod scan;
pub(crate) mod spc;

use crate::Op;

/// Largest number of pages one request may span (2^24, i.e. 64 GiB of 4 KiB pages).
///
/// A larger request is a parse error: no real trace issues one, and an absurd size in a
/// corrupt line would otherwise expand to billions of references.
pub const MAX_REQUEST_PAGES: u64 = 1 << 24;

/// Number of bits of a page number that address pages inside one SPC ASU, DiskSim device
/// or blkparse device; the ASU / device number goes above them:
/// `page = (asu << 40) | page_within`.
pub const ADDRESS_SPACE_BITS: u32 = 40;

/// A trace file format.
///
/// The names used by [`FromStr`] and [`Display`](fmt::Display) are `pagetrace`, `msr`,
/// `spc`, `lcs-csv`, `disksim`, `arc`, `oracle-general`, `blkparse`, `blkparse-d` and
/// `pagebin`; `auto` (detect from the content) is handled by [`Format::parse_arg`] and by
/// passing `None` to [`TraceReader::open`](crate::TraceReader::open).
///
/// ```
/// use flashbuf_trace::{BlkAction, Format};
/// assert_eq!("lcs-csv".parse::<Format>().unwrap(), Format::LcsCsv);
/// assert_eq!(Format::ArcLis.to_string(), "arc");
/// assert_eq!("blkparse-d".parse::<Format>().unwrap(), Format::Blkparse(BlkAction::Issue));
/// assert_eq!(Format::parse_arg("auto").unwrap(), None);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Format {
    /// Page-reference CSV: header `op,page`, then `R,123` / `W,123`.
    PageTrace,
    /// MSR Cambridge CSV: `Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime`.
    Msr,
    /// UMass SPC: `ASU,LBA,Size,Opcode,Timestamp`.
    Spc,
    /// libCacheSim CSV: `version,time,op,size,lbn` with a hex SCSI opcode.
    LcsCsv,
    /// DiskSim ASCII: `time device sector sectors flags`.
    DiskSim,
    /// ARC `.lis`: `first_page page_count _ _`.
    ArcLis,
    /// libCacheSim's binary `oracleGeneral`: 24-byte records
    /// `{u32 clock_time; u64 obj_id; u32 obj_size; i64 next_access_vtime}`, read as reads of
    /// page `obj_id`.
    OracleGeneral,
    /// Linux `blkparse` text output in its default format; one kind of event is counted.
    Blkparse(BlkAction),
    /// flashbuf's binary page trace: a 16-byte header, then one `u64` per reference (see
    /// [`PageBinWriter`](crate::PageBinWriter)).
    PageBin,
}

/// Which `blkparse` event a [`Format::Blkparse`] trace counts as a request.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BlkAction {
    /// `Q`: the request as it was queued (submitted by the file system or application),
    /// before the I/O scheduler merged, split or reordered it. The default.
    Queue,
    /// `D`: the request as it was issued to the driver (after merging and scheduling;
    /// requeued requests are issued again).
    Issue,
}

impl BlkAction {
    /// The action letter blkparse prints: `Q` or `D`.
    pub const fn letter(self) -> u8 {
        match self {
            BlkAction::Queue => b'Q',
            BlkAction::Issue => b'D',
        }
    }
}

impl Format {
    /// Every format, in the order of the CLI's list.
    pub const ALL: [Format; 10] = [
        Format::PageTrace,
        Format::Msr,
        Format::Spc,
        Format::LcsCsv,
        Format::DiskSim,
        Format::ArcLis,
        Format::OracleGeneral,
        Format::Blkparse(BlkAction::Queue),
        Format::Blkparse(BlkAction::Issue),
        Format::PageBin,
    ];

    /// The format's name (`pagetrace`, `msr`, `spc`, `lcs-csv`, `disksim`, `arc`,
    /// `oracle-general`, `blkparse`, `blkparse-d`, `pagebin`).
    pub const fn name(self) -> &'static str {
        match self {
            Format::PageTrace => "pagetrace",
            Format::Msr => "msr",
            Format::Spc => "spc",
            Format::LcsCsv => "lcs-csv",
            Format::DiskSim => "disksim",
            Format::ArcLis => "arc",
            Format::OracleGeneral => "oracle-general",
            Format::Blkparse(BlkAction::Queue) => "blkparse",
            Format::Blkparse(BlkAction::Issue) => "blkparse-d",
            Format::PageBin => "pagebin",
        }
    }

    /// Whether the format addresses bytes (or sectors) and so depends on the page size.
    pub const fn is_byte_addressed(self) -> bool {
        !matches!(
            self,
            Format::PageTrace | Format::ArcLis | Format::OracleGeneral | Format::PageBin
        )
    }

    /// Whether the format is binary (fixed-size records) rather than lines of text.
    pub const fn is_binary(self) -> bool {
        matches!(self, Format::OracleGeneral | Format::PageBin)
    }

    /// Parses a CLI argument: a format name, or `auto` for `None` (detect).
    pub fn parse_arg(s: &str) -> Result<Option<Format>, ParseFormatError> {
        if s.trim().eq_ignore_ascii_case("auto") {
            Ok(None)
        } else {
            s.parse().map(Some)
        }
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// An unknown format name; its message lists the valid ones.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "unknown trace format '{0}'; valid formats: auto, pagetrace, msr, spc, lcs-csv, disksim, \
     arc, oracle-general, blkparse, blkparse-d, pagebin"
)]
pub struct ParseFormatError(pub String);

impl FromStr for Format {
    type Err = ParseFormatError;

    /// Accepts the names of [`Format::name`] (case-insensitive) and the aliases
    /// `lcs`, `libcachesim`, `lis`, `oraclegeneral`, `oracle`, `blkparse-q`, `blktrace`,
    /// `bin`.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let t = s.trim().to_ascii_lowercase();
        Ok(match t.as_str() {
            "pagetrace" => Format::PageTrace,
            "msr" => Format::Msr,
            "spc" => Format::Spc,
            "lcs-csv" | "lcs" | "libcachesim" => Format::LcsCsv,
            "disksim" => Format::DiskSim,
            "arc" | "lis" => Format::ArcLis,
            "oracle-general" | "oraclegeneral" | "oracle" => Format::OracleGeneral,
            "blkparse" | "blkparse-q" | "blktrace" => Format::Blkparse(BlkAction::Queue),
            "blkparse-d" => Format::Blkparse(BlkAction::Issue),
            "pagebin" | "bin" => Format::PageBin,
            _ => return Err(ParseFormatError(s.to_string())),
        })
    }
}

/// What one line of a trace amounts to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Parsed {
    /// One page reference.
    One(Op, u64),
    /// References to the pages `first..=last`, in order (`first < last`).
    Span(Op, u64, u64),
    /// A valid request that references nothing (e.g. a SCSI command that is neither a read
    /// nor a write); counted by [`TraceReader::skipped`](crate::TraceReader::skipped).
    Skip,
    /// A valid line that is not a request at all (a blkparse event of another kind, a line
    /// of its summary); not counted.
    Ignore,
}

/// The pages touched by `size` bytes at byte `offset`: `offset/ps ..= (offset+size-1)/ps`,
/// or just the page containing `offset` when `size` is 0.
#[inline]
pub(crate) fn byte_span(op: Op, offset: u64, size: u64, ps: u64) -> Result<Parsed, String> {
    let first = offset / ps;
    let last = if size == 0 {
        first
    } else {
        match offset.checked_add(size - 1) {
            Some(end) => end / ps,
            None => {
                return Err(format!(
                    "request at byte {offset} of {size} bytes overflows 64 bits"
                ))
            }
        }
    };
    span(op, first, last, size)
}

#[inline]
fn span(op: Op, first: u64, last: u64, size: u64) -> Result<Parsed, String> {
    if first == last {
        Ok(Parsed::One(op, first))
    } else if last - first >= MAX_REQUEST_PAGES {
        Err(format!(
            "request of {size} bytes spans {} pages, more than the limit of {MAX_REQUEST_PAGES}",
            last - first + 1
        ))
    } else {
        Ok(Parsed::Span(op, first, last))
    }
}

/// Places a parsed request inside address space `space` (SPC ASU, DiskSim device).
#[inline]
pub(crate) fn in_space(p: Parsed, space: u64, what: &str) -> Result<Parsed, String> {
    const LIMIT: u64 = 1 << ADDRESS_SPACE_BITS;
    if space >= 1 << (64 - ADDRESS_SPACE_BITS) {
        return Err(format!(
            "{what} {space} is too large (at most {})",
            (1u64 << (64 - ADDRESS_SPACE_BITS)) - 1
        ));
    }
    let base = space << ADDRESS_SPACE_BITS;
    let last = match p {
        Parsed::One(_, l) | Parsed::Span(_, _, l) => l,
        Parsed::Skip | Parsed::Ignore => return Ok(p),
    };
    if last >= LIMIT {
        return Err(format!(
            "request ends at page {last}, beyond the 2^{ADDRESS_SPACE_BITS} pages of one {what}"
        ));
    }
    Ok(match p {
        Parsed::One(op, a) => Parsed::One(op, base | a),
        Parsed::Span(op, a, b) => Parsed::Span(op, base | a, base | b),
        Parsed::Skip | Parsed::Ignore => p,
    })
}

#[cfg(test)]
mod tests {
    //! The fast paths accept only lines that the general parsers accept, with the same
    //! meaning, and they do take the common lines.

    use super::*;
    use proptest::prelude::*;

    type Fast = fn(&[u8], u64) -> Option<(Parsed, usize)>;
    type Slow = fn(&[u8], u64) -> Result<Parsed, String>;

    const PARSERS: [(Format, Fast, Slow); 6] = [
        (Format::PageTrace, pagetrace::fast, pagetrace::parse),
        (Format::Msr, msr::fast, msr::parse),
        (Format::Spc, spc::fast, spc::parse),
        (Format::LcsCsv, lcs::fast, lcs::parse),
        (Format::DiskSim, disksim::fast, disksim::parse),
        (Format::ArcLis, arc::fast, arc::parse),
    ];

    /// Checks one line against every format; returns the formats whose fast path took it.
    fn agree(line: &[u8], page_size: u64) -> Vec<Format> {
        let mut taken = Vec::new();
        if line.contains(&b'\n') {
            // The reader never hands a line break to a parser.
            return taken;
        }
        for (format, fast, slow) in PARSERS {
            let mut buf = line.to_vec();
            buf.extend_from_slice(b"\nR,1\n0 0 0 0\nxxxxxxxxxxxxxxxxxxxxxxxx");
            if let Some((parsed, len)) = fast(&buf, page_size) {
                assert_eq!(
                    len,
                    line.len() + 1,
                    "{format}: {:?}",
                    line.escape_ascii().to_string()
                );
                // The reader strips one `\r` before the line break.
                let stripped = line.strip_suffix(b"\r").unwrap_or(line);
                assert_eq!(
                    slow(stripped, page_size),
                    Ok(parsed),
                    "{format}: {:?}",
                    line.escape_ascii().to_string()
                );
                taken.push(format);
            }
        }
        taken
    }

    /// A valid line of some format with random values, then perhaps one field replaced by
    /// a token from [`field`] and perhaps one byte inserted or deleted: many lines the fast
    /// paths take, and many near misses.
    fn line() -> impl Strategy<Value = String> {
        let num = || prop_oneof![0u64..10_000, 0u64..1 << 40, any::<u64>()];
        let valid = (
            0..6usize,
            proptest::collection::vec(num(), 7),
            any::<bool>(),
            proptest::sample::select(vec!["2a", "28", "0x2a", "08", "aa", "0x12", "f"]),
        )
            .prop_map(|(k, v, rw, code)| {
                let (op, spc, msr) = if rw {
                    ("R", "r", "Read")
                } else {
                    ("W", "W", "Write")
                };
                match k {
                    0 => format!("{op},{}", v[0]),
                    1 => format!(
                        "{},host_1,{},{msr},{},{},{}",
                        v[0],
                        v[1] % 4,
                        v[2],
                        v[3] % 100_000,
                        v[4]
                    ),
                    2 => format!(
                        "{},{},{},{spc},{}.{}",
                        v[0] % 30,
                        v[1],
                        v[2] % 100_000,
                        v[3],
                        v[4]
                    ),
                    3 => format!("1,{},{code},{},{}", v[0], v[1] % 100_000, v[2]),
                    4 => format!("{} {} {}\t{} {}", v[0], v[1] % 16, v[2], v[3] % 300, v[4]),
                    _ => format!("{} {} 0 {}", v[0], v[1] % 70, v[2]),
                }
            });
        (
            valid,
            0..4u8,
            any::<proptest::sample::Index>(),
            field(),
            any::<proptest::sample::Index>(),
            any::<u8>(),
        )
            .prop_map(|(line, mode, at, token, pos, byte)| {
                let mut b = line.into_bytes();
                match mode {
                    0 => {}
                    1 => {
                        // Replace one field (comma- or blank-separated).
                        let sep = if b.contains(&b',') { b',' } else { b' ' };
                        let fields: Vec<&[u8]> = b.split(|&c| c == sep).collect();
                        let k = at.index(fields.len());
                        let mut out = Vec::new();
                        for (i, f) in fields.iter().enumerate() {
                            if i > 0 {
                                out.push(sep);
                            }
                            out.extend_from_slice(if i == k { token.as_bytes() } else { f });
                        }
                        b = out;
                    }
                    2 => {
                        let i = pos.index(b.len() + 1);
                        b.insert(i, byte);
                    }
                    _ => {
                        if !b.is_empty() {
                            b.remove(pos.index(b.len()));
                        }
                    }
                }
                String::from_utf8_lossy(&b).into_owned()
            })
    }

    fn field() -> impl Strategy<Value = String> {
        prop_oneof![
            6 => proptest::sample::select(vec![
                "0", "1", "7", "512", "4096", "8192", "0.5", "Read", "Write", "r", "w", "R",
                "W", "2a", "28", "0x28", "0x12", "hm", "16777216", "1099511627776",
                "18446744073709551615", "9999999999999999999",
            ])
            .prop_map(String::from),
            2 => proptest::sample::select(vec![
                "1.", ".5", "1e3", "-1", "read", "WRITE", "0X2A", "0x", "abc", "h m", "", " 1",
                "1 ", "\t", "\r", "1\r", "x", "99999999999999999999", "\u{e9}", "0x123", "1.2.3",
            ])
            .prop_map(String::from),
            2 => any::<u64>().prop_map(|n| n.to_string()),
            1 => "[0-9a-fA-FxrwRW., \t-]{0,12}",
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

        #[test]
        fn fast_paths_agree_with_parsers(l in line(), ps in prop_oneof![Just(512u64), Just(4096), 1u64..70_000]) {
            agree(l.as_bytes(), ps);
        }
    }

    #[test]
    fn common_lines_take_the_fast_path() {
        let cases: [(&str, Format); 12] = [
            ("R,973078940", Format::PageTrace),
            ("W,0", Format::PageTrace),
            (
                "17953151690860300,pgbench_s20,0,Read,4295032832,8192,0",
                Format::Msr,
            ),
            (
                "128166372003061629,hm,1,Write,3154227200,4096,1097",
                Format::Msr,
            ),
            ("0,20941264,8192,W,0.551706", Format::Spc),
            ("1,303567,3584,r,0.000000", Format::Spc),
            ("1,5633898,2a,512,42932745", Format::LcsCsv),
            ("1,5633898,0x28,6656,40409911", Format::LcsCsv),
            ("938513000 4 264719034 16 0", Format::DiskSim),
            ("0.000000\t0  8 16 1", Format::DiskSim),
            ("186880 1 0 0", Format::ArcLis),
            ("5 3 0 7", Format::ArcLis),
        ];
        for (line, format) in cases {
            assert_eq!(agree(line.as_bytes(), 4096), [format], "{line}");
        }
        assert_eq!(agree(b"W,12\r", 4096), [Format::PageTrace]);
        // Lines the general parsers take but the fast paths leave to them.
        for line in [
            " R,1",
            "R, 1",
            "1,h m,0,Read,0,1,0",
            "1,hm,0,read,0,1,0",
            "1 1 0 0 ",
        ] {
            assert_eq!(agree(line.as_bytes(), 4096), [], "{line}");
        }
    }
}
