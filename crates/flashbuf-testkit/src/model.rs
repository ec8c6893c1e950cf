//! The model a store is checked against: per page, its durable state and the writes since.
//!
//! See the crate documentation of [`crate`] for the rule ("old or new, never
//! torn or mixed; corrupt only if written since the last sync; no phantoms").

use super::content::stamp_of;
use flashbuf_core::PageId;
use flashbuf_store::{ReadOutcome, StoreError};
use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

/// What a page holds, as far as the model knows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PageValue {
    /// Never written (reads zero-filled, [`ReadOutcome::Unwritten`]).
    Unwritten,
    /// The payload of the write tagged `tag`.
    Data {
        /// The write's tag (see [`super::content`]).
        tag: u64,
        /// The payload bytes (page minus header).
        payload: Arc<[u8]>,
    },
    /// Reported corrupt by the store (a torn write that recovery could not undo).
    Corrupt,
}

impl PageValue {
    fn describe(&self) -> String {
        match self {
            PageValue::Unwritten => "unwritten".to_string(),
            PageValue::Data { tag, .. } => format!("write #{tag}"),
            PageValue::Corrupt => "corrupt".to_string(),
        }
    }
}

/// How a page read after a crash relates to the model (all of these are allowed).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Not written since the durable point, and read exactly as durable (this includes
    /// never-written pages reading unwritten).
    Synced,
    /// Written since the durable point, read as it was durable (the writes were lost).
    Old,
    /// Written since the durable point, read as its latest write.
    Newest,
    /// Written more than once since the durable point, read as an earlier one of those
    /// writes (a crash kept an earlier write and lost a later one).
    Intermediate,
    /// Written since the durable point, reported corrupt (a torn write, detected).
    CorruptUnsynced,
}

/// A broken promise: what the store returned and what the model allowed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    /// The page.
    pub pid: PageId,
    /// Short name of the violation (`lost synced write`, `phantom`, `mixed bytes`, ...).
    pub kind: &'static str,
    /// What was seen and what was allowed.
    pub detail: String,
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}: {}", self.pid, self.kind, self.detail)
    }
}

#[derive(Debug, Clone)]
struct PageModel {
    durable: PageValue,
    /// Writes since the durable point, oldest first.
    since: Vec<(u64, Arc<[u8]>)>,
    /// Every tag ever written to the page (for messages: stale vs never written).
    history: Vec<u64>,
}

impl Default for PageModel {
    fn default() -> Self {
        Self {
            durable: PageValue::Unwritten,
            since: Vec::new(),
            history: Vec::new(),
        }
    }
}

impl PageModel {
    fn latest(&self) -> PageValue {
        match self.since.last() {
            Some((tag, p)) => PageValue::Data {
                tag: *tag,
                payload: p.clone(),
            },
            None => self.durable.clone(),
        }
    }

    fn allowed(&self) -> String {
        let mut v = vec![format!("durable {}", self.durable.describe())];
        for (t, _) in &self.since {
            v.push(format!("write #{t}"));
        }
        if !self.since.is_empty() {
            v.push("corrupt".to_string());
        }
        v.join(" | ")
    }
}

/// What a read returned, classified: the value it shows, or why it shows none.
fn observe(
    pid: PageId,
    result: Result<ReadOutcome, &StoreError>,
    payload: &[u8],
) -> Result<ObservedRead, Violation> {
    match result {
        Ok(ReadOutcome::Unwritten) => Ok(ObservedRead::Unwritten),
        Ok(ReadOutcome::Found) => match stamp_of(payload) {
            Some((spid, tag)) if spid == pid => Ok(ObservedRead::Data(tag)),
            Some((spid, tag)) => Err(Violation {
                pid,
                kind: "misdirected bytes",
                detail: format!("returned a payload stamped for {spid} (write #{tag})"),
            }),
            None => Err(Violation {
                pid,
                kind: "short payload",
                detail: format!("payload of {} bytes", payload.len()),
            }),
        },
        Err(StoreError::Corrupt { .. }) => Ok(ObservedRead::Corrupt),
        Err(e) => Err(Violation {
            pid,
            kind: "unexpected error",
            detail: e.to_string(),
        }),
    }
}

enum ObservedRead {
    Unwritten,
    Data(u64),
    Corrupt,
}

/// The expected contents of every page a test touched.
#[derive(Debug, Clone, Default)]
pub struct Model {
    pages: BTreeMap<PageId, PageModel>,
}

