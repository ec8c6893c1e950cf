//! Tests of the real-process torture and its check.

use super::*;
use crate::torture::journal::read_journal;

fn direct() -> CrashStore {
    CrashStore::variants().unwrap().swap_remove(0)
}

fn cfg(dir: &Path, pool_frames: usize) -> TortureConfig {
    TortureConfig {
        store: direct(),
        dir: dir.to_path_buf(),
        seed: 5,
        duration: None,
        rounds: Some(30),
        page_size: Some(4096),
        pages: Some(64),
        pool_frames,
        max_pages_per_round: 8,
        direct_io: false,
    }
}

fn check_cfg(dir: &Path) -> CheckConfig {
    CheckConfig {
        store: direct(),
        dir: dir.to_path_buf(),
        page_size: None,
        pages: None,
        direct_io: false,
    }
}

#[test]
fn torture_resume_and_check_agree() {
    for frames in [0, 4] {
        let d = tempfile::tempdir().unwrap();
        let r = torture(&cfg(d.path(), frames), &mut |_| {}).unwrap();
        assert_eq!((r.rounds, r.first_round, r.resumed), (30, 1, false));
        let r2 = torture(&cfg(d.path(), frames), &mut |_| {}).unwrap();
        assert_eq!((r2.first_round, r2.resumed), (31, true));
        let c = check(&check_cfg(d.path())).unwrap();
        assert!(c.violations.is_empty(), "{:?}", c.violations);
        assert_eq!(c.rounds_acked, 60);
        assert_eq!(c.pages_checked, 64);
        assert!(c.at_acked > 0);
        assert!(c.to_text(d.path()).contains("0 violations"));
    }
}

#[test]
fn check_finds_a_corrupt_page_and_a_lost_write() {
    let d = tempfile::tempdir().unwrap();
    torture(&cfg(d.path(), 0), &mut |_| {}).unwrap();
    let st = read_journal(&d.path().join(JOURNAL_FILE)).unwrap();
    let p = st.acked.iter().position(|&v| v > 0).unwrap() as u64;
    // Flip a byte of page p on the file.
    let path = d.path().join(STORE_FILE);
    let mut bytes = std::fs::read(&path).unwrap();
    let data_offset = flashbuf_store::Superblock::read(&flashbuf_device::MemDevice::from_bytes(
        bytes[..flashbuf_store::Superblock::BYTES].to_vec(),
    ))
    .unwrap()
    .data_offset as usize;
    let off = data_offset + p as usize * 4096 + 100;
    bytes[off] ^= 0xff;
    std::fs::write(&path, &bytes).unwrap();
    let c = check(&check_cfg(d.path())).unwrap();
    assert_eq!(c.violations.len(), 1, "{:?}", c.violations);
    assert!(
        c.violations[0].contains(&format!("page {p}: corrupt")),
        "{:?}",
        c.violations
    );
    // Zero it: the store itself reports the page (its written-page map, issue 11);
    // before the map it read unwritten and only the journal caught the lost write.
    bytes[data_offset + p as usize * 4096..data_offset + (p as usize + 1) * 4096].fill(0);
    std::fs::write(&path, &bytes).unwrap();
    let c = check(&check_cfg(d.path())).unwrap();
    assert!(
        c.violations[0].contains(&format!("page {p}: corrupt (reads as all zeros")),
        "{:?}",
        c.violations
    );
    assert!(c.to_text(d.path()).contains("VIOLATIONS"));
}

#[test]
fn check_finds_a_rolled_back_store() {
    let d = tempfile::tempdir().unwrap();
    torture(&cfg(d.path(), 0), &mut |_| {}).unwrap();
    let path = d.path().join(STORE_FILE);
    let old = std::fs::read(&path).unwrap();
    torture(&cfg(d.path(), 0), &mut |_| {}).unwrap();
    std::fs::write(&path, &old).unwrap();
    let c = check(&check_cfg(d.path())).unwrap();
    assert!(!c.violations.is_empty());
    assert!(
        c.violations
            .iter()
            .all(|v| v.contains("lost an acknowledged write")),
        "{:?}",
        c.violations
    );
}
