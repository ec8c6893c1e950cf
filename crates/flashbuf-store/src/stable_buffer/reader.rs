//! The Reader (paper §2.3, Algorithm 1): look the page up in the SBTT, then read it from
//! its slot or from home — one device I/O either way.

use super::layout::{decode_slot, restore_page, SlotInvalid};
use super::Inner;
use crate::{ReadOutcome, StoreError};
use flashbuf_core::page::{self, PageCheckError, PageState};
use flashbuf_core::PageId;
use flashbuf_device::Device;

/// Reads retried after racing with a concurrent write before a failed check is reported
/// as corruption anyway.
const MAX_RETRIES: u32 = 64;

enum Loc {
    Slot(u32),
    Home,
}

impl<D: Device> Inner<D> {
    /// Why the image of `slot` does not stage `pid`.
    pub(super) fn slot_error(&self, buf: &[u8], slot: u32) -> PageCheckError {
        match decode_slot(buf, self.salt, slot) {
            Ok(h) => PageCheckError::WrongPage { found: h.dest },
            Err(SlotInvalid::Checksum) => {
                let stored = u32::from_le_bytes([buf[0], buf[1], buf[2], buf[3]]);
                PageCheckError::Checksum {
                    stored,
                    computed: page::crc32c(&buf[4..]),
                }
            }
            Err(SlotInvalid::Empty | SlotInvalid::NotASlot) => {
                let mut found = [0u8; 4];
                found.copy_from_slice(&buf[4..8]);
                PageCheckError::BadMagic { found }
            }
        }
    }

    /// Reads page `pid` into `buf`.
    pub(super) fn read(&self, pid: PageId, buf: &mut [u8]) -> Result<ReadOutcome, StoreError> {
        self.poison.check()?;
        self.check_buf(buf.len())?;
        let home = self
            .layout
            .home_offset(pid)
            .ok_or_else(|| StoreError::Invalid(format!("{pid} is beyond the addressable range")))?;
        self.counters.read();
        let d = pid.0;
        let mut attempt = 0u32;
        loop {
            let (loc, gen) = {
                let mut st = self.state.lock();
                loop {
                    self.poison.check()?;
                    if let Some(l) = st.lost.get(&d) {
                        // Its promised version is lost (see `promise`): never data.
                        buf.fill(0);
                        return Err(Self::lost_error(pid, l.found, l.promised));
                    }
                    match st.sbtt.get(d) {
                        Some(s) if st.bits.busy(s) => self.changed.wait(&mut st),
                        Some(s) => break (Loc::Slot(s), st.slot_write_gen),
                        None => {
                            if st.joins.home_pending(d) {
                                // A background flush wrote it home: wait for that.
                                self.join(&mut st)?;
                            }
                            break (Loc::Home, st.home_write_gen);
                        }
                    }
                }
            };
            let failure = match loc {
                Loc::Slot(s) => {
                    self.read_page_at(self.layout.slot_offset(s), buf)?;
                    match decode_slot(buf, self.salt, s) {
                        Ok(h) if h.dest == pid => {
                            restore_page(buf);
                            self.state.lock().stats.slot_reads += 1;
                            return Ok(ReadOutcome::Found);
                        }
                        _ => {
                            let e = self.slot_error(buf, s);
                            let st = self.state.lock();
                            (st.slot_write_gen != gen, e)
                        }
                    }
                }
                Loc::Home => {
                    let state = if home + self.cfg.page_size as u64 > self.dev.len() {
                        buf.fill(0);
                        Ok(PageState::Unwritten)
                    } else {
                        self.read_page_at(home, buf)?;
                        page::check(buf, pid)
                    };
                    match state {
                        Ok(PageState::Sealed(_)) => {
                            self.state.lock().stats.home_reads += 1;
                            return Ok(ReadOutcome::Found);
                        }
                        Ok(PageState::Unwritten) if self.written.contains(pid) => {
                            // Written, yet zeros at home and not staged: lost at rest,
                            // unless a write staged it since the lookup (then retry).
                            let st = self.state.lock();
                            let raced = st.home_write_gen != gen || st.sbtt.get(d).is_some();
                            (raced, PageCheckError::Zeroed)
                        }
                        Ok(PageState::Unwritten) => {
                            // The page was not staged when looked up and its home was
                            // never written: it had never been written.
                            self.counters.unwritten();
                            self.state.lock().stats.home_reads += 1;
                            return Ok(ReadOutcome::Unwritten);
                        }
                        Err(e) => {
                            let st = self.state.lock();
                            (st.home_write_gen != gen, e)
                        }
                    }
                }
            };
            let (raced, reason) = failure;
            if raced && attempt < MAX_RETRIES {
                attempt += 1;
                self.state.lock().stats.read_retries += 1;
                continue;
            }
            // Never hand out the bytes of a corrupt page.
            buf.fill(0);
            return Err(StoreError::Corrupt { pid, reason });
        }
    }
}