impl Model {
    /// An empty model: every page unwritten.
    pub fn new() -> Self {
        Self::default()
    }

    /// Records a write of `payload`, tagged `tag`, to `pid` (not yet durable). Tags must
    /// be unique within a model.
    pub fn write(&mut self, pid: PageId, tag: u64, payload: Arc<[u8]>) {
        let p = self.pages.entry(pid).or_default();
        p.since.push((tag, payload));
        p.history.push(tag);
    }

    /// Records a completed `sync`: every page's latest write is now durable.
    pub fn sync(&mut self) {
        for p in self.pages.values_mut() {
            if !p.since.is_empty() {
                p.durable = p.latest();
                p.since.clear();
            }
        }
    }

    /// The latest value of `pid` (what a live read must return).
    pub fn latest(&self, pid: PageId) -> PageValue {
        self.pages
            .get(&pid)
            .map(PageModel::latest)
            .unwrap_or(PageValue::Unwritten)
    }

    /// Pages written since the durable point.
    pub fn unsynced_pages(&self) -> usize {
        self.pages.values().filter(|p| !p.since.is_empty()).count()
    }

    /// Pages the model knows of (written at least once).
    pub fn pages(&self) -> impl Iterator<Item = PageId> + '_ {
        self.pages.keys().copied()
    }

    /// Checks a read made while the store is up (no crash in between): it must show
    /// exactly the latest write (or unwritten / corrupt if that is the latest state).
    pub fn check_live(
        &self,
        pid: PageId,
        result: Result<ReadOutcome, &StoreError>,
        payload: &[u8],
    ) -> Result<(), Violation> {
        let latest = self.latest(pid);
        let seen = observe(pid, result, payload)?;
        let ok = match (&latest, &seen) {
            (PageValue::Unwritten, ObservedRead::Unwritten) => true,
            (PageValue::Corrupt, ObservedRead::Corrupt) => true,
            (PageValue::Data { tag, payload: want }, ObservedRead::Data(t)) if tag == t => {
                if **want != *payload {
                    return Err(Violation {
                        pid,
                        kind: "mixed bytes",
                        detail: format!("write #{t} read back with different bytes"),
                    });
                }
                true
            }
            _ => false,
        };
        if ok {
            Ok(())
        } else {
            Err(Violation {
                pid,
                kind: "stale read",
                detail: format!(
                    "read {} while the latest is {}",
                    describe_seen(&seen),
                    latest.describe()
                ),
            })
        }
    }

    /// Judges a read after a crash and recovery against the model (see [`Verdict`]), and
    /// returns the value the page now durably holds.
    pub fn check_recovered(
        &self,
        pid: PageId,
        result: Result<ReadOutcome, &StoreError>,
        payload: &[u8],
    ) -> Result<(Verdict, PageValue), Violation> {
        let empty = PageModel::default();
        let p = self.pages.get(&pid).unwrap_or(&empty);
        let seen = observe(pid, result, payload)?;
        let written_since = !p.since.is_empty();
        match seen {
            ObservedRead::Corrupt => {
                if written_since {
                    Ok((Verdict::CorruptUnsynced, PageValue::Corrupt))
                } else if p.durable == PageValue::Corrupt {
                    Ok((Verdict::Synced, PageValue::Corrupt))
                } else {
                    Err(Violation {
                        pid,
                        kind: "synced page corrupt",
                        detail: format!(
                            "reported corrupt, but its durable state is {} and it was not written since",
                            p.durable.describe()
                        ),
                    })
                }
            }
            ObservedRead::Unwritten => {
                if p.durable == PageValue::Unwritten {
                    let v = if written_since {
                        Verdict::Old
                    } else {
                        Verdict::Synced
                    };
                    Ok((v, PageValue::Unwritten))
                } else {
                    Err(Violation {
                        pid,
                        kind: "lost synced write",
                        detail: format!("reads unwritten; allowed: {}", p.allowed()),
                    })
                }
            }
            ObservedRead::Data(tag) => {
                let value = |want: &Arc<[u8]>| -> Result<PageValue, Violation> {
                    if **want == *payload {
                        Ok(PageValue::Data {
                            tag,
                            payload: want.clone(),
                        })
                    } else {
                        Err(Violation {
                            pid,
                            kind: "mixed bytes",
                            detail: format!(
                                "stamped write #{tag} but its bytes differ from that write (torn or mixed)"
                            ),
                        })
                    }
                };
                if let PageValue::Data {
                    tag: t,
                    payload: want,
                } = &p.durable
                {
                    if *t == tag {
                        let v = if written_since {
                            Verdict::Old
                        } else {
                            Verdict::Synced
                        };
                        return Ok((v, value(want)?));
                    }
                }
                if let Some(i) = p.since.iter().position(|(t, _)| *t == tag) {
                    let v = if i + 1 == p.since.len() {
                        Verdict::Newest
                    } else {
                        Verdict::Intermediate
                    };
                    return Ok((v, value(&p.since[i].1)?));
                }
                let kind = if p.history.contains(&tag) {
                    "rolled back"
                } else if p.history.is_empty() {
                    "phantom"
                } else {
                    "unknown write"
                };
                Err(Violation {
                    pid,
                    kind,
                    detail: format!("reads write #{tag}; allowed: {}", p.allowed()),
                })
            }
        }
    }

    /// After recovery: `pid` durably holds `value` and nothing is pending.
    pub fn recovered(&mut self, pid: PageId, value: PageValue) {
        let p = self.pages.entry(pid).or_default();
        p.durable = value;
        p.since.clear();
    }
}

