//! The side journal of `flashbuf torture`: what was about to be written, and what a
//! completed `sync()` acknowledged.
//!
//! A text file, one record a line, each line ending in `crc=XXXXXXXX` (CRC32C of the text
//! before ` crc=`), appended and `fsync`ed record by record:
//!
//! ```text
//! flashbuf-torture 1 store=direct page_size=4096 pages=256 seed=42 crc=…
//! I 1 3:1,17:1 crc=…      intent: round 1 is about to write page 3 v1 and page 17 v1
//! A 1 3:1,17:1 crc=…      ack: the sync after those writes returned
//! ```
//!
//! The intent record is durable before the first write of its round, so a page on the
//! store can never be newer than the journal's intent for it; the ack record is appended
//! only after the store's `sync()` returned, so every acknowledged version must survive.
//! Only the last line may be torn (a kill or power cut during its append): a last line
//! without its newline is ignored, and resuming a run cuts it off before appending
//! ([`Journal::resume`]), so that the next record never lands glued to it (issue 11, bug
//! D). Any complete line that fails its checksum — the last one included — means the
//! journal itself is corrupt.

use crate::LabError;
use flashbuf_core::page::crc32c;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

/// Journal format version.
pub const JOURNAL_FORMAT: u32 = 1;

/// The first line: what the torture run was.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JournalHeader {
    /// Store name.
    pub store: String,
    /// Page size in bytes.
    pub page_size: usize,
    /// Pages `0..pages` are written.
    pub pages: u64,
    /// Seed of the page contents.
    pub seed: u64,
}

/// What a journal says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JournalState {
    /// The header.
    pub header: JournalHeader,
    /// Per page, the highest version a round intended to write (0: none).
    pub intended: Vec<u64>,
    /// Per page, the highest version a completed sync acknowledged (0: none).
    pub acked: Vec<u64>,
    /// Rounds acknowledged.
    pub rounds_acked: u64,
    /// The last round with an intent record (0: none).
    pub last_round: u64,
    /// Whether that round's ack is missing (writes in flight at the crash).
    pub last_round_open: bool,
    /// Records read (header excluded).
    pub records: u64,
    /// Whether a torn last line was ignored.
    pub torn_tail: bool,
    /// Bytes of the journal up to the end of its last complete, valid line (a resumed run
    /// cuts the file there).
    pub valid_bytes: u64,
}

/// Most pages a torture run (and its journal) may have.
pub const MAX_PAGES: u64 = 1 << 20;

fn seal_line(text: &str) -> String {
    format!("{text} crc={:08x}\n", crc32c(text.as_bytes()))
}

/// The text of a line if its checksum is right.
fn unseal_line(line: &str) -> Option<&str> {
    let (text, crc) = line.rsplit_once(" crc=")?;
    let crc = u32::from_str_radix(crc, 16).ok()?;
    (crc32c(text.as_bytes()) == crc).then_some(text)
}

fn entries_text(entries: &[(u64, u64)]) -> String {
    entries
        .iter()
        .map(|(p, v)| format!("{p}:{v}"))
        .collect::<Vec<_>>()
        .join(",")
}

/// Fsyncs a directory, so that a file created or renamed in it survives a power cut.
pub fn sync_dir(dir: &Path) -> Result<(), LabError> {
    File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(|e| LabError::io(format!("cannot sync directory {}", dir.display()), e))
}

/// An open journal, appending.
#[derive(Debug)]
pub struct Journal {
    file: File,
    path: PathBuf,
}

impl Journal {
    /// Creates the journal at `path` with `header`, atomically (temporary file, fsync,
    /// rename, fsync of the directory).
    pub fn create(path: &Path, header: &JournalHeader) -> Result<Self, LabError> {
        let tmp = path.with_extension("journal.tmp");
        let ctx = |what: &str| format!("cannot {what} {}", tmp.display());
        {
            let mut f = File::create(&tmp).map_err(|e| LabError::io(ctx("create"), e))?;
            f.write_all(
                seal_line(&format!(
                    "flashbuf-torture {JOURNAL_FORMAT} store={} page_size={} pages={} seed={}",
                    header.store, header.page_size, header.pages, header.seed
                ))
                .as_bytes(),
            )
            .and_then(|()| f.sync_all())
            .map_err(|e| LabError::io(ctx("write"), e))?;
        }
        std::fs::rename(&tmp, path).map_err(|e| {
            LabError::io(
                format!("cannot rename {} to {}", tmp.display(), path.display()),
                e,
            )
        })?;
        if let Some(dir) = path.parent() {
            sync_dir(dir)?;
        }
        Self::append_to(path)
    }

