//! Damage at rest (issue 11): every block of a store image, damaged in turn, must leave
//! each page either exactly its newest synced version or reported corrupt — never an
//! older version, never unwritten — or the open refused; and what the first open reported
//! must still be reported by the next open (recovery keeps the evidence).
//!
//! The image is store-agnostic: every page is written and synced twice (more pages than a
//! small staging area holds, so a staging store has flushed some pages home and keeps
//! older copies in dead slots and at home), so an older version of a page is on the
//! device wherever the store kept one. The sweep damages every 512-byte sector that holds
//! data (and a seeded sample of all-zero ones) with a bit flip, zeros, random bytes, or a
//! copy of another sector — the superblock, the state record copies, staging slots, home
//! pages and whatever a future store puts on the device alike.
//!
//! Page sizes above the sector size: an all-zero page *is* a never-written page by the
//! page format's contract, so a store without a map of written pages (the direct store)
//! cannot tell a wholly zeroed page from one never written; a zeroed sector of a larger
//! page fails its checksum. (StableBuffer's promise record does catch a wholly zeroed
//! promised slot: see the corpus image `sb-promised-slot-zeroed.img`.)

use super::content::{filled_page, matches_fill, stamp_of};
use crate::CrashStore;
use flashbuf_core::page::HEADER_BYTES;
use flashbuf_core::rng::SplitMix64;
use flashbuf_core::{DirtyRanges, PageId};
use flashbuf_device::fault::FaultDevice;
use flashbuf_store::{ReadOutcome, StoreError};
use std::sync::Arc;

/// Sector size of the sweep.
pub const SECTOR: usize = 512;
/// Content seed of the images.
const SEED: u64 = 0xDA3A;

/// How a sector is damaged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Damage {
    /// One bit flipped at this byte of the sector.
    BitFlip(usize),
    /// The sector zeroed.
    Zero,
    /// The sector overwritten with seeded random bytes.
    Random(u64),
    /// The sector overwritten with a copy of another (data-holding) sector.
    CopyOf(usize),
}

/// Counts of a sweep.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DamageReport {
    /// Damaged images opened (or refused).
    pub images: u64,
    /// Opens refused (the damage was reported as a refusal).
    pub refused: u64,
    /// Page reads reporting corruption.
    pub pages_reported: u64,
    /// Page reads returning the newest version exactly.
    pub pages_intact: u64,
}

impl DamageReport {
    /// Adds `o`'s counts.
    pub fn add(&mut self, o: &DamageReport) {
        self.images += o.images;
        self.refused += o.refused;
        self.pages_reported += o.pages_reported;
        self.pages_intact += o.pages_intact;
    }
}

/// The newest tag of page `pid` in [`image`].
pub fn newest_tag(pid: u64) -> u64 {
    1000 + pid
}

/// A synced image of `factory`'s store: pages `0..pages` written at tag `pid + 1`, synced,
/// then at [`newest_tag`], synced.
pub fn image(factory: &CrashStore, page_size: usize, pages: u64) -> Result<Vec<u8>, StoreError> {
    let dev = Arc::new(FaultDevice::new(0));
    let s = factory.create(Box::new(dev.clone()), page_size)?;
    for round in 0..2 {
        for pid in 0..pages {
            let tag = if round == 0 { pid + 1 } else { newest_tag(pid) };
            let p = filled_page(page_size, PageId(pid), tag, SEED);
            s.write_page(PageId(pid), &p, &DirtyRanges::full(page_size))?;
        }
        s.sync()?;
    }
    drop(s);
    Ok(dev.durable_image())
}

/// Applies `d` to sector `at` of `img`.
pub fn apply(img: &mut [u8], at: usize, d: Damage) {
    let s = at * SECTOR;
    let e = (s + SECTOR).min(img.len());
    match d {
        Damage::BitFlip(b) => img[s + b % (e - s)] ^= 1 << (b % 8),
        Damage::Zero => img[s..e].fill(0),
        Damage::Random(seed) => {
            let mut r = SplitMix64::new(seed);
            img[s..e].iter_mut().for_each(|x| *x = r.next_u64() as u8);
        }
        Damage::CopyOf(o) => {
            let src = img[o * SECTOR..(o * SECTOR + (e - s))].to_vec();
            img[s..e].copy_from_slice(&src);
        }
    }
}