fn describe_seen(s: &ObservedRead) -> String {
    match s {
        ObservedRead::Unwritten => "unwritten".to_string(),
        ObservedRead::Data(t) => format!("write #{t}"),
        ObservedRead::Corrupt => "corrupt".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::content::fill;

    fn payload(pid: u64, tag: u64) -> Arc<[u8]> {
        let mut p = vec![0u8; 64];
        fill(&mut p, PageId(pid), tag, 0);
        p.into()
    }

    fn corrupt() -> StoreError {
        StoreError::Corrupt {
            pid: PageId(1),
            reason: flashbuf_core::PageCheckError::Size { len: 1 },
        }
    }

    #[test]
    fn old_new_intermediate_and_corrupt_only_when_written_since() {
        let mut m = Model::new();
        let pid = PageId(1);
        m.write(pid, 1, payload(1, 1));
        m.sync();
        m.write(pid, 2, payload(1, 2));
        m.write(pid, 3, payload(1, 3));
        let ok = Ok(ReadOutcome::Found);
        let v = |tag| m.check_recovered(pid, ok, &payload(1, tag)).map(|x| x.0);
        assert_eq!(v(1), Ok(Verdict::Old));
        assert_eq!(v(2), Ok(Verdict::Intermediate));
        assert_eq!(v(3), Ok(Verdict::Newest));
        assert_eq!(v(4).unwrap_err().kind, "unknown write");
        let c = corrupt();
        assert_eq!(
            m.check_recovered(pid, Err(&c), &[]).map(|x| x.0),
            Ok(Verdict::CorruptUnsynced)
        );
        let e = m
            .check_recovered(pid, Ok(ReadOutcome::Unwritten), &[])
            .unwrap_err();
        assert_eq!(e.kind, "lost synced write");
        // Mixed: right stamp, wrong bytes.
        let mut mixed = payload(1, 3).to_vec();
        mixed[40] ^= 1;
        assert_eq!(
            m.check_recovered(pid, ok, &mixed).unwrap_err().kind,
            "mixed bytes"
        );
        m.sync();
        assert_eq!(
            m.check_recovered(pid, Err(&c), &[]).unwrap_err().kind,
            "synced page corrupt"
        );
        assert_eq!(
            m.check_recovered(pid, ok, &payload(1, 1)).unwrap_err().kind,
            "rolled back"
        );
        // Phantom: data in a page never written.
        assert_eq!(
            m.check_recovered(PageId(9), ok, &payload(9, 5))
                .unwrap_err()
                .kind,
            "phantom"
        );
        assert_eq!(
            m.check_recovered(PageId(9), Ok(ReadOutcome::Unwritten), &[])
                .map(|x| x.0),
            Ok(Verdict::Synced)
        );
    }

    #[test]
    fn live_reads_must_show_the_latest_write() {
        let mut m = Model::new();
        m.write(PageId(2), 7, payload(2, 7));
        assert!(m
            .check_live(PageId(2), Ok(ReadOutcome::Found), &payload(2, 7))
            .is_ok());
        assert!(m
            .check_live(PageId(2), Ok(ReadOutcome::Unwritten), &[])
            .is_err());
        assert!(m
            .check_live(PageId(3), Ok(ReadOutcome::Unwritten), &[])
            .is_ok());
        m.recovered(PageId(2), PageValue::Corrupt);
        let c = corrupt();
        assert!(m.check_live(PageId(2), Err(&c), &[]).is_ok());
    }
}