    /// Opens the journal `st` was read from for appending, first cutting off a torn last
    /// line (and fsyncing the cut), so that the next record starts on a line of its own.
    pub fn resume(path: &Path, st: &JournalState) -> Result<Self, LabError> {
        let j = Self::append_to(path)?;
        let len = j
            .file
            .metadata()
            .map_err(|e| LabError::io(format!("cannot stat {}", path.display()), e))?
            .len();
        if len != st.valid_bytes {
            if len < st.valid_bytes {
                return Err(LabError::Invariant(format!(
                    "journal {} shrank while being resumed ({len} bytes, {} read)",
                    path.display(),
                    st.valid_bytes
                )));
            }
            j.file
                .set_len(st.valid_bytes)
                .and_then(|()| j.file.sync_all())
                .map_err(|e| {
                    LabError::io(format!("cannot cut the torn tail of {}", path.display()), e)
                })?;
        }
        Ok(j)
    }

    fn append_to(path: &Path) -> Result<Self, LabError> {
        let file = OpenOptions::new().append(true).open(path).map_err(|e| {
            LabError::io(format!("cannot open {} for appending", path.display()), e)
        })?;
        Ok(Self {
            file,
            path: path.to_path_buf(),
        })
    }

    /// The journal's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends and fsyncs an intent record: round `round` is about to write `entries`
    /// (page, version).
    pub fn intent(&mut self, round: u64, entries: &[(u64, u64)]) -> Result<(), LabError> {
        self.append(&format!("I {round} {}", entries_text(entries)))
    }

    /// Appends and fsyncs an ack record: the sync after round `round`'s writes returned.
    pub fn ack(&mut self, round: u64, entries: &[(u64, u64)]) -> Result<(), LabError> {
        self.append(&format!("A {round} {}", entries_text(entries)))
    }

    fn append(&mut self, text: &str) -> Result<(), LabError> {
        self.file
            .write_all(seal_line(text).as_bytes())
            .and_then(|()| self.file.sync_data())
            .map_err(|e| LabError::io(format!("cannot append to {}", self.path.display()), e))
    }
}

fn bad(path: &Path, line: usize, what: &str) -> LabError {
    LabError::Invariant(format!(
        "journal {} is corrupt at line {line}: {what}",
        path.display()
    ))
}

fn parse_header(text: &str) -> Option<JournalHeader> {
    let mut it = text.split(' ');
    if it.next()? != "flashbuf-torture" || it.next()?.parse::<u32>().ok()? != JOURNAL_FORMAT {
        return None;
    }
    let mut h = JournalHeader {
        store: String::new(),
        page_size: 0,
        pages: 0,
        seed: 0,
    };
    for kv in it {
        let (k, v) = kv.split_once('=')?;
        match k {
            "store" => h.store = v.to_string(),
            "page_size" => h.page_size = v.parse().ok()?,
            "pages" => h.pages = v.parse().ok()?,
            "seed" => h.seed = v.parse().ok()?,
            _ => return None,
        }
    }
    (!h.store.is_empty() && h.page_size > 0 && h.pages > 0).then_some(h)
}

fn parse_entries(s: &str, pages: u64) -> Option<Vec<(u64, u64)>> {
    if s.is_empty() {
        return Some(Vec::new());
    }
    s.split(',')
        .map(|e| {
            let (p, v) = e.split_once(':')?;
            let (p, v) = (p.parse::<u64>().ok()?, v.parse::<u64>().ok()?);
            (p < pages && v > 0).then_some((p, v))
        })
        .collect()
}

/// Reads and validates a journal (bounded: it never trusts a size it reads).
pub fn read_journal(path: &Path) -> Result<JournalState, LabError> {
    let bytes = std::fs::read(path)
        .map_err(|e| LabError::io(format!("cannot read {}", path.display()), e))?;
    parse_journal(&bytes, path)
}

/// Parses journal bytes; `path` names the journal in errors.
pub fn parse_journal(bytes: &[u8], path: &Path) -> Result<JournalState, LabError> {
    // Lines with their byte ranges; the last one may lack its newline (torn).
    let raw: Vec<&[u8]> = bytes.split_inclusive(|&b| b == b'\n').collect();
    let n = raw.len();
    let Some(first) = raw.first() else {
        return Err(bad(path, 1, "empty"));
    };
    let line_text = |l: &[u8]| -> String {
        let l = l.strip_suffix(b"\n").unwrap_or(l);
        String::from_utf8_lossy(l.strip_suffix(b"\r").unwrap_or(l)).into_owned()
    };
    let first_text = line_text(first);
    let header = unseal_line(&first_text)
        .filter(|_| first.ends_with(b"\n"))
        .and_then(parse_header)
        .ok_or_else(|| bad(path, 1, "not a flashbuf torture journal header"))?;
    if header.pages > MAX_PAGES {
        return Err(bad(path, 1, "too many pages"));
    }
    let pages = header.pages;
    let mut st = JournalState {
        intended: vec![0; pages as usize],
        acked: vec![0; pages as usize],
        header,
        rounds_acked: 0,
        last_round: 0,
        last_round_open: false,
        records: 0,
        torn_tail: false,
        valid_bytes: first.len() as u64,
    };
    let mut open_round: Option<(u64, Vec<(u64, u64)>)> = None;
    for (i, raw_line) in raw.iter().enumerate().skip(1) {
        if i + 1 == n && !raw_line.ends_with(b"\n") {
            // A kill or power cut during the append of the last record: ignored (a
            // resumed run cuts it off). A complete line is judged like any other.
            st.torn_tail = true;
            break;
        }
        let line = line_text(raw_line);
        let text = unseal_line(&line).ok_or_else(|| bad(path, i + 1, "checksum mismatch"))?;
        apply_record(&mut st, &mut open_round, text, pages).map_err(|m| bad(path, i + 1, m))?;
        st.records += 1;
        st.valid_bytes += raw_line.len() as u64;
    }
    Ok(st)
}