/// Judges one read of a damaged store; `Ok(true)` if reported corrupt.
fn judge(pid: PageId, r: Result<ReadOutcome, StoreError>, page: &[u8]) -> Result<bool, String> {
    let want = newest_tag(pid.0);
    match r {
        Ok(ReadOutcome::Found) => {
            let payload = &page[HEADER_BYTES..];
            match stamp_of(payload) {
                Some((p, tag))
                    if p == pid && tag == want && matches_fill(payload, pid, tag, SEED) =>
                {
                    Ok(false)
                }
                Some((p, tag)) if p == pid && tag < want => Err(format!(
                    "{pid}: served an older version (write #{tag}, newest synced #{want})"
                )),
                other => Err(format!(
                    "{pid}: served bytes of no synced version ({other:?})"
                )),
            }
        }
        Ok(ReadOutcome::Unwritten) => Err(format!("{pid}: a synced page reads unwritten")),
        Err(StoreError::Corrupt { .. }) => Ok(true),
        Err(e) => Err(format!("{pid}: {e}")),
    }
}

/// Opens a damaged image of [`image`] twice and judges every page both times.
pub fn check_damaged(
    factory: &CrashStore,
    page_size: usize,
    pages: u64,
    img: Vec<u8>,
    rep: &mut DamageReport,
) -> Result<(), String> {
    rep.images += 1;
    let dev = Arc::new(FaultDevice::from_image(img));
    let mut first: Vec<bool> = Vec::new();
    for open in 0..2 {
        let store = match factory.open(Box::new(dev.clone()), page_size) {
            Ok(s) => s,
            Err(StoreError::Format(_)) if open == 0 => {
                rep.refused += 1;
                return Ok(());
            }
            Err(e) => return Err(format!("open {open}: {e}")),
        };
        let mut page = vec![0u8; page_size];
        for pid in 0..pages {
            page.fill(0);
            let r = store.read_page(PageId(pid), &mut page);
            let reported = judge(PageId(pid), r, &page).map_err(|e| format!("open {open}: {e}"))?;
            if open == 0 {
                first.push(reported);
                if reported {
                    rep.pages_reported += 1;
                } else {
                    rep.pages_intact += 1;
                }
            } else if first[pid as usize] && !reported {
                return Err(format!(
                    "open 1: page {pid} was reported corrupt by the first open, and now reads data (evidence lost)"
                ));
            }
        }
        let probe = PageId(pages + 7);
        if !matches!(
            store.read_page(probe, &mut page),
            Ok(ReadOutcome::Unwritten)
        ) {
            return Err(format!(
                "open {open}: {probe} (never written) does not read unwritten"
            ));
        }
        drop(store);
    }
    Ok(())
}

/// Damages every data-holding sector of `factory`'s two-version image (and `zero_samples`
/// all-zero ones) with each kind of damage, and judges each damaged image.
pub fn sweep(
    factory: &CrashStore,
    page_size: usize,
    pages: u64,
    zero_samples: usize,
    seed: u64,
) -> Result<DamageReport, String> {
    let base = image(factory, page_size, pages).map_err(|e| format!("image: {e}"))?;
    let sectors = base.len().div_ceil(SECTOR);
    let holds_data: Vec<usize> = (0..sectors)
        .filter(|&i| {
            base[i * SECTOR..((i + 1) * SECTOR).min(base.len())]
                .iter()
                .any(|&b| b != 0)
        })
        .collect();
    let mut rng = SplitMix64::new(seed);
    let mut targets = holds_data.clone();
    let zeros: Vec<usize> = (0..sectors).filter(|i| !holds_data.contains(i)).collect();
    for _ in 0..zero_samples.min(zeros.len()) {
        targets.push(zeros[rng.below(zeros.len() as u64) as usize]);
    }
    let mut rep = DamageReport::default();
    for &at in &targets {
        let other = holds_data[rng.below(holds_data.len() as u64) as usize];
        for d in [
            Damage::BitFlip(rng.below(SECTOR as u64 * 8) as usize / 8),
            Damage::Zero,
            Damage::Random(rng.next_u64()),
            Damage::CopyOf(if other == at { holds_data[0] } else { other }),
        ] {
            let mut img = base.clone();
            apply(&mut img, at, d);
            if img == base {
                continue;
            }
            check_damaged(factory, page_size, pages, img, &mut rep).map_err(|e| {
                format!(
                    "store '{}', page size {page_size}: sector {at} (byte {}) damaged by {d:?}: {e}",
                    factory.name,
                    at * SECTOR
                )
            })?;
        }
    }
    Ok(rep)
}
