//! Regression: a run killed while appending the line of a committed transaction leaves a
//! torn line, which the next run cuts; that run used to go on without journalling the
//! committed transaction, so after one more kill (a commit whose line was not written)
//! the database held two transactions more than the journal, and the check reported a
//! lost promise that was the harness's own. A resumed run now journals the committed
//! transactions the journal lacks before its first transaction.
#![allow(clippy::unwrap_used)]

use flashbuf_sqlite::torture::{self, TortureConfig, JOURNAL_FILE};
use flashbuf_sqlite::JournalMode;
use std::path::Path;

/// Cuts the journal's last line; with `torn`, leaves its first half behind.
fn cut_last_line(path: &Path, torn: bool) {
    let text = std::fs::read_to_string(path).unwrap();
    let body = text.trim_end_matches('\n');
    let at = body.rfind('\n').unwrap() + 1;
    let mut out = text[..at].to_string();
    if torn {
        out.push_str(&body[at..at + (body.len() - at) / 2]);
    }
    std::fs::write(path, out).unwrap();
}

#[test]
fn regression_torture_torn_journal_line_is_journalled_on_resume() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = TortureConfig {
        store: "direct".into(),
        pool: None,
        journal_mode: JournalMode::Wal,
        scale: 1,
        accounts: 100,
        page_size: 4096,
        seed: 3,
    };
    let journal = dir.path().join(JOURNAL_FILE);
    torture::run(dir.path(), &cfg, Some(5)).unwrap();
    // Killed while appending transaction 5's line.
    cut_last_line(&journal, true);
    let r = torture::check(dir.path()).unwrap();
    assert!(r.ok() && (r.journalled, r.in_database) == (4, 5), "{r:?}");
    // Resumed: transaction 6 commits, killed before its line.
    torture::run(dir.path(), &cfg, Some(1)).unwrap();
    cut_last_line(&journal, false);
    let r = torture::check(dir.path()).unwrap();
    assert!(r.ok(), "{:?}", r.violations);
    assert_eq!((r.journalled, r.in_database), (5, 6));
}