/// Applies one (checksum-verified) record to the state.
fn apply_record(
    st: &mut JournalState,
    open_round: &mut Option<(u64, Vec<(u64, u64)>)>,
    text: &str,
    pages: u64,
) -> Result<(), &'static str> {
    let mut parts = text.splitn(3, ' ');
    let (kind, round, rest) = (parts.next(), parts.next(), parts.next().unwrap_or(""));
    let round: u64 = round
        .and_then(|r| r.parse().ok())
        .ok_or("bad round number")?;
    let entries = parse_entries(rest, pages).ok_or("bad page:version list")?;
    match kind {
        Some("I") => {
            if round <= st.last_round {
                return Err("rounds out of order");
            }
            for &(p, v) in &entries {
                let slot = &mut st.intended[p as usize];
                if v <= *slot {
                    return Err("versions must grow");
                }
                *slot = v;
            }
            st.last_round = round;
            st.last_round_open = true;
            *open_round = Some((round, entries));
        }
        Some("A") => match open_round.take() {
            Some((r, want)) if r == round && want == entries => {
                for (p, v) in entries {
                    st.acked[p as usize] = v;
                }
                st.rounds_acked += 1;
                st.last_round_open = false;
            }
            _ => return Err("ack without its intent"),
        },
        _ => return Err("unknown record"),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header() -> JournalHeader {
        JournalHeader {
            store: "direct".into(),
            page_size: 4096,
            pages: 8,
            seed: 3,
        }
    }

    #[test]
    fn roundtrip_and_torn_tail() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("j");
        let mut j = Journal::create(&p, &header()).unwrap();
        j.intent(1, &[(1, 1), (2, 1)]).unwrap();
        j.ack(1, &[(1, 1), (2, 1)]).unwrap();
        j.intent(2, &[(1, 2)]).unwrap();
        let st = read_journal(&p).unwrap();
        assert_eq!(st.header, header());
        assert_eq!((st.acked[1], st.intended[1], st.acked[2]), (1, 2, 1));
        assert_eq!(
            (st.rounds_acked, st.last_round, st.last_round_open),
            (1, 2, true)
        );
        assert!(!st.torn_tail);
        // Cut the last record anywhere: ignored as torn, and resuming cuts it off.
        let bytes = std::fs::read(&p).unwrap();
        let full = parse_journal(&bytes, &p).unwrap();
        assert_eq!(full.valid_bytes, bytes.len() as u64);
        for cut in 1..20 {
            let st = parse_journal(&bytes[..bytes.len() - cut], &p).unwrap();
            assert!(st.torn_tail);
            assert_eq!(st.intended[1], 1);
            assert!(st.valid_bytes < (bytes.len() - cut) as u64);
            assert!(bytes[..st.valid_bytes as usize].ends_with(b"\n"));
        }
        let torn = &bytes[..bytes.len() - 5];
        std::fs::write(&p, torn).unwrap();
        let st = read_journal(&p).unwrap();
        let mut j = Journal::resume(&p, &st).unwrap();
        j.intent(2, &[(3, 1)]).unwrap();
        let st = read_journal(&p).unwrap();
        assert!(!st.torn_tail);
        assert_eq!((st.intended[1], st.intended[3], st.records), (1, 1, 3));
        // A complete last line with a bad checksum is corruption, not a torn tail.
        let mut b = std::fs::read(&p).unwrap();
        let at = b.len() - 3;
        b[at] = if b[at] == b'0' { b'1' } else { b'0' };
        let e = parse_journal(&b, &p).unwrap_err().to_string();
        assert!(e.contains("line 4: checksum mismatch"), "{e}");
        // A bad line in the middle is corruption.
        let mut b = bytes.clone();
        let at = b.iter().position(|&c| c == b'A').unwrap();
        b[at + 2] = b'9';
        let e = parse_journal(&b, &p).unwrap_err().to_string();
        assert!(e.contains("line 3"), "{e}");
    }

    #[test]
    fn garbage_never_panics() {
        let p = Path::new("fuzz.journal");
        let mut rng = flashbuf_core::rng::SplitMix64::new(1);
        for n in 0..2000usize {
            let len = n % 300;
            let b: Vec<u8> = (0..len)
                .map(|_| b"I A 0123456789:,\n crc=flashbuf-torture"[rng.below(38) as usize])
                .collect();
            let _ = parse_journal(&b, p);
        }
    }
}
